"""Property tests of issue 25's backfilling variants: no reservation a variant promises is ever
delayed by the candidates it lets start.

A pass is driven as the simulator drives it (engine.sim.cycle.backfill_pass) on one pool of
interchangeable units, so a candidate whose units are free always finds room: the window plans the
pass when it can (`plan`), then the candidates are visited in its order (one by one through `scan`,
`after_start` and `after_skip` for a sequential window). What is promised, by definition:
- EASY and every variant built on its window (EASY-SJBF in each candidate order, EASY++, lookahead,
  list scheduling once the head has aged): the head still has its units at the shadow time, the
  earliest time enough running jobs have ended for it;
- selective backfilling (and conservative, the reservation-for-every-job end): a protected head
  still starts as early as it could before the pass.
List scheduling before the head has aged promises nothing, and is not checked. The same promise is
checked in the simulator itself, with exact requested runtimes.
"""
import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job

from engine.policies import registry
from engine.policies.backfill_order import ORDERS, Waiting
from engine.policies.profile import Profile
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

NOW = 0.0
running_jobs = st.lists(st.tuples(st.integers(1, 100), st.integers(1, 4)), max_size=6)
candidates = st.lists(st.tuples(st.integers(1, 120), st.integers(0, 4), st.integers(0, 300), st.integers(0, 3)),
                      max_size=12)


def _waiting(head_units, head_wait, cand, free):
    req, units, wait, prio = (np.array([c[k] for c in cand], np.float64) for k in range(4))
    return Waiting(float(head_wait), 50.0, wait, req, units, prio, float(free))


def _drive(window, waiting, free):
    """The candidates a pass starts (positions), visiting them as the simulator does."""
    order = np.arange(len(waiting.requested_s))
    if hasattr(window, "plan"):
        window, order = window.plan(NOW, waiting)
    req, units = waiting.requested_s[order], waiting.units[order]
    started = []
    if window.sequential:
        refused, i = np.zeros(len(order), bool), 0
        while i < len(order):
            i = window.scan(NOW, req, units, units <= free, refused, i, len(order))
            if i >= len(order):
                break
            started.append(int(order[i]))
            free -= units[i]
            window = window.after_start(NOW, req[i], units[i])
            i += 1
        return started
    for i in range(len(order)):
        if units[i] <= free and window.allows(NOW, req[i:i + 1], units[i:i + 1])[0]:
            started.append(int(order[i]))
            free -= units[i]
            window = window.after_start(NOW, req[i], units[i])
        else:
            window = window.after_skip(NOW, req[i], units[i])
    return started


def _shadow(head_units, free, running):
    have = free
    for end, units in sorted(running):
        if have >= head_units:
            break
        have += units
        shadow = float(end)
    return (NOW if free >= head_units else shadow) if have >= head_units else math.inf


EASY_LIKE = [("easy", {}), ("easy++", {}), ("lookahead", {}), ("list", {"max_wait_s": 0.0})] + \
    [("easy-sjbf", {"order": order}) for order in ORDERS]


@settings(max_examples=400, deadline=None)
@given(running_jobs, st.integers(1, 4), st.integers(1, 6), candidates, st.sampled_from(EASY_LIKE))
def test_easy_family_never_delays_the_heads_reservation(running, free, short, cand, variant):
    key, params = variant
    head_units = free + short  # a blocked head
    policy = registry.make("backfill", key, **params)
    ends = np.array([float(e) for e, _ in running])
    units = np.array([float(u) for _, u in running])
    window = policy.window(float(head_units), float(free), ends, units, NOW, head_requested_s=50.0)
    waiting = _waiting(head_units, 10.0, cand, free)
    started = _drive(window, waiting, float(free))
    shadow = _shadow(head_units, free, running)
    used = sum(waiting.units[i] for i in started)
    assert used <= free
    if math.isfinite(shadow):
        at_shadow = free + sum(u for e, u in running if e <= shadow) - sum(
            waiting.units[i] for i in started if NOW + waiting.requested_s[i] > shadow)
        assert at_shadow >= head_units, (key, params, started)


@settings(max_examples=400, deadline=None)
@given(running_jobs, st.integers(1, 4), st.integers(1, 6), candidates, st.integers(0, 300),
       st.sampled_from([("selective", {}), ("selective", {"threshold_x": 1.0}), ("selective", {"threshold_x": 4.0}),
                        ("conservative", {})]))
def test_a_protected_head_is_never_delayed(running, free, short, cand, head_wait, variant):
    key, params = variant
    head_units = free + short
    policy = registry.make("backfill", key, **params)
    ends = np.array([float(e) for e, _ in running])
    units = np.array([float(u) for _, u in running])
    head_s = 50.0
    window = policy.window(float(head_units), float(free), ends, units, NOW, head_requested_s=head_s)
    waiting = _waiting(head_units, head_wait, cand, free)
    protected = key == "conservative" or (head_wait + head_s) / head_s >= params.get("threshold_x", 2.0)
    before = Profile.expected(NOW, float(free), ends, units).earliest(float(head_units), head_s)
    started = _drive(window, waiting, float(free))
    after = Profile.expected(NOW, float(free), ends, units)
    for i in started:
        after.reserve(NOW, waiting.units[i], waiting.requested_s[i])
    if protected:
        assert after.earliest(float(head_units), head_s) <= before, (key, params, started)


SIM_VARIANTS = [("easy", {}), ("lookahead", {}), ("list", {"max_wait_s": 0.0}), ("selective", {"threshold_x": 1.0})] \
    + [("easy-sjbf", {"order": order}) for order in ORDERS]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(1, 100), st.integers(1, 4)), min_size=2, max_size=12),
       st.sampled_from(SIM_VARIANTS))
def test_in_the_simulator_the_head_starts_by_its_shadow_time(specs, variant):
    """With exact requested runtimes on one 4-GPU node under FCFS, a job that becomes the blocked head
    at t (every job before it has started) starts no later than the shadow time at t: the earliest time
    enough of the jobs running at t have ended for it. Jobs backfilled at t do not move that time
    (they end by it or fit in the extra), so it is computed from every job running at t."""
    key, params = variant
    submits = np.cumsum([gap for gap, _, _ in specs]).astype(float)
    jobs = [job(i, float(s), float(run_s), gpus) for i, (s, (_, run_s, gpus)) in enumerate(zip(submits, specs))]
    result = run_scenario(Scenario.from_dict({"name": "t", "policies": {
        "order": {"key": "fcfs"}, "placement": {"key": "first-fit"}, "backfill": {"key": key, **params}}}),
        pd.DataFrame(jobs), fleet(4))
    frame = result.jobs.set_index("job_id").loc[[f"j{i}" for i in range(len(jobs))]]
    start, end = frame["start_s"].to_numpy(float), frame["end_s"].to_numpy(float)
    submits = frame["submit_s"].to_numpy(float)  # from the first submit
    gpus = np.array([g for _, _, g in specs], float)
    for j in range(len(jobs)):
        head_at = max(submits[j], start[:j].max(initial=0.0))
        if start[j] <= head_at:
            continue
        running = [(end[k], gpus[k]) for k in range(len(jobs)) if k != j and start[k] <= head_at < end[k]]
        free = 4.0 - sum(g for _, g in running)
        assert start[j] <= _shadow(gpus[j], free, running), (key, params, j, head_at)
