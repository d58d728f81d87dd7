"""A study run (engine.service.optimise.study) on the sample's first days: seeded and reproducible
whatever the number of workers, the front feasible and non-dominated, hard constraints kept, the
held-out check on windows no trial saw, a journal that resumes, and front points as scenario files."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from engine.cli.common import tables
from engine.scenario.spec import Scenario
from engine.service.optimise import study as study_module
from engine.service.optimise.front import losses, scenario_toml
from engine.service.optimise.space import parse_study
from engine.service.optimise.study import BASELINE, run_study

REPO = Path(__file__).resolve().parents[1]
SPEC = {"name": "t", "base": "../sample_data/scenarios/priority-fairshare.toml",
        "objectives": ["wait_p95_s", "jain_index", "wait_p95_s@training"],
        "search": {"order.weight_fairshare": {"low": 0, "high": 20000}, "order.weight_age": {"low": 0, "high": 10000},
                   "backfill": ["none", "easy"]},
        "windows": {"days": 1, "train": 2, "held_out": 1}}


@pytest.fixture(scope="module")
def data(sample_db):
    return tables(argparse.Namespace(dataset="sample", trace=None, db=str(sample_db)))


def _study(**changes):
    return parse_study({**SPEC, **changes}, REPO / "tests" / "t.toml")


@pytest.fixture(scope="module")
def result(data):
    return run_study(_study(), data, trials=6, population=3, workers=2, seed=7)


def _trials(result):
    return [(t.number, t.params, t.measured.values) for t in result.trials]


def test_the_same_seed_gives_the_same_trials_with_one_worker_or_two(result, data):
    again = run_study(_study(), data, trials=6, population=3, workers=1, seed=7)
    assert _trials(again) == _trials(result) and again.front == result.front
    other = run_study(_study(), data, trials=3, population=3, workers=2, seed=8)
    assert [t.params for t in other.trials] != [t.params for t in result.trials[:3]]


def test_the_front_is_feasible_and_no_trial_dominates_a_front_trial(result):
    objectives = result.study.objectives
    front = [result.trial(n) for n in result.front]
    assert front and all(t.measured.feasible for t in front)
    everyone = losses([t for t in result.trials if t.measured.feasible], objectives)
    for point in losses(front, objectives):
        assert not np.any(np.all(everyone <= point, axis=1) & np.any(everyone < point, axis=1))
    assert len(result.hypervolume) == 2 and result.hypervolume == sorted(result.hypervolume)


def test_objectives_are_the_mean_over_the_training_windows_of_compares_kpis(result):
    trial = result.trials[0]
    per_window = [w["kpis"]["wait_p95_s"] for w in trial.measured.windows]
    assert len(per_window) == 2 and trial.measured.values["wait_p95_s"] == pytest.approx(np.mean(per_window))
    training = [next(r for r in w["classes"] if r["workload_class"] == "training")["wait_p95_s"]
                for w in trial.measured.windows]
    assert trial.measured.values["wait_p95_s@training"] == pytest.approx(np.mean(training))


def test_the_held_out_check_runs_the_front_and_the_baseline_on_a_window_after_training(result, data, monkeypatch):
    assert set(result.held_out) == {f"trial-{n}" for n in result.front} | {BASELINE}
    study = result.study
    train, held = study.windows.bounds(data[0], study.source)[:2], study.windows.bounds(data[0], study.source)[2:]
    scenario = study_module.window_scenario(study, result.trial(result.front[0]).params, "x", held[0])
    assert scenario.start_utc >= train[-1][1] and len(result.held_out[BASELINE].windows) == 1
    assert result.simulations == 2 * (6 + 1) + len(result.held_out)


def test_a_hard_constraint_keeps_breaking_trials_off_the_front(data):
    strict = run_study(_study(constraints={"jain_index": {"min": 1.5}}), data, trials=3, population=3, workers=2)
    assert strict.front == [] and not any(t.measured.feasible for t in strict.trials)
    assert all(t.measured.violations[0] > 0 for t in strict.trials)


def test_a_failing_simulation_is_a_failed_trial_and_the_search_goes_on(data, monkeypatch):
    real = study_module._summarise

    def some_fail(study, outcomes):
        measured = real(study, outcomes)
        return measured if outcomes[0].name != "trial-1" else type(measured)({}, measured.violations, {}, [], "boom")

    monkeypatch.setattr(study_module, "_summarise", some_fail)
    out = run_study(_study(), data, trials=3, population=3, workers=2)
    failed = [t for t in out.trials if t.measured.error]
    assert [t.number for t in failed] == [1] and 1 not in out.front and len(out.trials) == 3


def test_a_journal_resumes_a_study_where_it_stopped(data, tmp_path):
    journal = tmp_path / "j.log"
    first = run_study(_study(), data, trials=3, population=3, workers=2, seed=7, journal=journal)
    resumed = run_study(_study(), data, trials=6, population=3, workers=2, seed=7, journal=journal)
    assert resumed.resumed == 3 and len(resumed.trials) == 6
    assert _trials(first) == [(n, p, v) for n, p, v in _trials(resumed)[:3]]
    with pytest.raises(Exception, match="has the objectives wait_p95_s, jain_index"):
        run_study(_study(objectives=["wait_p95_s", "starved_jobs"]), data, trials=4, population=3, journal=journal)


def test_a_front_point_is_a_scenario_file_with_its_parameters(result, tmp_path):
    trial = result.trial(result.front[0])
    path = tmp_path / "picked.toml"
    path.write_text(scenario_toml(result.study, trial.params, "picked"), encoding="utf-8")
    loaded = Scenario.load(path)
    key, params = loaded.policies["order"]
    assert loaded.name == "picked" and key == "multifactor"
    assert params["weight_age"] == pytest.approx(trial.params["order.weight_age"])
    assert loaded.policies["backfill"][0] == trial.params["backfill"]


def _cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "engine.cli", "optimise", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_the_cli_prints_the_study_as_json_and_writes_the_front(sample_db, tmp_path):
    space = tmp_path / "study.toml"
    text = (REPO / "sample_data" / "studies" / "priority-weights.toml").read_text()
    space.write_text(text.replace('"../scenarios/', f'"{REPO}/sample_data/scenarios/')
                     .replace("days = 7", "days = 1"), encoding="utf-8")
    out = _cli("--dataset", "sample", "--db", str(sample_db), "--space", str(space), "--trials", "4",
               "--population", "4", "--workers", "2", "--json", "--out", str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert len(document["objectives"]) == 5 and len(document["trials"]) == 4 and document["front"]
    assert "generation 0: 4/4 trials" in out.stderr
    written = sorted(p.name for p in (tmp_path / "out" / "scenarios").iterdir())
    assert written == [f"trial-{n}.toml" for n in sorted(document["front"])]
    assert (tmp_path / "out" / "trials.csv").read_bytes().startswith(b"\xef\xbb\xbf")


def test_the_cli_refuses_a_bad_study_in_one_line(tmp_path):
    space = tmp_path / "bad.toml"
    space.write_text('base = "nowhere.toml"\nobjectives = ["wait_p95_s", "jain_index"]\n', encoding="utf-8")
    out = _cli("--trace", "x.swf", "--space", str(space))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "cannot read the base scenario" in out.stderr


def test_the_first_trial_is_the_base_scenario_so_the_front_is_never_worse(result):
    first = result.trials[0]
    assert first.params == {"backfill": "easy", "order.weight_fairshare": 10000.0, "order.weight_age": 1000.0}
    assert first.measured.values == pytest.approx(result.baseline.values)
    base = losses([first], result.study.objectives)[0]
    front = losses([result.trial(n) for n in result.front], result.study.objectives)
    assert np.any(np.all(front <= base, axis=1))


def test_a_base_outside_the_searched_range_is_not_enqueued():
    narrow = _study(search={"order.weight_age": {"low": 5000, "high": 9000}})
    assert study_module.base_params(narrow) is None
    assert study_module.base_params(_study()) is not None


def test_a_hostile_study_name_cannot_break_out_of_the_scenario_files_comment(result, tmp_path):
    from dataclasses import replace

    hostile = replace(result.study, name='x\n[policies.order]\nkey = "sjf"\n#', source="s\r\n[workload]")
    trial = result.trial(result.front[0])
    path = tmp_path / "hostile.toml"
    path.write_text(scenario_toml(hostile, trial.params, "n"), encoding="utf-8")
    assert Scenario.load(path).policies["order"][0] == "multifactor"
    assert tomllib.loads(path.read_text(encoding="utf-8"))["name"] == "n"
