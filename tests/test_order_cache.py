"""The order cache: time-dependent keys recomputed every recalc_s seconds, new jobs keyed on arrival."""
from dataclasses import dataclass, field, replace

import numpy as np

from engine.core.views import QueueView, ShareView
from engine.policies.priority import MultifactorPriority
from engine.sim.cycle.order_cache import OrderCache
from engine.sim.state.queue import WaitingQueue


@dataclass(frozen=True)
class KeyedAt:
    """A toy order: a job's key is the time it was keyed at, minus its priority field."""

    recalc_s: float = 100.0

    def keys(self, queue, now_s):
        return np.stack([np.full(len(queue), now_s) - queue.priority])


def _view(priority):
    priority = np.asarray(priority, float)
    return QueueView.of(np.zeros(len(priority)), np.ones(len(priority)), np.ones(len(priority)), priority=priority)


def _no_ledger():
    return None


def _queue(waiting):
    """A region's queue holding the jobs where `waiting` is True (keys are job ids)."""
    queue = WaitingQueue(len(waiting))
    for j in np.flatnonzero(waiting):
        queue.add(int(j))
    return queue


def test_keys_are_kept_until_the_recalculation_and_new_jobs_merge_in():
    cache = OrderCache(KeyedAt(), 4)
    view = _view([0.0, 5.0, 30.0, 0.0])
    waiting = np.array([True, True, False, False])
    # at 0: keys 0 and -5 -> job 1 first
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 0.0).tolist() == [1, 0]
    # at 50 job 2 (priority 30) joins, keyed 50 - 30 = 20: behind the cached 0 and -5
    waiting[2] = True
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 50.0).tolist() == [1, 0, 2]
    # job 1 starts; job 3 joins at 60 keyed 60
    waiting[1], waiting[3] = False, True
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 60.0).tolist() == [0, 2, 3]
    # at 100 everything is re-keyed at 100: 100, 70, 100 -> job 2, then 0 and 3 by index
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 100.0).tolist() == [2, 0, 3]


def test_a_job_that_left_and_came_back_is_keyed_again():
    cache = OrderCache(KeyedAt(), 2)
    view = _view([0.0, 0.0])
    waiting = np.array([True, True])
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 0.0).tolist() == [0, 1]
    waiting[0] = False
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 10.0).tolist() == [1]
    waiting[0] = True  # evicted and requeued at 20: keyed 20, behind job 1's 0
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 20.0).tolist() == [1, 0]


def test_without_recalc_every_call_keys_the_whole_queue():
    cache = OrderCache(KeyedAt(recalc_s=0.0), 2)
    view = _view([0.0, 5.0])
    waiting = np.array([True, True])
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 0.0).tolist() == [1, 0]
    assert cache.order(view, _no_ledger, "r", _queue(waiting), 10.0).tolist() == [1, 0]


@dataclass(frozen=True)
class CountedKeyedAt:
    """KeyedAt that records the jobs of every keys call."""

    recalc_s: float = 100.0
    calls: list = field(default_factory=list)

    def keys(self, queue, now_s):
        self.calls.append(queue.index.tolist())
        return np.stack([np.full(len(queue), now_s) - queue.priority])


def test_a_deferred_lone_job_is_keyed_only_if_it_still_waits_after_the_pass():
    policy = CountedKeyedAt()
    cache = OrderCache(policy, 3)
    view = _view([0.0, 5.0, 30.0])
    queue = _queue(np.array([True, False, False]))
    assert cache.order(view, _no_ledger, "r", queue, 0.0, defer=True).tolist() == [0]
    queue.remove(0)  # it started
    cache.settle(view, _no_ledger, queue, 0.0)
    assert policy.calls == []
    queue.add(1)  # waits alone at 10 and does not start: keyed by settle, 10 - 5 = 5
    assert cache.order(view, _no_ledger, "r", queue, 10.0, defer=True).tolist() == [1]
    cache.settle(view, _no_ledger, queue, 10.0)
    assert policy.calls == [[1]]
    queue.add(2)  # joins at 20, keyed 20 - 30 = -10: ahead of job 1, as without deferral
    assert cache.order(view, _no_ledger, "r", queue, 20.0, defer=True).tolist() == [2, 1]
    assert policy.calls == [[1], [2]]


def test_a_lone_job_needs_no_keys_without_recalc():
    policy = CountedKeyedAt(recalc_s=0.0)
    cache = OrderCache(policy, 2)
    assert cache.order(_view([0.0, 5.0]), _no_ledger, "r", _queue(np.array([False, True])), 0.0).tolist() == [1]
    assert policy.calls == []


@dataclass(frozen=True)
class CountedMultifactor(MultifactorPriority):
    """Multifactor priority whose keyer records the jobs of every keys call."""

    calls: list = field(default_factory=list)

    def keyer(self, queue):
        keyer = super().keyer(queue)
        keys = keyer.keys
        keyer.keys = lambda positions, shares, now_s: self.calls.append(positions.tolist()) or keys(positions, shares, now_s)
        return keyer


def test_a_lone_job_is_keyed_from_its_ledger_view_only_when_a_job_joins_it():
    policy = CountedMultifactor(recalc_s=300.0)
    view = QueueView.of(np.array([0.0, 5.0, 30.0]), np.full(3, 600.0), np.ones(3), team=np.array([0, 1, 0]),
                        qos=np.zeros(3))
    usage = [np.array([10.0, 0.0]), np.array([10.0, 40.0])]  # the ledger at the lone job's keying, then later
    ledgers = [lambda u=u: replace(ShareView.single(teams=2, capacity_gpus=8.0), usage_gpu_s=u) for u in usage]
    cache = OrderCache(policy, 3)
    queue = _queue(np.array([True, False, False]))
    assert cache.order(view, ledgers[0], "r", queue, 10.0).tolist() == [0]
    queue.remove(0)  # it started: never keyed
    queue.add(1)
    assert cache.order(view, ledgers[0], "r", queue, 20.0).tolist() == [1]
    assert policy.calls == []
    queue.add(2)  # joins at 30: job 1 keyed now from its ledger of 20, job 2 from the ledger of 30
    order = cache.order(view, ledgers[1], "r", queue, 30.0).tolist()
    assert policy.calls == [[1], [2]]
    _, ids, keys = cache.cached["r"]
    for j, ledger, now in ((1, ledgers[0], 20.0), (2, ledgers[1], 30.0)):
        eager = policy.keys(view.take(np.array([j])).with_shares(ledger()), now)
        assert np.array_equal(keys[:, ids.tolist().index(j)], eager[:, 0])
    assert order == ids.tolist()
    assert not np.array_equal(policy.keys(view.take(np.array([1])).with_shares(ledgers[1]()), 20.0)[:, 0],
                              keys[:, ids.tolist().index(1)])  # the later ledger would key job 1 otherwise
