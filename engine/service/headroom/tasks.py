"""One headroom search, as a worker runs it: `run_search(task, jobs, fleet, world_tables)`.

- kind "demand": x is the demand scale. The scenario's jobs are resampled to x times as many
  (engine.scenario.demand, by the task's seed: the scenario's `growth` multiplied by x) and replayed
  on its fleet; the answer is the load headroom, the largest x that holds the level.
- kind "fleet": x is the reciprocal of a fleet factor f = 1 / x. Every (region, GPU type, tier) pool
  of the scenario's fleet keeps f x its nodes, rounded to whole nodes (engine.scenario.edits.
  scaled_fleet_edits), and the dataset's demand as it is is replayed on it; the answer 1 / x is the
  smallest fleet factor that holds the level (above 1 when the scenario needs more than today's
  fleet). Fleet factors that give the same nodes are simulated once.
Every point is a full simulation of the scenario's window checked against the service level
(engine.service.headroom.service), in the code path of every other run (Scenario.run).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import pandas as pd

from engine.scenario.edits import scaled_fleet_edits
from engine.scenario.spec import Scenario
from engine.service.headroom.search import Point, Search, largest_passing
from engine.service.headroom.service import ServiceLevel
from engine.service.run import run_scenario
from engine.service.sweep.outcome import error_line, worker_id
from engine.world.facts import World

DEMAND, FLEET = "demand", "fleet"


@dataclass(frozen=True)
class SearchTask:
    """One search: `scenario` (already windowed) under `level`, resampled by `seed` (kind "demand")."""

    index: int
    kind: str
    scenario: Scenario
    seed: int
    level: ServiceLevel
    tolerance: float


@dataclass(frozen=True)
class SearchOutcome:
    """A finished search (or its one-line error), with the fleet GPUs at each point of a fleet search."""

    index: int
    kind: str
    scenario: str
    seed: int
    search: Search | None
    error: str | None = None
    gpus: dict = field(default_factory=dict)   # fleet search: x -> GPUs of the fleet at that point
    elapsed_s: float = 0.0
    worker: str = ""

    def record(self) -> dict:
        """This outcome as plain JSON values (engine.service.headroom.ledger stores it)."""
        search = None if self.search is None else {
            "value": self.search.value, "points": [[p.x, p.held, p.worst] for p in self.search.points],
            "monotone": self.search.monotone, "bounded": self.search.bounded}
        return {"index": self.index, "kind": self.kind, "scenario": self.scenario, "seed": self.seed,
                "search": search, "error": self.error, "gpus": [[x, g] for x, g in self.gpus.items()],
                "elapsed_s": self.elapsed_s, "worker": self.worker}

    @classmethod
    def from_record(cls, record: dict) -> SearchOutcome:
        """The outcome `record()` gave, equal to the original."""
        found = record["search"]
        search = None if found is None else Search(
            float(found["value"]), tuple(Point(float(x), bool(held), str(worst)) for x, held, worst in found["points"]),
            bool(found["monotone"]), bool(found["bounded"]))
        return cls(int(record["index"]), str(record["kind"]), str(record["scenario"]), int(record["seed"]), search,
                   record["error"], {float(x): float(g) for x, g in record["gpus"]}, float(record["elapsed_s"]),
                   str(record["worker"]))


def run_search(task: SearchTask, jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict) -> SearchOutcome:
    """The worker's function (engine.service.sweep.backends): the search of `task` over the dataset's tables."""
    started = time.perf_counter()
    world = World(world_tables["regions"], world_tables["prices"], world_tables["carbon"],
                  teams=world_tables.get("teams"))
    gpus: dict[float, float] = {}
    if task.kind == DEMAND:
        def holds(x: float) -> Point:
            scenario = replace(task.scenario, growth=task.scenario.growth * x, seed=task.seed)
            check = task.level.check(run_scenario(scenario, jobs, fleet, world))
            return Point(x, check.met, check.worst())
    else:
        base = task.scenario.apply(jobs.iloc[:0], fleet)[1]
        seen: dict[tuple, Point] = {}

        def holds(x: float) -> Point:
            edits = task.scenario.fleet_edits + scaled_fleet_edits(base, 1.0 / x)
            scenario = replace(task.scenario, fleet_edits=edits)
            gpus[x] = float(scenario.apply(jobs.iloc[:0], fleet)[1]["gpus"].sum())
            if edits not in seen:
                check = task.level.check(run_scenario(scenario, jobs, fleet, world))
                seen[edits] = Point(x, check.met, check.worst())
            return replace(seen[edits], x=x)
    try:
        search = largest_passing(holds, task.tolerance)
    except Exception as exc:  # noqa: BLE001 - a scenario that cannot run: reported, the other searches go on
        return failed_search(task, error_line(exc))
    return SearchOutcome(task.index, task.kind, task.scenario.name, task.seed, search, None, gpus,
                         time.perf_counter() - started, worker_id())


def failed_search(task: SearchTask, message: str) -> SearchOutcome:
    """The outcome of a search that raised or whose worker died."""
    return SearchOutcome(task.index, task.kind, task.scenario.name, task.seed, None, message, worker=worker_id())
