"""Why a candidate costs more or less (engine.analysis.runs.cost_change): the change in spend a year split
by pricing tier adds up to the change exactly, each part says why in words, and the report's spend
bullet and the Cost & carbon page give those reasons."""
from __future__ import annotations

import types
from pathlib import Path

import pytest

from engine.analysis.runs.cost_change import explained, spend_change
from engine.cli.common import tables
from engine.scenario.spec import Scenario
from engine.service.compare import first_days, run_scenarios
from engine.service.report.fmt import signed_usd

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
NAMES = ("fifo", "easy-backfill", "burst-to-cloud", "carbon-aware")


@pytest.fixture(scope="module")
def runs(sample_db):
    data = tables(types.SimpleNamespace(trace=None, dataset="sample", db=str(sample_db)))
    scenarios = first_days([Scenario.load(SCENARIOS / f"{n}.toml") for n in NAMES], data[0], 2)
    return dict(zip(NAMES, run_scenarios(scenarios, *data, world=True)[0]))


@pytest.mark.parametrize("name", NAMES[1:])
def test_the_parts_add_up_to_the_change_in_spend_a_year(runs, name):
    base, other = runs["fifo"], runs[name]
    parts = spend_change(base.world.cost, other.world.cost, 365.0)
    total = other.kpis["cost_usd_per_year"] - base.kpis["cost_usd_per_year"]
    assert sum(p.usd_per_year for p in parts) == pytest.approx(total, abs=1e-6 * max(1.0, abs(total)))
    assert [p.tier for p in parts][:1] == ["reserved"] and all(p.reason for p in parts)
    reserved = next(p for p in parts if p.tier == "reserved")
    assert reserved.installed_gpus == 0 and reserved.usd_per_year == pytest.approx(0.0, abs=1e-6)


def test_cloud_bursts_are_named_as_the_reason_for_burst_to_clouds_spend(runs):
    parts = spend_change(runs["fifo"].world.cost, runs["burst-to-cloud"].world.cost, 365.0)
    burst = next(p for p in parts if p.tier == "burst")
    assert burst.usd_per_year > 0 and burst.paid_gpu_hours_per_year > 0
    assert "more cloud GPU-hours billed" in burst.reason


def test_explained_leads_with_the_largest_part_and_says_how_tiers_are_billed(runs):
    base, other = runs["fifo"], runs["carbon-aware"]
    parts = spend_change(base.world.cost, other.world.cost, 365.0)
    total = other.kpis["cost_usd_per_year"] - base.kpis["cost_usd_per_year"]
    text = explained(parts, total, signed_usd)
    largest = max(parts, key=lambda p: abs(p.usd_per_year))
    assert text.startswith(f"{signed_usd(total)} a year: {largest.tier} {signed_usd(largest.usd_per_year)} "
                           f"({largest.reason})")
    assert "reserved unchanged (the same GPUs, " in text
    assert explained(parts, 0.0, signed_usd, least_usd=1e12).startswith("+$0 a year: no tier's spend moves")
    short = explained(parts, total, signed_usd, least_usd=0.0, most=1)
    assert short == f"{signed_usd(total)} a year: {largest.tier} {signed_usd(largest.usd_per_year)} ({largest.reason})"


def test_a_price_mix_change_is_said_when_hours_and_dollars_move_apart():
    from engine.analysis.runs.cost_change import _reason

    assert _reason("on-demand", -50.0, 10.0, 10.0, 0.0) == "10 more GPU-hours held by jobs, at lower prices"
    assert _reason("spot", 50.0, -10.0, -10.0, 0.0) == "10 fewer GPU-hours held by jobs, at higher prices"
    assert _reason("reserved", 1e5, 7e4, 0.0, 8.0) == "+8 reserved GPUs installed"
    assert "region prices" in _reason("reserved", 1e5, 0.0, 0.0, 0.0, same_window=True)
    assert "different measurement window" in _reason("reserved", 1e5, 0.0, 0.0, 0.0, same_window=False)
