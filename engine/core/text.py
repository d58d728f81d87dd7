"""Plain-text formatting, the one place durations become words. Three styles, each for one purpose:

- `duration`: three significant digits in the unit that fits ("45 s", "3.3 min", "5.5 h", "3.2 d"), for the
  predictors' figures in the terminal and on the Predictors page;
- `hours_minutes`: a wait as people say it ("3 h 20 min"), for waits on the pages and in the ETA sentence;
- `hours`: hours to one decimal, minutes below an hour ("16.1 h", "42 min"), for KPI tiles and the report.

Besides: numbers and timestamps with "-" for a value that is missing."""
from __future__ import annotations

import math

import pandas as pd


def number(value, digits: int) -> str:
    return "-" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:,.{digits}f}"


def minute(iso: str | None) -> str:
    """"2026-03-02T10:00:00Z" -> "2026-03-02 10:00"."""
    return "-" if not iso else iso.replace("T", " ")[:16]


def duration(value: float | None, missing: str = "-") -> str:
    if value is None or not math.isfinite(value):
        return missing
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


def hours(seconds: float | None, infinite: str = "n/a") -> str:
    """A duration short enough for a KPI tile or a report sentence: seconds below a minute, minutes below
    an hour, hours with one decimal below 100 h, whole hours with separators from there; "n/a" when unknown,
    `infinite` for +inf."""
    if seconds == math.inf:
        return infinite
    if seconds is None or not math.isfinite(seconds):
        return "n/a"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h" if seconds < 100 * 3600 else f"{seconds / 3600:,.0f} h"
