"""Evolve a scenario's policy parameters against several objectives at once: `run_study`.

Optuna drives the search: NSGA-II for 2-3 objectives, NSGA-III for more (reference directions
keep a front of many objectives spread out), both seeded. It runs ask/tell, one generation at a
time: a generation's trials are asked for together, each is simulated on every training window in
parallel (engine.service.sweep: local processes or a Dask cluster; the same `evaluate` a sweep
point uses, so a trial's KPIs are `meridian compare`'s), and they are told in trial order once all
have finished, so the same study file, data and seed give the same trials whatever the backend or
the number of workers. A trial's objective and constraint values are the mean over the training
windows; a trial that breaks a hard constraint is told so (Trial.set_constraint, which NSGA-II and
-III rank below every feasible trial) and is never on the front; a trial whose simulation fails is
told failed and the search goes on.

With a journal file (Optuna's JournalStorage) every told trial is on disk at once, and a study that
stopped (killed, interrupted) resumes from it: trials asked but never told are marked failed, and
the search continues to the number of trials asked for. The base scenario as written is measured on
the same windows (the baseline), and after the search the front and the baseline are simulated on
the held-out windows, which no trial saw. The first trial of a new study is the base scenario itself
(when its values lie inside the searched ranges), so the front is never worse than the baseline.
"""
from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from engine.core.errors import ScenarioError
from engine.policies import registry
from engine.scenario.spec import DEFAULTS, Scenario
from engine.service.optimise.front import hypervolume_history, pareto_front
from engine.service.optimise.space import Study, StudyError
from engine.service.sweep.grid import Point
from engine.service.sweep.outcome import OK
from engine.service.sweep.runner import iter_sweep

optuna.logging.set_verbosity(optuna.logging.WARNING)
BASELINE = "baseline"
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Measured:
    """One scenario measured on a set of windows: `values` objective name -> mean, `violations` one
    per constraint (<= 0: met), `kpis` every KPI's mean, `windows` the per-window KPIs; `error` the
    first failed window's one-line error (None: every window ran)."""

    values: dict
    violations: tuple
    kpis: dict
    windows: list
    error: str | None = None

    @property
    def feasible(self) -> bool:
        return self.error is None and all(v <= 0 for v in self.violations)


@dataclass(frozen=True)
class Trial:
    number: int
    generation: int
    params: dict
    measured: Measured


@dataclass
class StudyResult:
    """What a study found: every trial, the front (trial numbers, feasible and non-dominated), the
    hypervolume of the front after each generation (objectives scaled to the range the trials
    spanned, reference point 1.1 in every scaled objective), the baseline on the training windows,
    the front and the baseline on the held-out windows (name -> Measured), and its cost."""

    study: Study
    trials: list[Trial]
    front: list[int]
    hypervolume: list[float]
    baseline: Measured
    held_out: dict = field(default_factory=dict)
    simulations: int = 0
    elapsed_s: float = 0.0
    seed: int = 0
    sampler: str = ""
    population: int = 0
    resumed: int = 0

    def trial(self, number: int) -> Trial:
        return next(t for t in self.trials if t.number == number)


