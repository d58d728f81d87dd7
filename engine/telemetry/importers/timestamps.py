"""Vectorised parsing of timestamp text into naive UTC datetimes (microsecond resolution).

Accepted values, mixed freely within one column:
- epoch seconds, integer or fractional ("1711846800", "1711846800.25"), 1970-01-01 to 2100-01-01;
- ISO-8601 with an offset or Z ("2024-03-31T01:30:00+02:00", "2024-03-31 00:30Z"): converted to UTC;
- naive ISO-8601 ("2024-03-31 01:30"): UTC when the column says so (`naive_is_utc`, e.g. a
  header ending in "_utc"), else local time in the IANA zone `tz`, daylight saving included.
  A local time repeated when clocks go back is read as its first (daylight-saving) occurrence;
  a local time skipped when clocks go forward is reported as nonexistent.

Nothing here raises for bad values: the result says which positions failed and why.
"""
from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

EPOCH_MAX_S = 4_102_444_800.0  # 2100-01-01T00:00:00Z
# Written for pyarrow's RE2 engine (no \d or \s, which would send pandas to Python's re).
_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_OFFSET = r"[Tt ][0-9]{2}(?::?[0-9]{2}(?::?[0-9]{2}(?:[.,][0-9]+)?)?)? *(?:[zZ]|[+-][0-9]{2}(?::?[0-9]{2})?)$"
UTC_DTYPE = "datetime64[us]"


@dataclass
class ParsedTimes:
    """Outcome of `parse_times` for one column; all masks align with the input.

    values: naive UTC datetime64[us] (NaT where empty or failed).
    unparsable / out_of_range / nonexistent: positions that failed, by reason.
    naive_unzoned: naive values that could not be placed because no zone was given.
    ambiguous: how many local times fell in a repeated hour (read as the first occurrence).
    """

    values: np.ndarray
    unparsable: np.ndarray
    out_of_range: np.ndarray
    nonexistent: np.ndarray
    naive_unzoned: np.ndarray
    ambiguous: int = 0


def text_to_float(text: pd.Series) -> np.ndarray:
    """Numbers written as text -> float64 array (NaN where missing or not a number).

    Tries pyarrow's vectorised cast first; only a column holding some non-number pays for
    pandas' slower element-wise conversion.
    """
    try:
        return pc.cast(pa.array(text, from_pandas=True), pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)


def check_time_zone(tz: str) -> str | None:
    """None if `tz` is a known IANA zone name, else the reason it is not."""
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        return f"unknown time zone {tz!r}; use an IANA name such as Europe/Berlin or America/New_York"
    return None


def _from_epoch(seconds: np.ndarray) -> np.ndarray:
    return np.round(seconds * 1e6).astype(np.int64).astype(UTC_DTYPE)


def _cast(values: pa.Array, to: pa.DataType) -> np.ndarray | None:
    """pyarrow's strict vectorised cast (nulls -> NaT/NaN), or None if any value does not fit."""
    try:
        return pc.cast(values, to).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _localise(local: np.ndarray, tz: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Naive local datetimes -> (naive UTC datetimes, nonexistent mask, ambiguous count)."""
    local = pd.Series(local.astype(UTC_DTYPE))
    placed = local.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT")
    failed = (placed.isna() & local.notna()).to_numpy()
    ambiguous = 0
    if failed.any():
        retry = local[failed].dt.tz_localize(tz, ambiguous=np.ones(int(failed.sum()), dtype=bool),
                                             nonexistent="NaT")
        ambiguous = int(retry.notna().sum())
        placed = placed.copy()
        placed[failed] = retry.to_numpy()
        failed = (placed.isna() & local.notna()).to_numpy()
    utc = placed.dt.tz_convert("UTC").dt.tz_localize(None).astype(UTC_DTYPE)
    return utc.to_numpy(), failed, ambiguous


def _place_naive(result: ParsedTimes, naive_at: np.ndarray, local: np.ndarray, naive_is_utc: bool,
                 tz: str | None) -> None:
    """Store naive values (positions `naive_at`) as UTC, or flag them if they have no zone."""
    if naive_is_utc:
        result.values[naive_at] = local
    elif tz is None:
        result.naive_unzoned[naive_at] = True
    else:
        placed, failed, result.ambiguous = _localise(local, tz)
        result.values[naive_at] = placed
        result.nonexistent[naive_at] = failed


def _epoch(result: ParsedTimes, at: np.ndarray, seconds: np.ndarray) -> None:
    ok = (seconds >= 0) & (seconds < EPOCH_MAX_S)
    result.out_of_range[at[~ok]] = True
    result.values[at[ok]] = _from_epoch(seconds[ok])


def parse_times(text: pd.Series, *, naive_is_utc: bool, tz: str | None) -> ParsedTimes:
    """Parse stripped timestamp text (missing values as NA) into naive UTC datetimes.

    `tz` must already be a valid IANA name (see `check_time_zone`) or None. A column written
    in one style (all naive ISO, all ISO with offsets, or all epoch seconds) is converted by
    one pyarrow cast; mixed columns take the general, slower path.
    """
    n = len(text)
    result = ParsedTimes(np.full(n, np.datetime64("NaT"), dtype=UTC_DTYPE),
                         *(np.zeros(n, dtype=bool) for _ in range(4)))
    present = text.notna().to_numpy()
    everywhere = np.flatnonzero(present)
    arrow = pa.array(text, from_pandas=True)
    if (naive := _cast(arrow, pa.timestamp("us"))) is not None:
        _place_naive(result, everywhere, naive[present], naive_is_utc, tz)
    elif (aware := _cast(arrow, pa.timestamp("us", tz="UTC"))) is not None:
        result.values[:] = aware.astype(UTC_DTYPE)
    elif (seconds := _cast(arrow, pa.float64())) is not None and np.isfinite(seconds[present]).all():
        _epoch(result, everywhere, seconds[present])
    else:
        _parse_mixed(text, present, result, naive_is_utc, tz)
    return result


def _parse_mixed(text: pd.Series, present: np.ndarray, result: ParsedTimes, naive_is_utc: bool,
                 tz: str | None) -> None:
    numeric = present & text.str.fullmatch(_NUMBER).to_numpy(dtype=bool, na_value=False)
    if numeric.any():
        _epoch(result, np.flatnonzero(numeric), text_to_float(text[numeric]))
    iso = present & ~numeric
    if not iso.any():
        return
    iso_text = text[iso]
    parsed = pd.to_datetime(iso_text, format="ISO8601", utc=True, errors="coerce")
    placed = parsed.dt.tz_convert(None).to_numpy(dtype=UTC_DTYPE, copy=True)
    ok = ~np.isnat(placed)
    iso_at = np.flatnonzero(iso)
    result.unparsable[iso_at[~ok]] = True
    offset = ok & iso_text.str.contains(_OFFSET).to_numpy(dtype=bool, na_value=False)
    result.values[iso_at[offset]] = placed[offset]
    naive = ok & ~offset
    if naive.any():
        local = pd.to_datetime(iso_text[naive], format="ISO8601").to_numpy(dtype=UTC_DTYPE)
        _place_naive(result, iso_at[naive], local, naive_is_utc, tz)
