"""A run's work budget: a scenario that would make the simulator run without end, or fill the memory,
ends with a clear error naming what in it caused the work.

The loop counts its event batches (one per distinct event time); a run may take at most
`BATCHES_PER_JOB` per job of its workload plus `FLOOR` (a month at a one-minute timer, say). A normal
run takes 2-6 per job (arrival, finish, a few timer passes or interruptions); a scenario over its
budget is one whose events do not come from its jobs: a timer of a second over months, spot
interruptions every second on every node. When the budget is spent, the loop counts the kinds of
its next `CENSUS` batches and raises `WorkBudgetExceeded` naming the cause of the commonest kind
(a world process's `cause`, or the loop's own below). The count costs one addition per batch.
"""
from __future__ import annotations

from collections import Counter

from engine.core.errors import ScenarioError
from engine.sim.state.events import ARRIVAL, DEFERRED, FAILURE, FINISH, REPASS

BATCHES_PER_JOB = 50
FLOOR = 50_000
CENSUS = 2_000
LOOP_CAUSES = {FINISH: "the jobs themselves ([workload] growth and load_scale)", FAILURE: "the jobs themselves "
               "([workload] growth and load_scale)", ARRIVAL: "the jobs themselves ([workload] growth and load_scale)",
               DEFERRED: "held-back arrivals (the timing policy, or data transfers: [data] transfer_gbps)",
               REPASS: "re-passes after evictions (the preemption policy)"}


class WorkBudgetExceeded(ScenarioError):
    """A run stopped at its work budget; the message names the cause."""


def budget(jobs: int) -> int:
    """Event batches a run of `jobs` jobs may take."""
    return BATCHES_PER_JOB * jobs + FLOOR


def overrun(name: str, jobs: int, now_s: float, census: Counter, processes) -> WorkBudgetExceeded:
    """The error for a run past its budget at simulated time `now_s`, from the kinds of its last batches."""
    causes = {kind: cls.cause for cls in processes for kind in cls.kinds if cls.cause}
    kind, seen = census.most_common(1)[0] if census else (ARRIVAL, 0)
    cause = causes.get(kind) or LOOP_CAUSES.get(kind, f"events of kind {kind}")
    return WorkBudgetExceeded(
        f"{name}: the simulation stopped after {budget(jobs):,} event batches ({BATCHES_PER_JOB} per job of its "
        f"{jobs:,} jobs, plus {FLOOR:,}) at {now_s / 86400:,.1f} simulated days; {seen:,} of its last "
        f"{sum(census.values()):,} batches came from {cause}: make that less frequent")
