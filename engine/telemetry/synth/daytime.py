"""Work that follows the clock: interactive development and diurnal inference serving.

Development sessions start in each team's local working hours on its working days (none
on weekends or national holidays). Inference services keep guaranteed replicas running all
the time and add replicas that follow the local daytime demand of their region's users.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from engine.telemetry.synth.clock import (
    HOUR_S,
    WINDOW_END_S,
    WINDOW_START_S,
    hour_profile,
    in_window,
    local_days,
    team_working_midnights,
    times_on_days,
    working_weekdays,
)
from engine.telemetry.synth.shapes import lognormal_s, outcomes, spec_frame, users
from engine.telemetry.synth.world import REGION_BY_NAME, TEAM_BY_NAME


@dataclass(frozen=True)
class DevStream:
    team: str
    gpu_type: str
    developers: int
    sessions_per_day: float      # sessions per developer per working day


@dataclass(frozen=True)
class Service:
    name: str
    team: str
    region: str
    gpu_type: str
    replica_milli: int           # GPU share of one replica (500 = half an L4)
    guaranteed: int              # replicas that always run (at scale 1)
    peak_extra: int              # extra replicas at the daily peak (at scale 1)
    residency: str | None = None


DEVELOPMENT = (
    DevStream("foundation", "H100", 10, 1.0),
    DevStream("ads-ranking", "L4", 8, 1.2),
    DevStream("llm-research", "A100", 12, 1.1),
    DevStream("data-platform", "L4", 6, 0.8),
    DevStream("search", "L4", 8, 1.0),
    DevStream("vision", "L4", 10, 1.2),
    DevStream("eu-assistant", "L4", 8, 1.0),
    DevStream("speech", "H100", 8, 1.0),
    DevStream("arabic-nlp", "L4", 8, 1.2),
    DevStream("india-platform", "L4", 12, 1.1),
    DevStream("recsys-apac", "L4", 8, 1.1),
    DevStream("robotics", "L4", 8, 1.2),
)

SERVICES = (
    Service("ads-ranker", "ads-ranking", "us-west", "L4", 500, 30, 48),
    Service("search-embed", "search", "us-east", "L4", 1000, 14, 24),
    Service("chat-llm", "llm-research", "us-east", "H100", 8000, 3, 4),
    Service("assistant-eu", "eu-assistant", "eu-west", "L4", 500, 28, 44, "EU"),
    Service("vision-api", "vision", "eu-west", "A100", 1000, 8, 16, "EU"),
    Service("asr-stream", "speech", "eu-north", "H100", 1000, 6, 10, "EU"),
    Service("arabic-chat", "arabic-nlp", "me-central", "L4", 1000, 6, 12, "SA"),
    Service("support-bot", "india-platform", "ap-south", "L4", 500, 20, 36),
    Service("recs-serving", "recsys-apac", "ap-northeast", "L4", 500, 12, 20),
)
WEEKEND_DEMAND = 0.6   # share of the working-day peak demand on the local weekend
SCALE_OUT_TIMEOUT_S = HOUR_S  # the autoscaler withdraws a replica request not placed within an hour
SESSION_LIMIT_S = (4 * HOUR_S, 8 * HOUR_S, 12 * HOUR_S)


def development(parent: np.random.Generator, scale: float) -> pd.DataFrame:
    """Interactive notebook sessions: mostly 1 GPU (some half or two), minutes to hours."""
    frames = []
    for stream, rng in zip(DEVELOPMENT, parent.spawn(len(DEVELOPMENT))):
        team = TEAM_BY_NAME[stream.team]
        s = team.work_start_hour
        hours = hour_profile(((s + 1.0, 1.0, 1.0), (s + 5.0, 1.3, 0.8), (team.work_end_hour - 1.5, 1.0, 0.25)))
        submit = times_on_days(rng, team_working_midnights(team),
                               stream.developers * stream.sessions_per_day * scale, hours)
        submit = in_window(submit)
        n = len(submit)
        full = lognormal_s(rng, n, 150 * 60, 0.7, 10 * 60, 7 * HOUR_S)
        outcome, run, patience = outcomes(rng, full, 0.05, 0.08)
        size = rng.choice(3, size=n, p=(0.8, 0.1, 0.1))   # 1 GPU, 2 GPUs, half a GPU
        if stream.gpu_type != "L4":
            size = np.where(size == 2, 0, size)           # fractional shares only on L4 nodes
        gpus = np.array([1.0, 2.0, 0.5])[size]
        frames.append(spec_frame(
            n, workload_class="development", team=team.name,
            user_name=rng.choice(users(team.name, stream.developers), size=n),
            project=f"{team.name}/notebooks", priority=50.0, qos="interactive", queue="dev",
            region=team.home_region, gpu_type=stream.gpu_type, submit_s=submit, run_s=run,
            outcome=outcome, patience_s=patience, nodes=1, gpus=gpus,
            gpu_milli=np.where(size == 2, 500, 1000), node_milli=(gpus * 1000).astype(np.int64),
            requested_runtime_s=rng.choice(SESSION_LIMIT_S, size=n).astype(float)))
    return pd.concat(frames, ignore_index=True)


@lru_cache(maxsize=None)
def _replica_windows_s(replicas: int) -> tuple[np.ndarray, np.ndarray]:
    """(local second of day each replica starts, seconds it runs) for replicas 1..n.

    Demand follows a cosine over the day, lowest at 04:00 and highest at 16:00 local time;
    replica k runs while demand exceeds k - 0.5 replicas.
    """
    k = np.arange(1, replicas + 1)
    theta = np.arccos(np.clip(1 - 2 * (k - 0.5) / replicas, -1, 1))   # phase where demand reaches k
    on_h = 4 + 24 * theta / (2 * np.pi)
    off_h = 4 + 24 * (2 * np.pi - theta) / (2 * np.pi)
    return (on_h * HOUR_S).astype(np.int64), ((off_h - on_h) * HOUR_S).astype(np.int64)


def inference(parent: np.random.Generator, scale: float) -> pd.DataFrame:
    """Guaranteed replicas for the whole window plus daily scale-out replicas following local daytime."""
    frames = []
    for svc, rng in zip(SERVICES, parent.spawn(len(SERVICES))):
        team = TEAM_BY_NAME[svc.team]
        tz = REGION_BY_NAME[svc.region].timezone
        common = dict(workload_class="inference", team=team.name, user_name=f"{team.name}-svc",
                      project=f"{team.name}/{svc.name}", region=svc.region, gpu_type=svc.gpu_type,
                      residency=svc.residency, data_location=svc.region)
        nodes, milli = (svc.replica_milli // 8000, 8000) if svc.replica_milli >= 8000 else (1, svc.replica_milli)
        shape = dict(nodes=nodes, gpus=nodes * milli / 1000, gpu_milli=min(milli, 1000), node_milli=milli)
        n_base = max(1, int(round(svc.guaranteed * scale)))
        frames.append(spec_frame(
            n_base, priority=100.0, qos="guaranteed", queue="serve", submit_s=WINDOW_START_S + np.arange(n_base),
            run_s=2 * (WINDOW_END_S - WINDOW_START_S), outcome="completed", patience_s=-1, **common, **shape))
        peak = max(1, int(round(svc.peak_extra * scale)))
        submits, runs = [], []
        week = working_weekdays(team.working_days)
        for day, midnight in local_days(tz):
            top = peak if day.weekday() in week else max(1, int(round(peak * WEEKEND_DEMAND)))
            on_s, length_s = _replica_windows_s(top)
            jitter = rng.integers(-1200, 1201, size=(2, top))
            submits.append(midnight + on_s + jitter[0])
            runs.append(np.maximum(600, length_s + jitter[1]))
        submit, full = np.concatenate(submits), np.concatenate(runs)
        keep = (submit >= WINDOW_START_S) & (submit < WINDOW_END_S)
        submit, full = submit[keep], full[keep]
        outcome, run, _ = outcomes(rng, full, 0.03, 0.0)
        patience = np.full(len(submit), SCALE_OUT_TIMEOUT_S, dtype=np.int64)
        frames.append(spec_frame(
            len(submit), priority=90.0, qos="burstable", queue="serve", submit_s=submit, run_s=run,
            outcome=outcome, patience_s=patience, requested_runtime_s=float(24 * HOUR_S), **common, **shape))
    return pd.concat(frames, ignore_index=True)
