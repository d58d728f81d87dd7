"""A training run as a product feature: checkpoints in the model registry, resume, evaluation, publishing.

`train_agent` trains agent `name` on a log (engine/service/rl/train.py; the weights kept are those
that scored best on the validation windows), storing the run's state
in the registry after every epoch; with `resume` it continues the stored run (its settings and
data digest must match: the same log), possibly to more epochs. At the end it plays the ten test
sequences (engine/service/rl/evaluate.py), publishes the agent as the next version with its
learning curve, evaluation and cost, and removes the checkpoint.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from engine.policies.kernel_net import SLOTS
from engine.policies.rl_agent import Agent
from engine.predict.registry import ModelVersion
from engine.predict.rl.agent_registry import AgentRegistry
from engine.service.experiments.rlscheduler import START_INDICES, ExperimentError, allowed_starts
from engine.service.experiments.swf_jobs import SwfJobs
from engine.service.rl.checkpoint import state_bytes, state_of
from engine.service.rl.env import scales_of
from engine.service.rl.evaluate import evaluate
from engine.service.rl.logs import data_digest
from engine.service.rl.rollout import Collector
from engine.service.rl.train import TrainingState, TrainSettings, train


class TrainingError(ValueError):
    """A run cannot start or resume; the message says why and what to do."""


def resumable(registry: AgentRegistry, name: str) -> dict | None:
    """The stored run of `name` (its checkpoint's meta), or None."""
    saved = registry.training(name)
    return None if saved is None else saved[1]


def train_agent(registry: AgentRegistry, name: str, log: SwfJobs, settings: TrainSettings | None = None, *,
                resume: bool = False, epochs: int | None = None, workers: int = 1,
                predicted_s: np.ndarray | None = None, progress: Callable[[dict], None] | None = None,
                evaluate_at_end: bool = True) -> ModelVersion:
    """Train (or resume) agent `name` on `log` and publish it; see the module docstring. With `resume`,
    the stored run's settings are used and `epochs` (if given) is the new total."""
    digest = data_digest(log)
    state = None
    if resume:
        saved = registry.training(name)
        if saved is None:
            raise TrainingError(f"agent {name!r} has no interrupted run to resume; start one without --resume")
        data, meta = saved
        if meta["digest"] != digest:
            raise TrainingError(f"agent {name!r}'s interrupted run trained on other data ({meta['source']}, digest "
                                f"{meta['digest'][:12]}); this log's digest is {digest[:12]}")
        settings = TrainSettings.from_dict(meta["settings"])
        state = state_of(data)
    if settings is None:
        raise TrainingError("settings are required for a new run")
    if epochs is not None:
        settings = replace(settings, epochs=epochs)
    if settings.features == "predicted" and predicted_s is None:
        raise TrainingError("features 'predicted' need the runtime predictors' P10, P50 and P90 of every job")
    try:
        pool = allowed_starts(len(log), settings.length, START_INDICES)
    except ExperimentError as exc:
        raise TrainingError(str(exc)) from None
    env_kwargs = {"jobs": log, "backfill": settings.backfill, "reward": settings.reward, "features": settings.features,
                  "predicted_s": predicted_s, "length": settings.length}
    began = time.perf_counter()
    collector = Collector(env_kwargs, workers)

    def checkpoint(current: TrainingState) -> None:
        registry.save_training(name, state_bytes(current), {"digest": digest, "source": log.source,
                                                           "settings": settings.as_dict(), "epoch": current.epoch})

    try:
        state = train(collector, pool, settings, state, progress, checkpoint)
    finally:
        collector.close()
    agent = Agent(name, state.kept, settings.features, scales_of(log), settings.backfill)
    evaluation = _evaluation(log, agent, settings.backfill, predicted_s) if evaluate_at_end else None
    meta = {"data": {"source": log.source, "jobs": len(log), "max_nodes": log.max_nodes, "max_procs": log.max_procs,
                     "digest": digest, "training_windows": len(pool)},
            "settings": settings.as_dict(), "curve": state.curve,
            "training": {"epochs": state.epoch, "kept_epoch": state.best_epoch if state.best_net is not None else
                         state.epoch, "decisions": state.decisions, "minutes": state.seconds / 60,
                         "workers": workers, "cpus": os.cpu_count(), "slots": SLOTS,
                         "parameters": dict(zip(("policy", "critic"), agent.net.parameter_count())),
                         "wall_minutes_this_session": (time.perf_counter() - began) / 60},
            "evaluation": evaluation}
    version = registry.publish(agent, meta)
    registry.clear_training(name)
    return version


def _evaluation(log: SwfJobs, agent: Agent, backfill: str, predicted_s) -> dict | None:
    """The ten test sequences, when the log holds them (None otherwise)."""
    try:
        return evaluate(log, agent, backfill, predicted_s=predicted_s)
    except ExperimentError:
        return None
