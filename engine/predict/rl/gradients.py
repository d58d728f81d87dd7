"""Hand-written gradients of the kernel policy and the pooled critic (engine/policies/kernel_net.py).

Backpropagation through dense layers with ReLU, a masked (per-decision) softmax and mean and max
pooling, checked against finite differences in tests/test_rl_gradients.py. Every gradient has the
shapes of the weights it belongs to.
"""
from __future__ import annotations

import numpy as np

from engine.policies.kernel_net import KERNEL_ARRAYS, CriticCache


def dense_backward(weights: tuple[np.ndarray, ...], acts: list[np.ndarray], grad_out: np.ndarray,
                   last_linear: bool) -> tuple[list[np.ndarray], np.ndarray]:
    """(gradients of (W1, b1, ...), gradient of the input) for dense layers whose forward
    activations are `acts` (input first), given the gradient of the last activation."""
    pairs = len(weights) // 2
    grads: list[np.ndarray] = [None] * len(weights)
    g = grad_out if last_linear else grad_out * (acts[-1] > 0)
    for k in range(pairs - 1, -1, -1):
        grads[2 * k] = acts[k].T @ g
        grads[2 * k + 1] = g.sum(axis=0)
        g = g @ weights[2 * k].T
        if k > 0:
            g = g * (acts[k] > 0)
    return grads, g


def policy_gradient(policy: tuple[np.ndarray, ...], acts: list[np.ndarray], grad_logits: np.ndarray) -> list[np.ndarray]:
    """Gradients of the policy's weights given d(loss)/d(score) for every row."""
    return dense_backward(policy, acts, grad_logits[:, None], last_linear=True)[0]


def critic_gradient(critic: tuple[np.ndarray, ...], cache: CriticCache, grad_values: np.ndarray) -> list[np.ndarray]:
    """Gradients of the critic's weights given d(loss)/d(value) for every decision."""
    head_grads, g_pooled = dense_backward(critic[KERNEL_ARRAYS:], cache.head, grad_values[:, None], last_linear=True)
    units = cache.kernel[-1].shape[1]
    g_mean, g_max = g_pooled[:, :units], g_pooled[:, units:2 * units]
    g_rows = np.repeat(g_mean / cache.counts[:, None], cache.counts, axis=0)
    # each (decision, unit) has its own maximum row, so no two of these index pairs are equal
    g_rows[cache.argmax_rows, np.arange(units)] += g_max
    kernel_grads, _ = dense_backward(critic[:KERNEL_ARRAYS], cache.kernel, g_rows, last_linear=False)
    return kernel_grads + head_grads
