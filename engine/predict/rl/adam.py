"""Adam (Kingma and Ba, 2015) over a list of numpy arrays, with its state kept for checkpoints."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Adam:
    """lr: step size; beta1, beta2: the moments' decay; eps: added to the root of the second moment.
    m, v: the moments (one array per parameter array); t: steps taken."""

    lr: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    m: list[np.ndarray] = field(default_factory=list)
    v: list[np.ndarray] = field(default_factory=list)
    t: int = 0

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> list[np.ndarray]:
        """The parameters after one step down `grads` (new arrays; the inputs are left alone)."""
        if not self.m:
            self.m = [np.zeros_like(p) for p in params]
            self.v = [np.zeros_like(p) for p in params]
        self.t += 1
        correction1, correction2 = 1 - self.beta1 ** self.t, 1 - self.beta2 ** self.t
        out = []
        for k, (p, g) in enumerate(zip(params, grads)):
            self.m[k] = self.beta1 * self.m[k] + (1 - self.beta1) * g
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * g * g
            out.append(p - self.lr * (self.m[k] / correction1) / (np.sqrt(self.v[k] / correction2) + self.eps))
        return out
