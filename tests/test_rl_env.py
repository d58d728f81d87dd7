"""The scheduling environment: hand-built sequences worked out by hand (observations, masks, rewards),
Gymnasium's own checker, and RLScheduler's published SJF column replayed by a policy picking SJF's job."""
import numpy as np
import pytest
from conftest import TRACES, shared
from gymnasium.utils.env_checker import check_env
from rl_helpers import random_log, swf_text
from test_rlscheduler import published

from engine.policies.kernel_net import SLOTS
from engine.policies.rl_features import NEAR_ONE, NEAR_ZERO, PADDING
from engine.service.experiments import rlscheduler as rls
from engine.service.experiments.swf_jobs import load_swf_jobs, parse_swf_jobs
from engine.service.rl.env import SchedulingEnv
from engine.service.rl.reward import Reward, jain_index

# (submit, run, processors, requested, user, group) on 4 one-processor nodes
HAND = [(0, 100, 4, 100, 1, 1), (10, 50, 2, 50, 2, 1), (20, 10, 1, 10, 3, 2), (30, 200, 3, 200, 4, 2)]


@pytest.fixture(scope="module")
def hand():
    return parse_swf_jobs(swf_text(HAND, 4).encode(), "hand.swf")


def _env(log, backfill="none", reward=Reward()):
    return SchedulingEnv(log, backfill=backfill, reward=reward, starts=[0], length=len(log))


def _row(wait_s, requested_s, procs, user, group, fits):
    """A feature row worked out by hand: the log's longest run is 200 s, 4 processors, 4 users, 2 groups."""
    return [min(wait_s / 43200, NEAR_ONE), min(requested_s / 200, NEAR_ONE), min(procs / 4, NEAR_ONE), 1.0,
            min(user / 4, NEAR_ONE), min(group / 2, NEAR_ONE), 1.0, NEAR_ONE if fits else NEAR_ZERO]


def test_observations_masks_and_reward_of_a_hand_built_sequence(hand):
    env = _env(hand)
    obs, info = env.reset(options={"start": 0})
    assert obs.shape == (SLOTS, 8) and info["action_mask"].tolist() == [1] + [0] * (SLOTS - 1)
    assert np.allclose(obs[0], _row(0, 100, 4, 1, 1, True)) and np.allclose(obs[1:], PADDING)
    obs, reward, done, _, info = env.step(0)            # job 1 starts at 0; job 2 arrives at 10, no room
    assert (reward, done) == (0.0, False)
    assert np.allclose(obs[0], _row(0, 50, 2, 2, 1, False)) and info["action_mask"].sum() == 1
    obs, reward, done, _, info = env.step(0)            # job 2 waits for job 1's end at 100; 3 and 4 arrive
    assert env.replay.now_s == 100 and info["action_mask"].sum() == 2
    assert np.allclose(obs[:2], [_row(80, 10, 1, 3, 2, True), _row(70, 200, 3, 4, 2, False)])
    obs, reward, done, _, info = env.step(1)            # job 4 (3 processors) waits for job 2's end at 150
    assert not done and np.allclose(obs[0], _row(130, 10, 1, 3, 2, True))
    obs, reward, done, _, info = env.step(0)
    # waits 0, 90, 130, 120 s: bounded slowdowns 1, 2.8, 14, 1.6
    assert done and reward == pytest.approx(-(1 + 2.8 + 14 + 1.6) / 4)
    assert info["avg_bounded_slowdown"] == pytest.approx(4.85)
    assert info["utilization"] == pytest.approx((400 + 100 + 10 + 600) / (150 * 4))   # RLScheduler's definition
    assert info["wait_p95_s"] == pytest.approx(np.percentile([0, 90, 130, 120], 95))
    x = np.array([1 / 1.9, 1 / 7.8])                    # 1 / each group's mean bounded slowdown
    assert info["jain_index"] == pytest.approx(x.sum() ** 2 / (2 * np.square(x).sum()))
    assert np.allclose(obs, PADDING) and info["action_mask"].sum() == 0


