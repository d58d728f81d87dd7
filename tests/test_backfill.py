"""Backfilling policies: the EASY window on its own and inside the simulator."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job, run, starts

from engine.policies import registry
from engine.policies.backfill import ConservativeBackfill, EasyBackfill, NoBackfill, ProfileWindow, Window
from engine.policies.profile import Profile
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario


def test_families_are_registered():
    assert {"none", "easy", "conservative"} <= set(registry.families()["backfill"])
    assert registry.families()["admission"] == ["accept-all", "controls", "queue-length-limit"]


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


@pytest.mark.parametrize("key", ["none", "easy", "conservative"])
def test_policies_are_frozen(key):
    policy = registry.make("backfill", key)
    with pytest.raises(AttributeError):
        policy.x = 1


def test_easy_window_is_not_sequential_and_a_skip_changes_nothing():
    window = EasyBackfill().window(6.0, 2.0, np.array([50.0, 30.0, 80.0]), np.array([1.0, 2.0, 3.0]), 0.0,
                                   head_requested_s=40.0)
    assert window == Window(shadow_s=80.0, extra_units=2.0) and window.sequential is False
    assert window.after_skip(0.0, 500.0, 2.0) is window
    assert NoBackfill().window(4.0, 0.0, np.array([10.0]), np.array([4.0]), 0.0, head_requested_s=5.0) is None


def test_conservative_window_is_sequential():
    assert ProfileWindow.sequential is True


# Each case: (head units, free units now, running ends s, running units, now s, head requested s),
# the profile after the head's reservation, then candidates in queue order
# (requested s, units, allowed?, started?), and the profile at the end. Worked out by hand.
CONSERVATIVE_CASES = {
    # 4 units; 1 free; 2 back at 100, 1 more at 200. Head (4 units, 50 s) reserves [200, 250).
    # The 2nd queued job (3 units, 100 s) does not fit now and reserves [100, 200). The 3rd
    # (1 unit, 150 s) ends by EASY's shadow time 200 but would take a unit that job needs at 100:
    # it reserves [250, 400). The 4th (1 unit, 100 s) ends by 100 and starts.
    "protects-the-second-reservation": (
        (4.0, 1.0, [100.0, 200.0], [2.0, 1.0], 0.0, 50.0),
        ([0.0, 100.0, 200.0, 250.0], [1.0, 3.0, 0.0, 4.0]),
        [(100.0, 3.0, False, False), (150.0, 1.0, False, False), (100.0, 1.0, True, True)],
        ([0.0, 100.0, 200.0, 250.0, 400.0], [0.0, 0.0, 0.0, 3.0, 4.0]),
    ),
    # 8 units, 4 free; 4 back at 100. Head (6 units, 100 s) reserves [100, 200), leaving 2 then.
    # 2 units for 300 s start now (2 free over [0, 300) after the head). Then 3 units for 10 s:
    # 2 free now, no start; earliest is 200 (2 free over [100, 200), then 6 until 300).
    "long-small-job-starts-in-the-gap": (
        (6.0, 4.0, [100.0], [4.0], 0.0, 100.0),
        ([0.0, 100.0, 200.0], [4.0, 2.0, 8.0]),
        [(300.0, 2.0, True, True), (10.0, 3.0, False, False), (50.0, 2.0, True, True)],
        ([0.0, 50.0, 100.0, 200.0, 210.0, 300.0], [0.0, 2.0, 0.0, 3.0, 6.0, 8.0]),
    ),
    # A running job past its requested end (40 < now 50) is expected to end now: 4 free at 50.
    # Head (2 units, 100 s) reserves [50, 150). A job wider than the pool (9 of 8) reserves
    # nothing; one allowed that fit on no node (the simulator's finding) reserves now, [50, 70);
    # then 1 unit for 1000 s is refused now and reserves [70, 1070).
    "never-fits-and-allowed-but-unplaced": (
        (2.0, 0.0, [40.0, 150.0], [4.0, 4.0], 50.0, 100.0),
        ([50.0, 150.0], [2.0, 8.0]),
        [(10.0, 9.0, False, False), (20.0, 2.0, True, False), (1000.0, 1.0, False, False)],
        ([50.0, 70.0, 150.0, 1070.0], [0.0, 1.0, 7.0, 8.0]),
    ),
    # The head can never fit (10 of 8 units): no reservation, so a long job fitting now starts;
    # the next (1 unit, 5 s) finds nothing free now and reserves [20, 25).
    "head-never-fits": (
        (10.0, 3.0, [20.0], [5.0], 0.0, 100.0),
        ([0.0, 20.0], [3.0, 8.0]),
        [(1e6, 3.0, True, True), (5.0, 1.0, False, False)],
        ([0.0, 20.0, 25.0, 1e6], [0.0, 4.0, 5.0, 8.0]),
    ),
}


@pytest.mark.parametrize("name", CONSERVATIVE_CASES)
def test_conservative_reservations_by_hand(name):
    args, after_head, candidates, final = CONSERVATIVE_CASES[name]
    head_units, free_units, ends, units, now, head_requested = args
    window = ConservativeBackfill().window(head_units, free_units, np.array(ends), np.array(units), now,
                                           head_requested_s=head_requested)
    assert window.profile == Profile(*after_head)
    for requested, need, allowed, started in candidates:
        assert window.allows(now, np.array([requested]), np.array([need])).tolist() == [allowed]
        window = window.after_start(now, requested, need) if started else window.after_skip(now, requested, need)
    assert window.profile == Profile(*final)


def test_easy_would_backfill_the_job_conservative_refuses():
    ends, units = np.array([100.0, 200.0]), np.array([2.0, 1.0])
    easy = EasyBackfill().window(4.0, 1.0, ends, units, 0.0, head_requested_s=50.0)
    assert easy == Window(200.0, 0.0)
    easy = easy.after_skip(0.0, 100.0, 3.0)
    assert easy.allows(0.0, np.array([150.0]), np.array([1.0])).tolist() == [True]
    conservative = ConservativeBackfill().window(4.0, 1.0, ends, units, 0.0, head_requested_s=50.0)
    conservative = conservative.after_skip(0.0, 100.0, 3.0)
    assert conservative.allows(0.0, np.array([150.0]), np.array([1.0])).tolist() == [False]


def test_conservative_allows_is_vectorised_and_matches_one_by_one():
    window = ConservativeBackfill().window(6.0, 4.0, np.array([100.0]), np.array([4.0]), 0.0,
                                           head_requested_s=100.0)
    requested = np.array([0.0, 100.0, 100.0, 101.0, 5000.0, 5000.0])
    need = np.array([4.0, 4.0, 2.0, 3.0, 2.0, 2.5])
    allowed = window.allows(0.0, requested, need)
    assert allowed.tolist() == [True, True, True, False, True, False]
    assert [bool(window.allows(0.0, r, u)) for r, u in zip(requested, need)] == allowed.tolist()


def test_conservative_head_that_fits_in_units_reserves_now():
    # The head fits in units (placement failed it): it reserves now, like EASY's shadow = now.
    window = ConservativeBackfill().window(3.0, 5.0, np.array([60.0]), np.array([3.0]), 10.0, head_requested_s=20.0)
    assert window.profile == Profile([10.0, 30.0, 60.0], [2.0, 5.0, 8.0])
    assert window.allows(10.0, np.array([1000.0, 1000.0]), np.array([2.0, 3.0])).tolist() == [True, False]


def test_conservative_head_with_unknown_runtime_reserves_for_ever():
    window = ConservativeBackfill().window(4.0, 2.0, np.array([100.0]), np.array([4.0]), 0.0)
    assert window.profile == Profile([0.0, 100.0], [2.0, 2.0])
    assert window.allows(0.0, np.array([1e9]), np.array([2.0])).tolist() == [True]


def test_profile_earliest_and_reserve_with_float_units():
    profile = Profile([0.0, 10.0, 20.0], [0.5, 1.5, 2.5])
    assert profile.earliest(1.5, 100.0) == 10.0
    assert profile.earliest(2.5, 1.0) == 20.0
    assert profile.earliest(2.6, 1.0) == float("inf")
    profile.reserve(10.0, 1.25, 15.0)
    assert profile == Profile([0.0, 10.0, 20.0, 25.0], [0.5, 0.25, 1.25, 2.5])
    assert profile.earliest(1.0, 4.0) == 20.0
    profile.reserve(float("inf"), 1.0, 4.0)
    assert profile == Profile([0.0, 10.0, 20.0, 25.0], [0.5, 0.25, 1.25, 2.5])


def test_profile_gap_before_an_endless_reservation():
    # The head of unknown runtime holds 4 of 6 units from 100 on; a 3-unit job fits only before.
    profile = Profile([0.0, 50.0], [3.0, 6.0])
    profile.reserve(100.0, 4.0, float("inf"))
    assert profile == Profile([0.0, 50.0, 100.0], [3.0, 6.0, 2.0])
    assert profile.earliest(3.0, 100.0) == 0.0
    assert profile.earliest(3.0, 100.5) == float("inf")
    assert profile.earliest(6.0, 50.0) == 50.0


def _lowest_by_definition(times, free, now, length):
    """The fewest units over the steps overlapping [now, now + length), the one holding now included."""
    ends = times[1:] + [float("inf")]
    return float(min(f for s, f, nxt in zip(times, free, ends) if nxt > now and s < now + length or s <= now < nxt))


def _reserve_by_definition(times, free, at, need, length):
    if at == float("inf"):
        return
    for edge in (at, at + max(length, 0.0)):
        if edge != float("inf") and edge not in times:
            i = next((k for k, s in enumerate(times) if s > edge), len(times))
            times.insert(i, edge)
            free.insert(i, free[i - 1])
    for k, s in enumerate(times):
        if at <= s < at + max(length, 0.0):
            free[k] -= need


def test_400_random_reservations_match_the_definitions():
    rng = np.random.default_rng(4)
    profile = Profile.expected(0.0, 2.0, rng.uniform(0, 500, 40).round(), rng.integers(1, 4, 40).astype(float))
    times, free = profile.times.tolist(), profile.free.tolist()
    needs = rng.integers(0, 12, 400).astype(float)
    needs[::50] = 1e6                                   # more than the pool ever has
    answers = []
    for need, length in zip(needs, rng.uniform(0, 300, 400).round()):
        at = profile.earliest(need, length)
        assert at == _earliest_by_definition(times, free, need, length)
        assert profile.lowest(0.0, np.array([length, length / 2])).tolist() == [
            _lowest_by_definition(times, free, 0.0, length), _lowest_by_definition(times, free, 0.0, length / 2)]
        assert profile.lowest_one(length / 3, length) == _lowest_by_definition(times, free, length / 3, length)
        profile.reserve(at, need, length)
        _reserve_by_definition(times, free, at, need, length)
        assert profile == Profile(times, free)
        answers.append(at)
    assert len(times) > 256  # the arrays grew many times over
    assert any(at == float("inf") for at in answers) and any(at > 0 for at in answers)


def _earliest_by_definition(times, free, need, length_s):
    """The first step start t from which every step overlapping [t, t + length_s) has `need` free."""
    for i, t in enumerate(times):
        if all(f >= need for s, f in zip(times[i:], free[i:]) if s < t + max(length_s, 0.0) or s == t):
            return t
    return float("inf")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(0, 6)), min_size=1, max_size=30),
       st.integers(0, 7), st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1e9, float("inf")]))
def test_profile_earliest_and_lowest_match_their_definitions(steps, need, length):
    # small gaps and lengths, so that runs often end exactly on a step (the boundary cases)
    times = np.cumsum([0] + [gap for gap, _ in steps[1:]]).astype(float).tolist()
    free = [units for _, units in steps]
    profile = Profile(times, free)
    assert profile.earliest(need, length) == _earliest_by_definition(times, free, need, length)
    for now in (*times[:3], times[-1] / 2, times[-1] + 1.0):
        covered = [f for s, f, nxt in zip(times, free, times[1:] + [float("inf")]) if nxt > now and s < now + length
                   or s <= now < nxt]
        assert profile.lowest(now, np.array([length])).tolist() == [float(min(covered))]


def test_profile_expected_sorts_ends_and_clamps_past_ones_to_now():
    profile = Profile.expected(50.0, 1.0, np.array([300.0, 20.0, 100.0, 100.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert profile == Profile([50.0, 100.0, 300.0], [3.0, 10.0, 11.0])
    assert Profile.expected(0.0, 2, np.zeros(0), np.zeros(0, np.int64)) == Profile([0.0], [2])


def test_conservative_in_the_simulator_protects_the_second_queued_job():
    # One 4-GPU node: 2 GPUs busy until 100, 1 until 200. Queue: head j2 (4 GPUs, 50 s), j3 (3 GPUs,
    # 100 s), j4 (1 GPU, 150 s). EASY backfills j4 at 3 (it ends by the shadow time 200), which
    # pushes j3 behind the head; conservative refuses j4 (it would hold a GPU j3 needs at 100),
    # so j3 starts at 100 in the gap before the head's reservation and j4 waits until 250.
    jobs = [job(0, 0, 100, 2), job(1, 0, 200, 1), job(2, 1, 50, 4), job(3, 2, 100, 3), job(4, 3, 150, 1)]
    assert starts(run(jobs, fleet(4), backfill="easy")) == [0.0, 0.0, 200.0, 250.0, 3.0]
    assert starts(run(jobs, fleet(4), backfill="conservative")) == [0.0, 0.0, 200.0, 100.0, 250.0]


@pytest.mark.parametrize("max_job_test, expected", [(0, [0.0, 100.0, 150.0, 3.0]), (2, [0.0, 100.0, 150.0, 3.0]),
                                                     (1, [0.0, 100.0, 150.0, 150.0])])
def test_conservative_considers_only_max_job_test_jobs_behind_the_head(max_job_test, expected):
    # One 4-GPU node: j0 holds 2 until 100. Head j1 (4 GPUs, 50 s) reserves 100-150, j2 (3 GPUs,
    # 100 s) 150-250; j3 (1 GPU, 50 s) fits now beside j0 and delays no one: backfilled at 3 when
    # the pass looks at two jobs behind the head (or all), not when it looks at one (Slurm's
    # bf_max_job_test): then j3 waits until j2 starts at 150 and starts beside it.
    jobs = [job(0, 0, 100, 2), job(1, 1, 50, 4), job(2, 2, 100, 3), job(3, 3, 50, 1)]
    spec = {"name": "t", "policies": {"backfill": {"key": "conservative", "max_job_test": max_job_test}}}
    assert starts(run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), fleet(4))) == expected


def test_max_job_test_cannot_be_negative():
    with pytest.raises(ValueError, match="max_job_test must be from 0 to .*, got -1"):
        registry.make("backfill", "conservative", max_job_test=-1)


def test_easy_window_from_the_earliest_ends_matches_sorting_them_all(monkeypatch):
    """With more running jobs than EARLIEST, EASY sorts the earliest ends first; equal ends (earlier
    slot first) and heads those cannot satisfy give the window of the full sort."""
    from engine.policies import backfill as backfill_module
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(200):
        n = int(rng.integers(1, 300))
        ends = rng.integers(0, 40, n).astype(float) * 10.0         # many equal ends
        units = rng.choice([1.0, 2.0, 4.0, 8.0], n)
        cases.append((float(rng.uniform(0, units.sum() * 1.2)), float(rng.integers(0, 3)), ends, units))
    windows = [EasyBackfill().window(head, free, ends, units, 5.0) for head, free, ends, units in cases]
    monkeypatch.setattr(backfill_module, "EARLIEST", 10**9)
    assert windows == [EasyBackfill().window(head, free, ends, units, 5.0) for head, free, ends, units in cases]
    assert any(w.shadow_s == float("inf") for w in windows) and any(w.extra_units > 0 for w in windows)
