"""One job's story in a `SimulationResult`: why it waited, and when it started.

`job_story(result, row, context)` tells, for the job at position `row` of `result.jobs`:
- its timeline: submitted, every decision the simulator logged for it (a reason it waited, started,
  backfilled, preempted, degraded, deferred, failed, a soft constraint relaxed where it was routed), and
  its end;
- its wait, split by reason. The job waits from its submit to its first start, and again from every
  eviction ("preempted"), hand-off ("handed-off": checkpoint in transit and queued at its new region,
  charged to that decision) or out-of-memory restart under [rightsize] ("out-of-memory") to its next start.
  While it waits its reason is the last one logged, and
  "waiting-in-queue" (not yet at the front) after its submit or an eviction until another is logged;
  "deferred" while the timing policy holds it back. A job never started (rejected by admission, never
  fits) waits from its submit to the window's end W (engine.analysis.runs.fairness), under that reason;
- its simulated start: the answer to "when will it start" under the scenario (the simulator runs
  every admitted job to its end, so the start may lie after W);
- its queue class and that class's maximum-wait SLA, judged on the wait before its first start as
  engine.analysis.runs.fairness does: "met", "missed", "pending" (not started, within the SLA so far) or
  "none" (the class has no maximum wait);
- at its submit time, at each start, or at W when it never started (its `moments`): the order
  policy's priority factors (`factors(queue, now_s)`, sprio-like, when the order has them), and its
  place in the order among the jobs then waiting in its region ("jobs ahead").

The order is evaluated on the state rebuilt exactly from the result at that moment t:
- running per team in the job's region: the GPUs of the pieces (segments) with start < t < end (a
  piece ending at t has been released; one starting at t starts in the pass being explained);
- decayed usage per team, user and project, fleet-wide, as the ledger keeps it (engine.sim.state.ledger):
  U(t) = sum over the entity's pieces of g x integral over [start, min(end, t)] of 2^(-(t-u)/h) du
       = g h / ln 2 x (2^(-(t - min(end, t))/h) - 2^(-(t - start)/h)),
  h = the order's `half_life_s` (the ledger's default without one);
- the jobs waiting in the region at t: submitted at or before t, not turned away (rejected or never
  fits), not ended by t and not holding a piece over t (so a job requeued by an eviction waits again).
  Jobs held back by their quota are counted too, and a job whose start the timing policy deferred
  counts from its submit.
Team weights come from the result's teams table, queue tiers from its queue_classes table.
The factors and the order are computed at t itself. An order with `recalc_s` (multifactor priority:
Slurm's PriorityCalcPeriod) is keyed by the simulator at most every recalc_s, a newcomer when it is
first seen (engine.sim.cycle.order_cache): at a job's submit that is the same moment, at a later moment
the simulator's keys may be up to recalc_s older (a little less age, a little more usage decay).
`StoryContext` carries what the result does not record: the order policy, the run's seed (lottery),
team organisations (fair-tree), and per job the requested runtime (deadline urgency, WFQ costs), CPU
cores and GiB of memory (DRF), with the regions' CPU and memory capacity. Without them the requested
runtime counts as 0 and CPUs and memory as absent (DRF then weighs GPUs only).
All times are seconds from the run's time 0; GPU figures in GPUs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.analysis.runs.held import horizon_s
from engine.core.reasons import RELAXED_DECISIONS
from engine.core.traits import setting
from engine.core.views import QueueView, ShareView
from engine.policies.ordering import queue_order
from engine.sim.output.result import SimulationResult
from engine.sim.state.ledger import codes

LN2 = math.log(2.0)
TURNED_AWAY = ("rejected-by-admission", "rejected-by-forecast", "never-fits", "exceeds-quota")
START_DECISIONS = ("started", "backfilled")
QUEUED = "waiting-in-queue"
TIMELINE_COLUMNS = ["time_s", "event"]
REASON_COLUMNS = ["reason", "seconds", "share"]
FACTOR_COLUMNS = ["factor", "weight", "value", "weighted"]


@dataclass(frozen=True)
class StoryContext:
    """What a story needs beyond the result (see the module docstring). Per-job arrays are aligned
    with the result's jobs rows; None: unknown."""

    order: object
    seed: int = 0
    orgs: dict = field(default_factory=dict)
    requested_s: np.ndarray | None = None
    cpus: np.ndarray | None = None
    memory_gib: np.ndarray | None = None
    capacity_cpus: dict = field(default_factory=dict)
    capacity_memory_gib: dict = field(default_factory=dict)

    @classmethod
    def of(cls, scenario, workload=None) -> "StoryContext":
        """The context of a run of `scenario` (engine.scenario.spec.Scenario) over `workload`
        (engine.sim.state.workload.Workload: the scenario's jobs and fleet as it ran them), or None."""
        order = scenario.build_policies().order
        if workload is None:
            return cls(order, scenario.seed, dict(scenario.team_orgs))
        fleet = workload.fleet
        per_region = fleet.groupby("region")[["cpu_milli", "memory_mib"]].sum()
        return cls(order, scenario.seed, dict(scenario.team_orgs), np.asarray(workload.requested_s, np.float64),
                   workload.cpu_milli * workload.nodes / 1000.0, workload.memory_mib * workload.nodes / 1024.0,
                   (per_region["cpu_milli"] / 1000.0).to_dict(), (per_region["memory_mib"] / 1024.0).to_dict())


