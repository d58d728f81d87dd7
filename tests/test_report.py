"""The executive report's content (engine.service.report): it reconciles with `meridian compare`, its
assumptions move the dollar figures as stated, its tables add up, and its figures are valid plotly."""
import json
import math
import re
import subprocess
import sys
import types
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from engine.cli.common import tables
from engine.core.text import hours
from engine.scenario.spec import Scenario
from engine.service.compare import Unusable, first_days
from engine.service.headroom.measure import HeadroomOptions
from engine.service.report import fmt
from engine.service.report.assumptions import ReportAssumptions
from engine.service.report.builder import Report, build_report
from engine.service.report.headline import capacity_sentences, savings
from engine.service.report.html import render_html

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "sample_data" / "scenarios"
DAYS = 2.0
SEEDS = HeadroomOptions(seeds=2, workers=2)  # the headroom searches: two demand resamplings each


@pytest.fixture(scope="module")
def data(sample_db):
    return tables(types.SimpleNamespace(trace=None, dataset="sample", db=str(sample_db)))


@pytest.fixture(scope="module")
def scenarios():
    grow = Scenario.from_dict({"name": "fifo+64", "policies": {"order": {"key": "fcfs"}},
                               "fleet": [{"region": "us-east", "gpu_type": "H100", "add_gpus": 64}]})
    return Scenario.load(SCENARIOS / "fifo.toml"), Scenario.load(SCENARIOS / "follow-the-sun.toml"), grow


@pytest.fixture(scope="module")
def report(data, scenarios) -> Report:
    baseline, candidate, grow = scenarios
    return build_report(*data, baseline, [candidate, grow], dataset="sample", days=DAYS, headroom=SEEDS)


