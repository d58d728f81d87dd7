"""Working calendars of teams and regions: time zone, working week, working hours, holidays.

Instants are UTC epoch seconds (numpy arrays of int or float, as the simulator keeps them). The
vectorised methods convert them to local wall-clock time with pandas' ``tz_convert`` (zoneinfo
rules, daylight-saving time included); the ``*_at`` methods answer for one instant through
``zoneinfo`` directly and share the rest of the logic.

Working hours are whole local wall-clock hours, so a 9-17 day lasts 8 hours on both sides of a
DST change. A shift is ``[start_hour, end_hour)``; when ``end_hour <= start_hour`` it crosses
midnight (22-6 runs from 22:00 to 06:00 next morning) and belongs to the day it starts on: the
working week and holidays are checked on that day. ``start_hour == end_hour`` is a 24-hour shift
(0-0, like 0-24, is the whole calendar day). A start or end hour that does not exist on a
spring-forward day falls at the transition; one that occurs twice on a fall-back day is its first
occurrence.

Holiday spec (teams' ``holiday_country``): an ISO 3166 alpha-2 code of the ``holidays`` package,
optionally followed by a hyphen and a subdivision of that package: ``US``, ``US-CA``, ``DE-BY``,
``FR-Zone A``. Empty means no holidays. A holiday is a whole local calendar day off.
"""
from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from engine.world.countries import working_days_of

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DAY_S = 86_400
HOUR_S = 3_600
HOURS_PER_WEEK = 168
REGION_START_HOUR = 9
REGION_END_HOUR = 18
_EPOCH_WEEKDAY = 3          # 1970-01-01 was a Thursday; Mon = 0
_EPOCH_DATE = dt.date(1970, 1, 1)
_MAX_SEARCH_DAYS = 800      # next_work_start gives up if no shift starts within this many days


def parse_working_days(text: str) -> tuple[int, ...]:
    """Sorted weekday numbers (Mon = 0 ... Sun = 6) of a working-week text.

    Forms: a range ``Mon-Fri`` (a range may wrap through Sunday: ``Sun-Thu``, ``Sat-Wed``), a comma
    list ``Mon,Tue,Thu``, or a mix ``Mon-Wed,Fri``; three-letter English day names, any case."""
    days: set[int] = set()
    for item in str(text).split(","):
        ends = [part.strip().title() for part in item.split("-")]
        if len(ends) > 2 or any(end not in DAY_NAMES for end in ends):
            raise ValueError(f"working days {text!r}: expected a range like 'Mon-Fri' or 'Sun-Thu', or a "
                             f"comma list like 'Mon,Tue,Thu', of the days {', '.join(DAY_NAMES)}")
        first, last = DAY_NAMES.index(ends[0]), DAY_NAMES.index(ends[-1])
        days.update((first + k) % 7 for k in range((last - first) % 7 + 1))
    return tuple(sorted(days))


def parse_holiday_spec(spec: object) -> tuple[str | None, str | None]:
    """(country, subdivision) of a holiday spec such as ``US``, ``DE-BY`` or empty (None, None).

    The subdivision is matched without regard to case and returned in the package's spelling."""
    if _blank(spec):
        return None, None
    country, _, subdivision = str(spec).strip().partition("-")
    country, subdivision = country.strip().upper(), subdivision.strip()
    supported = _supported_countries()
    if country not in supported:
        raise ValueError(f"holiday country {spec!r}: not a country of the holidays package; use an ISO 3166 "
                         f"alpha-2 code such as US, DE or JP, optionally with a subdivision: US-CA, DE-BY")
    if not subdivision:
        return country, None
    canonical = {s.lower(): s for s in supported[country]}.get(subdivision.lower())
    if canonical is None:
        raise ValueError(f"holiday country {spec!r}: {country} has no subdivision {subdivision!r}; "
                         f"choose from {', '.join(supported[country])}")
    return country, canonical


@lru_cache(maxsize=None)
def holiday_days(country: str, subdivision: str | None, year: int) -> np.ndarray:
    """Holidays the package lists for one country (and subdivision) and year, as sorted days since
    1970-01-01 (read-only). Observed days may fall in a neighbouring year. Outside the years the
    package covers for a country (India's lunar holidays: 2001-2035) only the holidays it can
    compute are listed; its warning about that is silenced."""
    import holidays  # loaded at the first holiday asked for: a run without calendars needs none

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        dates = holidays.country_holidays(country, subdiv=subdivision, years=year)
    days = np.array(sorted((d - _EPOCH_DATE).days for d in dates), dtype=np.int64)
    days.flags.writeable = False
    return days


@lru_cache(maxsize=256)
def _holiday_table(country: str, subdivision: str | None, first_year: int, last_year: int) -> np.ndarray:
    years = [holiday_days(country, subdivision, year) for year in range(first_year, last_year + 1)]
    return np.unique(np.concatenate(years))


