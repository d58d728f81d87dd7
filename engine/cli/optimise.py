"""`meridian optimise`: evolve a scenario's policy parameters against 2-12 objectives.

    meridian optimise (--dataset NAME | --trace FILE) --space FILE.toml [--objectives KPI ...]
                      [--trials N] [--population N] [--seed S] [--workers N | --dask ADDRESS]
                      [--journal FILE] [--out DIR] [--json] [--db FILE]

The study file (engine.service.optimise.space) names the base scenario, the parameters to search,
the objectives, hard constraints and the training and held-out windows; --objectives replaces its
objectives. One progress line per generation goes to stderr. Then: the front (each trial's
parameters and objectives, mean over the training windows) beside the baseline (the base scenario
as written), the front and the baseline on the held-out windows, the hypervolume after each
generation, and the cost in simulations and minutes; or with --json one document of all of it.
--journal keeps the study in a file, so an interrupted run resumes where it stopped. --out DIR
writes study.json, trials.csv (spreadsheet-safe), and scenarios/trial-N.toml for every front trial:
scenario files that `simulate`, `compare`, `report` and the What-if page take like any other.
Exit codes: 0 done, 1 no trial met the constraints, 2 bad input.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from engine.analysis.runs.catalogue import label, shown
from engine.cli.common import add_source, guarded, tables
from engine.core.escaping import to_spreadsheet_csv
from engine.service.compare import Unusable
from engine.service.sweep.backends import SweepUnavailable

if TYPE_CHECKING:
    from engine.service.optimise.study import StudyResult

EXIT_OK, EXIT_INFEASIBLE = 0, 1


def _study_errors() -> tuple:
    from engine.service.optimise.space import StudyError

    return StudyError, SweepUnavailable


def _guarded(command):
    """engine.cli.common.guarded, a bad study file or an unreachable Dask cluster a user error too. The
    optimiser (optuna) loads only when `optimise` runs."""
    return guarded(command, _study_errors)


@_guarded
def cmd_optimise(args) -> int:
    from engine.service.optimise.space import load_study
    from engine.service.optimise.study import run_study

    if args.workers is not None and args.workers < 1:
        raise Unusable(f"--workers must be a positive integer, got {args.workers}")
    study = load_study(args.space, args.objectives)
    data = tables(args)
    result = run_study(study, data, trials=args.trials, population=args.population, workers=args.workers,
                       dask=args.dask, seed=args.seed, journal=args.journal, progress=_say)
    document = study_document(result)
    if args.out:
        write_out(result, document, Path(args.out))
    if args.json:
        print(json.dumps(document, allow_nan=False))
    else:
        print_study(result)
    return EXIT_OK if result.front else EXIT_INFEASIBLE


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _finite(value):
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _measured(m) -> dict:
    return {"values": {k: _finite(v) for k, v in m.values.items()}, "violations": [_finite(v) for v in m.violations],
            "feasible": m.feasible, "error": m.error, "kpis": {k: _finite(v) for k, v in m.kpis.items()}}


def study_document(result: StudyResult) -> dict:
    """Everything the study found, JSON-ready (NaN and infinities as null)."""
    study = result.study
    return {
        "study": study.name, "source": study.source,
        "objectives": [{"name": o.name, "better": "higher" if o.higher else "lower"} for o in study.objectives],
        "constraints": [{"name": c.objective.name, "max": c.most, "min": c.least} for c in study.constraints],
        "dimensions": [d.name for d in study.dimensions],
        "windows": {"days": study.windows.days, "train": study.windows.train, "held_out": study.windows.held_out},
        "sampler": result.sampler, "population": result.population, "seed": result.seed,
        "trials": [{"number": t.number, "generation": t.generation, "params": t.params, **_measured(t.measured)}
                   for t in result.trials],
        "front": result.front, "baseline": _measured(result.baseline),
        "held_out": {name: _measured(m) for name, m in result.held_out.items()},
        "hypervolume": [_finite(h) for h in result.hypervolume],
        "simulations": result.simulations, "elapsed_s": result.elapsed_s, "resumed_trials": result.resumed,
    }


def _value(objective, value) -> str:
    return shown(objective.key, value) if value is not None else "n/a"


def _heading(objective) -> str:
    """The objective's KPI label from the catalogue, with its workload class: "p95 wait (training)"."""
    return label(objective.key) + (f" ({objective.workload_class})" if objective.workload_class else "")


