"""Network latency between regions, and the latency SLO of inference traffic.

A scenario may give a `[latency]` table:

    [latency]
    slo_ms = 100                                   # inference must be served within this of its users
    ms = { "us-east:us-west" = 65, "us-east:eu-west" = 80, "eu-west:eu-north" = 30 }

Each pair "a:b" is a round-trip time in milliseconds, the same both ways; a region is 0 ms from
itself and, without a pair, infinitely far (so without a table only the home region meets the
SLO). An inference job's users are in its home region: it meets the SLO when it runs where the
latency from home is at most `slo_ms`. Both numbers are declared once (unit, range, label, help:
the field metadata of `Latency.slo_ms` and `LatencyPair`), read by the parser and by the What-if builder.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from engine.core.bounds import bound_of

DEFAULT_SLO_MS = 100.0
MAX_MS = 60_000.0   # a minute: far beyond any round trip on Earth, so only a typo is refused


@dataclass(frozen=True)
class LatencyPair:
    """One entry of `ms`: "a:b" = ms, declared field by field (label, help; unit and range of ms)."""

    a: str = field(default="", metadata={"label": "region", "help": "one end of the pair"})
    b: str = field(default="", metadata={"label": "and region", "help": "the other end (the same both ways)"})
    ms: float = field(default=0.0, metadata={"unit": "ms", "min": 0.0, "max": MAX_MS, "label": "Round trip",
                                             "help": "round-trip time between the two regions"})


@dataclass(frozen=True)
class Latency:
    """slo_ms: the inference latency SLO; pairs: {(a, b): ms} with a < b (sorted names)."""

    slo_ms: float = field(default=DEFAULT_SLO_MS, metadata={
        "unit": "ms", "min": 0.0, "max": MAX_MS, "label": "Inference latency SLO",
        "help": "inference meets its SLO where the round trip from its home (its users) is at most this"})
    pairs: dict = field(default_factory=dict)

    def matrix(self, names: list[str]) -> np.ndarray:
        """Round-trip ms between `names` (regions x regions): 0 on the diagonal, inf without a pair."""
        out = np.full((len(names), len(names)), math.inf)
        np.fill_diagonal(out, 0.0)
        index = {name: i for i, name in enumerate(names)}
        for (a, b), ms in self.pairs.items():
            if a in index and b in index:
                out[index[a], index[b]] = out[index[b], index[a]] = ms
        return out


def parse_latency(spec: object, source: str, error=ValueError) -> Latency:
    """A `[latency]` table (see the module docstring); `error` is the exception class to raise."""
    if spec is None:
        return Latency()
    if not isinstance(spec, dict) or set(spec) - {"slo_ms", "ms"}:
        raise error(f"{source}: [latency] takes slo_ms and ms, got {sorted(spec) if isinstance(spec, dict) else spec!r}")
    slo = spec.get("slo_ms", DEFAULT_SLO_MS)
    problem = _refused("slo_ms", slo, SLO_BOUND)
    if problem:
        raise error(f"{source}: [latency] {problem}")
    if not isinstance(spec.get("ms", {}), dict):
        raise error(f"{source}: [latency] ms must be a table of \"a:b\" = milliseconds, got {spec['ms']!r}")
    pairs = {}
    for key, ms in dict(spec.get("ms", {})).items():
        a, sep, b = str(key).partition(":")
        if not sep or not a.strip() or not b.strip() or a.strip() == b.strip():
            raise error(f"{source}: [latency] ms key {key!r} must name two regions as \"a:b\"")
        problem = _refused(f"ms {key!r}", ms, PAIR_BOUND)
        if problem:
            raise error(f"{source}: [latency] {problem}")
        pairs[tuple(sorted((a.strip(), b.strip())))] = float(ms)
    return Latency(float(slo), pairs)


SLO_BOUND = bound_of("slo_ms", float, next(f for f in fields(Latency) if f.name == "slo_ms").metadata)
PAIR_BOUND = bound_of("ms", float, next(f for f in fields(LatencyPair) if f.name == "ms").metadata)


def _refused(name: str, value: object, bound) -> str | None:
    """Why `value` is no number of milliseconds within `bound` (None: it is one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{name} must be a number of milliseconds, got {value!r}"
    return bound.check(name, value)
