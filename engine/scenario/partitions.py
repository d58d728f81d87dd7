"""The [partitions] table (engine.world.partitions.Partitions: MIG instances, time-slicing, MPS) and
what it changes in the jobs a run replays: under time-slicing or MPS the rule's jobs ask for one replica."""
from __future__ import annotations

from dataclasses import fields

import pandas as pd

from engine.core.errors import ScenarioError
from engine.core.fleet_view import MILLI
from engine.scenario.checks import declared, known_keys
from engine.world.mig import PROFILES
from engine.world.partitions import NONE, Partitions

CHOSEN = tuple(f for f in fields(Partitions) if "choices" in f.metadata)  # mode and the profiles


def parse_partitions(table: object, source: str) -> Partitions:
    """A [partitions] table as an enabled Partitions (`enabled = false` keeps it off): the mode and
    profiles among their choices, gpu_models a table of fleet model = MIG part, the rest by their
    declarations (engine.scenario.checks.declared)."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{source}: [partitions] must be a table, got {table!r}")
    known_keys(table, {f.name for f in fields(Partitions)}, source, "[partitions] key")
    rest, values = dict(table), {"enabled": True}
    for f in CHOSEN:
        if f.name in rest:
            value = rest.pop(f.name)
            if value not in f.metadata["choices"]:
                raise ScenarioError(f"{source}: [partitions] {f.name} must be one of "
                                    f"{', '.join(f.metadata['choices'])}, got {value!r}")
            values[f.name] = value
    models = rest.pop("gpu_models", {})
    if not isinstance(models, dict) or any(not isinstance(part, str) or part not in PROFILES for part in models.values()):
        raise ScenarioError(f"{source}: [partitions] gpu_models must map a fleet's GPU model to one of "
                            f"{', '.join(PROFILES)}, got {models!r}")
    values.update(declared(rest, _Declared, source, "[partitions]"))
    return Partitions(gpu_models=tuple(sorted((str(k), str(v)) for k, v in models.items())), **values)


class _Declared:
    """Partitions' fields that `declared` checks: the switches and numbers (not the choices, not gpu_models)."""

    __dataclass_fields__ = {f.name: f for f in fields(Partitions) if f not in CHOSEN and f.name != "gpu_models"}


def replica_requests(jobs: pd.DataFrame, settings: Partitions) -> pd.DataFrame:
    """`jobs` with the rule's jobs asking for one replica under time-slicing or MPS: a job of a class
    with a profile asking one GPU at most (more than 0) on one node asks for 1/replicas of a GPU
    (gpus 1/replicas, gpu_milli 1000 // replicas). The same table when the partitions are off or MIG."""
    if not settings.enabled or settings.mode == "mig" or not len(jobs):
        return jobs
    classes = jobs["workload_class"].astype(str) if "workload_class" in jobs else pd.Series("", index=jobs.index)
    nodes = jobs["nodes"].fillna(1) if "nodes" in jobs else pd.Series(1, index=jobs.index)
    gpus = jobs["gpus"].fillna(0)
    rule = classes.map(lambda c: settings.profile_of(c) != NONE) & (gpus > 0) & (gpus <= 1) & (nodes <= 1)
    if not rule.any():
        return jobs
    milli = jobs["gpu_milli"].astype(float) if "gpu_milli" in jobs else pd.Series(float("nan"), index=jobs.index)
    return jobs.assign(gpus=gpus.astype(float).where(~rule, 1.0 / settings.replicas),
                       gpu_milli=milli.where(~rule, float(MILLI // settings.replicas)))
