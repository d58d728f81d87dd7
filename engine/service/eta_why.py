"""One queued job's predicted start (engine.service.eta), with how wide its interval is and why.

`job_eta(jobs, fleet, at_utc, job_id, ...)` replays the queue at `at_utc` as `eta` does and keeps, for
the one job, what each replay's start waited for. A job starts when enough GPUs come free in its region,
so in a replay its start is the end of the job whose GPUs it then takes: the interval is as wide as the
ends of those jobs vary from one draw of the runtimes to the next. Per replay, the releasing job is the
one that ends in the job's region at the instant the job starts (the one holding the most GPUs when
several end then); "at once" when the job starts at `at_utc` itself, "never" when it never starts in
that replay, "another pass" when no job ends then (a timer, a quota or a deferral returned the room).

`drivers` lists the releasing jobs, most frequent first: job_id, state at the instant ("running" with
how long it had run, or "queued ahead"), GPUs, share of the replays it released the job in, and the
10-90 % range of the runtime it had left across the replays (seconds). `width_s` = the interval's upper
bound less its lower bound (seconds; +inf when the job may never start).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.core.text import hours_minutes
from engine.core.units import GPU, ResourceUnit
from engine.predict.features import features
from engine.service.eta import (
    LEVEL,
    QUANTILE_COLUMNS,
    SAMPLES,
    Replayed,
    draws,
    eta_table,
    fit_runtime_model,
    known_at,
    queue_at,
    starts_of,
    why_at_start,
)

AT_ONCE, NEVER, OTHER = "at once", "never", "another pass"
DRIVER_COLUMNS = ["job_id", "state", "gpus", "share", "left_p10_s", "left_p90_s"]
SHOWN_DRIVERS = 3


@dataclass(frozen=True)
class JobEta:
    """`row`: the job's row of the `eta` table; `width_s`: its interval's width; `drivers`: DRIVER_COLUMNS;
    `shares`: the share of replays in which it started AT_ONCE, NEVER, or by ANOTHER pass; `region`, `at`."""

    row: pd.Series
    width_s: float
    drivers: pd.DataFrame
    shares: dict
    region: str
    at: pd.Timestamp


class NotWaiting(ValueError):
    """The job was not waiting at the instant (not yet submitted, already started, or ended)."""


def job_eta(jobs: pd.DataFrame, fleet: pd.DataFrame, at_utc, job_id: str, scenario=None, model=None,
            samples: int = SAMPLES, seed: int = 0, level: float = LEVEL, calibration=None, tz=None) -> JobEta:
    """The predicted start of `job_id`, pending at `at_utc`, and what drove its interval (module docstring).
    Raises NotWaiting when the job was not pending then, NotEnoughHistory (engine.predict.runtime_source)
    when too few jobs had ended to fit the runtime model (`model` None)."""
    at = pd.Timestamp(at_utc)
    known = known_at(jobs, at)
    queue = queue_at(jobs, at, known)
    found = np.flatnonzero(queue.pending["job_id"].astype(str).to_numpy() == str(job_id))
    if not len(found):
        raise NotWaiting(f"job {job_id} was not waiting at {at:%Y-%m-%d %H:%M} UTC")
    model = model or fit_runtime_model(jobs, at, tz)
    table = pd.concat([queue.running, queue.pending])
    quantiles = model.predict(features(known, tz).loc[table.index])
    target, n = len(queue.running) + int(found[0]), len(table)
    region = table["region"].astype(str).to_numpy()
    gpus = pd.to_numeric(table["gpus"], errors="coerce").fillna(0.0).to_numpy(np.float64)
    starts, left, released, why = np.empty((samples, len(queue.pending))), np.empty((samples, n)), [], None
    for i, draw in enumerate(draws(queue, quantiles, fleet, scenario, samples, seed)):
        start = starts_of(draw, n)
        starts[i], left[i] = start[len(queue.running):], draw.remaining_s
        why = why_at_start(draw.result.decisions, draw.order, n)[len(queue.running):] if why is None else why
        released.append(_releaser(draw, start, target, region, gpus))
    row = eta_table(queue, Replayed(starts, why), quantiles[QUANTILE_COLUMNS], level, calibration).iloc[int(found[0])]
    return JobEta(row, float(row["wait_hi_s"] - row["wait_lo_s"]), _drivers(released, table, left, at, gpus),
                  {name: released.count(name) / samples for name in (AT_ONCE, NEVER, OTHER)}, region[target], at)


def _releaser(draw, start: np.ndarray, target: int, region: np.ndarray, gpus: np.ndarray):
    """The position of the job whose end let `target` start in this draw, or AT_ONCE, NEVER, OTHER."""
    t = start[target]
    if not np.isfinite(t):
        return NEVER
    if t <= 1e-6:
        return AT_ONCE
    end = np.full(len(start), np.inf)
    end[draw.order] = draw.result.jobs["end_s"].to_numpy(np.float64)
    ending = np.flatnonzero((np.abs(end - t) <= 1e-6) & (region == region[target]))
    ending = ending[ending != target]
    return int(ending[np.argmax(gpus[ending])]) if len(ending) else OTHER


def _drivers(released: list, table: pd.DataFrame, left: np.ndarray, at: pd.Timestamp,
             gpus: np.ndarray) -> pd.DataFrame:
    positions = pd.Series([r for r in released if isinstance(r, int)], dtype=np.int64)
    rows = []
    for position, count in positions.value_counts(sort=True).items():
        started = pd.to_datetime(table["start_utc"].iloc[position])
        state = "queued ahead" if pd.isna(started) else f"running for {hours_minutes((at - started).total_seconds())}"
        low, high = np.quantile(left[:, position], [0.1, 0.9], method="inverted_cdf")   # as the interval is
        rows.append([str(table["job_id"].iloc[position]), state, gpus[position], count / len(released), low, high])
    frame = pd.DataFrame(rows, columns=DRIVER_COLUMNS)
    return frame.sort_values(["share", "job_id"], ascending=[False, True], kind="stable").reset_index(drop=True)


def width_text(answer: JobEta, unit: ResourceUnit = GPU) -> str:
    """How wide the interval is and why, in words: the releasing jobs and how uncertain their ends are."""
    row = answer.row
    if not np.isfinite(row["wait_p50_s"]):
        return "It never starts in most replays: it is larger than its region's fleet (or than its quota allows)."
    if row["wait_hi_s"] < 60.0:
        return "It starts at once in the replays: there is room for it now under the replayed policies."
    width = "with no upper end (it may never start)" if not np.isfinite(answer.width_s) else \
        f"{hours_minutes(answer.width_s)} wide"
    parts, drivers = [], answer.drivers
    lead = f"It starts when {unit.many} come free in {answer.region}: "
    if len(drivers) > SHOWN_DRIVERS and drivers["share"].iloc[0] < 0.25:
        lead += (f"{len(drivers)} different jobs' ends let it start, none in more than {drivers['share'].iloc[0]:.0%} "
                 "of the replays; the most frequent: ")
    for d in drivers.head(SHOWN_DRIVERS).itertuples(index=False):
        parts.append(f"{d.share:.0%} of the replays when job {d.job_id} ended ({d.state}, {unit.count(d.gpus)}, "
                     f"{hours_minutes(d.left_p10_s)} to {hours_minutes(d.left_p90_s)} of its run left)")
    for name, words in ((AT_ONCE, "at once"), (OTHER, "when another pass found it room"), (NEVER, "never")):
        if answer.shares[name] >= 0.05:
            parts.append(f"{answer.shares[name]:.0%} {words}")
    text = (f"The {LEVEL:.0%} interval is {width}. {lead}{'; '.join(parts)}. The interval is as wide as the "
            "runtimes of those jobs are uncertain (the runtime model's P10 to P90 for each).")
    if bool(row.get("calibrated", False)):
        text += (" The backtest's calibration moved its bounds (the raw replays are optimistic: they see no later "
                 "arrivals).")
    return text
