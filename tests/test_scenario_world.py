"""Scenario [[region]] edits (engine.scenario.world): parsing and its messages, the exact table edits,
calendar overrides read by the router's RegionFacts, and a price edit that changes where a job runs."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sim_helpers import T0, fleet, job

from engine.analysis.runs.cost import cost_report
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.scenario.world import RegionEdit, edit_world
from engine.service.run import run_scenario
from engine.world.facts import RegionFacts, World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
REGIONS = pd.DataFrame({"region": ["eu", "ap"], "timezone": ["Europe/Berlin", "Asia/Jerusalem"],
                        "country": ["DE", "IL"], "jurisdiction": ["EU", "IL"]})
PRICES = pd.DataFrame({"region": ["eu", "eu", "eu", "ap"], "gpu_type": ["H100"] * 4,
                       "tier": ["on-demand", "reserved", "spot", "on-demand"],
                       "usd_per_gpu_hour": [4.0, 2.4, 1.6, 3.0], "assumed": [False] * 4})
CARBON = pd.DataFrame({"region": "eu", "local_hour": range(24), "g_co2e_per_kwh": [10.0 * h for h in range(24)]})
WORLD = World(REGIONS, PRICES, CARBON)
FLEET = pd.DataFrame({"region": ["eu", "ap", "ap"], "node": ["n1", "n2", "n3"], "gpu_type": ["H100", "H100", "L4"],
                      "gpus": [8, 8, 4], "tier": ["reserved"] * 3})


def edits(*entries):
    return Scenario.from_dict({"region": list(entries)}, source="s.toml").region_edits


def prices_of(world, region):
    rows = world.prices[world.prices["region"] == region]
    return {(g, t): (round(usd, 6), bool(a)) for g, t, usd, a in
            zip(rows["gpu_type"], rows["tier"], rows["usd_per_gpu_hour"], rows["assumed"])}


def test_a_full_entry_parses_to_a_region_edit():
    (edit,) = edits({"region": "eu", "price_scale": 0.8, "usd_per_gpu_hour": {"L4": 1, "H100": 3.2},
                     "g_co2e_per_kwh": 0, "working_days": "Sun-Thu", "work_start_hour": 8, "work_end_hour": 17,
                     "holiday_country": ""})
    assert edit == RegionEdit("eu", 0.8, (("H100", 3.2), ("L4", 1.0)), 1.0, 0.0, "Sun-Thu", 8, 17, "")
    assert edit.calendar() == {"working_days": "Sun-Thu", "work_start_hour": 8, "work_end_hour": 17,
                               "holiday_country": ""}
    assert Scenario.from_dict({}).region_edits == ()


@pytest.mark.parametrize("entry, message", [
    ({"price_scale": 2}, 's.toml: a [[region]] entry needs region = "<name of a dataset region>"'),
    ({"region": "eu", "price": 2}, "s.toml: unknown [[region]] key price; valid: carbon_scale, g_co2e_per_kwh, "
     "holiday_country, off_peak_discount, off_peak_end_hour, off_peak_start_hour, price_scale, region, "
     "usd_per_gpu_hour, work_end_hour, work_start_hour, working_days"),
    ({"region": "eu", "price_scale": 0}, "s.toml: [[region]] eu: price_scale must be a number > 0, got 0"),
    ({"region": "eu", "carbon_scale": -1.5}, "s.toml: [[region]] eu: carbon_scale must be a number > 0, got -1.5"),
    ({"region": "eu", "g_co2e_per_kwh": "low"},
     "s.toml: [[region]] eu: g_co2e_per_kwh must be a number >= 0, got 'low'"),
    ({"region": "eu", "carbon_scale": 0.5, "g_co2e_per_kwh": 100},
     "s.toml: [[region]] eu: give carbon_scale or g_co2e_per_kwh, not both"),
    ({"region": "eu", "usd_per_gpu_hour": 3.2},
     "s.toml: [[region]] eu: usd_per_gpu_hour must be a table such as { H100 = 3.2, A100 = 1.9 }, got 3.2"),
    ({"region": "eu", "usd_per_gpu_hour": {"H100": True}},
     "s.toml: [[region]] eu usd_per_gpu_hour: H100 must be a number > 0, got True"),
    ({"region": "eu", "work_start_hour": 24}, "s.toml: [[region]] eu: work_start_hour must be a whole local hour "
     "0-23, got 24"),
    ({"region": "eu", "work_end_hour": 17.5}, "s.toml: [[region]] eu: work_end_hour must be a whole local hour 0-23, "
     "got 17.5"),
    ({"region": "eu", "working_days": "Sun-Thr"}, "s.toml: [[region]] eu: working days 'Sun-Thr': expected a range "
     "like 'Mon-Fri' or 'Sun-Thu', or a comma list like 'Mon,Tue,Thu', of the days Mon, Tue, Wed, Thu, Fri, Sat, Sun"),
    ({"region": "eu", "working_days": 5},
     's.toml: [[region]] eu: working_days must be a text such as "Mon-Fri" or "Sun-Thu", got 5'),
    ({"region": "eu", "holiday_country": "XX"}, "s.toml: [[region]] eu: holiday country 'XX': not a country of the "
     "holidays package"),
])
def test_invalid_entries_name_the_key_and_the_valid_range(entry, message):
    with pytest.raises(ScenarioError) as caught:
        edits(entry)
    assert str(caught.value).startswith(message)


def test_region_must_be_a_list_of_tables_with_each_region_once():
    with pytest.raises(ScenarioError, match="^s.toml: region must be a list of"):
        Scenario.from_dict({"region": {"region": "eu"}}, source="s.toml")
    with pytest.raises(ScenarioError, match=r"^s.toml: \[\[region\]\] eu appears more than once"):
        edits({"region": "eu", "price_scale": 2}, {"region": "eu", "carbon_scale": 2})


def test_unknown_regions_and_gpu_types_are_errors_at_run_time_listing_the_valid_ones():
    scenario = Scenario.from_dict({"name": "x", "region": [{"region": "us", "price_scale": 2}]})
    with pytest.raises(ScenarioError) as caught:
        scenario.world(WORLD, FLEET)
    assert str(caught.value) == "x: [[region]] 'us' is not a region of the dataset; valid: ap, eu"
    only_fleet = edit_world(World(), edits({"region": "ap", "price_scale": 2}), FLEET)
    assert set(only_fleet.prices["region"]) == {"ap"}
    with pytest.raises(ScenarioError) as caught:
        edit_world(WORLD, edits({"region": "eu", "usd_per_gpu_hour": {"B200": 6}}), FLEET)
    assert str(caught.value) == ("[[region]] eu: usd_per_gpu_hour names GPU type B200 that the dataset does not "
                                 "have; valid: H100, L4")


def test_price_scale_multiplies_every_tier_and_completes_the_fleet_from_the_price_book():
    edited = edit_world(WORLD, edits({"region": "ap", "price_scale": 0.5}), FLEET)
    # ap's L4 had no rows: the price book's (on-demand $0.80, reserved x0.6, spot x0.35) at half, still assumed
    assert prices_of(edited, "ap") == {("H100", "on-demand"): (1.5, False), ("L4", "on-demand"): (0.4, True),
                                       ("L4", "reserved"): (0.24, True), ("L4", "spot"): (0.14, True)}
    assert prices_of(edited, "eu") == prices_of(WORLD, "eu")
    assert edited.regions is REGIONS and edited.carbon.equals(CARBON) and edited.calendars is None
    assert PRICES["usd_per_gpu_hour"].tolist() == [4.0, 2.4, 1.6, 3.0]     # the input is not modified


def test_on_demand_overrides_move_reserved_and_spot_with_them():
    edited = edit_world(WORLD, edits({"region": "eu", "usd_per_gpu_hour": {"H100": 5.0}},
                                     {"region": "ap", "price_scale": 2, "usd_per_gpu_hour": {"H100": 5.0}}), FLEET)
    # eu has all three tiers: its own ratios (reserved 0.6, spot 0.4 of on-demand)
    assert prices_of(edited, "eu") == {("H100", "on-demand"): (5.0, False), ("H100", "reserved"): (3.0, False),
                                       ("H100", "spot"): (2.0, False)}
    # ap has on-demand only: the price book's multipliers; the override is exact, the scale applies to L4 only
    assert prices_of(edited, "ap") == {("H100", "on-demand"): (5.0, False), ("H100", "reserved"): (3.0, True),
                                       ("H100", "spot"): (1.75, True), ("L4", "on-demand"): (1.6, True),
                                       ("L4", "reserved"): (0.96, True), ("L4", "spot"): (0.56, True)}


def test_carbon_scale_and_flat_intensity():
    edited = edit_world(WORLD, edits({"region": "eu", "carbon_scale": 0.5}, {"region": "ap", "g_co2e_per_kwh": 30}))
    eu, ap = (edited.carbon[edited.carbon["region"] == r] for r in ("eu", "ap"))
    assert eu["g_co2e_per_kwh"].tolist() == [5.0 * h for h in range(24)]
    assert ap["local_hour"].tolist() == list(range(24)) and set(ap["g_co2e_per_kwh"]) == {30.0}
    assert edited.prices.equals(PRICES)
    with pytest.raises(ScenarioError, match=r"^\[\[region\]\] ap: carbon_scale needs the region's carbon profile"):
        edit_world(WORLD, edits({"region": "ap", "carbon_scale": 0.5}))


def test_no_edits_leave_the_world_as_it_is():
    assert edit_world(WORLD, ()) is WORLD
    assert Scenario.from_dict({}).world(WORLD) is WORLD


def _at_work(world, local: str, zone: str, names=("ap", "eu")) -> dict[str, bool]:
    instant = pd.Timestamp(local, tz=zone).tz_convert("UTC").tz_localize(None)
    facts = RegionFacts(world, list(names), T0, (instant - T0).total_seconds())
    q = facts.quarter((instant - T0).total_seconds())
    return dict(zip(names, facts.at_work[:, q].tolist()))


def test_region_facts_use_the_calendar_override():
    week = edits({"region": "ap", "working_days": "Mon-Fri", "work_start_hour": 8, "work_end_hour": 17})
    edited = edit_world(WORLD, week)
    assert edited.calendars == {"ap": {"working_days": "Mon-Fri", "work_start_hour": 8, "work_end_hour": 17}}
    # Sunday 2026-01-11 10:00 in Jerusalem: at work on Israel's Sun-Thu week (the default from its
    # country, engine.world.countries), not on the Mon-Fri week the override sets
    assert _at_work(edited, "2026-01-11 10:00", "Asia/Jerusalem") == {"ap": False, "eu": False}
    assert _at_work(WORLD, "2026-01-11 10:00", "Asia/Jerusalem") == {"ap": True, "eu": False}
    # Friday 10:00 is off on Sun-Thu, at work on Mon-Fri; 16:30 is inside 8-17 and 17:30 outside it
    # (default 9-18: inside)
    assert _at_work(edited, "2026-01-16 10:00", "Asia/Jerusalem")["ap"] is True
    assert _at_work(WORLD, "2026-01-16 10:00", "Asia/Jerusalem")["ap"] is False
    assert _at_work(edited, "2026-01-14 16:30", "Asia/Jerusalem")["ap"] is True
    assert _at_work(edited, "2026-01-14 17:30", "Asia/Jerusalem")["ap"] is False
    assert _at_work(WORLD, "2026-01-14 17:30", "Asia/Jerusalem")["ap"] is True


def test_holiday_country_override():
    # Thursday 2026-01-01 10:00 in Berlin is New Year's Day in DE; "" removes the holidays, "US" keeps it one
    new_year = "2026-01-01 10:00"
    assert _at_work(WORLD, new_year, "Europe/Berlin")["eu"] is False
    assert _at_work(edit_world(WORLD, edits({"region": "eu", "holiday_country": ""})), new_year,
                    "Europe/Berlin")["eu"] is True
    assert _at_work(edit_world(WORLD, edits({"region": "eu", "holiday_country": "US"})), new_year,
                    "Europe/Berlin")["eu"] is False
    # Wednesday 2026-10-28 (Ochi Day in GR, none in DE): a working day unless the country says otherwise
    assert _at_work(edit_world(WORLD, edits({"region": "eu", "holiday_country": "GR"})), "2026-10-28 10:00",
                    "Europe/Berlin")["eu"] is False
    assert _at_work(WORLD, "2026-10-28 10:00", "Europe/Berlin")["eu"] is True


def two_regions():
    regions = pd.DataFrame({"region": ["eu", "us"], "timezone": ["Europe/Berlin", "America/New_York"],
                            "country": ["DE", "US"], "jurisdiction": ["EU", "US"]})
    prices = pd.DataFrame({"region": ["eu", "us"], "gpu_type": ["A", "A"], "tier": ["on-demand"] * 2,
                           "usd_per_gpu_hour": [2.0, 3.0], "assumed": [False, False]})
    fleet = pd.DataFrame([dict(region=r, cluster="c", node=f"{r}0", gpu_type="A", gpus=4, cpus=64, memory_gib=512,
                               rack="k0", tier="on-demand") for r in ("eu", "us")])
    return World(regions, prices), fleet


def test_a_price_edit_flips_the_cheapest_routers_choice():
    world, fleet = two_regions()
    jobs = pd.DataFrame([job(0, 0, 600, 4, region="us")])
    spec = {"name": "cheap", "policies": {"routing": "cheapest"}}
    assert run_scenario(Scenario.from_dict(spec), jobs, fleet, world).jobs["region"].tolist() == ["eu"]   # $2 < $3
    dearer = Scenario.from_dict({**spec, "region": [{"region": "eu", "price_scale": 2.0}]})    # $4 > $3
    assert run_scenario(dearer, jobs, fleet, world).jobs["region"].tolist() == ["us"]
    cheaper_us = Scenario.from_dict({**spec, "region": [{"region": "us", "usd_per_gpu_hour": {"A": 1.5}}]})
    assert run_scenario(cheaper_us, jobs, fleet, world).jobs["region"].tolist() == ["us"]
    with pytest.raises(ScenarioError, match="^cheap: .*'ap' is not a region of the dataset; valid: eu, us$"):
        run_scenario(Scenario.from_dict({**spec, "region": [{"region": "ap", "price_scale": 2.0}]}), jobs, fleet, world)


def test_the_bundled_example_makes_european_capacity_cheaper():
    scenario = Scenario.load(SCENARIOS / "cheap-eu-follow-the-sun.toml")
    assert scenario.policies["routing"] == ("follow-the-sun", {}) and scenario.policies["backfill"] == ("easy", {})
    assert scenario.policies["placement"] == ("best-fit", {})
    assert [(e.region, e.price_scale) for e in scenario.region_edits] == [("eu-west", 0.7), ("eu-north", 0.7)]


def test_an_off_peak_window_discounts_on_demand_hours_in_it_and_the_routers_prices():
    # one on-demand H100 node in region "r" (UTC) at $4; a job holds 8 GPUs 20:00-24:00 UTC, two of those
    # hours in the 22-06 window at 50 % off: 8 x (2 x 4 + 2 x 2) = $96 instead of $128
    rows = [dict(job(0, 20 * 3600, 4 * 3600, 8, gpu_type="H100"))]
    nodes = fleet(8, gpu_type="H100").assign(tier="on-demand")
    prices = pd.DataFrame({"region": ["r"], "gpu_type": ["H100"], "tier": ["on-demand"], "usd_per_gpu_hour": [4.0],
                           "assumed": [False]})
    regions = pd.DataFrame({"region": ["r"], "timezone": ["UTC"], "country": ["US"], "jurisdiction": ["US"]})
    spec = {"name": "t", "region": [{"region": "r", "off_peak_start_hour": 22, "off_peak_end_hour": 6,
                                      "off_peak_discount": 0.5}]}
    scenario = Scenario.from_dict(spec)
    world = scenario.world(World(regions, prices, None), nodes)
    result = run_scenario(scenario, pd.DataFrame(rows), nodes, World(regions, prices, None))
    # submitted at 20:00 on the first day (time 0 is the first submit): the job runs 0-4 h from time 0
    report = cost_report(result, nodes, world.prices, regions=world.regions)
    assert report.totals["usd"] == 8 * (2 * 4.0 + 2 * 2.0)
    assert cost_report(result, nodes, prices).totals["usd"] == 8 * 4 * 4.0
    facts = RegionFacts(world, ["r"], pd.Timestamp("2026-01-01"), 86_400.0)
    assert np.allclose(facts.price_factor[0, [0, 21 * 4, 22 * 4, 23 * 4 + 3]], [0.5, 1.0, 0.5, 0.5])
    with pytest.raises(ScenarioError, match="needs off_peak_start_hour, off_peak_end_hour and off_peak_discount"):
        Scenario.from_dict({"region": [{"region": "r", "off_peak_discount": 0.5}]})


def test_a_quarters_span_is_the_seconds_whose_quarter_it_is():
    facts = RegionFacts(WORLD, ["ap", "eu"], T0, 86_400.0)
    last = facts.at_work.shape[1] - 1
    for q in (0, 1, 37, last - 1):
        start, end = facts.quarter_span(q)
        assert (start, end) == (q * 900.0, (q + 1) * 900.0)
        assert facts.quarter(start) == facts.quarter(np.nextafter(end, 0.0)) == q and facts.quarter(end) == q + 1
    assert facts.quarter_span(last) == (last * 900.0, np.inf)
    assert facts.quarter(1e12) == last
