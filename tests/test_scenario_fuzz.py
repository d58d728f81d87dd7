"""Fuzzing scenarios (hypothesis): a bundled scenario with a few of its values (or whole tables)
replaced by awkward ones (negatives, infinities, NaN, huge and tiny numbers, wrong types, unknown keys,
dates out of range, unknown regions and tiers, deep nesting; the scenario contract of issue 28) is
either refused with a ScenarioError or runs to its end on a small two-region workload; never
another exception. This is how a negative seed passing validation and `fleet = 5` raising a
TypeError were found."""
import copy
import math
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import deadline, fleet, job

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

SCENARIOS = {p.stem: tomllib.loads(p.read_text())
             for p in sorted((Path(__file__).resolve().parents[1] / "sample_data" / "scenarios").glob("*.toml"))}
NASTY = [-1, 0, 0.5, 1.0, 3600, -3600, 10**30, -10**30, math.inf, -math.inf, math.nan, True, "", "x", "0", "inf",
         "none", "us-east", "2026-13-01", [], [1, 2], ["a"], {}, {"key": "zzz"}, {"key": "fcfs"}, [{"x": 1}],
         1e-9, 1e308, 10**12, "9999-01-01T00:00:00", "0001-01-01T00:00:00", "atlantis", "platinum",
         [[[[[[[[[1]]]]]]]]], {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}]
TOP = ["policies", "timer_s", "seed", "name", "burst", "outage", "quota", "queue", "team", "spot", "runtime", "fleet",
       "region", "latency", "data", "workload", "predictive_scaling", "handoff", "partitions"]
JOBS = pd.DataFrame([job(i, 10 * i, 100, 1 + i % 4, region=["us-east", "eu-west"][i % 2]) for i in range(12)])
NODES = pd.concat([fleet(8, 8, region="us-east"), fleet(8, region="eu-west").assign(node=["m0"])], ignore_index=True)


def _leaves(value, path=()):
    """Paths to every scalar in nested tables and lists."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _leaves(item, path + (k,))
    elif path:
        yield path


def _mutated(data: dict, edits) -> dict:
    data = copy.deepcopy(data)
    for pick, top, replace_leaf, value in edits:
        paths = list(_leaves(data))
        if paths and replace_leaf:
            *parents, last = paths[pick % len(paths)]
            table = data
            for key in parents:
                table = table[key]
            table[last] = copy.deepcopy(value)
        else:
            data[TOP[top % len(TOP)]] = copy.deepcopy(value)
    return data


EDITS = st.lists(st.tuples(st.integers(0, 999), st.integers(0, 99), st.booleans(), st.sampled_from(NASTY)),
                 min_size=1, max_size=3)


def _refused_or_runs(name: str, edits) -> None:
    data = _mutated(SCENARIOS[name], edits)
    try:
        scenario = Scenario.from_dict(data, source=f"{name}.toml")
    except ScenarioError as refused:
        assert str(refused).startswith(f"{name}.toml: ")
        return
    try:
        with deadline():
            run_scenario(scenario, JOBS, NODES)
    except ScenarioError as refused:  # found only against the data: named by the scenario's name
        assert str(refused).startswith(f"{scenario.name}: ")


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(SCENARIOS)), EDITS)
def test_a_mangled_scenario_is_refused_with_its_error_or_runs(name, edits):
    _refused_or_runs(name, edits)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(SCENARIOS)), EDITS)
def test_deeper_a_mangled_scenario_is_refused_with_its_error_or_runs(name, edits):
    _refused_or_runs(name, edits)