@dataclass(frozen=True)
class Moment:
    """The order's view of the job at one time. label: "submitted", "started", "restarted" or
    "window end". factors: FACTOR_COLUMNS per factor the order's `factors` returns (multifactor: age,
    fairshare, qos, size, deadline) then "total" (weight: the order's `weight_<factor>`, value: the
    factor 0-1, weighted = weight x value); None when the order has no priority
    factors. priority: the total (NaN without factors); boosted: the emergency boost applied.
    jobs_ahead: waiting jobs of its region ordered before it; waiting: jobs waiting there, itself
    included."""

    label: str
    time_s: float
    factors: pd.DataFrame | None
    priority: float
    boosted: bool
    jobs_ahead: int
    waiting: int


@dataclass(frozen=True)
class JobStory:
    """See the module docstring. status: "completed", "failed", "running at the end" or a turned-away
    reason. wait_s: before the first start (to W when never started); total_wait_s: every wait,
    requeued waits included. start_s: first start (NaN: never); starts: every start. timeline:
    TIMELINE_COLUMNS (sorted by time); reasons: REASON_COLUMNS (seconds of total_wait_s under each
    reason, share of it; longest first). sla: "met", "missed", "pending" or "none"."""

    row: int
    job_id: str
    team: str
    user: str
    project: str
    region: str
    workload_class: str
    gpus: float
    queue: str
    submit_s: float
    start_s: float
    end_s: float
    starts: tuple[float, ...]
    status: str
    wait_s: float
    total_wait_s: float
    timeline: pd.DataFrame
    reasons: pd.DataFrame
    max_wait_s: float
    sla: str
    starved: bool
    preemptions: int
    lost_gpu_hours: float
    order: str
    has_factors: bool
    moments: tuple[Moment, ...]


def _value(jobs: pd.DataFrame, name: str, row: int, default):
    return jobs[name].iat[row] if name in jobs else default


def _log(result: SimulationResult, row: int, job_id: str) -> pd.DataFrame:
    """The job's decisions, by its row when the log has one (job ids may repeat), else by id."""
    decisions = result.decisions
    log = decisions[decisions["row"].to_numpy(np.int64) == row] if "row" in decisions \
        else decisions[decisions["job_id"].astype(str) == job_id]
    return log.sort_values("time_s", kind="stable")[["time_s", "decision"]].reset_index(drop=True)


def _timeline(submit: float, log: pd.DataFrame, end: float, status: str) -> pd.DataFrame:
    """Submitted, the logged decisions ("failed" is logged at the end), and "completed" at the end."""
    rows = [(submit, "submitted")] + list(zip(log["time_s"].astype(float), log["decision"].astype(str)))
    if status == "completed":
        rows.append((end, "completed"))
    return pd.DataFrame(rows, columns=TIMELINE_COLUMNS).sort_values("time_s", kind="stable").reset_index(drop=True)


