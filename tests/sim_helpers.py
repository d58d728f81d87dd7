"""Tiny hand-built workloads and fleets for the simulator tests."""
from __future__ import annotations

import signal
from contextlib import contextmanager

import numpy as np
import pandas as pd

from engine.policies import registry
from engine.policies.bundle import Policies
from engine.scenario.spec import Scenario
from engine.sim.simulator import simulate
from engine.sim.state.workload import build_workload

T0 = pd.Timestamp("2026-01-01")


def job(i, submit, run, gpus, requested=None, *, nodes=1, gpu_type="A", gpu_milli=None, status="completed",
        region="r", workload_class="training", team="t"):
    """One jobs-table row: submitted at T0 + submit s, ran `run` s, asked for `requested` s (default run)."""
    return dict(job_id=f"j{i}", submit_utc=T0 + pd.Timedelta(seconds=submit), start_utc=T0,
                end_utc=T0 + pd.Timedelta(seconds=run), gpus=gpus, gpu_milli=gpu_milli, gpu_type=gpu_type,
                nodes=nodes, cpus=1, memory_gib=1, region=region, status=status,
                requested_runtime_s=run if requested is None else requested, priority=0, deadline_utc=None,
                workload_class=workload_class, team=team)


def fleet(*gpus_per_node, gpu_type="A", region="r"):
    """One node per argument, with that many GPUs of `gpu_type` (a list of types is allowed)."""
    types = gpu_type if isinstance(gpu_type, (list, tuple)) else [gpu_type] * len(gpus_per_node)
    return pd.DataFrame([dict(region=region, cluster="c", node=f"n{i}", gpu_type=t, gpus=g, cpus=64,
                              memory_gib=512, rack="k0", tier="reserved")
                         for i, (g, t) in enumerate(zip(gpus_per_node, types))])


def run(jobs, nodes, order="fcfs", placement="first-fit", backfill="none", admission=("accept-all", {}), seed=0):
    policies = Policies(registry.make("order", order), registry.make("placement", placement),
                        registry.make("backfill", backfill), registry.make("admission", admission[0], **admission[1]))
    return simulate(build_workload(pd.DataFrame(jobs), nodes), policies, seed)


def starts(result) -> list[float]:
    return [None if pd.isna(s) else float(s) for s in result.jobs["start_s"]]


def scenario(**policies) -> Scenario:
    return Scenario.from_dict({"name": "t", "policies": {k: {"key": v} for k, v in policies.items()}})


def sweep(starts, ends, amounts) -> float:
    """The largest sum of `amounts` over intervals [start, end) alive at any instant."""
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([amounts, -np.asarray(amounts)])
    order = np.lexsort((deltas, times))  # at equal times, ends (negative) before starts
    return float(np.cumsum(deltas[order]).max(initial=0.0))


def outage_table(region: str, start_s: float, length_s: float) -> list[dict]:
    """A scenario's `outage` table: `region` down from T0 + start_s for length_s seconds."""
    return [{"region": region, "start_utc": str(T0 + pd.Timedelta(seconds=start_s)),
             "end_utc": str(T0 + pd.Timedelta(seconds=start_s + length_s))}]


@contextmanager
def deadline(seconds: int = 60):
    """Fail instead of hanging: the runs inside must end within `seconds` (SIGALRM)."""
    def expired(*_):
        raise TimeoutError("the simulation did not end")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
