"""Time for the sample: the observation window and the teams' local working calendars.

All instants are integer Unix seconds (UTC). A team's working day is a local date that is
in its working week and is not a national holiday of its country (`holidays` package).
"""
from __future__ import annotations

import datetime as dt
from functools import lru_cache
from zoneinfo import ZoneInfo

import holidays
import numpy as np

from engine.telemetry.synth.world import Team

WINDOW_START = dt.datetime(2026, 8, 3)    # Monday, 00:00 UTC
WINDOW_END = dt.datetime(2026, 10, 26)    # 12 weeks later (Monday), exclusive
DAY_S = 86_400
HOUR_S = 3_600

_WEEKS = {"Mon-Fri": (0, 1, 2, 3, 4), "Sun-Thu": (6, 0, 1, 2, 3)}  # Python weekday numbers


def epoch(moment: dt.datetime) -> int:
    """Unix seconds of a naive UTC datetime."""
    return int(moment.replace(tzinfo=dt.UTC).timestamp())


WINDOW_START_S = epoch(WINDOW_START)
WINDOW_END_S = epoch(WINDOW_END)


def working_weekdays(working_days: str) -> tuple[int, ...]:
    if working_days not in _WEEKS:
        raise ValueError(f"unknown working week {working_days!r}; choose from {sorted(_WEEKS)}")
    return _WEEKS[working_days]


@lru_cache(maxsize=None)
def local_days(timezone: str) -> tuple[tuple[dt.date, int], ...]:
    """(local date, UTC second of its local midnight) for every local date overlapping the window."""
    zone = ZoneInfo(timezone)
    first = dt.datetime.fromtimestamp(WINDOW_START_S, zone).date()
    last = dt.datetime.fromtimestamp(WINDOW_END_S - 1, zone).date()
    out = []
    day = first
    while day <= last:
        noon = dt.datetime(day.year, day.month, day.day, 12, tzinfo=zone)
        offset = int(noon.utcoffset().total_seconds())  # the day's offset (no DST change at noon)
        midnight = epoch(dt.datetime(day.year, day.month, day.day)) - offset
        out.append((day, midnight))
        day += dt.timedelta(days=1)
    return tuple(out)


@lru_cache(maxsize=None)
def team_working_midnights(team: Team) -> np.ndarray:
    """UTC seconds of local midnight of each of the team's working days in the window."""
    days = local_days(team.timezone)
    years = sorted({d.year for d, _ in days})
    off = holidays.country_holidays(team.holiday_country, years=years)
    week = working_weekdays(team.working_days)
    return np.array([m for d, m in days if d.weekday() in week and d not in off], dtype=np.int64)


def all_midnights(timezone: str) -> np.ndarray:
    """UTC seconds of local midnight of every day (working or not) in the window."""
    return np.array([m for _, m in local_days(timezone)], dtype=np.int64)


def hour_profile(peaks: tuple[tuple[float, float, float], ...]) -> np.ndarray:
    """Probability of each local hour 0..23 from Gaussian bumps (centre hour, width h, weight)."""
    hours = np.arange(24) + 0.5
    weights = np.zeros(24)
    for centre, width, weight in peaks:
        weights += weight * np.exp(-0.5 * ((hours - centre) / width) ** 2)
    return weights / weights.sum()


def times_on_days(rng: np.random.Generator, midnights: np.ndarray, per_day: float,
                  hour_weights: np.ndarray) -> np.ndarray:
    """Poisson(per_day) instants on each given local day, local hour drawn from `hour_weights`."""
    counts = rng.poisson(per_day, size=len(midnights))
    base = np.repeat(midnights, counts)
    hours = rng.choice(24, size=len(base), p=hour_weights)
    seconds = rng.integers(0, HOUR_S, size=len(base))
    return np.sort(base + hours * HOUR_S + seconds)


def in_window(times: np.ndarray) -> np.ndarray:
    """Keep instants inside the window [WINDOW_START_S, WINDOW_END_S)."""
    return times[(times >= WINDOW_START_S) & (times < WINDOW_END_S)]
