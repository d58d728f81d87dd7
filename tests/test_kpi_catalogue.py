"""The KPI catalogue (engine.analysis.runs.catalogue) names exactly the keys the engine computes, and the
README's KPI table documents exactly the catalogue's keys."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from engine.analysis.runs.catalogue import CATALOGUE, MONEY, heading, higher_is_better, keys, label, methods, shown
from engine.analysis.runs.world_kpis import KPI_KEYS
from engine.scenario.spec import Scenario
from engine.service.compare import run_one
from engine.service.headroom.measure import ScenarioHeadroom

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "sample_data" / "scenarios"
FORMATS = {"pct", "duration", "int", "one", "two", "three", "usd", "x"}


@pytest.fixture(scope="module")
def day(sample_tables):
    jobs, fleet, world = sample_tables
    start = pd.to_datetime(jobs["submit_utc"]).min()
    scenario = replace(Scenario.load(SCENARIOS / "fifo.toml"), start_utc=start, end_utc=start + pd.Timedelta(days=1))
    return run_one(scenario, jobs, fleet, world)


def test_every_entry_is_complete():
    for key, kpi in CATALOGUE.items():
        assert kpi.key == key and kpi.label and kpi.unit, key
        assert kpi.better in ("higher", "lower", "") and kpi.fmt in FORMATS, key
    assert label("utilization") == "Utilisation" and higher_is_better("utilization")
    assert not higher_is_better("wait_p95_s")


def test_a_runs_kpis_are_the_catalogues_sim_fairness_stranded_and_matching_keys(day):
    computed = set(day.kpis)
    assert computed - keys("fragmentation") == keys("sim", "fairness", "stranded", "matching", "day_start")
    assert computed & keys("fragmentation") in (set(), keys("fragmentation"))


def test_the_world_and_headroom_groups_are_what_those_layers_compute():
    assert keys("world") == set(KPI_KEYS)
    headroom = ScenarioHeadroom("b", 1.25, (1.2, 1.3), 1.15, (1.1, 1.2), 100.0, 80.0, 20.0, 20.0, 2e5, 2e5, True, True,
                                9, ())
    assert set(headroom.kpis()) == keys("headroom")


def test_the_readme_documents_every_key_and_no_other():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    kpi_table = text[text.index("| key | unit | meaning |"):].split("\n\n", 1)[0]
    table = {key for row in re.findall(r"^\| (`[a-z_0-9]+`(?:, `[a-z_0-9]+`)*) \|", kpi_table, flags=re.M)
             for key in re.findall(r"`([a-z_0-9]+)`", row)}
    assert table == keys("sim", "fragmentation", "relaxation", "interconnect", "handoff", "day_start", "partitions",
                         "rightsize", "cluster", "stranded", "fairness", "matching", "world", "data", "workflow",
                         "experiments", "roles")
    for key in keys("headroom"):  # the JSON document's keys, as `meridian headroom --json` prints them
        assert f'"{key}"' in text, key


@pytest.mark.parametrize("key, value, text", [
    ("utilization", 0.6114, "61.1 %"), ("wait_p95_s", 57_960, "16.1 h"), ("cost_usd", 1234.4, "$1,234"),
    ("cost_usd", -50.0, "-$50"), ("effective_usd_per_gpu_hour", 2.345, "$2.35"), ("jain_index", 0.98765, "0.988"),
    ("load_headroom_ratio", 1.25, "x1.250"), ("frag_gpu_pct_of_idle", 12.34, "12.3 %"),
    ("idle_gpu_hours", 12_345.6, "12,346"), ("jobs_completed", float("nan"), "n/a"), ("wait_p95_s", None, "n/a")])
def test_shown_formats_a_value_by_its_keys_format(key, value, text):
    assert shown(key, value) == text


def test_heading_names_the_unit_only_where_the_value_and_label_do_not():
    assert heading("throughput_jobs_per_hour") == "Throughput (jobs/h)"
    assert heading("carbon_kg") == "Carbon (kgCO2e)"
    assert heading("idle_gpu_hours") == "Idle GPU-hours"            # the label says it
    assert heading("wait_p95_s") == "p95 wait"                      # the shown value says it ("16.1 h")
    assert heading("wait_p95_s", "h") == "p95 wait (h)" and heading("cost_usd", "") == "Spend"


def test_every_key_has_a_heading_and_a_shown_value():
    for key in CATALOGUE:
        assert heading(key) and shown(key, 1.0) != "n/a", key


def test_every_money_figure_has_one_definition_and_the_readme_gives_it():
    money = {key for key, kpi in CATALOGUE.items() if kpi.unit.startswith("USD")}
    assert set(MONEY) == money
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z_0-9]+)` \| [^|]+ \| (.+) \|$", text, flags=re.M))
    for key in keys("world"):
        if key in MONEY:
            assert rows[key] == MONEY[key], key
    assert methods("idle_cost_usd").startswith("- **Idle reserved cost** (`idle_cost_usd`) = reserved and rented burst")
