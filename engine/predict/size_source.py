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

The last result is memoised (keyed by a hash of the whole jobs table and the arguments), since a
scenario's jobs are prepared more than once per run (the simulation, then its cost report).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.sizing import recommended_gpus
from engine.predict.features import TimeZones
from engine.predict.gpu_need import NeedModel, NeedSettings, used_share
from engine.predict.runtime_source import memo_key

MIN_MEASURED = 20  # the GPU-need model's own minimum (engine.predict.gpu_need.NeedModel.fit)
_MEMO: dict = {}


class NotEnoughMeasured(ValueError):
    """Too few measured jobs before the cut to train on."""


def with_sized_gpus(jobs: pd.DataFrame, cut: pd.Timestamp, quantile: float = 0.9, margin_pct: float = 0.0,
                    classes: frozenset[str] | None = None, tz: TimeZones = None) -> pd.DataFrame:
    """A copy of `jobs` with `sized_gpus` (see the module docstring); `classes` None: every class.
    Raises NotEnoughMeasured when fewer than MIN_MEASURED measured jobs ended before the cut."""
    key = memo_key(jobs, pd.Timestamp(cut), float(quantile), float(margin_pct),
                   tuple(sorted(classes)) if classes is not None else None, tz)
    if key not in _MEMO:
        _MEMO.clear()
        _MEMO[key] = _sized(jobs, pd.Timestamp(cut), quantile, margin_pct, classes, tz)
    return _MEMO[key].copy()


def _sized(jobs: pd.DataFrame, cut: pd.Timestamp, quantile: float, margin_pct: float,
           classes: frozenset[str] | None, tz: TimeZones) -> pd.DataFrame:
    submit = pd.to_datetime(jobs["submit_utc"])
    before = (submit < cut).to_numpy()
    ended = (pd.to_datetime(jobs["end_utc"]) <= cut).to_numpy()  # outcomes known at the cut, none later
    train = before & ended & np.isfinite(used_share(jobs))
    if train.sum() < MIN_MEASURED:
        raise NotEnoughMeasured(f"the GPU-need model needs at least {MIN_MEASURED} measured jobs (gpus_used_max) "
                                f"that ended before {cut:%Y-%m-%d %H:%M} UTC; found {int(train.sum())}")
    gpus = pd.to_numeric(jobs["gpus"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    milli = pd.to_numeric(jobs["gpu_milli"], errors="coerce").fillna(1000).to_numpy(np.float64) \
        if "gpu_milli" in jobs else np.full(len(jobs), 1000.0)
    nodes = pd.to_numeric(jobs["nodes"], errors="coerce").fillna(1).to_numpy(np.float64) \
        if "nodes" in jobs else np.ones(len(jobs))
    chosen = np.ones(len(jobs), bool) if classes is None else jobs["workload_class"].isin(classes).to_numpy()
    whole = (gpus >= 1) & (milli >= 1000)  # a share of a GPU is not cut
    pick = ~before & chosen & whole & (gpus > 1)
    out = jobs.copy()
    sized = np.full(len(jobs), np.nan)
    if pick.any():
        model = NeedModel(NeedSettings(quantile=quantile)).fit(jobs, tz, train)
        need = model.predict(jobs, tz, pick) * (1.0 + margin_pct / 100.0)
        given = recommended_gpus(gpus[pick], need, nodes[pick], np.zeros(int(pick.sum()), bool))
        sized[pick] = np.where(given < gpus[pick], given, np.nan)
    out["sized_gpus"] = sized
    return out
