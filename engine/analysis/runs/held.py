"""What jobs held inside a run's measurement window: the window's end and each piece of running's
GPU-seconds inside it, the ground every run-result KPI stands on (engine.analysis.runs.sim_metrics,
fairness, cost, stranded capacity). `remembered` keeps what several of them ask of one result (its
pieces inside a window, fairness' per-job frame and team table) for the last result asked about.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from engine.core.codes import first_rows
from engine.sim.output.result import SimulationResult


def node_names(nodes: pd.Series) -> tuple[np.ndarray, pa.Array]:
    """Each piece's ";"-separated node names, one per entry: (piece: the position of each name's
    piece, names: a pyarrow string array), in piece order and in each piece's own order; as pandas'
    `str.split(";").explode()` gives them ("" is one empty name), split by pyarrow in one pass."""
    lists = pc.split_pattern(pa.array(nodes.astype(str), pa.large_string()), ";")
    counts = pc.list_value_length(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts), pc.list_flatten(lists)


def node_positions(piece_region: np.ndarray, regions, names, node_region: np.ndarray,
                   node_name: np.ndarray) -> np.ndarray:
    """Position of each (regions[piece_region[i]], names[i]) among the (node_region, node_name) pairs (each
    pair once), -1 where none: the names (a sequence or pyarrow array of str) are looked up region by region,
    without building joined keys, by pyarrow's hashed `index_in`; piece_region: integer codes into `regions`."""
    at = np.full(len(names), -1, dtype=np.int64)
    node_region = np.asarray(node_region, dtype=object)
    names = names if isinstance(names, pa.Array) else pa.array(np.asarray(names, dtype=object), pa.large_string())
    code = {region: i for i, region in enumerate(regions)}
    for region in pd.unique(node_region):
        mine = np.flatnonzero(node_region == region)
        asked = np.flatnonzero(piece_region == code[region]) if region in code else mine[:0]
        if len(asked):
            known = pa.array(np.asarray(node_name, dtype=object)[mine], pa.large_string())
            found = pc.index_in(names if len(asked) == len(names) else names.take(asked), value_set=known)
            found = pc.fill_null(found, -1).to_numpy().astype(np.int64)
            at[asked] = np.where(found >= 0, mine[np.maximum(found, 0)], -1)
    return at


def piece_positions(region: pd.Series, nodes: pd.Series, node_region: np.ndarray,
                    node_name: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(piece, at): `node_names` of the pieces' node lists, and `node_positions` of each name in its
    piece's region. A run repeats few node lists many times over (HPC2N: 203k pieces, 35k distinct
    lists), so each distinct (region, node list) pair is split and looked up once and its positions
    copied to every piece that names it, in the same order."""
    region_code, regions = pd.factorize(region.astype(str))
    list_code, lists = pd.factorize(nodes.astype(str))
    pair = pd.factorize(region_code.astype(np.int64) * max(len(lists), 1) + list_code)[0]
    first = first_rows(pair)
    d_piece, d_names = node_names(nodes.iloc[first])
    d_at = node_positions(region_code[first][d_piece], list(regions), d_names, node_region, node_name)
    count = np.bincount(d_piece, minlength=len(first))
    per_piece = count[pair]
    # each piece's entries: its pair's, from the pair's first entry (its offset from where the piece's own start)
    shift = (np.cumsum(count) - count)[pair] - (np.cumsum(per_piece) - per_piece)
    piece = np.repeat(np.arange(len(pair), dtype=np.int64), per_piece)
    return piece, d_at[np.arange(len(piece), dtype=np.int64) + shift[piece]]


def finished_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """The jobs that started and ended (completed or failed)."""
    return jobs[jobs["started"] & jobs["end_s"].notna()]


def window_end_s(result: SimulationResult, finished: pd.DataFrame) -> float:
    """End of the measurement window, seconds: window_s, or the makespan without one."""
    return result.window_s if result.window_s > 0 else (float(finished["end_s"].max()) if len(finished) else 0.0)


def horizon_s(result: SimulationResult) -> float:
    """End of the measurement window, seconds: window_s, or the makespan (last job end) without one."""
    return window_end_s(result, finished_jobs(result.jobs))


_memo = threading.local()


def remembered(result: SimulationResult, key, compute):
    """`compute()`, once per result and key: a run's KPIs, by-group, by-cluster and team tables each need its
    pieces and per-job figures. The last result asked about in this thread is remembered (results are
    immutable; a weak reference, so a result is not kept alive)."""
    if getattr(_memo, "ref", None) is None or _memo.ref() is not result:
        _memo.ref, _memo.values = weakref.ref(result), {}
    if key not in _memo.values:
        _memo.values[key] = compute()
    return _memo.values[key]


def holding(result: SimulationResult, horizon: float) -> pd.DataFrame:
    """`_pieces(result, horizon)`, computed once per result and horizon (`remembered`); each caller gets
    its own shallow copy, which pandas' copy-on-write keeps apart from the others'."""
    return remembered(result, ("holding", horizon), lambda: _pieces(result, horizon)).copy(deep=False)


def _pieces(result: SimulationResult, horizon: float) -> pd.DataFrame:
    """`result.held()`'s pieces (row: the position of the piece's job in result.jobs) with completed
    (its job completed: started, ended, not failed), gpu_s (GPUs x seconds held inside [0, horizon]; a piece still running at the end holds to
    horizon) and served_gpu_s (for the pieces of jobs that completed: gpu_s less the GPU-seconds of
    work lost when the piece was preempted, the last lost_s seconds before its end, clipped to the
    window; 0 for other jobs' pieces)."""
    held = result.held()
    jobs = result.jobs
    row = held["row"].to_numpy(np.int64)
    completed = (jobs["started"].to_numpy(bool) & jobs["end_s"].notna().to_numpy(bool)
                 & ~jobs["failed"].to_numpy(bool))[row]
    gpus = held["gpus_allocated"].to_numpy(np.float64)
    start = held["start_s"].to_numpy(np.float64)
    end = held["end_s"].to_numpy(np.float64)
    end = np.where(np.isnan(end), max(horizon, 0.0), end)
    gpu_s = gpus * (np.clip(end, 0.0, horizon) - np.clip(start, 0.0, horizon))
    lost_s = held["lost_s"].fillna(0.0).to_numpy(np.float64)
    lost_gpu_s = gpus * (np.clip(end, 0.0, horizon) - np.clip(end - lost_s, 0.0, horizon))
    return held.assign(completed=completed, gpu_s=gpu_s,
                       served_gpu_s=np.where(completed, gpu_s - lost_gpu_s, 0.0))
