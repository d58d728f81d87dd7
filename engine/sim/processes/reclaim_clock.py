"""Reclaim by the clock, a part of engine.sim.cycle.sharing.Sharing kept in its own file.

A quota holder whose [[quota]] entry has `reclaim_at_work_start` lends nothing during its working
windows (each working day of its calendar, from `reclaim_lead_min` before the day starts to its end;
overlapping windows merge). One CLOCK event is pending at a time, at the next window edge of any
such holder (from the calendar: no polling). At a window's start the gate withholds the holder's
lent quota (engine.sim.cycle.quota_gate) and, when a preemption policy is on, borrowers are evicted until
the holder has its whole nominal quota back: running jobs of other holders of its cohort that hold
more than their nominal quota, in the policy's order for a guaranteed job (the working day's
capacity is a guarantee: min_runtime_s and max_preemptions do not protect a borrower), each logged
"reclaimed-at-work-start" before its eviction; never the holder's own jobs, nor jobs of guaranteed
queues. At a window's end the holder lends again and parked jobs are let back. The holder's calendar
is its teams-table row when the holder is a team listed there, else the region's
(engine.world.facts.World.region_calendar_of). The clock stops when nothing runs, waits or is still to come
(parked jobs aside: it runs on for at most IDLE_S while only parked jobs are left, for a window's
end that lets them back).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.core.reasons import RECLAIMED
from engine.policies.preemption import PreemptRequest
from engine.sim.processes.base import WorldProcess
from engine.world.calendar import DAY_S, Calendar
from engine.world.facts import World

CLOCK = 9
IDLE_S = 8 * DAY_S  # the clock's run-on with only parked jobs left: a working week and a day


class ClockReclaim:
    """The clock steps of `Sharing` (mixed into it): CLOCK events, reclaims at a window's start."""

    def clock(self, now: float) -> list[str]:
        """A CLOCK event: the holders whose working window starts or ends now reclaim or lend; the
        regions to pass."""
        touched = []
        for c in self.clocks:
            inside = c.windows.inside(now)
            if inside == c.withheld:
                continue
            c.withheld = inside
            region = self.names[c.region]
            if inside:
                self.gate.withhold(c.region, c.holder)
                self._reclaim_clock(c, now)
            else:
                self.gate.lend(c.region, c.holder)
                for k in self.gate.release(self.usage(region), c.region, self.reclaims):
                    self.run.requeue(k, region)
            touched.append(region)
        self._next_clock(now)
        return touched

    def _reclaim_clock(self, c: "_Clock", now: float) -> None:
        """Evict borrowers of c's cohort until its holder can take its whole nominal quota."""
        if not self.preempts:
            return
        region, h, gate = self.names[c.region], c.holder, self.gate
        book = gate.books[c.region]
        if not gate.excess(self.usage(region), c.region, h) > 1e-9:
            return
        request = PreemptRequest(math.inf, math.inf, True, True)
        cohort = book.cohort[h]
        for v in self._candidates(region, now, h, request):
            usage = self.usage(region)
            if usage[h] >= book.nominal[h] - 1e-9 or not gate.excess(usage, c.region, h) > 1e-9:
                return
            k = self.holder[v]
            if k == h or book.cohort[k] != cohort or not gate.borrows(usage, c.region, k):
                continue
            self.run.log(now, v, RECLAIMED)
            self.evict(v, now)

    def _next_clock(self, now: float) -> None:
        """Push the next window edge of any clocked holder while the run has anything left to do."""
        run = self.run
        events = run.events
        busy = (len(events) > events.background_pending or run.pods or any(q.count for q in run.queues.values())
                or any(self.vip.values()))
        if busy:
            self.idle_since = math.inf
        elif not any(self.gate.count) or now - min(self.idle_since, now) >= IDLE_S:
            return
        else:
            self.idle_since = min(self.idle_since, now)
        edge = min(c.windows.next_edge(now) for c in self.clocks)
        if math.isfinite(edge):
            events.push(edge, CLOCK, -1)


