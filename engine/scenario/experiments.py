"""A scenario's [experiments] table: automated experiments teams queue for their nights and weekends,
sized from the forecast idle capacity.

    [experiments]
    teams = ["llm-research", "vision"]  # required: teams of the dataset's teams table (its home_region
                                        # and working calendar say where and when)
    kinds = ["hpo", "batch"]            # what they queue: "hpo" (sweeps), "batch" (evaluation batches);
                                        # default ["hpo"]
    fill_share = 0.5                    # of the forecast idle GPU-hours in the teams' off-hours to fill
    gpus = 1                            # GPUs per experiment job (one node)
    duration_h = 2                      # hours each job runs
    weeks = 4                           # forecast each hour of the week from the last 4 weeks
    demand_quantile = 0.5               # ... their median demand (higher: less idle forecast, fewer jobs)
    sizing = "per-type"                 # "largest-type" (default): the region's most installed GPU type only;
                                        # "per-type": every GPU type of the region, each from its own forecast
    max_nodes = 4                       # multi-node batches of up to this many whole nodes where the idle
                                        # gap has room for 2+ nodes (default 1: single-node jobs only)

Semantics (engine.scenario.experiment_plan builds the jobs before the run; every number has a unit and
a range, the fields' metadata). A team's region is its teams-table `home_region`; its GPU types, with
`sizing = "largest-type"`, the type with the most GPUs installed there (ties: by name), with "per-type"
every type installed there (most GPUs first, then by name), each sized alone from its own forecast as
below (the gap, cap and jobs of a type; the run's table has a row per team and type). The idle forecast of hour h of the window ([workload]
start_utc to end_utc; without a start, `weeks` whole weeks after the data's first submit; without an end,
the last submit of the window's jobs) is idle(h) = max(0, GPUs of that type installed in the region -
forecast demand(h)), the demand (GPUs of that type its region's jobs ask for, waiting or running) forecast
by engine.predict.demand_forecast from the whole weeks of history before the window. An hour is off for a
team when its calendar (the teams table's time zone, working days and hours, holidays) has it off work at
the hour's start. The gap of a team is the sum over its off hours of idle(h) / n, n the scenario's teams
of its region (they share the region's idle GPUs); the team may fill cap(h) = fill_share x idle(h) / n
GPUs in each off hour. Walking the window's hours in order, at hour h whose ceil(duration_h) hours are all
off, with room = the least of cap - GPUs already planned over them: first, with `max_nodes` M >= 2, while
room holds 2 or more whole nodes of the type (g GPUs each: its first node's), a multi-node batch of
k = min(M, floor(room / g)) nodes (k x g GPUs) for `duration_h` hours; then floor(room / `gpus`) jobs
of `gpus` GPUs on one node (none when a node of the type holds fewer than `gpus`). Each job's submit is h plus a seeded offset of up to 5 minutes, its kind a seeded choice among `kinds`
(one RNG from the scenario's seed: the same scenario, the same jobs).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.core.bounds import bounded_field
from engine.core.errors import ScenarioError
from engine.scenario.checks import declared

KINDS = ("hpo", "batch")
SIZINGS = ("largest-type", "per-type")


@dataclass(frozen=True)
class ExperimentSettings:
    """The [experiments] table's numbers (the module docstring explains each); the fields' metadata gives
    their unit, range, help and label (the scenario builder draws its widgets from them)."""

    fill_share: float = bounded_field(0.5, "share", 0.0, 1.0, "of the forecast idle GPU-hours in the teams' off-hours",
                                      "Share of the idle gap to fill")
    gpus: int = bounded_field(1, "GPUs", 1, 64, "GPUs per experiment job (one node)", "GPUs per job")
    duration_h: float = bounded_field(2.0, "h", 0.25, 72.0, "hours each experiment job runs", "Hours per job")
    weeks: int = bounded_field(4, "weeks", 1, 52, "history weeks each hour of the week is forecast from",
                               "Forecast from the last")
    demand_quantile: float = bounded_field(0.5, "quantile", 0.0, 1.0, "of those weeks' demand at that hour (higher: "
                                           "less idle forecast)", "Demand quantile")
    max_nodes: int = bounded_field(1, "nodes", 1, 64, "whole nodes a multi-node batch may take where the idle gap "
                                   "has room for 2 or more (1: single-node jobs only)", "Nodes per batch, at most")


@dataclass(frozen=True)
class Experiments:
    """The [experiments] table: the teams, the kinds, and the numbers."""

    teams: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ("hpo",)
    settings: ExperimentSettings = field(default_factory=ExperimentSettings)
    sizing: str = "largest-type"

    @property
    def enabled(self) -> bool:
        return bool(self.teams)


def parse_experiments(table: object, source: str, load_scale: float = 1.0) -> Experiments:
    """The [experiments] table ({}: none); its forecast is in the recorded hours, so arrivals must be as
    recorded (`load_scale` 1)."""
    if not table:
        return Experiments()
    where = f"{source}: [experiments]"
    if load_scale != 1.0:
        raise ScenarioError(f"{where} forecasts the recorded hours; it cannot run with [workload] load_scale "
                            f"{load_scale:g} (use growth to add demand)")
    rest = dict(table) if isinstance(table, dict) else table
    teams, kinds = rest.pop("teams", None), rest.pop("kinds", ["hpo"])
    sizing = rest.pop("sizing", SIZINGS[0])
    settings = ExperimentSettings(**declared(rest, ExperimentSettings, source, "[experiments]"))
    if not isinstance(teams, list) or not teams or not all(isinstance(t, str) and t.strip() for t in teams):
        raise ScenarioError(f"{where} teams must be a list of one or more team names, got {teams!r}")
    if len(set(teams)) != len(teams):
        raise ScenarioError(f"{where} teams names a team twice: {teams!r}")
    if not isinstance(kinds, list) or not kinds or not all(k in KINDS for k in kinds):
        raise ScenarioError(f"{where} kinds must be a list of {' and '.join(repr(k) for k in KINDS)}, got {kinds!r}")
    if sizing not in SIZINGS:
        raise ScenarioError(f"{where} sizing {sizing!r} is unknown; choose from {', '.join(SIZINGS)}")
    return Experiments(tuple(teams), tuple(dict.fromkeys(kinds)), settings, sizing)
