"""Imitation of a heuristic's picks: the cross-entropy of the kernel policy against a teacher's choices.

Used to start PPO from a policy that already schedules like a published heuristic instead of from
random weights (`meridian rl train --imitate f1`): the same masked softmax and hand-written
gradients as PPO (engine/predict/rl/gradients.py), the loss -mean log p(the teacher's row),
Adam steps on the whole batch or on shuffled minibatches.
"""
from __future__ import annotations

import numpy as np

from engine.policies.kernel_net import KernelNet, policy_forward, segment_log_softmax
from engine.predict.rl.adam import Adam
from engine.predict.rl.gradients import policy_gradient
from engine.predict.rl.ppo import Batch


def imitation_loss(net: KernelNet, batch: Batch) -> tuple[float, float, list[np.ndarray]]:
    """(cross-entropy, share of decisions where the policy's top row is the teacher's, policy gradients).
    `batch.actions` are the teacher's rows; the other fields of `batch` are not read."""
    n = len(batch)
    logits, acts = policy_forward(net.policy, batch.rows)
    logp_all = segment_log_softmax(logits, batch.starts)
    g_logits = np.exp(logp_all) / n
    g_logits[batch.actions] -= 1.0 / n
    top = np.maximum.reduceat(logits, batch.starts)
    agree = float(np.mean(logits[batch.actions] >= top))
    return float(-np.mean(logp_all[batch.actions])), agree, policy_gradient(net.policy, acts, g_logits)


def imitate(net: KernelNet, batch: Batch, steps: int, lr: float = 1e-2, minibatch: int = 0,
            rng: np.random.Generator | None = None) -> tuple[KernelNet, list[dict]]:
    """The policy after `steps` Adam steps down the cross-entropy (the critic unchanged), and the loss
    and agreement before each step (on the step's decisions). `minibatch` > 0: each step takes the next
    `minibatch` decisions of a shuffled pass (`rng`), far cheaper per step than the whole batch."""
    opt = Adam(lr)
    history, order, at = [], np.arange(0), 0
    for _ in range(steps):
        part = batch
        if minibatch:
            if at >= len(order):
                order, at = rng.permutation(len(batch)), 0
            part, at = batch.take(np.sort(order[at:at + minibatch])), at + minibatch
        loss, agree, grads = imitation_loss(net, part)
        history.append({"loss": loss, "agreement": agree})
        net = KernelNet(tuple(opt.step(list(net.policy), grads)), net.critic, net.log_inputs)
    return net, history