def _rows(result: StudyResult, names: list[str], measured: dict) -> pd.DataFrame:
    objectives = result.study.objectives
    return pd.DataFrame([{"": name, **{_heading(o): _value(o, measured[name].values.get(o.name)) for o in objectives}}
                         for name in names if name in measured])


def print_study(result: StudyResult) -> None:
    from engine.service.optimise.study import BASELINE

    study = result.study
    front = [f"trial-{n}" for n in result.front]
    print(f"study {study.name}: {len(result.trials)} trials ({result.resumed} resumed from the journal), "
          f"{result.sampler} population {result.population}, seed {result.seed}; objectives "
          + ", ".join(f"{o.name} ({'higher' if o.higher else 'lower'} is better)" for o in study.objectives))
    if not front:
        print("no trial met the constraints: "
              + ", ".join(f"{c.objective.name} {_bounds(c)}" for c in study.constraints))
        return
    on_train = {f"trial-{t.number}": t.measured for t in result.trials} | {BASELINE: result.baseline}
    print(f"\nfront: {len(front)} trials, mean over the {study.windows.train} training window(s) of "
          f"{study.windows.days:g} days")
    print(_rows(result, front + [BASELINE], on_train).to_string(index=False))
    params = pd.DataFrame([{"": f"trial-{n}", **{k: _param(v) for k, v in result.trial(n).params.items()}}
                           for n in result.front])
    print("\nparameters of the front\n" + params.fillna("-").to_string(index=False))
    if result.held_out:
        print(f"\nheld out: the {study.windows.held_out} window(s) after the training windows, which no trial saw")
        print(_rows(result, front + [BASELINE], result.held_out).to_string(index=False))
    print("\nhypervolume by generation: " + ", ".join(f"{h:.3f}" for h in result.hypervolume))
    print(f"cost: {result.simulations:,} simulations in {result.elapsed_s / 60:.1f} min")


def _bounds(constraint) -> str:
    parts = ([f"<= {constraint.most:g}"] if constraint.most is not None else []) + \
        ([f">= {constraint.least:g}"] if constraint.least is not None else [])
    return " and ".join(parts)


def _param(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def write_out(result: StudyResult, document: dict, out: Path) -> None:
    """study.json, trials.csv and scenarios/trial-N.toml (one per front trial) under `out`."""
    from engine.service.optimise.front import scenario_toml

    scenarios = out / "scenarios"
    scenarios.mkdir(parents=True, exist_ok=True)
    (out / "study.json").write_text(json.dumps(document, indent=1, allow_nan=False), encoding="utf-8")
    rows = [{"trial": t.number, "generation": t.generation, "feasible": t.measured.feasible,
             "on_front": t.number in result.front, "error": t.measured.error or "", **t.params,
             **{o.name: t.measured.values.get(o.name) for o in result.study.objectives}} for t in result.trials]
    (out / "trials.csv").write_bytes(to_spreadsheet_csv(pd.DataFrame(rows)))
    for number in result.front:
        name = f"{result.study.name}-trial-{number}"
        (scenarios / f"trial-{number}.toml").write_text(scenario_toml(result.study, result.trial(number).params, name),
                                                       encoding="utf-8")


def add_parser(sub, db_help: str) -> None:
    p = sub.add_parser("optimise", help="evolve policy parameters against several objectives (NSGA-II/III)")
    add_source(p)
    p.add_argument("--space", required=True, help="study TOML file: base scenario, [search], objectives, "
                                                  "[constraints], [windows]")
    p.add_argument("--objectives", nargs="+", metavar="KPI", help="2-12 KPI keys (or KEY@class) replacing the file's")
    p.add_argument("--trials", type=int, default=40, help="trials to run in all (default 40)")
    p.add_argument("--population", type=int, help="trials per generation (default: a quarter of --trials, 4-20)")
    p.add_argument("--seed", type=int, default=0, help="the sampler's seed (default 0)")
    p.add_argument("--workers", type=int, help="local processes (default: one per core)")
    p.add_argument("--dask", metavar="ADDRESS", help='run the simulations on a Dask cluster ("local" or tcp://host:port)')
    p.add_argument("--journal", help="keep the study in this file and resume it if it is there")
    p.add_argument("--out", help="write study.json, trials.csv and the front's scenario files to this folder")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_optimise)
