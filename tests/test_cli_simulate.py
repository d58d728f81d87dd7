"""`meridian simulate` / `meridian compare` end to end, through a subprocess."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from engine.analysis.runs.catalogue import keys
from engine.cli.simulate import _fmt
from engine.service.run import run_scenario

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "tests" / "data" / "swf" / "small.swf"
FIFO = REPO / "sample_data" / "scenarios" / "fifo.toml"
EASY = REPO / "sample_data" / "scenarios" / "easy-backfill.toml"
# Every key the KPI catalogue names (engine.analysis.runs.catalogue; the README documents the same keys): the
# fragmentation pair only for runs that sample fragmentation, the world KPIs only for a priced fleet (or
# --world: an SWF log's processors are not), the headroom ones only for compare (without --no-headroom).
KPIS = {"utilization", "idle_gpu_hours", "wait_p50_s", "wait_p95_s", "avg_bounded_slowdown", "makespan_s",
        "jobs_completed", "jobs_failed"}
WORLD_KPIS = keys("world")
SIM_KPIS = keys("sim", "stranded", "fairness", "day_start")   # an SWF log's jobs have no class: no matching KPIs
ALL_KPIS = SIM_KPIS | WORLD_KPIS
HEADROOM = keys("headroom")
FRAGMENTATION = keys("fragmentation")
GROUP_KEYS = ["jobs", "finished", "wait_mean_s", "wait_p50_s", "wait_p95_s", "wait_p99_s", "jct_mean_s", "jct_p50_s",
              "jct_p95_s", "jct_p99_s", "avg_bounded_slowdown", "gpu_hours"]


def meridian(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_simulate_json_and_export(tmp_path):
    done = meridian("simulate", "--trace", SMALL, "--scenario", FIFO, "--json", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["scenario"] == "fifo" and set(out["kpis"]) in (SIM_KPIS, SIM_KPIS | FRAGMENTATION)
    assert list(out) == ["scenario", "kpis", "by_workload_class", "by_team", "teams", "queue_classes", "by_cluster"]
    k = out["kpis"]
    assert k["jobs_completed"] + k["jobs_failed"] == 7
    assert 0 <= k["utilization"] <= 1
    # small.swf under FIFO: JCTs (end - submit) average 430 s, waits 194.3 s.
    assert (k["jct_mean_s"], k["jct_p50_s"]) == (430.0, 300.0)
    assert k["jct_mean_s"] - k["wait_mean_s"] == pytest.approx(sum(j["run_s"] for j in _jobs(tmp_path)) / 7)
    assert [list(row) for row in out["by_workload_class"]] == [["workload_class", *GROUP_KEYS]]
    assert [(r["team"], r["jobs"], r["finished"], r["jct_mean_s"]) for r in out["by_team"]] == [
        ("g1", 2, 2, 200.0), ("g2", 1, 1, 50.0), ("u3", 4, 4, 640.0)]   # no group: the user is the team
    busy_gpu_hours = k["idle_gpu_hours"] * k["utilization"] / (1 - k["utilization"])
    assert sum(r["gpu_hours"] for r in out["by_team"]) == pytest.approx(busy_gpu_hours)
    # an SWF log's fleet has no clusters: one per region, holding all the busy GPU-hours
    assert [(r["cluster"], r["cluster_jobs"]) for r in out["by_cluster"]] == [(out["by_cluster"][0]["region"], 7)]
    assert out["by_cluster"][0]["cluster_gpu_hours"] == pytest.approx(busy_gpu_hours)
    assert len(_jobs(tmp_path)) == 7 and (tmp_path / "out" / "decisions.csv").exists()


def _jobs(tmp_path):
    return pd.read_parquet(tmp_path / "out" / "jobs.parquet").to_dict("records")


def test_compare_json_is_a_list_in_scenario_order():
    done = meridian("compare", "--trace", SMALL, "--scenario", FIFO, "--scenario", EASY, "--json", "--seeds", "2",
                    "--workers", "1")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [o["scenario"] for o in out] == ["fifo", "easy-backfill"]
    assert all(set(o["kpis"]) in (SIM_KPIS | HEADROOM, SIM_KPIS | HEADROOM | FRAGMENTATION) for o in out)
    assert out[0]["kpis"]["load_headroom_ratio"] == 1.0 and out[0]["kpis"]["saved_gpus"] == 0.0
    assert out[1]["headroom"]["seeds"] == [0, 1] and len(out[1]["headroom"]["load_headroom_by_seed"]) == 2
    assert "p95 wait at most unknown" in out[0]["headroom"]["service_level"]
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert [line.split(" ran in ")[0] for line in progress if " ran in " in line] == ["[1/2] fifo:", "[2/2] easy-backfill:"]
    assert len([line for line in progress if " ran in " not in line]) == 6   # 2 x (2 seeds + fleet)
    assert [r["jct_mean_s"] for o in out for r in o["by_workload_class"]] == [
        o["kpis"]["jct_mean_s"] for o in out]   # one class ("unknown") in an SWF trace
    assert out[1]["kpis"]["wait_p95_s"] <= out[0]["kpis"]["wait_p95_s"]


def test_compare_table_shows_deltas():
    done = meridian("compare", "--trace", SMALL, "--scenario", FIFO, "--scenario", EASY, "--no-headroom")
    assert done.returncode == 0, done.stderr
    progress = [line.split(" ran in ")[0] for line in done.stderr.splitlines()]   # as each finishes, in parallel
    assert sorted(progress) in (["[1/2] easy-backfill:", "[2/2] fifo:"], ["[1/2] fifo:", "[2/2] easy-backfill:"])
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["kpi", "fifo", "easy-backfill"]
    assert any(line.startswith("wait_mean_s") and "(-" in line for line in lines)
    assert any(line.startswith("jct_mean_s") and "341.4 -88.57 (-21%)" in line for line in lines)
    kpi_rows = lines[:next(i for i, line in enumerate(lines) if not line or line.startswith("assumed:"))]
    assert len({len(line) for line in kpi_rows}) == 1  # columns measured and aligned
    assert not any("e+" in line for line in kpi_rows)  # no scientific notation
    team = lines.index("by team")
    assert lines[team + 1].split()[:4] == ["team", "scenario", "jobs", "finished"]
    assert lines[team + 2].split()[:4] == ["g1", "fifo", "2", "2"]
    assert lines[team + 7].split()[:4] == ["u3", "easy-backfill", "4", "4"]


def test_compare_in_parallel_gives_what_one_process_gives():
    args = ("compare", "--trace", SMALL, "--scenario", FIFO, "--scenario", EASY, "--scenario", FIFO, "--no-headroom",
            "--json")
    serial, parallel = meridian(*args, "--workers", "1"), meridian(*args, "--workers", "2")
    assert serial.returncode == parallel.returncode == 0, parallel.stderr
    assert json.loads(parallel.stdout) == json.loads(serial.stdout)   # every run deterministic, in scenario order
    assert len([line for line in parallel.stderr.splitlines() if " ran in " in line]) == 3


@pytest.mark.parametrize("value, sign, text", [
    (3.0, "", "3"), (1234567.89, "", "1,234,568"), (-45587.2, "+", "-45,587"), (0.61138, "", "0.6114"),
    (33.37, "", "33.37"), (0.002779, "+", "+0.002779"), (0.0000123, "", "1.230e-05"), (float("inf"), "", "inf"),
    (0.0, "+", "+0")])
def test_kpi_numbers_are_grouped_or_four_significant_digits(value, sign, text):
    assert _fmt(value, sign) == text


def test_bad_inputs_exit_2_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[policies]\norder = { key = "lifo" }\n', encoding="utf-8")
    for args in (("--trace", SMALL, "--scenario", bad), ("--trace", tmp_path / "none.swf", "--scenario", FIFO),
                 ("--trace", REPO / "tests" / "data" / "swf" / "malformed.swf", "--scenario", FIFO)):
        done = meridian("simulate", *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("meridian: ")
    assert "choose from drf, edf, f1, fail-fast, fair-tree, fcfs" in meridian("simulate", "--trace", SMALL, "--scenario", bad).stderr


def test_simulate_a_dataset_from_the_store(tmp_path):
    db = tmp_path / "m.duckdb"
    done = meridian("simulate", "--dataset", "nope", "--db", db, "--scenario", FIFO)
    assert done.returncode == 2 and "unknown dataset 'nope'; choose from sample" in done.stderr


def test_simulate_table_lists_groups_and_written_files(tmp_path):
    done = meridian("simulate", "--trace", SMALL, "--scenario", FIFO, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "scenario fifo" and any(line.split() == ["jct_mean_s", "430"] for line in lines)
    klass = lines.index("by workload class")
    assert lines[klass + 1].split()[:3] == ["workload_class", "jobs", "finished"]
    assert lines[klass + 2].split()[:3] == ["unknown", "7", "7"]
    tables = ["jobs", "timeline", "decisions", "segments"] + ["fragmentation"] * (tmp_path / "fragmentation.csv").exists()
    files = [f"{t}.{kind}" for kind in ("csv", "parquet") for t in tables]
    assert lines[-1] == f"wrote {', '.join(files)} to {tmp_path}/"


# --- Cost, carbon and residency KPIs (engine.analysis.runs.world_kpis) -------------------------------


def test_trace_world_kpis_use_the_defaults_and_reconcile_with_the_engine():
    from engine.analysis.runs.world_kpis import KPI_KEYS, world_kpis
    from engine.scenario.spec import Scenario
    from engine.telemetry.importers import parser_for
    from engine.telemetry.importers.common import ImportOptions

    assert set(KPI_KEYS) == WORLD_KPIS
    done = meridian("simulate", "--trace", SMALL, "--scenario", FIFO, "--json", "--world")
    assert done.returncode == 0, done.stderr
    kpis = json.loads(done.stdout)["kpis"]
    batch = parser_for("swf")(SMALL.read_bytes(), str(SMALL), ImportOptions())
    jobs, fleet = batch.tables["jobs"], batch.tables["fleet"]
    scenario = Scenario.load(FIFO)
    expected = world_kpis(run_scenario(scenario, jobs, fleet), scenario.apply(jobs, fleet)[1], pd.DataFrame(),
                          batch.tables.get("regions"), None, jobs=jobs)
    assert {key: kpis[key] for key in KPI_KEYS} == {key: expected[key] for key in KPI_KEYS}
    # no prices in an SWF log: the price book's CPU slot, reserved, $0.05 x 0.6 per slot-hour
    assert kpis["cost_usd"] == pytest.approx(0.03 * kpis["idle_gpu_hours"] / (1 - kpis["utilization"]))
    assert kpis["egress_usd"] == 0.0 and kpis["residency_violations"] == 0.0
    notes = [line.removeprefix("assumed: ") for line in done.stderr.splitlines() if line.startswith("assumed: ")]
    assert notes == expected["assumed"] and any("default price book" in n for n in notes)


def test_dataset_world_kpis_read_the_stored_prices(tmp_path):
    from test_app_pages import TINY

    from engine.telemetry.store import Store

    db = tmp_path / "m.duckdb"
    store = Store.open(db)
    store.add_import("tiny", TINY, "tiny.csv", "sha-tiny")
    store.close()
    done = meridian("compare", "--dataset", "tiny", "--db", db, "--scenario", FIFO, "--scenario", EASY, "--json",
                    "--no-headroom")
    assert done.returncode == 0, done.stderr
    for out in json.loads(done.stdout):
        k = out["kpis"]
        # 4 reserved H100s x 2 h at the dataset's $3: $24, of which 2 idle GPU-hours = $6; 6 GPU-h allocated
        assert (k["cost_usd"], k["cost_reserved_usd"], k["idle_cost_usd"]) == (24.0, 24.0, 6.0)
        assert k["effective_usd_per_gpu_hour"] == 4.0 and k["cost_usd_per_year"] == pytest.approx(24 * 365 * 12)
        # 6 GPU-h x 0.7 kW x PUE 1.2 at the world-average 480 g/kWh (tiny has no carbon table)
        assert k["energy_kwh"] == pytest.approx(5.04) and k["carbon_kg"] == pytest.approx(5.04 * 0.48)
    assert "assumed: eu: no carbon profile; 480 gCO2e/kWh assumed at every hour" in done.stderr.splitlines()
    table = meridian("simulate", "--dataset", "tiny", "--db", db, "--scenario", FIFO).stdout.splitlines()
    assert ["cost_usd", "24"] in [line.split() for line in table]
    assert ["carbon_kg", "2.419"] in [line.split() for line in table]
    assert table.index("assumed: eu: no carbon profile; 480 gCO2e/kWh assumed at every hour") < table.index(
        "by workload class")


def test_region_price_scale_changes_cost_usd(tmp_path):
    dearer = tmp_path / "fifo-dearer.toml"
    dearer.write_text(FIFO.read_text(encoding="utf-8").replace('name = "fifo"', 'name = "fifo-dearer"')
                      + '\n[[region]]\nregion = "default"\nprice_scale = 2.5\n', encoding="utf-8")
    done = meridian("compare", "--trace", SMALL, "--scenario", FIFO, "--scenario", dearer, "--json", "--world",
                    "--no-headroom")
    assert done.returncode == 0, done.stderr
    base, edited = (o["kpis"] for o in json.loads(done.stdout))
    # the same run, priced at 2.5 x the price book's reserved CPU slot ($0.03 per slot-hour)
    for key in ("cost_usd", "cost_reserved_usd", "idle_cost_usd", "effective_usd_per_gpu_hour"):
        assert edited[key] == pytest.approx(2.5 * base[key]) and base[key] > 0
    assert {k: v for k, v in edited.items() if "usd" not in k} == {k: v for k, v in base.items() if "usd" not in k}
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[[region]]\nregion = "eu-west"\nprice_scale = 0.5\n', encoding="utf-8")
    done = meridian("simulate", "--trace", SMALL, "--scenario", wrong, "--world")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "meridian: wrong: [[region]] 'eu-west' is not a region of the dataset; valid: default"