class ClockEdges(WorldProcess):
    """The CLOCK events of a run whose quota holders reclaim by the clock (the first was pushed when
    the run's sharing state was built, engine.sim.cycle.sharing)."""

    kinds = (CLOCK,)
    cause = "[[quota]] reclaim at the working-day start"

    def __init__(self, sharing) -> None:
        self.sharing = sharing

    @classmethod
    def attach(cls, run) -> ClockEdges | None:
        return cls(run.sharing) if run.sharing.clocks else None

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        return self.sharing.clock(now)


@dataclass
class _Clock:
    """A holder (code) that reclaims by the clock in a region (index), its working windows, and
    whether it withholds its lent quota now."""

    region: int
    holder: int
    windows: "WorkWindows"
    withheld: bool = False


def clocks(sharing, world: World) -> list[_Clock]:
    """The clocked holders of a run, each with the working windows of its calendar."""
    run = sharing.run
    origin = run.w.origin_utc.value / 1e9
    holders = sharing.gate.holders
    teams = world.teams if world.teams is not None and "timezone" in getattr(world.teams, "columns", ()) else None
    teams = teams.set_index("team") if teams is not None else None
    out = []
    for r, h, lead_s in sharing.gate.clocked:
        name = sharing.names[r]
        if not sharing.by_queue and teams is not None and holders[h] in teams.index:
            calendar = Calendar.from_team(teams.loc[holders[h]].to_dict())
        else:
            calendar = world.region_calendar_of(name)
        out.append(_Clock(r, h, WorkWindows(calendar, lead_s, origin)))
    return out


class WorkWindows:
    """A calendar's working windows in run seconds (0 = `origin_s` UTC epoch seconds), each from
    `lead_s` before a shift starts to its end, overlapping or touching ones merged. Computed three
    weeks at a time (longer over long holidays) from a query time t: the shifts overlapping
    [t - a day - lead, hi) give exact windows up to hi - a day - lead (`sure`)."""

    CHUNK_S = 21 * DAY_S
    MAX_S = 800 * DAY_S  # no edge within this long: none (as Calendar.next_work_start gives up)

    def __init__(self, calendar: Calendar, lead_s: float, origin_s: float) -> None:
        self.calendar, self.lead_s, self.origin_s = calendar, float(lead_s), float(origin_s)
        self.lo, self.sure = math.inf, -math.inf
        self.starts = self.ends = np.zeros(0)

    def _cover(self, t: float, span: float) -> None:
        lo, hi = t - DAY_S - self.lead_s, t + span
        starts, ends = self.calendar.work_intervals(self.origin_s + lo, self.origin_s + hi)
        starts = starts.astype(np.float64) - self.origin_s - self.lead_s
        ends = ends.astype(np.float64) - self.origin_s
        if len(starts):
            new = np.concatenate([[True], starts[1:] > np.maximum.accumulate(ends)[:-1]])
            ends = np.maximum.reduceat(ends, np.flatnonzero(new))
            starts = starts[new]
        self.starts, self.ends, self.lo, self.sure = starts, ends, t, hi - DAY_S - self.lead_s

    def _edge_after(self, t: float) -> float:
        later = np.concatenate([self.starts[self.starts > t], self.ends[self.ends > t]])
        return float(later.min()) if len(later) else math.inf

    def next_edge(self, t: float) -> float:
        """The first window start or end after run time t (inf: none within MAX_S)."""
        if self.lo <= t and self._edge_after(t) < self.sure:
            return self._edge_after(t)
        span = self.CHUNK_S
        while True:
            self._cover(t, span)
            edge = self._edge_after(t)
            if edge < self.sure:
                return edge
            if span > self.MAX_S:
                return math.inf
            span *= 2

    def inside(self, t: float) -> bool:
        """Whether run time t lies in a working window."""
        if not (self.lo <= t < self.sure):
            self._cover(t, self.CHUNK_S)
        i = int(np.searchsorted(self.starts, t, side="right")) - 1
        return i >= 0 and t < self.ends[i]
