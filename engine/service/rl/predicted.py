"""The runtime predictors' P10, P50 and P90 for every job of a dataset's log (features "predicted").

The stored predictors of the dataset (engine/predict/registry.py, `meridian predict train`)
predict every job of the dataset's jobs table; the log built from that table
(engine/service/rl/logs.dataset_jobs) keeps its finished jobs in submit order and says which
rows of the table they are. The predictors were trained on the whole dataset,
so on its own windows they know more than a live scheduler would: an agent trained with them is
optimistic there, and should be judged on another log or a later period.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def predicted_quantiles(predictors, jobs: pd.DataFrame, regions: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """(len(rows), 3) P10, P50, P90 seconds of the jobs at positions `rows` of `jobs` (the log's
    jobs, engine/service/rl/logs.dataset_jobs), in that order."""
    predicted = predictors.predict(jobs, regions)
    return predicted[["p10_s", "p50_s", "p90_s"]].to_numpy(dtype=float)[rows]
