"""Sweep grids: a TOML file that expands into a list of scenarios (the points of a sweep).

    name = "fleet-growth"                      # optional; default the file's stem
    base = "../scenarios/easy-backfill.toml"   # optional: a scenario file (relative to the grid file)
                                               # every point starts from, or an inline [base] table
    days = 7                                   # optional: only the first N days of the data
    mode = "product"                           # "product" (every combination, the default) or "zip"
    [[axis]]                                   # (axes walked together; all of one length)
    name = "growth"                            # its label in results (default: the path)
    set = "workload.growth"                    # dotted path into the scenario; missing tables created
    values = [1.0, 1.3]
    [[axis]]
    fleet = { region = "us-east", gpu_type = "H100", tier = "reserved" }   # tier optional
    gpus = [-16, 0, 16, 32]                    # GPUs added (negative: removed) by one more [[fleet]]
                                               # edit after the base's own; 0: no edit
    [[scenario]]                               # optional, any number: file = "x.toml" (relative to
    file = "../scenarios/fifo.toml"            # the grid file) or an inline scenario table

The axes expand over the base scenario (without a base: the default policies); each [[scenario]] is
one more point after them, as it stands. A grid with no axes has only its [[scenario]] points. In
"product" mode the last axis varies fastest. A point is named "<grid name>[label=value, ...]"
(fleet values signed: "+16", "-16", "0"), or "<grid name>[<scenario name>]" for a [[scenario]]
point, whose params are {"scenario": <its name>}; params hold TOML dates and times as ISO 8601
strings, so that they travel as JSON. Every point is validated as a scenario
(engine.scenario.spec.Scenario.from_dict) when the grid loads, so a bad grid fails before anything runs;
errors are `GridError`s naming the grid file and the key. Edits that depend on the data (a fleet
edit of a GPU type a region lacks) can only fail when the point runs. `days` applies through
`Grid.windowed` once the data is known (engine.service.compare.first_days).
"""
from __future__ import annotations

import copy
import datetime as dt
import itertools
import json
import math
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.compare import first_days

MODES = ("product", "zip")
_TOP = {"name", "base", "days", "mode", "axis", "scenario"}
_AXIS = {"name", "set", "values", "fleet", "gpus"}
_FLEET = {"region", "gpu_type", "tier"}


class GridError(ValueError):
    """A grid file that cannot be expanded; the message names the file and the key."""


@dataclass(frozen=True)
class Point:
    """One scenario of a sweep: its position, name, axis label -> value, and the scenario to run;
    score_from_utc (None: all jobs) leaves the jobs submitted before it out of the per-class waits
    (a warm-up that loads the fleet but is not scored: engine.analysis.runs.slo.class_waits since_s)."""

    index: int
    name: str
    params: dict
    scenario: Scenario
    score_from_utc: pd.Timestamp | None = None


@dataclass(frozen=True)
class Grid:
    """A loaded grid: name, the first `days` days of the data (None: all), its points in order and
    the TOML text it came from (stored with the sweep)."""

    name: str
    points: tuple[Point, ...]
    days: float | None = None
    text: str = ""

    def windowed(self, jobs: pd.DataFrame) -> tuple[Point, ...]:
        """The points restricted to the jobs submitted in the grid's first `days` days
        (engine.service.compare.first_days: a scenario with its own [workload] window keeps it)."""
        scenarios = first_days([p.scenario for p in self.points], jobs, self.days)
        return tuple(replace(p, scenario=s) for p, s in zip(self.points, scenarios))


@dataclass(frozen=True)
class _Axis:
    """One [[axis]]: its label, values, the values as shown in point names, and what it edits: a
    dotted path, or (fleet) the region, gpu_type and tier of the nodes whose count it changes."""

    label: str
    values: tuple
    shown: tuple[str, ...]
    path: tuple[str, ...] = ()
    fleet: dict | None = None