@dataclass(frozen=True)
class Calendar:
    """When a team (or a region's local staff) is at work.

    ``working_days`` accepts a text such as ``"Sun-Thu"`` and is stored as weekday numbers
    (Mon = 0); ``holiday_country`` accepts a spec such as ``"DE-BY"`` and is stored split."""

    tz: str
    working_days: tuple[int, ...] = (0, 1, 2, 3, 4)
    start_hour: int = REGION_START_HOUR
    end_hour: int = REGION_END_HOUR
    holiday_country: str | None = None
    holiday_subdivision: str | None = None
    _zone: ZoneInfo = field(init=False, repr=False, compare=False)
    _weekday_works: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            zone = ZoneInfo(str(self.tz))
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"time zone {self.tz!r} is not an IANA name such as Europe/Berlin") from exc
        days = (parse_working_days(self.working_days) if isinstance(self.working_days, str)
                else tuple(sorted({int(d) for d in self.working_days})))
        if not days or not set(days) <= set(range(7)):
            raise ValueError(f"working days {self.working_days!r}: need at least one of 0 (Mon) .. 6 (Sun)")
        if not (0 <= int(self.start_hour) <= 23 and 0 <= int(self.end_hour) <= 24):
            raise ValueError(f"working hours {self.start_hour}-{self.end_hour}: start must be 0..23, end 0..24")
        spec = self.holiday_country
        if self.holiday_subdivision is not None:
            spec = f"{self.holiday_country}-{self.holiday_subdivision}"
        country, subdivision = parse_holiday_spec(spec)
        for name, value in (("tz", str(self.tz)), ("working_days", days), ("start_hour", int(self.start_hour)),
                            ("end_hour", int(self.end_hour)), ("holiday_country", country),
                            ("holiday_subdivision", subdivision), ("_zone", zone),
                            ("_weekday_works", np.isin(np.arange(7), days))):
            object.__setattr__(self, name, value)

    @classmethod
    def from_team(cls, row: Mapping) -> Calendar:
        """Calendar of a ``teams`` row (a dict or a pandas Series). A blank or missing
        ``working_days`` is the working week of its ``holiday_country`` (engine.world.countries)."""
        country = None if _blank(row.get("holiday_country")) else str(row["holiday_country"])
        days = row.get("working_days")
        return cls(tz=row["timezone"], working_days=working_days_of(country) if _blank(days) else str(days),
                   start_hour=int(row["work_start_hour"]), end_hour=int(row["work_end_hour"]),
                   holiday_country=country)

    @classmethod
    def from_region(cls, row: Mapping, working_days: str | None = None,
                    start_hour: int = REGION_START_HOUR, end_hour: int = REGION_END_HOUR) -> Calendar:
        """Calendar of a ``regions`` row: its time zone, 9-18 unless given, the public holidays of
        its ``country`` (none when the country is empty) and, unless ``working_days`` is given, the
        row's own ``working_days`` when it has one, else its country's working week
        (engine.world.countries: Sun-Thu in Saudi Arabia, Mon-Fri where the table is silent)."""
        country = None if _blank(row.get("country")) else str(row["country"])
        if working_days is None:
            own = row.get("working_days")
            working_days = working_days_of(country) if _blank(own) else str(own)
        return cls(tz=row["timezone"], working_days=working_days, start_hour=start_hour, end_hour=end_hour,
                   holiday_country=country)

    @property
    def shift_hours(self) -> int:
        """Length of one shift in local wall-clock hours (24 when start == end)."""
        return (self.end_hour - self.start_hour) % 24 or 24

    # --- vectorised, over numpy arrays of UTC epoch seconds ---------------------------------------
    def local_seconds(self, t_utc_s) -> np.ndarray:
        """Local wall-clock time of each instant as int64 seconds since 1970-01-01 00:00 local
        (fractions of a second dropped)."""
        secs = np.floor(np.asarray(t_utc_s, dtype=np.float64)).astype(np.int64)
        utc = pd.DatetimeIndex(secs.ravel().astype("datetime64[s]")).tz_localize("UTC")
        local = utc.tz_convert(self._zone).tz_localize(None).as_unit("s")
        return local.asi8.reshape(secs.shape)

    def at_work(self, t_utc_s) -> np.ndarray:
        """Bool per instant: inside a shift that starts on a working, non-holiday local day."""
        return self._at_work_local(self.local_seconds(t_utc_s))

    def local_hour_of_week(self, t_utc_s) -> np.ndarray:
        """Local hour of the week per instant, 0..167 (Monday 00:00-00:59 = 0, Sunday 23:xx = 167)."""
        return _hour_of_week(self.local_seconds(t_utc_s))

    def is_holiday(self, t_utc_s) -> np.ndarray:
        """Bool per instant: the local calendar day is a holiday of the calendar's country."""
        return self._holiday(self.local_seconds(t_utc_s) // DAY_S)

    def next_work_start(self, t_utc_s) -> np.ndarray:
        """Float64 UTC seconds per instant: the instant itself when the team is at work, else the
        start of its next shift (when lent capacity is due back)."""
        t = np.asarray(t_utc_s, dtype=np.float64)
        result = t.copy()
        idle = ~self.at_work(t)
        if not idle.any():
            return result
        waiting = t[idle]
        lo, hi = float(waiting.min()), float(waiting.max())
        horizon_days = 8
        starts, _ = self.work_intervals(lo, hi + horizon_days * DAY_S)
        while not starts.size or starts[-1] <= hi:
            horizon_days *= 2
            if horizon_days > _MAX_SEARCH_DAYS:
                raise ValueError(f"{self}: no shift starts within {_MAX_SEARCH_DAYS} days")
            starts, _ = self.work_intervals(lo, hi + horizon_days * DAY_S)
        result[idle] = starts[np.searchsorted(starts, waiting, side="right")]
        return result

    def work_intervals(self, start_utc_s: float, end_utc_s: float) -> tuple[np.ndarray, np.ndarray]:
        """Shifts overlapping ``[start_utc_s, end_utc_s)`` as (starts, ends), sorted int64 UTC
        seconds, one pair per shift (consecutive shifts may touch). For drawing working-hour bands."""
        first, last = self.local_seconds(np.array([start_utc_s, end_utc_s])) // DAY_S
        days = np.arange(first - 1, last + 1, dtype=np.int64)
        days = days[self._weekday_works[(days + _EPOCH_WEEKDAY) % 7] & ~self._holiday(days)]
        starts = self._to_utc(days * DAY_S + self.start_hour * HOUR_S)
        ends = self._to_utc(days * DAY_S + (self.start_hour + self.shift_hours) * HOUR_S)
        keep = (ends > start_utc_s) & (starts < end_utc_s)
        return starts[keep], ends[keep]

    # --- one instant: float UTC seconds or a datetime (naive = UTC, as in the database) ----------
    def at_work_at(self, when: float | dt.datetime) -> bool:
        return bool(self._at_work_local(self._local_one(when))[0])

    def hour_of_week_at(self, when: float | dt.datetime) -> int:
        return int(_hour_of_week(self._local_one(when))[0])

    def is_holiday_at(self, when: float | dt.datetime) -> bool:
        return bool(self._holiday(self._local_one(when) // DAY_S)[0])

    def next_work_start_at(self, when: float | dt.datetime) -> float:
        return float(self.next_work_start(np.array([_epoch_seconds(when)]))[0])

    # --- shared logic on local seconds -----------------------------------------------------------
    def _at_work_local(self, local_s: np.ndarray) -> np.ndarray:
        day, hour = local_s // DAY_S, (local_s % DAY_S) // HOUR_S
        if self.start_hour < self.end_hour:
            in_shift, shift_day = (hour >= self.start_hour) & (hour < self.end_hour), day
        else:
            started_today = hour >= self.start_hour
            in_shift = started_today | (hour < self.end_hour)
            shift_day = np.where(started_today, day, day - 1)
        at_work = in_shift & self._weekday_works[(shift_day + _EPOCH_WEEKDAY) % 7]
        at_work[at_work] = ~self._holiday(shift_day[at_work])
        return at_work

    def _holiday(self, days: np.ndarray) -> np.ndarray:
        days = np.asarray(days, dtype=np.int64)
        if self.holiday_country is None or days.size == 0:
            return np.zeros(days.shape, dtype=bool)
        # a year range that surely covers the days, plus a year either side for observed days
        first, last = 1969 + int(days.min()) // 366, 1971 + int(days.max()) // 365
        table = _holiday_table(self.holiday_country, self.holiday_subdivision, first, last)
        if not table.size:
            return np.zeros(days.shape, dtype=bool)
        return table[np.minimum(np.searchsorted(table, days), table.size - 1)] == days

    def _to_utc(self, local_s: np.ndarray) -> np.ndarray:
        local = pd.DatetimeIndex(local_s.astype("datetime64[s]"))
        aware = local.tz_localize(self._zone, ambiguous=np.ones(len(local), dtype=bool),
                                  nonexistent="shift_forward")
        return aware.as_unit("s").asi8

    def _local_one(self, when: float | dt.datetime) -> np.ndarray:
        seconds = int(np.floor(_epoch_seconds(when)))
        offset = dt.datetime.fromtimestamp(seconds, self._zone).utcoffset()
        return np.array([seconds + int(offset.total_seconds())], dtype=np.int64)


def team_calendars(teams: pd.DataFrame) -> dict[str, Calendar]:
    """Calendar per team of a ``teams`` table, keyed by team name."""
    return {str(row["team"]): Calendar.from_team(row) for _, row in teams.iterrows()}


def region_calendars(regions: pd.DataFrame) -> dict[str, Calendar]:
    """Default calendar (its country's working week, 9-18, national holidays) per region of a
    ``regions`` table."""
    return {str(row["region"]): Calendar.from_region(row) for _, row in regions.iterrows()}


def _hour_of_week(local_s: np.ndarray) -> np.ndarray:
    day, hour = local_s // DAY_S, (local_s % DAY_S) // HOUR_S
    return ((day + _EPOCH_WEEKDAY) % 7) * 24 + hour


def _epoch_seconds(when: float | dt.datetime) -> float:
    if isinstance(when, dt.datetime):
        return (when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)).timestamp()
    return float(when)


def _blank(value: object) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value))) or not str(value).strip()


@lru_cache(maxsize=1)
def _supported_countries() -> dict[str, list[str]]:
    import holidays

    return holidays.list_supported_countries()
