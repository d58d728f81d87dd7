"""Adaptive backfilling's decisions (engine.policies.backfill_adaptive): which strategy is in force.

`Adaptive(run, policy, simulate).policy(region, now, head)` returns the backfill policy in force in `region`.
At the first pass of a region after each multiple of `period_s` it replays the region's last period
under each strategy and switches to the best by the KPI (ties keep the strategy in force, then the
first listed), logging "backfill-switched" against `head` when it changes. The replay: the jobs of the
region alive at the period's start (not yet ended) or submitted since, submitted at the later of their
submit and the period's start, on the region's nodes emptied (the state's copy), each running for what
is known now: its simulated runtime if it has ended, else its request (the period when unknown).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from engine.core.reasons import SWITCHED


class Adaptive:
    """The strategy in force per region, and its periodic re-decision."""

    def __init__(self, run, policy, simulate) -> None:
        self.run, self.spec, self.simulate = run, policy, simulate  # simulate: engine.sim.simulator's
        self.strategies = policy.policies()
        self.current: dict[str, int] = {}
        self.next_s: dict[str, float] = {}
        self.switches: list[tuple[float, str, str, str]] = []  # (time, region, from key, to key)

    def policy(self, region: str, now: float, head: int):
        period = self.spec.period_s
        if now >= self.next_s.get(region, period):
            before = self.current.get(region, 0)
            after = self.decide(region, now - period, now, before)
            if after != before:
                self.current[region] = after
                self.switches.append((now, region, self.spec.keys()[before], self.spec.keys()[after]))
                self.run.log(now, head, SWITCHED)
            self.next_s[region] = (math.floor(now / period) + 1) * period
        return self.strategies[self.current.get(region, 0)]

    def decide(self, region: str, since: float, now: float, current: int) -> int:
        jobs, known = self._replayed(region, since, now)
        if not len(jobs):
            return current
        scores = [self._score(jobs, known, since, strategy) for strategy in self.strategies]
        best = min(scores)
        return current if scores[current] <= best else scores.index(best)

    def _replayed(self, region: str, since: float, now: float):
        run, w = self.run, self.run.w
        submit = w.submit_s
        alive = (w.region == region) & (submit < now) & ~(run.end <= since)
        jobs = np.flatnonzero(alive)
        ended = run.end[jobs] <= now
        requested = np.where(np.isfinite(run.requested_s[jobs]), run.requested_s[jobs], now - since)
        known = np.where(ended, run.end[jobs] - run.start[jobs], requested)
        return jobs, np.maximum(known, 0.0)

    def _score(self, jobs: np.ndarray, known: np.ndarray, since: float, strategy) -> float:
        run, w = self.run, self.run.w
        fields = {f.name: getattr(w, f.name)[jobs] for f in dataclasses.fields(w)
                  if isinstance(getattr(w, f.name), np.ndarray) and len(getattr(w, f.name)) == len(w)}
        fields.update(submit_s=np.maximum(w.submit_s[jobs], since), run_s=known, failed=np.zeros(len(jobs), bool))
        if w.patience_s is not None:
            fields["patience_s"] = np.full(len(jobs), np.nan)
        sub = dataclasses.replace(w, **fields)
        result = self.simulate(sub, dataclasses.replace(run.p, backfill=strategy), run.seed, "adaptive replay",
                          run.timer_s, run.world, run.sharing_setup)
        frame = result.jobs
        recent = (w.submit_s[jobs] >= since)
        wait = (frame["start_s"].to_numpy(np.float64) - sub.submit_s)[recent]
        wait = np.where(np.isnan(wait), result_span(frame) - sub.submit_s[recent], wait)
        kpi = self.spec.kpi
        if kpi == "mean-wait":
            return float(wait.mean()) if len(wait) else 0.0
        if kpi == "p95-wait":
            return float(np.percentile(wait, 95)) if len(wait) else 0.0
        run_s = known[recent]
        return float(np.mean(np.maximum(1.0, (wait + run_s) / np.maximum(run_s, 10.0)))) if len(wait) else 0.0


def result_span(frame) -> float:
    """The last start or end of a replay: where a job that never started counts as starting."""
    times = np.concatenate([frame["start_s"].to_numpy(np.float64), frame["end_s"].to_numpy(np.float64)])
    return float(np.nanmax(times)) if np.isfinite(times).any() else 0.0
