"""`meridian rl`: train, evaluate and list reinforcement-learning schedulers (RLScheduler's protocol).

    meridian rl train (--dataset NAME | --trace FILE) [--name AGENT] [--backfill none|compat]
                      [--reward bsld|utilization|balance] [--w-util X] [--w-wait X] [--w-fair X]
                      [--features rlscheduler|predicted] [--epochs N] [--trajectories N] [--group N]
                      [--pi-lr X] [--imitate f1|sjf|fcfs|none] [--imitation-windows N]
                      [--imitation-steps N] [--imitation-minibatch N] [--validation N] [--seed N] [--workers N] [--resume] [--json]
                      [--db FILE]
    meridian rl evaluate --model AGENT [--version N] (--dataset NAME | --trace FILE)
                      [--backfill none|compat] [--starts I,J,...] [--length N] [--json] [--db FILE]
    meridian rl agents [--json] [--db FILE]

`train` prints one progress line per epoch on stderr (the agent's mean bounded slowdown on the
epoch's windows beside SJF's and F1's on the same windows, decisions, seconds), stores a checkpoint
in the model registry after every epoch (`--resume` continues it: same log, the stored settings,
`--epochs` the new total), and publishes the agent as the next version with its learning curve and
its test-sequence evaluation. `evaluate` plays the ten test sequences (or `--starts`) with the
agent beside FCFS, WFP3, UNICEP, SJF and F1, and the published figures where there are some.
`agents` lists the packaged and trained agents. Exit codes: 0 success; 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import sys

from engine.cli.common import EXIT_OK, BadInput, add_source, guarded
from engine.service.experiments.rlscheduler import SEQUENCE_LENGTH, START_INDICES
from engine.telemetry.store import DEFAULT_DB_PATH


def _errors() -> tuple:
    from engine.policies.rl_agent import AgentError
    from engine.predict.registry import ModelError
    from engine.service.experiments.rlscheduler import ExperimentError
    from engine.service.rl.session import TrainingError
    return AgentError, ModelError, ExperimentError, TrainingError


def _guarded(command):
    """engine.cli.common.guarded, with the agents', the registry's and the logs' errors as user errors;
    a log that cannot be read gets its problems line by line (file:line: reason), then a total."""
    return guarded(command, _errors, "the log cannot be read: ")


def _registry(args):
    from engine.predict.rl.agent_registry import AgentRegistry

    return AgentRegistry.beside(args.db or DEFAULT_DB_PATH)


def log_of(args):
    """(RLScheduler's jobs of --trace or --dataset, a line about jobs left out or None, the dataset's
    rows of those jobs or None)."""
    if args.trace:
        from engine.service.experiments.swf_jobs import load_swf_jobs

        return load_swf_jobs(args.trace), None, None
    from engine.cli.common import source
    from engine.service.rl.logs import dataset_jobs

    data = source(args)
    log, wide, rows = dataset_jobs(data.jobs, data.fleet, args.dataset)
    if len(log) == 0:
        raise BadInput(f"dataset {args.dataset!r} has no finished jobs to train on")
    return log, (f"{wide:,} finished jobs wider than the fleet's {log.max_procs:,} GPUs left out" if wide else None), rows


def _predicted(args, rows):
    """P10, P50, P90 of every job from the dataset's stored runtime predictors (--features predicted)."""
    if args.trace:
        raise BadInput("--features predicted needs --dataset: the predictors are trained per dataset "
                       "(`meridian predict train --dataset NAME`)")
    from engine.cli.predict_common import dataset_tables, model_registry
    from engine.service.rl.predicted import predicted_quantiles

    jobs, regions = dataset_tables(args)
    return predicted_quantiles(model_registry(args).load(args.dataset), jobs, regions, rows)


