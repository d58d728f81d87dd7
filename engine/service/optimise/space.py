"""A study file: the base scenario, the policy parameters to search, the objectives, the hard
constraints and the windows to optimise on and to check on. `meridian optimise --space FILE.toml`.

    base = "../scenarios/priority-fairshare.toml"   # a scenario file (relative to this one) or a [base] table
    objectives = ["wait_p95_s", "jain_index", "utilization", "starved_jobs", "wait_p95_s@inference"]
    [search]                                  # "family.parameter" = range, or "family" = [keys]
    "order.weight_age" = { low = 0, high = 10000 }
    "order.weight_fairshare" = { low = 0, high = 20000, log = false }
    backfill = ["none", "easy", "conservative"]          # the family's policy, by registry key
    "backfill.max_job_test" = { low = 0, high = 500 }     # searched where the chosen key has it
    "placement.cpu_weight" = { low = 0.0, high = 1.0, step = 0.1 }
    [constraints]                             # hard: a trial that breaks one is never on the front
    inference_guarantee_violations = { max = 0 }
    residency_violations = { max = 0 }
    [windows]                                 # consecutive windows from the data's first submit
    days = 7                                  # each window's length
    train = 2                                 # the first `train` windows are optimised on
    held_out = 1                              # the next `held_out` are the held-out check

Every searchable parameter is a policy's own declared parameter (engine.policies.registry.parameters):
its type sets how it is drawn (an int as an integer, a float as a real, a bool as one of the two, a
str from the `choices` the study lists), so a newly registered policy is searchable with no code.
An objective is a KPI catalogue key whose direction is known (engine.analysis.runs.catalogue: higher
or lower is better), or "<wait key>@<workload class>" for one class's censored wait (jobs that never
started wait until the window's end: engine.analysis.runs.slo.class_waits). Objectives and
constraints are the mean over the training windows. Errors name the file and the key.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from engine.analysis.runs.catalogue import CATALOGUE
from engine.analysis.runs.slo import WAIT_COLUMNS
from engine.core.errors import ScenarioError
from engine.core.toml_file import read_toml
from engine.policies import registry
from engine.scenario.spec import DEFAULTS, Scenario

MIN_OBJECTIVES, MAX_OBJECTIVES = 2, 12
# The KPI groups a study's runs measure: one simulation per window, no headroom search.
MEASURED = ("sim", "relaxation", "stranded", "fairness", "world")  # relaxation: only runs whose routing relaxes
CLASS_WAITS = tuple(c for c in WAIT_COLUMNS if c.startswith("wait_"))
_KEYS = {"base", "objectives", "search", "constraints", "windows", "name"}
_RANGE = {"low", "high", "log", "step", "choices"}


class StudyError(ValueError):
    """A study file that cannot be used: the message names the file and the problem."""


@dataclass(frozen=True)
class Objective:
    """A measured figure: `key` (a catalogue key) or key@workload_class; `higher`: is more better."""

    name: str
    key: str
    workload_class: str | None
    higher: bool

    def value(self, kpis: dict, classes: list[dict]) -> float:
        """The figure in one window's outcome (NaN when the window has no such class or value)."""
        if self.workload_class is None:
            value = kpis.get(self.key)
        else:
            row = next((r for r in classes if str(r.get("workload_class")) == self.workload_class), None)
            value = None if row is None else row.get(self.key)
        return math.nan if value is None else float(value)


@dataclass(frozen=True)
class Constraint:
    """`objective`'s figure must be at most `most` and at least `least` (None: no bound)."""

    objective: Objective
    most: float | None = None
    least: float | None = None

    def violation(self, value: float) -> float:
        """<= 0 when met (Optuna's convention), else by how much it is broken; NaN breaks it."""
        if not math.isfinite(value):
            return 1.0
        over = value - self.most if self.most is not None else -math.inf
        under = self.least - value if self.least is not None else -math.inf
        return max(over, under)


@dataclass(frozen=True)
class Dimension:
    """One searched choice: a family's policy key (`parameter` None, `choices` the keys) or one
    parameter of a family's policy (`keys`: the policy keys that have it)."""

    family: str
    parameter: str | None
    kind: str  # "key", "int", "float", "bool", "choice"
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: float | None = None
    choices: tuple = ()
    keys: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.family if self.parameter is None else f"{self.family}.{self.parameter}"


@dataclass(frozen=True)
class Windows:
    days: float
    train: int
    held_out: int

    def bounds(self, jobs: pd.DataFrame, source: str) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
        """[start, end) of every window, training first, from the data's first submit; an error when
        the data is shorter than the windows."""
        submits = pd.to_datetime(jobs["submit_utc"])
        if not len(submits):
            raise StudyError(f"{source}: the dataset has no jobs to optimise on")
        start, last = submits.min(), submits.max()
        span = pd.Timedelta(days=self.days)
        bounds = [(start + i * span, start + (i + 1) * span) for i in range(self.train + self.held_out)]
        if bounds[-1][0] > last:
            have = (last - start) / pd.Timedelta(days=1)
            raise StudyError(f"{source}: [windows] asks for {self.train + self.held_out} windows of "
                             f"{self.days:g} days, but the data spans {have:.1f} days")
        return bounds


