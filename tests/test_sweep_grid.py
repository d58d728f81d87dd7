"""Sweep grid files: expansion (product, zip, set paths, fleet axes, explicit scenarios) and errors."""
from pathlib import Path

import pandas as pd
import pytest

from engine.scenario.edits import FleetEdit
from engine.service.sweep.grid import GridError, load_grid

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "sample_data" / "sweeps" / "fleet-growth.toml"


def _grid(tmp_path: Path, text: str, name: str = "g.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_grid(path)


def test_product_expands_every_combination_last_axis_fastest(tmp_path):
    grid = _grid(tmp_path, """
name = "demo"
[[axis]]
name = "growth"
set = "workload.growth"
values = [1.0, 1.3]
[[axis]]
set = "policies.backfill"
values = ["none", "easy", "conservative"]
""")
    assert [p.index for p in grid.points] == list(range(6))
    assert [p.name for p in grid.points[:3]] == ["demo[growth=1.0, policies.backfill=none]",
                                               "demo[growth=1.0, policies.backfill=easy]",
                                               "demo[growth=1.0, policies.backfill=conservative]"]
    assert grid.points[4].params == {"growth": 1.3, "policies.backfill": "easy"}
    assert [(p.scenario.growth, p.scenario.policies["backfill"][0]) for p in grid.points] == [
        (1.0, "none"), (1.0, "easy"), (1.0, "conservative"), (1.3, "none"), (1.3, "easy"), (1.3, "conservative")]
    assert all(p.scenario.name == p.name for p in grid.points)
    assert grid.days is None and grid.name == "demo"


def test_zip_walks_the_axes_together(tmp_path):
    grid = _grid(tmp_path, """
mode = "zip"
[[axis]]
set = "workload.load_scale"
values = [1.0, 1.5]
[[axis]]
set = "seed"
values = [3, 4]
""")
    assert [(p.scenario.load_scale, p.scenario.seed) for p in grid.points] == [(1.0, 3), (1.5, 4)]
    assert grid.name == "g" and grid.points[1].name == "g[workload.load_scale=1.5, seed=4]"


def test_fleet_axis_appends_one_edit_after_the_base_edits_and_zero_means_none(tmp_path):
    (tmp_path / "base.toml").write_text("""
name = "b"
[policies]
placement = { key = "best-fit", cpu_weight = 0.5 }
[[fleet]]
region = "eu-west"
gpu_type = "A100"
add_gpus = 8
""")
    grid = _grid(tmp_path, """
base = "base.toml"
[[axis]]
fleet = { region = "us-east", gpu_type = "H100", tier = "reserved" }
gpus = [-16, 0, 16]
[[axis]]
set = "policies.placement.cpu_weight"
values = [0.25]
""")
    base_edit = FleetEdit("eu-west", "A100", 8)
    assert [p.scenario.fleet_edits for p in grid.points] == [
        (base_edit, FleetEdit("us-east", "H100", -16, "reserved")), (base_edit,),
        (base_edit, FleetEdit("us-east", "H100", 16, "reserved"))]
    assert [p.name for p in grid.points] == [f"g[us-east H100 reserved={v}, policies.placement.cpu_weight=0.25]"
                                            for v in ("-16", "0", "+16")]
    assert grid.points[0].params == {"us-east H100 reserved": -16, "policies.placement.cpu_weight": 0.25}
    assert [p.scenario.policies["placement"] for p in grid.points] == [("best-fit", {"cpu_weight": 0.25})] * 3


def test_inline_base_and_explicit_scenarios_follow_the_axes(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "easy.toml").write_text('[policies]\nbackfill = { key = "easy" }\n')
    grid = _grid(tmp_path, """
days = 2
[base]
seed = 7
policies = { order = { key = "sjf" } }
[[axis]]
name = "growth"
set = "workload.growth"
values = [1.0, 2.0]
[[scenario]]
file = "scenarios/easy.toml"
[[scenario]]
name = "fair"
policies = { order = { key = "wfq" } }
""")
    assert [p.name for p in grid.points] == ["g[growth=1.0]", "g[growth=2.0]", "g[easy]", "g[fair]"]
    assert [p.params for p in grid.points[2:]] == [{"scenario": "easy"}, {"scenario": "fair"}]
    assert [(p.scenario.seed, p.scenario.policies["order"][0]) for p in grid.points] == [
        (7, "sjf"), (7, "sjf"), (0, "fcfs"), (0, "wfq")]
    assert grid.points[2].scenario.policies["backfill"][0] == "easy"
    jobs = pd.DataFrame({"submit_utc": pd.to_datetime(["2026-01-01 06:00", "2026-01-05 00:00"])})
    windowed = grid.windowed(jobs)
    assert {(p.scenario.start_utc, p.scenario.end_utc) for p in windowed} == {
        (pd.Timestamp("2026-01-01 06:00"), pd.Timestamp("2026-01-03 06:00"))}
    assert [p.name for p in windowed] == [p.name for p in grid.points]


def test_toml_dates_are_iso_strings_in_params_and_names(tmp_path):
    grid = _grid(tmp_path, "[[axis]]\nname = 'start'\nset = 'workload.start_utc'\nvalues = [2026-08-03T00:00:00]\n")
    (point,) = grid.points
    assert (point.name, point.params) == ("g[start=2026-08-03T00:00:00]", {"start": "2026-08-03T00:00:00"})
    assert point.scenario.start_utc == pd.Timestamp("2026-08-03")


def test_scenarios_alone_make_a_grid(tmp_path):
    grid = _grid(tmp_path, '[[scenario]]\nname = "only"\n')
    assert [(p.index, p.name, p.params) for p in grid.points] == [(0, "g[only]", {"scenario": "only"})]


def test_the_example_grid_has_32_valid_points_over_seven_days():
    grid = load_grid(EXAMPLE)
    assert (grid.name, len(grid.points), grid.days) == ("fleet-growth", 32, 7.0)
    assert len({p.name for p in grid.points}) == 32
    assert grid.text == EXAMPLE.read_text(encoding="utf-8")


@pytest.mark.parametrize("text, expected", [
    ("bogus = 1\n[[axis]]\nset='seed'\nvalues=[1]", "unknown key bogus"),
    ("mode = 'cross'\n[[axis]]\nset='seed'\nvalues=[1]", "mode must be one of product, zip"),
    ("days = -1\n[[axis]]\nset='seed'\nvalues=[1]", "days must be a positive number"),
    ("name = 'x'", "no points"),
    ("[[axis]]\nset='seed'\nfleet={region='r', gpu_type='A'}\nvalues=[1]", "axis[1]: give exactly one of set"),
    ("[[axis]]\nset='seed'\nvalues=[]", "axis[1].values must be a non-empty list"),
    ("[[axis]]\nset='seed'\nvalues=[1]\n[[axis]]\nset='workload..growth'\nvalues=[1]", "axis[2].set must be"),
    ("[[axis]]\nset='name'\nvalues=['a']", "axis[1].set: a point's name is made from its axis values"),
    ("[[axis]]\nset='workload'\nvalues=[1]", "g[workload=1]: [workload] must be a table, got 1"),
    ("[[axis]]\nfleet={region='r'}\ngpus=[1]", "axis[1].fleet must be a table of region, gpu_type"),
    ("[[axis]]\nfleet={region='r', gpu_type='A'}\ngpus=[1.5]", "axis[1].gpus must be a non-empty list of int"),
    ("[[axis]]\nfleet={region='r', gpu_type='A'}\nvalues=[1]", "axis[1]: values goes with set"),
    ("[[axis]]\nset='seed'\nvalues=[1]\nstep=2", "axis[1]: unknown key step"),
    ("[[axis]]\nname='a'\nset='seed'\nvalues=[1]\n[[axis]]\nname='a'\nset='timer_s'\nvalues=[1]",
     "axis names must differ; repeated: a"),
    ("mode='zip'\n[[axis]]\nset='seed'\nvalues=[1,2]\n[[axis]]\nset='timer_s'\nvalues=[1]",
     "equal length; seed has 2, timer_s has 1"),
    ("[base]\npolicies = { backfill = 'easy' }\n[[axis]]\nset='policies.backfill.key'\nvalues=['none']",
     "policies.backfill is not a table"),
    ("[[axis]]\nset='policies.backfill'\nvalues=['easy', 'sometimes']",
     "g[policies.backfill=sometimes]: backfill policy 'sometimes' is unknown"),
    ("[[axis]]\nset='workload.growth'\nvalues=[0]", "g[workload.growth=0]: [workload] growth must be a number from 0.001 to 100"),
    ("base = 'missing.toml'\n[[axis]]\nset='seed'\nvalues=[1]", "base: cannot read"),
    ("[[scenario]]\nfile = 'missing.toml'", "scenario[1].file: cannot read"),
    ("[[scenario]]\nfile = 'x.toml'\nseed = 1", "scenario[1].file: a [[scenario]] with file takes only file"),
    ("axis = 3", "axis must be an array of tables"),
    ("[[axis]\n", "not valid TOML"),
])
def test_bad_grids_name_the_file_and_the_key(tmp_path, text, expected):
    with pytest.raises(GridError) as caught:
        _grid(tmp_path, text)
    message = str(caught.value)
    assert message.startswith(str(tmp_path / "g.toml")) and expected in message, message


def test_an_unreadable_grid_file_is_a_grid_error(tmp_path):
    with pytest.raises(GridError, match="cannot read grid"):
        load_grid(tmp_path / "absent.toml")
