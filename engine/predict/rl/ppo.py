"""Proximal policy optimisation (Schulman et al., 2017) of the kernel policy, in numpy.

The clipped surrogate loss, the critic's squared error, an optional entropy bonus, advantages by
generalised advantage estimation (gamma and lambda), and `update`: several passes of shuffled
minibatches over one batch of trajectories (experience reused for sample efficiency), each
minibatch one Adam step of the policy and one of the critic, stopping early once the policy has
moved too far from the one that collected the batch (approximate KL above 1.5 x target_kl, as
RLScheduler's PPO does). Everything is float64 and seeded: the same batch, weights and seed give
the same update.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from engine.policies.kernel_net import KernelNet, critic_forward, policy_forward, segment_log_softmax
from engine.predict.rl.adam import Adam
from engine.predict.rl.gradients import critic_gradient, policy_gradient


@dataclass(frozen=True)
class PPOSettings:
    """clip: the ratio's clip range; pi_lr, vf_lr: Adam's step sizes of the policy and the critic
    (RLScheduler's 3e-4 and 1e-3); passes: passes over a batch; minibatch: decisions per step;
    target_kl: stop the passes once the approximate KL passes 1.5 x this; ent_coef: entropy bonus;
    gamma, lam: discount and GAE lambda (RLScheduler: 1 and 0.97)."""

    clip: float = 0.2
    pi_lr: float = 3e-4
    vf_lr: float = 1e-3
    passes: int = 4
    minibatch: int = 1024
    target_kl: float = 0.01
    ent_coef: float = 0.0
    gamma: float = 1.0
    lam: float = 0.97

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Batch:
    """Decisions with their job rows (ragged): rows (R, features), as the network sees them
    (engine.policies.kernel_net.KernelNet.inputs); starts (B,), each decision's first
    row; actions (B,), the chosen row (an index into rows); old_logp (B,), its log-probability under
    the policy that chose it; advantages and returns (B,)."""

    rows: np.ndarray
    starts: np.ndarray
    actions: np.ndarray
    old_logp: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    def take(self, decisions: np.ndarray) -> Batch:
        """The decisions at `decisions`, in that order, with their rows."""
        counts = np.diff(np.append(self.starts, len(self.rows)))[decisions]
        new_starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        rows = np.repeat(self.starts[decisions] - new_starts, counts) + np.arange(counts.sum())
        actions = self.actions[decisions] - self.starts[decisions] + new_starts
        return Batch(self.rows[rows], new_starts, actions, self.old_logp[decisions], self.advantages[decisions],
                     self.returns[decisions])


def gae(values: np.ndarray, reward: float, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(advantages, returns) of one episode whose only reward comes after its last decision."""
    n = len(values)
    rewards = np.zeros(n)
    rewards[-1] = reward
    next_values = np.append(values[1:], 0.0)
    deltas = rewards + gamma * next_values - values
    advantages = np.zeros(n)
    running = 0.0
    for t in range(n - 1, -1, -1):
        running = deltas[t] + gamma * lam * running
        advantages[t] = running
    returns = reward * gamma ** np.arange(n - 1, -1, -1)
    return advantages, returns


def losses(net: KernelNet, batch: Batch, settings: PPOSettings) -> tuple[dict, list[np.ndarray], list[np.ndarray]]:
    """({pi_loss, v_loss, kl, entropy, clipfrac}, policy gradients, critic gradients) on `batch`."""
    n = len(batch)
    logits, acts = policy_forward(net.policy, batch.rows)
    logp_all = segment_log_softmax(logits, batch.starts)
    p = np.exp(logp_all)
    counts = np.diff(np.append(batch.starts, len(batch.rows)))
    logp = logp_all[batch.actions]
    ratio = np.exp(logp - batch.old_logp)
    adv = batch.advantages
    surrogate = ratio * adv
    clipped = np.clip(ratio, 1 - settings.clip, 1 + settings.clip) * adv
    entropy = -np.add.reduceat(p * logp_all, batch.starts)
    pi_loss = -np.mean(np.minimum(surrogate, clipped)) - settings.ent_coef * np.mean(entropy)
    # d pi_loss / d logp(action): only where the unclipped term is the smaller one
    g_logp = -np.where(surrogate <= clipped, ratio * adv, 0.0) / n
    g_logits = -np.repeat(g_logp, counts) * p
    g_logits[batch.actions] += g_logp
    if settings.ent_coef:
        g_logits += settings.ent_coef / n * p * (logp_all + np.repeat(entropy, counts))
    values, cache = critic_forward(net.critic, batch.rows, batch.starts)
    v_loss = np.mean((values - batch.returns) ** 2)
    stats = {"pi_loss": float(pi_loss), "v_loss": float(v_loss), "kl": float(np.mean(batch.old_logp - logp)),
             "entropy": float(np.mean(entropy)), "clipfrac": float(np.mean(np.abs(ratio - 1) > settings.clip))}
    return (stats, policy_gradient(net.policy, acts, g_logits),
            critic_gradient(net.critic, cache, 2 * (values - batch.returns) / n))


def update(net: KernelNet, batch: Batch, settings: PPOSettings, pi_opt: Adam, v_opt: Adam,
           rng: np.random.Generator) -> tuple[KernelNet, dict]:
    """The weights after PPO's passes over `batch` (see the module docstring), and what happened:
    the losses and entropy before, the KL of the last pass, and the passes and Adam steps taken."""
    before, _, _ = losses(net, batch, settings)
    steps = passes = 0
    kl = 0.0
    for _ in range(settings.passes):
        order = rng.permutation(len(batch))
        seen = []
        for lo in range(0, len(order), settings.minibatch):
            part = batch.take(np.sort(order[lo:lo + settings.minibatch]))
            stats, g_pi, g_v = losses(net, part, settings)
            seen.append((stats["kl"], len(part)))
            net = KernelNet(tuple(pi_opt.step(list(net.policy), g_pi)), tuple(v_opt.step(list(net.critic), g_v)),
                            net.log_inputs)
            steps += 1
        passes += 1
        # the minibatches' KL as each was met (RLScheduler's early stop reads the KL before each step)
        kl = float(sum(k * n for k, n in seen) / len(batch))
        if kl > 1.5 * settings.target_kl:
            break
    return net, {"pi_loss": before["pi_loss"], "v_loss": before["v_loss"], "kl": kl,
                 "entropy": before["entropy"], "clipfrac": stats["clipfrac"], "passes": passes, "steps": steps}
