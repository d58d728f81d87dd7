"""The runtime-prediction claim ("ML runtime prediction cuts job completion time by 31 %") measured on
a dataset: the best predicted-runtime scenario against the same policies seeing the users' requests.

Candidates: EASY backfilling (FCFS order, candidates in queue order) and EASY-SJBF (candidates
shortest first, Tsafrir, Etsion and Feitelson 2007), each seeing the runtime model's P50 or its
point prediction for scheduling (`sched`, trained with an asymmetric loss: engine.predict), on the
days after the model's training cut (engine.scenario.runtime.TRAIN_SHARE of the submits). The best
predicted scenario is the one with the lowest mean job completion time, and it is compared with its
own policies seeing requests; choosing the best of four after seeing them favours the claim, and
the row says so. Spread: a paired bootstrap over the jobs that finished in both runs (BOOTSTRAP
resamples, seeded): the 2.5th and 97.5th percentiles of the cut in mean JCT.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from engine.scenario.spec import Scenario
from engine.service.compare import Run
from engine.service.experiments.bootstrap import paired_cut_interval

BOOTSTRAP = 1000
SEED = 0
QUANTILES = ("p50", "sched")


@dataclass(frozen=True)
class PredictionCut:
    """The best predicted scenario's name, its policies' name with requests, the mean JCT and average
    bounded slowdown of both runs (seconds, ratio), and the bootstrap interval of the JCT cut."""

    predicted: str
    requests: str
    jct_before_s: float
    jct_after_s: float
    slowdown_before: float
    slowdown_after: float
    low: float
    high: float

    @property
    def cut(self) -> float:
        return 1 - self.jct_after_s / self.jct_before_s if self.jct_before_s else np.nan

    @property
    def slowdown_cut(self) -> float:
        return 1 - self.slowdown_after / self.slowdown_before if self.slowdown_before else np.nan


def prediction_scenarios(easy: Scenario) -> list[Scenario]:
    """Both policy pairs with requests, then each with every prediction: the runs `best_cut` reads."""
    sjbf = replace(easy, name="easy-sjbf", policies={**easy.policies, "backfill": ("easy-sjbf", {"order": "shortest"})})
    bases = [replace(easy, name="easy-backfill"), sjbf]
    return bases + [replace(base, name=f"{base.name} ({q})", runtime_source="predicted", runtime_quantile=q)
                    for base in bases for q in QUANTILES]


def best_cut(runs: list[Run]) -> PredictionCut:
    """The predicted run with the lowest mean JCT against its own policies with requests."""
    by = {run.scenario.name: run for run in runs}
    predicted = min((run for run in runs if run.scenario.runtime_source == "predicted"),
                    key=lambda run: run.kpis["jct_mean_s"])
    base = by[predicted.scenario.name.split(" (")[0]]
    low, high = _interval(base, predicted)
    return PredictionCut(predicted.scenario.name, base.scenario.name, base.kpis["jct_mean_s"],
                         predicted.kpis["jct_mean_s"], base.kpis["avg_bounded_slowdown"],
                         predicted.kpis["avg_bounded_slowdown"], low, high)


def _jct(run: Run) -> np.ndarray:
    jobs = run.result.jobs
    done = (jobs["started"] & jobs["end_s"].notna()).to_numpy()
    return np.where(done, jobs["end_s"].to_numpy(np.float64) - jobs["submit_s"].to_numpy(np.float64), np.nan)


def _interval(before: Run, after: Run) -> tuple[float, float]:
    """The paired bootstrap interval of the cut in mean JCT over the jobs finished in both runs (the same
    rows: both runs replay the same jobs in the same order)."""
    return paired_cut_interval(_jct(before), _jct(after), BOOTSTRAP, SEED)


def cut_table(runs: list[Run]) -> pd.DataFrame:
    """Every prediction run against its policies with requests: mean JCT and bounded slowdown, both cuts."""
    by = {run.scenario.name: run for run in runs}
    rows = []
    for run in runs:
        if run.scenario.runtime_source != "predicted":
            continue
        base = by[run.scenario.name.split(" (")[0]].kpis
        rows.append({"scenario": run.scenario.name, "jct_requests_s": base["jct_mean_s"],
                     "jct_predicted_s": run.kpis["jct_mean_s"],
                     "jct_cut": 1 - run.kpis["jct_mean_s"] / base["jct_mean_s"] if base["jct_mean_s"] else np.nan,
                     "slowdown_requests": base["avg_bounded_slowdown"],
                     "slowdown_predicted": run.kpis["avg_bounded_slowdown"]})
    return pd.DataFrame(rows)