def _reasons(submit: float, log: pd.DataFrame, horizon: float) -> tuple[pd.DataFrame, float]:
    """(REASON_COLUMNS, total wait): walk the log, charging each waiting interval to the reason in
    force (see the module docstring); a job still waiting after its last decision waits to W."""
    spent: dict[str, float] = {}
    waiting, reason, since = True, QUEUED, submit
    for t, decision in zip(log["time_s"].astype(float), log["decision"].astype(str)):
        if waiting and t > since:
            spent[reason] = spent.get(reason, 0.0) + t - since
        since = max(since, t)
        if decision in START_DECISIONS:
            waiting = False
        elif decision in ("preempted", "out-of-memory"):  # requeued: it waits again
            waiting, reason = True, QUEUED
        elif decision == "handed-off":  # moving to another region, then queued there
            waiting, reason = True, decision
        elif waiting and decision not in ("failed", "degraded") and decision not in RELAXED_DECISIONS:
            reason = decision
    if waiting and horizon > since:
        spent[reason] = spent.get(reason, 0.0) + horizon - since
    total = float(sum(spent.values()))
    table = pd.DataFrame({"reason": list(spent), "seconds": list(spent.values())}, columns=["reason", "seconds"])
    table = table[table["seconds"] > 0].sort_values(["seconds", "reason"], ascending=[False, True], kind="stable")
    table["share"] = table["seconds"] / total if total > 0 else 0.0
    return table.reset_index(drop=True)[REASON_COLUMNS], total


