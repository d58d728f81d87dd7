"""GPUs (or host memory) a job will use, predicted at submit from the telemetry of earlier jobs (issue 27, item 4).

The label is the *used share* of a measured job, per resource (`RESOURCES`): for "gpus" its peak of GPUs
busy at once (`gpus_used_max`) over the GPUs it asked for, for "memory" its peak of host memory
(`memory_used_gib_max`) over the memory it asked for (`memory_gib`), clipped to 0-1. A
HistGradientBoostingRegressor with the quantile loss at `quantile` (0.9 by default: the safety margin is
the quantile, nine jobs in ten use no more) learns it from submit-time features
(engine/predict/features.py: size, request, submit hour, the user's runtime and failure history, the
team, workload class and queue as categoricals) and the user's measured history of the same resource
before the submit (`USED_HISTORY`), counting only jobs that had finished by then. The predicted need is
the share x the request. Fixed iterations, one seed: deterministic. The two resources are two models of
one family: NeedModel(settings, "gpus") and NeedModel(settings, "memory").

| column | meaning |
|---|---|
| user_used_last | used share of the user's most recently finished measured job (NaN: none) |
| user_used_median | median used share of the user's last `RECENT_JOBS` finished measured jobs (NaN: none) |
| user_measured | how many of the user's measured jobs had finished before the submit |
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder

from engine.predict.features import NUMERIC, RECENT_JOBS, TimeZones, features, seconds
from engine.predict.history import FinishedBefore
from engine.predict.threads import openmp_threads

USED_HISTORY = ("user_used_last", "user_used_median", "user_measured")
# resource -> (the measured peak column, the request column)
RESOURCES = {"gpus": ("gpus_used_max", "gpus"), "memory": ("memory_used_gib_max", "memory_gib")}
MIN_FIT = 20  # measured jobs a model needs


@dataclass(frozen=True)
class NeedSettings:
    """How the GPU-need model is fitted."""

    quantile: float = field(default=0.9, metadata={"help": "quantile of the used share predicted (the margin)"})
    max_iter: int = field(default=100, metadata={"help": "boosting iterations"})
    learning_rate: float = field(default=0.1, metadata={"help": "shrinkage of each tree"})
    categorical: tuple[str, ...] = field(default=("team", "workload_class", "queue"),
                                         metadata={"help": "categorical features the trees see"})
    seed: int = field(default=0, metadata={"help": "random_state of the boosting"})
    threads: int = field(default=1, metadata={"help": "OpenMP threads (engine/predict/threads.py)"})


def used_share(jobs: pd.DataFrame, resource: str = "gpus") -> np.ndarray:
    """The resource's peak / request (gpus_used_max / gpus, memory_used_gib_max / memory_gib) clipped to 0-1;
    NaN where not measured or nothing was asked for."""
    peak, request = RESOURCES[resource]
    if peak not in jobs or request not in jobs:
        return np.full(len(jobs), np.nan)
    used = pd.to_numeric(jobs[peak], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    asked = pd.to_numeric(jobs[request], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(asked > 0, np.clip(used / asked, 0.0, 1.0), np.nan)


def need_features(jobs: pd.DataFrame, tz: TimeZones = None, resource: str = "gpus") -> pd.DataFrame:
    """features.features' table with the `USED_HISTORY` columns of `resource` (index of `jobs`)."""
    out = features(jobs, tz)
    share = used_share(jobs, resource)
    user = pd.factorize(jobs["user_name"])[0]
    measured = FinishedBefore.build(user, seconds(jobs["submit_utc"]), seconds(jobs["end_utc"]), np.isfinite(share))
    out["user_used_last"] = measured.rolling(share, user, 1, "mean")
    out["user_used_median"] = measured.rolling(share, user, RECENT_JOBS, "median")
    out["user_measured"] = measured.count.astype(np.float64)
    return out


class NeedModel:
    """fit(jobs, tz) on the measured jobs -> self; predict(jobs, tz) -> the predicted need per job, in the
    request's unit (GPUs for "gpus", GiB for "memory")."""

    def __init__(self, settings: NeedSettings = NeedSettings(), resource: str = "gpus"):
        if resource not in RESOURCES:
            raise ValueError(f"resource {resource!r} is unknown; choose from {', '.join(RESOURCES)}")
        self.settings, self.resource = settings, resource

    def _pipeline(self) -> Pipeline:
        s = self.settings
        codes = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan, min_frequency=20,
                               max_categories=250)
        numbers = [*NUMERIC, *USED_HISTORY]
        front = ColumnTransformer([("codes", codes, list(s.categorical)), ("numbers", "passthrough", numbers)])
        booster = HistGradientBoostingRegressor(
            loss="quantile", quantile=s.quantile, max_iter=s.max_iter, learning_rate=s.learning_rate,
            categorical_features=[True] * len(s.categorical) + [False] * len(numbers), early_stopping=False,
            random_state=s.seed)
        return Pipeline([("front", front), ("booster", booster)])

    def fit(self, jobs: pd.DataFrame, tz: TimeZones = None, rows: np.ndarray | None = None) -> "NeedModel":
        """Fit on the measured jobs among `rows` (a boolean mask; default all); features over all of `jobs`."""
        share = used_share(jobs, self.resource)
        keep = np.isfinite(share) & (np.ones(len(jobs), bool) if rows is None else rows)
        if keep.sum() < MIN_FIT:
            raise ValueError(f"{int(keep.sum())} measured jobs ({RESOURCES[self.resource][0]}); the {self.resource} "
                             f"need model needs at least {MIN_FIT}")
        table = need_features(jobs, tz, self.resource)
        self.pipeline_ = self._pipeline()
        with openmp_threads(self.settings.threads):
            self.pipeline_.fit(table[keep], share[keep])
        return self

    def predict(self, jobs: pd.DataFrame, tz: TimeZones = None, rows: np.ndarray | None = None) -> np.ndarray:
        """Predicted need (share x request, share clipped to 0-1) of the jobs in `rows` (default all)."""
        table = need_features(jobs, tz, self.resource)
        pick = np.ones(len(jobs), bool) if rows is None else rows
        with openmp_threads(self.settings.threads):
            share = np.clip(self.pipeline_.predict(table[pick]), 0.0, 1.0)
        asked = pd.to_numeric(jobs[RESOURCES[self.resource][1]], errors="coerce").to_numpy(np.float64, na_value=np.nan)[pick]
        return share * asked
