"""Spot reclamation: the cloud takes spot nodes back at random, evicting what runs on them.

Every node of tier "spot" is interrupted as a Poisson process whose rate, in interruptions per
node-hour, is `interruptions_per_node_hour` (or its region's from `region_rate`) times the factor
of the current local hour (0-23) in `hourly_factor` (or its region's 24 from
`region_hourly_factor`; all 1 by default: a constant rate). Local hours are wall-clock hours in the
region's time zone, the `timezone` column of the run's World regions table (UTC for a region it
lacks), through zoneinfo, so daylight-saving time moves them against UTC: on a spring-forward day
the skipped hour never occurs, on a fall-back day the repeated hour takes its factor twice. A
factor above 1 makes that hour riskier (say, the local business day when on-demand demand peaks),
a factor of 0 makes it safe.

The varying rate is drawn exactly by thinning: candidate interruptions come from a constant-rate
process at the region's peak rate (base rate x largest factor), and a candidate at local hour h is
kept with probability factor[h] / largest factor (a uniform draw; none for a candidate in an hour
at the peak, which is always kept). A factor of 0 therefore never keeps one. When a region's 24
factors are equal no candidate is ever dropped, so with all factors 1 the draws are those of the
constant-rate model: each interruption comes `rng.exponential(1 / rate)` seconds after the last.
Every draw comes from one generator seeded with the scenario's seed, in event order, so a run is
reproducible. An interruption evicts every job on the node (checkpoint-aware, like any eviction:
engine.sim.cycle.sharing), and a replacement node is there at once (the fleet's size does not change).
Only interruptible work runs on spot nodes at all: a job whose queue class does not allow spot
(engine.scenario.queues: guaranteed and non-checkpointing classes by default) is kept off them from
its submission, whether or not interruptions are drawn. A job interrupted `fallback_after` times
(0: never) falls back to on-demand: from then on it is kept off spot nodes too; when the region's other nodes could never hold it (a region of spot nodes
only, say), it leaves the queue recorded "never-fits". Interruptions stop being drawn once one
evicts nothing while no job is running and no other event is pending: the next would change
nothing either, and the run ends. A job that loses all its work to `FRUITLESS_MAX` interruptions in
a row (no checkpoint kept anything) would most likely never finish: the run stops with a
ScenarioError that names it, instead of running on without end.
"""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import numpy as np

from engine.core.errors import ScenarioError
from engine.scenario.spot import SpotModel
from engine.sim.processes.base import WorldProcess

SPOT = 6

HOUR_S = 3600.0
FRUITLESS_MAX = 1000  # interruptions in a row that keep none of a job's work before the run gives up




class HourlyClock:
    """The interruption process of one spot node of a region: `per_node_hour` x the factor of the
    local hour in time zone `zone` (an IANA name), run time t seconds being `origin_s` + t UTC
    epoch seconds. Needs per_node_hour > 0 and a factor > 0."""

    def __init__(self, per_node_hour: float, factors, zone: str, origin_s: float) -> None:
        self.rate_s = float(per_node_hour) / HOUR_S
        self.factors = tuple(float(f) for f in factors)
        self.peak = max(self.factors)
        self.flat = min(self.factors) == self.peak
        self.scale = 1.0 / (self.rate_s * self.peak)  # mean seconds between candidates
        self.zone = None if self.flat else ZoneInfo(zone)
        self.origin_s = origin_s

    def local_hour(self, t: float) -> int:
        """The local wall-clock hour (0-23) at run time t seconds."""
        return dt.datetime.fromtimestamp(self.origin_s + t, self.zone).hour

    def next_after(self, rng: np.random.Generator, now: float) -> float:
        """The run time of the node's next interruption after `now`, drawn from `rng`."""
        t = now + float(rng.exponential(self.scale))
        if self.flat:
            return t
        while True:
            factor = self.factors[self.local_hour(t)]
            if factor == self.peak or rng.random() * self.peak < factor:
                return t
            t += float(rng.exponential(self.scale))


