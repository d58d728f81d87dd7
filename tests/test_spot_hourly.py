"""Spot interruptions whose rate varies by the local hour ([spot] hourly_factor and
[spot.region_hourly_factor], engine.sim.processes.spot): the tables' validation, the constant-rate draws kept
exactly when every factor is 1, no interruption in a local hour whose factor is 0 (daylight-saving
changes included), the count over a long run against the integrated rate, and determinism.
Times are seconds of run time; a clock's run time 0 is its `origin`."""
import math

import numpy as np
import pandas as pd
import pytest
from sim_helpers import job

import engine.sim.processes.table
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.scenario.spot import FLAT, SpotModel
from engine.service.run import run_scenario
from engine.sim.processes.spot import HOUR_S, SPOT, HourlyClock, SpotReclaimer
from engine.world.facts import World

DAY = 86_400.0
OFF_9_TO_17 = [1.0] * 9 + [0.0] * 8 + [1.0] * 7  # no interruption 09:00-17:00 local
REGIONS = pd.DataFrame({"region": ["eu", "us"], "timezone": ["Europe/Berlin", "America/New_York"]})


def draws(clock: HourlyClock, seed: int, horizon_s: float) -> np.ndarray:
    """The clock's interruption times in [0, horizon_s), drawn one after the other from `seed`."""
    rng, t, out = np.random.default_rng(seed), 0.0, []
    while (t := clock.next_after(rng, t)) < horizon_s:
        out.append(t)
    return np.array(out)


def utc(origin: str, times: np.ndarray) -> pd.DatetimeIndex:
    return pd.Timestamp(origin, tz="UTC") + pd.to_timedelta(times, unit="s")


def local_hours(origin: str, times: np.ndarray, zone: str) -> np.ndarray:
    return utc(origin, times).tz_convert(zone).hour.to_numpy()


def clock(per_node_hour: float, factors, zone: str, origin: str) -> HourlyClock:
    return HourlyClock(per_node_hour, factors, zone, pd.Timestamp(origin).value / 1e9)


# -- the scenario tables ----------------------------------------------------------------------

@pytest.mark.parametrize("spot, message", [
    ({"hourly_factor": [1] * 23}, r"\[spot\] hourly_factor must be a list of 24 numbers \(one per local hour 0-23\), "
                                  r"got 23 numbers"),
    ({"hourly_factor": "business-day"}, r"\[spot\] hourly_factor must be a list of 24 numbers .*got 'business-day'"),
    ({"hourly_factor": [1] * 5 + [-1] + [1] * 18}, r"\[spot\] hourly_factor hour 5 must be a finite number >= 0, got -1"),
    ({"hourly_factor": [math.nan] + [1] * 23}, r"\[spot\] hourly_factor hour 0 must be a finite number >= 0, got nan"),
    ({"hourly_factor": [1] * 23 + [math.inf]}, r"hourly_factor hour 23 must be a finite number >= 0, got inf"),
    ({"hourly_factor": [True] + [1] * 23}, r"hourly_factor hour 0 must be a finite number >= 0, got True"),
    ({"hourly_factor": ["2"] + [1] * 23}, r"hourly_factor hour 0 must be a finite number >= 0, got '2'"),
    ({"region_hourly_factor": [1] * 24}, r"\[spot.region_hourly_factor\] must be a table of region = \[24 numbers\]"),
    ({"region_hourly_factor": {"eu": [1] * 25}}, r"\[spot.region_hourly_factor\] eu must be a list of 24 numbers "
                                                 r".*got 25 numbers"),
    ({"region_hourly_factor": {"eu": [1] * 23 + [-0.5]}},
     r"\[spot.region_hourly_factor\] eu hour 23 must be a finite number >= 0, got -0.5"),
    ({"hourly_factors": [1] * 24}, r"unknown \[spot\] key hourly_factors; valid: fallback_after, hourly_factor, "
                                   r"interruptible_only, interruptions_per_node_hour, region_hourly_factor, "
                                   r"region_rate"),
    ({"interruptible_only": "no"}, r"\[spot\] interruptible_only must be true or false, got 'no'"),
])
def test_invalid_hourly_factors_are_scenario_errors_naming_the_key(spot, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"spot": {"interruptions_per_node_hour": 0.1, **spot}})


def test_toml_tables_set_the_factors_and_leave_the_rest_of_spot_as_it_was(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        "[spot]\ninterruptions_per_node_hour = 0.02\nregion_rate = { us = 0.1 }\nfallback_after = 2\n"
        f"hourly_factor = {[0.5] * 12 + [2] * 12}\n"
        f"[spot.region_hourly_factor]\neu-west = {OFF_9_TO_17}\n", encoding="utf-8")
    model = Scenario.load(path).spot
    assert (model.rate("us"), model.rate("eu-west"), model.fallback_after) == (0.1, 0.02, 2)
    assert model.factors("us") == (0.5,) * 12 + (2.0,) * 12
    assert model.factors("eu-west") == tuple(OFF_9_TO_17)
    assert Scenario.from_dict({"spot": {"interruptions_per_node_hour": 0.02}}).spot == SpotModel(0.02)
    assert SpotModel().factors("anywhere") == FLAT


