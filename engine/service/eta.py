"""Wait-time ETA: when will a pending job start, as an interval, from the queue at an instant.

`eta(jobs, fleet, at_utc)` answers for every job pending at `at_utc` (naive UTC), from the jobs
table as it was known then (`known_at`: jobs submitted by `at`, starts and ends after `at` blanked,
outcomes unknown), so nothing that happened after `at` changes the answer:

1. Runtime quantiles. The runtime model (engine.predict.runtime; P10/P50/P90 from the submit-time
   features of engine.predict.features) is fitted on the jobs that had ended by `at`, exactly like
   engine.predict.runtime_source, unless a fitted model is given.
2. Monte-Carlo. Each of `samples` seeded draws gives every job a runtime from its quantiles: ln
   runtime = ln P50 + z x sigma, z ~ N(0, 1), sigma = ln(P50/P10) / 1.2816 below the median and
   ln(P90/P50) / 1.2816 above it (a two-piece lognormal through the three quantiles, tails
   extrapolated; equal quantiles give that runtime exactly). A running job's draw is conditioned on
   the time it has already run (z truncated to runtimes above it); one past its P90 draws from a
   tail above the P90 whose spread is at least `PAST_P90_SIGMA`, so it always has time left.
3. Replay. Each draw runs the real simulator (engine.sim.simulator) forward from `at` with no
   future arrivals: running jobs arrive first at `at` and run for their remaining time, then the
   pending jobs in their queue order (submit time, then table order). All arrive at `at` (time 0 of
   the replay), so orders keyed on submit time keep the queue's order through the tie-break on
   position, while orders that read waiting times see none. The policies are the scenario's
   (default FCFS + EASY backfilling + first-fit, the schedulers the SWF logs ran; its fleet edits,
   timer, queue classes, quotas and region edits apply, its workload window, load scale and growth
   do not)
   and see the users' requests (a running job's request less its elapsed time), or, with the
   scenario's `[runtime] source = "predicted"`, the model's chosen quantile, as runtime_source does;
   the simulator runs the drawn runtimes.
4. The interval is the per-job (1 - level)/2 and (1 + level)/2 quantiles of the replayed starts, the
   point the median. A draw in which a job never starts (it can never fit) counts as +inf.
5. Why it waits: the state the first replay gives each pending job at `at` itself, once every event
   at that instant is through (its last decision then; engine.core.reasons). Those decisions read
   the requests, not the drawn runtimes, so the draws agree on it. "started" means the replay
   starts it at once: it fits now under the replayed policies, so what held it back was the
   scheduler that ran (a stricter order, no backfilling, or limits the simulator does not model,
   such as per-user limits).

No future arrivals are simulated, so the raw interval is optimistic wherever arrivals can overtake
(backfilling, priorities), and so is a replay of a scheduler simpler than the one that ran (the
real CTC-SP2 and HPC2N schedulers left processors idle while jobs that fitted waited, per-user
limits and the like). Two corrections learned on past snapshots (engine.service.eta_backtest) move
it: `Calibration`, split-conformal offsets of the bounds on the scale ln(remaining wait + 60 s),
and `LearnedCorrection`, quantile gradient boosting from the replay's interval and the queue's
shape to the actual wait, then conformal offsets.

Measured (benchmarks/RESULTS.md, "Wait-time ETA"): the raw interval covers 87 % on the sample data
(FCFS history) but 28 % on CTC-SP2 and 3 % on HPC2N; the learned correction brings those to 79 %
and 88 %. Policies seeing the P50 instead of the requests did no better on CTC-SP2.

Columns of `eta` (one row per pending job, in queue order): job_id, submit_utc, region, gpus,
waited_s (since submit), jobs_ahead (pending jobs before it in its region's queue order),
gpus_ahead (their GPUs), queue_length (pending jobs in its region), user_jobs_ahead (of the jobs
ahead, its user's), user_running (its user's running jobs), requested_s (the user's request),
runtime_p50_s (the model's median runtime), wait_lo_s / wait_p50_s / wait_hi_s (remaining wait
from `at`, seconds; +inf: never starts), never_share (share of draws in which it never started),
start_lo_utc / start_p50_utc / start_hi_utc (NaT: never), calibrated (bool: a correction moved the
interval), eta_text ("in 3 h to 7 h, most likely 5 h"), why (a REASONS name, or "started"),
why_text (engine.core.reasons.SHORT of it: "no room yet", "would delay the job at the front", ...).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from engine.core.reasons import REASONS, SHORT
from engine.core.text import hours_minutes
from engine.predict.features import features, has_outcome, runtime_s, seconds
from engine.predict.runtime import RuntimeModel, RuntimeSettings
from engine.predict.runtime_source import COLUMNS, MIN_TRAIN_JOBS, NotEnoughHistory
from engine.scenario.edits import edit_fleet
from engine.scenario.spec import Scenario
from engine.sim.simulator import simulate
from engine.sim.state.workload import build_workload
from engine.world.facts import World

LEVEL = 0.8
SAMPLES = 40
WAIT_SCALE_S = 60.0  # remaining waits are compared as ln(wait + 60 s): a minute is the resolution
Z90 = float(ndtri(0.9))
PAST_P90_SIGMA = float(np.log(2.0) / Z90)  # a job past its P90: its tail's spread, at least "P99 = 2x P90"
DEFAULT_SCENARIO = Scenario.from_dict({"name": "eta", "policies": {"backfill": {"key": "easy"}}})
QUANTILE_COLUMNS = ["p10_s", "p50_s", "p90_s"]
WHY_DECISIONS = (*REASONS, "backfilled", "deferred", "transferring-data")  # the decisions that set it


def known_at(jobs: pd.DataFrame, at_utc) -> pd.DataFrame:
    """The jobs table as known at `at_utc`: jobs submitted by then, later starts and ends blanked,
    and the status of every job not ended by then "running" (started) or "pending"."""
    at = pd.Timestamp(at_utc)
    out = jobs[(pd.to_datetime(jobs["submit_utc"]) <= at).to_numpy()].copy()
    start, end = pd.to_datetime(out["start_utc"]), pd.to_datetime(out["end_utc"])
    started, ended = (start <= at).to_numpy(), (end <= at).to_numpy()
    out["start_utc"] = start.where(started)
    out["end_utc"] = end.where(ended)
    open_ = ~ended
    out.loc[open_, "status"] = np.where(started[open_], "running", "pending")
    return out


@dataclass(frozen=True)
class Queue:
    """The state at `at`: running and pending rows of `known_at(jobs, at)` (the jobs' own index).
    Running: started by `at`, not ended. Pending: submitted by `at`, neither started nor ended (a
    job cancelled before starting has ended); in queue order (submit, then table order)."""

    at: pd.Timestamp
    running: pd.DataFrame
    pending: pd.DataFrame


def queue_at(jobs: pd.DataFrame, at_utc, known: pd.DataFrame | None = None) -> Queue:
    """The queue at `at_utc`; `known`: `known_at(jobs, at_utc)` when already at hand."""
    known = known_at(jobs, at_utc) if known is None else known
    started, ended = known["start_utc"].notna().to_numpy(), known["end_utc"].notna().to_numpy()
    pending = known[~started & ~ended]
    order = np.argsort(seconds(pending["submit_utc"]), kind="stable")
    return Queue(pd.Timestamp(at_utc), known[started & ~ended], pending.iloc[order])


def draw_remaining(quantiles_s: np.ndarray, elapsed_s: np.ndarray, samples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """(samples, jobs) remaining runtimes in seconds: runtimes from each job's P10/P50/P90
    (`quantiles_s`, shape (jobs, 3)) given it has already run `elapsed_s` (0: not started), less
    that time. See the module docstring for the distribution."""
    q = np.log(np.maximum(np.asarray(quantiles_s, np.float64), 1.0))
    elapsed = np.asarray(elapsed_s, np.float64)
    low, mid, high = q[:, 0], q[:, 1], q[:, 2]
    sigma_low, sigma_high = (mid - low) / Z90, (high - mid) / Z90
    log_e = np.log(np.maximum(elapsed, 1e-300))
    past = (elapsed > 0) & (log_e > high)
    tail = np.maximum(sigma_high, PAST_P90_SIGMA)
    with np.errstate(divide="ignore", invalid="ignore"):
        z_e = np.where(log_e > mid, (log_e - mid) / sigma_high, (log_e - mid) / sigma_low)
    z_e = np.where(past, Z90 + (log_e - high) / tail, z_e)
    z_e = np.where((elapsed <= 0) | np.isnan(z_e) | (z_e < -40.0), -np.inf, np.minimum(z_e, 30.0))
    v = 1.0 - rng.random((samples, len(elapsed)))
    z = -ndtri(v * ndtr(-z_e))
    log_run = np.where(z > 0, mid + z * sigma_high, mid + z * sigma_low)
    log_run = np.where(past & (z > Z90), high + (z - Z90) * tail, log_run)
    return np.maximum(np.exp(log_run) - elapsed, 0.0)


@dataclass(frozen=True)
class Replayed:
    """The replays of a queue: `starts`, (samples, pending jobs) starts in seconds after the instant
    (+inf: never started); `why`, each pending job's state at the instant (module docstring, step 5)."""

    starts: np.ndarray
    why: np.ndarray


@dataclass(frozen=True)
class Draw:
    """One replay of a queue: `result`, the simulation; `order`, its rows' positions in the replayed table
    (running jobs, then pending ones, as `Queue` holds them); `remaining_s`, the runtimes left each job of
    that table drew (seconds)."""

    result: object
    order: np.ndarray
    remaining_s: np.ndarray


def draws(queue: Queue, quantiles_s: pd.DataFrame, fleet: pd.DataFrame, scenario: Scenario | None = None,
          samples: int = SAMPLES, seed: int = 0):
    """Yield the queue's `samples` replays from `queue.at` as `Draw`s (module docstring, steps 2 and 3).
    `quantiles_s`: p10_s, p50_s, p90_s per job, indexed like the queue's rows. Nothing when none is pending."""
    scenario = scenario or DEFAULT_SCENARIO
    at, running, pending = queue.at, queue.running, queue.pending
    if not len(pending):
        return
    table = pd.concat([running, pending])
    elapsed = np.concatenate([(at - pd.to_datetime(running["start_utc"])).dt.total_seconds().to_numpy(np.float64),
                              np.zeros(len(pending))])
    q = quantiles_s.loc[table.index, QUANTILE_COLUMNS].to_numpy(np.float64)
    drawn = draw_remaining(q, elapsed, samples, np.random.default_rng(seed))
    for edit in scenario.fleet_edits:
        fleet = edit_fleet(fleet, edit)
    seen = quantiles_s.loc[table.index, COLUMNS[scenario.runtime_quantile]].to_numpy(np.float64) \
        if scenario.runtime_source == "predicted" else None
    workload = build_workload(_replay_table(table, elapsed, seen, at), fleet)
    order = workload.job_id.astype(np.int64)  # the replay's row -> position in `table`
    world = scenario.world(World(), fleet)
    policies, sharing = scenario.build_policies(), scenario.sharing(world)
    for i in range(samples):
        result = simulate(replace(workload, run_s=drawn[i, order]), policies, scenario.seed, scenario.name,
                          scenario.timer_s, world, sharing)
        yield Draw(result, order, drawn[i])


def replay(queue: Queue, quantiles_s: pd.DataFrame, fleet: pd.DataFrame, scenario: Scenario | None = None,
           samples: int = SAMPLES, seed: int = 0) -> Replayed:
    """Replay the queue `samples` times from `queue.at` (module docstring, steps 2, 3 and 5).
    `quantiles_s`: p10_s, p50_s, p90_s per job, indexed like the queue's rows."""
    running, pending = queue.running, queue.pending
    if not len(pending):
        return Replayed(np.zeros((samples, 0)), np.zeros(0, object))
    n = len(running) + len(pending)
    starts, why = np.empty((samples, len(pending))), None
    for i, draw in enumerate(draws(queue, quantiles_s, fleet, scenario, samples, seed)):
        starts[i] = starts_of(draw, n)[len(running):]
        if why is None:
            why = why_at_start(draw.result.decisions, draw.order, n)[len(running):]
    return Replayed(starts, why)


def starts_of(draw: Draw, n: int) -> np.ndarray:
    """Per position of the replayed table (n jobs), its start in the draw, seconds after the instant (+inf:
    never started)."""
    start = np.full(n, np.inf)
    start[draw.order] = draw.result.jobs["start_s"].to_numpy(np.float64)
    return np.nan_to_num(start, nan=np.inf)


def why_at_start(decisions: pd.DataFrame, order: np.ndarray, n: int) -> np.ndarray:
    """Per position of the replayed table, its last WHY_DECISIONS decision at time 0 ("backfilled"
    counts as "started"; none: "waiting-in-queue")."""
    first = decisions[(decisions["time_s"] == 0.0).to_numpy() & decisions["decision"].isin(WHY_DECISIONS).to_numpy()]
    last = first.drop_duplicates("row", keep="last")
    why = np.full(n, "waiting-in-queue", dtype=object)
    why[order[last["row"].to_numpy(np.int64)]] = last["decision"].replace({"backfilled": "started"}).to_numpy(object)
    return why


def _replay_table(table: pd.DataFrame, elapsed: np.ndarray, seen: np.ndarray | None,
                  at: pd.Timestamp) -> pd.DataFrame:
    """The replay's jobs table: everyone submitted and (for the workload's sake) started at `at`,
    ids "000000000"... keeping `table`'s order, requests as the policies should see them: the users'
    requests, or `seen` (the predicted runtimes a scenario schedules with), less the time run so far."""
    out = table.copy()
    out["job_id"] = [f"{k:09d}" for k in range(len(out))]
    out["submit_utc"] = out["start_utc"] = at
    out["end_utc"] = at + pd.Timedelta(seconds=1)
    out["status"] = "completed"
    request = pd.to_numeric(out["requested_runtime_s"], errors="coerce").to_numpy(np.float64) \
        if "requested_runtime_s" in out else np.full(len(out), np.nan)
    left = np.maximum(request - elapsed, 1.0)
    if seen is not None:
        out["user_requested_runtime_s"] = left
        left = np.maximum(seen - elapsed, 1.0)
    out["requested_runtime_s"] = left
    return out


def fit_runtime_model(jobs: pd.DataFrame, at_utc, tz=None,
                      settings: RuntimeSettings = RuntimeSettings()) -> RuntimeModel:
    """The runtime model fitted on the jobs that had ended by `at_utc` with a known runtime
    (NotEnoughHistory below MIN_TRAIN_JOBS of them)."""
    known = known_at(jobs, at_utc)
    run = runtime_s(known)
    train = has_outcome(known) & np.isfinite(run)
    if train.sum() < MIN_TRAIN_JOBS:
        raise NotEnoughHistory(f"the ETA's runtime model needs at least {MIN_TRAIN_JOBS} jobs ended by "
                               f"{pd.Timestamp(at_utc):%Y-%m-%d %H:%M} UTC; found {int(train.sum())}")
    return RuntimeModel(settings).fit(features(known, tz)[train], run[train], seconds(known["end_utc"])[train])


@dataclass(frozen=True)
class Calibration:
    """Learned offsets of the interval's bounds and its point, on the scale ln(remaining wait + 60 s):
    lower bound - lo_shift, point + p50_shift, upper bound + hi_shift (negative values narrow)."""

    lo_shift: float = 0.0
    p50_shift: float = 0.0
    hi_shift: float = 0.0

    def apply(self, lo_s: np.ndarray, p50_s: np.ndarray, hi_s: np.ndarray) -> tuple[np.ndarray, ...]:
        """Remaining waits (s) moved by the offsets; +inf stays +inf, nothing goes below 0."""
        def move(wait, by):
            return np.maximum(np.exp(np.log(np.asarray(wait) + WAIT_SCALE_S) + by) - WAIT_SCALE_S, 0.0)
        lo, p50, hi = move(lo_s, -self.lo_shift), move(p50_s, self.p50_shift), move(hi_s, self.hi_shift)
        return np.minimum(lo, p50), p50, np.maximum(hi, p50)

    def adjust(self, table: pd.DataFrame) -> tuple[np.ndarray, ...]:
        """The calibrated remaining waits (lo, p50, hi; s) of a raw `eta_table`."""
        return self.apply(*(table[c].to_numpy(np.float64) for c in ("wait_lo_s", "wait_p50_s", "wait_hi_s")))


def wait_quantiles(starts: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job, the (1 - level)/2, 0.5 and (1 + level)/2 quantiles of the draws' starts (s after `at`)."""
    if not starts.shape[1]:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    lo, p50, hi = np.quantile(starts, [(1 - level) / 2, 0.5, (1 + level) / 2], axis=0, method="inverted_cdf")
    return lo, p50, hi


def eta(jobs: pd.DataFrame, fleet: pd.DataFrame, at_utc, scenario: Scenario | None = None,
        model: RuntimeModel | None = None, samples: int = SAMPLES, seed: int = 0, level: float = LEVEL,
        calibration=None, tz=None) -> pd.DataFrame:
    """The start interval of every job pending at `at_utc` (columns: module docstring). `model`: a
    fitted RuntimeModel (None: fit one on the jobs ended by `at_utc`); `tz`: the features' time zones
    (engine.predict.features); `calibration`: a `Calibration` or a learned correction
    (engine.service.eta_backtest.LearnedCorrection), anything whose `adjust(raw eta table)` gives
    the remaining waits (lo, p50, hi) in seconds; None: the raw interval."""
    known = known_at(jobs, at_utc)
    queue = queue_at(jobs, at_utc, known)
    model = model or fit_runtime_model(jobs, at_utc, tz)
    rows = pd.concat([queue.running, queue.pending]).index
    quantiles = model.predict(features(known, tz).loc[rows]) if len(rows) else pd.DataFrame(columns=QUANTILE_COLUMNS)
    return eta_table(queue, replay(queue, quantiles, fleet, scenario, samples, seed), quantiles, level, calibration)


def eta_table(queue: Queue, replayed: Replayed, quantiles: pd.DataFrame, level: float = LEVEL,
              calibration=None) -> pd.DataFrame:
    """The ETA rows of `queue`'s pending jobs from its replays and the jobs' runtime quantiles
    (p50_s becomes runtime_p50_s)."""
    pending, at, starts = queue.pending, queue.at, replayed.starts
    lo, p50, hi = wait_quantiles(starts, level)
    gpus = pd.to_numeric(pending["gpus"], errors="coerce").fillna(0.0).to_numpy(np.float64)
    region = pending["region"].astype(str).to_numpy() if "region" in pending else np.full(len(pending), "")
    ahead, gpus_ahead = _ahead(region, gpus)
    user = _text(pending, "user_name")
    own_ahead = pd.DataFrame({"region": region, "user": user}).groupby(["region", "user"], sort=False).cumcount()
    own_running = pd.Series(user).map(pd.Series(_text(queue.running, "user_name")).value_counts()).fillna(0)
    request = pd.to_numeric(pending["requested_runtime_s"], errors="coerce").to_numpy(np.float64) \
        if "requested_runtime_s" in pending else np.full(len(pending), np.nan)
    out = pd.DataFrame({
        "job_id": pending["job_id"].to_numpy(), "submit_utc": pd.to_datetime(pending["submit_utc"]).to_numpy(),
        "region": region, "gpus": gpus,
        "waited_s": (at - pd.to_datetime(pending["submit_utc"])).dt.total_seconds().to_numpy(np.float64),
        "jobs_ahead": ahead, "gpus_ahead": gpus_ahead,
        "queue_length": pd.Series(region).map(pd.Series(region).value_counts()).to_numpy(np.int64),
        "user_jobs_ahead": own_ahead.to_numpy(np.int64), "user_running": own_running.to_numpy(np.int64),
        "requested_s": request, "runtime_p50_s": quantiles.loc[pending.index, "p50_s"].to_numpy(np.float64),
        "wait_lo_s": lo, "wait_p50_s": p50, "wait_hi_s": hi,
        "never_share": np.isinf(starts).mean(axis=0) if starts.shape[1] else np.zeros(0),
    })
    if calibration is not None:
        lo, p50, hi = calibration.adjust(out)
        out["wait_lo_s"], out["wait_p50_s"], out["wait_hi_s"] = lo, p50, hi
    for name, wait in (("start_lo_utc", lo), ("start_p50_utc", p50), ("start_hi_utc", hi)):
        out[name] = at + pd.to_timedelta(np.where(np.isfinite(wait), wait, np.nan), unit="s")
    out["calibrated"] = calibration is not None
    out["eta_text"] = [eta_text(a, b, c) for a, b, c in zip(lo, p50, hi)]
    out["why"] = pd.array(replayed.why.tolist(), dtype="str")
    out["why_text"] = pd.array([SHORT.get(w, w) for w in replayed.why], dtype="str")
    return out


def _text(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame:
        return np.full(len(frame), "", dtype=object)
    return frame[column].astype(object).where(frame[column].notna(), "").astype(str).to_numpy(dtype=object)


def _ahead(region: np.ndarray, gpus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per job (rows in queue order), the pending jobs and their GPUs before it in its region."""
    frame = pd.DataFrame({"region": region, "gpus": gpus})
    groups = frame.groupby("region", sort=False)["gpus"]
    return groups.cumcount().to_numpy(np.int64), (groups.cumsum() - frame["gpus"]).to_numpy(np.float64)


def eta_text(lo_s: float, p50_s: float, hi_s: float) -> str:
    """'in 3 h to 7 h, most likely 5 h' ('within 50 min, ...' when it may start now); 'never (turned
    away)' when even the point is +inf (the job is larger than the fleet, or than its quota can ever
    give it)."""
    if not np.isfinite(p50_s):
        return "never (turned away)"
    if hi_s < 60.0:
        return "now"
    most = f"most likely {hours_minutes(p50_s) if p50_s >= 60.0 else 'now'}"
    if not np.isfinite(hi_s):
        start = "from now" if lo_s < 60.0 else f"in {hours_minutes(lo_s)}"
        return f"{start} to never, {most}"
    if lo_s < 60.0:
        return f"within {hours_minutes(hi_s)}, {most}"
    return f"in {hours_minutes(lo_s)} to {hours_minutes(hi_s)}, {most}"

