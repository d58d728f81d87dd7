"""A trained agent on test sequences, beside the heuristics replayed on the same sequences.

The agent plays each sequence greedily (the highest-scoring waiting job each time) in the
scheduling environment, with the evaluated log's own normalisers, as RLScheduler tested its
agents on other logs; FCFS, WFP3, UNICEP, SJF and F1 are replayed by the published reproduction
(engine/service/experiments/rlscheduler.py, WFP3 and UNICEP with the published code's wait).
Scores per sequence and their means: average bounded slowdown and utilization. Where RLScheduler
published figures for the log and mode, they are given beside ours.
"""
from __future__ import annotations

import numpy as np

from engine.policies.rl_agent import Agent
from engine.service.experiments import rlscheduler
from engine.service.experiments.rlscheduler import SEQUENCE_LENGTH, START_INDICES
from engine.service.experiments.swf_jobs import SwfJobs
from engine.service.rl.env import SchedulingEnv
from engine.service.rl.rollout import play

# RLScheduler's published means over the ten Lublin-1 test sequences (../shared/expected/README.md, issue 24)
PUBLISHED = {("lublin_256", "none"): {"RL": 254.67, "FCFS": 7273.77, "WFP3": 19753.53, "UNICEP": 22274.74,
                                      "SJF": 277.35, "F1": 258.37},
             ("lublin_256", "compat"): {"RL": 58.64, "FCFS": 235.82, "WFP3": 133.87, "UNICEP": 307.23,
                                        "SJF": 73.31, "F1": 75.07}}
ORDERS = tuple(rlscheduler.POLICIES)


def published(source: str, backfill: str) -> dict:
    """RLScheduler's published mean bounded slowdowns for this log and mode ({} when none)."""
    stem = source.lower().removesuffix(".gz").removesuffix(".swf")
    return dict(PUBLISHED.get((stem, backfill), {}))


def evaluate(jobs: SwfJobs, agent: Agent, backfill: str, *, starts=START_INDICES, length: int = SEQUENCE_LENGTH,
             orders=ORDERS, predicted_s: np.ndarray | None = None) -> dict:
    """{trace, backfill, agent, starts, length, orders: {name: {mean, sequences}}, published} with the
    agent under the name "agent"; `mean` and each sequence hold avg_bounded_slowdown and utilization."""
    for s in starts:
        rlscheduler.sequence_of(jobs, s, length)   # an ExperimentError names a sequence that does not fit
    env = SchedulingEnv(jobs, backfill=backfill, features=agent.features, predicted_s=predicted_s,
                        starts=list(starts), length=length)
    results = {"agent": [_scores(play(env, agent.net, s, None, length, keep_rows=False).scores) for s in starts]}
    for name in orders:
        results[name] = [_scores(vars(rlscheduler.run_sequence(jobs, s, name, backfill, length=length)))
                         for s in starts]
    return {"trace": jobs.source, "backfill": backfill, "agent": agent.name, "starts": list(starts), "length": length,
            "orders": {name: {"mean": {k: float(np.mean([r[k] for r in rows])) for k in rows[0]},
                              "sequences": rows} for name, rows in results.items()},
            "published": published(jobs.source, backfill)}


def _scores(values: dict) -> dict:
    return {"avg_bounded_slowdown": float(values["avg_bounded_slowdown"]), "utilization": float(values["utilization"])}
