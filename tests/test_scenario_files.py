"""Scenario files (engine.scenario.files): what the What-if page downloads loads as a scenario file,
and an uploaded file is checked with the CLI's rules and messages, naming the file."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from dashboard.forms.scenario_files import file_name
from engine.core.errors import ScenarioError
from engine.scenario import limits
from engine.scenario.files import scenario_from_upload, scenario_toml
from engine.scenario.spec import Scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
BUNDLED = sorted(SCENARIOS.glob("*.toml"))


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_every_bundled_scenario_uploads_as_it_loads_and_round_trips(path, tmp_path):
    loaded = Scenario.load(path)
    uploaded, spec = scenario_from_upload(path.read_bytes(), path.name)
    assert uploaded == loaded and spec["name"] == loaded.name
    written = tmp_path / "again.toml"
    written.write_text(scenario_toml(spec, ("a comment",)), encoding="utf-8")
    assert Scenario.load(written) == loaded


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_every_bundled_scenario_gives_its_fleet_for_no_jobs(path, sample_tables):
    """The GPUs-needed search reads a scenario's fleet by applying it to no jobs: every section must
    allow that (a [[chain]] refused it once, failing every search of a scenario with chains)."""
    jobs, fleet = sample_tables
    applied, edited = Scenario.load(path).apply(jobs.iloc[:0], fleet)
    assert applied.empty and edited["gpus"].sum() > 0


@pytest.fixture(scope="module")
def sample_tables():
    from engine.telemetry.sample import read_bundle

    tables = read_bundle().tables
    return tables["jobs"], tables["fleet"]


def test_the_custom_scenario_dict_of_the_builder_round_trips(tmp_path):
    custom = {"name": "custom", "policies": {"order": {"key": "multifactor", "weight_age": 2.0},
                                            "backfill": {"key": "easy"}, "routing": {"key": "follow-the-sun"}},
              "region": [{"region": "us-east", "work_start_hour": 8}],
              "queue": [{"name": "all", "priority": 0.5, "max_wait_s": None}],
              "burst": [{"region": "us-east", "gpu_type": "H100", "max_nodes": 2, "gpus_per_node": 8,
                         "usd_per_gpu_hour": 4.0, "provision_min": 10.0, "idle_release_min": 30.0,
                         "trigger_wait_min": 60.0}]}
    text = scenario_toml(custom, ("Built on the What-if page\nrm -rf / \x1b[31m",))
    assert text.splitlines()[0] == "# Built on the What-if page?rm -rf / ?[31m"   # a comment cannot be ended
    assert "max_wait_s" not in text                                              # TOML has no None
    path = tmp_path / "custom.toml"
    path.write_text(text, encoding="utf-8")
    expected = {**custom, "queue": [{"name": "all", "priority": 0.5}]}
    assert Scenario.load(path) == Scenario.from_dict(expected)


def _cli_message(tmp_path, raw: bytes, name: str) -> str:
    path = tmp_path / name
    path.write_bytes(raw)
    with pytest.raises(ScenarioError) as caught:
        Scenario.load(path)
    return str(caught.value).replace(str(path), name)


@pytest.mark.parametrize("raw, expected", [
    (b"name = 'x'\n[policies]\norder = 'no-such-order'\n", "order policy 'no-such-order' is unknown"),
    (b"name = 'x'\ncolour = 'red'\n", "unknown top-level key colour"),
    (b"name = 'x'\n[policies\n", "not valid TOML"),
    (b"name = '\xff'\n", "cannot read scenario"),
    (b"a = " + b"[" * 2000 + b"]" * 2000 + b"\n", "nested"),
    (b"seed = 0\n[[outage]]\nregion = 'r'\nstart_utc = 2026-08-05T12:00:00\nend_utc = 2026-08-05T00:00:00\n", "outage"),
])
def test_a_bad_upload_gets_the_clis_message_naming_the_file(tmp_path, raw, expected):
    with pytest.raises(ScenarioError) as caught:
        scenario_from_upload(raw, "../../etc/bad.toml")   # a path in the name is not a path here
    message = str(caught.value)
    assert message.startswith("bad.toml: ") and expected in message, message
    assert message == _cli_message(tmp_path, raw, "bad.toml")


def test_an_oversized_upload_is_refused_before_it_is_parsed():
    raw = b"#" * (limits.MAX_FILE_BYTES + 1)
    with pytest.raises(ScenarioError, match=r"^big\.toml: a scenario file is at most 1,048,576 bytes; this one has "
                                            r"1,048,577$"):
        scenario_from_upload(raw, "big.toml")


def test_the_name_defaults_to_the_file_stem_and_the_spec_says_it():
    scenario, spec = scenario_from_upload(b"[policies]\norder = 'fcfs'\n", "night-shift.toml")
    assert scenario.name == spec["name"] == "night-shift"
    assert tomllib.loads(scenario_toml(spec))["name"] == "night-shift"


@pytest.mark.parametrize("name, expected", [("custom", "custom.toml"), ("my plan v2", "my-plan-v2.toml"),
                                            ("../../etc/passwd", "etc-passwd.toml"), ("<script>", "script.toml"),
                                            ("", "custom.toml"), ("é" * 10, "custom.toml"), ("x" * 200, "x" * 80 + ".toml")])
def test_a_download_file_name_is_safe(name, expected):
    assert file_name(name) == expected