def _codes(jobs: pd.DataFrame, name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    return codes(jobs[name]) if name in jobs else (np.zeros(len(jobs), np.int64), ("",))


def _pieces(result: SimulationResult) -> pd.DataFrame:
    """The pieces of holding with end_s +inf for a piece still running at the end."""
    held = result.held()
    return held.assign(end_s=held["end_s"].fillna(np.inf))


def share_view(result: SimulationResult, region: str, t: float, context: StoryContext,
               pieces: pd.DataFrame | None = None) -> ShareView:
    """The ledger at time t for a pass over `region`, rebuilt from the result's pieces (see the
    module docstring)."""
    jobs = result.jobs
    pieces = _pieces(result) if pieces is None else pieces
    team, teams = _codes(jobs, "team")
    user, users = _codes(jobs, "user")
    project, projects = _codes(jobs, "project")
    table = result.teams if result.teams is not None else pd.DataFrame(columns=["team", "weight"])
    weights = dict(zip(table["team"].astype(str), pd.to_numeric(table["weight"], errors="coerce")))
    weight = np.array([float(weights.get(name, 1.0)) for name in teams])
    weight = np.where(weight > 0, weight, 1.0)
    org, orgs = codes([context.orgs.get(name, "all") for name in teams])
    h = float(setting(context.order, "order", "half_life_s"))

    row = pieces["row"].to_numpy(np.int64)
    start, end = pieces["start_s"].to_numpy(np.float64), pieces["end_s"].to_numpy(np.float64)
    gpus = pieces["gpus_allocated"].to_numpy(np.float64)
    before = start < t
    upto = np.minimum(end, t)
    with np.errstate(invalid="ignore", over="ignore"):
        decayed = np.where(before, gpus * h / LN2 * (np.exp2(-(t - upto) / h) - np.exp2(-(t - start) / h)), 0.0)
    served = np.where(before, gpus * (upto - start), 0.0)
    running = before & (end > t) & (pieces["region"].astype(str).to_numpy(object) == region)
    held_rows = row[running]

    def per(codes_: np.ndarray, n: int, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        keep = slice(None) if mask is None else mask
        return np.bincount(codes_[row[keep]], weights=values[keep], minlength=n).astype(np.float64)

    def held(values: np.ndarray | None) -> np.ndarray:
        if values is None:
            return np.zeros(len(teams))
        return np.bincount(team[held_rows], weights=np.asarray(values, np.float64)[held_rows], minlength=len(teams))

    return ShareView(teams, orgs, org, weight, per(team, len(teams), decayed), per(team, len(teams), served),
                     per(team, len(teams), gpus, running), held(context.cpus), held(context.memory_gib),
                     per(user, len(users), decayed), per(project, len(projects), decayed),
                     float(result.capacity_gpus.get(region, 0.0)), float(context.capacity_cpus.get(region, 0.0)),
                     float(context.capacity_memory_gib.get(region, 0.0)), h, int(context.seed))


def waiting_at(result: SimulationResult, region: str, t: float, pieces: pd.DataFrame | None = None) -> np.ndarray:
    """Rows of the jobs waiting in `region` at time t (see the module docstring), ascending."""
    jobs = result.jobs
    pieces = _pieces(result) if pieces is None else pieces
    started = jobs["started"].to_numpy(bool)
    away = ~started & jobs["reason"].astype(str).isin(TURNED_AWAY).to_numpy(bool)
    ended = jobs["end_s"].to_numpy(np.float64) <= t
    holding = np.zeros(len(jobs), bool)
    start, end = pieces["start_s"].to_numpy(np.float64), pieces["end_s"].to_numpy(np.float64)
    holding[pieces["row"].to_numpy(np.int64)[(start < t) & (end > t)]] = True
    waiting = ((jobs["submit_s"].to_numpy(np.float64) <= t) & ~away & ~ended & ~holding
               & (jobs["region"].astype(str).to_numpy(object) == region))
    return np.flatnonzero(waiting)


def queue_view(result: SimulationResult, rows: np.ndarray, shares: ShareView, context: StoryContext) -> QueueView:
    """The simulator's QueueView of the jobs at `rows` with the ledger `shares`."""
    jobs = result.jobs
    n = len(jobs)
    team, _ = _codes(jobs, "team")
    user, _ = _codes(jobs, "user")
    project, _ = _codes(jobs, "project")
    classes = result.queue_classes
    if classes is not None and "queue" in jobs:
        at = pd.Index(classes["queue"].astype(str)).get_indexer(jobs["queue"].astype(str))
        tiers = classes["priority"].to_numpy(np.float64)
        queue_class, qos = np.maximum(at, 0), np.where(at >= 0, tiers[np.maximum(at, 0)], 0.5)
    else:
        queue_class, qos = np.zeros(n, np.int64), np.full(n, 0.5)

    def column(name: str, default: float) -> np.ndarray:
        return jobs[name].to_numpy(np.float64) if name in jobs else np.full(n, default)

    def given(values) -> np.ndarray:
        return np.zeros(n) if values is None else np.asarray(values, np.float64)

    return QueueView(index=rows, submit_s=column("submit_s", 0.0)[rows], requested_s=given(context.requested_s)[rows],
                     size=column("gpus", 0.0)[rows], priority=column("priority", 0.0)[rows],
                     deadline_s=column("deadline_s", np.inf)[rows], team=team[rows], user=user[rows],
                     project=project[rows], queue_class=queue_class[rows], qos=qos[rows],
                     cpus=given(context.cpus)[rows], memory_gib=given(context.memory_gib)[rows], shares=shares)


def moment(result: SimulationResult, row: int, t: float, label: str, context: StoryContext,
           pieces: pd.DataFrame | None = None) -> Moment:
    """The order's view of the job at `row` at time t: its factors and the jobs ahead of it."""
    pieces = _pieces(result) if pieces is None else pieces
    region = str(result.jobs["region"].iat[row])
    rows = np.union1d(waiting_at(result, region, t, pieces), [row]).astype(np.int64)
    view = queue_view(result, rows, share_view(result, region, t, context, pieces), context)
    me = int(np.searchsorted(rows, row))
    order = context.order
    ahead = int(np.flatnonzero(queue_order(order, view, t) == me)[0])
    if not hasattr(order, "factors"):
        return Moment(label, t, None, math.nan, False, ahead, len(rows))
    values = order.factors(view, t)
    names = [name for name in values if name not in ("priority", "boosted")]
    weight = np.array([float(getattr(order, f"weight_{name}", math.nan)) for name in names])
    weighted = np.array([float(values[name][me]) for name in names])
    value = np.divide(weighted, weight, out=np.full(len(names), math.nan), where=weight > 0)
    priority = float(values["priority"][me])
    table = pd.DataFrame({"factor": [*names, "total"], "weight": [*weight, math.nan], "value": [*value, math.nan],
                          "weighted": [*weighted, priority]}, columns=FACTOR_COLUMNS)
    return Moment(label, t, table, priority, bool(values["boosted"][me]), ahead, len(rows))


def _status(jobs: pd.DataFrame, row: int, running: bool) -> str:
    """`running`: a piece of the job still runs at the end. A job with no end that is not running
    never started, or was evicted and never started again."""
    if running:
        return "running at the end"
    if pd.isna(jobs["end_s"].iat[row]):
        reason = str(jobs["reason"].iat[row])
        return reason if reason in TURNED_AWAY else "waiting at the end"
    return "failed" if bool(jobs["failed"].iat[row]) else "completed"


def _sla(result: SimulationResult, queue: str, wait: float, started: bool) -> tuple[float, str, bool]:
    """(max_wait_s, verdict, starved) of a wait in `queue` (engine.analysis.runs.fairness's rules)."""
    classes = result.queue_classes
    max_wait, starve_after = math.inf, math.inf
    if classes is not None and queue in set(classes["queue"].astype(str)):
        entry = classes[classes["queue"].astype(str) == queue].iloc[0]
        max_wait, starve_after = float(entry["max_wait_s"]), float(entry["starve_after_s"])
    if not math.isfinite(max_wait):
        verdict = "none"
    elif wait > max_wait:
        verdict = "missed"
    else:
        verdict = "met" if started else "pending"
    return max_wait, verdict, wait > starve_after


def _start_label(i: int) -> str:
    """The label of the i-th start (from 0): started, restarted, then restarted (3), restarted (4), ..."""
    return "started" if i == 0 else "restarted" if i == 1 else f"restarted ({i + 1})"


def job_story(result: SimulationResult, row: int, context: StoryContext) -> JobStory:
    """The story of the job at position `row` of `result.jobs` (see the module docstring)."""
    jobs = result.jobs
    if not 0 <= row < len(jobs):
        raise IndexError(f"no job at row {row}: the run has {len(jobs)} jobs")
    pieces = _pieces(result)
    job_id = str(jobs["job_id"].iat[row])
    submit, end = float(jobs["submit_s"].iat[row]), float(jobs["end_s"].iat[row])
    started = bool(jobs["started"].iat[row])
    mine = pieces[pieces["row"].to_numpy(np.int64) == row]
    status = _status(jobs, row, bool(np.isinf(mine["end_s"].to_numpy(np.float64)).any()))
    horizon = horizon_s(result)
    log = _log(result, row, job_id)
    reasons, total = _reasons(submit, log, horizon)
    starts = tuple(sorted(float(s) for s in mine["start_s"]))
    wait = float(jobs["wait_s"].iat[row]) if started else max(horizon - max(submit, 0.0), 0.0)
    queue = str(_value(jobs, "queue", row, ""))
    max_wait, sla, starved = _sla(result, queue, wait, started)
    times = [("submitted", submit)] + [(_start_label(i), s) for i, s in enumerate(starts)]
    if not starts and status not in TURNED_AWAY:
        times.append(("window end", max(horizon, submit)))
    moments = tuple(moment(result, row, t, label, context, pieces) for label, t in times)
    return JobStory(row, job_id, str(jobs["team"].iat[row]), str(_value(jobs, "user", row, "")),
                    str(_value(jobs, "project", row, "")), str(jobs["region"].iat[row]),
                    str(jobs["workload_class"].iat[row]), float(jobs["gpus"].iat[row]), queue, submit,
                    float(jobs["start_s"].iat[row]), end, starts, status, wait, total,
                    _timeline(submit, log, end, status), reasons, max_wait, sla, starved,
                    int(_value(jobs, "preemptions", row, 0)), float(_value(jobs, "lost_gpu_hours", row, 0.0)),
                    str(getattr(context.order, "registry_key", type(context.order).__name__)),
                    hasattr(context.order, "factors"), moments)


def factor_table(story: JobStory) -> pd.DataFrame:
    """The weighted factors side by side, a row per factor (then "total") and a column per moment
    ("<label> (weighted)"); empty when the order has no priority factors."""
    tables = [m for m in story.moments if m.factors is not None]
    if not tables:
        return pd.DataFrame()
    out = tables[0].factors[["factor", "weight"]].copy()
    for m in tables:
        out[m.label] = m.factors["weighted"].to_numpy()
    return out