def default_population(trials: int) -> int:
    """Trials per generation: a quarter of the budget, between 4 and 20."""
    return max(4, min(20, trials // 4))


def run_study(study: Study, tables: tuple, *, trials: int = 40, population: int | None = None,
              workers: int | None = None, dask: str | None = None, seed: int = 0, journal: str | Path | None = None,
              progress: Progress | None = None) -> StudyResult:
    """Search `study` over the dataset's `tables` ((jobs, fleet, world tables) as engine.cli.common.tables
    gives) for `trials` trials in generations of `population`; see the module docstring."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise StudyError(f"trials must be a positive integer, got {trials!r}")
    population = population or default_population(trials)
    if isinstance(population, bool) or not isinstance(population, int) or population < 2:
        raise StudyError(f"population must be an integer >= 2, got {population!r}")
    say = progress or (lambda line: None)
    began, jobs = time.perf_counter(), tables[0]
    windows = study.windows.bounds(jobs, study.source)
    train, held = windows[:study.windows.train], windows[study.windows.train:]
    sampler_cls = optuna.samplers.NSGAIISampler if len(study.objectives) <= 3 else optuna.samplers.NSGAIIISampler
    with warnings.catch_warnings():  # NSGA-III is marked experimental; its interface is what we use
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = sampler_cls(population_size=population, seed=seed)
    optuna_study = optuna.create_study(
        study_name=study.name, storage=_storage(journal), sampler=sampler, load_if_exists=True,
        directions=["maximize" if o.higher else "minimize" for o in study.objectives])
    _check_objectives(optuna_study, study, journal)
    _close_unfinished(optuna_study)
    done = _recorded(optuna_study, study)
    resumed = len(done)
    start = base_params(study)
    if not done and start is not None:
        optuna_study.enqueue_trial(start)  # trial 0 is the base scenario: the front is never worse than it
    simulations = 0
    baseline = None
    generation = max((t.generation for t in done), default=-1) + 1
    while len(done) < trials or baseline is None:
        asked = [optuna_study.ask() for _ in range(min(population, trials - len(done)))]
        params = [_suggest(t, study) for t in asked]
        jobs_to_run = [(f"trial-{t.number}", p) for t, p in zip(asked, params)]
        if baseline is None:
            jobs_to_run.append((BASELINE, None))
        measured = _measure(study, jobs_to_run, train, tables, workers, dask)
        simulations += len(jobs_to_run) * len(train)
        if baseline is None:
            baseline = measured.pop(BASELINE)
        for trial, p in zip(asked, params):
            m = measured[f"trial-{trial.number}"]
            trial.set_user_attr("generation", generation)
            trial.set_user_attr("kpis", m.kpis)
            trial.set_user_attr("violations", list(m.violations))
            for constraint, violation in zip(study.constraints, m.violations):
                trial.set_constraint(constraint.objective.name, violation)
            if m.error is not None:
                trial.set_user_attr("error", m.error)
                optuna_study.tell(trial, state=TrialState.FAIL)
            else:
                optuna_study.tell(trial, [m.values[o.name] for o in study.objectives])
            done.append(Trial(trial.number, generation, p, m))
        if asked:
            feasible = sum(t.measured.feasible for t in done)
            say(f"generation {generation}: {len(done)}/{trials} trials, {feasible} feasible, "
                f"{time.perf_counter() - began:.0f} s")
            generation += 1
    done.sort(key=lambda t: t.number)
    front = pareto_front(done, study.objectives)
    result = StudyResult(study, done, front, hypervolume_history(done, study.objectives), baseline,
                         seed=seed, sampler=sampler_cls.__name__, population=population, resumed=resumed)
    if held and front:
        shown = [(f"trial-{n}", result.trial(n).params) for n in front] + [(BASELINE, None)]
        result.held_out = _measure(study, shown, held, tables, workers, dask)
        simulations += len(shown) * len(held)
        say(f"held-out check: {len(front)} front trials and the baseline on {len(held)} window(s)")
    result.simulations = simulations
    result.elapsed_s = time.perf_counter() - began
    return result


def _storage(journal):
    if journal is None:
        return None
    path = Path(journal)
    path.parent.mkdir(parents=True, exist_ok=True)
    return JournalStorage(JournalFileBackend(str(path)))


def _close_unfinished(optuna_study) -> None:
    """Trials of an earlier run that were asked but never told are told failed."""
    for t in optuna_study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        optuna_study.tell(t.number, state=TrialState.FAIL)


def _check_objectives(optuna_study, study: Study, journal) -> None:
    """A new study records its objectives; a resumed one must have the same."""
    names = [o.name for o in study.objectives]
    stored = optuna_study.user_attrs.get("objectives")
    if stored is None:
        optuna_study.set_user_attr("objectives", names)
    elif list(stored) != names:
        raise StudyError(f"{journal}: study {study.name!r} there has the objectives {', '.join(stored)}; this run asks "
                         f"for {', '.join(names)} (use another --journal, or the same objectives)")


def _recorded(optuna_study, study: Study) -> list[Trial]:
    """The trials a journal already holds (told by an earlier run), as Trials."""
    out = []
    for t in optuna_study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL)):
        attrs = t.user_attrs
        complete = t.state == TrialState.COMPLETE
        values = dict(zip((o.name for o in study.objectives), map(float, t.values))) if complete else {}
        error = None if complete else attrs.get("error", "failed (interrupted before it was measured)")
        out.append(Trial(t.number, int(attrs.get("generation", 0)), dict(t.params),
                         Measured(values, tuple(attrs.get("violations", [1.0] * len(study.constraints))),
                                  dict(attrs.get("kpis", {})), [], error)))
    return out


def _chosen_key(study: Study, family: str, params: dict) -> str:
    return params.get(family) or study.base.get("policies", {}).get(family, {}).get("key") or DEFAULTS[family]


def base_params(study: Study) -> dict | None:
    """The base scenario as a point of the search space (its keys, and its parameters or their declared
    defaults), or None when a value of it lies outside the searched range."""
    params = {}
    for dim in study.dimensions:
        if dim.kind == "key":
            key = _chosen_key(study, dim.family, {})
            if key not in dim.choices:
                return None
            params[dim.name] = key
    for dim in study.dimensions:
        key = _chosen_key(study, dim.family, params)
        if dim.kind == "key" or key not in dim.keys:
            continue
        spec = study.base.get("policies", {}).get(dim.family, {})
        default = next(p.default for p in registry.parameters(dim.family, key) if p.name == dim.parameter)
        value = spec.get(dim.parameter, default) if spec.get("key", key) == key else default
        if dim.kind in ("int", "float") and not dim.low <= value <= dim.high:
            return None
        if dim.kind not in ("int", "float") and value not in dim.choices:
            return None
        params[dim.name] = value
    return params


def _suggest(trial, study: Study) -> dict:
    """The trial's draw of every dimension; a parameter only where the family's chosen policy has it."""
    params = {}
    for dim in study.dimensions:
        if dim.kind == "key":
            params[dim.name] = trial.suggest_categorical(dim.name, list(dim.choices))
    for dim in study.dimensions:
        if dim.kind == "key":
            continue
        if _chosen_key(study, dim.family, params) not in dim.keys:
            continue
        if dim.kind == "int":
            params[dim.name] = trial.suggest_int(dim.name, int(dim.low), int(dim.high), step=int(dim.step or 1),
                                                 log=dim.log)
        elif dim.kind == "float":
            params[dim.name] = trial.suggest_float(dim.name, dim.low, dim.high, step=dim.step, log=dim.log)
        else:
            params[dim.name] = trial.suggest_categorical(dim.name, list(dim.choices))
    return params


def window_scenario(study: Study, params: dict | None, name: str, window) -> Scenario:
    """The scenario of `params` (None: the base as written) restricted to jobs submitted in `window`."""
    data = dict(study.base) if params is None else study.scenario(params, name)
    start, end = window
    data = {**data, "name": name,
            "workload": {**data.get("workload", {}), "start_utc": start.isoformat(), "end_utc": end.isoformat()}}
    try:
        return Scenario.from_dict(data, default_name=name, source=f"{study.source}: {name}")
    except ScenarioError as exc:
        raise StudyError(str(exc)) from None


def _measure(study: Study, runs: Sequence[tuple[str, dict | None]], windows, tables, workers, dask) -> dict:
    """name -> Measured for every (name, params) on every window, all simulations in parallel."""
    points = []
    for i, (name, params) in enumerate(runs):
        for w, window in enumerate(windows):
            points.append(Point(i * len(windows) + w, name, {"window": w},
                                window_scenario(study, params, name, window)))
    outcomes = {}
    for outcome in iter_sweep(points, tables, workers=workers, dask=dask):
        outcomes[outcome.index] = outcome
    out = {}
    for i, (name, _) in enumerate(runs):
        mine = [outcomes[i * len(windows) + w] for w in range(len(windows))]
        out[name] = _summarise(study, mine)
    return out


def _summarise(study: Study, outcomes) -> Measured:
    error = next((o.error for o in outcomes if o.status != OK), None)
    per_window = [{"kpis": o.kpis, "classes": o.classes} for o in outcomes]
    if error is not None:
        return Measured({}, tuple(1.0 for _ in study.constraints), {}, per_window, error)
    values = {o.name: _mean([o.value(w["kpis"], w["classes"]) for w in per_window]) for o in study.objectives}
    bad = [name for name, v in values.items() if not math.isfinite(v)]
    if bad:
        error = f"no value for {', '.join(bad)} in every training window"
    violations = tuple(c.violation(_mean([c.objective.value(w["kpis"], w["classes"]) for w in per_window]))
                       for c in study.constraints)
    keys = [k for k in per_window[0]["kpis"] if all(k in w["kpis"] for w in per_window)]
    kpis = {k: _mean([w["kpis"][k] for w in per_window]) for k in keys}
    return Measured(values, violations, kpis, per_window, error)


def _mean(values) -> float:
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return float(np.mean(finite)) if finite and len(finite) == len(values) else math.nan
