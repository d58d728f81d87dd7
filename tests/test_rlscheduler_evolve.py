"""The evolved queue order with RLScheduler's protocol (engine.service.experiments.rlscheduler_evolve):
training sequences never touch the test sequences, the search is seeded and starts from F1, the
`linear` order holds F1 exactly, and the committed record's anchors beat the published heuristics."""
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import TRACES, shared

from engine.core.views import QueueView
from engine.policies.ordering import F1, Linear
from engine.service.experiments import fidelity
from engine.service.experiments.rlscheduler import START_INDICES, ExperimentError, run_sequence
from engine.service.experiments.rlscheduler_evolve import evolve, published, training_starts
from engine.service.experiments.swf_jobs import load_swf_jobs

LUBLIN = TRACES / "swf" / "lublin_256.swf"


def test_training_sequences_share_no_job_with_a_test_sequence():
    for n_jobs in (10_000, 202_871):
        starts = training_starts(n_jobs, 10, seed=3)
        assert len(starts) == 10
        for s in starts:
            assert s + 1024 <= n_jobs
            assert all(s + 1024 <= t or t + 1024 <= s for t in START_INDICES), s
    assert training_starts(10_000, 10, 3) == training_starts(10_000, 10, 3) != training_starts(10_000, 10, 4)
    with pytest.raises(ExperimentError, match="no 1024-job sequence apart"):
        training_starts(3000, 2, 0, test=(0, 1000, 2000))


def test_the_linear_order_at_f1s_weights_orders_jobs_as_f1_does():
    rng = np.random.default_rng(0)
    view = QueueView.of(rng.uniform(0, 1e6, 500), rng.uniform(0, 1e5, 500), rng.integers(1, 256, 500).astype(float))
    assert np.array_equal(np.argsort(Linear().keys(view, 0.0)[0], kind="stable"),
                          np.argsort(F1().keys(view, 0.0)[0], kind="stable"))


@shared("traces/swf/lublin_256.swf")
def test_a_short_search_is_seeded_starts_from_f1_and_reports_its_cost():
    jobs = load_swf_jobs(LUBLIN)
    first = evolve(jobs, "compat", trials=4, train=2, seed=1)
    again = evolve(jobs, "compat", trials=4, train=2, seed=1)
    assert first.weights == again.weights and first.test == again.test
    assert first.history[0] == pytest.approx(np.mean([run_sequence(jobs, s, "F1", "compat", true_wait=True)
                                                      .avg_bounded_slowdown for s in first.train_starts]))
    assert first.history == sorted(first.history, reverse=True) and first.train_bsld == first.history[-1]
    assert set(first.test) == {"evolved", "F1", "SJF"} and all(len(v) == 10 for v in first.test.values())
    assert first.mean("F1") == pytest.approx(75.07, abs=0.01) and first.mean("SJF") == pytest.approx(73.31, abs=0.01)
    assert first.simulations == 4 * 2 + 30 and published(jobs.source, "compat") == {"F1": 75.07, "SJF": 73.31}


def test_the_published_protocol_has_two_backfill_modes():
    with pytest.raises(ExperimentError, match="none or compat"):
        evolve(None, "easy")


@shared("traces/swf/lublin_256.swf")
def test_the_cli_prints_the_search_as_json():
    out = subprocess.run([sys.executable, "-m", "engine.cli", "experiment", "evolve", "--trace", str(LUBLIN),
                          "--backfill", "none", "--trials", "3", "--train", "1", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc["weights"]) == {"w_runtime_size", "w_runtime", "w_size", "w_submit", "w_wait"}
    assert doc["published"] == {"F1": 258.37, "SJF": 277.35} and doc["test"]["F1"]["mean"] == pytest.approx(258.37, abs=0.01)


def test_the_committed_record_beats_the_published_heuristics_on_every_anchor():
    evolved = fidelity.load_record().evolved
    assert list(zip(evolved["backfill"], evolved["rival"])) == [("compat", "SJF"), ("none", "F1"), ("compat", "F1")]
    assert evolved["beats_rival"].all()
    for _, row in evolved.iterrows():
        rival = row[f"published_{row['rival']}"]
        assert row["evolved"] < rival and row[row["rival"]] == pytest.approx(rival, abs=0.01)
