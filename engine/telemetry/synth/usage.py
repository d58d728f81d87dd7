"""Measured GPU use of each job, as a GPU exporter sampling every five minutes would record it.

Two columns of the jobs file (see sample_data/README.md): `gpu_util_pct`, the mean utilisation of
the job's GPUs over its run (percent, 0-100), and `gpus_used_max`, the most GPUs busy at once.
Each job uses `gpus_used_max` of its GPUs at a mean utilisation u while it runs, so

    gpu_util_pct = 100 x gpus_used_max / gpus x u        (rounded to 0.1)

and the mean-equivalent GPUs in use (gpus x gpu_util_pct / 100) never exceed the peak. u is drawn
per job from a beta distribution of its class; the peak is the job's GPUs except for the habits
right-sizing is about:

- training: a few multi-node gangs whose launcher started workers on the first node only (peak =
  one node's GPUs); the others use every GPU, busily;
- batch: many multi-GPU jobs run single-GPU code (peak 1);
- development: notebooks are mostly idle; some sessions never touch the GPU (peak 0), and most
  two-GPU sessions use one;
- hpo: one-GPU trials, busy; inference: every GPU of a replica, at moderate load (scale-out
  replicas, started when demand is high, busier than the guaranteed ones).

Jobs that never started, or ran less than one sampling interval, have no measurement (NaN).
Values come from their own random stream (`USAGE_STREAM`), drawn after the replay, so every
other column of the sample is the same with or without them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.telemetry.synth.clock import WINDOW_END_S

SAMPLE_S = 300          # the exporter's sampling interval, seconds
USAGE_STREAM = 1000     # np.random.default_rng([seed, USAGE_STREAM]); the job streams use [seed, 0..4]
# class -> (a, b) of the beta distribution of u, the mean utilisation of the GPUs a job uses
UTILISATION_BETA = {"training": (9.0, 2.0), "hpo": (6.0, 3.0), "batch": (4.0, 3.0),
                    "development": (1.3, 6.0), "inference": (6.0, 4.0)}
GUARANTEED_BETA = (4.0, 5.0)          # guaranteed inference replicas: busy only at peak demand
ONE_NODE_GANG_SHARE = 0.08            # multi-node training gangs that use their first node only
SINGLE_GPU_BATCH_SHARE = 0.35         # multi-GPU batch jobs whose code uses one GPU
IDLE_SESSION_SHARE = 0.10             # development sessions that never touch the GPU
ONE_OF_TWO_SESSION_SHARE = 0.55       # two-GPU development sessions that use one


def job_usage(rng: np.random.Generator, specs: pd.DataFrame, start_s: np.ndarray,
              end_s: np.ndarray) -> dict[str, np.ndarray]:
    """{"gpu_util_pct", "gpus_used_max"} per job (NaN without a measurement).

    start_s, end_s: the replay's times (-1: none; a running job is measured up to the window's end).
    """
    n = len(specs)
    kind = specs["workload_class"].to_numpy(dtype=object)
    gpus = specs["gpus"].to_numpy(dtype=float)
    nodes = specs["nodes"].to_numpy(dtype=float)
    a, b = np.ones(n), np.ones(n)
    for name, (alpha, beta) in UTILISATION_BETA.items():
        a[kind == name], b[kind == name] = alpha, beta
    guaranteed = (specs["qos"] == "guaranteed").to_numpy()
    a[guaranteed], b[guaranteed] = GUARANTEED_BETA
    u = rng.beta(a, b)
    habit = rng.random(n)

    peak = gpus.copy()
    one_node = (kind == "training") & (nodes > 1) & (habit < ONE_NODE_GANG_SHARE)
    peak[one_node] = gpus[one_node] / nodes[one_node]
    peak[(kind == "batch") & (gpus >= 2) & (habit < SINGLE_GPU_BATCH_SHARE)] = 1.0
    development = kind == "development"
    peak[development & (gpus == 2) & (habit < ONE_OF_TWO_SESSION_SHARE)] = 1.0
    peak[development & (habit >= 1 - IDLE_SESSION_SHARE)] = 0.0

    util = np.round(100.0 * peak / gpus * np.minimum(u, 0.98), 1)
    ran_s = np.where(end_s >= 0, end_s, WINDOW_END_S) - start_s
    measured = (start_s >= 0) & (ran_s >= SAMPLE_S)
    return {"gpu_util_pct": np.where(measured, util, np.nan), "gpus_used_max": np.where(measured, peak, np.nan)}
