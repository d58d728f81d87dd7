"""The agent without a deep-learning framework: hand-written gradients against finite differences,
a seeded training run that is deterministic for any number of workers and resumes exactly, checkpoints
and agents that round-trip to identical decisions, and the learned order in the simulator."""
from dataclasses import replace

import numpy as np
import pytest
from rl_helpers import random_log

from engine.core.views import QueueView, ShareView
from engine.policies.kernel_net import KernelNet, initial, scores
from engine.policies.ordering import queue_order
from engine.policies.registry import make, parameters
from engine.policies.rl_agent import Agent, AgentError, agent_bytes, agent_of, packaged, packaged_names
from engine.predict.rl.adam import Adam
from engine.predict.rl.agent_registry import AgentRegistry
from engine.predict.rl.imitation import imitate, imitation_loss
from engine.predict.rl.ppo import Batch, PPOSettings, gae, losses
from engine.service.rl.checkpoint import state_bytes, state_of
from engine.service.rl.env import scales_of
from engine.service.rl.rollout import Collector
from engine.service.rl.session import TrainingError, train_agent
from engine.service.rl.train import TrainSettings, train

TINY = TrainSettings(backfill="compat", epochs=2, trajectories=4, group=2, length=24, imitation_windows=2,
                     imitation_steps=3, ppo=PPOSettings(minibatch=64, passes=2))


def _batch(rng, width=8):
    counts = np.array([3, 1, 5, 2, 4, 6])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    actions = starts + np.array([1, 0, 4, 1, 2, 5])
    return Batch(np.log(rng.random((counts.sum(), width)) + 1e-3), starts, actions,
                 -np.log(counts) + rng.normal(0, 0.3, len(counts)), rng.normal(size=len(counts)),
                 rng.normal(size=len(counts)))


def _numeric(loss, arrays, k, idx, eps=1e-6):
    plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
    plus[k][idx] += eps
    minus[k][idx] -= eps
    return (loss(plus) - loss(minus)) / (2 * eps)


@pytest.mark.parametrize("ent_coef,clip", [(0.0, 0.2), (0.01, 0.05)])
def test_ppo_gradients_match_finite_differences(ent_coef, clip):
    rng = np.random.default_rng(4)
    net, batch = initial(8, rng), _batch(rng)
    settings = PPOSettings(ent_coef=ent_coef, clip=clip)
    _, g_pi, g_v = losses(net, batch, settings)
    arrays, grads = net.arrays(), g_pi + g_v
    for k, array in enumerate(arrays):
        key = "pi_loss" if k < len(net.policy) else "v_loss"
        for idx in list(np.ndindex(array.shape))[::7]:
            numeric = _numeric(lambda a: losses(net.with_arrays(a), batch, settings)[0][key], arrays, k, idx)
            assert grads[k][idx] == pytest.approx(numeric, abs=1e-7, rel=1e-5), (k, idx)


def test_imitation_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    net, batch = initial(8, rng), _batch(rng)
    _, _, grads = imitation_loss(net, batch)
    arrays = net.arrays()
    for k in range(len(net.policy)):
        for idx in list(np.ndindex(arrays[k].shape))[::5]:
            numeric = _numeric(lambda a: imitation_loss(net.with_arrays(a), batch)[0], arrays, k, idx)
            assert grads[k][idx] == pytest.approx(numeric, abs=1e-7, rel=1e-5)


def test_imitation_on_minibatches_learns_the_teachers_rows():
    rng = np.random.default_rng(6)
    net, batch = initial(8, rng), _batch(rng)
    start = imitation_loss(net, batch)[0]
    on_minibatches, history = imitate(net, batch, 60, minibatch=3, rng=np.random.default_rng(0))
    taught, _ = imitate(net, batch, 60)
    assert len(history) == 60 and imitation_loss(on_minibatches, batch)[0] < start
    assert imitation_loss(taught, batch)[0] < start and imitation_loss(taught, batch)[1] == 1.0


def test_adam_and_gae_by_hand():
    opt = Adam(0.1)
    (p,) = opt.step([np.array([1.0, -2.0])], [np.array([0.5, -3.0])])
    assert np.allclose(p, [0.9, -1.9])                   # the first step is lr x sign(gradient)
    adv, ret = gae(np.array([0.5, 0.2, -0.1]), 1.0, 1.0, 0.5)
    deltas = np.array([0.2 - 0.5, -0.1 - 0.2, 1.0 + 0.1])
    assert np.allclose(adv, [deltas[0] + 0.5 * deltas[1] + 0.25 * deltas[2], deltas[1] + 0.5 * deltas[2], deltas[2]])
    assert np.allclose(ret, 1.0)