def test_the_short_job_first_and_the_published_backfilling_start_it_as_worked_out(hand):
    env = _env(hand)
    env.reset(options={"start": 0})
    env.step(0), env.step(0)
    *_, done, _, info = env.step(0)                      # the 10 s job first at 100, then job 4 at 150
    assert not done
    *_, done, _, info = env.step(0)
    assert done and info["avg_bounded_slowdown"] == pytest.approx((1 + 2.8 + 9 + 1.6) / 4)
    env = _env(hand, "compat")
    env.reset(options={"start": 0})
    env.step(0), env.step(0)
    *_, done, _, info = env.step(1)                      # job 4 blocks: the 10 s job ends before the shadow (150)
    assert done and env.decisions == 3 and info["avg_bounded_slowdown"] == pytest.approx((1 + 2.8 + 9 + 1.6) / 4)


def test_rewards_are_configurable_and_a_padding_action_picks_the_first_row(hand):
    scores = {"avg_bounded_slowdown": 4.0, "utilization": 0.8, "wait_p95_s": 21600.0, "jain_index": 0.9}
    assert Reward("bsld").of(scores) == -4.0 and Reward("utilization").of(scores) == 0.8
    assert Reward("balance", 2.0, 1.0, 0.5).of(scores) == pytest.approx(1.6 - 0.5 + 0.45)
    with pytest.raises(ValueError, match="reward must be one of"):
        Reward("makespan")
    with pytest.raises(ValueError, match="w_wait"):
        Reward("balance", w_wait=-1.0)
    assert jain_index(np.array([2.0, 2.0, 5.0]), None) == 1.0
    env = _env(hand)
    env.reset(options={"start": 0})
    env.step(0), env.step(0)
    before = env.visible.copy()
    env.step(SLOTS - 1)                                  # padding: the first visible job (the oldest) is picked
    assert env.replay.start_s[before[0]] == 100.0


def test_gymnasium_env_checker_passes_and_resets_are_seeded():
    log = random_log(300, 8)
    env = SchedulingEnv(log, length=32)
    check_env(env, skip_render_check=True)
    first = env.reset(seed=7)[1]["start"]
    assert env.reset(seed=7)[1]["start"] == first


def test_the_observation_shows_every_heuristic_first_choice_when_more_than_128_wait():
    log = random_log(600, 4, seed=3)                     # 4 nodes: the queue grows past 128
    env = SchedulingEnv(log, length=600, starts=[0])
    obs, info = env.reset(options={"start": 0})
    seen = 0
    while True:
        members = env.replay.queue.members
        if len(members) > SLOTS:
            seen += 1
            seq, visible = env.sequence, set((env.visible - env.start).tolist())
            sjf = members[np.lexsort((members, seq.submit_s[members], seq.requested_s[members]))[0]]
            fcfs = members[np.lexsort((members, seq.submit_s[members]))[0]]
            assert {int(sjf), int(fcfs)} <= visible and info["action_mask"].sum() == SLOTS
        obs, _, done, _, info = env.step(0)
        if done:
            break
    assert seen > 10


@shared("traces/swf/lublin_256.swf", "expected/rlscheduler_lublin1_published.csv")
@pytest.mark.parametrize("mode", ["none", "compat"])
def test_a_policy_picking_sjfs_job_replays_sjfs_published_column_exactly(mode):
    jobs = load_swf_jobs(TRACES / "swf" / "lublin_256.swf")
    env = SchedulingEnv(jobs, backfill=mode)
    expected = published()
    for start in rls.START_INDICES:
        env.reset(options={"start": start, "length": rls.SEQUENCE_LENGTH})
        done = False
        while not done:
            seq, visible = env.sequence, env.visible - env.start
            _, _, done, _, info = env.step(int(np.lexsort((visible, seq.submit_s[visible], seq.requested_s[visible]))[0]))
        want = expected[("SJF", mode, start)]
        assert info["avg_bounded_slowdown"] == pytest.approx(want["avg_bounded_slowdown"], abs=1e-6)
        assert info["utilization"] == pytest.approx(want["utilization"], abs=1e-6)
