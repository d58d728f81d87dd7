"""An evolved queue order against RLScheduler's published heuristics, with RLScheduler's protocol.

The order is `linear` (engine.policies.ordering): a weighted sum of log10(requested) x size,
log10(requested), log10(size), log10(submit) and the hours waited, lowest first; F1 is one point of
that space (1, 0, 0, 870, 0). Its five weights are searched with Optuna's TPE sampler (seeded) to
minimise the mean average bounded slowdown over `train` sequences of 1,024 jobs drawn at random
from the log, none of which shares a job with the ten test sequences (`START_INDICES`); F1 and a
shortest-requested-first point (0, 1, 0, 0, 0) are the first two trials, so the search starts from
the published heuristics. The best trial on the training sequences is then replayed on the ten
test sequences, beside F1 and SJF replayed there in the same run, and set against the published
figures of `../shared/expected/README.md` section 1. The evolved order ages jobs by their true
wait; the published WFP3/UNICEP quirk applies to those two only.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import optuna

from engine.policies.ordering import Linear
from engine.policies.registry import make
from engine.service.experiments.rlscheduler import (
    AUTHORS_CLOCK_S,
    SEQUENCE_LENGTH,
    START_INDICES,
    ExperimentError,
    allowed_starts,
    replay_order,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)
# Weight ranges: the score's scale does not matter (only the order of keys), so the ranges only
# have to hold F1's direction and the directions around it.
RANGES = {"w_runtime_size": (0.0, 5.0), "w_runtime": (-200.0, 1000.0), "w_size": (-500.0, 500.0),
          "w_submit": (0.0, 5000.0), "w_wait": (-50.0, 50.0)}
STARTING_POINTS = ({"w_runtime_size": 1.0, "w_runtime": 0.0, "w_size": 0.0, "w_submit": 870.0, "w_wait": 0.0},
                   {"w_runtime_size": 0.0, "w_runtime": 1.0, "w_size": 0.0, "w_submit": 0.0, "w_wait": 0.0})
# Published means over the ten test sequences (RLScheduler's result files; expected/README.md section 1).
PUBLISHED = {("lublin_256", "none"): {"F1": 258.37, "SJF": 277.35},
             ("lublin_256", "compat"): {"F1": 75.07, "SJF": 73.31},
             ("HPC2N", "none"): {"F1": 118.01}, ("HPC2N", "compat"): {"F1": 71.95}}


@dataclass
class Evolved:
    """What the search found: the best weights, their mean on the training sequences, every test
    sequence's bounded slowdown for the evolved order and for F1 and SJF, the cost."""

    weights: dict
    train_starts: list[int]
    train_bsld: float
    test: dict = field(default_factory=dict)        # name -> [ten per-sequence means]
    trials: int = 0
    simulations: int = 0
    elapsed_s: float = 0.0
    history: list[float] = field(default_factory=list)  # best training mean after each trial

    def mean(self, name: str) -> float:
        return float(np.mean(self.test[name]))


def training_starts(n_jobs: int, count: int, seed: int, length: int = SEQUENCE_LENGTH,
                    test: tuple[int, ...] = START_INDICES) -> list[int]:
    """`count` sequence starts drawn (seeded) from `allowed_starts`."""
    candidates = allowed_starts(n_jobs, length, test)
    rng = np.random.default_rng(seed)
    return sorted(int(s) for s in rng.choice(candidates, size=count, replace=len(candidates) < count))


def mean_bsld(jobs, starts, order, backfill: str, fixed_now_s: float | None = None) -> list[float]:
    return [replay_order(jobs, s, order, backfill, fixed_now_s=fixed_now_s).avg_bounded_slowdown for s in starts]


