"""The backfilling family of issue 25, on hand-built cases whose start orders are worked out by hand:
EASY-SJBF and the candidate orders, EASY++ and its correctors, selective, list scheduling,
lookahead and adaptive backfilling."""
import numpy as np
import pandas as pd
import pytest
from sim_helpers import fleet, job, run, starts

from engine.policies import registry
from engine.policies.backfill_order import Waiting, candidate_order
from engine.policies.backfill_predicted import corrected_ends
from engine.policies.lookahead_kernels import best_set
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario


def _run(jobs, nodes, backfill: dict):
    spec = {"name": "t", "policies": {"order": {"key": "fcfs"}, "placement": {"key": "first-fit"},
                                      "backfill": backfill}}
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), nodes)


def test_the_new_policies_are_registered():
    assert {"easy-sjbf", "easy++", "selective", "list", "lookahead", "adaptive"} <= set(registry.families()["backfill"])


def test_sjbf_lets_the_shortest_candidate_take_the_hole():
    # One 4-GPU node; j0 holds 3 GPUs until 100. At 10 the head j1 (4 GPUs) blocks: shadow 100, extra 0,
    # one GPU free. j2 (1 GPU, 80 s) and j3 (1 GPU, 30 s) both end by the shadow. EASY tries j2 first
    # (queue order): it takes the GPU until 90, and j3 (90 + 30 > 100) waits for j1 (100-150). SJBF
    # tries j3 first: it runs 10-40, and at 40 j2 (40 + 80 > 100) is refused and waits for j1.
    jobs = [job(0, 0, 100, 3), job(1, 10, 50, 4), job(2, 10, 80, 1), job(3, 10, 30, 1)]
    assert starts(run(jobs, fleet(4), backfill="easy")) == [0.0, 100.0, 10.0, 150.0]
    assert starts(run(jobs, fleet(4), backfill="easy-sjbf")) == [0.0, 100.0, 150.0, 10.0]
    assert starts(_run(jobs, fleet(4), {"key": "easy-sjbf", "order": "fcfs"})) == [0.0, 100.0, 10.0, 150.0]


def test_candidate_orders_by_hand():
    waiting = Waiting(head_wait_s=5.0, head_requested_s=100.0, wait_s=np.array([30.0, 10.0, 20.0, 40.0]),
                      requested_s=np.array([50.0, 20.0, 20.0, 90.0]), units=np.array([3.0, 1.0, 2.0, 5.0]),
                      priority=np.array([1.0, 5.0, 5.0, 0.0]), free_units=2.5)
    assert candidate_order("fcfs", waiting).tolist() == [0, 1, 2, 3]
    assert candidate_order("shortest", waiting).tolist() == [1, 2, 0, 3]  # ties keep queue order
    assert candidate_order("smallest", waiting).tolist() == [1, 2, 0, 3]
    assert candidate_order("best-fit", waiting).tolist() == [2, 1, 0, 3]  # leaves 0.5, then 1.5; 3 and 5 do not fit
    assert candidate_order("priority", waiting).tolist() == [2, 1, 0, 3]  # priority 5: the longer wait first
    with pytest.raises(ValueError, match="order must be one of"):
        registry.make("backfill", "easy-sjbf", order="random")


def _user(row, name):
    return {**row, "user_name": name}


def test_easy_plus_plus_backfills_on_the_users_last_two_runtimes():
    # One 4-GPU node. User u's j0 and j1 ran 20 s and 40 s of the 1,000 s they asked for. At 50 j2
    # (3 GPUs, 100 s) starts; at 60 the head j3 (4 GPUs) blocks: shadow 150, extra 0. u's j4 (1 GPU)
    # asks for 1,000 s: EASY refuses it (60 + 1000 > 150) and it starts after j3 (150-160);
    # EASY++ predicts (20 + 40) / 2 = 30 s: 60 + 30 <= 150, backfilled at 60.
    jobs = [_user(job(0, 0, 20, 1, 1000), "u"), _user(job(1, 0, 40, 1, 1000), "u"),
            _user(job(2, 50, 100, 3), "v"), _user(job(3, 60, 10, 4), "w"), _user(job(4, 60, 30, 1, 1000), "u")]
    assert starts(run(jobs, fleet(4), backfill="easy")) == [0.0, 0.0, 50.0, 150.0, 160.0]
    assert starts(run(jobs, fleet(4), backfill="easy++")) == [0.0, 0.0, 50.0, 150.0, 60.0]


def test_easy_plus_plus_corrects_a_job_that_outlived_its_prediction():
    # A job started at 0, predicted to end at 30, requested 1,000 s; at 70 it is still running.
    # "request": expected at 1,000; "double": 30 x 4 = 120 (60 is already past); "tsafrir": the next
    # step beyond 70 s of running, 5 min. At 990 doubling would say 30 x 64 = 1,920: capped at 1,000.
    begin, end, request = np.array([0.0]), np.array([30.0]), np.array([1000.0])
    assert corrected_ends("request", 70.0, begin, end, request).tolist() == [1000.0]
    assert corrected_ends("double", 70.0, begin, end, request).tolist() == [120.0]
    assert corrected_ends("tsafrir", 70.0, begin, end, request).tolist() == [300.0]
    assert corrected_ends("double", 990.0, begin, end, request).tolist() == [1000.0]
    assert corrected_ends("request", 1200.0, begin, end, request).tolist() == [1200.0]  # past its request: now


