"""Every numeric policy parameter has a unit and a range: `bound_of(name, kind, metadata)`.

Parameters carry their unit in their name (habit 6 of the architecture notes), so the unit and the
range follow from it; a field can say otherwise in its metadata (`{"unit": ..., "min": ..., "max":
...}`), which wins. The ranges are what a scenario may ask for, not what is sensible: they keep a
typo or a hostile file (an infinite weight, a timer of a nanosecond, 1e308 GPUs) from reaching the
simulator, where it would hang it or fill the memory. A value outside its range, NaN or infinite is
refused by engine.policies.registry.make with the parameter's name, unit and range.

| name                               | unit     | range            |
|------------------------------------|----------|------------------|
| ends in `_s`                       | s        | 0 - 10 years     |
| ends in `_h`                       | h        | 0 - 10 years     |
| ends in `_gpus`                    | GPUs     | 0 - 10,000,000   |
| ends in `_fraction`                | fraction | 0 - 1            |
| ends in `_pct`                     | %        | 0 - 100          |
| `w_*`, `weight_*`, `*_weight`      | weight   | -1e9 - 1e9       |
| an integer named `max_*`           | count    | 0 - 1,000,000,000 |
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

TEN_YEARS_S = 10 * 365 * 86400.0


@dataclass(frozen=True)
class Bound:
    """A parameter's unit and its inclusive range."""

    unit: str
    low: float
    high: float

    def check(self, name: str, value: float) -> str | None:
        """Why `value` is refused (None: it is fine)."""
        if not math.isfinite(value):
            return f"{name} must be a finite number ({self.unit}), got {value!r}"
        if not self.low <= value <= self.high:
            return f"{name} must be from {_shown(self.low)} to {_shown(self.high)} ({self.unit}), got {value!r}"
        return None


def _shown(x: float) -> str:
    """A range end as a person writes it: 315,360,000, 0.5, 1e+09."""
    return f"{x:,.0f}" if x == int(x) and abs(x) < 1e9 else f"{x:g}"


_SUFFIXES = (("_s", Bound("s", 0.0, TEN_YEARS_S)), ("_h", Bound("h", 0.0, TEN_YEARS_S / 3600)),
             ("_gpus", Bound("GPUs", 0.0, 1e7)), ("_fraction", Bound("fraction", 0.0, 1.0)),
             ("_pct", Bound("%", 0.0, 100.0)))
_WEIGHT = Bound("weight", -1e9, 1e9)
_COUNT = Bound("count", 0.0, 1e9)


def bounded_field(default, unit: str, low: float, high: float, what: str, label: str):
    """A dataclass field whose metadata gives its unit, range, help and label (a scenario table's value:
    the table's parser checks the range, the scenario builder draws its widget from them)."""
    return field(default=default, metadata={"unit": unit, "min": low, "max": high, "help": what, "label": label})


def bound_of(name: str, kind: type, metadata: Mapping | None = None) -> Bound | None:
    """The unit and range of a numeric parameter (`kind` int or float) from its metadata or its name;
    None when neither says (the policy contract test refuses such a parameter)."""
    metadata = metadata or {}
    if {"unit", "min", "max"} <= set(metadata):
        return Bound(str(metadata["unit"]), float(metadata["min"]), float(metadata["max"]))
    for suffix, bound in _SUFFIXES:
        if name.endswith(suffix):
            return bound
    if name.startswith(("w_", "weight_")) or name.endswith("_weight"):
        return _WEIGHT
    if kind is int and name.startswith("max_"):
        return _COUNT
    return None


def checked_numbers(spec: Mapping, numeric: tuple, section: str, source: str, error=ValueError) -> dict[str, float]:
    """The values `spec` (a scenario table) gives for the dataclass fields `numeric`, each a number
    (not a bool) inside its bound (`bound_of` with the field's metadata), as floats; `error(message)`
    names `source`, `section` and the field otherwise."""
    values = {}
    for f in numeric:
        if f.name not in spec:
            continue
        value = spec[f.name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise error(f"{source}: {section} {f.name} must be a number, got {value!r}")
        why = bound_of(f.name, float, f.metadata).check(f.name, float(value))
        if why:
            raise error(f"{source}: {section} {why}")
        values[f.name] = float(value)
    return values
