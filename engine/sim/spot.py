"""Spot reclamation: the cloud takes spot nodes back at random, evicting what runs on them.

Every node of tier "spot" is interrupted as a Poisson process: the time to its next interruption
is exponential with rate `interruptions_per_node_hour` (or its region's rate from `region_rate`),
drawn from a generator seeded with the scenario's seed, so a run is reproducible. An interruption
evicts every job on the node (checkpoint-aware, like any eviction: engine.sim.sharing), and a
replacement node is there at once (the fleet's size does not change). A job interrupted
`fallback_after` times (0: never) falls back to on-demand: from then on it is kept off spot nodes. Interruptions stop being
drawn once no job is running, waiting or still to arrive.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.sim.events import SPOT

HOUR_S = 3600.0


@dataclass(frozen=True)
class SpotModel:
    """interruptions_per_node_hour: the rate of every spot node (0: no interruptions);
    region_rate: region -> rate, overriding it; fallback_after: interruptions after which a job
    keeps off spot nodes (0: never)."""

    interruptions_per_node_hour: float = 0.0
    region_rate: dict = field(default_factory=dict)
    fallback_after: int = 0

    @property
    def enabled(self) -> bool:
        return self.interruptions_per_node_hour > 0 or any(r > 0 for r in self.region_rate.values())


class SpotReclaimer:
    """Draws the spot nodes' interruptions of one run and evicts their jobs."""

    def __init__(self, run, model: SpotModel, seed: int) -> None:
        self.run, self.rng = run, np.random.default_rng([seed, 0x5B07])
        self.fallback_after = model.fallback_after
        self.nodes: list[tuple[str, int, float]] = []  # (region, node index, rate per s)
        for region, fleet in run.regions.items():
            tiers = run.w.fleet.loc[run.w.fleet["region"] == region, "tier"] if "tier" in run.w.fleet else ()
            rate = float(model.region_rate.get(region, model.interruptions_per_node_hour)) / HOUR_S
            if rate > 0:
                self.nodes += [(region, int(n), rate) for n in np.flatnonzero(np.asarray(tiers) == "spot")]
        self.interruptions = np.zeros(len(run.w), np.int64)
        for i in range(len(self.nodes)):
            self._next(i, 0.0)

    def _next(self, i: int, now: float) -> None:
        self.run.events.push(now + float(self.rng.exponential(1.0 / self.nodes[i][2])), SPOT, i)

    def interrupt(self, i: int, now: float) -> str:
        """Evict the jobs on spot node i now and draw its next interruption; returns its region."""
        run = self.run
        region, node, _ = self.nodes[i]
        sharing = run.sharing
        for j in sorted(sharing.planner.occupants[region][node]):
            self.interruptions[j] += 1
            if self.fallback_after and self.interruptions[j] >= self.fallback_after:
                run.spot_ok[j] = False
            sharing.evict(j, now)
        events = run.events
        if len(events) > events.spot_pending or run.pods or any(q.count for q in run.queues.values()) \
                or any(sharing.vip.values()):
            self._next(i, now)
        return region
