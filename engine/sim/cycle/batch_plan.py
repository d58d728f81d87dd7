"""Batch placement in a scheduling pass (steps 3b and 3c of the loop, engine.sim.simulator).

A placement policy with the `batch` trait (engine.policies.placement_batch) places the pass's batch
together: at the start of each pass where something may start (resources were freed or jobs
arrived since the last) the loop hands it the first `batch_pods` single-node jobs of the ordered queue (their pod requests, in order) and whether a gang job waits ahead of or among them;
the plan it returns is kept for the pass. When a job of the batch is tried (in order, or as a
backfill candidate) it takes its planned placement if that still fits the fleet now (an earlier gang
job, a preemption or a job outside the batch may have taken the room); otherwise, and for jobs
outside the batch, the policy's `choose` is asked as for any placement policy. The plan is dropped
at the end of the region's passes. Policies without the trait never reach this module.
"""
from __future__ import annotations

from engine.core.fleet_view import FleetView, Placement, PodRequest, fits_on


class BatchPlan:
    """The current pass's planned placements, by job."""

    def __init__(self, run) -> None:
        self.run = run
        traits = getattr(type(run.p.placement), "traits", None)  # a hand-made stand-in has none: not batch
        self.on = bool(traits is not None and traits.batch)
        self.planned: dict[int, Placement] = {}

    def plan(self, fleet, jobs) -> None:
        """Plan the batch at the front of `jobs` (the pass's ordered queue, an iterable of job indices)."""
        run, policy = self.run, self.run.p.placement
        batch, gang_waiting = [], False
        for j in jobs:
            if run.width[j] > 1:
                gang_waiting = True
            else:
                batch.append(j)
                if len(batch) == policy.batch_pods:
                    break
        requests = [run.request_of(j) for j in batch]
        placements = policy.plan(fleet.view, requests, run.rng, gang_waiting)
        self.planned = {j: p for j, p in zip(batch, placements) if p is not None}

    def take(self, j: int, view: FleetView, request: PodRequest) -> Placement | None:
        """Job j's planned placement if it has one that fits now (None: ask the policy's `choose`)."""
        placement = self.planned.pop(j, None)
        if placement is None or not fits_on(view, request, placement.node):
            return None
        free = view.gpu_free[placement.node]
        return placement if all(free[g] >= placement.gpu_milli for g in placement.gpus) else None

    def clear(self) -> None:
        self.planned = {}
