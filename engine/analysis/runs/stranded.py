"""Stranded capacity: GPU-hours idle while a waiting job could have used them, from a finished run.

Method. Sample the run at t_k = k x step while t_k < H, over the measurement window [0, H]
(H = sim_metrics.horizon_s), step = max(900 s, H / 2000): at most 2,000 samples, each standing for
`step` seconds, the last for H - t_k. At each t_k, per fleet node n of G_n GPUs, used_n = the sum,
over the pieces of running (SimulationResult.held()) with start <= t_k < end (NaN end: running at
the end), of gpus_allocated x G_n / (G summed over the piece's nodes), cost.py's split; free_n =
G_n - used_n and idle_gpus = the region's sum of free_n (burst nodes not in the fleet are ignored).
A job waits at t_k when submit_s <= t_k < until (start_s if it started, submit_s + wait_s if it
"gave-up", else +inf), unless turned away (never-fits, rejected-by-admission, rejected-by-forecast,
exceeds-quota); re-waiting after a preemption is ignored (start_s is the first start). It waits in
the jobs table's `region` and asks for the per-job arrays' GPU type (None: any), q = num_gpu x
milli / 1000 GPUs per node and `nodes` nodes. GPUs only (not CPU or memory), all tiers alike.
Waiting jobs are grouped by shape (region, type, q, nodes, regions its residency allows); shapes
go in queue order (each one's earliest waiting job, by submit), each placing as many jobs as fit:
  (a) order_gpus: at home. A one-node job fits floor(whole free GPUs / num_gpu) times on a node
      (milli < 1000: floor(free_n / q)), best-fit (fullest nodes first); a gang job (nodes > 1) takes
      entirely free nodes of its type with G_n >= num_gpu, fewest GPUs first, and counts their GPUs
      (it holds whole nodes). Whatever kept a fitting job waiting at home counts: its order, missing
      or blocked backfilling, quotas, team limits, timing policies.
  (b) elsewhere_gpus: then the rest of each shape, in the other regions its residency tag allows
      (engine.world.residency; untagged: any; an empty regions table: no rules), in fleet order.
  (c) fragmented_gpus: then the jobs still unplaced, in queue order, take the free GPUs left on nodes
      of their type big enough for one pod, home first, then the allowed regions where their shape
      fits the empty fleet, at most the GPUs they ask (nodes x q): min(free left, demand left), and
      only where those free GPUs add up to at least one job's request (nodes x q): free in total, but
      in pieces no job fits (7 single free GPUs on 7 nodes while a 4-GPU job waits; not 2 free GPUs
      while an 8-GPU job waits, which is a shortage, not fragmentation).
Each part is booked to the region whose GPUs sit idle, so order + elsewhere + fragmented <= idle in
every row. Greedy packing is a heuristic (a better one may place more); a shared-GPU job goes on a
node's free fraction, not on one GPU; outages are not in the result, so a down region's GPUs count
as free. nodes_in_use (nodes holding anything) and partial_idle_gpus (free GPUs on partly used
nodes) view fragmentation in a way that holds on mixed fleets, unlike FGD's measure. GPU-hours =
GPUs x seconds / 3600. The whole bundled sample under fifo (92,340 jobs, 180 nodes, 12 weeks,
2,000 samples) takes about 2 s on one core.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.analysis.runs import burst
from engine.analysis.runs.held import horizon_s, piece_positions
from engine.analysis.runs.lookup import positions
from engine.core.codes import distinct_rows
from engine.sim.output.result import SimulationResult
from engine.sim.state.workload import normalise_fleet
from engine.world.residency import allowed_mask

TURNED_AWAY = ("never-fits", "rejected-by-admission", "rejected-by-forecast", "exceeds-quota")
GAVE_UP = "gave-up"
MIN_STEP_S = 900.0
MAX_SAMPLES = 2000
EPS = 1e-9
PARTS = ("order", "elsewhere", "fragmented")
COLUMNS = ["time_s", "region", "idle_gpus", *(f"{p}_gpus" for p in PARTS), "nodes_in_use", "partial_idle_gpus"]


@dataclass(frozen=True)
class JobRequests:
    """Per-job requests aligned with result.jobs: gpu_type (None: any), num_gpu (GPUs per node),
    width (nodes), milli (milli-GPU per GPU, < 1000 shares one GPU), residency (tags; None: untagged)."""

    gpu_type: np.ndarray
    num_gpu: np.ndarray
    width: np.ndarray
    milli: np.ndarray
    residency: np.ndarray | None = None


def requests_of(workload) -> JobRequests:
    """The requests of an engine.sim.state.workload.Workload. simulate() keeps the workload's job order
    (index = stable job id) in result.jobs, so the arrays align with its rows as they are."""
    return JobRequests(workload.gpu_type, workload.num_gpu, workload.nodes, workload.gpu_milli, workload.residency)


def step_s(horizon: float) -> float:
    """Seconds between samples: max(900 s, horizon / 2000)."""
    return max(MIN_STEP_S, horizon / MAX_SAMPLES)


def sample_times(horizon: float) -> np.ndarray:
    """The sample instants 0, step, ... before `horizon` (none for an empty window)."""
    return np.arange(math.ceil(horizon / step_s(horizon) - 1e-9)) * step_s(horizon) if horizon > 0 else np.zeros(0)


def _usage(result: SimulationResult, fleet: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """(samples, nodes): GPUs in use on each fleet node at each instant."""
    held = result.held()
    held = held[(held["nodes"].astype(str) != "").to_numpy(bool)]
    first = np.searchsorted(times, held["start_s"].to_numpy(np.float64), "left")
    last = np.searchsorted(times, np.nan_to_num(held["end_s"].to_numpy(np.float64), nan=np.inf), "left")
    spans = last > first  # a piece between two samples uses nothing at any: its nodes need no lookup
    held, first, last = held[spans].reset_index(drop=True), first[spans], last[spans]
    # rented (burst) nodes are not in the fleet, but their GPUs still take their share of a piece's GPUs
    every = burst.rentals(result)
    rented = None if every is None else every[["region", "node", "gpus"]].rename(columns={"gpus": "gpu"})
    known = pd.concat([fleet[["region", "node", "gpu"]], rented]).drop_duplicates(["region", "node"])
    piece, at = piece_positions(held["region"], held["nodes"], known["region"].astype(str).to_numpy(object),
                                known["node"].astype(str).to_numpy(object))
    size, node = np.where(at >= 0, known["gpu"].to_numpy(np.float64)[at], 0.0), np.where(at < len(fleet), at, -1)
    total = np.bincount(piece, size, len(held))
    gpus = held["gpus_allocated"].to_numpy(np.float64)[piece] * np.divide(
        size, total[piece], out=np.zeros(len(size)), where=total[piece] > 0)
    first, last = first[piece], last[piece]
    keep = node >= 0
    diff = np.zeros((len(times) + 1, len(fleet)))
    np.add.at(diff, (first[keep], node[keep]), gpus[keep])
    np.add.at(diff, (last[keep], node[keep]), -gpus[keep])
    # allocations are multiples of a milli-GPU: rounding removes the running sum's float residue
    return np.clip(np.round(np.cumsum(diff, axis=0)[:-1], 6), 0.0, fleet["gpu"].to_numpy(np.float64))


def _allowed(residency, regions_table: pd.DataFrame | None, regions: list[str], rows: np.ndarray) -> np.ndarray:
    """(jobs in rows, fleet regions) bool: may the job run there. A fleet region missing from the
    regions table takes untagged jobs only."""
    if residency is None or regions_table is None or regions_table.empty:
        return np.ones((len(rows), len(regions)), bool)
    tags = pd.Series(np.asarray(residency, object)[rows], dtype=object)
    blank = tags.isna().to_numpy() | (tags.astype(str).str.strip() == "").to_numpy()
    mask = allowed_mask(pd.DataFrame({"residency": tags, "job_id": rows}), regions_table)
    column = pd.Index(regions_table["region"].astype(str)).get_indexer(regions)
    return np.where(column >= 0, mask[:, np.maximum(column, 0)], blank[:, None])


@dataclass(frozen=True)
class _Shapes:
    """Per waiting shape: home region, type code (0: any, -1: not in the fleet), q, whole (not shared),
    width, allowed regions; shape[bounds[k]:bounds[k + 1]]: those waiting at sample k, in queue order."""

    region: np.ndarray
    kind: np.ndarray
    pod: np.ndarray
    whole: np.ndarray
    width: np.ndarray
    allowed: np.ndarray
    bounds: np.ndarray
    shape: np.ndarray
    count: np.ndarray


def _shapes(result, times, regions, types, requests: JobRequests, regions_table) -> _Shapes:
    jobs = result.jobs
    if len(requests.num_gpu) != len(jobs):
        raise ValueError(f"{len(requests.num_gpu)} job requests for {len(jobs)} jobs: align them with result.jobs")
    submit, reason = jobs["submit_s"].to_numpy(np.float64), jobs["reason"].astype(str)
    until = np.where((reason == GAVE_UP).to_numpy(bool), submit + jobs["wait_s"].to_numpy(np.float64),
                     np.where(jobs["started"].to_numpy(bool), jobs["start_s"].to_numpy(np.float64), np.inf))
    region = positions(pd.Index(regions), jobs["region"].astype(str))
    milli = np.asarray(requests.milli, np.float64)
    pod = np.asarray(requests.num_gpu, np.float64) * milli / 1000.0
    first, last = np.searchsorted(times, submit, "left"), np.searchsorted(times, until, "left")
    rows = np.flatnonzero(~reason.isin(TURNED_AWAY).to_numpy(bool) & (region >= 0) & (pod > 0) & (last > first))
    rows = rows[np.argsort(submit[rows], kind="stable")]  # queue order: by submit, then row
    asked = pd.Series(np.asarray(requests.gpu_type, object)[rows], dtype=object)
    known = pd.Index(types).get_indexer(asked.fillna("").astype(str))
    kind = np.where(asked.isna().to_numpy(), 0, np.where(known >= 0, known + 1, -1))
    allowed = _allowed(requests.residency, regions_table, regions, rows)
    allowed_code = distinct_rows(allowed.view(np.uint8))[1] if len(rows) else np.zeros(0, np.int64)
    table = pd.DataFrame({"r": region[rows], "t": kind, "p": pod[rows], "m": milli[rows] >= 1000,
                          "w": np.asarray(requests.width, np.int64)[rows], "a": allowed_code.ravel()})
    shape = table.groupby(list(table.columns), sort=True).ngroup().to_numpy(np.int64)
    firsts = np.unique(shape, return_index=True)[1]
    # one (sample, job) pair per instant a job waits; rows are in queue order, so the first pair of a
    # (sample, shape) is its earliest waiting job
    spans = last[rows] - first[rows]
    job = np.repeat(np.arange(len(rows)), spans)
    sample = first[rows][job] + np.arange(len(job)) - np.repeat(np.cumsum(spans) - spans, spans)
    base = len(firsts) + 1
    key, at, count = np.unique(sample * base + shape[job], return_index=True, return_counts=True)
    order = np.lexsort((job[at], key // base))
    bounds = np.searchsorted((key // base)[order], np.arange(len(times) + 1))
    one = table.iloc[firsts]
    return _Shapes(*(one[c].to_numpy() for c in "rtpmw"), allowed[firsts], bounds, (key % base)[order], count[order])


def _place(free, size, idx, pod, whole, width, count) -> tuple[int, float]:
    """Place up to `count` jobs of one shape on nodes `idx` (see the module docstring); updates
    `free`; returns (jobs placed, GPUs taken)."""
    sub = free[idx]
    if width == 1:
        pods = np.floor((np.floor(sub + EPS) if whole else sub) / pod + EPS)
        n = min(count, int(pods.sum()))
        if n == 0:
            return 0, 0.0
        order = np.argsort(sub, kind="stable")  # best fit (fullest first) keeps large holes for later shapes
        fit = pods[order]
        take = np.clip(n - (np.cumsum(fit) - fit), 0.0, fit)
        free[idx[order]] = sub[order] - take * pod
        return n, n * pod
    empty = idx[sub >= size[idx] - EPS]
    n = min(count, len(empty) // width)
    if n == 0:
        return 0, 0.0
    chosen = empty[np.argsort(size[empty], kind="stable")[:n * width]]
    free[chosen] = 0.0
    return n, float(size[chosen].sum())


def _consume(free, idx, demand: float) -> float:
    """Take up to `demand` free GPUs on nodes `idx`, in node order; returns the GPUs taken."""
    sub = free[idx]
    use = min(demand, float(sub.sum()))
    if use <= EPS:
        return 0.0
    free[idx] = sub - np.clip(use - (np.cumsum(sub) - sub), 0.0, sub)
    return use


def stranded_table(result: SimulationResult, fleet: pd.DataFrame, regions_table: pd.DataFrame | None,
                   gpu_type, num_gpu, width, milli, residency=None) -> pd.DataFrame:
    """One row per (sample instant, fleet region), COLUMNS, GPUs (nodes for nodes_in_use); see the
    module docstring. `fleet`: the fleet the run ran on; gpu_type, num_gpu, width, milli and
    residency: per-job arrays aligned with result.jobs (`requests_of` gives them from a Workload)."""
    fleet = normalise_fleet(fleet)
    times = sample_times(horizon_s(result))
    regions = list(dict.fromkeys(fleet["region"].astype(str)))
    types = sorted({str(t) for t in fleet["model"] if t is not None})
    size = fleet["gpu"].to_numpy(np.float64)
    node_region = pd.Index(regions).get_indexer(fleet["region"].astype(str))
    node_kind = np.where(fleet["model"].isna(), 0, pd.Index(types).get_indexer(fleet["model"].fillna("")) + 1)
    starts = np.searchsorted(node_region, np.arange(len(regions)))
    used = _usage(result, fleet, times) if len(fleet) else np.zeros((len(times), 0))
    free_all = size - used
    s = _shapes(result, times, regions, types, JobRequests(gpu_type, num_gpu, width, milli, residency), regions_table)
    parts = np.zeros((3, len(times), len(regions)))
    # per shape and region, the nodes that can hold one of its pods: its type (or any), G_n >= q
    fits = (size >= s.pod[:, None] - EPS) & ((node_kind == s.kind[:, None]) | (s.kind[:, None] == 0))
    nodes = [[np.flatnonzero(row & (node_region == r)) for r in range(len(regions))] for row in fits]
    others = [[r for r in np.flatnonzero(row).tolist() if r != home] for row, home in zip(s.allowed, s.region)]
    for k in np.flatnonzero(np.diff(s.bounds) > 0):
        free = free_all[k].copy()
        room = np.add.reduceat(free, starts).tolist()
        shapes, left = s.shape[s.bounds[k]:s.bounds[k + 1]], s.count[s.bounds[k]:s.bounds[k + 1]].copy()
        # (a) at home, (b) elsewhere, then (c) at home and elsewhere, each pass in queue order
        for part, home in ((0, True), (1, False), (2, True), (2, False)):
            if part == 2 and home:
                demand = left * s.pod[shapes] * s.width[shapes]  # GPUs the unplaced jobs ask for
            for i, g in enumerate(shapes):
                for r in ((s.region[g],) if home else others[g]):
                    idx = nodes[g][r]
                    if part < 2 and left[i] and room[r] >= s.pod[g] - EPS:
                        placed, gpus = _place(free, size, idx, s.pod[g], s.whole[g], s.width[g], int(left[i]))
                        left[i] -= placed
                    elif (part == 2 and demand[i] > EPS and room[r] > EPS and len(idx) >= s.width[g]
                          and float(free[idx].sum()) >= s.pod[g] * s.width[g] - EPS):
                        gpus = _consume(free, idx, demand[i])
                        demand[i] -= gpus
                    else:
                        continue
                    room[r] -= gpus
                    parts[part, k, r] += gpus
    in_use = (used > EPS).astype(np.float64)
    partial = np.where((used > EPS) & (used < size - EPS), free_all, 0.0)
    sums = [np.add.reduceat(x, starts, axis=1).ravel() for x in (free_all, in_use, partial)] if len(size) else [[]] * 3
    keys = np.repeat(times, len(regions)), np.tile(np.array(regions, object), len(times))
    return pd.DataFrame(dict(zip(COLUMNS, (*keys, sums[0], *(p.ravel() for p in parts), sums[1], sums[2]))))


def _seconds(table: pd.DataFrame, step: float, horizon: float) -> np.ndarray:
    """Seconds each row's sample stands for: step, the last one clipped to the horizon."""
    return np.clip(np.minimum(step, horizon - table["time_s"].to_numpy(np.float64)), 0.0, None)


