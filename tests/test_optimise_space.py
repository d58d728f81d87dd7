"""Study files (engine.service.optimise.space): the search space comes from the policies' own parameter
declarations, objectives and constraints from the KPI catalogue, and every mistake names the file."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.optimise.space import StudyError, Windows, objective, parse_study

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
STUDY = Path(__file__).resolve().parents[1] / "sample_data" / "studies" / "priority-weights.toml"


def _study(**changes):
    data = {"base": {"name": "b", "policies": {"order": {"key": "multifactor"}, "backfill": {"key": "easy"}}},
            "objectives": ["wait_p95_s", "jain_index"],
            "search": {"order.weight_age": {"low": 0, "high": 100}}}
    data.update(changes)
    return parse_study(data, SCENARIOS / "study.toml")


def test_the_bundled_study_parses_with_five_objectives_and_a_held_out_window():
    from engine.service.optimise.space import load_study

    study = load_study(STUDY)
    assert len(study.objectives) == 5 and study.windows.held_out == 1
    assert {d.name for d in study.dimensions} >= {"order.weight_fairshare", "backfill", "order.favor_small"}
    assert [d.kind for d in study.dimensions if d.name == "order.favor_small"] == ["bool"]


def test_parameter_kinds_come_from_the_declarations():
    study = _study(search={"order.weight_age": {"low": 0, "high": 10}, "order.favor_small": {},
                           "backfill": ["none", "easy", "conservative"],
                           "backfill.max_job_test": {"low": 0, "high": 500, "step": 50},
                           "quota.by": {"choices": ["team", "queue"]}, "quota": ["kueue"]})
    kinds = {d.name: (d.kind, d.keys) for d in study.dimensions}
    assert kinds["order.weight_age"] == ("float", ("multifactor",))
    assert kinds["order.favor_small"] == ("bool", ("multifactor",))
    assert kinds["backfill.max_job_test"] == ("int", ("conservative",))   # only conservative has it
    assert kinds["backfill"][0] == "key" and kinds["quota.by"] == ("choice", ("kueue",))


def test_a_newly_registered_policy_is_searchable_without_new_code(monkeypatch):
    @dataclass(frozen=True)
    class Toy:
        patience_s: float = field(default=60.0, metadata={"help": "a test knob"})
        depth: int = 3

        def keys(self, queue, now_s):
            return np.zeros(len(queue.submit_s))

    monkeypatch.setitem(registry._REGISTRY["order"], "toy-searchable", Toy)
    Toy.registry_key, Toy.family, Toy.traits = "toy-searchable", "order", registry.declare("order", "toy", {})
    study = _study(search={"order": ["fcfs", "toy-searchable"], "order.patience_s": {"low": 1, "high": 100},
                           "order.depth": {"low": 1, "high": 9}})
    dims = {d.name: d for d in study.dimensions}
    assert dims["order.patience_s"].kind == "float" and dims["order.depth"].kind == "int"
    assert dims["order.depth"].keys == ("toy-searchable",)
    made = study.scenario({"order": "toy-searchable", "order.depth": 5}, "t")
    assert made["policies"]["order"] == {"key": "toy-searchable", "depth": 5}


def test_a_chosen_key_keeps_the_bases_parameters_only_when_it_is_the_same_policy():
    study = _study(search={"backfill": ["none", "easy"], "order.weight_age": {"low": 0, "high": 10}})
    kept = study.scenario({"backfill": "easy", "order.weight_age": 5.0}, "x")["policies"]
    assert kept["backfill"] == {"key": "easy"} and kept["order"] == {"key": "multifactor", "weight_age": 5.0}
    Scenario.from_dict(study.scenario({"backfill": "none", "order.weight_age": 1.0}, "y"))


@pytest.mark.parametrize("changes, words", [
    ({"bogus": 1}, "unknown key(s) bogus"),
    ({"objectives": ["wait_p95_s"]}, "2 to 12 KPI keys"),
    ({"objectives": ["wait_p95_s", "wait_p95_s"]}, "listed twice"),
    ({"objectives": ["wait_p95_s", "no_such_kpi"]}, "'no_such_kpi' is not a KPI a study measures"),
    ({"objectives": ["wait_p95_s", "makespan_s"]}, "neither better higher nor lower"),
    ({"objectives": ["wait_p95_s", "load_headroom"]}, "is not a KPI a study measures"),
    ({"objectives": ["wait_p95_s", "jain_index@training"]}, "a class figure is one of"),
    ({"search": {}}, "[search] must name at least one parameter"),
    ({"search": {"order.nope": {"low": 0, "high": 1}}}, "has a parameter 'nope'; theirs: "),
    ({"search": {"orders.weight_age": {"low": 0, "high": 1}}}, "'orders' is not a policy family"),
    ({"search": {"backfill": ["easy", "bogus"]}}, "must list policy keys from"),
    ({"search": {"order.weight_age": {"low": 5, "high": 1}}}, "low must be below high"),
    ({"search": {"order.weight_age": {"low": 0, "high": 9, "log": True}}}, "a log range needs low > 0"),
    ({"search": {"order.weight_age": {"low": 0, "high": "x"}}}, "high must be a finite number"),
    ({"search": {"order.weight_age": {"min": 0}}}, "must be a table of"),
    ({"search": {"backfill": ["conservative"], "backfill.max_job_test": {"low": 0, "high": 9.5}}},
     "integer parameter"),
    ({"constraints": {"residency_violations": {"most": 0}}}, "must be { max = number }"),
    ({"windows": {"days": 0}}, "days must be a number of days > 0"),
    ({"windows": {"train": 0}}, "train must be a whole number >= 1"),
    ({"base": {"name": "b", "policies": {"order": {"key": "nope"}}}}, "order policy 'nope' is unknown"),
    ({"base": 3}, "base must be a scenario file name or a [base] table"),
])
def test_every_mistake_names_the_file_and_the_problem(changes, words):
    with pytest.raises(StudyError) as caught:
        _study(**changes)
    assert "study.toml" in str(caught.value) and words in str(caught.value)


def test_an_objective_knows_its_direction_and_its_class():
    assert objective("jain_index", "f").higher and not objective("wait_p95_s", "f").higher
    cls = objective("wait_p95_s@training", "f")
    assert cls.workload_class == "training" and not cls.higher
    assert cls.value({}, [{"workload_class": "training", "wait_p95_s": 7.0}]) == 7.0
    assert np.isnan(cls.value({}, [{"workload_class": "batch", "wait_p95_s": 7.0}]))


def test_windows_follow_the_first_submit_and_refuse_data_too_short():
    jobs = pd.DataFrame({"submit_utc": pd.to_datetime(["2026-01-01", "2026-01-05"])})
    bounds = Windows(2.0, 1, 1).bounds(jobs, "s.toml")
    assert bounds == [(pd.Timestamp("2026-01-01"), pd.Timestamp("2026-01-03")),
                      (pd.Timestamp("2026-01-03"), pd.Timestamp("2026-01-05"))]
    with pytest.raises(StudyError, match="asks for 4 windows of 2 days, but the data spans 4.0 days"):
        Windows(2.0, 3, 1).bounds(jobs, "s.toml")
