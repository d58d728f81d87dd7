"""Load shifting in the simulator: asks the timing policy (engine.policies.timing) how long to
hold each flexible job back at submit, from a `TimingView` of its home region.

Candidate starts lie on a quarter-hour grid from the submit time over the next week (the longest
delay a policy may ask for); each carries the region's working hours then (the job's team's under
`calendar = "team"`: engine.world.team_hours), and the mean grid
intensity and the mean price factor (off-peak discounts) over the job's requested runtime from then
(at most a day), from `RegionFacts`. The
delay is cut back so the job can still finish by its deadline (by its requested runtime).
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.reasons import DEFERRED as DEFERRED_CODE
from engine.core.traits import traits_of
from engine.core.views import RouteRequest, TimingView
from engine.sim.processes.base import WorldProcess
from engine.sim.state.events import DEFERRED
from engine.world.facts import QUARTER_S, RegionFacts

HORIZON_QUARTERS = 7 * 96   # a week of candidate starts
MAX_RUN_QUARTERS = 96       # the intensity a start would run under: over at most a day


class Holder(WorldProcess):
    """Delays of one run's jobs; `delay(j, now)` in seconds (0: queue now). A held job arrives
    again later as a deferred arrival (logged "deferred" now)."""

    def __init__(self, run, policy, facts: RegionFacts) -> None:
        w = run.w
        self.run, self.policy, self.facts = run, policy, facts
        self.flexible, self.home = run.flexible, run.home
        self.team, self.classes = run.w.team, run.w.workload_class.tolist()
        self.last = facts.at_work.shape[1] - 1  # the run's last quarter
        # facts.work_row and facts.quarter, read here: a flexible job asks once, ~70,000 times on the sample
        self.at_work, self.team_at_work = facts.at_work, facts.team_at_work
        self.deadline = w.deadline_s.tolist()
        zero = np.zeros((len(facts.names), 1))
        self.cum = np.concatenate([zero, np.cumsum(facts.g_co2e, axis=1)], axis=1)
        self.cum_price = np.concatenate([zero, np.cumsum(facts.price_factor, axis=1)], axis=1)
        self.offsets_s = np.arange(HORIZON_QUARTERS + 1) * QUARTER_S
        from engine.sim.processes import holder_kernels  # numba: only runs that hold jobs back load it
        self.kernels = holder_kernels

    @classmethod
    def attach(cls, run) -> Holder | None:
        timing = run.p.timing
        return None if traits_of(timing).inert else cls(run, timing, run.region_facts())

    def on_arrival(self, j: int, now: float) -> bool:
        held = self.delay(j, now)
        if held > 0:
            self.run.events.push(now + held, DEFERRED, j)
            self.run.log(now, j, DEFERRED_CODE)
        return held > 0

    def delay(self, j: int, now_s: float) -> float:
        if not self.flexible[j]:
            return 0.0
        run, r, requested = self.run, self.home[j], self.run.requested[j]
        length = min(max(math.ceil(requested / QUARTER_S), 1), MAX_RUN_QUARTERS) \
            if math.isfinite(requested) else MAX_RUN_QUARTERS
        work = self.team_at_work.get(self.team[j])
        start, mean, price, at_work = self.kernels.candidates(
            self.cum, self.cum_price, self.at_work[r] if work is None else work, r, now_s, self.offsets_s,
            min(int(now_s // QUARTER_S), self.last), self.last, length)
        latest = self.deadline[j] - requested
        view = TimingView.of(start, mean, at_work, latest, price)
        job = RouteRequest.of(j, r, run.gpus[j], self.classes[j], True, requested, run.submit[j], -1, 0.0, math.inf)
        wanted = float(self.policy.delay(job, view, now_s))
        return max(0.0, min(wanted, latest - now_s)) if wanted > 0 else 0.0
