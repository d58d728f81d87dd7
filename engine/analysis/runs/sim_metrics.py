"""KPIs of a `SimulationResult` (engine.sim.output.result), for the whole run and per group of jobs.

Utilisation is allocation-based: GPU-seconds held by jobs inside the measurement window / (fleet
GPUs x window), 0-1, summed over the pieces of running that `SimulationResult.held()` gives (one per
job, or one per segment when jobs were preempted and requeued: a job holds no GPUs while it waits
again, and each piece counts with the GPUs it ran on; a piece still running at the end holds its
GPUs to the window's end). The window runs from the first submit (time 0) to the input data's
observed end (`SimulationResult.window_s`, the span the Overview measures); idle GPU-hours are over
the same window. Without a window (window_s = 0) it ends at the last job end. `makespan_s` stays the
time of the last job end, which may lie past the window. Waits (before the first start) count
started jobs, job completion time (JCT = end - submit) finished jobs, both in seconds; jobs_not_run
counts the jobs that never started, jobs_gave_up those of them whose users withdrew them first. Bounded
slowdown per finished job is max(1, (wait + run) / max(run, tau_s)) with tau_s = 10 s by default.
Throughput is finished jobs per hour of makespan. Served GPU-hours: GPU-hours held inside the window
by the pieces of jobs that completed (not failed), less the work their preempted pieces lost (GPUs x
the last lost_s seconds before each eviction, clipped to the window). When every job completes,
served GPU-hours are set by the demand, not by the scheduler: how much more work a fleet serves at
the same service level is engine.service.headroom's load headroom. Latency SLO attainment: the share of
started inference jobs that ran within the SLO's
round-trip time of their home region. Cloud burst (engine.analysis.runs.burst): rented GPUs count as
capacity while up, so utilisation and idle GPU-hours include them; `burst_rentals` counts the
rentals and `burst_gpu_hours` the GPU-hours billed inside the window. Fragmentation (only when the
result carries its sampled table): the fleet's fragmented GPUs (FGD's fragmentation amount, summed
over regions) and their share of the idle GPUs, each sample holding until the next one,
time-weighted over the measurement window. Live follow-the-sun's moves (engine.analysis.runs.handoff, only
runs under [handoff]) count over the whole run. The fairness and service-level KPIs (engine.analysis.runs.fairness) join the dictionary `kpis`
returns.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs import burst
from engine.analysis.runs.chain_kpis import chain_kpis
from engine.analysis.runs.experiment_kpis import experiment_kpis
from engine.analysis.runs.fairness import fairness_kpis
from engine.analysis.runs.handoff import handoff_kpis
from engine.analysis.runs.held import finished_jobs, holding, window_end_s
from engine.analysis.runs.interconnect import interconnect_kpis
from engine.analysis.runs.partitions import partitions_kpis
from engine.analysis.runs.relaxation import relaxation_kpis
from engine.analysis.runs.rightsize import rightsize_kpis
from engine.sim.output.result import SimulationResult

DEFAULT_TAU_S = 10.0
GROUP_COLUMNS = ("jobs", "finished", "wait_mean_s", "wait_p50_s", "wait_p95_s", "wait_p99_s", "jct_mean_s",
                 "jct_p50_s", "jct_p95_s", "jct_p99_s", "avg_bounded_slowdown", "gpu_hours")


QUANTILES = (0.5, 0.95, 0.99)


def _stats(prefix: str, seconds: np.ndarray) -> dict[str, float]:
    """<prefix>_mean_s, _p50_s, _p95_s, _p99_s of `seconds` (0 for no values). The three quantiles come from
    one np.quantile call (one partition of the values), each the same value as its own call gives."""
    p50, p95, p99 = (float(q) for q in np.quantile(seconds, QUANTILES)) if len(seconds) else (0.0, 0.0, 0.0)
    return {f"{prefix}_mean_s": float(seconds.mean()) if len(seconds) else 0.0,
            f"{prefix}_p50_s": p50, f"{prefix}_p95_s": p95, f"{prefix}_p99_s": p99}


MEASURED = ("started", "submit_s", "end_s", "wait_s", "run_s")  # the jobs' columns _job_measures reads


def _job_measures(jobs: pd.DataFrame, pieces: pd.DataFrame, tau_s: float) -> dict[str, float]:
    """Wait, JCT and bounded slowdown statistics of `jobs`, and the GPU-hours and served GPU-hours
    their `pieces` (rows of `holding`) held inside the window."""
    finished = finished_jobs(jobs)
    wait, run = finished["wait_s"].to_numpy(np.float64), finished["run_s"].to_numpy(np.float64)
    end = finished["end_s"].to_numpy(np.float64)
    slowdown = np.maximum(1.0, (wait + run) / np.maximum(run, tau_s))
    return {**_stats("wait", jobs.loc[jobs["started"], "wait_s"].to_numpy(np.float64)),
            **_stats("jct", end - finished["submit_s"].to_numpy(np.float64)),
            "avg_bounded_slowdown": float(slowdown.mean()) if len(slowdown) else 0.0,
            "gpu_hours": float(pieces["gpu_s"].to_numpy(np.float64).sum()) / 3600.0,
            "served_gpu_hours": float(pieces["served_gpu_s"].to_numpy(np.float64).sum()) / 3600.0}


def kpis(result: SimulationResult, tau_s: float = DEFAULT_TAU_S) -> dict[str, float]:
    """The KPI dictionary `meridian simulate --json` prints; units in the names. utilization,
    idle_gpu_hours and the fragmentation KPIs are over the measurement window [0, window_s]; the
    rest over all started (waits) or finished jobs; then engine.analysis.runs.fairness.fairness_kpis.
    frag_gpus_mean and frag_gpu_pct_of_idle come next, present only when the result has a
    fragmentation table; the relaxation KPIs (engine.analysis.runs.relaxation), only when it has a
    relaxations table; the interconnect KPIs (engine.analysis.runs.interconnect), only when it has an
    interconnect table; the workflow KPIs (engine.analysis.runs.chain_kpis), only when it has chains; the experiments KPIs
    (engine.analysis.runs.experiment_kpis) last, only when its scenario generated experiments."""

    jobs = result.jobs
    finished = finished_jobs(jobs)
    makespan = float(finished["end_s"].max()) if len(finished) else 0.0
    horizon = window_end_s(result, finished)
    measures = _job_measures(jobs, holding(result, horizon), tau_s)
    busy_gpu_s = measures.pop("gpu_hours") * 3600.0
    served = measures.pop("served_gpu_hours")
    available_gpu_s = float(sum(result.capacity_gpus.values())) * horizon + burst.usable_gpu_s(result, horizon)
    failed = finished["failed"].to_numpy(bool)
    values = {
        "utilization": busy_gpu_s / available_gpu_s if available_gpu_s > 0 else 0.0,
        "idle_gpu_hours": (available_gpu_s - busy_gpu_s) / 3600.0,
        "served_gpu_hours": served,
        **measures,
        "makespan_s": makespan,
        "jobs_completed": int((~failed).sum()),
        "jobs_failed": int(failed.sum()),
        "jobs_not_run": int((~jobs["started"]).sum()),
        "jobs_gave_up": int((jobs["reason"] == "gave-up").sum()),
        "throughput_jobs_per_hour": len(finished) / (makespan / 3600.0) if makespan > 0 else 0.0,
        "latency_slo_attainment": latency_slo_attainment(result),
        "burst_rentals": len(rented) if (rented := burst.rentals(result)) is not None else 0,
        "burst_gpu_hours": float(burst.billed(result, horizon)["gpu_hours_paid"].sum()),
        **fairness_kpis(result),
    }
    if result.fragmentation is not None:
        values.update(fragmentation_kpis(result.fragmentation, horizon))
    values.update(relaxation_kpis(result))
    values.update(interconnect_kpis(result))
    values.update(handoff_kpis(result))
    values.update(chain_kpis(result))
    values.update(experiment_kpis(result))
    values.update(partitions_kpis(result))
    values.update(rightsize_kpis(result))
    return values


def latency_slo_attainment(result: SimulationResult) -> float:
    """Share of the started inference jobs served within the latency SLO of their users (in their
    home region): latency_ms <= result.latency_slo_ms; 1.0 when no inference job started."""
    jobs = result.jobs
    served = jobs[jobs["started"] & (jobs["workload_class"] == "inference")]
    if not len(served) or "latency_ms" not in served:
        return 1.0
    return float((served["latency_ms"].to_numpy(np.float64) <= result.latency_slo_ms).mean())


def fragmentation_kpis(samples: pd.DataFrame, horizon_s: float) -> dict[str, float]:
    """frag_gpus_mean (GPUs) and frag_gpu_pct_of_idle (fragmented GPUs / idle GPUs x 100, 0 while no
    GPU is idle), time-weighted means over [0, horizon_s] of the fleet's samples (time_s, region,
    idle_gpus, frag_gpus). At each sample time every region contributes its latest sample; a sample
    holds until the next one, the last until horizon_s. If that leaves no time (one instant, or
    no horizon), the plain mean over sample times. No samples: both 0."""
    if samples.empty:
        return {"frag_gpus_mean": 0.0, "frag_gpu_pct_of_idle": 0.0}
    times = np.unique(samples["time_s"].to_numpy(np.float64))
    idle, frag = np.zeros(len(times)), np.zeros(len(times))
    for _, rows in samples.groupby("region", sort=True):
        rows = rows.sort_values("time_s", kind="stable")
        at = np.searchsorted(rows["time_s"].to_numpy(np.float64), times, side="right") - 1
        seen = at >= 0
        idle[seen] += rows["idle_gpus"].to_numpy(np.float64)[at[seen]]
        frag[seen] += rows["frag_gpus"].to_numpy(np.float64)[at[seen]]
    pct = np.divide(100.0 * frag, idle, out=np.zeros(len(times)), where=idle > 0)
    ends = np.append(times[1:], max(horizon_s, times[-1]))
    weight = np.clip(ends, 0.0, horizon_s) - np.clip(times, 0.0, horizon_s)
    if weight.sum() <= 0:
        weight = np.ones(len(times))
    return {"frag_gpus_mean": float(np.average(frag, weights=weight)),
            "frag_gpu_pct_of_idle": float(np.average(pct, weights=weight))}


def by_group(result: SimulationResult, column: str = "workload_class",
             tau_s: float = DEFAULT_TAU_S) -> pd.DataFrame:
    """One row per value of `column` (workload_class or team), sorted by it: jobs (all), finished,
    wait_mean/p50/p95/p99_s (started jobs), jct_mean/p50/p95/p99_s and avg_bounded_slowdown
    (finished jobs), gpu_hours (GPUs allocated x time held inside the measurement window, over the
    group's pieces of running, hours; the groups' gpu_hours add up to the run's busy GPU-hours)."""
    jobs = result.jobs
    pieces = holding(result, window_end_s(result, finished_jobs(jobs)))
    code, keys = pd.factorize(jobs[column])  # each piece's group by its job's code: no text compared
    owner, at = code[pieces["row"].to_numpy()], {key: k for k, key in enumerate(keys)}
    held = pieces[["gpu_s", "served_gpu_s"]]  # the columns _job_measures reads: a group copies no text
    rows = [{column: key, "jobs": len(group), "finished": len(finished_jobs(group)),
             **_job_measures(group, held[owner == at[key]], tau_s)}
            for key, group in jobs[[column, *MEASURED]].groupby(column, sort=True)]
    return pd.DataFrame(rows, columns=[column, *GROUP_COLUMNS])


def wait_reasons(result: SimulationResult) -> pd.DataFrame:
    """How many jobs ended up with each reason (why they waited or never ran), most common first."""
    counts = result.jobs["reason"].value_counts()
    frame = counts.rename_axis("reason").reset_index(name="jobs")
    return frame.sort_values(["jobs", "reason"], ascending=[False, True], kind="stable").reset_index(drop=True)