def load_grid(path: str | Path) -> Grid:
    """Read, expand and validate a grid file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GridError(f"{path}: cannot read grid: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"{path}: not valid TOML: {exc}") from None
    return parse_grid(data, path, text)


def parse_grid(data: dict, path: Path, text: str = "") -> Grid:
    """Expand a grid given as the dict its TOML file holds; `path` names it in errors and anchors
    the relative file names it mentions."""
    source = str(path)
    extra = sorted(set(data) - _TOP)
    if extra:
        raise GridError(f"{source}: unknown key {', '.join(extra)}; valid: {', '.join(sorted(_TOP))}")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise GridError(f"{source}: name must be a non-empty string, got {name!r}")
    mode = data.get("mode", "product")
    if mode not in MODES:
        raise GridError(f"{source}: mode must be one of {', '.join(MODES)}, got {mode!r}")
    base = _base(data.get("base", {}), path)
    axes = [_axis(spec, i, source) for i, spec in enumerate(_tables(data, "axis", source), 1)]
    labels = [a.label for a in axes]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise GridError(f"{source}: axis names must differ; repeated: {', '.join(repeated)}")
    explicit = [_scenario(spec, i, path) for i, spec in enumerate(_tables(data, "scenario", source), 1)]
    if not axes and not explicit:
        raise GridError(f"{source}: no points: add [[axis]] or [[scenario]] entries")
    points = []
    for combo in _combinations(axes, mode, source):
        label = ", ".join(f"{axis.label}={axis.shown[i]}" for axis, i in combo)
        scenario = _apply(base, combo, source)
        points.append(_point(len(points), f"{name}[{label}]", {a.label: _plain(a.values[i]) for a, i in combo},
                             scenario, source))
    for scenario, default in explicit:
        own = str(scenario.get("name", default))
        points.append(_point(len(points), f"{name}[{own}]", {"scenario": own}, scenario, source))
    return Grid(name=name, points=tuple(points), days=_days(data.get("days"), source), text=text)


def _tables(data: dict, key: str, source: str) -> list[dict]:
    entries = data.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise GridError(f"{source}: {key} must be an array of tables ([[{key}]])")
    return entries


def _days(value, source: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise GridError(f"{source}: days must be a positive number of days, got {value!r}")
    return float(value)


def _read_toml(path: Path, what: str, source: str) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise GridError(f"{source}: {what}: cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"{source}: {what}: {path} is not valid TOML: {exc}") from None


def _base(value, path: Path) -> dict:
    """The base scenario dict: a file relative to the grid file, or an inline table."""
    if isinstance(value, str):
        return _read_toml(path.parent / value, "base", str(path))
    if not isinstance(value, dict):
        raise GridError(f"{path}: base must be a scenario file name or a [base] table, got {value!r}")
    return value


def _scenario(spec: dict, number: int, path: Path) -> tuple[dict, str]:
    """(scenario dict, default name) of the number-th [[scenario]]: a file, or the table itself."""
    if "file" not in spec:
        return spec, f"scenario-{number}"
    key = f"scenario[{number}].file"
    if set(spec) != {"file"} or not isinstance(spec["file"], str):
        raise GridError(f"{path}: {key}: a [[scenario]] with file takes only file = \"name.toml\"")
    target = path.parent / spec["file"]
    return _read_toml(target, key, str(path)), target.stem


def _axis(spec: dict, number: int, source: str) -> _Axis:
    key = f"axis[{number}]"
    extra = sorted(set(spec) - _AXIS)
    if extra:
        raise GridError(f"{source}: {key}: unknown key {', '.join(extra)}; valid: {', '.join(sorted(_AXIS))}")
    if ("set" in spec) == ("fleet" in spec):
        raise GridError(f"{source}: {key}: give exactly one of set (a dotted path) or fleet (a fleet match)")
    if "set" in spec:
        return _set_axis(spec, key, source)
    return _fleet_axis(spec, key, source)


def _set_axis(spec: dict, key: str, source: str) -> _Axis:
    dotted = spec["set"]
    path = tuple(dotted.split(".")) if isinstance(dotted, str) else ()
    if not path or not all(path):
        raise GridError(f"{source}: {key}.set must be a dotted path such as \"workload.growth\", got {dotted!r}")
    if path == ("name",):
        raise GridError(f"{source}: {key}.set: a point's name is made from its axis values; set something else")
    if "gpus" in spec:
        raise GridError(f"{source}: {key}: gpus goes with fleet; a set axis takes values")
    values = spec.get("values")
    if not isinstance(values, list) or not values:
        raise GridError(f"{source}: {key}.values must be a non-empty list")
    label = _label(spec, dotted, key, source)
    return _Axis(label, tuple(values), tuple(_show(v) for v in values), path=path)


def _fleet_axis(spec: dict, key: str, source: str) -> _Axis:
    match = spec["fleet"]
    if not isinstance(match, dict) or not {"region", "gpu_type"} <= set(match) or set(match) - _FLEET \
            or not all(isinstance(v, str) and v for v in match.values()):
        raise GridError(f"{source}: {key}.fleet must be a table of region, gpu_type and optionally tier "
                        f"(strings), got {match!r}")
    if "values" in spec:
        raise GridError(f"{source}: {key}: values goes with set; a fleet axis takes gpus")
    gpus = spec.get("gpus")
    if not isinstance(gpus, list) or not gpus or not all(isinstance(g, int) and not isinstance(g, bool)
                                                         for g in gpus):
        raise GridError(f"{source}: {key}.gpus must be a non-empty list of integers (GPUs added, negative "
                        "removed)")
    default = " ".join(match[k] for k in ("region", "gpu_type", "tier") if k in match)
    label = _label(spec, default, key, source)
    return _Axis(label, tuple(gpus), tuple(f"{g:+d}" if g else "0" for g in gpus), fleet=dict(match))


def _label(spec: dict, default: str, key: str, source: str) -> str:
    label = spec.get("name", default)
    if not isinstance(label, str) or not label:
        raise GridError(f"{source}: {key}.name must be a non-empty string, got {label!r}")
    return label


def _show(value) -> str:
    """A value as it appears in a point name: strings bare, numbers as written, tables as JSON."""
    value = _plain(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _plain(value):
    """A value as JSON holds it: TOML dates and times as ISO 8601 strings, inside tables and arrays too."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return value


