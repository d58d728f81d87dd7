"""RLScheduler's permutation-invariant kernel network and a pooled critic, as numpy forward passes.

The policy scores every waiting job with the same small dense network (features -> 32 -> 16 -> 8 ->
1, ReLU between; 961 parameters for 8 features), so the score of a job does not depend on where it
sits in the queue, and a masked softmax over the jobs' scores is the policy. The critic applies a
kernel of its own to every job (features -> 16, ReLU: cheap, as it sees every row), pools the rows of one decision by
mean and by max, adds the share of the 128 slots in use, and maps that through 32 ReLU units to
one value; it too is blind to the order of the rows.

With `log_inputs` (the default) both networks see the logarithm of the features rather than the
features: RLScheduler divides runtimes by the log's longest (over a day on Lublin-1), so a 10 s and
a 1,000 s job differ by 0.006 in the observation, and a network fed that learns to tell them
apart only after very many updates; ln(feature + 0.001) spreads them over several units. The
layers, the masked softmax and the observation are RLScheduler's; `log_inputs=False` is its
network exactly.

A batch is ragged: the rows of every decision, decision after decision, with `starts` the first
row of each decision (every decision has at least one row). Forward passes return the activations
the hand-written gradients (engine/predict/rl/gradients.py) need.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

POLICY_UNITS = (32, 16, 8, 1)
CRITIC_KERNEL_UNITS = (16,)
CRITIC_HEAD_UNITS = 32
SLOTS = 128
INPUT_FLOOR = 1e-3   # ln(x + 1e-3): features span 1e-5 to 1; their logarithms spread runtimes and sizes
KERNEL_ARRAYS = 2 * len(CRITIC_KERNEL_UNITS)   # the critic's kernel weights come first


@dataclass(frozen=True)
class KernelNet:
    """The policy's and the critic's weights: policy (W1, b1, ..., W4, b4); critic (kernel W1, b1,
    head H1, c1, H2, c2). Arrays are float64."""

    policy: tuple[np.ndarray, ...]
    critic: tuple[np.ndarray, ...]
    log_inputs: bool = True

    def inputs(self, rows: np.ndarray) -> np.ndarray:
        """What the first layers see: ln(feature + INPUT_FLOOR) with `log_inputs`, else the features."""
        return np.log(rows + INPUT_FLOOR) if self.log_inputs else rows

    @property
    def width(self) -> int:
        """Features per job."""
        return int(self.policy[0].shape[0])

    def arrays(self) -> list[np.ndarray]:
        return [*self.policy, *self.critic]

    def with_arrays(self, arrays: list[np.ndarray]) -> KernelNet:
        k = len(self.policy)
        return KernelNet(tuple(arrays[:k]), tuple(arrays[k:]), self.log_inputs)

    def parameter_count(self) -> tuple[int, int]:
        return sum(a.size for a in self.policy), sum(a.size for a in self.critic)


def initial(width: int, rng: np.random.Generator, log_inputs: bool = True) -> KernelNet:
    """Glorot-uniform weights and zero biases (TensorFlow's dense-layer defaults, which RLScheduler used)."""
    def dense(n_in: int, n_out: int) -> list[np.ndarray]:
        limit = np.sqrt(6.0 / (n_in + n_out))
        return [rng.uniform(-limit, limit, (n_in, n_out)), np.zeros(n_out)]

    policy, n_in = [], width
    for units in POLICY_UNITS:
        policy += dense(n_in, units)
        n_in = units
    critic, n_in = [], width
    for units in CRITIC_KERNEL_UNITS:
        critic += dense(n_in, units)
        n_in = units
    critic += dense(2 * n_in + 1, CRITIC_HEAD_UNITS) + dense(CRITIC_HEAD_UNITS, 1)
    return KernelNet(tuple(policy), tuple(critic), log_inputs)


def _relu_layers(weights: tuple[np.ndarray, ...], x: np.ndarray, last_linear: bool) -> list[np.ndarray]:
    """Activations of dense layers (pairs W, b), ReLU after each but the last when `last_linear`."""
    acts = [x]
    pairs = len(weights) // 2
    for k in range(pairs):
        z = acts[-1] @ weights[2 * k] + weights[2 * k + 1]
        acts.append(z if (last_linear and k == pairs - 1) else np.maximum(z, 0.0))
    return acts


def policy_forward(policy: tuple[np.ndarray, ...], rows: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """(one score per row, the activations)."""
    acts = _relu_layers(policy, rows, last_linear=True)
    return acts[-1][:, 0], acts


def scores(net: KernelNet, rows: np.ndarray) -> np.ndarray:
    """The policy's score of every job row (features as observed; higher: picked more likely)."""
    return policy_forward(net.policy, net.inputs(rows))[0] if len(rows) else np.zeros(0)


def segment_log_softmax(logits: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """log p of every row within its decision (rows `starts[b]` up to the next start)."""
    top = np.maximum.reduceat(logits, starts)
    counts = np.diff(np.append(starts, len(logits)))
    shifted = logits - np.repeat(top, counts)
    log_sum = np.log(np.add.reduceat(np.exp(shifted), starts))
    return shifted - np.repeat(log_sum, counts)


@dataclass
class CriticCache:
    """What the critic's gradient needs from its forward pass."""

    kernel: list[np.ndarray]
    pooled: np.ndarray
    head: list[np.ndarray]
    counts: np.ndarray
    argmax_rows: np.ndarray


def critic_forward(critic: tuple[np.ndarray, ...], rows: np.ndarray, starts: np.ndarray
                   ) -> tuple[np.ndarray, CriticCache]:
    """(one value per decision, the activations)."""
    kernel = _relu_layers(critic[:KERNEL_ARRAYS], rows, last_linear=False)
    h = kernel[-1]
    counts = np.diff(np.append(starts, len(rows)))
    mean = np.add.reduceat(h, starts, axis=0) / counts[:, None]
    top = np.maximum.reduceat(h, starts, axis=0)
    # the row holding each decision's maximum of each unit (the first of equal ones): where max's gradient goes
    offsets = np.repeat(starts, counts)
    is_top = h == np.repeat(top, counts, axis=0)
    local = np.where(is_top, (np.arange(len(rows)) - offsets)[:, None], np.iinfo(np.int64).max)
    argmax_rows = np.minimum.reduceat(local, starts, axis=0) + starts[:, None]
    pooled = np.hstack([mean, top, (counts / SLOTS)[:, None]])
    head = _relu_layers(critic[KERNEL_ARRAYS:], pooled, last_linear=True)
    return head[-1][:, 0], CriticCache(kernel, pooled, head, counts, argmax_rows)


def value(net: KernelNet, rows: np.ndarray) -> float:
    """The critic's value of one decision's rows (features as observed)."""
    return float(critic_forward(net.critic, net.inputs(rows), np.array([0]))[0][0])
