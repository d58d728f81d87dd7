"""The cluster step's compiled figures against their rules written plainly with numpy: the per-cluster
sums `pick` shows the policy (engine.sim.cycle.cluster_step_kernels.by_cluster; `gang_by_cluster`, with
the fewest racks a gang spans), the head's cluster (`earliest_cluster`: EASY's reservation per cluster,
the earliest wins, ties to the lowest index), the running jobs read from the slots
(engine.sim.state.slot_kernels.running), and the candidates that count against the head's reservation
in its cluster (`scoped_units`)."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.fit_kernels import fits
from engine.policies.easy_kernels import head_pool_units, reservation
from engine.sim.cycle.cluster_step_kernels import (
    by_cluster,
    earliest_cluster,
    fit_by_cluster,
    gang_by_cluster,
    scoped_units,
)
from engine.sim.state.slot_kernels import running

K = 4
NODES = st.lists(st.tuples(st.integers(0, K - 1), st.booleans(), st.sampled_from([0, 250, 1000, 3500, 8000]),
                           st.booleans()), max_size=30)
ENDS = st.sampled_from([0.0, 10.0, 50.0, 100.0, 100.0, 3600.0, math.inf])
RUNNING = st.lists(st.tuples(st.integers(0, K - 1), ENDS, st.sampled_from([500.0, 1000.0, 4000.0])), max_size=20)


def _nodes(nodes):
    codes = np.array([c for c, _, _, _ in nodes], np.int64)
    marked = np.array([f for _, f, _, _ in nodes], bool)
    free_milli = np.array([m for _, _, m, _ in nodes], np.int64)
    in_pool = np.array([p for _, _, _, p in nodes], bool)
    return codes, marked, free_milli, in_pool


@settings(max_examples=300, deadline=None)
@given(NODES, st.integers(1, 3))
def test_by_cluster_sums_as_bincount_does(nodes, width):
    codes, marked, free_milli, in_pool = _nodes(nodes)
    fits, free_gpus = by_cluster(codes, K, marked, width, free_milli, in_pool)
    assert fits.tolist() == (np.bincount(codes, weights=marked, minlength=K) >= width).tolist()
    assert free_gpus.tolist() == (np.bincount(codes, weights=free_milli * in_pool, minlength=K) / 1000).tolist()


GPUS = 2  # GPU slots per node in the blocks of the fit test
ROWS = st.lists(st.tuples(st.sampled_from([0, 4000, 64000]), st.sampled_from([0, 1024, 65536]),
                          st.sampled_from([-1, 0, 300, 1000]), st.sampled_from([-1, 0, 500, 1000]), st.booleans()),
                min_size=30, max_size=30)
FIGURES = st.tuples(st.sampled_from([0, 4000, 32000]), st.sampled_from([0, 1024]),
                    st.sampled_from([(0, 0), (1, 300), (1, 1000), (2, 1000), (2, 500)]))


@settings(max_examples=300, deadline=None)
@given(NODES, ROWS, FIGURES)
def test_fit_by_cluster_is_by_cluster_over_the_fit_rule(nodes, rows, figures):
    codes, _, free_milli, in_pool = _nodes(nodes)
    n = len(codes)
    block = np.zeros((n, 5 + 2 * GPUS), np.int64)
    for i, (cpu, memory, first, second, _) in enumerate(rows[:n]):
        gpus = [first, second]
        block[i, :4] = cpu, memory, sum(max(g, 0) for g in gpus), sum(g == 1000 for g in gpus)
        block[i, 4:4 + GPUS] = gpus
    allowed = np.array([a for *_, a in rows[:n]], bool)
    cpu, memory, (num_gpu, gpu_milli) = figures
    ok = fits(block, allowed, np.arange(n), cpu, memory, num_gpu, gpu_milli)
    fit, free, racks = fit_by_cluster(block, allowed, np.array([cpu, memory, num_gpu, gpu_milli], np.int64), codes,
                                      K, free_milli, in_pool)
    expected = by_cluster(codes, K, ok, 1, free_milli, in_pool)
    assert fit.tolist() == expected[0].tolist() and free.tolist() == expected[1].tolist()
    assert racks.tolist() == expected[0].astype(np.int64).tolist()


@settings(max_examples=300, deadline=None)
@given(NODES, RUNNING, st.lists(st.booleans(), min_size=K, max_size=K), st.sampled_from([500.0, 3000.0, 9000.0, 1e9]),
       st.sampled_from([0.0, 60.0]), st.sampled_from([1, 2, 64]))
def test_the_head_cluster_is_the_earliest_reservation_among_those_that_hold_it(nodes, jobs, holds, need, now,
                                                                                earliest):
    codes, _, free_milli, in_pool = _nodes(nodes)
    free = np.bincount(codes, weights=free_milli * in_pool, minlength=K)
    clusters = np.array([c for c, _, _ in jobs], np.float64)
    ends = np.array([e for _, e, _ in jobs], np.float64)
    units = np.array([u for _, _, u in jobs], np.float64)
    best, best_start = -1, math.inf
    for c in range(K):
        if holds[c]:
            mine = clusters == c
            start = reservation(need, float(free[c]), ends[mine], units[mine], now, earliest)[0]
            if best < 0 or start < best_start:
                best, best_start = c, start
    found = earliest_cluster(need, codes, free_milli, in_pool, np.array(holds), ends, units, clusters, now, earliest)
    mine = clusters == best
    assert found[:2] == (best, float(free[best]) if best >= 0 else 0.0)
    assert found[2].tolist() == ends[mine].tolist() and found[3].tolist() == units[mine].tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 3), ENDS, st.sampled_from([math.nan, 200.0, 5000.0]),
                          st.integers(0, K - 1)), max_size=20),
       st.integers(0, 3), st.sampled_from([0.0, 60.0, 4000.0]), st.booleans())
def test_running_reads_the_active_slots_of_the_pool_in_slot_order(slots, pool, now, at_overrun):
    table = np.array([[end, overrun, 1.0, 1000.0 * (k + 1), p, c, float(active)]
                      for k, (active, p, end, overrun, c) in enumerate(slots)], np.float64).reshape(-1, 7)
    ends, overrun, begin, units, cluster = running(table, pool, now, at_overrun)
    rows = table[(table[:, 6] != 0) & ((pool == 0) | (table[:, 4] == pool))]
    late = at_overrun & (rows[:, 0] <= now) & np.isfinite(rows[:, 1])
    assert ends.tolist() == np.where(late, rows[:, 1], rows[:, 0]).tolist()
    assert units.tolist() == rows[:, 3].tolist() and cluster.tolist() == rows[:, 5].tolist()
    assert np.array_equal(overrun, rows[:, 1], equal_nan=True) and begin.tolist() == rows[:, 2].tolist()
    assert all(row.flags.c_contiguous for row in (ends, units, cluster))


KEYS = 3


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 500.0, 1000.0, 8000.0]), st.integers(0, 2), st.integers(0, KEYS - 1)),
                min_size=1, max_size=20),
       st.lists(st.lists(st.booleans(), min_size=K, max_size=K), min_size=KEYS, max_size=KEYS),
       st.lists(st.booleans(), min_size=KEYS, max_size=KEYS), st.lists(st.booleans(), min_size=KEYS, max_size=KEYS),
       st.integers(0, 2), st.integers(0, K - 1), st.sampled_from([0.0, 1000.0, 5000.0]))
def test_scoped_units_keep_the_candidates_that_could_start_in_the_cluster(jobs, holds, spans, filled, head_pool,
                                                                          cluster, free):
    units = np.array([u for u, _, _ in jobs], np.float64)
    pools = np.array([p for _, p, _ in jobs], np.int64)
    kind = np.array([k for _, _, k in jobs], np.int64)
    holds, spans, filled = np.array(holds), np.array(spans), np.array(filled)
    rest = np.arange(len(jobs), dtype=np.int64)[::-1].copy()
    out, missing = scoped_units(rest, units, pools, head_pool, kind, filled, holds, spans, cluster, free)
    in_pool = head_pool_units(rest, units, pools, head_pool)
    some = np.flatnonzero(in_pool)
    unfilled = some[~filled[kind[rest[some]]]]
    assert missing == (int(unfilled[0]) if len(unfilled) else -1)
    if missing < 0:
        key = kind[rest[some]]
        in_pool[some] *= (holds[key, cluster] & (units[rest[some]] <= free)) | spans[key]
        assert out.tolist() == in_pool.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, K - 1), st.integers(0, 5), st.booleans()), max_size=30), st.integers(1, 4))
def test_a_gang_spans_the_fewest_racks_of_each_cluster_it_fits(nodes, width):
    codes = np.array([c for c, _, _ in nodes], np.int64)
    racks = np.array([r for _, r, _ in nodes], np.int64)
    free = np.flatnonzero([f for _, _, f in nodes]).astype(np.int64)
    free_milli, in_pool = np.full(len(nodes), 1000, np.int64), np.ones(len(nodes), bool)
    fits, _, spans = gang_by_cluster(codes, K, free, racks, width, free_milli, in_pool)
    for c in range(K):
        mine = racks[free[codes[free] == c]]
        assert fits[c] == (len(mine) >= width)
        counts = np.sort(np.unique(mine, return_counts=True)[1])[::-1]
        assert spans[c] == (int(np.searchsorted(np.cumsum(counts), width) + 1) if fits[c] else 0)