def evolve(jobs, backfill: str, *, trials: int = 300, train: int = 10, seed: int = 0,
           progress: Callable[[str], None] | None = None) -> Evolved:
    """Search the linear order's weights on `train` training sequences of `jobs` (an SwfJobs) under
    `backfill` ("none" or "compat"), then replay the best on the ten test sequences with F1 and SJF."""
    if backfill not in ("none", "compat"):
        raise ExperimentError(f"the published protocol has backfill none or compat, got {backfill!r}")
    began = time.perf_counter()
    starts = training_starts(len(jobs), train, seed)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    for point in STARTING_POINTS:
        study.enqueue_trial(point)
    history: list[float] = []

    def objective(trial) -> float:
        weights = {name: trial.suggest_float(name, low, high) for name, (low, high) in RANGES.items()}
        value = float(np.mean(mean_bsld(jobs, starts, Linear(**weights), backfill)))
        history.append(min(value, history[-1]) if history else value)
        if progress is not None and (trial.number + 1) % 50 == 0:
            progress(f"{trial.number + 1}/{trials} trials, best training mean {history[-1]:.2f}")
        return value

    study.optimize(objective, n_trials=trials)
    best = dict(study.best_params)
    result = Evolved(best, starts, float(study.best_value), trials=trials, history=history)
    result.test["evolved"] = mean_bsld(jobs, START_INDICES, Linear(**best), backfill)
    result.test["F1"] = mean_bsld(jobs, START_INDICES, make("order", "f1"), backfill, AUTHORS_CLOCK_S)
    result.test["SJF"] = mean_bsld(jobs, START_INDICES, make("order", "sjf"), backfill, AUTHORS_CLOCK_S)
    result.simulations = trials * train + 3 * len(START_INDICES)
    result.elapsed_s = time.perf_counter() - began
    return result


def published(source: str, backfill: str) -> dict:
    """The published test-sequence means for this log and backfill mode ({} when none were published)."""
    for (log, mode), figures in PUBLISHED.items():
        if mode == backfill and log.lower() in source.lower():
            return figures
    return {}


def document(result: Evolved, source: str, backfill: str) -> dict:
    """The JSON of `meridian experiment evolve --json`."""
    return {"trace": source, "backfill": backfill, "weights": result.weights, "train_starts": result.train_starts,
            "train_avg_bounded_slowdown": result.train_bsld,
            "test": {name: {"mean": result.mean(name), "sequences": values} for name, values in result.test.items()},
            "published": published(source, backfill), "trials": result.trials, "simulations": result.simulations,
            "elapsed_s": result.elapsed_s}


def add_parser(experiment_sub) -> None:
    """Register `meridian experiment evolve`."""
    p = experiment_sub.add_parser(
        "evolve", help="evolve a queue order with RLScheduler's protocol and test it against F1 and SJF",
        description="Search the weights of the linear queue order on sequences of an SWF log apart from "
                    "RLScheduler's ten test sequences, then replay the best on the ten beside F1 and SJF.")
    p.add_argument("--trace", required=True, help="SWF log, plain or .gz")
    p.add_argument("--backfill", default="none", choices=["none", "compat"],
                   help="none, or compat (the published code's backfilling); default none")
    p.add_argument("--trials", type=int, default=200, help="weight vectors to try (default 200)")
    p.add_argument("--train", type=int, default=10, help="training sequences (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the training sequences and the sampler")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_evolve)


def cmd_evolve(args) -> int:
    import json
    import sys

    from engine.service.experiments.swf_jobs import load_swf_jobs
    from engine.telemetry.errors import ImportRejected

    if args.trials < 1 or args.train < 1:
        print("meridian: --trials and --train must be positive", file=sys.stderr)
        return 2
    try:
        jobs = load_swf_jobs(args.trace)
        result = evolve(jobs, args.backfill, trials=args.trials, train=args.train, seed=args.seed,
                        progress=lambda line: print(line, file=sys.stderr, flush=True))
    except ImportRejected as exc:
        for line in exc.lines():
            print(line, file=sys.stderr)
        print(f"meridian: the trace cannot be read: {exc.summary()}", file=sys.stderr)
        return 2
    except ExperimentError as exc:
        print(f"meridian: {exc}", file=sys.stderr)
        return 2
    doc = document(result, jobs.source, args.backfill)
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    print(f"evolved queue order on {jobs.source}, backfill {args.backfill}: {result.trials} trials on "
          f"{len(result.train_starts)} training sequences ({result.simulations:,} simulations, "
          f"{result.elapsed_s / 60:.1f} min)")
    print("weights: " + ", ".join(f"{k} {v:.4g}" for k, v in result.weights.items()))
    print(f"training mean bounded slowdown {result.train_bsld:.2f}")
    figures = doc["published"]
    print(f"{'test sequences':<16}{'ours':>10}{'published':>11}")
    for name in ("evolved", "F1", "SJF"):
        shown = f"{figures[name]:.2f}" if name in figures else "-"
        print(f"{name:<16}{result.mean(name):>10.2f}{shown:>11}")
    return 0
