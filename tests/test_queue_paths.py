"""The simulator's two queue paths give the same starts for an order whose keys do not change with time.

An order registered with `time_dependent=False` runs on the static path (the whole workload keyed
once, the queue kept sorted); the same order wrapped so that it does not promise it runs on the
dynamic path (the waiting jobs keyed at each pass). Every start must be the same, with and without
backfilling, on the sample's first two days (whose bursts make new arrivals the head of the queue
while nothing was freed, the case a shortcut once got wrong: 6 of 2,229 EASY starts differed).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pytest

from engine.core.traits import Traits, traits_of
from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.sim.simulator import simulate
from engine.sim.state.workload import build_workload

TWO_DAYS = pd.Timedelta(days=2)


@dataclass(frozen=True)
class Dynamic:
    """`inner`'s keys, without its promise that they do not change with time (default traits)."""

    inner: object
    traits = Traits()

    def keys(self, queue, now_s):
        return self.inner.keys(queue, now_s)


@dataclass(frozen=True)
class LargestFirst:
    """The README's example order (biggest jobs first, then by submit time), declared time-independent:
    a new arrival often becomes the head of the queue while nothing was freed."""

    traits = Traits(time_dependent=False)

    def keys(self, queue, now_s):
        return np.vstack([-queue.size, queue.submit_s])


def _static_orders() -> list[str]:
    return [key for key in registry.families()["order"]
            if not registry.policy_class("order", key).traits.time_dependent
            and not registry.policy_class("order", key).traits.needs_failure]


@pytest.fixture(scope="module")
def two_days(sample_tables):
    jobs, fleet, world = sample_tables
    submit = pd.to_datetime(jobs["submit_utc"])
    return jobs[submit < submit.min() + TWO_DAYS].reset_index(drop=True), fleet, world


def _starts(scenario: Scenario, two_days, dynamic: bool, order=None) -> np.ndarray:
    jobs, fleet, world = two_days
    policies = scenario.build_policies()
    policies = replace(policies, order=order or policies.order)
    if dynamic:
        policies = replace(policies, order=Dynamic(policies.order))
    world = scenario.world(world, fleet)
    result = simulate(build_workload(jobs, fleet), policies, scenario.seed, scenario.name, scenario.timer_s, world,
                      scenario.sharing(world))
    return result.jobs["start_s"].to_numpy()


def test_the_wrapper_takes_the_dynamic_path():
    assert traits_of(Dynamic(registry.make("order", "fcfs"))).time_dependent
    assert not traits_of(registry.make("order", "fcfs")).time_dependent


def test_there_are_time_independent_orders_to_compare():
    assert {"fcfs", "sjf", "priority", "edf", "f1"} <= set(_static_orders())


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative", "per-pool"])
@pytest.mark.parametrize("order", [*_static_orders(), "largest-first"])
def test_both_queue_paths_give_every_job_the_same_start(two_days, order, backfill):
    policy = LargestFirst() if order == "largest-first" else None
    key = "fcfs" if policy else order
    scenario = Scenario.from_dict({"name": f"{order}-{backfill}", "policies": {"order": key, "backfill": backfill}})
    static, dynamic = _starts(scenario, two_days, False, policy), _starts(scenario, two_days, True, policy)
    assert np.isfinite(static).sum() > 2_000
    differ = ~((static == dynamic) | (np.isnan(static) & np.isnan(dynamic)))
    assert differ.sum() == 0, f"{differ.sum()} of {len(static)} starts differ"
