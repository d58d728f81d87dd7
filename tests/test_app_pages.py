"""Every dashboard page through Streamlit's AppTest, on a temporary database."""
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import OPENB_INPUTS, shared, shown
from streamlit.testing.v1 import AppTest

from engine.analysis.runs.catalogue import shown as shown_kpi
from engine.analysis.telemetry.overview import build_overview
from engine.service.run import run_scenario
from engine.telemetry.batch import ImportBatch
from engine.telemetry.sample import read_bundle
from engine.telemetry.store import Store

APP = str(Path(__file__).parents[1] / "dashboard" / "app.py")
T = pd.Timestamp

# A 2-hour dataset with exact figures: 4 reserved H100s at $3/GPU-h; job a holds 2 GPUs for 2 h,
# job b waits 1 h then holds 2 GPUs for 1 h -> 6 of 8 GPU-hours busy (75 %), 2 idle ($6, i.e.
# $6 / (2/24 days) x 30.4375 = $2,191.50 a month), waits 0 h and 1 h -> p95 0.95 h = 57 min.
TINY = ImportBatch("csv", {
    "jobs": pd.DataFrame({
        "job_id": ["a", "b"], "workload_class": ["training", "batch"],
        "submit_utc": [T("2024-03-04 00:00"), T("2024-03-04 00:00")],
        "start_utc": [T("2024-03-04 00:00"), T("2024-03-04 01:00")],
        "end_utc": [T("2024-03-04 02:00"), T("2024-03-04 02:00")],
        "gpus": [2.0, 2.0], "gpu_type": ["H100", "H100"], "region": ["eu", "eu"],
        "status": ["completed", "completed"]}),
    "fleet": pd.DataFrame({"region": ["eu"], "node": ["n1"], "gpu_type": ["H100"], "gpus": [4], "tier": ["reserved"]}),
    "regions": pd.DataFrame({"region": ["eu"], "timezone": ["Europe/Berlin"]}),
    "prices": pd.DataFrame({"region": ["eu"], "gpu_type": ["H100"], "tier": ["reserved"],
                            "usd_per_gpu_hour": [3.0], "assumed": [False]}),
})
SAMPLES = ImportBatch("utilization", {"utilization": pd.DataFrame({
    "ts_utc": pd.date_range("2024-03-04", periods=4, freq="30min"), "region": "us",
    "busy": [1.0, 3.0, 2.0, 2.0], "total": 4.0, "unit": "nodes"})})
GOOD_CSV = (b"job_id,submit_utc,start_utc,end_utc,gpus,gpu_type,region,workload_class,status\n"
            b"u1,2024-05-01T00:00:00,2024-05-01T00:00:00,2024-05-01T03:00:00,8,A100,us,training,completed\n"
            b"u2,2024-05-01T00:30:00,2024-05-01T02:30:00,2024-05-01T03:00:00,8,A100,us,hpo,completed\n")
BAD_CSV = (b"job_id,submit_utc,start_utc,end_utc,gpus,status\n"
           b"x1,2024-05-01T00:00:00,2024-05-01T00:00:00,2024-05-01T01:00:00,-2,completed\n"
           b"x2,yesterday,2024-05-01T00:00:00,2024-05-01T01:00:00,1,completed\n"
           b"x3,2024-05-01T00:00:00,2024-05-01T00:00:00,2024-05-01T01:00:00,1,exploded\n")


@pytest.fixture
def db(tmp_path):
    """A fresh database holding the datasets 'tiny' and 'util' (the app adds the sample)."""
    path = tmp_path / "meridian.duckdb"
    store = Store.open(path)
    store.add_import("tiny", TINY, "tiny.csv", "sha-tiny")
    store.add_import("util", SAMPLES, "util.csv", "sha-util")
    store.close()
    return path


@pytest.fixture
def app(db, monkeypatch):
    """An AppTest of dashboard/app.py on `db`, opened on the Overview of 'tiny' (the sample's Overview would
    price the whole sample in the background: see test_a_fresh_database_opens_on_the_sample_data)."""
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset"] = "tiny"
    at.run()
    assert not at.exception, at.exception
    return at