def _combinations(axes: list[_Axis], mode: str, source: str) -> list[tuple[tuple[_Axis, int], ...]]:
    """The (axis, value position) tuples of every point, in order; no axes: none."""
    if not axes:
        return []
    if mode == "zip":
        lengths = {a.label: len(a.values) for a in axes}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{label} has {n}" for label, n in lengths.items())
            raise GridError(f"{source}: mode = \"zip\" needs axes of equal length; {shown}")
        return [tuple((a, i) for a in axes) for i in range(len(axes[0].values))]
    return [tuple(zip(axes, positions)) for positions in itertools.product(*(range(len(a.values)) for a in axes))]


def _apply(base: dict, combo: tuple[tuple[_Axis, int], ...], source: str) -> dict:
    """The base scenario dict with each axis's value set (or its fleet edit appended)."""
    scenario = copy.deepcopy(base)
    for axis, i in combo:
        value = copy.deepcopy(axis.values[i])
        if axis.fleet is not None:
            if value:
                edits = scenario.setdefault("fleet", [])
                if not isinstance(edits, list):
                    raise GridError(f"{source}: base: fleet must be an array of tables ([[fleet]])")
                edits.append({**axis.fleet, ("add_gpus" if value > 0 else "remove_gpus"): abs(value)})
            continue
        table = scenario
        for depth, part in enumerate(axis.path[:-1]):
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise GridError(f"{source}: axis {axis.label}: cannot set {'.'.join(axis.path)}: "
                                f"{'.'.join(axis.path[:depth + 1])} is not a table in the base scenario")
        table[axis.path[-1]] = value
    return scenario


def _point(index: int, name: str, params: dict, data: dict, source: str) -> Point:
    try:
        scenario = Scenario.from_dict({**data, "name": name}, default_name=name, source=f"{source}: {name}")
    except ScenarioError as exc:
        raise GridError(str(exc)) from None
    except (TypeError, ValueError, AttributeError) as exc:  # a value of a type the scenario parser never expects
        raise GridError(f"{source}: {name}: {exc}") from None
    return Point(index, name, params, scenario)
