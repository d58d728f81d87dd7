"""The predictors on the real CTC-SP2, KTH-SP2 and HPC2N logs and the sample, time-ordered 70/30 split
(issues 8 and 30): the P50 and the runtime to schedule with against the baselines, and the calibrated
P10-P90 interval within 78-82 % coverage on the held-out part (engine/predict/conformal.py).

Thresholds were set from the figures measured on 2026-11-30 (benchmarks/RESULTS.md, "Predictors"),
each with a margin; the comparisons with the baselines are the ones that held on that day, so a
change that makes a baseline win where the model won fails here. The logs are read from
../shared/traces/swf/ beside the repository; without them the tests skip. HPC2N's runtime
evaluation (about 25 s) is marked slow. HPC2N's log error swings by about 0.1 with small
changes to the model (one user, u171, holds 12 % of its test jobs and 29 % of the model's error),
hence its wider margin.
"""
import numpy as np
import pytest
from conftest import TRACES, shared

from engine.predict.evaluate import evaluate_failure, evaluate_runtime
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf

CTC, HPC2N, KTH = "swf/CTC-SP2-1996-3.1-cln.swf.gz", "swf/HPC2N-2002-2.2-cln.swf.gz", "swf/KTH-SP2-1996-2.2.swf.gz"


def _calibrated(report: dict) -> None:
    """The interval's promise: 78-82 % covered, 10 % (8-12 %) beyond each bound; the runtime to schedule with
    underestimates less often than the P50 and beats the request on log error."""
    model, sched = report["model"], report["sched"]
    assert 0.78 <= model["coverage"] <= 0.82, model
    assert 0.08 <= model["below_p10"] <= 0.12 and 0.08 <= model["above_p90"] <= 0.12, model
    assert sched["underestimate_rate"] < model["underestimate_rate"] - 0.05
    assert sched["male"] < report["request"]["male"]


def _log(name):
    path = TRACES / name
    batch = parse_swf(path.read_bytes(), path.name, ImportOptions())
    return batch.tables["jobs"], batch.tables["regions"]["timezone"].iloc[0]


@pytest.fixture(scope="module")
def ctc():
    return _log(CTC)


@pytest.fixture(scope="module")
def hpc2n():
    return _log(HPC2N)


@shared(f"traces/{CTC}")
def test_ctc_runtime_beats_the_request_and_the_last_two_mean_on_log_error(ctc):
    report = evaluate_runtime(*ctc)
    model, request, last_two = report["model"], report["request"], report["last_two"]
    assert report["jobs_test"] == 23_167
    assert model["male"] < 1.20 and model["male"] < last_two["male"] - 0.05 < request["male"] - 0.5
    assert model["accuracy"] > 0.49 and model["accuracy"] > request["accuracy"] + 0.08
    assert 0.40 < model["underestimate_rate"] < 0.56
    _calibrated(report)


@shared(f"traces/{CTC}")
def test_ctc_failure_probability_beats_both_baselines(ctc):
    report = evaluate_failure(*ctc)
    model, base, recent = report["model"], report["base_rate"], report["user_recent"]
    assert model["roc_auc"] > 0.70 and model["roc_auc"] > recent["roc_auc"]
    assert model["pr_auc"] > 0.40 and model["pr_auc"] > recent["pr_auc"]
    assert model["brier"] < 0.150 and model["brier"] < base["brier"] - 0.01
    predicted = np.array([b["predicted"] for b in report["calibration"]])
    observed = np.array([b["observed"] for b in report["calibration"]])
    jobs = np.array([b["jobs"] for b in report["calibration"]])
    assert np.average(np.abs(predicted - observed), weights=jobs) < 0.025


@shared(f"traces/{HPC2N}")
def test_hpc2n_records_no_failures_so_only_the_brier_score_is_defined(hpc2n):
    report = evaluate_failure(*hpc2n)
    assert report["train_failure_rate"] == 0 and report["model"]["base_rate"] == 0
    assert np.isnan(report["model"]["roc_auc"]) and report["model"]["brier"] == 0


@pytest.mark.slow
@shared(f"traces/{HPC2N}")
def test_hpc2n_runtime_beats_the_request_and_the_last_two_mean_on_log_error(hpc2n):
    report = evaluate_runtime(*hpc2n)
    model, request, last_two = report["model"], report["request"], report["last_two"]
    assert report["jobs_test"] == 60_862
    assert model["male"] < 1.75 and model["male"] < last_two["male"] - 0.15 < request["male"] - 0.3
    assert model["accuracy"] > 0.44 and model["accuracy"] > request["accuracy"]
    _calibrated(report)


@shared(f"traces/{KTH}")
def test_kth_runtime_beats_both_baselines_and_its_interval_is_calibrated():
    report = evaluate_runtime(*_log(KTH))
    model = report["model"]
    assert report["jobs_test"] == 8_547
    assert model["male"] < report["last_two"]["male"] - 0.05 < report["request"]["male"] - 0.15
    _calibrated(report)
