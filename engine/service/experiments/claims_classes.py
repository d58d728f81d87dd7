"""The classification claim ("workload classification improves resource matching by 45 %") measured on
a dataset with workload classes: FIFO scheduling the jobs without their classes (every job in the
standard queue) against FIFO scheduling them with the classes the workload classifier infers
(engine.predict.classify.held_out_classes: each job classified by a user-grouped fold that never saw
its user, so no job's own label informs its class), both judged by the recorded labels with the
resource-matching KPI (engine.analysis.runs.matching: the share of GPU-hours on a GPU type and in a
queue fit for the job's true class). The change is relative: matched with inferred classes / matched
without classes - 1. The classifier's accuracy on the same predictions is reported beside it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.analysis.runs.matching import matching_kpis
from engine.predict.classify import held_out_classes
from engine.predict.features import zones_of
from engine.scenario.spec import Scenario
from engine.service.compare import run_one, world_of

UNKNOWN = "unknown"


@dataclass(frozen=True)
class MatchingGain:
    """Resource matching without classes and with inferred ones (0-1), and the classifier's accuracy."""

    without: float
    inferred: float
    accuracy: float

    @property
    def gain(self) -> float:
        return self.inferred / self.without - 1 if self.without > 0 else np.nan


def matching_gain(fifo: Scenario, jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict) -> MatchingGain:
    """FIFO (`fifo`, already windowed) on `jobs` without classes and with held-out inferred classes.
    Raises ValueError when the jobs carry no class labels to judge by."""
    labels = jobs["workload_class"].astype(object).fillna(UNKNOWN).to_numpy() if "workload_class" in jobs else None
    if labels is None or not (labels != UNKNOWN).any():
        raise ValueError("the jobs carry no workload classes to judge resource matching by")
    inferred = held_out_classes(jobs, zones_of(world_tables.get("regions")))
    known = labels != UNKNOWN
    accuracy = float((inferred[known] == labels[known]).mean())
    truth = pd.Series(labels, index=jobs["job_id"].to_numpy())
    world = world_of(world_tables)
    shares = []
    for classes in (UNKNOWN, inferred):
        run = run_one(fifo, jobs.assign(workload_class=classes), fleet, world, strand=False)
        shares.append(matching_kpis(run.result, run.fleet, truth).get("resource_matching", np.nan))
    return MatchingGain(shares[0], shares[1], accuracy)
