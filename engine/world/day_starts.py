"""When each region's working day starts, in a run's seconds: the calendars of live follow-the-sun
(engine.sim.processes.handoff) and of its measure, the wait of home work at a day's start
(engine.analysis.runs.handoff).

A region's calendar is engine.world.facts.World.region_calendar_of: its regions-table row with the
world's [[region]] calendar edits (its country's working week and holidays, 9-18 local, unless
overridden); a region missing from the table works on UTC with no holidays. Under a scenario's
`calendar = "team"` a region's day starts once per team homed there (engine.world.team_hours).
"""
from __future__ import annotations

import math

import numpy as np

from engine.world.calendar import DAY_S, Calendar
from engine.world.facts import World
from engine.world.team_hours import job_calendars, team_mode


class DayStarts:
    """The working-day starts of one calendar in run seconds (0 = `origin_s` UTC epoch seconds),
    computed three weeks at a time."""

    CHUNK_S = 21 * DAY_S
    MAX_S = 800 * DAY_S  # no day starts within this long (a calendar of holidays only): none

    def __init__(self, calendar: Calendar, origin_s: float) -> None:
        self.calendar, self.origin_s = calendar, float(origin_s)
        self.starts, self.upto = np.zeros(0), -math.inf

    def after(self, t: float) -> float:
        """The first day start later than run time t (inf: none within MAX_S)."""
        span = self.CHUNK_S
        while True:
            if t < self.upto:
                later = self.starts[self.starts > t]
                if len(later) and later[0] < self.upto:
                    return float(later[0])
            if span > self.MAX_S:
                return math.inf
            starts, _ = self.calendar.work_intervals(self.origin_s + t, self.origin_s + t + span)
            self.starts = np.unique(starts.astype(np.float64) - self.origin_s)
            self.upto = t + span - DAY_S  # a shift starting before this is listed (shifts last at most a day)
            span *= 2

    def between(self, lo: float, hi: float) -> np.ndarray:
        """Every day start in [lo, hi), run seconds, sorted."""
        starts, _ = self.calendar.work_intervals(self.origin_s + lo - DAY_S, self.origin_s + hi)
        starts = np.unique(starts.astype(np.float64) - self.origin_s)
        return starts[(starts >= lo) & (starts < hi)]

    def at_work(self, t: float) -> bool:
        return self.calendar.at_work_at(self.origin_s + t)


def handoff_clocks(world: World, teams, homes: list[int], names: list[str]) -> tuple[list[tuple[int, Calendar]],
                                                                                  list[int]]:
    """The working-day clocks of live follow-the-sun, (region index, calendar) each, and each job's clock
    (jobs: their `teams` and `homes`, indices into `names`). By default one clock per region of `names`,
    its own calendar, every job on its home's; under `calendar = "team"` one per home region and calendar
    its jobs keep (engine.world.team_hours.job_calendars: a listed team's, else the region's)."""
    if not team_mode(world):
        return [(r, world.region_calendar_of(name)) for r, name in enumerate(names)], list(homes)
    calendars, index = job_calendars(world, teams, homes, names)
    keys: dict[tuple[int, int], int] = {}
    clock_of = [keys.setdefault((home, k), len(keys)) for home, k in zip(homes, index)]
    return [(home, calendars[k]) for home, k in keys], clock_of