@_guarded
def cmd_train(args) -> int:
    from engine.predict.rl.ppo import PPOSettings
    from engine.service.rl.reward import Reward
    from engine.service.rl.session import train_agent
    from engine.service.rl.train import TrainSettings

    log, note, rows = log_of(args)
    if note:
        print(f"note: {note}", file=sys.stderr)
    name = args.name or (args.dataset or _stem(args.trace)) + ("-backfill" if args.backfill == "compat" else "")
    settings = None
    if not args.resume:
        try:
            settings = TrainSettings(backfill=args.backfill, reward=Reward(args.reward, args.w_util, args.w_wait,
                                                                           args.w_fair),
                                     features=args.features, epochs=args.epochs, trajectories=args.trajectories,
                                     group=args.group, seed=args.seed, imitate=args.imitate,
                                     imitation_windows=args.imitation_windows, imitation_steps=args.imitation_steps,
                                     imitation_minibatch=args.imitation_minibatch,
                                     validation=args.validation, ppo=PPOSettings(pi_lr=args.pi_lr))
        except ValueError as exc:
            raise BadInput(str(exc)) from None
    predicted = _predicted(args, rows) if args.features == "predicted" else None
    total = args.epochs if not args.resume or args.epochs_given else None

    def progress(point: dict) -> None:
        checked = (f"; validation windows {point['validation_bsld']:.2f}" if "validation_bsld" in point else "")
        if "imitated" in point:
            print(f"epoch 0: learnt to copy {point['imitated'].upper()}'s picks ({point['agreement']:.0%} agree, "
                  f"cross-entropy {point['imitation_loss']:.3f}){checked}, {point['decisions']:,} decisions, "
                  f"{point['seconds']:.1f} s", file=sys.stderr, flush=True)
            return
        print(f"epoch {point['epoch']}: bounded slowdown {point['bsld']:.2f} (SJF {point['bsld_SJF']:.2f}, "
              f"F1 {point['bsld_F1']:.2f} on the same windows){checked}, {point['decisions']:,} decisions, "
              f"{point['seconds']:.1f} s", file=sys.stderr, flush=True)

    version = train_agent(_registry(args), name, log, settings, resume=args.resume, epochs=total,
                          workers=args.workers, predicted_s=predicted, progress=progress)
    if args.json:
        print(json.dumps({"path": str(version.path), **version.meta}))
        return EXIT_OK
    meta = version.meta
    cost = meta["training"]
    print(f"agent {name} v{version.number}: {cost['epochs']} epochs (kept epoch {cost['kept_epoch']}'s weights), "
          f"{cost['decisions']:,} decisions, {cost['minutes']:.1f} min on {cost['workers']} worker(s); "
          f"stored in {version.path}")
    if meta["evaluation"]:
        _print_evaluation(meta["evaluation"])
    return EXIT_OK


@_guarded
def cmd_evaluate(args) -> int:
    from engine.service.rl.agents import resolve
    from engine.service.rl.evaluate import evaluate

    registry = _registry(args)
    agent = registry.load(args.model, args.version) if args.version else resolve(args.model, registry)
    log, note, rows = log_of(args)
    if note:
        print(f"note: {note}", file=sys.stderr)
    backfill = args.backfill or agent.backfill
    predicted = _predicted(args, rows) if agent.features == "predicted" else None
    result = evaluate(log, agent, backfill, starts=args.starts, length=args.length, predicted_s=predicted)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_evaluation(result)
    return EXIT_OK


@_guarded
def cmd_agents(args) -> int:
    from engine.policies.rl_agent import packaged_names

    registry = _registry(args)
    rows = [{"name": n, "where": "packaged", "version": None} for n in packaged_names()]
    for name in registry.agents():
        for v in registry.versions(name):
            t = v.meta.get("training", {})
            rows.append({"name": name, "where": str(v.path), "version": v.number, "epochs": t.get("epochs"),
                         "decisions": t.get("decisions"), "source": v.meta.get("data", {}).get("source"),
                         "backfill": v.meta.get("settings", {}).get("backfill")})
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for row in rows:
        version = f"v{row['version']}" if row["version"] else ""
        trained = (f" trained on {row['source']} ({row['backfill']}), {row['epochs']} epochs, "
                   f"{row['decisions']:,} decisions" if row["version"] else "")
        print(f"{row['name']:<24}{version:<5}{row['where'] if not row['version'] else ''}{trained}")
    return EXIT_OK


def _print_evaluation(result: dict) -> None:
    published = result["published"]
    print(f"{result['agent']} on {result['trace']}, backfill {result['backfill']}: {len(result['starts'])} sequences "
          f"of {result['length']:,} jobs, mean average bounded slowdown (lower is better) and utilization")
    print(f"{'order':<10}{'bounded slowdown':>18}{'utilization':>13}{'published':>11}")
    for name, row in result["orders"].items():
        shown = published.get("RL" if name == "agent" else name)
        print(f"{name:<10}{row['mean']['avg_bounded_slowdown']:>18.2f}{row['mean']['utilization']:>13.3f}"
              f"{(f'{shown:.2f}' if shown is not None else '-'):>11}")


