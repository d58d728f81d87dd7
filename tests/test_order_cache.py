"""The order cache: time-dependent keys recomputed every recalc_s seconds, new jobs keyed on arrival."""
from dataclasses import dataclass

import numpy as np

from engine.sim.order_cache import OrderCache
from engine.sim.views import QueueView


@dataclass(frozen=True)
class KeyedAt:
    """A toy order: a job's key is the time it was keyed at, minus its priority field."""

    recalc_s: float = 100.0

    def keys(self, queue, now_s):
        return np.stack([np.full(len(queue), now_s) - queue.priority])


def _view(priority):
    priority = np.asarray(priority, float)
    full = QueueView.of(np.zeros(len(priority)), np.ones(len(priority)), np.ones(len(priority)), priority=priority)
    return lambda jobs: full.take(jobs)


def test_keys_are_kept_until_the_recalculation_and_new_jobs_merge_in():
    cache = OrderCache(KeyedAt(), 4)
    view_of = _view([0.0, 5.0, 30.0, 0.0])
    waiting = np.array([True, True, False, False])
    # at 0: keys 0 and -5 -> job 1 first
    assert cache.order(view_of, "r", np.array([0, 1]), waiting, 0.0).tolist() == [1, 0]
    # at 50 job 2 (priority 30) joins, keyed 50 - 30 = 20: behind the cached 0 and -5
    waiting[2] = True
    assert cache.order(view_of, "r", np.array([0, 1, 2]), waiting, 50.0).tolist() == [1, 0, 2]
    # job 1 starts; job 3 joins at 60 keyed 60
    waiting[1], waiting[3] = False, True
    assert cache.order(view_of, "r", np.array([0, 2, 3]), waiting, 60.0).tolist() == [0, 2, 3]
    # at 100 everything is re-keyed at 100: 100, 70, 100 -> job 2, then 0 and 3 by index
    assert cache.order(view_of, "r", np.array([0, 2, 3]), waiting, 100.0).tolist() == [2, 0, 3]


def test_a_job_that_left_and_came_back_is_keyed_again():
    cache = OrderCache(KeyedAt(), 2)
    view_of = _view([0.0, 0.0])
    waiting = np.array([True, True])
    assert cache.order(view_of, "r", np.array([0, 1]), waiting, 0.0).tolist() == [0, 1]
    waiting[0] = False
    assert cache.order(view_of, "r", np.array([1]), waiting, 10.0).tolist() == [1]
    waiting[0] = True  # evicted and requeued at 20: keyed 20, behind job 1's 0
    assert cache.order(view_of, "r", np.array([0, 1]), waiting, 20.0).tolist() == [1, 0]


def test_without_recalc_every_call_keys_the_whole_queue():
    cache = OrderCache(KeyedAt(recalc_s=0.0), 2)
    view_of = _view([0.0, 5.0])
    waiting = np.array([True, True])
    assert cache.order(view_of, "r", np.array([0, 1]), waiting, 0.0).tolist() == [1, 0]
    assert cache.order(view_of, "r", np.array([0, 1]), waiting, 10.0).tolist() == [1, 0]
