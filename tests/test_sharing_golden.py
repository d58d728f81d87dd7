"""Golden scenario (issue 5, item 11): FIFO against priority + fair share + backfilling, and against
quotas + preemption, on the bundled sample data.

fifo.toml (FCFS, first-fit, no backfilling), priority-fairshare.toml (Slurm multifactor priority
with fair share, EASY backfilling, best-fit, a pass every 10 minutes) and quotas-preemption.toml (the
same with Kueue quotas, reclaim and priority preemption) run over the sample's first 7 days (the
What-if page's default window; 7,421 jobs) with the sample's regions, prices and carbon tables,
and, marked slow, over the whole sample (92,340 jobs). The figures are pinned as measured (the
simulator is deterministic): production SLA violations (inference_guarantee_violations: reserved
queue jobs that waited past its 60 s; express-queue jobs that waited past its 15 minutes),
utilisation, Jain's index, deadline hit rate, max-wait SLA attainment, preemptions, lost GPU-hours,
starved jobs, and the p95 wait of development and inference jobs. The qualitative claims that
hold are asserted too. Runtime on the shared 2-core machine: the 7-day test about 16 s (fifo 1.5 s,
priority-fairshare 4.9 s, quotas-preemption 6.4 s of simulation, 2 s loading the sample); the
whole-sample test about 3 minutes (12 s, 59 s and about 90 s).
"""
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from engine.analysis.runs.fairness import queue_sla_table
from engine.analysis.runs.held import horizon_s
from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
NAMES = ("fifo", "priority-fairshare", "quotas-preemption")
FIGURES = ("utilization", "jain_index", "deadline_hit_rate", "inference_guarantee_violations",
           "max_wait_sla_attainment", "preemptions", "lost_gpu_hours", "starved_jobs", "express_misses",
           "development_wait_p95_s", "inference_wait_p95_s")
COUNTS = {"inference_guarantee_violations", "preemptions", "starved_jobs", "express_misses"}

# Measured on commit 57749f2 (multifactor recalc_s 300 s), re-checked at 24b87fb (2026-11-30); quotas-preemption
# re-measured when a small parked job stopped waiting behind a larger one parked before it (2026-11-30). All
# re-measured on 2026-12-02, when users began to give up on the jobs the telemetry cancelled before they
# started (engine.sim.cycle.patience) and the 7 days began to be measured over their own 168 h (fifo's week:
# utilisation 28.9 % -> 45.5 %); every claim below still holds. priority-fairshare re-measured on 2026-12-03,
# when the dynamic queue path stopped skipping a backfill that EASY allows after a new arrival becomes the head
# (issue 21: 7,919 of 92,340 starts moved over the whole sample).
WEEK = {
    "fifo": dict(utilization=0.4545303199404762, jain_index=0.9894192644096645, deadline_hit_rate=0.9120879120879121,
                 inference_guarantee_violations=0, max_wait_sla_attainment=0.9497501013102796, preemptions=0,
                 lost_gpu_hours=0.0, starved_jobs=159, express_misses=372, development_wait_p95_s=22911.5,
                 inference_wait_p95_s=23034.799999999956),
    "priority-fairshare": dict(utilization=0.4592438960537919, jain_index=0.9942792043193063,
                               deadline_hit_rate=0.9178440607012036, inference_guarantee_violations=0,
                               max_wait_sla_attainment=0.9944632005401756, preemptions=0, lost_gpu_hours=0.0,
                               starved_jobs=0, express_misses=40, development_wait_p95_s=162.5,
                               inference_wait_p95_s=0.0),
    "quotas-preemption": dict(utilization=0.46018455261944846, jain_index=0.9943446812851061,
                              deadline_hit_rate=0.9178440607012036, inference_guarantee_violations=0,
                              max_wait_sla_attainment=0.9941938968403997, preemptions=137,
                              lost_gpu_hours=113.07333333333332, starved_jobs=1, express_misses=42,
                              development_wait_p95_s=0.0, inference_wait_p95_s=0.0),
}
WHOLE = {
    "fifo": dict(utilization=0.5978504549477014, jain_index=0.9214693786796767, deadline_hit_rate=0.8283493087150493,
                 inference_guarantee_violations=0, max_wait_sla_attainment=0.8649328859060402, preemptions=0,
                 lost_gpu_hours=0.0, starved_jobs=5728, express_misses=7976,
                 development_wait_p95_s=134701.74999999977, inference_wait_p95_s=113103.79999999987),
    "priority-fairshare": dict(utilization=0.6057696248320817, jain_index=0.9689453676795108,
                               deadline_hit_rate=0.9141746543575247, inference_guarantee_violations=0,
                               max_wait_sla_attainment=0.9875812227216823, preemptions=0, lost_gpu_hours=0.0,
                               starved_jobs=62, express_misses=714, development_wait_p95_s=1647.149999999995,
                               inference_wait_p95_s=0.0),
    "quotas-preemption": dict(utilization=0.606126891816413, jain_index=0.9669738480045473,
                              deadline_hit_rate=0.9149697424797915, inference_guarantee_violations=0,
                              max_wait_sla_attainment=0.9872989268844823, preemptions=2484,
                              lost_gpu_hours=2542.9683333333332, starved_jobs=62, express_misses=697,
                              development_wait_p95_s=1555.4999999999836, inference_wait_p95_s=0.0),
}


