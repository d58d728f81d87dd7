"""Fairness and service levels of a `SimulationResult`: shares against entitlements, waits against
queue SLAs, deadlines, starvation and preemption.

Times are seconds from the run's time 0. The window is [0, W], W = `SimulationResult.window_s`, or
the makespan without one (as `engine.analysis.runs.sim_metrics` measures utilisation). A job's wait is
its wait before its first start; for a job that never started, the time from its submit to W (0
if submitted after W), so a job still waiting at the window's end counts as late once that exceeds
the threshold. Runs without the jobs' queue, deadline_s, preemptions or lost_gpu_hours columns, or
without a teams or queue_classes table (older results, hand-built ones), read as: no queue class,
no deadline, no preemption, every team of weight 1.

Per team t (teams table: weight w_t, entitlement, nominal_gpus; weight 1 for a team missing from it
or without one, entitlement w_t / sum of the weights then):
  H_t  GPU-hours held inside the window: GPUs x time over the pieces of `SimulationResult.held()`
       (allocation, as utilisation counts it: failed work and work later lost to preemption included;
       a requeued job holds nothing while it waits again).
  D_t, F_t  demand and fair share over time, per region, sampled at the midpoints m of K equal
       steps of the window (steps of at most 10 minutes, at least 240 steps): at m, team t in
       region r demands d = the GPUs of its jobs there that were submitted and had not ended
       (waiting or running: GPUs held, or asked for when never started), and its fair share is
       the weighted max-min (water-filling) split of the region's GPUs over those demands,
       f = min(d, w_t x L) with the sum of f = min(capacity, sum of d). D_t and F_t add d and f
       over regions and steps, x the step. Sampled the same way, h = GPUs the team held at m.
  Jain's index over the teams with F_t > 0: x_t = (sum of h) / F_t, (sum x)^2 / (n sum x^2), 1.0
  when n <= 1. 1.0 = every team held its fair share whenever it wanted GPUs; a team that waited
  while others held more than their share pulls it down.

Service levels, per job (queue classes: max_wait_s, starve_after_s, guaranteed):
  deadline hit: the job completed (not failed) with end_s <= deadline_s; rate over jobs with a
    finite deadline, 1.0 when none has one.
  SLA hit: started with wait <= max_wait_s of its queue; miss: wait > max_wait_s (a job that never
    started counts only once its wait to W exceeds it); attainment = hits / (hits + misses) over
    queues with a finite max_wait_s, 1.0 when no job is decided.
  guarantee violation: an SLA miss in a guaranteed queue (production inference capacity).
  starved: wait > starve_after_s of its queue.
preemptions and lost_gpu_hours are the jobs table's (times evicted; GPU-hours of work lost), over
the whole run.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.held import holding, horizon_s, remembered
from engine.analysis.runs.lookup import positions
from engine.core.codes import distinct_rows
from engine.core.intervals import integrate
from engine.sim.output.result import SimulationResult

HOUR_S = 3600.0
SAMPLE_S = 600.0  # fair shares are sampled at least every 10 minutes ...
MIN_SAMPLES = 240  # ... and at least this many times over the window
TEAM_COLUMNS = ["team", "weight", "entitlement", "nominal_gpus", "gpu_hours", "demand_gpu_hours", "fair_gpu_hours",
                "share", "jobs", "wait_mean_s", "wait_p95_s", "preemptions", "lost_gpu_hours", "starved_jobs",
                "deadline_hit_rate"]
QUEUE_COLUMNS = ["queue", "jobs", "max_wait_s", "attainment", "wait_p95_s", "preemptions"]
SHARE_COLUMNS = ["time_s", "team", "gpus", "share", "entitlement"]


def _column(jobs: pd.DataFrame, name: str, default, dtype) -> np.ndarray:
    """jobs[name] as a numpy array of `dtype`, or `default` for every job when the column is absent."""
    if name in jobs:
        return jobs[name].to_numpy(dtype)
    return np.full(len(jobs), default, dtype)


def _per_job(result: SimulationResult, horizon: float, pieces: pd.DataFrame) -> pd.DataFrame:
    """One row per job: team, queue, started, wait (so far, for jobs never started), completed,
    preemptions, lost_gpu_hours, held_gpu_s (inside the window), deadline_set,
    deadline_hit, sla_hit, sla_miss, violation, starved."""
    jobs = result.jobs
    submit = jobs["submit_s"].to_numpy(np.float64)
    started = jobs["started"].to_numpy(bool)
    end = jobs["end_s"].to_numpy(np.float64)
    finished = started & np.isfinite(end)
    completed = finished & ~jobs["failed"].to_numpy(bool)
    left = np.maximum(horizon - np.maximum(submit, 0.0), 0.0)
    waited = jobs["wait_s"].to_numpy(np.float64)  # also set for a job whose user gave up: until it left
    wait = np.where(started | np.isfinite(waited), waited, left)

    row = pieces["row"].to_numpy()
    held = np.bincount(row, weights=pieces["gpu_s"].to_numpy(np.float64), minlength=len(jobs))

    deadline = _column(jobs, "deadline_s", np.inf, np.float64)
    deadline_set = np.isfinite(deadline)
    queue = jobs["queue"].astype(str).array if "queue" in jobs else pd.array(np.full(len(jobs), "", object), dtype="str")
    max_wait, starve_after, guaranteed = _thresholds(result.queue_classes, queue)
    sla_hit = started & (wait <= max_wait) & np.isfinite(max_wait)
    sla_miss = wait > max_wait
    return pd.DataFrame({
        "team": jobs["team"].astype(str).array, "queue": queue, "started": started, "wait": wait,
        "completed": completed, "preemptions": _column(jobs, "preemptions", 0, np.int64),
        "lost_gpu_hours": _column(jobs, "lost_gpu_hours", 0.0, np.float64), "held_gpu_s": held,
        "deadline_set": deadline_set,
        "deadline_hit": deadline_set & completed & (end <= deadline), "sla_hit": sla_hit, "sla_miss": sla_miss,
        "violation": sla_miss & guaranteed, "starved": wait > starve_after})


def _thresholds(classes: pd.DataFrame | None, queue) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each job's max_wait_s, starve_after_s (inf: none) and guaranteed flag from its queue class."""
    n = len(queue)
    if classes is None or classes.empty:
        return np.full(n, np.inf), np.full(n, np.inf), np.zeros(n, bool)
    at = positions(pd.Index(classes["queue"].astype(str)), queue)
    known = at >= 0

    def pick(name: str, default, dtype) -> np.ndarray:
        values = classes[name].to_numpy(dtype)
        return np.where(known, values[np.maximum(at, 0)], default)

    return pick("max_wait_s", np.inf, np.float64), pick("starve_after_s", np.inf, np.float64), \
        pick("guaranteed", False, bool).astype(bool)