@pytest.mark.parametrize("spot, enabled", [
    ({}, False),
    ({"interruptions_per_node_hour": 0.1}, True),
    ({"interruptions_per_node_hour": 0.1, "hourly_factor": [0] * 24}, False),
    ({"interruptions_per_node_hour": 0.1, "hourly_factor": [0] * 24, "region_hourly_factor": {"eu": [0] * 23 + [1]}},
     True),
    ({"region_rate": {"eu": 0.1}, "region_hourly_factor": {"eu": [0] * 24}}, False),
    ({"region_rate": {"eu": 0.1}, "hourly_factor": [0] * 24, "region_hourly_factor": {"eu": [1] * 24}}, True),
])
def test_enabled_only_when_some_region_can_be_interrupted(spot, enabled):
    assert Scenario.from_dict({"spot": spot}).spot.enabled is enabled


# -- the drawing ------------------------------------------------------------------------------

@pytest.mark.parametrize("zone, factor", [("UTC", 1.0), ("Europe/Berlin", 1.0), ("Asia/Kathmandu", 1.0)])
def test_all_factors_one_draws_exactly_the_constant_rate_times(zone, factor):
    rate = 0.37  # per node-hour
    got = draws(clock(rate, [factor] * 24, zone, "2026-03-20"), seed=5, horizon_s=400 * DAY)
    rng, t, want = np.random.default_rng(5), 0.0, []
    while (t := t + float(rng.exponential(1.0 / (rate / HOUR_S)))) < 400 * DAY:
        want.append(t)
    assert len(got) > 3000 and got.tolist() == want


@pytest.mark.parametrize("zone, origin, change, zero_hours, utc_before, utc_after", [
    # Berlin springs forward on 29 March 2026: local 09-17 is 08-16 UTC in CET, 07-15 UTC in CEST.
    ("Europe/Berlin", "2026-03-15", "2026-03-29T01:00", set(range(9, 17)), set(range(8, 16)), set(range(7, 15))),
    # New York falls back on 1 November 2026: local 01:00 comes twice (05 UTC in EDT, then 06 UTC in EST).
    ("America/New_York", "2026-10-18", "2026-11-01T05:00", {1}, {5}, {6}),
])
def test_no_interruption_in_local_hours_whose_factor_is_zero_across_a_dst_change(
        zone, origin, change, zero_hours, utc_before, utc_after):
    factors = [0.0 if h in zero_hours else 1.0 for h in range(24)]
    times = draws(clock(6.0, factors, zone, origin), seed=1, horizon_s=28 * DAY)
    assert len(times) > 2000
    assert not set(local_hours(origin, times, zone)) & zero_hours
    at = utc(origin, times)
    before, after = at < pd.Timestamp(change, tz="UTC"), at >= pd.Timestamp(change, tz="UTC") + pd.Timedelta(hours=2)
    # The safe UTC hours move with the clocks: each side has interruptions in the other side's safe hours.
    assert set(at[before].hour) == set(range(24)) - utc_before
    assert set(at[after].hour) == set(range(24)) - utc_after
    if zero_hours == {1}:  # both occurrences of the repeated hour, 05:00-07:00 UTC that day, are safe
        night = (at >= pd.Timestamp(change, tz="UTC")) & (at < pd.Timestamp(change, tz="UTC") + pd.Timedelta(hours=2))
        assert not night.any()


