"""`meridian rl train|evaluate|agents` end to end on a small log, a trained agent in a scenario, and bad input."""
import json
import subprocess
import sys

import pytest
from conftest import REPO
from rl_helpers import random_rows, swf_text

from engine.cli.main import main
from engine.predict.rl.agent_registry import AgentRegistry

TINY = ["--epochs", "2", "--trajectories", "4", "--group", "2", "--imitation-windows", "2",
        "--imitation-steps", "3"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A log of 2,000 jobs (so the ten test starts, up to 8,850, are cut short: they are given with
    --starts) and an agent trained on it into a fresh model registry."""
    folder = tmp_path_factory.mktemp("rl")
    trace = folder / "small.swf"
    trace.write_text(swf_text(random_rows(400, 8, seed=1), 8))
    db = folder / "m.duckdb"
    code = main(["rl", "train", "--trace", str(trace), "--backfill", "compat", "--name", "tiny", "--json",
                 "--db", str(db), *TINY])
    assert code == 0
    return trace, db


def test_train_prints_progress_and_publishes_a_version_with_its_curve(trained, capsys):
    trace, db = trained
    version = AgentRegistry.beside(db).version("tiny")
    meta = version.meta
    assert version.number == 1 and meta["settings"]["backfill"] == "compat" and meta["data"]["jobs"] == 400
    assert [p["epoch"] for p in meta["curve"]] == [0, 1, 2] and meta["training"]["decisions"] > 0
    assert len(meta["data"]["digest"]) == 64 and meta["evaluation"] is None      # no test sequences in 400 jobs
    assert not (version.path.parent / "training").exists()                     # the checkpoint is gone once published
    assert main(["rl", "train", "--trace", str(trace), "--backfill", "compat", "--name", "tiny", "--db", str(db),
                 *TINY]) == 0
    captured = capsys.readouterr()
    assert "epoch 0: learnt to copy F1's picks" in captured.err and "epoch 2: bounded slowdown" in captured.err
    assert "agent tiny v2" in captured.out


def test_evaluate_sets_the_agent_beside_the_heuristics(trained, capsys):
    trace, db = trained
    assert main(["rl", "evaluate", "--model", "tiny", "--trace", str(trace), "--starts", "0,150", "--length", "64",
                 "--json", "--db", str(db)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["orders"]) == {"agent", "FCFS", "WFP3", "UNICEP", "SJF", "F1"} and result["backfill"] == "compat"
    assert len(result["orders"]["agent"]["sequences"]) == 2 and result["published"] == {}
    assert main(["rl", "evaluate", "--model", "lublin-1", "--trace", str(trace), "--starts", "0", "--length", "64",
                 "--db", str(db)]) == 0
    assert "agent" in capsys.readouterr().out
    assert main(["rl", "agents", "--json", "--db", str(db)]) == 0
    names = {(row["name"], row["version"]) for row in json.loads(capsys.readouterr().out)}
    assert {("lublin-1", None), ("tiny", 1)} <= names


def test_a_trained_agent_orders_a_scenario(trained, tmp_path, capsys):
    trace, db = trained
    scenario = tmp_path / "rl.toml"
    scenario.write_text('name = "rl"\n[policies]\norder = { key = "rl", model = "tiny" }\n')
    assert main(["simulate", "--trace", str(trace), "--scenario", str(scenario), "--json", "--db", str(db)]) == 0
    assert json.loads(capsys.readouterr().out)["kpis"]["jobs_completed"] == 400
    grid = tmp_path / "grid.toml"   # a sweep's workers get the trained agent too (bound before the pool starts)
    grid.write_text('name = "g"\n[base]\npolicies = { order = { key = "rl", model = "tiny" } }\n[[axis]]\n'
                    'set = "policies.backfill"\nvalues = ["none", "easy"]\n')
    swept = subprocess.run([sys.executable, "-m", "engine.cli", "sweep", "--trace", str(trace), "--grid", str(grid),
                            "--workers", "1", "--no-store", "--json", "--db", str(db)], capture_output=True, text=True,
                           cwd=REPO, timeout=300)
    assert swept.returncode == 0, swept.stderr
    assert [o["kpis"]["jobs_completed"] for o in json.loads(swept.stdout)["outcomes"]] == [400, 400]
    scenario.write_text('name = "rl"\n[policies]\norder = { key = "rl", model = "nobody" }\n')
    assert main(["simulate", "--trace", str(trace), "--scenario", str(scenario), "--db", str(db)]) == 2
    assert "no agent 'nobody'" in capsys.readouterr().err


def test_bad_input_exits_2_with_one_line(trained, tmp_path, capsys):
    trace, db = trained
    assert main(["rl", "evaluate", "--model", "nobody", "--trace", str(trace), "--db", str(db)]) == 2
    assert "no agent 'nobody'" in capsys.readouterr().err
    assert main(["rl", "evaluate", "--model", "tiny", "--trace", str(trace), "--db", str(db)]) == 2
    assert "does not fit" in capsys.readouterr().err                          # the ten test starts are past 400
    assert main(["rl", "train", "--trace", str(trace), "--name", "fresh", "--resume", "--db", str(db)]) == 2
    assert "no interrupted run" in capsys.readouterr().err
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxNodes: 4\n1 0 -1 x 1\n")
    assert main(["rl", "train", "--trace", str(bad), "--db", str(db), *TINY]) == 2
    assert "bad.swf" in capsys.readouterr().err
    assert main(["rl", "train", "--trace", str(trace), "--trajectories", "5", "--group", "2", "--db", str(db)]) == 2
    assert "multiple of group" in capsys.readouterr().err


def test_an_agent_on_a_datasets_jobs_with_the_runtime_predictors_features(trained, tmp_path, capsys):
    trace, _ = trained
    db = tmp_path / "m.duckdb"
    assert main(["ingest", str(trace), "--dataset", "small", "--db", str(db)]) == 0
    assert main(["predict", "train", "--dataset", "small", "--no-eval", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["rl", "train", "--dataset", "small", "--features", "predicted", "--name", "seer", "--json",
                 "--db", str(db), *TINY]) == 0
    meta = json.loads(capsys.readouterr().out)
    assert meta["settings"]["features"] == "predicted" and meta["data"]["jobs"] == 400
    assert AgentRegistry.beside(db).load("seer").net.width == 11          # 8 features + P10, P50, P90
    scenario = tmp_path / "seer.toml"
    scenario.write_text('name = "seer"\n[policies]\norder = { key = "rl", model = "seer" }\n')
    assert main(["simulate", "--dataset", "small", "--scenario", str(scenario), "--db", str(db)]) == 2
    assert "runtime predictors' quantiles" in capsys.readouterr().err
    assert main(["rl", "train", "--trace", str(trace), "--features", "predicted", "--db", str(db), *TINY]) == 2
    assert "needs --dataset" in capsys.readouterr().err