def priced(at, timeout_s: float = 120.0):
    """`at` run again until the Overview's dollars (priced in a background thread) are shown."""
    deadline = time.monotonic() + timeout_s
    while any(m.value == "..." for m in at.metric) and time.monotonic() < deadline:
        time.sleep(0.5)
        at.run()
        assert not at.exception, at.exception
    assert not any(m.value == "..." for m in at.metric), "the recorded history was not priced in time"
    return at


def _select(at, dataset):
    at.selectbox(key="dataset").select(dataset).run()
    assert not at.exception, at.exception
    return at


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def _open_data_page(at):
    at.switch_page("app_pages/data.py").run()
    assert not at.exception, at.exception
    return at


def _upload(at, name, content):
    at.file_uploader[0].set_value((name, content, "text/csv")).run()
    assert not at.exception, at.exception
    at.button(key="import").click().run()
    assert not at.exception, at.exception
    return at


def test_a_fresh_database_opens_on_the_sample_data(db, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    app = AppTest.from_file(APP, default_timeout=120).run()
    assert not app.exception, app.exception
    assert app.selectbox(key="dataset").value == "sample"
    bundle = read_bundle().tables
    kpis = build_overview(bundle["jobs"], bundle["fleet"], bundle["regions"], pd.DataFrame()).kpis
    # The dollars are being priced in the background (the whole sample replayed: seconds): the rest is drawn.
    assert _metrics(app) == {
        "Utilisation": f"{kpis.utilisation_pct:.1f}%", "Idle GPU-hours": f"{kpis.idle_unit_hours:,.0f}",
        "Spend a year": "...", "Idle cost a year": "...", "p95 queue wait": f"{kpis.p95_wait_h:.1f} h"}
    assert len(app.get("plotly_chart")) == 5
    assert "from the fleet table" in shown(app.caption[0])
    assert any("Pricing the recorded history" in shown(c) for c in app.caption)


def test_overview_shows_exact_kpis_charts_and_methods(app):
    priced(app)
    # 4 reserved H100s at $3 over the 2-hour window: $24 spent, 2 GPU-hours idle = $6; a year = x 365 x 12.
    assert _metrics(app) == {"Utilisation": "75.0%", "Idle GPU-hours": "2", "Spend a year": "$105,120",
                             "Idle cost a year": "$26,280", "p95 queue wait": "57 min"}
    assert len(app.get("plotly_chart")) == 6
    assert "2 jobs" in shown(app.caption[0]) and "4 GPUs (from the fleet table)" in shown(app.caption[0])
    assert "recorded history of 2 jobs" in shown(app.caption[1]) and "(0.1 days; a year = x 365 / 0.1)" in shown(app.caption[1])
    methods = " ".join(shown(m) for m in app.expander[0].markdown)
    assert "Capacity: 4 GPUs from the fleet table." in methods
    assert "**Idle cost a year** (`idle_cost_usd_per_year`) = `idle_cost_usd` x the days of a year" in methods
    spend = next(d.value for d in app.dataframe if "idle_usd" in d.value.columns)
    assert spend[["tier", "usd", "idle_usd"]].values.tolist() == [["reserved", 24.0, 6.0]]


def test_overview_switches_between_hourly_and_daily(app):
    priced(app)
    assert app.radio(key="timeline_freq:tiny").value == "Hourly"   # a 2-hour dataset starts hourly
    app.radio(key="timeline_freq:tiny").set_value("Daily").run()
    assert not app.exception
    assert len(app.get("plotly_chart")) == 6


def test_overview_of_utilisation_samples_has_no_waits_or_dollars(app):
    priced(_select(app, "util"))
    metrics = _metrics(app)
    assert metrics["Utilisation"] == "50.0%" and metrics["Idle node-hours"] == "4"
    assert metrics["Spend a year"] == "n/a" and metrics["p95 queue wait"] == "n/a"
    assert any("No dollars for this dataset: it has no fleet table" in shown(c) for c in app.caption)
    assert any("utilisation samples only" in shown(i) for i in app.info)


def test_data_page_lists_the_datasets(app):
    _open_data_page(app)
    table = app.dataframe[-1].value
    assert list(table["name"]) == [n for n in sorted(table["name"])]
    assert {"tiny", "util"} <= set(table["name"])
    assert table.set_index("name").loc["tiny", "rows"] == 2


def test_uploading_a_csv_adds_and_selects_a_dataset(app):
    _open_data_page(app)
    _upload(app, "gpu-jobs.csv", GOOD_CSV)
    assert any("Imported 2 rows (csv) into dataset gpu-jobs" in shown(s) for s in app.success)
    assert app.selectbox(key="dataset").value == "gpu-jobs"
    assert "gpu-jobs" in set(app.dataframe[-1].value["name"])
    app.switch_page("app_pages/overview.py").run()
    assert not app.exception
    # Inferred capacity: peak 16 A100s; busy 24 + 4 = 28 of 48 GPU-hours.
    assert _metrics(app)["Utilisation"] == "58.3%"


def test_a_malformed_csv_shows_every_problem_with_file_and_line(app):
    _open_data_page(app)
    before = set(app.dataframe[-1].value["name"])
    _upload(app, "broken.csv", BAD_CSV)
    assert any("Import rejected" in shown(e) and "nothing was imported" in shown(e) for e in app.error)
    reports = [d.value for d in app.dataframe if list(d.value.columns) == ["file", "line", "reason"]]
    assert len(reports) == 1
    report = reports[0]
    assert list(report["line"]) == [2, 3, 4]
    assert set(report["file"]) == {"broken.csv"}
    assert set(app.dataframe[-1].value["name"]) == before


def test_the_column_mapping_editor_fixes_an_unknown_header(app):
    _open_data_page(app)
    csv = GOOD_CSV.replace(b"submit_utc,", b"enqueued_when,", 1)
    app.file_uploader[0].set_value(("renamed.csv", csv, "text/csv")).run()
    preview = app.dataframe[0].value
    assert list(preview.columns)[:2] == ["job_id", "enqueued_when"] and len(preview) == 2
    mapping = [s for s in app.selectbox if shown(s.label) == "enqueued_when"][0]
    assert mapping.value == "(automatic)"
    mapping.select("submit_utc").run()
    app.button(key="import").click().run()
    # The mapped column's name does not say UTC, so its naive times need a stated time zone.
    reasons = [d.value for d in app.dataframe if "reason" in d.value.columns][0]["reason"]
    assert "have no time zone" in reasons.iloc[0]
    app.selectbox(key="tz").select("UTC").run()
    app.button(key="import").click().run()
    assert not app.exception
    assert any("into dataset renamed" in shown(s) for s in app.success)


def test_deleting_a_dataset_asks_for_confirmation(app):
    _select(app, "tiny")
    _open_data_page(app)
    app.selectbox(key="delete_choice").select("tiny").run()
    app.button(key="delete").click().run()
    assert any("Delete dataset tiny" in shown(w) for w in app.warning)
    app.button(key="cancel").click().run()
    assert "tiny" in set(app.dataframe[-1].value["name"])
    app.button(key="delete").click().run()
    app.button(key="confirm").click().run()
    assert not app.exception
    assert "tiny" not in set(app.dataframe[-1].value["name"])
    assert app.selectbox(key="dataset").value != "tiny"


def test_an_unreadable_database_is_an_error_message_not_a_traceback(tmp_path, monkeypatch):
    db = tmp_path / "junk.duckdb"
    db.write_bytes(b"this is not a database" * 100)
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any("Cannot open the database" in shown(e) for e in at.error)


def test_an_unexpected_failure_is_a_short_error_not_a_traceback(app, monkeypatch):
    from dashboard import data

    def broken(*tables):
        raise ValueError("analysis exploded")

    monkeypatch.setattr(data, "build_overview", broken)
    _select(app, "util")
    assert any("This page could not be shown: ValueError: analysis exploded" in shown(e) for e in app.error)


def _open_fidelity_page(at):
    at.switch_page("app_pages/fidelity.py").run()
    assert not at.exception, at.exception
    return at


@shared("traces/swf/lublin_256.swf", "expected/rlscheduler_lublin1_published.csv")
def test_fidelity_page_shows_the_record_and_reruns_rlscheduler_live(app):
    _open_fidelity_page(app)
    metrics = _metrics(app)
    assert metrics["RLScheduler · Lublin-1 · runs within ±0.01"] == "100 of 100"
    assert metrics["FGD · openb default · points within tolerance"] == "42 of 42"
    text = " ".join(shown(m) for m in app.markdown)
    assert "RLScheduler, Lublin-1: 100 of 100 published runs reproduced within ±0.01" in text
    assert "the published policy order holds" in text
    assert len(app.get("plotly_chart")) == 3   # RLScheduler, FGD and the RL section
    assert len(app.dataframe[0].value) == 200 and len(app.dataframe[1].value) == 3 and len(app.dataframe[2].value) == 126
    assert "The evolved order beats the published heuristic it must beat in 3 of 3 anchors" in text
    app.multiselect(key="fid_rls_policies").set_value(["SJF"]).run()
    assert set(app.dataframe[0].value["policy"]) == {"SJF"} and len(app.dataframe[0].value) == 40
    app.selectbox(key="fid_rls_policy").select("SJF").run()
    app.selectbox(key="fid_rls_backfill").select("compat").run()
    app.button(key="fid_rls_run").click().run()
    assert not app.exception, app.exception
    assert any("SJF, RLScheduler's backfilling: 10 of 10 sequences within ±0.01 just now" in s.value
               and "identical to the record" in shown(s) for s in app.success)


@shared(*OPENB_INPUTS, "expected/fgd_default_published.csv")
def test_fidelity_page_reruns_one_fgd_seed(app):
    _open_fidelity_page(app)
    app.selectbox(key="fid_fgd_policy").select("bestfit").run()
    app.button(key="fid_fgd_run").click().run()
    assert not app.exception, app.exception
    assert any("BestFit, seed 42: 7 of 7 GPU-allocation points within" in shown(s) for s in app.success)
    assert len(app.get("plotly_chart")) == 4
    live = [d.value for d in app.dataframe if "arrived_pct" in d.value.columns][-1]   # the RL section follows
    assert list(live["arrived_pct"]) == [50, 80, 90, 100, 110, 120, 130]
    assert live.set_index("arrived_pct").loc[100, "ours"] == 92.92


def test_fidelity_page_without_traces_shows_the_record_and_where_to_put_them(app, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", sys.argv + ["--shared", str(tmp_path / "nowhere")])
    _open_fidelity_page(app)
    assert _metrics(app)["RLScheduler · Lublin-1 · runs within ±0.01"] == "100 of 100"
    notes = [shown(i) for i in app.info if "Live re-runs need the trace files" in shown(i)]
    traces = tmp_path / "nowhere" / "traces"
    assert len(notes) == 4 and f"`{traces / 'swf' / 'lublin_256.swf'}`" in notes[0]
    assert f"`{traces / 'swf' / 'lublin_256.swf'}`" in notes[1]   # the evolved order's first anchor
    assert f"`{traces / 'alibaba-openb' / 'openb_pod_list_default.csv'}`" in notes[2]
    assert f"`{traces / 'swf' / 'CTC-SP2-1996-3.1-cln.swf.gz'}`" in notes[3]   # SC'15 backfilling
    assert all(b.key not in ("fid_rls_run", "fid_fgd_run", "fid_evolve_run", "fid_bf_run") for b in app.button)
    evolved = [d.value for d in app.dataframe if "beats_rival" in d.value.columns]
    assert len(evolved) == 1 and evolved[0]["beats_rival"].all()


def test_fidelity_page_replays_the_recorded_baseline_and_shows_how_far_it_is_from_the_history(app):
    # tiny's CSV names no scheduler, so the baseline is FCFS + EASY (assumed). Replayed, job b starts at
    # once on the 2 GPUs job a leaves free, where the history made it wait 1 h: batch's p50 and p95 are
    # 100 % off (and so is "all"), which the page must say rather than hide; training (0 h both ways) is within.
    _select(app, "tiny")
    _open_fidelity_page(app)
    assert any("first come, first served with EASY backfilling" in shown(c) and "is assumed" in shown(c)
               for c in app.caption)
    app.button(key="fid_recorded_run").click().run()
    assert not app.exception, app.exception
    assert any("1 of 3 rows within the tolerance (2 jobs replayed; the largest p95 deviation 100.0 %)" in shown(w)
               for w in app.warning), [shown(w) for w in app.warning]
    table = next(d.value for d in app.dataframe if "workload_class" in d.value).set_index("workload_class")
    assert table.loc["batch", ["recorded_p95_h", "replayed_p95_h"]].tolist() == [1.0, 0.0]
    assert table.loc["batch", "p95_deviation_pct"] == -100.0 and not table.loc["batch", "within"]
    assert table.loc["training", "within"] and not table.loc["all", "within"]


def test_timezones_page_on_the_sample_tiny_and_samples_only_data(app):
    from engine.analysis.telemetry.handoff import describe
    from engine.analysis.telemetry.timezones import build_timezones

    bundle = read_bundle().tables
    expected = build_timezones(bundle["jobs"], bundle["fleet"], bundle["regions"], bundle["teams"])
    app.session_state["dataset"] = "sample"
    app.switch_page("app_pages/timezones.py").run()
    assert not app.exception, app.exception
    assert _metrics(app) == {
        "Off-hours idle GPU-hours": f"{expected.off_hours_idle_gpu_hours:,.0f}",
        "Flexible work queued": f"{expected.flexible_queued_gpu_hours:,.0f} GPU-h",
        "Lendable GPU-hours (upper bound)": f"{expected.lendable_gpu_hours:,.0f}", "Residency violations": "0"}
    assert len(app.get("plotly_chart")) == 5
    assert app.selectbox(key="tz_week:sample").value == pd.Timestamp("2026-08-03")
    text = " ".join(shown(m) for m in app.markdown)
    assert describe(expected.pairs.iloc[0]) in text and "Lendable GPU-hours** from region A" in text
    assert any("ran in a region their tag allows" in shown(s) for s in app.success)
    from engine.analysis.telemetry.scaling import suggestions
    scaling = suggestions(expected.hourly)
    assert len(scaling) and all(sentence in text for sentence in scaling["sentence"])
    suggested = next(d.value for d in app.dataframe if "action" in d.value.columns)
    assert suggested["region"].tolist() == scaling["region"].tolist()
    hours = next(d.value for d in app.dataframe if "hours_at_work" in d.value.columns)  # teams beside regions
    pd.testing.assert_frame_equal(hours, expected.week_hours(pd.Timestamp("2026-08-03")))
    saudi = hours[hours["name"] == "arabic-nlp"].iloc[0]
    assert (saudi["region"], saudi["working_days"], saudi["hours"]) == ("me-central", "Sun-Thu", "8-17")
    assert app.radio(key="tz_hours:sample").value == "regions'"
    assert any("follow each **region's own calendar**" in shown(c) for c in app.caption)
    app.radio(key="tz_hours:sample").set_value("teams'").run()
    assert not app.exception, app.exception
    teams = build_timezones(bundle["jobs"], bundle["fleet"], bundle["regions"], bundle["teams"], calendar="team")
    assert teams.lendable_gpu_hours != expected.lendable_gpu_hours
    assert _metrics(app)["Lendable GPU-hours (upper bound)"] == f"{teams.lendable_gpu_hours:,.0f}"
    assert _metrics(app)["Off-hours idle GPU-hours"] == f"{teams.off_hours_idle_gpu_hours:,.0f}"
    assert any("follow the **teams' calendars**" in shown(c) and "me-central: teams: arabic-nlp" in shown(c)
               for c in app.caption), [shown(c) for c in app.caption]
    app.radio(key="tz_view:sample").set_value("UTC week").run()
    app.selectbox(key="tz_week:sample").select(pd.Timestamp("2026-09-07")).run()
    assert not app.exception, app.exception
    assert len(app.get("plotly_chart")) == 5
    _select(app, "tiny")
    infos = " ".join(shown(i) for i in app.info)
    assert "no teams table" in infos and "Nothing to hand off" in infos
    assert _metrics(app)["Off-hours idle GPU-hours"] == "2"   # 01:00-03:00 in Berlin: 2 + 0 of 4 GPUs idle
    _select(app, "util")
    assert any("Nothing to show for util: It has no job records" in shown(i) for i in app.info)



def test_cost_and_carbon_page_prices_tiny_exactly_and_recomputes_on_edits(app):
    from engine.analysis.runs.world_kpis import world_kpis
    from engine.scenario.recorded import recorded_baseline
    _select(app, "tiny")
    app.switch_page("app_pages/costcarbon.py").run()
    assert not app.exception, app.exception
    assert app.multiselect(key="cc_scenarios").value == ["easy-backfill"] and app.number_input(key="cc_days").value == 7
    # 4 reserved H100s x 2 h at $3 = $24, 2 idle GPU-hours = $6, 6 GPU-hours held: $4 per GPU-hour;
    # 6 GPU-h x 0.7 kW x PUE 1.2 x 480 g/kWh (no carbon table) = 2.42 kg
    assert _metrics(app) == {"Spend": "$24.00", "Idle reserved cost": "$6.00", "Effective $/GPU-hour": "$4.00",
                             "Productive $/GPU-hour": "$4.00", "Carbon (CO2e)": "2.42 kg"}
    table = app.dataframe[0].value   # KPIs as rows, each in its catalogue format, scenarios as columns
    jobs, fleet = TINY.tables["jobs"], TINY.tables["fleet"]
    recorded = recorded_baseline(None)  # tiny does not say how it was scheduled: FCFS + EASY
    expected = world_kpis(run_scenario(recorded, jobs, fleet), fleet, TINY.tables["prices"], TINY.tables["regions"],
                          None)
    assert expected["cost_usd"] == 24.0 and table.loc["cost_usd", "recorded"] == "$24"
    assert table.loc["carbon_kg", "recorded"] == shown_kpi("carbon_kg", expected["carbon_kg"])
    assert table.loc["cost_usd_per_year", "easy-backfill"] == "$105,120"    # x 365 x 12
    assert table.loc["idle_cost_usd_per_year", "recorded"] == "$26,280"
    assert table.loc["wait_p95_s", "recorded"] == "0 s" and table.loc["cost_usd", "what"] == "Spend"  # b fits beside a
    assert list(table.columns[1:3]) == ["recorded", "easy-backfill"] and len(app.get("plotly_chart")) == 5
    assert any("eu: no carbon profile; 480 gCO2e/kWh assumed" in shown(w) for w in app.warning)
    prices = [d.value for d in app.dataframe if "source" in d.value.columns][0]
    assert prices[["tier", "USD per GPU-hour", "source"]].values.tolist() == [["reserved", 3.0, "dataset"]]
    assumptions = [d.value for d in app.dataframe if "assumption" in d.value.columns][0]
    assert "power per H100 GPU" in set(assumptions["assumption"]) and "power per A100 GPU" not in set(
        assumptions["assumption"])
    app.number_input(key="cc_pue").set_value(1.5).run()
    app.number_input(key="cc_kw:H100").set_value(1.0).run()
    app.number_input(key="cc_year_days").set_value(360.0).run()
    assert not app.exception, app.exception
    assert _metrics(app)["Carbon (CO2e)"] == "4.32 kg"                    # 6 GPU-h x 1 kW x 1.5 x 0.48
    assert app.dataframe[0].value.loc["cost_usd_per_year", "recorded"] == shown_kpi("cost_usd_per_year", 24.0 * 360 * 12)
    app.radio(key="cc_detail").set_value("easy-backfill").run()
    assert [(m.label, m.delta) for m in app.metric][0] == ("Spend", "+$0.00")   # same fleet, same GPU-hours
    assert any("Spend a year against recorded, by pricing tier: +$0 a year: no tier's spend moves" in shown(c)
               for c in app.caption)
    _select(app, "util")
    assert any("Nothing to price for util: it has no fleet table" in shown(i) for i in app.info)


@shared("traces/swf/lublin_256.swf")
def test_fidelity_page_searches_an_evolved_order_again(app):
    _open_fidelity_page(app)
    app.number_input(key="fid_evolve_trials").set_value(10).run()
    app.button(key="fid_evolve_run").click().run(timeout=300)
    assert not app.exception, app.exception
    metrics = _metrics(app)
    assert metrics["F1 · test sequences"] == "75.07" and metrics["SJF · test sequences"] == "73.31"
    assert float(metrics["evolved · test sequences"]) > 1
