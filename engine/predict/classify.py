"""Workload classes for a log without labels: a classifier learned on a labelled log (the sample).

The classes are the sample's own labels (`CLASSES`: training, inference, development, batch, hpo).
The model is a HistGradientBoostingClassifier over engine/predict/class_features.py's columns (size,
run and requested time, submit rhythm, the user's aggregates and history; never the queue or any
other column that names the class), with balanced class weights so that the 1,565 training jobs
weigh as much as the 45,503 HPO trials. Fixed iterations, no early stopping, one seed: the same
rows give the same classes.

`evaluate` scores it honestly on the labelled log, two ways:
- "users": user-grouped folds (GroupKFold, `folds` of them): every job is predicted by a model
  that never saw its user, as with a new log's users;
- "time": trained on the first `TRAIN_SHARE` of the jobs in submit order, tested on the rest.
Each gives the accuracy, the majority-class baseline's accuracy, per-class precision, recall and
F1 (support: test jobs of that class) and the confusion matrix (rows: true class, columns:
predicted, in `CLASSES` order).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support
from sklearn.model_selection import GroupKFold

from engine.predict.class_features import class_features
from engine.predict.features import TimeZones, seconds
from engine.predict.threads import openmp_threads

CLASSES = ("training", "inference", "development", "batch", "hpo")
SPLITS = ("users", "time")
TRAIN_SHARE = 0.7


@dataclass(frozen=True)
class ClassifierSettings:
    """How the workload classifier is fitted and evaluated."""

    max_iter: int = field(default=100, metadata={"help": "boosting iterations"})
    learning_rate: float = field(default=0.1, metadata={"help": "shrinkage of each tree"})
    max_leaf_nodes: int = field(default=31, metadata={"help": "leaves per tree"})
    folds: int = field(default=3, metadata={"help": "user-grouped folds of the 'users' evaluation"})
    seed: int = field(default=0, metadata={"help": "random_state of the boosting"})
    threads: int = field(default=1, metadata={
        "help": "OpenMP threads while fitting and predicting (engine/predict/threads.py)"})


class WorkloadClassifier:
    """fit(features, labels) -> self; predict(features) -> class names (features: class_features' table)."""

    def __init__(self, settings: ClassifierSettings = ClassifierSettings()):
        self.settings = settings

    def fit(self, rows: pd.DataFrame, labels: np.ndarray) -> "WorkloadClassifier":
        s = self.settings
        self.model_ = HistGradientBoostingClassifier(
            max_iter=s.max_iter, learning_rate=s.learning_rate, max_leaf_nodes=s.max_leaf_nodes,
            class_weight="balanced", early_stopping=False, random_state=s.seed)
        with openmp_threads(s.threads):
            self.model_.fit(rows.to_numpy(np.float64), np.asarray(labels, dtype=object))
        return self

    def predict(self, rows: pd.DataFrame) -> np.ndarray:
        with openmp_threads(self.settings.threads):
            return self.model_.predict(rows.to_numpy(np.float64)).astype(object)


def labelled(jobs: pd.DataFrame) -> np.ndarray:
    """True where the job carries one of `CLASSES` as its workload_class."""
    if "workload_class" not in jobs:
        return np.zeros(len(jobs), bool)
    return jobs["workload_class"].isin(CLASSES).to_numpy()


def train(jobs: pd.DataFrame, tz: TimeZones = None,
          settings: ClassifierSettings = ClassifierSettings()) -> WorkloadClassifier:
    """A classifier fitted on every labelled job of `jobs`. Raises ValueError when fewer than two
    classes are labelled."""
    rows, labels = _labelled_rows(jobs, tz)
    return WorkloadClassifier(settings).fit(rows, labels)


def classify(model: WorkloadClassifier, jobs: pd.DataFrame, tz: TimeZones = None) -> np.ndarray:
    """The predicted class of every job of `jobs` (labels, if any, are not read)."""
    if not len(jobs):
        return np.zeros(0, dtype=object)
    return model.predict(class_features(jobs, tz))


def evaluate(jobs: pd.DataFrame, tz: TimeZones = None, split: str = "users",
             settings: ClassifierSettings = ClassifierSettings()) -> dict:
    """The classifier's scores on the labelled jobs of `jobs` under `split` (see the module docstring)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    rows, labels = _labelled_rows(jobs, tz)
    users = _users(jobs)
    if split == "users":
        predicted = _out_of_fold(rows, labels, users, settings)
        truth, majority_from = labels, labels
    else:
        submit = seconds(jobs.loc[labelled(jobs), "submit_utc"])
        order = np.argsort(submit, kind="stable")
        cut = int(round(TRAIN_SHARE * len(order)))
        fit_rows, test_rows = np.sort(order[:cut]), np.sort(order[cut:])
        model = WorkloadClassifier(settings).fit(rows.iloc[fit_rows], labels[fit_rows])
        predicted, truth, majority_from = model.predict(rows.iloc[test_rows]), labels[test_rows], labels[fit_rows]
    return {"split": split, "jobs_test": int(len(truth)), "users": int(len(set(users))), **scores(truth, predicted,
            majority_from), "settings": asdict(settings)}


def scores(truth: np.ndarray, predicted: np.ndarray, majority_from: np.ndarray) -> dict:
    """accuracy, majority_accuracy (always predicting `majority_from`'s commonest class), per_class
    (class, support, precision, recall, f1) and confusion (rows true, columns predicted, CLASSES order)."""
    values, counts = np.unique(np.asarray(majority_from, dtype=str), return_counts=True)
    majority = values[np.argmax(counts)]
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, predicted, labels=list(CLASSES), zero_division=0)
    return {
        "accuracy": float(np.mean(truth == predicted)),
        "majority_class": str(majority),
        "majority_accuracy": float(np.mean(truth == majority)),
        "per_class": [{"class": c, "support": int(support[i]), "precision": float(precision[i]),
                       "recall": float(recall[i]), "f1": float(f1[i])} for i, c in enumerate(CLASSES)],
        "confusion": confusion_matrix(truth, predicted, labels=list(CLASSES)).tolist(),
    }


def class_shares(jobs: pd.DataFrame, predicted: np.ndarray) -> pd.DataFrame:
    """Per class (CLASSES order): jobs, job_share, gpu_hours (size x run time, jobs that ran) and
    gpu_hour_share of `predicted` over `jobs`."""
    size = pd.to_numeric(jobs["gpus"], errors="coerce").fillna(0).to_numpy(np.float64)
    run = (pd.to_datetime(jobs["end_utc"]) - pd.to_datetime(jobs["start_utc"])).dt.total_seconds()
    gpu_hours = size * np.maximum(run.fillna(0).to_numpy(np.float64), 0.0) / 3600.0
    frame = pd.DataFrame({"cls": np.asarray(predicted, dtype=object), "gpu_hours": gpu_hours})
    table = frame.groupby("cls").agg(jobs=("cls", "size"), gpu_hours=("gpu_hours", "sum")).reindex(
        list(CLASSES), fill_value=0)
    table["job_share"] = table["jobs"] / max(len(frame), 1)
    table["gpu_hour_share"] = table["gpu_hours"] / max(float(gpu_hours.sum()), 1e-12)
    table.index.name = "workload_class"
    return table.reset_index()[["workload_class", "jobs", "job_share", "gpu_hours", "gpu_hour_share"]]


def held_out_classes(jobs: pd.DataFrame, tz: TimeZones = None,
                     settings: ClassifierSettings = ClassifierSettings()) -> np.ndarray:
    """Each labelled job's class as predicted by the user-grouped fold that never saw its user (the
    "users" evaluation's predictions), aligned with `jobs`; "unknown" for jobs without a label."""
    rows, labels = _labelled_rows(jobs, tz)
    out = np.full(len(jobs), "unknown", dtype=object)
    out[labelled(jobs)] = _out_of_fold(rows, labels, _users(jobs), settings)
    return out


def _out_of_fold(rows: pd.DataFrame, labels: np.ndarray, users: np.ndarray, settings: ClassifierSettings) -> np.ndarray:
    predicted = np.empty(len(labels), dtype=object)
    for fit_rows, test_rows in GroupKFold(n_splits=settings.folds).split(rows, labels, users):
        model = WorkloadClassifier(settings).fit(rows.iloc[fit_rows], labels[fit_rows])
        predicted[test_rows] = model.predict(rows.iloc[test_rows])
    return predicted


def _users(jobs: pd.DataFrame) -> np.ndarray:
    return jobs.loc[labelled(jobs), "user_name"].astype(object).fillna("").to_numpy()


def _labelled_rows(jobs: pd.DataFrame, tz: TimeZones) -> tuple[pd.DataFrame, np.ndarray]:
    """The feature rows of the labelled jobs (features computed over the whole log) and their labels."""
    keep = labelled(jobs)
    labels = jobs.loc[keep, "workload_class"].astype(object).to_numpy()
    if len(set(labels)) < 2:
        raise ValueError(f"the log has {len(set(labels))} labelled workload class(es); a classifier needs at "
                         f"least two of {', '.join(CLASSES)}")
    return class_features(jobs, tz)[keep], labels
