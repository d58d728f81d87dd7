"""Live follow-the-sun: running flexible work handed over to off-hours regions as working days begin.

A scenario's [handoff] table (engine.scenario.handoff, whose docstring gives the rule in full) turns
this process on; it needs a router (any routing policy but home-only: without one no work runs away
from home, so there is nothing borrowed to hand back). Events:
- DAY (17): the next working-day start of any region (its calendar: engine.world.day_starts;
  one pending at a time, pushed while the run has anything left to do; a background kind, so it keeps
  neither the run nor another process's clock going). Each region whose day starts
  now and that is not down hands over borrowed work for each GPU pool where its own waiting work
  asks for more than is free: shortfall = milli-GPUs of the waiting jobs whose home is the region -
  the pool's free milli-GPUs. Candidates: running flexible jobs of other homes (not of guaranteed
  queues), in the region since their current piece started at least `min_run_h` ago, with at least
  `min_left_h` of their request left (request - work done so far), largest first, then by index; each
  moves when a destination has room (below) and the shortfall is not yet covered. A destination is
  a region other than the job's current one that is up, off-hours now, allowed by the job's
  residency (the router's mask), whose fleet could hold the job and whose pool has the job's
  milli-GPUs free now, less what earlier moves of the same instant were promised there; ranked home
  first, then the most free, then the lowest index.
- MOVE (18), payload 2m: move m's checkpoint is written (`checkpoint_min` after the decision, the job
  kept its GPUs): the job stops, keeping the work up to the decision (the checkpoint's time is lost),
  is logged "handed-off", and is sent to the destination; its work left grows by `restart_min` (the
  restart runs on the destination's GPUs). A job that ended or was evicted meanwhile does not move.
  Payload 2m + 1: the checkpoint arrives (`checkpoint_gb_per_gpu` x GPUs x 8 / the link's Gbit/s
  later) and the job queues at the destination (no admission again: it was admitted once).

Measures: lost seconds per move = checkpoint + transfer + restart; lost GPU-hours = that x the GPUs
the job held; moved GPU-hours = the job's work left at the move x those GPUs. The result's `handoffs`
table has one row per move (HANDOFF_COLUMNS); the per-job table gains `handoffs` (moves) and
`handoff_lost_gpu_hours`; the piece a move ended is a segment with outcome "handed-off".
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.core.reasons import HANDED_OFF, WAITING
from engine.sim.processes.base import WorldProcess
from engine.world.day_starts import DayStarts, handoff_clocks
from engine.world.team_hours import working_calendars

DAY = 17
MOVE = 18
REASON = "working-day-start"
RECHECK = "working-day-recheck"
HANDOFF_COLUMNS = ["row", "job_id", "from_region", "to_region", "time_s", "reason", "gpus", "checkpoint_s",
                   "transfer_s", "restart_s", "lost_s", "lost_gpu_hours", "moved_gpu_hours"]


class Handoffs(WorldProcess):
    """The hand-offs of one run (see the module docstring)."""

    kinds = (DAY, MOVE)
    background = (DAY,)  # a day start alone keeps no run going (nor another process's clock)
    cause = "[handoff] (working-day starts and moves)"
    attached_columns = {"handoffs": np.int64, "handoff_lost_gpu_hours": np.float64}
    result_fields = ("handoffs",)

    @classmethod
    def attach(cls, run) -> Handoffs | None:
        settings = run.world.handoff if run.world is not None else None
        if settings is None or not settings.enabled or run.router is None:
            return None
        return cls(run, settings)

    def __init__(self, run, settings) -> None:
        self.run, self.settings = run, settings
        self.names = list(run.regions)
        origin = run.w.origin_utc.value / 1e9
        clocks, self.clock_of = handoff_clocks(run.world, run.w.team, run.home, self.names)
        self.clock_region = [r for r, _ in clocks]
        self.days = [DayStarts(calendar, origin) for _, calendar in clocks]
        self.working = [[DayStarts(c, origin) for c in cals] for cals in working_calendars(run.world, self.names)]
        self.next_day = [d.after(-1.0) for d in self.days]
        self.window_s, self.every_s = settings.recheck_h * 3600.0, settings.recheck_every_min * 60.0
        self.began = [-math.inf] * len(clocks)  # each clock's last working-day start
        self.next_check = [math.inf] * len(clocks)  # its next re-check in the day's first recheck_h
        self.checkpoint_s, self.restart_s = settings.checkpoint_min * 60.0, settings.restart_min * 60.0
        self.gbps = settings.link_gbps(run.transfer_gbps)
        self.min_run_s, self.min_left_s = settings.min_run_h * 3600.0, settings.min_left_h * 3600.0
        self.guaranteed = run.sharing.guaranteed
        self.moves: list[list] = []  # job, from, to, decided_s, generation, gpus, transfer_s, left_s, done, reason
        self.count = np.zeros(len(run.w), np.int64)
        self.lost_gpu_s = np.zeros(len(run.w))
        self._push_day(-1.0)

    def _push_day(self, now: float) -> None:
        first = min(min(self.next_day, default=math.inf), min(self.next_check, default=math.inf))
        events = self.run.events
        if math.isfinite(first) and (len(events) > events.background_pending or self.run.pods):
            events.push(first, DAY, -1)

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        if kind == DAY:
            touched = self.day(now)
            self._push_day(now)
            return touched
        return self.leave(payload // 2, now) if payload % 2 == 0 else self.arrive(payload // 2)

    def day(self, now: float) -> list[str]:
        """The clocks whose working day starts now, or that re-check now, hand over borrowed work
        (decisions only: the jobs leave when their checkpoints are written)."""
        promised: dict[tuple[int, int], float] = {}
        for c, when in enumerate(self.next_day):
            if when <= now:
                self.next_day[c], self.began[c] = self.days[c].after(now), when
                self.next_check[c], reason = when + self.every_s, REASON
            elif self.next_check[c] <= now:
                self.next_check[c] += self.every_s
                reason = RECHECK if self.days[c].at_work(now) else None
            else:
                continue
            if self.next_check[c] > self.began[c] + self.window_s + 1e-6:
                self.next_check[c] = math.inf
            if reason is not None and not self.run.down(self.names[self.clock_region[c]]):
                self._hand_over(c, now, promised, reason)
        return []

    def _shortfall(self, c: int) -> dict[int, float]:
        """Pool -> milli-GPUs the waiting work of clock c (jobs of its region's home on its calendar)
        asks for beyond what is free there (> 0 only)."""
        run, r = self.run, self.clock_region[c]
        name, home, units, pools, clock_of = self.names[r], run.home, run.units_list, run.pool_list, self.clock_of
        asked: dict[int, float] = {}
        for j in run.waiting_in(name):
            if home[j] == r and clock_of[j] == c:
                asked[pools[j]] = asked.get(pools[j], 0.0) + units[j]
        free = run.regions[name].pool_free
        return {p: need for p, units_asked in asked.items() if (need := units_asked - free[p]) > 1e-9}

    def _candidates(self, r: int, now: float) -> list[int]:
        """Borrowed running jobs of region r that may move now, largest first, then by index."""
        run, name = self.run, self.names[r]
        seg_start = run.sharing.seg_start
        out = []
        for j in run.pods:
            if run.region_name[j] != name or run.home[j] == r or not run.flexible[j] or self.guaranteed[j]:
                continue
            ran = now - seg_start[j]
            done = run.run_s[j] - run.remaining[j] + ran  # work so far: earlier pieces and this one
            if ran >= self.min_run_s and run.requested[j] - done >= self.min_left_s:
                out.append(j)
        return sorted(out, key=lambda j: (-run.units_list[j], j))

    def _hand_over(self, c: int, now: float, promised: dict, reason: str) -> None:
        short = self._shortfall(c)
        if not short:
            return
        run, r = self.run, self.clock_region[c]
        for j in self._candidates(r, now):
            pool = run.pool_list[j]
            if short.get(pool, 0.0) <= 1e-9:
                continue
            to = self._destination(j, r, now, promised)
            if to < 0:
                continue
            units = run.units_list[j]
            short[pool] -= units
            key = (to, int(run.shape_pools[run.shape_list[j], to]))
            promised[key] = promised.get(key, 0.0) + units
            gpus = float(run.alloc_gpus[j])
            transfer = self.settings.checkpoint_gb_per_gpu * gpus * 8.0 / self.gbps if self.gbps > 0 else 0.0
            self.moves.append([j, r, to, now, run.generation[j], gpus, transfer, 0.0, False, reason])
            run.events.push(now + self.checkpoint_s, MOVE, 2 * (len(self.moves) - 1))

    def _destination(self, j: int, r: int, now: float, promised: dict) -> int:
        """Where job j goes from region r (the module docstring's ranking), or -1 for nowhere."""
        run = self.run
        allowed, shape, units = run.router.allowed[j], run.shape_list[j], run.units_list[j]
        best, best_key = -1, None
        for d, name in enumerate(self.names):
            if d == r or not allowed[d] or not run.shape_fits[shape, d] or run.down(name):
                continue
            pool = int(run.shape_pools[shape, d])
            room = run.regions[name].pool_free[pool] - promised.get((d, pool), 0.0)
            if room + 1e-9 < units or any(w.at_work(now) for w in self.working[d]):
                continue
            key = (d == run.home[j], room, -d)
            if best_key is None or key > best_key:
                best, best_key = d, key
        return best

    def leave(self, m: int, now: float) -> list[str]:
        """Move m's checkpoint is written: the job stops and travels (when it still runs as decided)."""
        run, move = self.run, self.moves[m]
        j, r, to, decided, generation = move[:5]
        if run.generation[j] != generation or j not in run.pods:
            return []
        sharing, frm = run.sharing, self.names[r]
        start = float(sharing.seg_start[j])
        saved = decided - start
        run.remaining[j] -= saved if run.links is None else run.links.work_s(j, saved)
        move[7], move[8] = run.remaining[j], True
        sharing.segments.append((j, frm, run.nodes_of[j], start, now, run.alloc_gpus[j], now - decided, "handed-off"))
        run.release(j, now)
        run.generation[j] += 1
        run.log(now, j, HANDED_OFF)
        run._move(j, to)
        run.remaining[j] += self.restart_s
        run.reason[j] = WAITING
        self.count[j] += 1
        self.lost_gpu_s[j] += (self.checkpoint_s + move[6] + self.restart_s) * move[5]
        run.events.push(now + move[6], MOVE, 2 * m + 1)
        return [frm]

    def arrive(self, m: int) -> list[str]:
        """Move m's checkpoint is at its destination: the job queues there."""
        run = self.run
        j, to = self.moves[m][0], self.names[self.moves[m][2]]
        run.count_waiting(j, to, +1)
        if not run.sharing.joins_vip(j, to):
            run.requeue(j, to)
        return [to]

    def columns(self) -> dict[str, np.ndarray]:
        return {"handoffs": self.count, "handoff_lost_gpu_hours": self.lost_gpu_s / 3600.0}

    def result(self) -> dict[str, object]:
        done = [m for m in self.moves if m[8]]
        j, r, to, decided, _, gpus, transfer, left, _, reason = (list(c) for c in zip(*done)) if done else ([],) * 10
        row = np.asarray(j, np.int64)
        gpus, transfer = np.asarray(gpus, np.float64), np.asarray(transfer, np.float64)
        lost = self.checkpoint_s + transfer + self.restart_s
        return {"handoffs": pd.DataFrame({
            "row": row, "job_id": self.run.w.job_id[row], "from_region": [self.names[i] for i in r],
            "to_region": [self.names[i] for i in to], "time_s": np.asarray(decided, np.float64),
            "reason": reason, "gpus": gpus, "checkpoint_s": np.full(len(row), self.checkpoint_s),
            "transfer_s": transfer, "restart_s": np.full(len(row), self.restart_s), "lost_s": lost,
            "lost_gpu_hours": lost * gpus / 3600.0,
            "moved_gpu_hours": np.asarray(left, np.float64) * gpus / 3600.0}, columns=HANDOFF_COLUMNS)}
