"""A capacity plan's targets and assumptions: the `--slo FILE.toml` of `meridian plan`.

    days = 14                     # plan on the last 14 days of the data (demand x growth)
    warmup_days = 2               # simulated before those days so queues are not empty; not scored
    max_iterations = 6            # integer program -> simulation -> refine rounds
    scenario = "../scenarios/easy-backfill.toml"   # optional: the policies the check simulation
                                  # uses (path relative to this file); default FCFS + EASY backfill
                                  # + cheapest-tier placement
    [slo]                         # p95 queue-wait target per workload class, hours
    inference = 0.25
    batch = 4
    [capacity]
    flexible_classes = ["batch", "hpo", "training"]   # may wait (up to max_defer_hours) and run on spot
    max_defer_hours = 4           # default: the smallest SLO target of the flexible classes
    spot_max_share = 0.25         # spot GPUs at most this share of a pool's GPUs
    spot_efficiency = 0.9         # share of spot GPU-hours that become work (the rest is lost to interruptions)
    spot_interruptions_per_node_hour = 0.01   # the check simulation's spot reclamation rate
    keep_reserved = false         # true: today's reserved GPUs are a floor (commitments still running)
    headroom_step = 0.2           # a pool whose jobs miss an SLO gets this much more demand next round

Errors are `PlanError`s naming the file and the key.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from engine.core.errors import ScenarioError
from engine.core.toml_file import read_toml
from engine.scenario.spec import Scenario

DEFAULT_POLICIES = {"order": "fcfs", "backfill": "easy", "placement": "cheapest-tier"}
_TOP = {"days", "warmup_days", "max_iterations", "scenario", "slo", "capacity"}
_CAPACITY = {"flexible_classes", "max_defer_hours", "spot_max_share", "spot_efficiency",
             "spot_interruptions_per_node_hour", "keep_reserved", "headroom_step"}


class PlanError(ValueError):
    """A plan file or request that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class PlanSettings:
    """Targets (workload class -> p95 wait hours) and the planning assumptions (see the module docstring)."""

    slo_h: dict[str, float]
    days: float = 14.0
    warmup_days: float = 2.0
    max_iterations: int = 6
    scenario: Scenario = field(default_factory=lambda: default_scenario())
    flexible_classes: tuple[str, ...] = ("batch", "hpo", "training")
    max_defer_hours: int | None = None
    spot_max_share: float = 0.25
    spot_efficiency: float = 0.9
    spot_interruptions_per_node_hour: float = 0.01
    keep_reserved: bool = False
    headroom_step: float = 0.2

    @property
    def defer_hours(self) -> int:
        """Hours deferrable work may wait in the integer program: max_defer_hours, else the smallest
        SLO target of the flexible classes (whole hours, at least 0), else 0."""
        if self.max_defer_hours is not None:
            return self.max_defer_hours
        targets = [self.slo_h[c] for c in self.flexible_classes if c in self.slo_h]
        return int(math.floor(min(targets))) if targets else 0


def default_scenario() -> Scenario:
    return Scenario.from_dict({"name": "plan check", "policies": {k: {"key": v} for k, v in DEFAULT_POLICIES.items()}})


def load_settings(path: str | Path) -> PlanSettings:
    """Read and validate a plan file."""
    path = Path(path)
    data = read_toml(path, "the plan file", PlanError)
    return settings_from_dict(data, str(path), path.parent)


def settings_from_dict(data: dict, source: str = "plan", folder: Path = Path(".")) -> PlanSettings:
    """Validate a plan dict (a parsed file, or the dashboard's form); `folder` resolves `scenario`."""
    _unknown(data, _TOP, source, "top-level key")
    slo = data.get("slo", {})
    _table(slo, source, "[slo]")
    targets = {str(k): _number(slo, k, source, "[slo]", low=0.0) for k in slo}
    if not targets:
        raise PlanError(f"{source}: [slo] needs at least one target, e.g. batch = 4 (p95 wait hours)")
    capacity = data.get("capacity", {})
    _table(capacity, source, "[capacity]")
    _unknown(capacity, _CAPACITY, source, "[capacity] key")
    values = {key: _number(capacity, key, source, "[capacity]", low, high)
              for key, low, high in (("spot_max_share", 0.0, 1.0), ("spot_efficiency", 0.01, 1.0),
                                     ("spot_interruptions_per_node_hour", 0.0, math.inf),
                                     ("headroom_step", 0.01, 10.0)) if key in capacity}
    if "max_defer_hours" in capacity:
        values["max_defer_hours"] = int(_number(capacity, "max_defer_hours", source, "[capacity]", 0, 168))
    if "keep_reserved" in capacity:
        if not isinstance(capacity["keep_reserved"], bool):
            raise PlanError(f"{source}: [capacity] keep_reserved must be true or false")
        values["keep_reserved"] = capacity["keep_reserved"]
    if "flexible_classes" in capacity:
        classes = capacity["flexible_classes"]
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise PlanError(f"{source}: [capacity] flexible_classes must be a list of workload class names")
        values["flexible_classes"] = tuple(classes)
    for key, low, high in (("days", 0.5, 366.0), ("warmup_days", 0.0, 60.0)):
        if key in data:
            values[key] = _number(data, key, source, "top level", low, high)
    if "max_iterations" in data:
        values["max_iterations"] = int(_number(data, "max_iterations", source, "top level", 1, 50))
    if "scenario" in data:
        try:
            values["scenario"] = Scenario.load(folder / str(data["scenario"]))
        except ScenarioError as exc:
            raise PlanError(f"{source}: scenario: {exc}") from None
    return PlanSettings(slo_h=targets, **values)


def _table(value, source: str, what: str) -> None:
    if not isinstance(value, dict):
        raise PlanError(f"{source}: {what} must be a table")


def _unknown(table: dict, valid: set, source: str, what: str) -> None:
    _table(table, source, "the plan")
    extra = sorted(set(table) - valid)
    if extra:
        raise PlanError(f"{source}: unknown {what} {', '.join(extra)}; valid: {', '.join(sorted(valid))}")


def _number(table: dict, key: str, source: str, where: str, low: float = -math.inf, high: float = math.inf) -> float:
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        bounds = f"between {low:g} and {high:g}" if high < math.inf else f"at least {low:g}"
        raise PlanError(f"{source}: {where} {key} must be a number {bounds}, got {value!r}")
    return float(value)
