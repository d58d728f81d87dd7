"""The compiled cluster and preemption choices (engine.policies.cluster_kernels, preemption_kernels), the
queue merge (engine.core.order_kernels.merged) and the order cache's filters (still_waiting, unknown, and the
cache's shortcut to a lone unknown job) against their rules written plainly: a Python sort by key tuples,
NaN after every number, ties to the lowest position (the job id). Keys are drawn from a few values (NaN and
-0.0 among them) so that ties are common."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.cluster_view import ANY, WAIT, ClusterRequest, ClustersView
from engine.core.order_kernels import merged, still_waiting, unknown
from engine.policies.cluster import BestFit, MostFree, Topology
from engine.policies.preemption import PreemptRequest, PriorityPreemption, RunFigures, RunningView
from engine.sim.cycle import order_cache
from engine.sim.state.queue import WaitingQueue

KEYS = st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, math.nan])


def _order(x: float) -> tuple:
    """np.sort's place of x: numbers ascending, then NaN."""
    return (math.isnan(x), 0.0 if math.isnan(x) else x)


def _lowest_fitting(holds, fits, first, second) -> int:
    if not any(holds):
        return ANY
    fitting = [c for c in range(len(holds)) if holds[c] and fits[c]]
    if not fitting:
        return WAIT
    return min(fitting, key=lambda c: (_order(first[c]), _order(second[c]), c))


CLUSTERS = st.integers(1, 8).flatmap(lambda k: st.tuples(
    st.lists(st.booleans(), min_size=k, max_size=k), st.lists(st.booleans(), min_size=k, max_size=k),
    st.lists(st.integers(1, 3), min_size=k, max_size=k), st.lists(KEYS, min_size=k, max_size=k)))


@settings(max_examples=300, deadline=None)
@given(CLUSTERS)
def test_cluster_policies_choose_the_lowest_keyed_cluster_that_holds_and_fits(drawn):
    holds, fits, racks, free = drawn
    view = ClustersView(tuple(f"c{i}" for i in range(len(holds))), np.array(holds), np.array(fits),
                        np.array(free), np.array(free), np.array(racks, np.int64))
    job = ClusterRequest(1.0, 1, None)
    zeros = [0.0] * len(holds)
    assert Topology().choose(job, view) == _lowest_fitting(holds, fits, [float(r) for r in racks], free)
    assert BestFit().choose(job, view) == _lowest_fitting(holds, fits, free, zeros)
    assert MostFree().choose(job, view) == _lowest_fitting(holds, fits, [-x for x in free], zeros)


def _victims(policy: PriorityPreemption, request: PreemptRequest, run: dict) -> list[int]:
    eligible = []
    for i in range(len(run["tier"])):
        if request.guaranteed:
            ok = not run["guaranteed"][i]
        else:
            tier, priority = run["tier"][i], run["priority"][i]
            lower = tier < request.tier or (tier == request.tier and priority < request.priority)
            if policy.only_preemptible:
                lower = lower and run["preemptible"][i]
            if policy.reclaim and request.reclaim:
                lower = lower or (run["borrowing"][i] and not run["same_holder"][i])
            ok = lower and not run["guaranteed"][i] and run["ran_s"][i] >= policy.min_runtime_s \
                and run["preemptions"][i] < policy.max_preemptions
        if ok:
            eligible.append(i)
    return sorted(eligible, key=lambda i: (_order(run["tier"][i]), _order(run["priority"][i]),
                                           _order(-run["start_s"][i]), i))


FLAGS = ("borrowing", "same_holder", "preemptible", "guaranteed")
RUNNING = st.integers(0, 12).flatmap(lambda n: st.fixed_dictionaries({
    "tier": st.lists(KEYS, min_size=n, max_size=n), "priority": st.lists(KEYS, min_size=n, max_size=n),
    "start_s": st.lists(KEYS, min_size=n, max_size=n),
    "ran_s": st.lists(st.sampled_from([0.0, 599.0, 600.0, 5000.0]), min_size=n, max_size=n),
    "preemptions": st.lists(st.integers(0, 4), min_size=n, max_size=n),
    **{flag: st.lists(st.booleans(), min_size=n, max_size=n)
       for flag in FLAGS}}))


@settings(max_examples=400, deadline=None)
@given(RUNNING, st.builds(PreemptRequest, KEYS, KEYS, st.booleans(), st.booleans()),
       st.booleans(), st.booleans(), st.integers(0, 4))
def test_priority_preemption_evicts_the_rules_jobs_cheapest_first(run, request, only, reclaim, most):
    policy = PriorityPreemption(only_preemptible=only, reclaim=reclaim, max_preemptions=most)
    view = RunningView(index=np.arange(len(run["tier"])), **{
        name: np.array(values, bool if name in FLAGS else np.int64 if name == "preemptions" else np.float64)
        for name, values in run.items()})
    assert policy.choose(request, view).tolist() == _victims(policy, request, run)


RUN = st.integers(1, 16).flatmap(lambda n: st.tuples(
    st.fixed_dictionaries({
        "tier": st.lists(KEYS, min_size=n, max_size=n), "priority": st.lists(KEYS, min_size=n, max_size=n),
        "start_s": st.lists(st.sampled_from([0.0, -0.0, 100.0, 4400.0, 5000.0, math.nan]), min_size=n, max_size=n),
        "preemptions": st.lists(st.integers(0, 4), min_size=n, max_size=n),
        "holder": st.lists(st.integers(0, 3), min_size=n, max_size=n),
        "preemptible": st.lists(st.booleans(), min_size=n, max_size=n),
        "guaranteed": st.lists(st.booleans(), min_size=n, max_size=n)}),
    st.sets(st.integers(0, n - 1)), st.lists(st.booleans(), min_size=4, max_size=4)))


