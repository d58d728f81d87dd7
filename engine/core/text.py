"""Plain-text formatting of the predictors' figures for the terminal: numbers, minutes, durations
and timestamps ("-" for a value that is missing)."""
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
