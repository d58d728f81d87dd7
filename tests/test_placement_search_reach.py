"""The batch placement policies reach the planner: the What-if builder offers them with their
parameters, and `meridian optimise` can search them and their parameters (the study's space is read
from the policies' declarations, engine.service.optimise.space)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.optimise.space import parse_study

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
NEW = ["greedy", "hill-climbing", "simulated-annealing", "tabu-search", "hybrid", "exact"]


def _form():
    import streamlit as st

    from dashboard.forms.scenario import scenario_form

    st.session_state["scenario"] = scenario_form("custom")


def test_the_builder_offers_each_search_with_its_parameters_and_the_scenario_parses():
    at = AppTest.from_function(_form, default_timeout=60)
    at.run()
    assert set(NEW) <= set(at.selectbox(key="custom:placement").options)
    at.selectbox(key="custom:placement").select("tabu-search").run()
    assert at.number_input(key="custom:placement:tabu-search:tenure").value == 5
    at.number_input(key="custom:placement:tabu-search:max_moves").set_value(120).run()
    assert not at.exception, at.exception
    spec = at.session_state["scenario"]["policies"]["placement"]
    assert spec["key"] == "tabu-search" and spec["max_moves"] == 120
    assert Scenario.from_dict(at.session_state["scenario"]).policies["placement"][1]["max_moves"] == 120
    at.selectbox(key="custom:placement").select("exact").run()
    assert at.number_input(key="custom:placement:exact:max_variables").value == 20_000


def test_optimise_searches_the_placement_searches_and_their_parameters():
    study = parse_study({
        "base": {"name": "b", "policies": {"order": {"key": "fcfs"}}},
        "objectives": ["wait_p95_s", "utilization"],
        "search": {"placement": ["best-fit", *NEW], "placement.max_moves": {"low": 50, "high": 500},
                   "placement.start_temperature": {"low": 10.0, "high": 1000.0}, "placement.max_variables": {
                       "low": 1000, "high": 50_000}}}, SCENARIOS / "study.toml")
    dims = {d.name: d for d in study.dimensions}
    assert dims["placement"].kind == "key" and set(NEW) <= set(dims["placement"].choices)
    assert dims["placement.max_moves"].kind == "int"
    assert set(dims["placement.max_moves"].keys) == {"hill-climbing", "simulated-annealing", "tabu-search", "hybrid"}
    assert dims["placement.start_temperature"].keys == ("simulated-annealing",)
    made = study.scenario({"placement": "hill-climbing", "placement.max_moves": 200}, "t")
    assert made["policies"]["placement"] == {"key": "hill-climbing", "max_moves": 200}
    assert registry.make("placement", "hill-climbing", max_moves=200).max_moves == 200