def figures(result) -> dict:
    """The golden figures of one run (see the module docstring)."""
    k = kpis(result)
    jobs = result.jobs
    express = jobs[jobs["queue"] == "express"]
    max_wait = float(queue_sla_table(result).set_index("queue").loc["express", "max_wait_s"])
    wait = express["wait_s"].where(express["started"], (horizon_s(result) - express["submit_s"]).clip(lower=0.0))
    p95 = jobs.groupby("workload_class")["wait_s"].quantile(0.95)
    return {**{name: k[name] for name in FIGURES if name in k}, "express_misses": int((wait > max_wait).sum()),
            "development_wait_p95_s": float(p95["development"]), "inference_wait_p95_s": float(p95["inference"])}


def run_all(sample_tables, window: dict) -> dict:
    jobs, fleet, world = sample_tables
    return {name: figures(run_scenario(replace(Scenario.load(SCENARIOS / f"{name}.toml"), **window), jobs, fleet, world))
            for name in NAMES}


def check(measured: dict, pinned: dict) -> None:
    for name in NAMES:
        for figure in FIGURES:
            want = pinned[name][figure]
            got = measured[name][figure]
            if figure in COUNTS:
                assert got == want, (name, figure)
            else:
                assert got == pytest.approx(want, rel=1e-6, abs=1e-9), (name, figure)


def claims(f: dict) -> None:
    """What the golden scenario shows, beyond the pinned numbers."""
    fifo, fair, quotas = f["fifo"], f["priority-fairshare"], f["quotas-preemption"]
    for run in (fair, quotas):
        # priority + fair share + backfilling serves interactive and production work far sooner...
        assert run["development_wait_p95_s"] < fifo["development_wait_p95_s"] / 10
        assert run["inference_wait_p95_s"] < fifo["inference_wait_p95_s"] / 10
        assert run["express_misses"] < fifo["express_misses"] / 5
        # ...meets more wait SLAs and deadlines, starves fewer jobs...
        assert run["max_wait_sla_attainment"] > fifo["max_wait_sla_attainment"]
        assert run["deadline_hit_rate"] > fifo["deadline_hit_rate"]
        assert run["starved_jobs"] < fifo["starved_jobs"]
        # ...without losing utilisation or fairness between teams
        assert run["utilization"] >= fifo["utilization"] - 1e-9
        assert run["jain_index"] >= fifo["jain_index"] - 1e-9
    for run in f.values():
        assert run["inference_guarantee_violations"] == 0
    # only the preemption scenario evicts, and evictions lose work
    assert fifo["preemptions"] == fair["preemptions"] == 0 < quotas["preemptions"]
    assert fifo["lost_gpu_hours"] == fair["lost_gpu_hours"] == 0.0 < quotas["lost_gpu_hours"]


def test_golden_first_7_days(sample_tables):
    start = pd.Timestamp(sample_tables[0]["submit_utc"].min())
    measured = run_all(sample_tables, {"start_utc": start, "end_utc": start + pd.Timedelta(days=7)})
    check(measured, WEEK)
    claims(measured)


@pytest.mark.slow
def test_golden_whole_sample(sample_tables):
    measured = run_all(sample_tables, {})
    check(measured, WHOLE)
    claims(measured)