def _figures(run: dict) -> RunFigures:
    return RunFigures(**{name: np.array(values, np.int64 if name in ("preemptions", "holder") else
                                        bool if name in ("preemptible", "guaranteed") else np.float64)
                         for name, values in run.items()})


ASKED = (RUN, st.builds(PreemptRequest, KEYS, KEYS, st.booleans(), st.booleans()), st.integers(0, 3),
         st.sampled_from([0.0, 5000.0, 5600.0, 1e9]), st.booleans(), st.booleans())


@settings(max_examples=400, deadline=None)
@given(*ASKED)
def test_choose_running_is_the_choice_of_the_running_jobs_view(drawn, request, holder, now_s, only, reclaim):
    run, running, borrowing = drawn
    policy = PriorityPreemption(only_preemptible=only, reclaim=reclaim)
    figures = _figures(run)
    jobs, borrowing = np.array(sorted(running), np.int64), np.array(borrowing)
    view = figures.view(jobs, borrowing, holder, now_s)
    assert view.same_holder.tolist() == [run["holder"][j] == holder for j in jobs.tolist()]
    expected = jobs[policy.choose(request, view)].tolist()
    assert policy.choose_running(request, jobs, figures, borrowing, holder, now_s).tolist() == expected


@settings(max_examples=400, deadline=None)
@given(*ASKED)
def test_the_suspects_hold_every_job_preemption_chooses(drawn, request, holder, now_s, only, reclaim):
    """The simulator asks about a request only while a suspect's queue class runs: no other job is ever chosen."""
    run, running, borrowing = drawn
    policy = PriorityPreemption(only_preemptible=only, reclaim=reclaim)
    figures = _figures(run)
    suspects = policy.suspects(request, figures)
    chosen = policy.choose_running(request, np.array(sorted(running), np.int64), figures, np.array(borrowing),
                                   holder, now_s)
    assert suspects.dtype == bool and len(suspects) == len(run["tier"])
    assert suspects[chosen].all()


def _lexsorted(ids: list[int], columns: list[list[float]], first: int) -> list[int]:
    """Job ids in the order of their key columns' levels first.. (NaN after every number), then id."""
    return [j for _, j in sorted((tuple(_order(x) for x in column[first:]), j) for j, column in zip(ids, columns))]


QUEUE = st.tuples(st.integers(0, 30), st.integers(1, 6), st.integers(2, 3), st.integers(0, 1)).flatmap(
    lambda s: st.tuples(st.permutations(range(s[0] + s[1])),
                        st.lists(st.lists(KEYS, min_size=s[2], max_size=s[2]), min_size=s[0] + s[1],
                                 max_size=s[0] + s[1]), st.just(s[0]), st.just(s[3])))


@settings(max_examples=300, deadline=None)
@given(QUEUE)
def test_a_merge_of_a_sorted_queue_and_new_jobs_is_the_lexsort_of_all(drawn):
    ids, columns, cached, first = drawn
    old = _lexsorted(list(ids[:cached]), columns[:cached], first)
    column_of = dict(zip(ids, columns))
    old_keys = np.array([column_of[j] for j in old] or np.zeros((0, len(columns[0]))), np.float64).T.copy()
    new_ids = np.array(ids[cached:], np.int64)
    new_keys = np.array(columns[cached:], np.float64).T.copy()
    got_ids, got_keys = merged(np.array(old, np.int64), old_keys, new_ids, new_keys, first)
    assert got_ids.tolist() == _lexsorted(list(ids), columns, first)
    assert np.array_equal(got_keys.view(np.int64), np.array([column_of[j] for j in got_ids.tolist()]).T.view(np.int64))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), KEYS), min_size=0, max_size=12), st.integers(1, 3))
def test_the_order_caches_filters_are_numpys(drawn, levels):
    # job j: whether it waits, whether it is known, its keys; the cached jobs are the known ones
    waiting = np.array([w for w, _, _ in drawn], bool)
    known = np.array([k for _, k, _ in drawn], bool)
    ids = np.flatnonzero(known)[::-1].copy()  # in a cached order, not by id
    keys = np.array([[x + level for _, _, x in drawn] for level in range(levels)], np.float64)[:, ids].copy()
    all_jobs = np.arange(len(drawn))
    assert unknown(all_jobs, known).tolist() == all_jobs[~known].tolist()
    expected_known = known.copy()
    expected_known[ids[~waiting[ids]]] = False
    got_ids, got_keys = still_waiting(ids, keys, waiting, known)
    assert got_ids.tolist() == ids[waiting[ids]].tolist()
    assert np.array_equal(got_keys.view(np.int64), keys[:, waiting[ids]].view(np.int64))
    assert known.tolist() == expected_known.tolist()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=10),
       st.randoms(use_true_random=False))
def test_the_order_caches_unknown_jobs_are_the_scans(drawn, rng):
    # job j: whether it waits, whether it is known, whether the region's cache holds it (if it waits); jobs join
    # the queue in any order, and a known job may be in no cache of this region (it is in another's)
    waiting = [j for j, (w, _, _) in enumerate(drawn) if w]
    known = np.array([k for _, k, _ in drawn], bool)
    ids = np.array([j for j in waiting if drawn[j][2]], np.int64)
    rng.shuffle(waiting)
    queue = WaitingQueue(len(drawn))
    for j in waiting:
        queue.add(j)
    order_cache._load_kernels()
    cache = order_cache.OrderCache(object(), len(drawn))
    cache.known = known
    expected = unknown(queue.keys(), known.copy())
    assert cache._unknown(queue, ids).tolist() == expected.tolist()
