"""Load shifting: timing policies on hand-built views, and held-back jobs in the simulator."""
import numpy as np
import pandas as pd
import pytest
from sim_helpers import T0, fleet, job

from engine.core.errors import ScenarioError
from engine.core.views import RouteRequest, TimingView
from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.facts import World

QUARTER = 900.0
FLEXIBLE = RouteRequest(0, 0, 1.0, "training", True, 3600.0, 0.0)


def view(intensity, at_work=None, latest=np.inf):
    n = len(intensity)
    return TimingView(QUARTER * np.arange(n), np.asarray(intensity, float),
                      np.asarray(at_work if at_work is not None else [False] * n), latest)


@pytest.mark.parametrize("params,intensity,expected", [
    ({}, [400, 300, 100, 100, 200], 2 * QUARTER),                  # the cleanest, earliest of equals
    ({"min_saving_pct": 80}, [400, 300, 100, 100, 200], 0.0),      # saves 75 %: not enough
    ({"max_delay_h": 0.25}, [400, 300, 100, 100, 200], QUARTER),   # only one quarter ahead allowed
    ({}, [100, 300, 50, 400], 2 * QUARTER),                        # 50 % cleaner half an hour on
])
def test_lowest_carbon_hour(params, intensity, expected):
    policy = registry.make("timing", "lowest-carbon-hour", **params)
    assert policy.delay(FLEXIBLE, view(intensity), 0.0) == expected
    inference = RouteRequest(0, 0, 1.0, "inference", False, 3600.0, 0.0)
    assert policy.delay(inference, view(intensity), 0.0) == 0.0


@pytest.mark.parametrize("params,at_work,expected", [
    ({}, [True, True, False, True], 2 * QUARTER),
    ({}, [False, True, True], 0.0),                                # off-hours already: no hold
    ({"max_delay_h": 0.25}, [True, True, False], 0.0),             # off-hours too far away
    ({}, [True, True, True], 0.0),
])
def test_off_hours(params, at_work, expected):
    policy = registry.make("timing", "off-hours", **params)
    assert policy.delay(FLEXIBLE, view([100] * len(at_work), at_work), 0.0) == expected


def test_bad_parameters_name_the_range():
    with pytest.raises(ScenarioError, match="max_delay_h must be between 0 and 168"):
        Scenario.from_dict({"policies": {"timing": {"key": "off-hours", "max_delay_h": 500}}})


# One UTC region whose grid is dirty (500 g) from 08:00 to 20:00 and clean (100 g) otherwise.
REGIONS = pd.DataFrame({"region": ["r"], "timezone": ["UTC"], "country": [None], "jurisdiction": ["XX"]})
CARBON = pd.DataFrame({"region": "r", "local_hour": range(24),
                       "g_co2e_per_kwh": [500.0 if 8 <= h < 20 else 100.0 for h in range(24)]})
TEN_AM = (pd.Timestamp("2026-01-05 10:00") - T0).total_seconds()


def shifted(jobs, timing="lowest-carbon-hour", **params):
    scenario = Scenario.from_dict({"policies": {"timing": {"key": timing, **params}}})
    return run_scenario(scenario, pd.DataFrame(jobs), fleet(8), World(REGIONS, None, CARBON))


def test_a_flexible_job_waits_for_the_clean_hours_and_inference_does_not():
    result = shifted([job(0, TEN_AM, 3600, 1), job(1, TEN_AM, 3600, 1, workload_class="inference")])
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc["j0", "wait_s"] == 10 * 3600.0 and jobs.loc["j1", "wait_s"] == 0.0
    log = result.decisions[result.decisions["job_id"] == "j0"]["decision"].tolist()
    assert log == ["deferred", "started"]


def test_a_deadline_cuts_the_hold_back():
    deadline = T0 + pd.Timedelta(seconds=TEN_AM + 6 * 3600)    # 16:00, one hour of work: start by 15:00
    result = shifted([{**job(0, TEN_AM, 3600, 1), "deadline_utc": deadline}])
    assert result.jobs["wait_s"].tolist() == [5 * 3600.0]


def test_off_hours_holds_work_submitted_in_working_hours():
    result = shifted([job(0, TEN_AM, 600, 1)], timing="off-hours")
    assert result.jobs["wait_s"].tolist() == [8 * 3600.0]         # region works 9-18 local (UTC)


def test_immediate_is_the_plain_simulation():
    plain = run_scenario(Scenario.from_dict({}), pd.DataFrame([job(0, TEN_AM, 600, 1)]), fleet(8))
    assert plain.jobs["wait_s"].tolist() == [0.0]
    assert shifted([job(0, TEN_AM, 600, 1)], timing="immediate").jobs.equals(plain.jobs)


@pytest.mark.parametrize("params,price,expected", [
    ({}, [1.0, 1.0, 0.7, 0.7, 0.85], 2 * QUARTER),                 # the cheapest, earliest of equals
    ({"min_saving_pct": 40}, [1.0, 1.0, 0.7, 0.7], 0.0),           # saves 30 %: not enough
    ({"max_delay_h": 0.25}, [1.0, 0.9, 0.7], QUARTER),             # only one quarter ahead allowed
    ({}, [0.7, 0.7, 1.0], 0.0),                                    # already off-peak
])
def test_off_peak_holds_work_for_the_cheapest_hours(params, price, expected):
    policy = registry.make("timing", "off-peak", **params)
    priced = TimingView(QUARTER * np.arange(len(price)), np.full(len(price), 100.0), np.zeros(len(price), bool),
                        np.inf, np.asarray(price, float))
    assert policy.delay(FLEXIBLE, priced, 0.0) == expected
    assert policy.delay(FLEXIBLE, view([100.0] * len(price)), 0.0) == 0.0     # no price data: no hold


def test_off_peak_timing_starts_batch_work_in_the_window():
    # region r (UTC) discounts 30 % from 22:00 to 06:00; a 1-hour batch job submitted at 20:00 waits to 22:00
    rows = [dict(job(0, 20 * 3600, 3600, 1), workload_class="batch")]
    regions = pd.DataFrame({"region": ["r"], "timezone": ["UTC"], "country": ["US"], "jurisdiction": ["US"]})
    spec = {"name": "t", "policies": {"timing": {"key": "off-peak"}},
            "region": [{"region": "r", "off_peak_start_hour": 22, "off_peak_end_hour": 6, "off_peak_discount": 0.3}]}
    result = run_scenario(Scenario.from_dict(spec), pd.DataFrame(rows), fleet(8), World(regions, None, None))
    assert result.jobs["start_s"].tolist() == [2 * 3600.0]