@pytest.fixture(scope="module")
def log():
    return random_log(300, 8)


def _trained(log, settings=TINY, workers=1, state=None):
    collector = Collector({"jobs": log, "backfill": settings.backfill, "length": settings.length}, workers)
    try:
        return train(collector, np.arange(0, 250, 5), settings, state)
    finally:
        collector.close()


def test_a_seeded_run_is_deterministic_for_any_number_of_workers_and_resumes_exactly(log):
    one, again, two = _trained(log), _trained(log), _trained(log, workers=2)
    for other in (again, two):
        assert all(np.array_equal(a, b) for a, b in zip(one.net.arrays(), other.net.arrays()))
        assert [{k: v for k, v in p.items() if k != "seconds"} for p in one.curve] == \
               [{k: v for k, v in p.items() if k != "seconds"} for p in other.curve]
    assert [p["epoch"] for p in one.curve] == [0, 1, 2] and one.curve[0]["imitated"] == "f1"
    first = _trained(log, replace(TINY, epochs=1))
    resumed = _trained(log, TINY, state=state_of(state_bytes(first)))
    assert all(np.array_equal(a, b) for a, b in zip(one.net.arrays(), resumed.net.arrays()))
    assert resumed.pi_opt.t == one.pi_opt.t and resumed.decisions == one.decisions
    assert resumed.best_epoch == one.best_epoch and all(np.array_equal(a, b) for a, b in
                                                         zip(one.kept.arrays(), resumed.kept.arrays()))
    best = max(one.curve, key=lambda p: p["validation_reward"])    # the kept weights scored best on validation
    assert one.best_epoch == best["epoch"] and one.best_score == best["validation_reward"]
    different = _trained(log, replace(TINY, seed=1))
    assert not np.array_equal(one.net.policy[0], different.net.policy[0])


def test_an_agent_round_trips_to_identical_decisions(log, tmp_path):
    net = _trained(log).net
    agent = Agent("tiny", net, "rlscheduler", scales_of(log), "compat")
    back = agent_of(agent_bytes(agent), "memory")
    rows = np.random.default_rng(1).random((50, 8))
    assert np.array_equal(scores(back.net, rows), scores(net, rows)) and back.scales == agent.scales
    registry = AgentRegistry(tmp_path / "agents")
    version = registry.publish(agent, {"settings": TINY.as_dict()})
    assert version.number == 1 and registry.agents() == ["tiny"]
    assert np.array_equal(scores(registry.load("tiny").net, rows), scores(net, rows))
    assert registry.publish(agent, {}).number == 2 and registry.version("tiny", 1).meta["settings"]["seed"] == 0
    with pytest.raises(AgentError, match="not a Meridian agent"):
        agent_of(b"not an archive", "junk.npz")


def test_a_stored_run_resumes_only_on_the_same_log(log, tmp_path):
    registry = AgentRegistry(tmp_path / "agents")
    with pytest.raises(TrainingError, match="no interrupted run"):
        train_agent(registry, "tiny", log, resume=True)
    settings = replace(TINY, epochs=1)
    registry.save_training("tiny", state_bytes(_trained(log, settings)), {"digest": "other", "source": "x.swf",
                                                                             "settings": settings.as_dict(), "epoch": 1})
    with pytest.raises(TrainingError, match="trained on other data"):
        train_agent(registry, "tiny", log, resume=True)


def test_the_packaged_agents_load_and_order_a_queue_in_the_simulator():
    assert {"lublin-1", "lublin-1-backfill"} <= set(packaged_names())
    agent = packaged("lublin-1")
    assert agent.net.parameter_count()[0] == 961 and agent.features == "rlscheduler"
    policy = make("order", "rl")
    assert [p.name for p in parameters("order", "rl")] == ["model"]
    n = 40
    rng = np.random.default_rng(2)
    queue = QueueView.of(np.sort(rng.uniform(0, 1000, n)), rng.uniform(10, 5000, n), rng.integers(1, 9, n) * 1.0,
                         shares=ShareView.single(capacity_gpus=16.0))
    order = queue_order(policy, queue, 1500.0)
    assert sorted(order.tolist()) == list(range(n))
    assert np.array_equal(order, queue_order(make("order", "rl", model="lublin-1"), queue, 1500.0))
    with pytest.raises(Exception, match="not packaged"):
        make("order", "rl", model="nobody").keys(queue, 0.0)
    bound = make("order", "rl", model="mine", agent=replace(agent, name="mine"))
    assert np.array_equal(queue_order(bound, queue, 1500.0), order)
    assert isinstance(agent.net, KernelNet)