@dataclass(frozen=True)
class Study:
    """A parsed study file (see the module docstring)."""

    name: str
    source: str
    base: dict
    dimensions: tuple[Dimension, ...]
    objectives: tuple[Objective, ...]
    constraints: tuple[Constraint, ...] = ()
    windows: Windows = field(default_factory=lambda: Windows(7.0, 2, 1))

    def scenario(self, params: dict, name: str) -> dict:
        """The base scenario's dict with `params` (dimension name -> value) set: a chosen key replaces
        the family's policy (its parameters from the base when it is the same key), a parameter is
        set where the family's chosen policy has it."""
        policies = {family: dict(spec) for family, spec in self.base.get("policies", {}).items()}
        for dim in self.dimensions:
            if dim.parameter is None and dim.name in params:
                current = policies.get(dim.family, {})
                if current.get("key") != params[dim.name]:
                    policies[dim.family] = {"key": params[dim.name]}
        for dim in self.dimensions:
            if dim.parameter is not None and dim.name in params:
                policies.setdefault(dim.family, {"key": _default_key(dim.family)})[dim.parameter] = params[dim.name]
        return {**self.base, "name": name, "policies": policies}


def objective(name: str, source: str, what: str = "objective") -> Objective:
    """An Objective from "key" or "key@class"; errors name the valid keys."""
    if not isinstance(name, str) or not name.strip():
        raise StudyError(f"{source}: each {what} must be a KPI key, got {name!r}")
    key, _, cls = name.partition("@")
    if cls:
        if key not in CLASS_WAITS:
            raise StudyError(f"{source}: {what} {name!r}: a class figure is one of {', '.join(CLASS_WAITS)}"
                             " followed by @ and a workload class")
        return Objective(name, key, cls, False)
    kpi = CATALOGUE.get(key)
    if kpi is None or kpi.group not in MEASURED:
        known = sorted(k for k, v in CATALOGUE.items() if v.group in MEASURED and v.better)
        raise StudyError(f"{source}: {what} {key!r} is not a KPI a study measures; choose from {', '.join(known)}")
    if not kpi.better and what == "objective":
        raise StudyError(f"{source}: objective {key!r} is neither better higher nor lower; it can only be a constraint")
    return Objective(key, key, None, kpi.better == "higher")


def load_study(path: str | Path, objectives: list[str] | None = None) -> Study:
    """The study in the TOML file at `path`; `objectives` (from the command line) replace the file's."""
    path = Path(path)
    data = read_toml(path, "the study file", StudyError)
    return parse_study(data, path, objectives)


def parse_study(data: dict, path: Path, objectives: list[str] | None = None) -> Study:
    source = str(path)
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise StudyError(f"{source}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(_KEYS))}")
    base = _base(data.get("base"), path)
    try:
        Scenario.from_dict(base, default_name=path.stem, source=f"{source}: base")
    except ScenarioError as exc:
        raise StudyError(str(exc)) from None
    names = objectives if objectives is not None else data.get("objectives")
    if not isinstance(names, list) or not MIN_OBJECTIVES <= len(names) <= MAX_OBJECTIVES:
        raise StudyError(f"{source}: objectives must list {MIN_OBJECTIVES} to {MAX_OBJECTIVES} KPI keys, got {names!r}")
    goals = tuple(objective(n, source) for n in names)
    if len({g.name for g in goals}) != len(goals):
        raise StudyError(f"{source}: an objective is listed twice: {', '.join(names)}")
    search = data.get("search")
    if not isinstance(search, dict) or not search:
        raise StudyError(f'{source}: [search] must name at least one parameter, e.g. "order.weight_age" = '
                         "{ low = 0, high = 10000 }")
    policies = base.get("policies", {})
    dims = _dimensions(search, policies, source)
    return Study(str(data.get("name") or path.stem), source, base, dims, goals,
                 _constraints(data.get("constraints", {}), source), _windows(data.get("windows", {}), source))


def _base(value, path: Path) -> dict:
    if isinstance(value, str):
        target = path.parent / value
        return read_toml(target, f"the base scenario of {path}", StudyError)
    if isinstance(value, dict):
        return value
    raise StudyError(f"{path}: base must be a scenario file name or a [base] table, got {value!r}")


def _default_key(family: str) -> str:
    """The policy a scenario without this family in [policies] runs (engine.scenario.spec.DEFAULTS)."""
    return DEFAULTS[family]


