"""Resource matching: the share of GPU-hours that ran on a GPU type and in a queue fit for the job's class.

The measure the source document's claim ("classification improves resource matching by 45 %") needs.
`FIT` is the definition, one row per workload class (the sample's labels): the GPU types fit for it
and the queue classes (engine.scenario.queues.DEFAULT_QUEUES' names) fit for it.

| class | fit GPU types | fit queues | why |
|---|---|---|---|
| training | H100, A100 | standard, batch | multi-GPU gangs: NVLink/NVSwitch and HBM bandwidth, which H100 and A100 have and L4 (PCIe, 24 GB GDDR6) lacks; checkpointed, not guaranteed capacity |
| inference | L4, A100 | reserved, express | NVIDIA positions L4 for inference (72 W); A100 for larger models; served from guaranteed or low-latency queues |
| development | L4, A100 | express | notebooks of one GPU or less, mostly idle: the cheapest type; interactive queue |
| batch | A100, L4 | batch, standard, preemptible | single-node jobs with hours of slack: no need for H100; deferrable queues |
| hpo | A100, L4 | preemptible, batch | short one-GPU trials, many stopped early: cheap types, preemptible queues |

The KPIs (group "matching" of engine.analysis.runs.catalogue), over the GPU-hours held inside the
measurement window (engine.analysis.runs.held.holding, each piece of running on the GPU type of its
nodes: the fleet's, or a rented burst node's) by jobs of a class in `FIT`:
  resource_matching   share on a fit GPU type and in a fit queue (0-1)
  gpu_type_matching   share on a fit GPU type (0-1)
  queue_matching      share in a fit queue (0-1)
A run with no such GPU-hours (an SWF log's jobs are all of class "unknown") has none of these keys.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs import burst
from engine.analysis.runs.held import holding, horizon_s
from engine.sim.output.result import SimulationResult

FIT: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "training": (("H100", "A100"), ("standard", "batch")),
    "inference": (("L4", "A100"), ("reserved", "express")),
    "development": (("L4", "A100"), ("express",)),
    "batch": (("A100", "L4"), ("batch", "standard", "preemptible")),
    "hpo": (("A100", "L4"), ("preemptible", "batch")),
}
KPI_KEYS = ("resource_matching", "gpu_type_matching", "queue_matching")


def matched(result: SimulationResult, fleet: pd.DataFrame, truth: pd.Series | None = None) -> pd.DataFrame:
    """One row per piece of running of a job of a class in FIT: workload_class, gpu_type, queue,
    gpu_hours (inside the window), type_fit, queue_fit, fit (both). `truth` (class by job_id) judges
    the fit by other classes than those the run carried: a run scheduled on inferred classes is
    measured against the labels (default: the run's own workload_class)."""
    pieces = holding(result, horizon_s(result))
    if truth is not None:
        pieces = pieces.assign(workload_class=pieces["job_id"].map(truth).fillna("unknown").to_numpy(dtype=object))
    pieces = pieces[pieces["workload_class"].isin(list(FIT))]
    node_type = dict(zip(fleet["node"].astype(str), fleet["gpu_type"].astype(str)))
    rented = burst.rentals(result)
    if rented is not None and len(rented):
        node_type.update(zip(rented["node"].astype(str), rented["gpu_type"].astype(str)))
    first_node = pieces["nodes"].astype(str).str.split(";").str[0]
    gpu_type = first_node.map(node_type).fillna("").to_numpy(dtype=object)
    queue = result.jobs["queue"].astype(str).to_numpy(dtype=object)[pieces["row"].to_numpy(np.int64)] \
        if "queue" in result.jobs else np.full(len(pieces), "", dtype=object)
    classes = pieces["workload_class"].to_numpy(dtype=object)
    type_fit = np.array([t in FIT[c][0] for c, t in zip(classes, gpu_type)], dtype=bool)
    queue_fit = np.array([q in FIT[c][1] for c, q in zip(classes, queue)], dtype=bool)
    return pd.DataFrame({"workload_class": classes, "gpu_type": gpu_type, "queue": queue,
                         "gpu_hours": pieces["gpu_s"].to_numpy(np.float64) / 3600.0,
                         "type_fit": type_fit, "queue_fit": queue_fit, "fit": type_fit & queue_fit})


def matching_kpis(result: SimulationResult, fleet: pd.DataFrame, truth: pd.Series | None = None) -> dict[str, float]:
    """KPI_KEYS of `result` run on `fleet` (the fleet the scenario ran on), judged by `truth` (see
    `matched`); {} without classed GPU-hours."""
    table = matched(result, fleet, truth)
    total = float(table["gpu_hours"].sum())
    if not total > 0:
        return {}
    hours = table["gpu_hours"].to_numpy(np.float64)
    return {"resource_matching": float(hours[table["fit"].to_numpy()].sum() / total),
            "gpu_type_matching": float(hours[table["type_fit"].to_numpy()].sum() / total),
            "queue_matching": float(hours[table["queue_fit"].to_numpy()].sum() / total)}


def by_class(result: SimulationResult, fleet: pd.DataFrame) -> pd.DataFrame:
    """Per class of FIT (in its order): gpu_hours, resource_matching, gpu_type_matching, queue_matching."""
    table = matched(result, fleet)
    rows = []
    for name in FIT:
        mine = table[table["workload_class"] == name]
        total = float(mine["gpu_hours"].sum())
        share = (lambda column: float(mine.loc[mine[column], "gpu_hours"].sum() / total) if total > 0 else np.nan)
        rows.append({"workload_class": name, "gpu_hours": total, "resource_matching": share("fit"),
                     "gpu_type_matching": share("type_fit"), "queue_matching": share("queue_fit")})
    return pd.DataFrame(rows)
