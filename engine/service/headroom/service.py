"""The service level a headroom search holds: a p95 wait per workload class, and the production
inference guarantee.

By default the level is what the baseline achieves on the dataset as it is (scale 1): each class's
p95 wait (censored, engine.analysis.runs.slo: a job that never starts waits until the run's end; one whose
user gave up, until it left), never below FLOOR_H (a class the baseline serves at once, such as
production inference at p95 0 h, may wait up to 6 minutes), and the baseline's guaranteed-inference
misses (jobs of guaranteed queues that waited past their limit). From a file, the classes' targets
are its `[slo]` table in hours (the format `meridian plan` reads: other keys of a plan file are
allowed and ignored), and the misses stay the baseline's. A class without a target is not held.
A run holds the level when every class with a target has p95 <= target and the misses do not
exceed the baseline's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from engine.analysis.runs.fairness import fairness_kpis
from engine.analysis.runs.slo import class_waits
from engine.core.text import hours
from engine.core.toml_file import read_toml
from engine.sim.output.result import SimulationResult

FLOOR_H = 0.1


class ServiceLevelError(ValueError):
    """A service-level file that cannot be used (the message names the file and the key)."""


@dataclass(frozen=True)
class ServiceLevel:
    """Targets: workload class -> p95 wait (hours), and the guaranteed-inference misses allowed."""

    p95_wait_h: dict[str, float]
    max_guarantee_misses: int
    source: str = "the baseline at scale 1"
    measured_h: dict[str, float] = field(default_factory=dict)  # the baseline's own p95s, before the floor

    def check(self, result: SimulationResult) -> "Check":
        """The run's p95 wait per class with a target, and its misses, against the level."""
        waits = class_waits(result)
        measured = dict(zip(waits["workload_class"], waits["wait_p95_s"] / 3600.0))
        rows = [{"workload_class": c, "target_p95_h": t, "p95_h": float(measured.get(c, 0.0)),
                 "met": float(measured.get(c, 0.0)) <= t + 1e-9} for c, t in sorted(self.p95_wait_h.items())]
        misses = int(fairness_kpis(result)["inference_guarantee_violations"])
        return Check(pd.DataFrame(rows, columns=["workload_class", "target_p95_h", "p95_h", "met"]), misses,
                     self.max_guarantee_misses)

    def describe(self) -> str:
        """The level in words: its targets and where they come from."""
        targets = ", ".join(f"{c} {hours(t * 3600)}" for c, t in sorted(self.p95_wait_h.items()))
        return (f"p95 wait at most {targets} (every job counted: one that never started waits until its "
                f"user gave up or the run ended); at most {self.max_guarantee_misses:,} guaranteed-inference "
                f"misses ({self.source})")


@dataclass(frozen=True)
class Check:
    """One run against a service level."""

    classes: pd.DataFrame  # workload_class, target_p95_h, p95_h, met
    misses: int
    max_misses: int

    @property
    def met(self) -> bool:
        return bool(self.classes["met"].all()) and self.misses <= self.max_misses

    def worst(self) -> str:
        """The class furthest over its target (relative), or "misses", or "" when met."""
        over = self.classes.assign(ratio=self.classes["p95_h"] / self.classes["target_p95_h"].clip(lower=1e-9))
        over = over[~over["met"]]
        if len(over):
            return str(over.sort_values("ratio", ascending=False, kind="stable")["workload_class"].iloc[0])
        return "guaranteed-inference misses" if self.misses > self.max_misses else ""


def from_baseline(result: SimulationResult, floor_h: float = FLOOR_H) -> ServiceLevel:
    """The level the baseline's run achieves (see the module docstring)."""
    waits = class_waits(result)
    measured = {str(c): float(p) / 3600.0 for c, p in zip(waits["workload_class"], waits["wait_p95_s"])}
    misses = int(fairness_kpis(result)["inference_guarantee_violations"])
    return ServiceLevel({c: max(p, floor_h) for c, p in measured.items()}, misses,
                        f"what {result.scenario} achieves at scale 1", measured)


def from_file(path: str | Path, baseline: SimulationResult) -> ServiceLevel:
    """The `[slo]` targets of a file (hours per class), the misses of the baseline's run."""
    path = Path(path)
    data = read_toml(path, "the service-level file", ServiceLevelError)
    slo = data.get("slo")
    if not isinstance(slo, dict) or not slo:
        raise ServiceLevelError(f"{path}: needs an [slo] table of p95 wait targets in hours, e.g. batch = 4")
    targets = {}
    for name, value in slo.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ServiceLevelError(f"{path}: [slo] {name} must be a number of hours >= 0, got {value!r}")
        targets[str(name)] = float(value)
    misses = int(fairness_kpis(baseline)["inference_guarantee_violations"])
    return ServiceLevel(targets, misses, f"the targets of {path.name}")

