"""Plain-text formatting: the predictors' figures for the terminal (numbers, minutes, durations and
timestamps, "-" for a value that is missing), and a wait in hours and minutes for the pages."""
from __future__ import annotations

import math

import pandas as pd


def number(value, digits: int) -> str:
    return "-" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:,.{digits}f}"


def minute(iso: str | None) -> str:
    """"2026-03-02T10:00:00Z" -> "2026-03-02 10:00"."""
    return "-" if not iso else iso.replace("T", " ")[:16]


def duration(value: float | None) -> str:
    if value is None:
        return "-"
    for limit, unit, size in ((120, "s", 1), (7200, "min", 60), (172_800, "h", 3600)):
        if value < limit:
            return f"{value / size:.3g} {unit}"
    return f"{value / 86_400:.3g} d"


def stamp(value) -> str | None:
    return None if value is None or pd.isna(value) else pd.Timestamp(value).isoformat() + "Z"


def hours_minutes(seconds: float | None) -> str:
    """A wait as people say it: "45 s", "12 min", "2 h", "3 h 20 min", and whole hours from 100 h on;
    "n/a" when unknown, "no limit" for +inf (a queue without a maximum wait)."""
    if seconds is None or not math.isfinite(seconds):
        return "no limit" if seconds == math.inf else "n/a"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds >= 100 * 3600:
        return f"{seconds / 3600:,.0f} h"
    hours, minutes = divmod(round(seconds / 60), 60)
    return (f"{hours} h {minutes} min" if minutes else f"{hours} h") if hours else f"{minutes} min"
