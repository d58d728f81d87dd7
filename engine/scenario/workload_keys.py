"""The [workload] table: load scale, growth and the window (start_utc, end_utc), checked."""
from __future__ import annotations

import pandas as pd

from engine.core.errors import ScenarioError
from engine.scenario import limits
from engine.scenario.checks import known_keys

WORKLOAD_KEYS = {"start_utc", "end_utc", "load_scale", "growth"}


def parse_workload(workload: dict, source: str) -> tuple[float, float, pd.Timestamp | None, pd.Timestamp | None]:
    """(load_scale, growth, start_utc, end_utc) of a [workload] table (1, 1, None, None by default)."""
    known_keys(workload, WORKLOAD_KEYS, source, "[workload] key")
    scale = _within(workload, "load_scale", limits.LOAD_SCALE, "x the arrival rate", source)
    growth = _within(workload, "growth", limits.GROWTH, "x the jobs", source)
    start, end = _time(workload, "start_utc", source), _time(workload, "end_utc", source)
    if start is not None and end is not None and not start < end:
        raise ScenarioError(f"{source}: [workload] start_utc {start} must come before end_utc {end}")
    return scale, growth, start, end


def _within(table: dict, key: str, bounds: tuple[float, float], unit: str, source: str) -> float:
    value, (low, high) = table.get(key, 1.0), bounds
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ScenarioError(f"{source}: [workload] {key} must be a number from {low:g} to {high:g} ({unit}), "
                            f"got {value!r}")
    return float(value)


def _time(table: dict, key: str, source: str) -> pd.Timestamp | None:
    if key not in table:
        return None
    try:
        stamp = pd.Timestamp(table[key])
    except (ValueError, TypeError, OverflowError):
        raise ScenarioError(f"{source}: {key} must be a date-time, got {table[key]!r}") from None
    stamp = stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo else stamp
    if not limits.EARLIEST <= stamp <= limits.LATEST:
        raise ScenarioError(f"{source}: {key} must be between {limits.EARLIEST:%Y-%m-%d} and {limits.LATEST:%Y-%m-%d}, "
                            f"got {table[key]!r}")
    return stamp


def shown(stamp: pd.Timestamp | None) -> str:
    return "none" if stamp is None else f"{stamp:%Y-%m-%d %H:%M}"
