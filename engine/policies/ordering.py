"""Queue-order policies (family "order"): which waiting job the scheduler considers first.

Every policy has one method, `keys(queue, now_s) -> np.ndarray` of shape (levels, n): sort keys
for the jobs of a `QueueView`, lower first, level 0 the most significant. Keys are computed for
the whole queue at once. The caller breaks remaining ties by the stable job id (`queue_order`
does it with np.lexsort). Policies see only what is known at submit time: the requested (later
predicted) runtime, never the true one.

The trait `time_dependent` (engine.core.traits, declared at registration) says whether keys change
as `now_s` advances (WFP3 and UNICEP age jobs); the others register with `time_dependent=False` and
are keyed once per job.

WFP3, UNICEP and F1 follow the definitions used by RLScheduler (Zhang et al., SC'20); F1 is the
learned formula of Carastan-Santos and de Camargo (SC'17) and takes `submit_s` as seconds from
the trace's time 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.views import QueueView
from engine.policies.registry import register

FAMILY = "order"
# UNICEP divides by log2(size), which is 0 for a one-unit job: like the published code, add a
# tiny epsilon so such jobs get a very high but finite priority instead of a division by zero.
_LOG_EPSILON = 1e-15


def queue_order(policy, queue: QueueView, now_s: float) -> np.ndarray:
    """Positions of `queue` in the policy's order, ties broken by `queue.index`."""
    keys = policy.keys(queue, now_s)
    return np.lexsort((queue.index, *keys[::-1]))


def _wait_s(queue: QueueView, now_s: float) -> np.ndarray:
    return now_s - queue.submit_s


def _at_least_one_s(requested_s: np.ndarray) -> np.ndarray:
    """Requested runtimes below 1 s count as 1 s, so ratios stay finite."""
    return np.maximum(requested_s, 1.0)


@register(FAMILY, "fcfs", time_dependent=False)
@dataclass(frozen=True)
class FCFS:
    """First come, first served: earliest submit first."""

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return np.stack([queue.submit_s])


@register(FAMILY, "priority", time_dependent=False)
@dataclass(frozen=True)
class Priority:
    """Highest priority field first, then earliest submit."""

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return np.stack([-queue.priority, queue.submit_s])


@register(FAMILY, "sjf", time_dependent=False)
@dataclass(frozen=True)
class SJF:
    """Shortest job first on the requested (or predicted) runtime, then earliest submit."""

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return np.stack([queue.requested_s, queue.submit_s])


@register(FAMILY, "edf", time_dependent=False)
@dataclass(frozen=True)
class EDF:
    """Earliest deadline first (jobs without a deadline last), then earliest submit."""

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return np.stack([queue.deadline_s, queue.submit_s])


@register(FAMILY, "wfp3")
@dataclass(frozen=True)
class WFP3:
    """Wide-first with aging: largest (wait / requested)^3 x size first (Tang et al. 2009).

    Jobs that have waited long relative to their length, and wide jobs, go first; a job that has
    not waited yet scores 0.
    """

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        ratio = _wait_s(queue, now_s) / _at_least_one_s(queue.requested_s)
        return np.stack([-(np.power(ratio, 3) * queue.size)])


@register(FAMILY, "unicep")
@dataclass(frozen=True)
class UNICEP:
    """Unicorn-style utility: largest wait / (log2(size) x requested) first (Tang et al. 2009).

    Favours short, narrow jobs that have waited; sizes below one unit count as one unit.
    """

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        wait_s = _wait_s(queue, now_s) + _LOG_EPSILON
        width = np.log2(np.maximum(queue.size, 1.0) + _LOG_EPSILON)
        return np.stack([-wait_s / (width * _at_least_one_s(queue.requested_s))])


@register(FAMILY, "f1", time_dependent=False)
@dataclass(frozen=True)
class F1:
    """Learned F1 score: log10(requested) x size + 870 x log10(submit), lowest first.

    Non-positive requested runtimes and submit times count as 0.1, as in the published code.
    """

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        requested = np.where(queue.requested_s > 0, queue.requested_s, 0.1)
        submit = np.where(queue.submit_s > 0, queue.submit_s, 0.1)
        return np.stack([np.log10(requested) * queue.size + 870.0 * np.log10(submit)])


@register(FAMILY, "linear")
@dataclass(frozen=True)
class Linear:
    """A weighted sum of what is known at submit and the wait so far, lowest first:
    w_runtime_size x log10(requested) x size + w_runtime x log10(requested) + w_size x log10(size)
    + w_submit x log10(submit) - w_wait x hours waited. F1 is (1, 0, 0, 870, 0); the weights are
    what `meridian optimise` and `meridian experiment evolve` search. Non-positive requested
    runtimes and submit times count as 0.1 and sizes below one unit as one, as in F1."""

    w_runtime_size: float = 1.0
    w_runtime: float = 0.0
    w_size: float = 0.0
    w_submit: float = 870.0
    w_wait: float = 0.0

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        requested = np.log10(np.where(queue.requested_s > 0, queue.requested_s, 0.1))
        submit = np.log10(np.where(queue.submit_s > 0, queue.submit_s, 0.1))
        score = (self.w_runtime_size * requested * queue.size + self.w_runtime * requested
                 + self.w_size * np.log10(np.maximum(queue.size, 1.0)) + self.w_submit * submit)
        if self.w_wait:
            score = score - self.w_wait * _wait_s(queue, now_s) / 3600.0
        return np.stack([score])