def test_interruption_count_matches_the_integrated_rate():
    # 1 per node-hour x 0.5 at night, 3 in the working day, 1 in the evening, in Berlin local time
    # over 200 days across both 2026 DST changes. The expected count integrates the rate on a
    # quarter-hour grid (exact: Berlin's hours change on UTC quarter-hours).
    factors = np.array([0.5] * 8 + [3.0] * 9 + [1.0] * 7)
    origin, horizon = "2026-02-01", 200 * DAY
    times = draws(clock(1.0, factors, "Europe/Berlin", origin), seed=11, horizon_s=horizon)
    mid = np.arange(int(horizon // 900)) * 900.0 + 450.0
    by_hour = np.bincount(local_hours(origin, mid, "Europe/Berlin"), minlength=24) * 900.0 / HOUR_S * factors
    expected = by_hour.sum()
    assert abs(len(times) - expected) < 4 * math.sqrt(expected), (len(times), expected)
    counts = np.bincount(local_hours(origin, times, "Europe/Berlin"), minlength=24)
    assert np.all(np.abs(counts - by_hour) < 4.5 * np.sqrt(by_hour)), (counts, by_hour)


def test_same_seed_same_interruptions_another_seed_others():
    first, again, other = (draws(clock(2.0, OFF_9_TO_17, "America/New_York", "2026-03-01"), seed, 30 * DAY)
                           for seed in (3, 3, 4))
    assert first.tolist() == again.tolist() and first.tolist() != other.tolist()


# -- in the simulator -------------------------------------------------------------------------

@pytest.fixture
def interruptions(monkeypatch):
    """Records every spot interruption of the runs as (region, node, run time)."""
    log = []

    class Recording(SpotReclaimer):
        def interrupt(self, i, now):
            log.append((self.nodes[i][0], self.nodes[i][1], now))
            return super().interrupt(i, now)

    table = engine.sim.processes.table
    monkeypatch.setattr(table, "PROCESSES", [Recording if p is SpotReclaimer else p for p in table.PROCESSES])
    return log


def spot_run(spot: dict, start: str = "2026-03-27", seed: int = 0):
    """Forty 1-GPU, 2-day training jobs submitted over a day in "eu" (Berlin), "us" (New York) and
    "ap" (not in the regions table: UTC), on four 8-GPU spot nodes and an on-demand one per region
    (for jobs that fell back), from `start`."""
    jobs = pd.DataFrame([job(i, i * 2000, 2 * DAY, 1, region=("eu", "us", "ap")[i % 3]) for i in range(40)])
    shift = pd.Timestamp(start) - pd.Timestamp("2026-01-01")
    jobs[["submit_utc", "start_utc", "end_utc"]] += shift
    nodes = pd.DataFrame([dict(region=r, cluster="c", node=f"{r}{n}", gpu_type="A", gpus=8, cpus=64, memory_gib=512,
                               rack="k0", tier="on-demand" if n == 4 else "spot")
                          for r in ("eu", "us", "ap") for n in range(5)])
    scenario = Scenario.from_dict({"name": "spot", "seed": seed, "spot": spot})
    return run_scenario(scenario, jobs, nodes, World(regions=REGIONS))


def test_simulated_interruptions_with_all_factors_one_are_the_constant_rate_ones(interruptions, monkeypatch):
    flat = {"interruptions_per_node_hour": 0.2, "region_rate": {"us": 0.5}, "fallback_after": 3,
            "hourly_factor": [1] * 24, "region_hourly_factor": {"eu": [1] * 24}}
    hourly_result = spot_run(flat)
    hourly = list(interruptions)
    interruptions.clear()

    table = engine.sim.processes.table
    recording = next(p for p in table.PROCESSES if issubclass(p, SpotReclaimer))

    class ConstantRate(recording):  # recording, with the rule before hourly factors
        def _next(self, i, now):
            rate = self.nodes[i][2].rate_s
            self.run.events.push(now + float(self.rng.exponential(1.0 / rate)), SPOT, i)

    monkeypatch.setattr(table, "PROCESSES", [ConstantRate if p is recording else p for p in table.PROCESSES])
    constant_result = spot_run(flat)
    assert len(hourly) > 50 and hourly == interruptions
    pd.testing.assert_frame_equal(hourly_result.jobs, constant_result.jobs)


def test_simulated_interruptions_keep_out_of_zero_hours_in_each_regions_local_time(interruptions):
    result = spot_run({"interruptions_per_node_hour": 1.0, "hourly_factor": OFF_9_TO_17,
                       "region_hourly_factor": {"us": [0] * 24}})
    origin = str(result.origin_utc)
    regions = np.array([r for r, _, _ in interruptions])
    times = np.array([t for _, _, t in interruptions])
    assert "us" not in regions and {"eu", "ap"} <= set(regions)
    for region, zone in (("eu", "Europe/Berlin"), ("ap", "UTC")):
        hours = local_hours(origin, times[regions == region], zone)
        assert len(hours) > 30 and not set(hours) & set(range(9, 17)), (region, sorted(set(hours)))
    berlin = utc(origin, times[regions == "eu"])  # on both sides of Berlin's spring-forward
    assert berlin.min() < pd.Timestamp("2026-03-29T01:00", tz="UTC") < berlin.max()
    assert int(result.jobs["spot_interruptions"].sum()) > 0


def test_simulated_interruptions_are_deterministic(interruptions):
    spot = {"interruptions_per_node_hour": 0.5, "hourly_factor": OFF_9_TO_17, "fallback_after": 2}
    first = spot_run(spot, seed=9)
    logged = list(interruptions)
    interruptions.clear()
    again = spot_run(spot, seed=9)
    assert logged and logged == interruptions
    pd.testing.assert_frame_equal(first.jobs, again.jobs)
