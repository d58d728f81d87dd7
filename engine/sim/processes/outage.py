"""Region outages (disaster recovery): a region's whole fleet goes down for a while.

A scenario's [[outage]] entries name a region and a UTC time range. When an outage starts, every
job running in the region is evicted (checkpoint-aware, engine.sim.cycle.sharing) and the region stops
scheduling until the outage ends. With a router (any routing policy but home-only), the region's
waiting and evicted jobs are routed again at once and new arrivals are routed as if the region's
fleet could not hold them, so critical work moves to the other regions its data may go to
(inflexible work too: the routing policies' fallback when home is not eligible); without one they
wait for the region to come back, as does a job that no region still up could hold
(engine.sim.processes.router). Overlapping outages of a region merge.
"""
from __future__ import annotations

from engine.scenario.world import Outage
from engine.sim.processes.base import WorldProcess

OUTAGE_START = 7
OUTAGE_END = 8




class Outages(WorldProcess):
    """The outages of one run: their events, and which regions are down now (`holds`)."""

    kinds = (OUTAGE_START, OUTAGE_END)
    cause = "[[outage]] entries"

    @classmethod
    def attach(cls, run) -> Outages | None:
        outages = tuple(run.world.outages) if run.world is not None else ()
        if not outages:
            return None
        run.sharing.evicts_regions()  # an outage evicts the region's running jobs
        return cls(run, outages)

    def __init__(self, run, outages: tuple[Outage, ...]) -> None:
        self.run = run
        self.depth = dict.fromkeys(run.regions, 0)  # outages in progress per region
        origin = run.w.origin_utc
        for outage in outages:
            if outage.region not in run.regions:
                continue
            r = run.region_index[outage.region]
            start = max((outage.start_utc - origin).total_seconds(), 0.0)
            end = (outage.end_utc - origin).total_seconds()
            if end > start:
                run.events.push(start, OUTAGE_START, r)
                run.events.push(end, OUTAGE_END, r)

    def holds(self, region: str) -> bool:
        return self.depth[region] > 0

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        return self.start(payload, now) if kind == OUTAGE_START else [self.end(payload)]

    def start(self, r: int, now: float) -> list[str]:
        """Region r goes down: evict its running jobs and route its waiting ones away (with a
        router); returns the regions whose queues changed, the region first, then in the order its
        jobs moved there (a list, not a set: the passes run in this order, whatever the hash seed)."""
        run = self.run
        region = list(run.regions)[r]
        self.depth[region] += 1
        if self.depth[region] > 1:
            return [region]
        region_name = run.region_name
        for j in sorted(j for j in run.pods if region_name[j] == region):
            run.sharing.evict(j, now)
        moved = {region: True}
        if run.router is not None:
            for j in run.waiting_in(region):
                moved[run.reroute(j, region, now)] = True
        return list(moved)

    def end(self, r: int) -> str:
        region = list(self.run.regions)[r]
        self.depth[region] -= 1
        self.run.freed[region] = True
        return region
