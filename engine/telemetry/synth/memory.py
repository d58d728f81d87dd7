"""Measured host memory of each job: `memory_used_gib_max`, the most it held at once (GiB, over its nodes).

A job asks for its GPUs' share of a node's memory (`memory_gib`: GPUs x the GPU type's GiB per GPU,
engine.telemetry.synth.world.GPU_SPEC). What it uses is that request x a share

    share = min(1, v x (FLOOR + (1 - FLOOR) x gpus_used_max / gpus) x habit(user))

v is drawn per job from a beta distribution of its class (training holds big batches and pinned
buffers, development notebooks little); the middle factor ties memory to the GPUs the job drives
(input pipelines and host copies per GPU, with a floor for what any process holds); habit is a
per-user factor (lognormal, median 1: some users' code is heavier than others'), so a user's past
jobs tell something about the next one, as they do in real logs. Rounded to 0.1 GiB, at most the
request (the request is enforced: a job over it would have been killed, which the sample does not
record).

Measured where the GPU use is (engine.telemetry.synth.usage: the job ran at least one sampling
interval), NaN elsewhere. Values come from their own random stream (`MEMORY_STREAM`), drawn after
the GPU use, so every other column of the sample is the same with or without them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

MEMORY_STREAM = 1001    # np.random.default_rng([seed, MEMORY_STREAM]); usage.USAGE_STREAM is 1000
# class -> (a, b) of the beta distribution of v, the share of the request a job's work holds
MEMORY_BETA = {"training": (6.0, 4.0), "hpo": (3.0, 5.0), "batch": (2.5, 4.0),
               "development": (1.5, 8.0), "inference": (4.0, 6.0)}
FLOOR = 0.25            # of v held however few GPUs the job drives
HABIT_SIGMA = 0.3       # log-sd of the per-user factor


def job_memory(rng: np.random.Generator, specs: pd.DataFrame, requested_gib: np.ndarray,
               gpus_used_max: np.ndarray) -> np.ndarray:
    """memory_used_gib_max per job (NaN where `gpus_used_max` is: not measured)."""
    n = len(specs)
    kind = specs["workload_class"].to_numpy(dtype=object)
    a, b = np.ones(n), np.ones(n)
    for name, (alpha, beta) in MEMORY_BETA.items():
        a[kind == name], b[kind == name] = alpha, beta
    v = rng.beta(a, b)
    users, user = np.unique(specs["user_name"].to_numpy(dtype=str), return_inverse=True)
    habit = rng.lognormal(0.0, HABIT_SIGMA, len(users))[user]
    gpus = specs["gpus"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        driven = np.where(gpus > 0, np.nan_to_num(gpus_used_max) / gpus, 1.0)
    share = np.minimum(1.0, v * (FLOOR + (1.0 - FLOOR) * driven) * habit)
    return np.where(np.isfinite(gpus_used_max), np.round(requested_gib * share, 1), np.nan)
