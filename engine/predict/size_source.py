"""Predicted GPU needs in place of the users' requests: the GPUs a right-sized job is given.

`with_sized_gpus(jobs, cut, quantile, margin_pct, classes)` fits the GPU-need model
(engine.predict.gpu_need, at `quantile`) on the measured jobs submitted before `cut` that had ended
by then, and gives every job of `classes` submitted at or after `cut` the GPUs the right-sizing rule
(engine.core.sizing.recommended_gpus: whole GPUs on one node, whole nodes of a gang,
a share of a GPU not cut) allows for its predicted need x (1 + margin_pct / 100). The column
`sized_gpus` holds that count where it is below the request, NaN elsewhere (jobs before the cut, of
other classes, fractional, or predicted to need all they asked for). Features are submit-time only,
so no prediction sees a job that had not finished when it was made. The simulator gives a sized job
its `sized_gpus` and restarts it with its request if it runs out of memory
(engine.sim.processes.oom_restarts).

Memory too, with `memory_quantile` (None: memory is not sized): the memory-need model
(engine.predict.gpu_need.NeedModel with resource "memory": the quantile of the share of `memory_gib`
used at the peak, `memory_used_gib_max`) is fitted on the jobs measured for memory that had ended by
the cut, and every job of `classes` submitted at or after it that asks for memory is given
ceil(predicted need x (1 + memory_margin_pct / 100)) GiB, in whole GiB. The column
`sized_memory_gib` holds that total (over the job's nodes) where it is below `memory_gib`, NaN elsewhere.

The last result is memoised (keyed by a hash of the whole jobs table and the arguments), since a
scenario's jobs are prepared more than once per run (the simulation, then its cost report).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.sizing import memory_gib, recommended_gpus
from engine.predict.features import TimeZones
from engine.predict.gpu_need import MIN_FIT, NeedModel, NeedSettings, used_share
from engine.predict.runtime_source import memo_key

MIN_MEASURED = MIN_FIT  # the need models' own minimum (engine.predict.gpu_need.NeedModel.fit)
_MEMO: dict = {}


class NotEnoughMeasured(ValueError):
    """Too few measured jobs before the cut to train on."""


def with_sized_gpus(jobs: pd.DataFrame, cut: pd.Timestamp, quantile: float = 0.9, margin_pct: float = 0.0,
                    classes: frozenset[str] | None = None, tz: TimeZones = None, memory_quantile: float | None = None,
                    memory_margin_pct: float = 0.0) -> pd.DataFrame:
    """A copy of `jobs` with `sized_gpus`, and `sized_memory_gib` when `memory_quantile` is given (see the
    module docstring); `classes` None: every class. Raises NotEnoughMeasured when fewer than MIN_MEASURED
    measured jobs (of each resource sized) ended before the cut."""
    memory = None if memory_quantile is None else (float(memory_quantile), float(memory_margin_pct))
    key = memo_key(jobs, pd.Timestamp(cut), float(quantile), float(margin_pct),
                   tuple(sorted(classes)) if classes is not None else None, tz, *(() if memory is None else memory))
    if key not in _MEMO:
        _MEMO.clear()
        sized = _sized(jobs, pd.Timestamp(cut), quantile, margin_pct, classes, tz)
        if memory is not None:
            sized["sized_memory_gib"] = _sized_memory(jobs, pd.Timestamp(cut), *memory, classes, tz)
        _MEMO[key] = sized
    return _MEMO[key].copy()


def _training_rows(jobs: pd.DataFrame, cut: pd.Timestamp, resource: str) -> tuple[np.ndarray, np.ndarray]:
    """(submitted before the cut, measured for `resource` and ended by it): the jobs a need model learns from;
    NotEnoughMeasured when fewer than MIN_MEASURED."""
    before = (pd.to_datetime(jobs["submit_utc"]) < cut).to_numpy()
    ended = (pd.to_datetime(jobs["end_utc"]) <= cut).to_numpy()  # outcomes known at the cut, none later
    train = before & ended & np.isfinite(used_share(jobs, resource))
    if train.sum() < MIN_MEASURED:
        peak = "gpus_used_max" if resource == "gpus" else "memory_used_gib_max"
        raise NotEnoughMeasured(f"the {'GPU' if resource == 'gpus' else 'memory'}-need model needs at least "
                                f"{MIN_MEASURED} measured jobs ({peak}) that ended before {cut:%Y-%m-%d %H:%M} UTC; "
                                f"found {int(train.sum())}")
    return before, train


def _chosen(jobs: pd.DataFrame, classes: frozenset[str] | None) -> np.ndarray:
    return np.ones(len(jobs), bool) if classes is None else jobs["workload_class"].isin(classes).to_numpy()


def _sized_memory(jobs: pd.DataFrame, cut: pd.Timestamp, quantile: float, margin_pct: float,
                  classes: frozenset[str] | None, tz: TimeZones) -> np.ndarray:
    """GiB given to each job of `classes` from the cut on, where below its request (NaN elsewhere)."""
    before, train = _training_rows(jobs, cut, "memory")
    asked = pd.to_numeric(jobs["memory_gib"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    pick = ~before & _chosen(jobs, classes) & (asked > 0)
    sized = np.full(len(jobs), np.nan)
    if pick.any():
        model = NeedModel(NeedSettings(quantile=quantile), "memory").fit(jobs, tz, train)
        given = memory_gib(model.predict(jobs, tz, pick), margin_pct)
        sized[pick] = np.where(given < asked[pick], np.maximum(given, 1.0), np.nan)
    return sized


def _sized(jobs: pd.DataFrame, cut: pd.Timestamp, quantile: float, margin_pct: float,
           classes: frozenset[str] | None, tz: TimeZones) -> pd.DataFrame:
    before, train = _training_rows(jobs, cut, "gpus")
    gpus = pd.to_numeric(jobs["gpus"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    milli = pd.to_numeric(jobs["gpu_milli"], errors="coerce").fillna(1000).to_numpy(np.float64) \
        if "gpu_milli" in jobs else np.full(len(jobs), 1000.0)
    nodes = pd.to_numeric(jobs["nodes"], errors="coerce").fillna(1).to_numpy(np.float64) \
        if "nodes" in jobs else np.ones(len(jobs))
    whole = (gpus >= 1) & (milli >= 1000)  # a share of a GPU is not cut
    pick = ~before & _chosen(jobs, classes) & whole & (gpus > 1)
    out = jobs.copy()
    sized = np.full(len(jobs), np.nan)
    if pick.any():
        model = NeedModel(NeedSettings(quantile=quantile)).fit(jobs, tz, train)
        need = model.predict(jobs, tz, pick) * (1.0 + margin_pct / 100.0)
        given = recommended_gpus(gpus[pick], need, nodes[pick], np.zeros(int(pick.sum()), bool))
        sized[pick] = np.where(given < gpus[pick], given, np.nan)
    out["sized_gpus"] = sized
    return out
