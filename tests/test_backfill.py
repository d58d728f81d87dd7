"""Backfilling policies: the EASY window on its own and inside the simulator."""
import numpy as np
import pytest

from engine.policies import registry
from engine.policies.backfill import EasyBackfill, NoBackfill, Window
from sim_helpers import fleet, job, run, starts


def test_families_are_registered():
    assert {"none", "easy"} <= set(registry.families()["backfill"])
    assert registry.families()["admission"] == ["accept-all", "queue-length-limit"]


def test_no_backfill_gives_no_window():
    assert NoBackfill().window(4.0, 0.0, np.array([10.0]), np.array([4.0]), 0.0) is None


def test_easy_shadow_time_and_extra_units():
    # 2 free; running jobs end at 50 (1 unit), 30 (2 units), 80 (3 units); the head needs 6.
    window = EasyBackfill().window(6.0, 2.0, np.array([50.0, 30.0, 80.0]), np.array([1.0, 2.0, 3.0]), 0.0)
    assert window == Window(shadow_s=80.0, extra_units=2.0)
    window = EasyBackfill().window(4.0, 2.0, np.array([50.0, 30.0, 80.0]), np.array([1.0, 2.0, 3.0]), 0.0)
    assert window == Window(shadow_s=30.0, extra_units=0.0)


def test_easy_shadow_is_infinite_when_the_head_can_never_be_satisfied():
    assert EasyBackfill().window(10.0, 1.0, np.array([5.0]), np.array([2.0]), 0.0) == Window(float("inf"), 0.0)


def test_window_allows_short_or_small_candidates_and_uses_up_extra():
    window = Window(shadow_s=100.0, extra_units=2.0)
    allowed = window.allows(10.0, np.array([90.0, 91.0, 500.0, 500.0]), np.array([8.0, 2.0, 3.0, 0.0]))
    assert allowed.tolist() == [True, True, False, True]
    assert window.after_start(10.0, 50.0, 2.0) == window
    assert window.after_start(10.0, 500.0, 2.0) == Window(100.0, 0.0)


def test_easy_backfills_a_short_job_and_refuses_one_that_would_delay_the_head():
    # One 4-GPU node. j0 holds 2 GPUs until 100; the head j1 needs all 4 (shadow 100, extra 0).
    jobs = [job(0, 0, 100, 2), job(1, 10, 50, 4), job(2, 20, 60, 1), job(3, 30, 500, 1)]
    result = run(jobs, fleet(4), backfill="easy")
    assert starts(result) == [0.0, 100.0, 20.0, 150.0]
    decisions = result.decisions
    assert decisions[decisions["job_id"] == "j2"]["decision"].tolist() == ["backfilled"]
    # j3 is refused for the reservation, then waits as the head for capacity.
    assert decisions[decisions["job_id"] == "j3"]["decision"].tolist() == [
        "blocked-by-reservation", "blocked-by-capacity", "started"]
    assert decisions[decisions["job_id"] == "j3"]["time_s"].tolist() == [30.0, 100.0, 150.0]
    assert starts(run(jobs, fleet(4), backfill="none")) == [0.0, 100.0, 150.0, 150.0]


def test_easy_candidate_that_outlives_the_shadow_fits_in_the_extra():
    # The head j1 needs 3 of 4 GPUs at the shadow time 100, leaving 1 extra for the long j2.
    jobs = [job(0, 0, 100, 2), job(1, 10, 50, 3), job(2, 20, 500, 1), job(3, 30, 500, 1)]
    assert starts(run(jobs, fleet(4), backfill="easy")) == [0.0, 100.0, 20.0, 150.0]


def test_easy_uses_requested_not_true_runtime():
    # j2 really runs 10 s but asked for 200 s, past the shadow time 100: refused.
    jobs = [job(0, 0, 100, 2), job(1, 10, 50, 4), job(2, 20, 10, 1, requested=200)]
    assert starts(run(jobs, fleet(4), backfill="easy")) == [0.0, 100.0, 150.0]


@pytest.mark.parametrize("key", ["none", "easy"])
def test_policies_are_frozen(key):
    policy = registry.make("backfill", key)
    with pytest.raises(AttributeError):
        policy.x = 1
