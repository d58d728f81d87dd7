"""Time zones for importers: checking IANA names and turning naive local times into naive UTC.

Logs written by cluster software (sacct, Philly, SWF headers) record wall-clock times of the
cluster's zone. Meridian stores UTC, so each importer converts here, DST-aware.
"""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from engine.telemetry.errors import ImportRejected


def is_zone(name: str | None) -> bool:
    """True when `name` is a time zone the zoneinfo database knows (e.g. Europe/Stockholm, US/Eastern)."""
    if not name or name != name.strip():
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def checked_zone(name: str, source: str) -> str:
    """`name` if it is a known time zone, else a whole-file rejection saying what to pass."""
    if not is_zone(name):
        raise ImportRejected.whole_file(
            source, f"unknown time zone {name!r}; use an IANA name such as Europe/Berlin or America/New_York")
    return name


def zone_from_offset(offset_s: int) -> str | None:
    """A fixed-offset zone (Etc/GMT-1 for UTC+1) for whole-hour offsets in seconds, else None.

    The Etc/ names count westwards, so their sign is the opposite of the UTC offset.
    """
    hours, rest = divmod(int(offset_s), 3600)
    if rest or not -12 <= hours <= 14:
        return None
    if hours == 0:
        return "UTC"
    return f"Etc/GMT{-hours:+d}"


def local_to_utc(values: pd.Series, tz: str) -> pd.Series:
    """Naive wall-clock times of zone `tz` -> naive UTC times (NaT stays NaT).

    Wall times that occur twice (the hour repeated when clocks go back) are read as the first
    occurrence, and wall times skipped when clocks go forward use the offset in force before
    the change; both follow Python's zoneinfo with fold=0 (PEP 495).
    """
    if tz == "UTC":
        return values
    aware = values.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT")
    utc = aware.dt.tz_convert("UTC").dt.tz_localize(None)
    odd = np.flatnonzero(values.notna().to_numpy() & utc.isna().to_numpy())
    if len(odd):
        zone = ZoneInfo(tz)
        fixed = [
            values.iloc[i].to_pydatetime().replace(tzinfo=zone).astimezone(dt.UTC).replace(tzinfo=None)
            for i in odd
        ]
        utc = utc.copy()
        utc.iloc[odd] = pd.to_datetime(fixed).as_unit(utc.dt.unit)
    return utc
