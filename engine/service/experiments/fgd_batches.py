"""The FGD experiment (engine.service.experiments.fgd) with the pods arriving in batches: each batch
is one scheduling pass, placed together by a batch placement policy (the `batch` trait,
engine.policies.placement_batch) or pod by pod by any other. Same arrival order, inflation, node
order and target workload per seed as the per-pod experiment; the metrics of a batch's pods are
read after the whole batch.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.fleet_view import MILLI
from engine.core.fragmentation import TargetWorkload
from engine.core.traits import traits_of
from engine.policies.registry import make
from engine.service.experiments.fgd import (
    INFLATION,
    LEVELS,
    METRICS,
    SeedTrace,
    arrival_order,
    level_values,
    typical_target,
)
from engine.service.experiments.openb_inputs import PodList
from engine.sim.state.fleet_state import FleetState


def run_seed_batched(nodes: pd.DataFrame, pods: PodList, policy_key: str, seed: int, batch_pods: int,
                     inflation: float = INFLATION, target: TargetWorkload | None = None, **params) -> SeedTrace:
    """Place the arriving pods `batch_pods` at a time with placement policy `policy_key` (and `params`)."""
    rng = np.random.default_rng(seed)
    order = arrival_order(pods, int(nodes["gpu"].sum()) * MILLI, inflation, rng)
    state = FleetState.from_frame(nodes.iloc[rng.permutation(len(nodes))], target or typical_target(pods))
    policy, view, requests = make("placement", policy_key, **params), state.view(), pods.requests()
    batched = traits_of(policy).batch
    used, frag = np.zeros(len(order), np.int64), np.zeros(len(order), np.int64)
    placed = np.zeros(len(order), bool)
    allocated, index = 0, state.fragmentation
    for first in range(0, len(order), batch_pods):
        steps = range(first, min(first + batch_pods, len(order)))
        batch = [requests[order[s]] for s in steps]
        plan = policy.plan(view, batch, rng) if batched else None
        for k, step in enumerate(steps):
            request = batch[k]
            placement = plan[k] if plan is not None else policy.choose(view, request, rng)
            if placement is not None:
                state.allocate(placement, request)
                allocated += request.total_gpu_milli
                placed[step] = True
        used[steps.start:steps.stop], frag[steps.start:steps.stop] = allocated, index.weighted.sum()
    arrived = np.cumsum(pods.total_gpu_milli[order])
    return SeedTrace(arrived, used, frag / index.total_weight, placed)


def batched_means(nodes: pd.DataFrame, pods: PodList, policy_key: str, seeds, batch_pods: int,
                  **params) -> dict[str, dict[int, float]]:
    """Seed means of the experiment's metrics at each arrived level (LEVELS)."""
    target, gpus = typical_target(pods), int(nodes["gpu"].sum())
    per_seed = [level_values(run_seed_batched(nodes, pods, policy_key, seed, batch_pods, target=target, **params),
                             gpus) for seed in seeds]
    return {m: {k: round(float(np.mean([s[m][k] for s in per_seed if k in s[m]])), 2)
                for k in LEVELS if any(k in s[m] for s in per_seed)} for m in METRICS}