def region_zones(world) -> dict[str, str]:
    """region -> IANA time zone from the world's regions table ({} without one or without a world)."""
    regions = getattr(world, "regions", None)
    if regions is None or not len(regions) or "timezone" not in regions:
        return {}
    known = regions.dropna(subset=["region", "timezone"])
    return dict(zip(known["region"].astype(str), known["timezone"].astype(str)))


class SpotReclaimer(WorldProcess):
    """Draws the spot nodes' interruptions of one run and evicts their jobs."""

    kinds = background = (SPOT,)
    cause = "[spot] interruptions_per_node_hour (and region_rate, hourly_factor)"
    job_columns = {"spot_interruptions": np.int64}

    @classmethod
    def attach(cls, run) -> SpotReclaimer | None:
        model = run.sharing_setup.spot
        if not model.enabled:
            return None
        run.sharing.need_planner()  # an interruption evicts the node's jobs
        return cls(run, model, run.seed)

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        return [self.interrupt(payload, now)]

    def columns(self) -> dict[str, np.ndarray]:
        return {"spot_interruptions": self.interruptions}

    def __init__(self, run, model: SpotModel, seed: int) -> None:
        self.run, self.rng, self.model = run, np.random.default_rng([seed, 0x5B07]), model
        self.fallback_after = model.fallback_after
        zones, origin_s = region_zones(run.world), run.w.origin_utc.value / 1e9
        self.nodes: list[tuple[str, int, HourlyClock]] = []  # (region, node index, its clock)
        for region in run.regions:
            tiers = run.w.fleet.loc[run.w.fleet["region"] == region, "tier"] if "tier" in run.w.fleet else ()
            rate, factors = model.rate(region), model.factors(region)
            if rate > 0 and max(factors) > 0:
                clock = HourlyClock(rate, factors, zones.get(region, "UTC"), origin_s)
                self.nodes += [(region, int(n), clock) for n in np.flatnonzero(np.asarray(tiers) == "spot")]
        self.interruptions = np.zeros(len(run.w), np.int64)
        self.fruitless = [0] * len(run.w)  # interruptions in a row that kept none of the job's work
        for i in range(len(self.nodes)):
            self._next(i, 0.0)

    def _unending(self, j: int, region: str) -> str:
        run = self.run
        every = run.sharing.checkpoint[j]
        saving = f"checkpoints every {every / 60:g} min" if every > 0 else "no checkpoints in its queue"
        return (f"spot interruptions: job {run.w.job_id[j]} in {region} lost all its work {FRUITLESS_MAX:,} times "
                f"in a row ({self.model.rate(region):g} interruptions per spot node-hour, {saving}, "
                f"{run.remaining[j] / 3600:.2f} h of work to do): the run would not end. Lower the rate, "
                "give its queue checkpoints, or set fallback_after.")

    def _fits_off_spot(self, j: int, fleet) -> bool:
        """Whether job j fits the region's nodes other than spot ones when they are empty."""
        run = self.run
        big = fleet.big_enough(run.num_gpu[j], run.cpu_milli[j], run.memory_mib[j], run.pool_list[j], False)
        return np.count_nonzero(big) >= run.width[j]

    def _next(self, i: int, now: float) -> None:
        self.run.events.push(self.nodes[i][2].next_after(self.rng, now), SPOT, i)

    def interrupt(self, i: int, now: float) -> str:
        """Evict the jobs on spot node i now and draw its next interruption; returns its region."""
        run = self.run
        region, node, _ = self.nodes[i]
        sharing = run.sharing
        evicted = sorted(sharing.planner.occupants[region][node])
        for j in evicted:
            self.interruptions[j] += 1
            if self.fallback_after and self.interruptions[j] >= self.fallback_after:
                run.spot_ok[j] = False
                if run.clusters is not None:
                    run.clusters.reshape(j)
            kept = sharing.evict(j, now, requeue=run.spot_ok[j] or self._fits_off_spot(j, run.regions[region]))
            self.fruitless[j] = 0 if kept > 0 else self.fruitless[j] + 1
            if self.fruitless[j] >= FRUITLESS_MAX:
                raise ScenarioError(self._unending(j, region))
        events = run.events
        if len(events) > events.background_pending or run.pods or evicted:
            self._next(i, now)
        return region
