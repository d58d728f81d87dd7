"""Time zones and timestamps for importers: IANA names, local -> UTC, and vectorised parsing.

Meridian stores naive UTC (microsecond resolution). One policy for local (wall-clock) times a
clock change skipped or repeated, used by every importer (`clock_changes`), by the import's rule
(`ImportOptions.dst`):
- "shift" (the default): a local time skipped when clocks go forward is read with the offset in force
  before the change, so it moves forward by the gap (02:30 on a one-hour change reads as 03:30, as
  Python's datetime reads it, PEP 495); a local time repeated when clocks go back is read as its
  first, earlier (daylight-saving) occurrence; a note says how many of each;
- "reject": each such time is a row problem that names the zone, the change and the rule.

`parse_times` accepts, mixed freely within one column:
- epoch seconds, integer or fractional ("1711846800", "1711846800.25"), 1970-01-01 to 2100-01-01;
- ISO-8601 with an offset or Z ("2024-03-31T01:30:00+02:00", "2024-03-31 00:30Z"): converted to UTC;
- naive ISO-8601 ("2024-03-31 01:30"): UTC when the column says so (`naive_is_utc`, e.g. a
  header ending in "_utc"), else local time in the IANA zone `tz`, placed by `localise`.

Nothing here raises for bad values: the result says which positions failed and why.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import CountedNote

EPOCH_MAX_S = 4_102_444_800.0  # 2100-01-01T00:00:00Z
# Written for pyarrow's RE2 engine (no \d or \s, which would send pandas to Python's re).
_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_OFFSET = r"[Tt ][0-9]{2}(?::?[0-9]{2}(?::?[0-9]{2}(?:[.,][0-9]+)?)?)? *(?:[zZ]|[+-][0-9]{2}(?::?[0-9]{2})?)$"
UTC_DTYPE = "datetime64[us]"


@dataclass
class ParsedTimes:
    """Outcome of `parse_times` for one column; all masks align with the input.

    values: naive UTC datetime64[us] (NaT where empty or failed).
    unparsable / out_of_range: positions that failed, by reason.
    skipped / repeated: local times a clock change skipped or repeated, placed by the rule "shift"
    (see the module; `clock_changes` reports them by the import's rule).
    naive_unzoned: naive values that could not be placed because no zone was given.
    naive: how many values had no offset (placed as UTC or local time, or unzoned).
    """

    values: np.ndarray
    unparsable: np.ndarray
    out_of_range: np.ndarray
    skipped: np.ndarray
    repeated: np.ndarray
    naive_unzoned: np.ndarray
    naive: int = 0


def text_to_float(text: pd.Series) -> np.ndarray:
    """Numbers written as text -> float64 array (NaN where missing or not a number).

    Tries pyarrow's vectorised cast first; only a column holding some non-number pays for
    pandas' slower element-wise conversion.
    """
    try:
        return pc.cast(pa.array(text, from_pandas=True), pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)


def is_zone(name: str | None) -> bool:
    """True when `name` is a time zone the zoneinfo database knows (e.g. Europe/Stockholm, US/Eastern)."""
    if not name or name != name.strip():
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
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


def clock_changes(errors, lines: np.ndarray, text: pd.Series, skipped: np.ndarray, repeated: np.ndarray,
                  label: str, tz: str, dst: str, notes: list[str]) -> None:
    """Report the local times of column `label` that a clock change of zone `tz` skipped or repeated, by the
    import's rule `dst` (ImportOptions.dst): notes saying how they were read ("shift"), or one row problem
    each naming the rule ("reject")."""
    if dst == "reject":
        rule = "the daylight-saving rule 'reject' refuses it (the rule 'shift' would read it"
        errors.add_many(lines[skipped], f"local time {{!r}} in column {label!r} does not exist in {tz} (clocks were "
                                        f"set forward); {rule} as the time the gap's length later)", text[skipped].to_numpy())
        errors.add_many(lines[repeated], f"local time {{!r}} in column {label!r} happened twice in {tz} (clocks were "
                                         f"set back); {rule} as its first occurrence)", text[repeated].to_numpy())
        return
    if skipped.any():
        notes.append(CountedNote(f"{{count}} local time(s) in column {label!r} fall in the hour skipped when clocks "
                                 f"go forward in {tz}: shifted forward by the gap (read with the offset before the "
                                 "change, so 02:30 on a one-hour change reads as 03:30)", int(skipped.sum())))
    if repeated.any():
        notes.append(CountedNote(f"{{count}} local time(s) in column {label!r} fall in the hour repeated when clocks "
                                 f"go back in {tz}: read as the first (earlier, daylight-saving) occurrence",
                                 int(repeated.sum())))


def _from_epoch(seconds: np.ndarray) -> np.ndarray:
    return np.round(seconds * 1e6).astype(np.int64).astype(UTC_DTYPE)


def _cast(values: pa.Array, to: pa.DataType) -> np.ndarray | None:
    """pyarrow's strict vectorised cast (nulls -> NaT/NaN), or None if any value does not fit."""
    try:
        return pc.cast(values, to).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def localise(local: np.ndarray, tz: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Naive wall-clock datetimes of zone `tz` -> (naive UTC datetime64[us], skipped mask, repeated mask).

    A time skipped when clocks go forward is read with the offset in force before the change (shifted
    forward by the gap); a time repeated when clocks go back is read as its first occurrence (see the
    module). NaT stays NaT."""
    local = pd.Series(local.astype(UTC_DTYPE))
    present = local.notna().to_numpy()
    utc = _naive_utc(local.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT"))
    failed = present & np.isnat(utc)
    repeated = np.zeros(len(local), dtype=bool)
    skipped = np.zeros(len(local), dtype=bool)
    if failed.any():
        first = np.ones(int(failed.sum()), dtype=bool)   # True = the daylight-saving (first) occurrence
        retry = _naive_utc(local[failed].dt.tz_localize(tz, ambiguous=first, nonexistent="NaT"))
        repeated[failed] = ~np.isnat(retry)
        utc[failed] = retry
        skipped = present & np.isnat(utc)
        zone = ZoneInfo(tz)
        utc[skipped] = [np.datetime64(t.to_pydatetime().replace(tzinfo=zone).astimezone(dt.UTC).replace(tzinfo=None),
                                      "us") for t in local[skipped]]   # fold=0: the offset before the change
    return utc, skipped, repeated


def _naive_utc(aware: pd.Series) -> np.ndarray:
    return aware.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype=UTC_DTYPE, copy=True)


def _place_naive(result: ParsedTimes, naive_at: np.ndarray, local: np.ndarray, naive_is_utc: bool,
                 tz: str | None) -> None:
    """Store naive values (positions `naive_at`) as UTC, or flag them if they have no zone."""
    result.naive += len(naive_at)
    if naive_is_utc:
        result.values[naive_at] = local
    elif tz is None:
        result.naive_unzoned[naive_at] = True
    else:
        placed, skipped, repeated = localise(local, tz)
        result.values[naive_at] = placed
        result.skipped[naive_at] = skipped
        result.repeated[naive_at] = repeated


def _epoch(result: ParsedTimes, at: np.ndarray, seconds: np.ndarray) -> None:
    ok = (seconds >= 0) & (seconds < EPOCH_MAX_S)
    result.out_of_range[at[~ok]] = True
    result.values[at[ok]] = _from_epoch(seconds[ok])


def parse_times(text: pd.Series, *, naive_is_utc: bool, tz: str | None) -> ParsedTimes:
    """Parse stripped timestamp text (missing values as NA) into naive UTC datetimes.

    `tz` must already be a valid IANA name (see `checked_zone`) or None. A column written
    in one style (all naive ISO, all ISO with offsets, or all epoch seconds) is converted by
    one pyarrow cast; mixed columns take the general, slower path.
    """
    n = len(text)
    result = ParsedTimes(np.full(n, np.datetime64("NaT"), dtype=UTC_DTYPE),
                         *(np.zeros(n, dtype=bool) for _ in range(5)))
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