def _hours(table: pd.DataFrame, column: str, seconds: np.ndarray) -> float:
    return float(table[column].to_numpy(np.float64) @ seconds) / 3600.0


def stranded_kpis(table: pd.DataFrame, step_s: float, horizon_s: float = math.inf) -> dict[str, float]:
    """stranded_gpu_hours (the three parts' sum), stranded_order/elsewhere/fragmented_gpu_hours,
    nodes_in_use_mean (time-weighted, whole fleet) and partial_node_idle_gpu_hours of a
    `stranded_table`; each row stands for step_s seconds, clipped to horizon_s (the window's end)."""
    seconds = _seconds(table, step_s, horizon_s)
    hours = {p: _hours(table, f"{p}_gpus", seconds) for p in PARTS}
    span = float(pd.Series(seconds).groupby(table["time_s"].to_numpy()).first().sum())
    return {"stranded_gpu_hours": sum(hours.values()), **{f"stranded_{p}_gpu_hours": hours[p] for p in PARTS},
            "nodes_in_use_mean": _hours(table, "nodes_in_use", seconds) * 3600.0 / span if span > 0 else 0.0,
            "partial_node_idle_gpu_hours": _hours(table, "partial_idle_gpus", seconds)}


@dataclass(frozen=True)
class Stranded:
    """A run's stranded-capacity table, the seconds between its samples and the window's end."""

    table: pd.DataFrame
    step_s: float
    horizon_s: float

    def kpis(self) -> dict[str, float]:
        return stranded_kpis(self.table, self.step_s, self.horizon_s)

    def by_region(self) -> pd.DataFrame:
        """Per region: idle_gpu_hours, then its `stranded_kpis`, over the sampled window."""
        return pd.DataFrame([{"region": region, "idle_gpu_hours": _hours(part, "idle_gpus", _seconds(
            part, self.step_s, self.horizon_s)), **stranded_kpis(part, self.step_s, self.horizon_s)}
            for region, part in self.table.groupby("region", sort=False)])


def stranded(result: SimulationResult, workload, regions_table: pd.DataFrame | None = None,
             fleet: pd.DataFrame | None = None) -> Stranded:
    """`stranded_table` of a run of `workload` (a Workload) on its fleet (or `fleet`), with step and window end."""
    r, horizon = requests_of(workload), horizon_s(result)
    table = stranded_table(result, workload.fleet if fleet is None else fleet, regions_table,
                           r.gpu_type, r.num_gpu, r.width, r.milli, r.residency)
    return Stranded(table, step_s(horizon), horizon)
