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
Two more rows help HiGHS, whose heuristics find few plans of its own here: the plan must place more
than the greedy plan (so an infeasible program proves the greedy plan optimal), and alike nodes and
alike pods are taken in index order (symmetry breaking; only equivalent plans are cut off). When the
program would have more than max_variables variables the pass is planned greedily; HiGHS stops after
max_nodes branch-and-bound nodes (a count, not a clock: the same plan on any machine) with the best
plan it found, better than greedy, or greedy's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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
    max_nodes: int = field(default=2_000, metadata={
        "help": "branch-and-bound nodes HiGHS may explore per pass before it keeps the best plan found"})

    def plan(self, view: FleetView, requests: list[PodRequest], rng: np.random.Generator,
             gang_waiting: bool = False) -> list[Placement | None]:
        start = greedy(view, requests, self.cpu_weight, False, gang_waiting)
        solved = solve(start, self.max_variables, node_limit=self.max_nodes)
        return (solved.plan if solved else start).placements()


@dataclass(frozen=True)
class Solved:
    """What HiGHS answered: the plan (the greedy start when none beats it), whether it is proven
    optimal, and the bound on the milli any plan can place."""

    plan: BatchFleet
    optimal: bool
    bound: float


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


def solve(batch: BatchFleet, max_variables: int, node_limit: int | None = None,
          time_limit_s: float | None = None) -> Solved | None:
    """The best plan on `batch`'s fleet (`batch` is the greedy plan), or None when the program has
    more than max_variables variables. `node_limit`, `time_limit_s`: HiGHS's limits (none: to the
    optimum)."""
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
    _symmetry_rows(program, batch, nodes, x)
    placed = sum(batch.value) - batch.unplaced
    if not program.value or placed == sum(batch.value):
        return Solved(batch, True, float(placed))
    program.row([(col, float(v)) for col, v in enumerate(program.value) if v], placed + 1, np.inf)
    from scipy.optimize import Bounds, LinearConstraint, milp  # half a second of imports: only when a program is solved
    from scipy.sparse import coo_matrix

    a = coo_matrix((program.coefs, (program.rows, program.cols)), shape=(len(program.low), len(program.value)))
    options = {"mip_rel_gap": 0.0}
    if node_limit is not None:
        options["node_limit"] = node_limit
    if time_limit_s is not None:
        options["time_limit"] = time_limit_s
    result = milp(-np.asarray(program.value), integrality=np.ones(len(program.value)),
                  bounds=Bounds(0, 1), constraints=LinearConstraint(a.tocsr(), program.low, program.high),
                  options=options)
    if result.status == 2:   # infeasible: nothing places more than the greedy plan
        return Solved(batch, True, float(placed))
    bound = -float(getattr(result, "mip_dual_bound", None) or -sum(batch.value))
    if result.x is None:
        return Solved(batch, False, max(bound, placed))
    return Solved(_read(batch, np.round(result.x).astype(int), x, shared), result.status == 0, bound)


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
    loads = {}
    for g, free in enumerate(view.gpu_free[n].tolist()):
        terms = [(v, float(requests[i].gpu_milli)) for i in on if (i, n) in shared for gg, v in shared[i, n] if gg == g]
        if g in whole:
            terms.append((whole[g], float(MILLI)))
        if terms:
            program.row(terms, -np.inf, float(free))
            loads.setdefault(free, []).append(terms)
    for alike in loads.values():   # GPUs with the same free milli are alike: the fuller first
        for first, second in zip(alike, alike[1:]):
            program.row(first + [(v, -c) for v, c in second], 0.0, np.inf)


def _symmetry_rows(program: _Program, batch: BatchFleet, nodes: list[int], x: dict) -> None:
    """Alike nodes (the same free resources, GPU model and tier) hold the more milli the lower their
    index, and alike pods are placed in queue order: either way only equivalent plans are cut off."""
    view, requests = batch.view, batch.requests
    groups: dict[tuple, list[int]] = {}
    for n in nodes:
        key = (int(view.cpu_free[n]), int(view.memory_free[n]), tuple(view.gpu_free[n].tolist()),
               int(view.gpu_model[n]), None if view.spot is None else bool(view.spot[n]),
               None if view.tier_rank is None else int(view.tier_rank[n]))
        groups.setdefault(key, []).append(n)
    for alike in groups.values():
        for n, m in zip(alike, alike[1:]):
            program.row([(x[i, n], float(batch.value[i])) for i in range(len(requests)) if (i, n) in x]
                        + [(x[i, m], -float(batch.value[i])) for i in range(len(requests)) if (i, m) in x], 0.0, np.inf)
    pods: dict[tuple, list[int]] = {}
    for i, r in enumerate(requests):
        pods.setdefault((r, tuple(batch.candidates[i].tolist())), []).append(i)
    for alike in pods.values():
        for i, k in zip(alike, alike[1:]):
            program.row([(x[i, n], 1.0) for n in batch.candidates[i].tolist()]
                        + [(x[k, n], -1.0) for n in batch.candidates[k].tolist()], 0.0, np.inf)


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
        plan.put(i, n, gpus)
    return plan