def _dimensions(search: dict, policies: dict, source: str) -> tuple[Dimension, ...]:
    families = registry.families()
    chosen: dict[str, tuple[str, ...]] = {}
    for name, spec in search.items():
        if "." not in name:
            if name not in families or name not in DEFAULTS:
                raise StudyError(f"{source}: [search] {name!r} is not a policy family; families: {', '.join(DEFAULTS)}")
            if not isinstance(spec, list) or not spec or any(k not in families[name] for k in spec):
                raise StudyError(f"{source}: [search] {name} must list policy keys from {', '.join(families[name])}")
            chosen[name] = tuple(dict.fromkeys(spec))
    dims = [Dimension(f, None, "key", choices=keys) for f, keys in chosen.items()]
    for name, spec in search.items():
        if "." in name:
            family, parameter = name.split(".", 1)
            if family not in families or family not in DEFAULTS:
                raise StudyError(f"{source}: [search] {name!r}: {family!r} is not a policy family a scenario sets; "
                                 f"families: {', '.join(DEFAULTS)}")
            keys = chosen.get(family) or (policies.get(family, {}).get("key") or _default_key(family),)
            dims.append(_parameter(family, parameter, keys, spec, f"{source}: [search] {name}"))
    return tuple(dims)


def _parameter(family: str, parameter: str, keys: tuple[str, ...], spec, where: str) -> Dimension:
    having = {k: p for k in keys for p in registry.parameters(family, k) if p.name == parameter}
    if not having:
        valid = sorted({p.name for k in keys for p in registry.parameters(family, k)})
        raise StudyError(f"{where}: no {family} policy of {', '.join(keys)} has a parameter {parameter!r}; "
                         f"theirs: {', '.join(valid) or 'none'}")
    kinds = {p.type for p in having.values()}
    if len(kinds) != 1:
        raise StudyError(f"{where}: the policies {', '.join(having)} give {parameter} different types")
    kind = kinds.pop()
    if not isinstance(spec, dict) or set(spec) - _RANGE:
        raise StudyError(f"{where}: must be a table of {', '.join(sorted(_RANGE))}, got {spec!r}")
    keys_with = tuple(having)
    if kind is bool:
        return Dimension(family, parameter, "bool", choices=(False, True), keys=keys_with)
    if kind is str:
        choices = spec.get("choices")
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
            raise StudyError(f"{where}: a text parameter needs choices = [\"...\", ...]")
        return Dimension(family, parameter, "choice", choices=tuple(choices), keys=keys_with)
    if kind not in (int, float):
        raise StudyError(f"{where}: parameters of type {getattr(kind, '__name__', kind)} cannot be searched")
    low, high = spec.get("low"), spec.get("high")
    for label, value in (("low", low), ("high", high)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise StudyError(f"{where}: {label} must be a finite number, got {value!r}")
    if low >= high:
        raise StudyError(f"{where}: low must be below high, got {low!r} and {high!r}")
    log, step = bool(spec.get("log", False)), spec.get("step")
    if log and low <= 0:
        raise StudyError(f"{where}: a log range needs low > 0, got {low!r}")
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float)) or step <= 0 or log):
        raise StudyError(f"{where}: step must be a number > 0 (and not with log), got {step!r}")
    if kind is int and any(isinstance(v, float) and not float(v).is_integer() for v in (low, high, step or 1)):
        raise StudyError(f"{where}: {parameter} is an integer parameter: low, high and step must be whole numbers")
    return Dimension(family, parameter, "int" if kind is int else "float", float(low), float(high), log,
                     None if step is None else float(step), keys=keys_with)


def _constraints(spec, source: str) -> tuple[Constraint, ...]:
    if not isinstance(spec, dict):
        raise StudyError(f"{source}: [constraints] must be a table of KPI = {{ max = ... }} or {{ min = ... }}")
    out = []
    for name, bound in spec.items():
        where = f"{source}: [constraints] {name}"
        if not isinstance(bound, dict) or not bound or set(bound) - {"max", "min"}:
            raise StudyError(f"{where}: must be {{ max = number }}, {{ min = number }} or both")
        for value in bound.values():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise StudyError(f"{where}: bounds must be finite numbers, got {value!r}")
        out.append(Constraint(objective(name, source, "constraint"), bound.get("max"), bound.get("min")))
    return tuple(out)


def _windows(spec, source: str) -> Windows:
    if not isinstance(spec, dict) or set(spec) - {"days", "train", "held_out"}:
        raise StudyError(f"{source}: [windows] takes days, train and held_out")
    days, train, held = spec.get("days", 7), spec.get("train", 2), spec.get("held_out", 1)
    if isinstance(days, bool) or not isinstance(days, (int, float)) or not 0 < days < math.inf:
        raise StudyError(f"{source}: [windows] days must be a number of days > 0, got {days!r}")
    for label, value, least in (("train", train, 1), ("held_out", held, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise StudyError(f"{source}: [windows] {label} must be a whole number >= {least}, got {value!r}")
    return Windows(float(days), train, held)
