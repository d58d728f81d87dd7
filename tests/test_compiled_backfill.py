"""The compiled rules of the backfill variants against their rules written plainly: selective
backfilling's expansion factor (engine.policies.selective_kernels) and the reservation walk that
conservative and selective backfilling share (engine.policies.profile_kernels.scan)."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _walk(profile: Profile, now: float, req, units, fits, refused, protect, start: int, stop: int) -> int:
    for k in range(start, stop):
        if fits[k]:
            if units[k] <= profile.lowest_one(now, req[k]):
                return k
            refused[k] = True
        if protect[k]:
            profile.reserve_earliest(units[k], req[k])
    return stop


CANDIDATES = st.lists(st.tuples(SECONDS, st.integers(0, 6), st.booleans(), st.booleans()), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([10.0, 50.0, 100.0, 400.0]), st.integers(1, 3)), max_size=5),
       st.integers(0, 4), CANDIDATES, st.integers(0, 3))
def test_the_reservation_walk_stops_at_the_first_allowed_and_reserves_for_the_protected(running, free, drawn, start):
    ends = np.array([e for e, _ in running], np.float64)
    held = np.array([u for _, u in running], np.float64)
    req = np.array([r for r, _, _, _ in drawn], np.float64)
    units = np.array([u for _, u, _, _ in drawn], np.float64)
    fits = np.array([f for _, _, f, _ in drawn], bool)
    protect = np.array([p for _, _, _, p in drawn], bool)
    start = min(start, len(drawn))
    compiled, plain = Profile.expected(0.0, float(free), ends, held), Profile.expected(0.0, float(free), ends, held)
    marked, expected = np.zeros(len(drawn), bool), np.zeros(len(drawn), bool)
    at = compiled.scan(0.0, req, units, fits, marked, protect, start, len(drawn))
    assert at == _walk(plain, 0.0, req, units, fits, expected, protect, start, len(drawn))
    assert compiled == plain
    assert marked.tolist() == expected.tolist()
