"""Workload classes of a dataset or trace: measured where it carries labels, inferred where it does not.

`class_report(jobs, regions)` is what `meridian classify` prints and the Predictors page shows:
- a log whose jobs carry the sample's class labels (training, inference, development, batch, hpo:
  engine.predict.classify.CLASSES) in at least two classes is *labelled*: the classifier is scored on
  its own held-out labels (`split`: user-grouped folds or the time split, engine.predict.classify.evaluate),
  and the shares are those of its labels;
- any other log (an SWF log's jobs are all "unknown") is classified by a model trained on the bundled
  sample (sample_data/, its regions' time zones), and the shares are those of the predicted classes.
Time zones: each job's region's zone from `regions` (an SWF log's header zone), else UTC.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.predict.classify import ClassifierSettings, class_shares, classify, evaluate, labelled, train
from engine.predict.features import zones_of
from engine.telemetry.sample import read_bundle


@dataclass(frozen=True)
class ClassReport:
    """labelled: the log carries class labels; evaluation: engine.predict.classify.evaluate's dict on them
    (None for an unlabelled log); trained_on: what the model learned from ("own labels" or the sample);
    shares: class_shares' table (of the labels, or of the predictions); predicted: the class per job of
    an unlabelled log, aligned with its rows (None for a labelled one)."""

    labelled: bool
    evaluation: dict | None
    trained_on: str
    shares: pd.DataFrame
    predicted: np.ndarray | None

    def to_json(self) -> dict:
        return {"labelled": self.labelled, "trained_on": self.trained_on, "evaluation": self.evaluation,
                "shares": self.shares.to_dict(orient="records")}


def has_labels(jobs: pd.DataFrame) -> bool:
    """Whether at least two of CLASSES occur among the jobs' labels."""
    return len(set(jobs.loc[labelled(jobs), "workload_class"])) >= 2


def class_report(jobs: pd.DataFrame, regions: pd.DataFrame | None = None, split: str = "users",
                 settings: ClassifierSettings = ClassifierSettings()) -> ClassReport:
    """The log's classes (see the module docstring). Raises ValueError for an empty log."""
    if not len(jobs):
        raise ValueError("the log has no jobs to classify")
    tz = zones_of(regions)
    if has_labels(jobs):
        report = evaluate(jobs, tz, split, settings)
        return ClassReport(True, report, f"its own labels ({report['split']} split)",
                           class_shares(jobs, jobs["workload_class"].where(labelled(jobs), "unlabelled").to_numpy()),
                           None)
    bundle = read_bundle().tables
    model = train(bundle["jobs"], zones_of(bundle["regions"]), settings)
    predicted = classify(model, jobs, tz)
    return ClassReport(False, None, f"the bundled sample ({int(labelled(bundle['jobs']).sum()):,} labelled jobs)",
                       class_shares(jobs, predicted), predicted)

