"""The calibrated runtime interval on the committed sample (issue 30, item 1): 78-82 % of the held-out part
(time-ordered 70/30 split) inside P10-P90, 10 % beyond each bound; the same figures in
benchmarks/RESULTS.md. A file of its own so that it runs beside the real-log tests."""
from test_predict_real_logs import _calibrated

from engine.predict.evaluate import evaluate_runtime
from engine.predict.features import zones_of
from engine.telemetry.sample import read_bundle


def test_the_samples_interval_is_calibrated_on_its_held_out_weeks():
    batch = read_bundle()
    report = evaluate_runtime(batch.tables["jobs"], zones_of(batch.tables["regions"]))
    assert report["jobs_test"] == 27_075
    assert report["model"]["male"] < report["last_two"]["male"] < report["request"]["male"]
    _calibrated(report)
