"""The compiled rules of the backfill variants against their rules written plainly: selective
backfilling's expansion factor (engine.policies.selective_kernels), the reservation walk that
conservative and selective backfilling share (engine.policies.profile_kernels.scan), lookahead's
choice of candidates (engine.policies.lookahead_kernels), the pass's first check of which
candidates' units are free and its split of the candidates by outcome (engine.policies.easy_kernels
`free_now`, `outcomes`)."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.policies.easy_kernels import free_now, outcomes
from engine.policies.lookahead_kernels import MAX_CELLS, best_set, order
from engine.policies.profile import Profile
from engine.policies.selective_kernels import expansion, protected

SECONDS = st.sampled_from([0.0, 1.0, 30.0, 60.0, 100.0, 250.0, 3600.0, math.inf])
WAITS = st.sampled_from([0.0, 1.0, 50.0, 100.0, 7200.0])


def _expansion(wait_s: float, requested_s: float) -> float:
    if requested_s == math.inf:
        return 1.0
    return (wait_s + requested_s) / requested_s if requested_s > 0 else math.inf


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(WAITS, SECONDS), max_size=20), st.sampled_from([1.0, 1.5, 2.0, 3.0, 1e6]))
def test_protected_jobs_are_those_whose_expansion_factor_reached_the_threshold(jobs, threshold):
    wait = np.array([w for w, _ in jobs], np.float64)
    requested = np.array([r for _, r in jobs], np.float64)
    assert protected(wait, requested, threshold).tolist() == [_expansion(w, r) >= threshold for w, r in jobs]
    for w, r in jobs:
        assert expansion(w, r) == _expansion(w, r)


def _walk(profile: Profile, now: float, req, units, fits, refused, protect, passed, start: int, stop: int,
          reserve_none: bool = False) -> int:
    """The walk written plainly; a candidate with no units reserves nothing unless `reserve_none`."""
    for k in range(start, stop):
        if fits[k]:
            if units[k] <= profile.lowest_one(now, req[k]):
                if not passed[k]:
                    return k
            else:
                refused[k] = True
        if protect[k] and (units[k] or reserve_none):
            profile.reserve_earliest(units[k], req[k])
    return stop


def _steps(profile: Profile) -> list[tuple[float, float]]:
    """The profile as a step function: a step of the same units as the one before it is no step."""
    times, free = profile.times.tolist(), profile.free.tolist()
    return [(t, f) for k, (t, f) in enumerate(zip(times, free)) if k == 0 or f != free[k - 1]]


CANDIDATES = st.lists(st.tuples(SECONDS, st.integers(0, 6), st.booleans(), st.booleans(), st.booleans()), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([10.0, 50.0, 100.0, 400.0]), st.integers(1, 3)), max_size=5),
       st.integers(0, 4), CANDIDATES, st.integers(0, 3))
def test_the_reservation_walk_stops_at_the_first_allowed_not_passed_and_reserves_for_the_protected(
        running, free, drawn, start):
    ends = np.array([e for e, _ in running], np.float64)
    held = np.array([u for _, u in running], np.float64)
    req = np.array([r for r, _, _, _, _ in drawn], np.float64)
    units = np.array([u for _, u, _, _, _ in drawn], np.float64)
    fits = np.array([f for _, _, f, _, _ in drawn], bool)
    protect = np.array([p for _, _, _, p, _ in drawn], bool)
    passed = np.array([s for _, _, _, _, s in drawn], bool)
    start = min(start, len(drawn))
    compiled, plain = Profile.expected(0.0, float(free), ends, held), Profile.expected(0.0, float(free), ends, held)
    marked, expected = np.zeros(len(drawn), bool), np.zeros(len(drawn), bool)
    at = compiled.scan(0.0, req, units, fits, marked, protect, passed, start, len(drawn))
    assert at == _walk(plain, 0.0, req, units, fits, expected, protect, passed, start, len(drawn))
    assert compiled == plain
    assert marked.tolist() == expected.tolist()
    # reservations of no units only split steps: the walk that makes them answers the same, same steps
    splitting = Profile.expected(0.0, float(free), ends, held)
    assert at == _walk(splitting, 0.0, req, units, fits, np.zeros(len(drawn), bool), protect, passed, start,
                       len(drawn), True)
    assert _steps(splitting) == _steps(plain)


def _grid_knapsack(units, long, free: float, extra: float) -> list[int]:
    """Lookahead's choice written with numpy: the dynamic programme over the grid, table by table."""
    if not len(units) or free <= 0:
        return []
    extra = min(max(extra, 0.0), free)
    sizes = np.concatenate([units, [free]])
    whole = np.round(sizes).astype(np.int64)
    step = float(np.gcd.reduce(whole[whole > 0])) if np.array_equal(whole, sizes) else 1.0
    step = max(step, free / MAX_CELLS)
    cells = np.ceil(units / step - 1e-9).astype(np.int64)
    room, spare = int(free / step + 1e-9), int(extra / step + 1e-9)
    value = np.zeros((room + 1, spare + 1))
    took = np.zeros((len(units), room + 1, spare + 1), bool)
    for i, (c, u) in enumerate(zip(cells.tolist(), units.tolist())):
        e = c if long[i] else 0
        if c > room or e > spare:
            continue
        candidate = np.full_like(value, -1.0)
        candidate[c:, e:] = value[:room + 1 - c, :spare + 1 - e] + u
        took[i] = candidate > value
        value = np.where(took[i], candidate, value)
    chosen, r, s = [], room, spare
    for i in range(len(units) - 1, -1, -1):
        if took[i, r, s]:
            chosen.append(i)
            r -= cells[i]
            s -= cells[i] if long[i] else 0
    return sorted(chosen)


