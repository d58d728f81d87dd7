"""Predictive scaling: the [[burst]] pools' nodes rented ahead of the forecast peak and returned after it.

A scenario's [predictive_scaling] table (engine.scenario.predictive) gives the run a ScalingPlan:
for each [[burst]] pool, a target number of nodes for every hour of the window, from a seasonal
forecast of its region's demand for the GPU type. The pool's nodes are added to the fleet as the
burst machinery adds them (engine.sim.processes.burst: tier "burst", held down until rented, billed
from renting to return), named plan-<region>-<gpu type>-<k>, so the reactive pools can run beside
them (`reactive = true`).

Rules. At time t the pool holds the largest target of the hours [h, h + 1 h) that end after t and
start no later than t + lead_min (so capacity is asked lead_min ahead of the hour that needs it and
kept to the end of the last such hour). A SCALE_STEP event at every time that maximum can change
(an hour's start less the lead, an hour's start) re-reads it:
- Above the nodes rented (provisioning or up, not being returned): rent the difference, cancelling
  returns first; a rented node is up `provision_min` later (SCALE_UP).
- Below: mark the excess for return, entirely free nodes first, then provisioning ones, then busy
  ones; a marked node goes back at the first pass that finds it entirely free (a job on it finishes).
Prices: the pool's burst price (engine.sim.processes.burst.burst_price), or with `reserved = true`
the region's reserved price for the GPU type (the prices table, else the price book's on-demand price
x its reserved multiplier).

Result fields: `scaling`, one row per rental with the burst table's columns (trigger_job_id
"forecast"), and `forecast`, the forecast's backtest per pool (engine.scenario.predictive.ERROR_COLUMNS).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.processes.burst import Bursts, burst_nodes
from engine.world.pricebook import TIER_MULTIPLIER, on_demand_price

SCALE_STEP = 15
SCALE_UP = 16
HOUR_S = 3600.0


def reserved_price(prices: pd.DataFrame | None, region: str, gpu_type: str) -> float:
    """USD per GPU-hour of `gpu_type` reserved in `region`: the prices table's, else the price book's."""
    if prices is not None and len(prices):
        rows = prices[(prices["region"] == region) & (prices["gpu_type"] == gpu_type) & (prices["tier"] == "reserved")]
        if len(rows):
            return float(rows["usd_per_gpu_hour"].iloc[-1])
    return on_demand_price(gpu_type) * TIER_MULTIPLIER["reserved"]


class ForecastScaling(Bursts):
    """The pools of a run's ScalingPlan, rented to the forecast's targets (see the module docstring)."""

    kinds = (SCALE_STEP, SCALE_UP)
    prefix = "plan"
    cause = "[predictive_scaling] (the forecast's hourly targets)"
    result_fields = ("scaling", "forecast")

    @classmethod
    def fleet_rows(cls, fleet: pd.DataFrame, world) -> pd.DataFrame | None:
        plan = world.scaling if world is not None else None
        return burst_nodes(fleet, plan.pools, cls.prefix) if plan is not None else None

    @classmethod
    def attach(cls, run) -> ForecastScaling | None:
        plan = run.world.scaling if run.world is not None else None
        return cls(run, plan) if plan is not None else None

    def __init__(self, run, plan) -> None:
        super().__init__(run, plan.pools, run.world.prices)
        if plan.settings.reserved:
            self.price = [reserved_price(run.world.prices, pool.region, pool.gpu_type) for pool in plan.pools]
        self.errors = plan.errors
        self.lead_s = plan.settings.lead_min * 60.0
        self.offset_s = (plan.start_utc - run.w.origin_utc).total_seconds()
        self.targets = [np.asarray(t, np.int64) for t in plan.targets]
        self.returning = [False] * len(self.node)
        for p, targets in enumerate(self.targets):
            changes = np.flatnonzero(np.diff(targets, prepend=0))
            hours = self.offset_s + changes * HOUR_S
            for at in sorted({*hours, *(hours - self.lead_s)}):
                run.events.push(max(float(at), 0.0), SCALE_STEP, p)

    def target(self, p: int, now: float) -> int:
        """The largest target of pool p's hours that end after `now` and start by `now` + lead."""
        targets = self.targets[p]
        first = int(np.floor((now - self.offset_s) / HOUR_S))
        last = int(np.floor((now + self.lead_s - self.offset_s) / HOUR_S))
        first, last = max(first, 0), min(last, len(targets) - 1)
        return int(targets[first:last + 1].max()) if last >= first else 0

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        """SCALE_STEP (payload: a pool): rent or mark for return; SCALE_UP (payload: a node): it is up."""
        if kind == SCALE_UP:
            b, pool = payload, self.pools[self.pool_of[payload]]
            self._give(self.run.regions[pool.region], np.asarray([self.node[b]], np.int64))
            self.state[b] = "up"
            self.current[b]["up_s"] = now
            self.run.freed[pool.region] = True
            return [pool.region]
        self._step(payload, now)
        return [self.pools[payload].region]

    def _step(self, p: int, now: float) -> None:
        pool, want = self.pools[p], self.target(p, now)
        held = [b for b in self.members[p] if self.state[b] != "down"]
        kept = [b for b in held if not self.returning[b]]
        for b in [b for b in held if self.returning[b]][:max(want - len(kept), 0)]:
            self.returning[b] = False
            kept.append(b)
        for b in [b for b in self.members[p] if self.state[b] == "down"][:max(want - len(kept), 0)]:
            self.state[b] = "provisioning"
            self.current[b] = {"region": pool.region, "node": self.run.regions[pool.region].names[self.node[b]],
                               "gpu_type": pool.gpu_type, "gpus": pool.gpus_per_node,
                               "usd_per_gpu_hour": self.price[p], "rented_s": now, "up_s": np.nan,
                               "returned_s": np.nan, "trigger_job_id": "forecast"}
            self.rentals.append(self.current[b])
            self.run.events.push(now + pool.provision_min * 60.0, SCALE_UP, b)
            kept.append(b)
        free = self.run.regions[pool.region].state.entirely_free
        order = sorted(kept, key=lambda b: (self.state[b] != "up" or not free[self.node[b]],
                                            self.state[b] == "up", b))
        for b in order[:max(len(kept) - want, 0)]:
            self.returning[b] = True

    def after_pass(self, region: str, now: float) -> None:
        """Return the nodes marked for return that no job holds."""
        free = self.run.regions[region].state.entirely_free
        for p in self.by_region.get(region, ()):
            for b in self.members[p]:
                if self.returning[b] and self.state[b] == "up" and free[self.node[b]]:
                    self._take(self.run.regions[region], np.asarray([self.node[b]], np.int64))
                    self.state[b], self.returning[b] = "down", False
                    self.current[b]["returned_s"] = now
                    self.current[b] = None

    def result(self) -> dict[str, object]:
        return {"scaling": self.table(), "forecast": self.errors}
