"""Network latency between regions, and the latency SLO of inference traffic.

A scenario may give a `[latency]` table:

    [latency]
    slo_ms = 100                                   # inference must be served within this of its users
    ms = { "us-east:us-west" = 65, "us-east:eu-west" = 80, "eu-west:eu-north" = 30 }

Each pair "a:b" is a round-trip time in milliseconds, the same both ways; a region is 0 ms from
itself and, without a pair, infinitely far (so without a table only the home region meets the
SLO). An inference job's users are in its home region: it meets the SLO when it runs where the
latency from home is at most `slo_ms`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

DEFAULT_SLO_MS = 100.0


@dataclass(frozen=True)
class Latency:
    """slo_ms: the inference latency SLO; pairs: {(a, b): ms} with a < b (sorted names)."""

    slo_ms: float = DEFAULT_SLO_MS
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
    if isinstance(slo, bool) or not isinstance(slo, (int, float)) or not 0 <= slo < math.inf:
        raise error(f"{source}: [latency] slo_ms must be a number of milliseconds >= 0, got {slo!r}")
    pairs = {}
    for key, ms in dict(spec.get("ms", {})).items():
        a, sep, b = str(key).partition(":")
        if not sep or not a.strip() or not b.strip() or a.strip() == b.strip():
            raise error(f"{source}: [latency] ms key {key!r} must name two regions as \"a:b\"")
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 <= ms < math.inf:
            raise error(f"{source}: [latency] ms {key!r} must be milliseconds >= 0, got {ms!r}")
        pairs[tuple(sorted((a.strip(), b.strip())))] = float(ms)
    return Latency(float(slo), pairs)
