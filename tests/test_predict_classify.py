"""The workload classifier (engine/predict/classify.py, class_features.py): its accuracy on the sample's held-out
labels (issue 27's named check), that it never reads the labels or the class-naming columns, determinism, and its
class shares on a real SWF log.

Thresholds come from the figures measured on 2026-12-05 (benchmarks/RESULTS.md, "Workload classifier") with a
margin: user-grouped folds 0.9965 accuracy, time split 0.9974, the majority class (hpo) 0.49-0.52.
"""
import numpy as np
import pandas as pd
import pytest
from conftest import TRACES, shared

from engine.predict.class_features import COLUMNS, class_features
from engine.predict.classify import CLASSES, ClassifierSettings, class_shares, classify, evaluate, scores, train
from engine.predict.features import zones_of
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import read_bundle

FAST = ClassifierSettings(max_iter=20)


@pytest.fixture(scope="module")
def sample():
    tables = read_bundle().tables
    return tables["jobs"], zones_of(tables["regions"])


def _held_out_is_accurate(report: dict) -> None:
    assert report["accuracy"] >= 0.98, report["accuracy"]
    assert report["accuracy"] > report["majority_accuracy"] + 0.4
    for row in report["per_class"]:
        assert row["recall"] >= 0.9 and row["precision"] >= 0.9, row
    confusion = np.array(report["confusion"])
    assert confusion.shape == (5, 5) and confusion.sum() == report["jobs_test"]


def test_on_users_it_never_saw_the_sample_classes_are_recovered(sample):
    jobs, tz = sample
    report = evaluate(jobs, tz, "users")
    _held_out_is_accurate(report)
    assert report["jobs_test"] == len(jobs) and report["users"] == jobs["user_name"].nunique()


@pytest.mark.slow
def test_trained_on_the_past_it_classifies_the_future(sample):
    jobs, tz = sample
    report = evaluate(jobs, tz, "time")
    _held_out_is_accurate(report)
    assert report["jobs_test"] == len(jobs) - round(0.7 * len(jobs))


def test_features_never_read_the_label_or_the_columns_that_name_it(sample):
    jobs, tz = sample
    part = jobs.iloc[:5000]
    blind = part.assign(workload_class="unknown", queue="q", qos="", priority=0.0, project="", gpu_type="",
                        team="")
    pd.testing.assert_frame_equal(class_features(part, tz), class_features(blind, tz))
    assert list(class_features(part, tz).columns) == list(COLUMNS)


def test_same_rows_same_classes_and_labels_are_not_read_to_predict(sample):
    jobs, tz = sample
    part = jobs.iloc[:20000]
    first, second = train(part, tz, FAST), train(part, tz, FAST)
    predicted = classify(first, part, tz)
    assert (predicted == classify(second, part, tz)).all()
    assert (predicted == classify(first, part.assign(workload_class="unknown"), tz)).all()
    assert set(predicted) <= set(CLASSES)


def test_scores_and_shares_by_hand():
    truth = np.array(["training", "hpo", "hpo", "batch"], dtype=object)
    guess = np.array(["training", "hpo", "batch", "batch"], dtype=object)
    report = scores(truth, guess, truth)
    assert report["accuracy"] == 0.75 and report["majority_class"] == "hpo" and report["majority_accuracy"] == 0.5
    by_class = {row["class"]: row for row in report["per_class"]}
    assert by_class["batch"]["precision"] == 0.5 and by_class["batch"]["recall"] == 1.0
    assert by_class["hpo"]["precision"] == 1.0 and by_class["hpo"]["recall"] == 0.5
    assert report["confusion"][CLASSES.index("hpo")][CLASSES.index("batch")] == 1
    jobs = pd.DataFrame({"gpus": [2.0, 1.0, 1.0, 4.0],
                         "start_utc": pd.to_datetime(["2026-01-01 00:00"] * 4),
                         "end_utc": pd.to_datetime(["2026-01-01 01:00", "2026-01-01 03:00", None, "2026-01-01 00:30"])})
    table = class_shares(jobs, guess).set_index("workload_class")
    assert table.loc["batch", "jobs"] == 2 and table.loc["batch", "gpu_hours"] == 2.0   # the unended job adds 0
    assert table.loc["training", "gpu_hours"] == 2.0 and table.loc["hpo", "gpu_hours"] == 3.0
    assert table["gpu_hour_share"].sum() == pytest.approx(1.0) and table.loc["inference", "jobs"] == 0


def test_a_log_with_one_class_cannot_train(sample):
    jobs, tz = sample
    with pytest.raises(ValueError, match="at least two"):
        train(jobs[jobs["workload_class"] == "hpo"].iloc[:200], tz, FAST)


@shared("traces/swf/KTH-SP2-1996-2.2.swf.gz")
def test_an_swf_log_gets_a_class_for_every_job(sample):
    jobs, tz = sample
    path = TRACES / "swf/KTH-SP2-1996-2.2.swf.gz"
    batch = parse_swf(path.read_bytes(), path.name, ImportOptions())
    log = batch.tables["jobs"]
    predicted = classify(train(jobs.iloc[::4], tz, FAST), log, batch.tables["regions"]["timezone"].iloc[0])
    table = class_shares(log, predicted)
    assert len(predicted) == len(log) and set(predicted) <= set(CLASSES)
    assert table["jobs"].sum() == len(log) and table["job_share"].sum() == pytest.approx(1.0)
