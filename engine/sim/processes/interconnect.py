"""The interconnect's pace: a multi-node job whose nodes span racks or clusters runs slower
(engine.world.interconnect gives the model and its sources).

Attached only when the run's world has an enabled interconnect (a scenario's [interconnect]), so a
run without one is the same to the bit. At each start of a multi-node (gang) job the level of its
nodes' farthest pair (rack, cluster, region: the fleet's `rack` and `cluster` columns) sets its
slowdown s, and its remaining work w takes w * s seconds of running; an eviction after r seconds of
running keeps r / s seconds of work (engine.sim.cycle.sharing.Sharing.evict). The scheduler's
expectation of the job's end (its request, for backfilling's reservations) is not scaled: the
slowdown is the network's, not something the user asked for.

Result: `interconnect`, one row per start of a multi-node job: row (the job's position in jobs),
job_id, workload_class, region, start_s, nodes (how many), level (rack, cluster or region), slowdown,
extra_s (seconds of running the spread added to the work it had left), extra_gpu_hours (extra_s
times the GPUs it held).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.processes.base import WorldProcess
from engine.world.interconnect import CLUSTER, LEVELS, NODE, RACK, REGION, Interconnect

COLUMNS = ["row", "job_id", "workload_class", "region", "start_s", "nodes", "level", "slowdown", "extra_s",
           "extra_gpu_hours"]


class Links(WorldProcess):
    """Slowdowns of multi-node jobs by where their nodes are (see the module docstring)."""

    result_fields = ("interconnect",)

    def __init__(self, run, model: Interconnect) -> None:
        self.run, self.model = run, model
        cluster_of = dict(zip(run.w.fleet["node"].astype(str), _clusters(run.w.fleet)))
        self.cluster = {id(fleet): pd.factorize(np.array([cluster_of.get(n, "") for n in fleet.name_list],
                                                         dtype=object))[0]
                        for fleet in run.regions.values()}
        classes, codes = np.unique(np.asarray(run.w.workload_class, dtype=object).astype(str), return_inverse=True)
        self.comm = np.array([model.comm_fraction(c) for c in classes])[codes].tolist()
        self.pace = [1.0] * len(run.w)  # the slowdown of each job's current (or last) piece of running
        self.records: list[tuple] = []

    @classmethod
    def attach(cls, run) -> "Links | None":
        model = run.world.interconnect if run.world is not None else None
        if model is None or not model.enabled:
            return None
        run.links = links = cls(run, model)
        return links

    def level(self, fleet, nodes) -> int:
        """The level of `nodes` of `fleet` (a RegionFleet): the farthest pair's."""
        if len(nodes) < 2:
            return NODE
        nodes = np.asarray(nodes, np.int64)
        clusters = self.cluster[id(fleet)][nodes]
        if (clusters != clusters[0]).any():
            return REGION
        racks = fleet.state.rack[nodes]
        return CLUSTER if (racks != racks[0]).any() else RACK

    def running_s(self, j: int, fleet, nodes, now: float, work_s: float) -> float:
        """Seconds job j, starting now on `nodes` with `work_s` of work left, takes to run (its work, at
        pace 1, on one node: most starts)."""
        if len(nodes) < 2:
            self.pace[j] = 1.0
            return work_s
        level = self.level(fleet, nodes)
        pace = self.pace[j] = self.model.slowdown(level, self.comm[j])
        if level != NODE:
            run = self.run
            extra = work_s * (pace - 1.0)
            self.records.append((j, run.region_name[j], now, len(nodes), level, pace, extra,
                                 extra * run.alloc_gpus[j] / 3600.0))
        return work_s * pace

    def work_s(self, j: int, running_s: float) -> float:
        """The work done by `running_s` seconds of job j's current piece of running."""
        return running_s / self.pace[j]

    def result(self) -> dict[str, object]:
        rows = list(zip(*self.records)) if self.records else [[]] * 8
        row = np.asarray(rows[0], np.int64)
        w = self.run.w
        frame = pd.DataFrame({
            "row": row, "job_id": w.job_id[row], "workload_class": np.asarray(w.workload_class, dtype=object)[row],
            "region": list(rows[1]), "start_s": np.asarray(rows[2], np.float64), "nodes": np.asarray(rows[3], np.int64),
            "level": [LEVELS[k] for k in rows[4]], "slowdown": np.asarray(rows[5], np.float64),
            "extra_s": np.asarray(rows[6], np.float64), "extra_gpu_hours": np.asarray(rows[7], np.float64)},
            columns=COLUMNS)
        return {"interconnect": frame}


def _clusters(fleet: pd.DataFrame) -> list[str]:
    """Each node's cluster ("" without the column or a value: one cluster per region)."""
    if "cluster" not in fleet:
        return [""] * len(fleet)
    return fleet["cluster"].astype(object).where(fleet["cluster"].notna(), "").astype(str).tolist()