def test_selective_protects_the_wide_job_only_after_its_threshold():
    # One 4-GPU node; j0 holds 2 GPUs until 100; the wide head j1 (4 GPUs, 100 s) arrives at 10.
    # At 20 j2 (1 GPU, 200 s) arrives: j1's expansion factor is (10 + 100) / 100 = 1.1 < 2, so it holds
    # no reservation and j2 starts (EASY refuses it: it would delay j1). At 115 j3 (1 GPU, 200 s)
    # arrives: j1 has waited 105 s, factor 2.05 >= 2: it reserves 220-320 (j2 ends at 220) and j3,
    # which would hold a GPU into that reservation, is refused until j1 ends at 320.
    jobs = [job(0, 0, 100, 2), job(1, 10, 100, 4), job(2, 20, 200, 1), job(3, 115, 200, 1)]
    assert starts(run(jobs, fleet(4), backfill="easy")) == [0.0, 100.0, 200.0, 200.0]
    result = run(jobs, fleet(4), backfill="selective")
    assert starts(result) == [0.0, 220.0, 20.0, 320.0]
    j3 = result.decisions[result.decisions["job_id"] == "j3"]
    assert j3["decision"].tolist()[0] == "blocked-by-reservation"
    # a threshold of 1 protects every job from its submit: conservative backfilling
    assert starts(_run(jobs, fleet(4), {"key": "selective", "threshold_x": 1.0})) == \
        starts(run(jobs, fleet(4), backfill="conservative")) == [0.0, 100.0, 200.0, 200.0]


def test_list_scheduling_starts_what_fits_until_the_head_has_aged():
    # One 4-GPU node; j0 holds 2 GPUs until 100; head j1 (4 GPUs) at 10; j2 (1 GPU, 300 s) at 20.
    # Without a reservation j2 starts at 20 and j1 waits until it ends at 320; once the head has
    # waited max_wait_s = 5 s it has EASY's reservation and j2 is refused until j1 ends.
    jobs = [job(0, 0, 100, 2), job(1, 10, 100, 4), job(2, 20, 300, 1)]
    assert starts(run(jobs, fleet(4), backfill="list")) == [0.0, 320.0, 20.0]
    assert starts(_run(jobs, fleet(4), {"key": "list", "max_wait_s": 5.0})) == [0.0, 100.0, 200.0]


def test_lookahead_picks_two_jobs_over_one_larger():
    # One 8-GPU node; j0 holds 4 GPUs until 100; head j1 (8 GPUs, 100 s) at 10: shadow 100, 4 free.
    # j2 (3 GPUs), j3 and j4 (2 GPUs each), all 50 s, end by the shadow. EASY takes j2 first (3 of
    # the 4 GPUs) and the others no longer fit; at 60 they would outlive the shadow, so they wait for
    # j1 (100-200). Lookahead fills the 4 GPUs with j3 + j4, and j2 waits for j1.
    jobs = [job(0, 0, 100, 4), job(1, 10, 100, 8), job(2, 10, 50, 3), job(3, 10, 50, 2), job(4, 10, 50, 2)]
    assert starts(run(jobs, fleet(8), backfill="easy")) == [0.0, 100.0, 10.0, 200.0, 200.0]
    assert starts(run(jobs, fleet(8), backfill="lookahead")) == [0.0, 100.0, 200.0, 10.0, 10.0]


def test_best_set_by_hand():
    # room 4, extra 1: {2, 2} = 4 beats {3}; a long job must fit in the extra
    assert best_set(np.array([3.0, 2.0, 2.0]), np.array([False, False, False]), 4.0, 0.0).tolist() == [1, 2]
    assert best_set(np.array([3.0, 2.0, 2.0]), np.array([False, True, False]), 4.0, 1.0).tolist() == [0]
    assert best_set(np.array([1.0, 1.0, 2.0]), np.array([True, False, False]), 4.0, 1.0).tolist() == [0, 1, 2]
    assert best_set(np.array([5.0]), np.array([False]), 4.0, 4.0).tolist() == []


def test_adaptive_switches_after_the_workload_changes():
    # One 4-GPU node, strategies "none" then "easy", a decision every 1,000 s by mean wait.
    # Until 2,000 the queue never offers a backfill at a decision: at 1,030 the replay of
    # [30, 1030) holds j1-j3 only (j4 arrives at 1,030), where both strategies tie: "none" stays, and
    # j4 (1 GPU) waits behind j3 (4 GPUs) until 1,410. At 2,030 the replay of [1030, 2030) has j2 (2 GPUs,
    # 300 s), j3 and j4 from 1,030, where EASY backfills j4 at once: the policy switches to EASY
    # (logged against the head j6) and j7 is backfilled at 2,030 instead of waiting until 2,410.
    jobs = [job(0, 0, 100, 4), job(2, 1010, 300, 2), job(3, 1020, 100, 4), job(4, 1030, 50, 1),
            job(5, 2010, 300, 2), job(6, 2020, 100, 4), job(7, 2030, 50, 1)]
    spec = {"key": "adaptive", "period_s": 1000.0, "strategies": "none,easy", "kpi": "mean-wait"}
    result = _run(jobs, fleet(4), spec)
    assert starts(result) == [0.0, 1010.0, 1310.0, 1410.0, 2010.0, 2310.0, 2030.0]
    switched = result.decisions[result.decisions["decision"] == "backfill-switched"]
    assert switched[["time_s", "job_id"]].values.tolist() == [[2030.0, "j6"]]
    assert starts(_run(jobs, fleet(4), {**spec, "strategies": "none"})) == \
        [0.0, 1010.0, 1310.0, 1410.0, 2010.0, 2310.0, 2410.0]
