"""Queued work of the sample company: multi-node training, deferrable batch, HPO sweeps.

Rates are at scale 1 and are multiplied by the scale factor; sizes are not (a sweep keeps
its hundreds of trials, a training run its nodes, capped by the pool it runs on).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.telemetry.synth.clock import (
    DAY_S,
    HOUR_S,
    WINDOW_END_S,
    WINDOW_START_S,
    all_midnights,
    hour_profile,
    in_window,
    team_working_midnights,
    times_on_days,
)
from engine.telemetry.synth.shapes import (
    concat_specs,
    lognormal_s,
    outcomes,
    requested_s,
    spec_columns,
    spec_frame,
    users,
)
from engine.telemetry.synth.world import REGION_BY_NAME, TEAM_BY_NAME, Team


@dataclass(frozen=True)
class Stream:
    """One team's stream of one class on one GPU type in its home region."""

    team: str
    gpu_type: str
    per_week: float              # arrivals (jobs, or sweeps for HPO) per week at scale 1
    residency: str | None = None
    residency_share: float = 0.0  # share of the team's jobs carrying the residency tag
    max_nodes: int = 1           # largest gang (whole 8-GPU nodes) the team runs


TRAINING = (
    Stream("foundation", "H100", 22.0, max_nodes=8),
    Stream("llm-research", "H100", 19.0, max_nodes=4),
    Stream("search", "A100", 13.5, max_nodes=4),
    Stream("vision", "A100", 11.5, "EU", 0.3, max_nodes=4),
    Stream("speech", "H100", 19.0, "EU", 0.5, max_nodes=4),
    Stream("arabic-nlp", "H100", 12.0, "SA", 0.6, max_nodes=2),
    Stream("india-platform", "A100", 18.5, max_nodes=2),
    Stream("recsys-apac", "H100", 11.0, max_nodes=4),
    Stream("robotics", "H100", 4.0, max_nodes=2),
)
TRAINING_NODES = (1, 2, 4, 8)
TRAINING_NODE_WEIGHTS = (0.35, 0.30, 0.22, 0.13)

HPO = (
    Stream("foundation", "H100", 1.5),
    Stream("llm-research", "A100", 3.0),
    Stream("search", "A100", 1.5),
    Stream("vision", "A100", 2.5, "EU", 0.3),
    Stream("speech", "H100", 1.5, "EU", 0.5),
    Stream("arabic-nlp", "H100", 1.5, "SA", 0.5),
    Stream("india-platform", "A100", 2.0),
    Stream("recsys-apac", "L4", 1.5),
    Stream("robotics", "H100", 1.0),
)

BATCH = (  # per_week = ad-hoc jobs per week; the nightly pipeline is in NIGHTLY
    Stream("data-platform", "A100", 60.0),
    Stream("foundation", "H100", 40.0),
    Stream("llm-research", "A100", 30.0),
    Stream("search", "L4", 60.0),
    Stream("ads-ranking", "L4", 60.0),
    Stream("eu-assistant", "A100", 40.0, "EU", 1.0),
    Stream("india-platform", "L4", 60.0),
    Stream("recsys-apac", "L4", 36.0),
    Stream("arabic-nlp", "L4", 18.0, "SA", 0.5),
    Stream("vision", "L4", 40.0, "EU", 0.3),
)
NIGHTLY = {  # jobs per night at scale 1
    "data-platform": 40, "foundation": 13, "llm-research": 10, "search": 31, "ads-ranking": 31,
    "eu-assistant": 16, "india-platform": 28, "recsys-apac": 19, "arabic-nlp": 7, "vision": 10,
}
DATA_LAKE = {"US": "us-east", "EU": "eu-west"}  # where shared data sets live, by jurisdiction


def _team_hours(team: Team) -> np.ndarray:
    """Local-hour weights of job submissions: a morning and an after-lunch peak."""
    s = team.work_start_hour
    return hour_profile(((s + 1.5, 1.2, 1.0), (s + 5.5, 1.6, 0.9), (team.work_end_hour - 0.5, 1.0, 0.3)))


def _residency(rng: np.random.Generator, stream: Stream, n: int) -> np.ndarray:
    tagged = rng.random(n) < stream.residency_share
    return np.where(tagged, stream.residency, None)


def _work_and_anytime(rng: np.random.Generator, team: Team, per_week: float, anytime_share: float) -> np.ndarray:
    """Arrival instants: most in the team's working hours, the rest uniform over the window."""
    working = team_working_midnights(team)
    per_day = per_week * (1 - anytime_share) * (len(all_midnights(team.timezone)) / 7) / max(1, len(working))
    in_hours = times_on_days(rng, working, per_day, _team_hours(team))
    n_any = rng.poisson(per_week * anytime_share * (WINDOW_END_S - WINDOW_START_S) / (7 * DAY_S))
    anytime = rng.integers(WINDOW_START_S, WINDOW_END_S, size=n_any)
    return np.sort(in_window(np.concatenate([in_hours, anytime])))