def _compare_json(db, tmp_path, report: Report, names: list[str]) -> list[dict]:
    """`meridian compare --json` over the same scenarios restricted to the report's window."""
    files = []
    for name in names:
        text = (SCENARIOS / f"{name}.toml").read_text(encoding="utf-8")
        start = report.runs[0].scenario.start_utc
        end = report.runs[0].scenario.end_utc
        path = tmp_path / f"{name}.toml"
        path.write_text(text + f'\n[workload]\nstart_utc = "{start:%Y-%m-%dT%H:%M:%S}"\n'
                               f'end_utc = "{end:%Y-%m-%dT%H:%M:%S}"\n', encoding="utf-8")
        files += ["--scenario", str(path)]
    done = subprocess.run([sys.executable, "-m", "engine.cli", "compare", "--dataset", "sample", "--db", str(db),
                           *files, "--json", "--seeds", "2"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_every_kpi_equals_meridian_compare_for_the_same_window(report, sample_db, tmp_path):
    runs = _compare_json(sample_db, tmp_path, report, ["fifo", "follow-the-sun"])
    for run in runs:
        ours = report.kpis.set_index("kpi")[run["scenario"]]
        assert list(ours.index) == list(run["kpis"])
        differ = {k: (ours[k], v) for k, v in run["kpis"].items() if not _same(float(ours[k]), float(v))}
        assert differ == {}
    # The headline's figures come from the same numbers.
    fifo, sun = (r["kpis"] for r in runs)
    s = report.savings["follow-the-sun"]
    assert s.util_baseline == fifo["utilization"] and s.util_candidate == sun["utilization"]
    assert s.idle_usd_per_year_recovered == fifo["idle_cost_usd_per_year"] - sun["idle_cost_usd_per_year"]
    assert s.spend_usd_per_year_change == sun["cost_usd_per_year"] - fifo["cost_usd_per_year"]
    assert s.carbon_kg_per_year_change == sun["carbon_kg_per_year"] - fifo["carbon_kg_per_year"]
    assert s.equivalent_gpus == fifo["needed_gpus"] - sun["needed_gpus"] == sun["saved_gpus"]
    assert s.more_work_pct == pytest.approx(100 * (sun["load_headroom_ratio"] - 1))
    assert fifo["load_headroom_ratio"] == 1.0


def _headroom(needed: float, ratios=(1.0,)):
    return types.SimpleNamespace(name="candidate", needed_gpus=needed, ratio_by_seed=list(ratios),
                                 load_headroom_ratio=sum(ratios) / len(ratios), limited_by="")


@pytest.mark.parametrize("needed, fleet", [
    (90, "Or the same work on 10 fewer GPUs: $20K a year of hardware at $40K per GPU over 20 years (it needs 90 "
         "GPUs to serve this window's work at that level, base 100)."),
    (100, "It needs as many GPUs as base for the same work (it needs 100 GPUs to serve this window's work at that "
          "level, base 100)."),
    (103, "It needs 3 more GPUs for the same work: $6,000 a year of hardware at $40K per GPU over 20 years more (it "
          "needs 103 GPUs to serve this window's work at that level, base 100)."),
])
def test_the_fleet_sentence_says_fewer_as_many_or_more_gpus(needed, fleet):
    work, said = capacity_sentences("base", _headroom(100), _headroom(needed, (1.1, 1.3)), 40_000.0, 20.0)
    assert work == "candidate serves 20 % more work than base at base's service level (2 demand resamplings: " \
                   "+10 % to +30 %)."
    assert said == fleet


def test_headline_states_the_numbers_as_printed(report):
    s, text = report.savings["follow-the-sun"], " ".join(report.headline)
    k = report.kpis.set_index("kpi")
    first, second = report.headline[:2]
    assert first.startswith(f"follow-the-sun serves {abs(s.more_work_pct):.0f} % more work than fifo at fifo's "
                            "service level (2 demand resamplings:")
    if s.equivalent_gpus > 0:
        assert second.startswith(f"Or the same work on {s.equivalent_gpus:,.0f} fewer GPUs: "
                                 f"{fmt.usd(s.hardware_usd_per_year)} a year of hardware")
    else:  # the sample's 2 days since reserved work keeps off spot nodes: both need 1,272 GPUs
        assert s.equivalent_gpus == 0 and s.hardware_usd_per_year == 0
        assert second.startswith("It needs as many GPUs as fifo for the same work (it needs ")
    for shown in (fmt.pct(s.util_baseline), fmt.pct(s.util_candidate), fmt.usd(s.idle_usd_per_year_baseline),
                  fmt.usd(abs(s.idle_usd_per_year_recovered)), fmt.usd(s.hardware_usd_per_year),
                  hours(k.loc["wait_p95_s", "fifo"]), hours(k.loc["wait_p95_s", "follow-the-sun"]),
                  fmt.pct(k.loc["max_wait_sla_attainment", "follow-the-sun"]),
                  fmt.pct(k.loc["deadline_hit_rate", "follow-the-sun"]),
                  fmt.usd(k.loc["cost_usd_per_year", "follow-the-sun"]), fmt.signed_usd(s.spend_usd_per_year_change),
                  fmt.tonnes(k.loc["carbon_kg_per_year", "fifo"])):
        assert shown in text or (shown == "$0" and s.hardware_usd_per_year == 0), shown
    spend = next(line for line in report.headline if line.startswith("Spend "))
    assert f"({fmt.signed_usd(s.spend_usd_per_year_change)} a year: " in spend   # then the tiers that moved it
    assert any(f"{tier} " in spend for tier in ("reserved", "on-demand", "spot", "burst")) or "no tier's" in spend
    assert report.headline == report.headlines["follow-the-sun"] and set(report.headlines) == {"follow-the-sun",
                                                                                                "fifo+64"}
    assert "first 2 days" in report.range_note and report.range_utc[0] == pd.Timestamp("2026-08-03")


def test_region_table_adds_up_to_the_fleet_kpis(report):
    regions, k = report.regions, report.kpis.set_index("kpi")
    assert regions["gpus_baseline"].sum() == 1320 and (regions["gpus_baseline"] == regions["gpus_candidate"]).all()
    for side, name in (("baseline", "fifo"), ("candidate", "follow-the-sun")):
        weights = regions[f"gpus_{side}"] / regions[f"gpus_{side}"].sum()
        assert (regions[f"util_{side}"] * weights).sum() == pytest.approx(k.loc["utilization", name], rel=1e-9)
        assert regions[f"idle_usd_per_year_{side}"].sum() == pytest.approx(k.loc["idle_cost_usd_per_year", name])
        assert regions[f"spend_usd_per_year_{side}"].sum() == pytest.approx(k.loc["cost_usd_per_year", name])
        assert regions[f"carbon_t_per_year_{side}"].sum() * 1000 == pytest.approx(k.loc["carbon_kg_per_year", name])


def test_fleet_edit_candidate_has_an_investment_and_capex_scales_the_hardware_dollars(report, scenarios):
    grow = report.savings["fifo+64"]
    assert grow.added_gpus == 64 and grow.investment_usd == 64 * 30_000
    assert any("Investment: 64.0 GPUs" in s for s in report.headlines["fifo+64"])
    base, run = report.runs[0], report.runs[2]
    doubled = savings(base, run, ReportAssumptions(gpu_capex_usd=60_000))
    assert doubled.investment_usd == 2 * grow.investment_usd
    assert doubled.hardware_usd_not_spent == pytest.approx(2 * grow.hardware_usd_not_spent)
    assert grow.hardware_usd_not_spent != 0
    longer = savings(base, run, ReportAssumptions(amortisation_years=6))
    assert longer.hardware_usd_per_year == pytest.approx(grow.hardware_usd_per_year / 2)
    if grow.payback_years is not None:
        yearly = -grow.spend_usd_per_year_change + grow.hardware_usd_per_year
        assert grow.payback_years == pytest.approx(grow.investment_usd / yearly)


def test_annualisation_and_pue_change_the_yearly_dollars_and_carbon_as_stated(data, scenarios, report):
    baseline, candidate, _ = scenarios
    edited = build_report(*data, baseline, [candidate], ReportAssumptions(annualisation_days=730, pue=2.4),
                          days=DAYS, headroom=SEEDS)
    before, after = report.kpis.set_index("kpi"), edited.kpis.set_index("kpi")
    for name in ("fifo", "follow-the-sun"):
        assert after.loc["cost_usd_per_year", name] == pytest.approx(2 * before.loc["cost_usd_per_year", name])
        assert after.loc["idle_cost_usd_per_year", name] == pytest.approx(
            2 * before.loc["idle_cost_usd_per_year", name])
        assert after.loc["carbon_kg_per_year", name] == pytest.approx(4 * before.loc["carbon_kg_per_year", name])
        assert after.loc["utilization", name] == before.loc["utilization", name]
    assert edited.savings["follow-the-sun"].idle_usd_per_year_recovered == pytest.approx(
        2 * report.savings["follow-the-sun"].idle_usd_per_year_recovered)
    assert ("Days per year (annualisation)", "730", "days") in edited.assumptions.rows()


def test_figures_are_valid_plotly_with_the_white_template(report):
    go = pytest.importorskip("plotly.graph_objects")
    assert set(report.figures) == {"utilisation_by_local_hour", "spend_by_tier", "waits_by_class"}
    for name, spec in report.figures.items():
        figure = go.Figure(spec)   # raises on any invalid property
        assert figure.layout.template.layout.paper_bgcolor == "white", name
    heat = report.figures["utilisation_by_local_hour"]["data"]
    assert [t["name"] for t in heat] == ["fifo", "follow-the-sun"] and len(heat[0]["y"]) == 7
    assert all(len(row) == 24 for t in heat for row in t["z"])
    tiers = report.figures["spend_by_tier"]["data"]
    k = report.kpis.set_index("kpi")
    for trace in tiers:
        assert sum(trace["y"]) == pytest.approx(k.loc["cost_usd_per_year", trace["name"]], rel=1e-6)
    waits = {t["name"]: t for t in report.figures["waits_by_class"]["data"]}
    assert set(waits) == {"fifo", report.candidate}   # page 1 sets the best candidate against the baseline
    assert report.candidates == ["follow-the-sun", "fifo+64"]   # +18 % more work and 196 GPUs saved, against +0 % and -64


def test_local_hour_utilisation_averages_back_to_the_region_utilisation(report):
    from engine.service.report.tables import local_hour_utilisation, region_figures

    run = report.runs[1]
    hourly = local_hour_utilisation(run)
    regions = region_figures(run, 365).set_index("region")
    assert hourly["util"].between(0, 1).all()
    # Weighted by the hours the window spends at each local hour, the hours give back the region's figure.
    import numpy as np

    from engine.analysis.telemetry.local_hours import local_hour_bins

    zones = dict(zip(run.world.carbon.by_region["region"], run.world.carbon.by_region["timezone"]))
    for region, rows in hourly.groupby("region"):
        edges, hours = local_hour_bins(run.result.origin_utc, run.world.carbon.totals["window_s"], zones[region])
        span = np.bincount(hours, weights=np.diff(edges), minlength=24)
        assert np.average(rows["util"].to_numpy(), weights=span) == pytest.approx(regions.loc[region, "util"])


def test_first_days_keeps_a_scenarios_own_window_and_bad_calls_are_refused(data, scenarios):
    jobs = data[0]
    baseline, candidate, _ = scenarios
    own = replace(candidate, start_utc=pd.Timestamp("2026-08-05"), end_utc=None)
    kept = first_days([baseline, own], jobs, 3)
    assert kept[0].end_utc - kept[0].start_utc == pd.Timedelta(days=3) and kept[1] is own
    assert first_days([baseline], jobs, None) == [baseline]
    with pytest.raises(Unusable, match="at least one candidate"):
        build_report(*data, baseline, [])
    with pytest.raises(Unusable, match="must differ"):
        build_report(*data, baseline, [baseline])


def test_assumption_fields_describe_every_input():
    fields = {f["name"]: f for f in ReportAssumptions.fields()}
    assert {"annualisation_days", "gpu_capex_usd", "amortisation_years", "pue", "kw_per_gpu"} <= set(fields)
    assert fields["gpu_capex_usd"]["default"] == 30_000 and fields["kw_per_gpu"]["kind"] == "mapping"
    assert all(f["label"] and f["unit"] and f["help"] for f in fields.values())
    with pytest.raises(ValueError):
        ReportAssumptions(amortisation_years=0)
    with pytest.raises(ValueError):
        ReportAssumptions(pue=0.5)


def test_html_is_self_contained_and_holds_the_tables(report):
    html = render_html(report)
    outside_scripts = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    assert "src=" not in outside_scripts and "<link" not in outside_scripts and "http" not in outside_scripts
    assert html.count("<script>") == 2   # plotly.js inline, then the figures
    assert "Plotly.newPlot" in html and html.count('class="chart"') == 3
    for row in report.regions.itertuples():
        assert fmt.pct(row.util_baseline) in html
    assert report.fidelity in html.replace("&#x27;", "'")