UNITS = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 250.0, 1000.0, 1500.0, 4000.0])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(UNITS, SECONDS), max_size=14), st.sampled_from([0.0, 1.0, 4.0, 7.5, 3000.0, 8000.0]),
       st.sampled_from([0.0, 1.0, 2.5, 1000.0, 9000.0]), st.sampled_from([0.0, 100.0, 500.0]), st.integers(1, 10))
def test_lookahead_tries_the_best_filling_set_then_the_other_pools(drawn, free, extra, shadow, most):
    units = np.array([u for u, _ in drawn], np.float64)
    requested = np.array([r for _, r in drawn], np.float64)
    here = np.flatnonzero((units > 0) & (units <= free))[:most]
    long = 10.0 + requested[here] > shadow
    assert best_set(units[here], long, free, extra).tolist() == _grid_knapsack(units[here], long, free, extra)
    chosen = here[_grid_knapsack(units[here], long, free, extra)]
    expected = chosen.tolist() + np.flatnonzero(units == 0).tolist()
    assert order(units, requested, 10.0, shadow, free, extra, most).tolist() == expected


def _expected_steps(now: float, free: float, ends, units) -> tuple[list, list]:
    """The profile's steps written plainly: running jobs sorted by end (stable), clamped to now, their
    units added up; the last value kept at each run of equal times."""
    order = sorted(range(len(ends)), key=lambda k: ends[k])
    times, levels, total = [now], [free], 0.0
    for k in order:
        total += units[k]
        times.append(max(ends[k], now))
        levels.append(free + total)
    kept_t, kept_f = [], []
    for t, f in zip(times, levels):
        if kept_t and kept_t[-1] == t:
            kept_f[-1] = f
        else:
            kept_t.append(t)
            kept_f.append(f)
    return kept_t, kept_f


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([0.0, 10.0, 50.0]), st.sampled_from([0.0, 1.0, 2.5, 1000.0]),
       st.lists(st.tuples(st.sampled_from([0.0, 5.0, 10.0, 50.0, 100.0, math.inf]),
                          st.sampled_from([0.0, 1.0, 0.25, 3.0, 500.0])), max_size=12))
def test_the_expected_profile_adds_each_running_jobs_units_back_at_its_end(now, free, running):
    ends, units = [e for e, _ in running], [u for _, u in running]
    profile = Profile.expected(now, free, np.array(ends, np.float64), np.array(units, np.float64))
    times, levels = _expected_steps(now, free, ends, units)
    assert (profile.times.tolist(), profile.free.tolist()) == (times, levels)
    assert Profile(times + times[-1:], levels + [7.0]) == Profile(times, levels[:-1] + [7.0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 500.0, 1000.0, 8000.0]), st.integers(0, 3)), min_size=1, max_size=20),
       st.lists(st.sampled_from([0.0, 999.0, 1000.0, 16000.0]), min_size=4, max_size=4), st.data())
def test_free_now_is_the_numpy_comparison(jobs, free, data):
    units = np.array([u for u, _ in jobs], np.float64)
    pools = np.array([p for _, p in jobs], np.int64)
    rest = np.array(data.draw(st.lists(st.integers(0, len(jobs) - 1), max_size=20)), np.int64)
    mine, pool, fits, last = free_now(rest, units, pools, np.array(free))
    assert mine.tolist() == units[rest].tolist() and pool.tolist() == pools[rest].tolist()
    assert fits.tolist() == (units[rest] <= np.array(free)[pools[rest]]).tolist()
    assert last == (int(np.flatnonzero(fits)[-1]) if fits.any() else -1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=20))
def test_outcomes_split_the_candidates_as_the_masks_do(flags):
    rest = np.arange(len(flags), dtype=np.int64)[::-1] * 2
    started = np.array([s for s, _ in flags], bool)
    refused = np.array([r for _, r in flags], bool)
    job_key = np.arange(2 * len(flags) + 1, dtype=np.int64) + 100
    no, waiting, keys = outcomes(rest, started, refused, job_key)
    assert no.tolist() == rest[refused].tolist() and waiting.tolist() == rest[~started & ~refused].tolist()
    assert keys.tolist() == job_key[rest[started]].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 10.0, 50.0, 400.0, math.inf]), st.integers(0, 3)), max_size=8),
       st.integers(0, 4), st.integers(0, 9), st.sampled_from([0.0, 30.0, 500.0, math.inf]))
def test_the_profile_with_the_head_is_the_profile_then_its_reservation(running, free, need, length):
    ends = np.array([e for e, _ in running], np.float64)
    held = np.array([u for _, u in running], np.float64)
    plain = Profile.expected(5.0, float(free), ends, held)
    plain.reserve_earliest(float(need), length)
    assert Profile.expected(5.0, float(free), ends, held, head=(float(need), length)) == plain
