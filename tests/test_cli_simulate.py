"""`meridian simulate` / `meridian compare` end to end, through a subprocess."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "tests" / "data" / "swf" / "small.swf"
FIFO = REPO / "sample_data" / "scenarios" / "fifo.toml"
EASY = REPO / "sample_data" / "scenarios" / "easy-backfill.toml"
KPIS = {"utilization", "idle_gpu_hours", "wait_p50_s", "wait_p95_s", "avg_bounded_slowdown", "makespan_s",
        "jobs_completed", "jobs_failed"}


def meridian(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_simulate_json_and_export(tmp_path):
    done = meridian("simulate", "--trace", SMALL, "--scenario", FIFO, "--json", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["scenario"] == "fifo" and KPIS <= set(out["kpis"])
    assert out["kpis"]["jobs_completed"] + out["kpis"]["jobs_failed"] == 7
    assert 0 <= out["kpis"]["utilization"] <= 1
    jobs = pd.read_parquet(tmp_path / "out" / "jobs.parquet")
    assert len(jobs) == 7 and (tmp_path / "out" / "decisions.csv").exists()


def test_compare_json_is_a_list_in_scenario_order():
    done = meridian("compare", "--trace", SMALL, "--scenario", FIFO, "--scenario", EASY, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [o["scenario"] for o in out] == ["fifo", "easy-backfill"]
    assert all(KPIS <= set(o["kpis"]) for o in out)
    assert out[1]["kpis"]["wait_p95_s"] <= out[0]["kpis"]["wait_p95_s"]


def test_compare_table_shows_deltas():
    done = meridian("compare", "--trace", SMALL, "--scenario", FIFO, "--scenario", EASY)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["kpi", "fifo", "easy-backfill"]
    assert any(line.startswith("wait_mean_s") and "(-" in line for line in lines)


def test_bad_inputs_exit_2_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[policies]\norder = { key = "lifo" }\n', encoding="utf-8")
    for args in (("--trace", SMALL, "--scenario", bad), ("--trace", tmp_path / "none.swf", "--scenario", FIFO),
                 ("--trace", REPO / "tests" / "data" / "swf" / "malformed.swf", "--scenario", FIFO)):
        done = meridian("simulate", *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("meridian: ")
    assert "choose from edf, f1, fcfs" in meridian("simulate", "--trace", SMALL, "--scenario", bad).stderr


def test_simulate_a_dataset_from_the_store(tmp_path):
    db = tmp_path / "m.duckdb"
    done = meridian("simulate", "--dataset", "nope", "--db", db, "--scenario", FIFO)
    assert done.returncode == 2 and "unknown dataset 'nope'; choose from sample" in done.stderr
