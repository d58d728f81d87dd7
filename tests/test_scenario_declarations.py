"""The declarations the scenario parser and the What-if builder share for [latency], [[fleet]] and the
[[region]] calendar and off-peak keys: every field has a label and help, every number a unit and a range,
and the parser accepts exactly the values inside that range (hypothesis), with messages naming the key."""
from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.errors import ScenarioError
from engine.scenario.edits import FleetEdit
from engine.scenario.spec import Scenario
from engine.scenario.world import CALENDAR_KEYS, OFF_PEAK, RegionEdit
from engine.world.latency import Latency, LatencyPair

DECLARED = ([spec for spec in fields(RegionEdit) if spec.name in CALENDAR_KEYS + OFF_PEAK]
            + [spec for spec in fields(Latency) if spec.name == "slo_ms"] + list(fields(LatencyPair))
            + list(fields(FleetEdit)))


@pytest.mark.parametrize("spec", DECLARED, ids=lambda spec: spec.name)
def test_every_field_says_what_it_is_and_every_number_its_unit_and_range(spec):
    assert spec.metadata["label"] and spec.metadata["help"]
    if str(spec.type).startswith(("int", "float")):
        assert {"unit", "min", "max"} <= set(spec.metadata) and spec.metadata["min"] < spec.metadata["max"]


def _latency(table: dict) -> Latency:
    return Scenario.from_dict({"name": "l", "latency": table}, source="l.toml").latency


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_a_round_trip_and_the_slo_are_accepted_exactly_within_their_declared_range(ms):
    inside = 0 <= ms <= 60_000
    for table in ({"slo_ms": ms}, {"ms": {"a:b": ms}}):
        if inside:
            latency = _latency(table)
            assert latency.slo_ms == ms if "slo_ms" in table else latency.pairs == {("a", "b"): ms}
        else:
            with pytest.raises(ScenarioError, match=r"^l\.toml: \[latency\] (slo_ms|ms 'a:b') must be from 0 to "
                                                    r"60,000 \(ms\)"):
                _latency(table)


def test_messages_name_the_key_and_its_range():
    with pytest.raises(ScenarioError, match=r"^l\.toml: \[latency\] slo_ms must be a number of milliseconds, got 'x'$"):
        _latency({"slo_ms": "x"})
    with pytest.raises(ScenarioError, match=r"ms must be a table of \"a:b\" = milliseconds, got 5$"):
        _latency({"ms": 5})
    with pytest.raises(ScenarioError, match=r"add_gpus / remove_gpus must be a whole number of GPUs from 0 to "
                                            r"1,000,000, got 1000001$"):
        Scenario.from_dict({"name": "f", "fleet": [{"region": "eu", "gpu_type": "H100", "add_gpus": 1_000_001}]})
    with pytest.raises(ScenarioError, match=r"off_peak_discount must be a share between 0 and 1, got 1.5$"):
        Scenario.from_dict({"name": "o", "region": [{"region": "eu", "off_peak_start_hour": 22, "off_peak_end_hour": 6,
                                                     "off_peak_discount": 1.5}]})
