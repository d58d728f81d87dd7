"""Failure-aware queue orders (family "order"): orders that read each job's predicted probability
of failing or being cancelled (`QueueView.fail_prob`, from engine.predict.failure_source; a scenario
turns it on with `[runtime] failure = true`, and asks for it when it names one of these orders).

Why: a user whose job is going to fail wants to hear it early, fix it and resubmit, instead of
waiting hours in the queue for a failure. The cost falls on the other jobs; whether the fleet gains
depends on how long the failures run. Measured (benchmarks/bench_predict_whatif.py, RESULTS.md): on
CTC-SP2, where failed jobs ran longer than completed ones (median 40 min against 15 min: many hit
their limit), fail-fast with EASY lowered the mean bounded slowdown from 79.7 to 64.9 with the
users' requests, but raised it from 38.2 to 53.3 when the scheduler saw predicted P50 runtimes;
HPC2N records no failures, so there it changes nothing. The trait `needs_failure` marks the orders that
read the probability.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.views import QueueView
from engine.policies.registry import register

FAMILY = "order"


@register(FAMILY, "fail-fast", needs_failure=True, time_dependent=False)
@dataclass(frozen=True)
class FailFast:
    """Likely-to-fail jobs first (fail fast), each group in submit order.

    A job jumps ahead when its predicted failure probability is at least `threshold` and, when
    `max_request_s` > 0, it asks for at most that runtime (so only short probes of likely failures
    go first, never a long job that may still run for days). Everything else waits in FCFS order.
    """

    threshold: float = field(default=0.5, metadata={
        "help": "predicted probability of failing or being cancelled (0-1) from which a job goes first",
        "unit": "probability", "min": 0.0, "max": 1.0})
    max_request_s: float = field(default=0.0, metadata={
        "help": "only jobs asking for at most this runtime (s) go first; 0: any runtime"})

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be a probability between 0 and 1, got {self.threshold}")
        if self.max_request_s < 0:
            raise ValueError(f"max_request_s must be >= 0 seconds, got {self.max_request_s}")

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        first = queue.fail_prob >= self.threshold
        if self.max_request_s > 0:
            first &= queue.requested_s <= self.max_request_s
        return np.stack([np.where(first, 0.0, 1.0), queue.submit_s])