def _teams(result: SimulationResult, names) -> pd.DataFrame:
    """team, weight, entitlement, nominal_gpus for the run's teams and the teams table's, by name."""
    table = result.teams if result.teams is not None else pd.DataFrame(columns=["team"])
    # text even when there is no team (no job in the window): an empty list would make a float64 column
    teams = pd.array(sorted(set(map(str, names)) | set(table["team"].astype(str))), dtype="str")
    frame = pd.DataFrame({"team": teams}).merge(table.assign(team=table["team"].astype(str)), on="team", how="left")
    weight = pd.to_numeric(frame["weight"], errors="coerce") if "weight" in frame else pd.Series(np.nan, frame.index)
    weight = weight.where(weight > 0, 1.0).to_numpy(np.float64)
    given = frame["entitlement"].to_numpy(np.float64) if "entitlement" in frame else np.full(len(frame), np.nan)
    own = weight / weight.sum() if len(weight) else weight
    nominal = frame["nominal_gpus"].to_numpy(np.float64) if "nominal_gpus" in frame else np.full(len(frame), np.nan)
    return pd.DataFrame({"team": teams, "weight": weight, "entitlement": np.where(np.isnan(given), own, given),
                         "nominal_gpus": nominal})


def water_fill(total: float, demand: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Weighted max-min split of `total` capped by `demand`: min(demand, weight x L), summing to
    min(total, sum of demand)."""
    fair = np.zeros(len(demand))
    rest, weights = float(total), float(weight.sum())
    for i in np.argsort(demand / weight, kind="stable"):
        level = rest / weights if weights > 0 else 0.0
        fair[i] = min(demand[i], weight[i] * level)
        rest, weights = rest - fair[i], weights - weight[i]
    return fair


def jain_index(x: np.ndarray) -> float:
    """(sum x)^2 / (n sum x^2); 1.0 for no or one value, or when all are 0."""
    square = float((x * x).sum())
    return float(x.sum()) ** 2 / (len(x) * square) if len(x) > 1 and square > 0 else 1.0


def _rate(hits: np.ndarray, decided: np.ndarray) -> float:
    count = int(decided.sum())
    return float(hits[decided].sum()) / count if count else 1.0


def _jobs(result: SimulationResult) -> pd.DataFrame:
    """The per-job frame of `_per_job` over the run's window and pieces."""
    def compute():
        horizon = horizon_s(result)
        return _per_job(result, horizon, holding(result, horizon))
    return remembered(result, "jobs", compute)


def _teams_of(result: SimulationResult) -> pd.DataFrame:
    """`_team_table` of the run (with sampled_gpu_hours)."""
    return remembered(result, "teams", lambda: _team_table(result, _jobs(result)))


def _team_table(result: SimulationResult, per_job: pd.DataFrame) -> pd.DataFrame:
    teams = _teams(result, per_job["team"].unique())
    grouped = per_job.assign(wait_started=per_job["wait"].where(per_job["started"])).groupby("team", sort=True)
    sums = grouped.agg(jobs=("team", "size"), held=("held_gpu_s", "sum"),
                       wait_mean_s=("wait_started", "mean"), preemptions=("preemptions", "sum"),
                       lost_gpu_hours=("lost_gpu_hours", "sum"), starved_jobs=("starved", "sum"),
                       deadlines=("deadline_set", "sum"), deadline_hits=("deadline_hit", "sum"))
    sums["wait_p95_s"] = grouped["wait_started"].quantile(0.95)
    if per_job.empty:   # no job in the window: an empty grouping's index is float64, the teams' names text
        sums.index = pd.Index([], dtype="str", name="team")
    table = teams.merge(sums, left_on="team", right_index=True, how="left")
    table = table.fillna({c: 0 for c in ("jobs", "held", "wait_mean_s", "wait_p95_s", "preemptions",
                                         "lost_gpu_hours", "starved_jobs", "deadlines", "deadline_hits")})
    held = table["held"].to_numpy(np.float64)
    sampled, demand, fair = _over_time(result, teams)
    total = held.sum()
    deadlines = table["deadlines"].to_numpy(np.float64)
    return table.assign(
        gpu_hours=held / HOUR_S, demand_gpu_hours=demand / HOUR_S, fair_gpu_hours=fair / HOUR_S,
        sampled_gpu_hours=sampled / HOUR_S,
        share=held / total if total > 0 else 0.0,
        deadline_hit_rate=np.divide(table["deadline_hits"].to_numpy(np.float64), deadlines,
                                    out=np.ones(len(table)), where=deadlines > 0),
        jobs=table["jobs"].astype(np.int64), preemptions=table["preemptions"].astype(np.int64),
        starved_jobs=table["starved_jobs"].astype(np.int64))[TEAM_COLUMNS + ["sampled_gpu_hours"]].reset_index(drop=True)


def team_table(result: SimulationResult) -> pd.DataFrame:
    """One row per team (sorted): TEAM_COLUMNS. gpu_hours: held inside the window (H_t);
    demand_gpu_hours (D_t), fair_gpu_hours (F_t): see the module docstring; share: gpu_hours / all
    teams' gpu_hours; jobs: all the team's jobs; wait_mean_s, wait_p95_s: over its started jobs;
    deadline_hit_rate: 1.0 when none of its jobs has a deadline."""
    return _teams_of(result)[TEAM_COLUMNS]


def samples(horizon: float) -> np.ndarray:
    """Midpoints of the K equal steps the fair shares are sampled at (see the module docstring)."""
    if not horizon > 0:
        return np.zeros(0)
    k = max(MIN_SAMPLES, int(np.ceil(horizon / SAMPLE_S)))
    return (np.arange(k) + 0.5) * (horizon / k)


def _active(mids: np.ndarray, start: np.ndarray, end: np.ndarray, gpus: np.ndarray, team: np.ndarray,
            n_teams: int) -> np.ndarray:
    """(K, teams): GPUs of the intervals [start, end) covering each midpoint, per team."""
    diff = np.zeros((len(mids) + 1, n_teams))
    first = np.searchsorted(mids, start, side="left")
    last = np.searchsorted(mids, end, side="left")
    keep = last > first
    np.add.at(diff, (first[keep], team[keep]), gpus[keep])
    np.add.at(diff, (last[keep], team[keep]), -gpus[keep])
    return np.cumsum(diff, axis=0)[:-1]


def water_fill_rows(capacity: float, demand: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """`water_fill` of `capacity` over every row of `demand` (K, teams) at once, by bisection on
    the water level (to float precision). The demand changes only when a job arrives or ends, and
    few demands recur over and over: each distinct row (bit for bit) is filled once (a row's fill
    depends on the row alone and on the largest demand over weight, which the distinct rows keep);
    consecutive repeats are dropped first, as they are cheapest to find."""
    demand = np.ascontiguousarray(demand, dtype=np.float64)
    bits = demand.view(np.int64)
    first = np.ones(len(demand), bool)
    first[1:] = (bits[1:] != bits[:-1]).any(axis=1)
    rows, again = distinct_rows(bits[first])
    distinct = rows.view(np.float64)
    total = np.minimum(capacity, distinct.sum(axis=1))
    low = np.zeros(len(distinct))
    high = np.full(len(distinct), float((distinct / weight).max(initial=0.0)))
    for _ in range(64):
        level = (low + high) / 2
        over = np.minimum(distinct, weight * level[:, None]).sum(axis=1) >= total
        high, low = np.where(over, level, high), np.where(over, low, level)
    return np.minimum(distinct, weight * high[:, None])[again[np.cumsum(first) - 1]]


def _over_time(result: SimulationResult, teams: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """Per team (teams' order): GPU-seconds held, demanded and fair, sampled over the window."""
    horizon = horizon_s(result)
    mids = samples(horizon)
    n = len(teams)
    held, demand, fair = np.zeros(n), np.zeros(n), np.zeros(n)
    if not len(mids) or not n:
        return held, demand, fair
    step = horizon / len(mids)
    names = pd.Index(teams["team"].astype(str))
    weight = teams["weight"].to_numpy(np.float64)
    jobs, pieces = result.jobs, result.held()
    job_team = positions(names, jobs["team"].astype(str))
    piece_team = positions(names, pieces["team"].astype(str))
    started = jobs["started"].to_numpy(bool)
    asked = np.where(started, jobs["gpus_allocated"].to_numpy(np.float64), jobs["gpus"].to_numpy(np.float64))
    job_end = jobs["end_s"].fillna(np.inf).to_numpy(np.float64)
    piece_end = pieces["end_s"].fillna(np.inf).to_numpy(np.float64)
    job_region, piece_region = jobs["region"].astype(str), pieces["region"].astype(str)
    for region, capacity in result.capacity_gpus.items():
        mine, theirs = (job_region == region).to_numpy(bool), (piece_region == region).to_numpy(bool)
        d = _active(mids, jobs["submit_s"].to_numpy(np.float64)[mine], job_end[mine], asked[mine], job_team[mine], n)
        h = _active(mids, pieces["start_s"].to_numpy(np.float64)[theirs], piece_end[theirs],
                    pieces["gpus_allocated"].to_numpy(np.float64)[theirs], piece_team[theirs], n)
        held += h.sum(axis=0) * step
        demand += d.sum(axis=0) * step
        fair += water_fill_rows(float(capacity), d, weight).sum(axis=0) * step
    return held, demand, fair


def fairness_kpis(result: SimulationResult) -> dict[str, float]:
    """jain_index, deadline_hit_rate, inference_guarantee_violations (jobs), max_wait_sla_attainment
    (0-1), max_wait_sla_misses (jobs of queues with a maximum wait that waited past it: production
    SLA violations), preemptions (evictions), lost_gpu_hours, starved_jobs (jobs); see the module docstring."""
    per_job = _jobs(result)
    teams = _teams_of(result)
    fair = teams["fair_gpu_hours"].to_numpy(np.float64)
    asking = fair > 0
    x = teams["sampled_gpu_hours"].to_numpy(np.float64)[asking] / fair[asking]
    sla_hit, sla_miss = per_job["sla_hit"].to_numpy(bool), per_job["sla_miss"].to_numpy(bool)
    return {"jain_index": jain_index(x),
            "deadline_hit_rate": _rate(per_job["deadline_hit"].to_numpy(bool), per_job["deadline_set"].to_numpy(bool)),
            "inference_guarantee_violations": int(per_job["violation"].sum()),
            "max_wait_sla_attainment": _rate(sla_hit, sla_hit | sla_miss),
            "max_wait_sla_misses": int(sla_miss.sum()),
            "preemptions": int(per_job["preemptions"].sum()),
            "lost_gpu_hours": float(per_job["lost_gpu_hours"].sum()),
            "starved_jobs": int(per_job["starved"].sum())}


def share_over_time(result: SimulationResult, step_s: float = 3600.0) -> pd.DataFrame:
    """SHARE_COLUMNS, long format, a row per step of `step_s` seconds from 0 to W and team (sorted):
    time_s (the step's start), gpus (mean GPUs the team held in the step), share (of all GPUs held in
    the step; 0 when none), entitlement (the team's, constant). Empty without a window."""
    if not step_s > 0:
        raise ValueError(f"step_s must be positive, got {step_s!r}")
    horizon = horizon_s(result)
    if not horizon > 0:
        return pd.DataFrame(columns=SHARE_COLUMNS)
    pieces = holding(result, horizon)
    teams = _teams(result, result.jobs["team"].unique())
    edges = np.append(np.arange(0.0, horizon, step_s), horizon)
    start = np.clip(pieces["start_s"].to_numpy(np.float64), 0.0, horizon)
    end = np.clip(pieces["end_s"].fillna(horizon).to_numpy(np.float64), 0.0, horizon)
    gpus, owner = pieces["gpus_allocated"].to_numpy(np.float64), pieces["team"].astype(str).to_numpy(object)
    mean = np.array([integrate(start[owner == team], end[owner == team], gpus[owner == team], edges)
                     for team in teams["team"]]).reshape(len(teams), len(edges) - 1) / np.diff(edges)
    total = mean.sum(axis=0)
    share = np.divide(mean, total, out=np.zeros_like(mean), where=total > 0)
    return pd.DataFrame({"time_s": np.tile(edges[:-1], len(teams)),
                         "team": np.repeat(teams["team"].to_numpy(object), len(edges) - 1),
                         "gpus": mean.ravel(), "share": share.ravel(),
                         "entitlement": np.repeat(teams["entitlement"].to_numpy(np.float64), len(edges) - 1)})


def starvation_by_team(result: SimulationResult) -> pd.DataFrame:
    """team (sorted), starved_jobs, longest_wait_s (the longest wait of its jobs, a job never started
    waiting to the window's end)."""
    per_job = _jobs(result)
    table = per_job.groupby("team", sort=True).agg(starved_jobs=("starved", "sum"), longest_wait_s=("wait", "max"))
    return table.reset_index().astype({"starved_jobs": np.int64})


def queue_sla_table(result: SimulationResult) -> pd.DataFrame:
    """One row per queue class (the queue_classes table's order, then queues only the jobs name):
    QUEUE_COLUMNS. jobs: all its jobs; attainment: SLA hits / decided jobs (1.0 when none or no
    max_wait_s); wait_p95_s: over its started jobs; preemptions: evictions of its jobs. Empty when
    the run has neither queue classes nor a queue per job."""
    classes = result.queue_classes
    if "queue" not in result.jobs and classes is None:
        return pd.DataFrame(columns=QUEUE_COLUMNS)
    per_job = _jobs(result)
    listed = [] if classes is None else classes["queue"].astype(str).tolist()
    names = listed + sorted(set(per_job["queue"].unique()) - set(listed)) if "queue" in result.jobs else listed
    frame = per_job.assign(decided=per_job["sla_hit"] | per_job["sla_miss"],
                           wait_started=per_job["wait"].where(per_job["started"]))
    grouped = frame.groupby("queue", sort=False)
    sums = grouped.agg(jobs=("queue", "size"), hits=("sla_hit", "sum"), decided=("decided", "sum"),
                       preemptions=("preemptions", "sum"))
    sums["wait_p95_s"] = grouped["wait_started"].quantile(0.95)
    if per_job.empty:   # no job in the window: an empty grouping's index is float64, the teams' names text
        sums.index = pd.Index([], dtype="str", name="team")
    table = pd.DataFrame({"queue": names}).merge(sums, left_on="queue", right_index=True, how="left")
    table = table.fillna({"jobs": 0, "hits": 0, "decided": 0, "preemptions": 0, "wait_p95_s": 0.0})
    max_wait = _thresholds(classes, table["queue"].to_numpy(object))[0]
    decided = table["decided"].to_numpy(np.float64)
    return table.assign(
        jobs=table["jobs"].astype(np.int64), max_wait_s=max_wait, preemptions=table["preemptions"].astype(np.int64),
        attainment=np.divide(table["hits"].to_numpy(np.float64), decided, out=np.ones(len(table)),
                             where=decided > 0))[QUEUE_COLUMNS]


def longest_waiting(result: SimulationResult, team: str | None = None, limit: int = 200) -> pd.DataFrame:
    """row, job_id, team, wait_s (before the first start; to W when never started), longest first
    (then by job id), of `team`'s jobs (every job when None), at most `limit`."""
    jobs = result.jobs
    horizon = horizon_s(result)
    submit = jobs["submit_s"].to_numpy(np.float64)
    wait = np.where(jobs["started"].to_numpy(bool), jobs["wait_s"].to_numpy(np.float64),
                    np.maximum(horizon - np.maximum(submit, 0.0), 0.0))
    table = pd.DataFrame({"row": np.arange(len(jobs)), "job_id": jobs["job_id"].astype(str).to_numpy(object),
                          "team": jobs["team"].astype(str).to_numpy(object), "wait_s": wait})
    if team is not None:
        table = table[table["team"] == team]
    table = table.sort_values(["wait_s", "job_id"], ascending=[False, True], kind="stable")
    return table.head(limit).reset_index(drop=True)
