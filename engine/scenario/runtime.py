"""A scenario's [runtime] table: what the scheduler knows of a job's length and its chance of failing.

    [runtime]
    source = "predicted"   # "request" (default): the users' requests; "predicted": the runtime model's
    quantile = "p50"       # which prediction the scheduler sees: p10, p50, p90 or sched (the asymmetric
                           # point prediction, engine/predict/runtime.py)
    failure = true         # give every job its predicted probability of failing (failure-aware orders)

Predictions are made by models trained on the jobs that had ended before the scenario's window
starts (`[workload] start_utc`; without one, on the first TRAIN_SHARE of submits, and the window
starts there): engine.predict.runtime_source and engine.predict.failure_source. Each job's submit
hour and weekday are taken in its region's time zone when the dataset has a regions table.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from engine.core.errors import ScenarioError

RUNTIME_SOURCES = ("request", "predicted")
RUNTIME_QUANTILES = ("p10", "p50", "p90", "sched")
TRAIN_SHARE = 0.7  # predictions without a window start: train on the first 70 % of submits
_KEYS = {"source", "quantile", "failure"}


@dataclass(frozen=True)
class RuntimeChoice:
    """The parsed [runtime] table."""

    source: str = "request"
    quantile: str = "p50"
    failure: bool = False

    @property
    def predicts(self) -> bool:
        return self.source == "predicted" or self.failure


def parse_runtime(table, source: str) -> RuntimeChoice:
    """[runtime] as a RuntimeChoice; ScenarioError names the key and the valid choices."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{source}: [runtime] must be a table")
    extra = sorted(set(table) - _KEYS)
    if extra:
        raise ScenarioError(f"{source}: unknown [runtime] key {', '.join(extra)}; valid: {', '.join(sorted(_KEYS))}")
    choice = RuntimeChoice(table.get("source", "request"), table.get("quantile", "p50"), table.get("failure", False))
    for key, value, valid in (("source", choice.source, RUNTIME_SOURCES), ("quantile", choice.quantile, RUNTIME_QUANTILES)):
        if value not in valid:
            raise ScenarioError(f"{source}: [runtime] {key} {value!r} is unknown; choose from {', '.join(valid)}")
    if not isinstance(choice.failure, bool):
        raise ScenarioError(f"{source}: [runtime] failure must be true or false, got {choice.failure!r}")
    return choice


def with_predictions(jobs: pd.DataFrame, start: pd.Timestamp | None, choice: RuntimeChoice, zones: dict | None,
                     name: str) -> tuple[pd.DataFrame, pd.Timestamp | None]:
    """The jobs with the predictions `choice` asks for, and the window start (set to the training cut
    when there was none). ScenarioError when there is too little history before the cut."""
    if not choice.predicts or not len(jobs):
        return jobs, start
    from engine.predict.failure_source import with_failure_probability
    from engine.predict.runtime_source import NotEnoughHistory, with_predicted_runtimes

    if start is None:
        start = pd.to_datetime(jobs["submit_utc"]).quantile(TRAIN_SHARE)
    try:
        if choice.source == "predicted":
            jobs = with_predicted_runtimes(jobs, start, choice.quantile, zones or None)
        if choice.failure:
            jobs = with_failure_probability(jobs, start, zones or None)
    except NotEnoughHistory as exc:
        raise ScenarioError(f"{name}: {exc}; start the window later ([workload] start_utc)") from None
    return jobs, start