def _stem(path: str) -> str:
    from pathlib import Path

    return Path(path).name.removesuffix(".gz").removesuffix(".swf")


def _starts(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes comma-separated integers, got {text!r}") from None


class _Epochs(argparse.Action):
    """--epochs, remembering that it was given (a resumed run keeps its total otherwise)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.epochs_given = True


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_parser(sub, db_help: str) -> None:
    """Register `meridian rl train|evaluate|agents`."""
    rl = sub.add_parser("rl", help="reinforcement-learning schedulers: train, evaluate, list (RLScheduler's protocol)")
    commands = rl.add_subparsers(dest="rl_command", required=True)

    p = commands.add_parser("train", help="train an agent with PPO on a log's 256-job windows")
    add_source(p)
    p.add_argument("--name", help="the agent's name (default: the dataset or trace name, + -backfill with compat)")
    p.add_argument("--backfill", default="none", choices=["none", "compat"],
                   help="none, or compat: RLScheduler's own backfilling (default none)")
    p.add_argument("--reward", default="bsld", choices=["bsld", "utilization", "balance"],
                   help="bsld: -average bounded slowdown (default); utilization; balance: a weighted mix of "
                        "utilization, p95 wait and Jain's index over the log's groups")
    p.add_argument("--w-util", type=float, default=1.0, help="balance: weight of utilization (default 1)")
    p.add_argument("--w-wait", type=float, default=1.0, help="balance: weight of the p95 wait in 12 h (default 1)")
    p.add_argument("--w-fair", type=float, default=1.0, help="balance: weight of Jain's index (default 1)")
    p.add_argument("--features", default="rlscheduler", choices=["rlscheduler", "predicted"],
                   help="RLScheduler's 8 job features, or those + the runtime predictors' P10/P50/P90 (--dataset)")
    p.add_argument("--epochs", type=_positive, default=50, action=_Epochs, help="epochs in all (default 50)")
    p.add_argument("--trajectories", type=_positive, default=100, help="episodes per epoch (default 100)")
    p.add_argument("--group", type=_positive, default=4, help="episodes per training window (default 4)")
    p.add_argument("--pi-lr", type=float, default=3e-4, help="the policy's Adam step size (default 0.0003)")
    p.add_argument("--imitate", default="f1", choices=["f1", "sjf", "fcfs", "none"],
                   help="first learn to copy this heuristic's picks (default f1); none: PPO from random weights")
    p.add_argument("--imitation-windows", type=_positive, default=40, help="training windows copied (default 40)")
    p.add_argument("--imitation-steps", type=_positive, default=200, help="Adam steps of the copying (default 200)")
    p.add_argument("--imitation-minibatch", type=int, default=0,
                   help="decisions per copying step (default 0: all of them)")
    p.add_argument("--validation", type=int, default=16,
                   help="training windows set aside to choose the epoch whose weights are kept (default 16; 0: the last)")
    p.add_argument("--seed", type=int, default=0, help="seed of the windows, the sampling and the weights")
    p.add_argument("--workers", type=_positive, default=1, help="local processes playing episodes (default 1)")
    p.add_argument("--resume", action="store_true", help="continue the agent's interrupted run")
    p.add_argument("--json", action="store_true", help="print the published version's meta as JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_train, epochs_given=False)

    p = commands.add_parser("evaluate", help="play test sequences with an agent beside the heuristics")
    add_source(p)
    p.add_argument("--model", required=True, help="the agent: trained here or packaged")
    p.add_argument("--version", type=_positive, help="a trained agent's version (default the latest)")
    p.add_argument("--backfill", choices=["none", "compat"], help="default: the mode the agent was trained with")
    p.add_argument("--starts", type=_starts, default=START_INDICES, metavar="I,J,...",
                   help="sequence start indices (default: RLScheduler's ten)")
    p.add_argument("--length", type=_positive, default=SEQUENCE_LENGTH, help="jobs per sequence (default 1024)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_evaluate)

    p = commands.add_parser("agents", help="list the packaged and trained agents")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_agents)

