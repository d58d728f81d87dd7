"""The exact batch placement ("placement" family, trait `batch`): a pass's batch as an integer program
solved by HiGHS through scipy.optimize.milp (Huangfu and Hall, Math. Prog. Comp. 2018).

Maximise the GPU milli of the batch placed (a CPU-only pod counts 1; the cost of
engine.policies.placement_batch without its shape terms) subject to the fleet's room, GPU by GPU:
    x[i, n] = 1: pod i on node n (n among the nodes it fits on at the start), sum_n x[i, n] <= 1;
    CPU and memory of each node: sum_i cpu_i x[i, n] <= free;
    a pod sharing GPUs (gpu_milli < 1000): y[i, n, g] = 1 takes gpu_milli of GPU g (one with that
    much free), sum_g y[i, n, g] = num_gpu_i x[i, n];
    pods of whole GPUs: u[n, g] = 1 takes idle GPU g whole, sum_g u[n, g] = sum_i num_gpu_i x[i, n],
    u[n, g] >= u[n, g'] for idle GPUs g < g' (idle GPUs are alike: the lowest are taken first);
    each GPU: sum_i gpu_milli_i y[i, n, g] + 1000 u[n, g] <= its free milli.
When the program would have more than max_variables variables the pass is planned greedily instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from engine.core.fleet_view import MILLI, FleetView, Placement, PodRequest
from engine.policies.placement_batch import BatchFleet, greedy
from engine.policies.placement_search import BatchBase
from engine.policies.registry import register


@register("placement", "exact", batch=True)
@dataclass(frozen=True)
class ExactBatch(BatchBase):
    """The batch placement that places the most GPU milli, by integer programming (HiGHS), for passes
    whose program has at most max_variables variables; greedy beyond that."""

    max_variables: int = field(default=20_000, metadata={
        "help": "largest program solved exactly (variables); a larger pass is planned greedily"})

    def plan(self, view: FleetView, requests: list[PodRequest], rng: np.random.Generator,
             gang_waiting: bool = False) -> list[Placement | None]:
        start = greedy(view, requests, self.cpu_weight, False, gang_waiting)
        solved = solve(start, self.max_variables)
        return (solved or start).placements()


class _Program:
    """Variables and constraint rows of one batch's program, built column by column."""

    def __init__(self) -> None:
        self.value: list[float] = []
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.coefs: list[float] = []
        self.low: list[float] = []
        self.high: list[float] = []

    def var(self, value: float) -> int:
        self.value.append(value)
        return len(self.value) - 1

    def row(self, terms: list[tuple[int, float]], low: float, high: float) -> None:
        r = len(self.low)
        for col, coef in terms:
            self.rows.append(r)
            self.cols.append(col)
            self.coefs.append(coef)
        self.low.append(low)
        self.high.append(high)


def solve(batch: BatchFleet, max_variables: int) -> BatchFleet | None:
    """The optimal plan on `batch`'s fleet (a fresh BatchFleet), or None when the program is too big
    or HiGHS finds no optimum."""
    requests, view = batch.requests, batch.view
    pairs = [(i, int(n)) for i, nodes in enumerate(batch.candidates) for n in nodes.tolist()]
    free = view.gpu_free
    size = len(pairs) + sum(int((free[n] >= r.gpu_milli).sum()) for i, n in pairs
                            for r in [requests[i]] if 0 < r.gpu_milli < MILLI)
    nodes = sorted({n for _, n in pairs})
    size += sum(int((free[n] == MILLI).sum()) for n in nodes)
    if size > max_variables:
        return None
    program, x, shared = _Program(), {}, {}
    for i, n in pairs:
        x[i, n] = program.var(batch.value[i])
        r = requests[i]
        if 0 < r.gpu_milli < MILLI:
            shared[i, n] = [(g, program.var(0.0)) for g in np.flatnonzero(free[n] >= r.gpu_milli).tolist()]
            program.row([(v, 1.0) for _, v in shared[i, n]] + [(x[i, n], -float(r.num_gpu))], 0.0, 0.0)
    for i in range(len(requests)):
        program.row([(x[i, n], 1.0) for n in batch.candidates[i].tolist()], 0.0, 1.0)
    for n in nodes:
        _node_rows(program, batch, n, x, shared)
    if not program.value:
        return None
    a = coo_matrix((program.coefs, (program.rows, program.cols)), shape=(len(program.low), len(program.value)))
    result = milp(-np.asarray(program.value), integrality=np.ones(len(program.value)),
                  bounds=Bounds(0, 1), constraints=LinearConstraint(a.tocsr(), program.low, program.high),
                  options={"mip_rel_gap": 0.0})
    if result.x is None:
        return None
    return _read(batch, np.round(result.x).astype(int), x, shared)


def _node_rows(program: _Program, batch: BatchFleet, n: int, x: dict, shared: dict) -> None:
    requests, view = batch.requests, batch.view
    on = [i for i in range(len(requests)) if (i, n) in x]
    program.row([(x[i, n], float(requests[i].cpu_milli)) for i in on], -np.inf, float(view.cpu_free[n]))
    program.row([(x[i, n], float(requests[i].memory_mib)) for i in on], -np.inf, float(view.memory_free[n]))
    idle = np.flatnonzero(view.gpu_free[n] == MILLI).tolist()
    whole = {g: program.var(0.0) for g in idle}
    program.row([(v, 1.0) for v in whole.values()]
                + [(x[i, n], -float(requests[i].num_gpu)) for i in on if requests[i].gpu_milli == MILLI], 0.0, 0.0)
    for g, h in zip(idle, idle[1:]):
        program.row([(whole[g], 1.0), (whole[h], -1.0)], 0.0, np.inf)
    for g, free in enumerate(view.gpu_free[n].tolist()):
        terms = [(v, float(requests[i].gpu_milli)) for i in on if (i, n) in shared for gg, v in shared[i, n] if gg == g]
        if g in whole:
            terms.append((whole[g], float(MILLI)))
        if terms:
            program.row(terms, -np.inf, float(free))


def _read(batch: BatchFleet, values: np.ndarray, x: dict, shared: dict) -> BatchFleet:
    """The solution as a plan on a fresh scratch fleet."""
    plan = BatchFleet(batch.view, batch.requests, False, batch.gang_waiting)
    idle_left: dict[int, list[int]] = {}
    for (i, n), col in sorted(x.items()):
        if not values[col]:
            continue
        r = batch.requests[i]
        if (i, n) in shared:
            gpus = tuple(g for g, v in shared[i, n] if values[v])
        elif r.num_gpu:
            left = idle_left.setdefault(n, np.flatnonzero(batch.view.gpu_free[n] == MILLI).tolist())
            gpus, idle_left[n] = tuple(left[: r.num_gpu]), left[r.num_gpu:]
        else:
            gpus = ()
        plan._put(i, n, gpus)
    return plan