def training(parent: np.random.Generator, scale: float) -> pd.DataFrame:
    """Multi-node gang jobs on whole 8-GPU nodes; a third are week-long pre-training runs."""
    frames = []
    for stream, rng in zip(TRAINING, parent.spawn(len(TRAINING))):
        team = TEAM_BY_NAME[stream.team]
        submit = _work_and_anytime(rng, team, stream.per_week * scale, 0.3)
        n = len(submit)
        long_run = rng.random(n) < 0.33
        full = np.where(long_run, lognormal_s(rng, n, 4.5 * DAY_S, 0.35, 1.5 * DAY_S, 9 * DAY_S),
                        lognormal_s(rng, n, 10 * HOUR_S, 0.8, HOUR_S, 2 * DAY_S))
        allowed = np.array([k <= stream.max_nodes for k in TRAINING_NODES])
        weights = np.where(allowed, TRAINING_NODE_WEIGHTS, 0.0)
        nodes = rng.choice(TRAINING_NODES, size=n, p=weights / weights.sum())
        outcome, run, patience = outcomes(rng, full, 0.12, 0.05)
        kind = np.where(long_run, "pretrain", "finetune")
        frames.append(spec_frame(
            n, workload_class="training", team=team.name,
            user_name=rng.choice(users(team.name, 6), size=n),
            project=[f"{team.name}/{k}-{i:03d}" for i, k in enumerate(kind)],
            priority=30.0, qos="normal", queue="train", region=team.home_region, gpu_type=stream.gpu_type,
            submit_s=submit, run_s=run, outcome=outcome, patience_s=patience, nodes=nodes,
            gpus=nodes * 8.0, gpu_milli=1000, node_milli=8000,
            requested_runtime_s=requested_s(rng, full, 2.5),
            data_location=team.home_region,
            data_size_gb=np.round(np.exp(rng.normal(np.log(2000), 0.8, n)), 1),
            residency=_residency(rng, stream, n)))
    return pd.concat(frames, ignore_index=True)


def hpo(parent: np.random.Generator, scale: float) -> pd.DataFrame:
    """Sweeps of 100-400 one-GPU trials submitted within minutes; most trials are stopped early."""
    parts = []
    sweep_id = 0
    for stream, rng in zip(HPO, parent.spawn(len(HPO))):
        team = TEAM_BY_NAME[stream.team]
        starts = _work_and_anytime(rng, team, stream.per_week * scale, 0.1)
        for start in starts:
            sweep_id += 1
            n = int(rng.integers(100, 401))
            submit = start + np.sort(rng.integers(0, int(rng.integers(60, 900)), size=n))
            stage = rng.choice(3, size=n, p=(0.6, 0.27, 0.13))  # successive-halving rung reached
            median = np.array([12 * 60, 55 * 60, 3 * HOUR_S])[stage]
            full = np.clip(median * np.exp(0.35 * rng.standard_normal(n)), 180, 6 * HOUR_S).round().astype(np.int64)
            outcome, run, patience = outcomes(rng, full, 0.06, 0.03)
            limit = float(rng.choice((4, 6, 8)) * HOUR_S)
            parts.append(spec_columns(
                n, workload_class="hpo", team=team.name, user_name=rng.choice(users(team.name, 6)),
                project=f"{team.name}/sweep-{sweep_id:04d}", priority=20.0, qos="normal", queue="hpo",
                region=team.home_region, gpu_type=stream.gpu_type, submit_s=submit, run_s=run,
                outcome=outcome, patience_s=patience, nodes=1, gpus=1.0, gpu_milli=1000, node_milli=1000,
                requested_runtime_s=limit, data_location=team.home_region,
                data_size_gb=round(float(np.exp(rng.normal(np.log(50), 0.7))), 1),
                residency=stream.residency if rng.random() < stream.residency_share else None))
    return concat_specs(parts)


def batch(parent: np.random.Generator, scale: float) -> pd.DataFrame:
    """Deferrable single-node jobs with deadlines and input data: a nightly pipeline plus ad-hoc runs."""
    frames = []
    for stream, rng in zip(BATCH, parent.spawn(len(BATCH))):
        team = TEAM_BY_NAME[stream.team]
        nightly_hours = hour_profile(((2.0, 1.5, 1.0),))
        nightly = times_on_days(rng, all_midnights(team.timezone), NIGHTLY[team.name] * scale, nightly_hours)
        ad_hoc = _work_and_anytime(rng, team, stream.per_week * scale, 0.2)
        submit = np.sort(in_window(np.concatenate([nightly, ad_hoc])))
        n = len(submit)
        full = lognormal_s(rng, n, 2 * HOUR_S, 0.9, 10 * 60, 20 * HOUR_S)
        gpus = rng.choice((1, 2, 4, 8), size=n, p=(0.45, 0.25, 0.2, 0.1))
        outcome, run, patience = outcomes(rng, full, 0.08, 0.03)
        residency = _residency(rng, stream, n)
        lake = DATA_LAKE.get(REGION_BY_NAME[team.home_region].jurisdiction, team.home_region)
        location = np.where(rng.random(n) < 0.25, lake, team.home_region)
        location = np.where(residency == "EU", "eu-west", location)
        frames.append(spec_frame(
            n, workload_class="batch", team=team.name, user_name=rng.choice(users(team.name, 4), size=n),
            project=[f"{team.name}/etl-nightly" if k else f"{team.name}/batch" for k in np.isin(submit, nightly)],
            priority=10.0, qos="deferrable", queue="batch", region=team.home_region, gpu_type=stream.gpu_type,
            submit_s=submit, run_s=run, outcome=outcome, patience_s=patience, nodes=1,
            gpus=gpus.astype(float), gpu_milli=1000, node_milli=gpus * 1000,
            requested_runtime_s=requested_s(rng, full),
            deadline_s=submit + rng.integers(12, 73, size=n) * HOUR_S,
            data_location=location,
            data_size_gb=np.round(np.clip(np.exp(rng.normal(np.log(200), 1.2, n)), 1, 20000), 1),
            residency=residency))
    return pd.concat(frames, ignore_index=True)
