"""Hour-of-week demand profile of a jobs table: mean GPUs wanted per pool and UTC hour of the week.

Demand, not history: every job is placed as if it had started at its submit time, so queueing in
the recorded schedule does not hide what was asked for. A job holds `gpus` (GPUs in total, 0.5 =
half a GPU) over [submit, submit + true runtime) in its home (region, gpu_type) pool; the true
runtime is the simulator's (`engine.sim.state.workload.build_workload`: end - start when recorded, up to
the data's end for jobs still running, else the requested runtime; jobs with none of these are
skipped and counted in `notes`).

Each job's interval is clipped to the window [start, end) (default: first to last submit) and
split exactly into UTC hour bins (partial hours pro rata). Bins are folded onto the 168 hours of
the week (0 = Monday 00:00 UTC), and each hour-of-week slot is divided by the number of times it
was observed in the window (`observed_weeks`, pro rata for the window's partial first and last
hours): the result is the mean GPUs busy in that hour. For a window of whole weeks this is the
GPU-hours divided by the number of weeks; a window shorter than a week leaves some slots
unobserved, and their demand is 0 (with a note). Invariant: sum over slots of
(firm + flexible) x observed_weeks = the jobs' GPU-hours inside the window x growth.

Work of the classes in `flexible_classes` may wait (deferrable); the rest (inference, development
by default) must run at once. `growth` scales both.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.sim.state.workload import build_workload

HOURS = 168  # hour of week, 0 = Monday 00:00 UTC
_COLUMNS = ("submit_utc", "start_utc", "end_utc", "gpus", "region", "gpu_type", "workload_class",
            "status", "requested_runtime_s")


@dataclass(frozen=True)
class DemandProfile:
    """Mean GPUs wanted per pool (rows, `pools` order) and hour (columns; 168 hours of the week in
    production, any count in hand-made instances).

    firm: classes that must run at once; flexible: deferrable classes. weeks: the window's span
    in weeks. observed_weeks: per hour-of-week slot, how many times the window covers it (None for
    hand-made profiles). notes: what was skipped or assumed.
    """

    pools: tuple[tuple[str, str], ...]
    firm: np.ndarray
    flexible: np.ndarray
    weeks: float
    observed_weeks: np.ndarray | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def hours(self) -> int:
        return int(self.firm.shape[1])


def _naive_utc(values) -> pd.Series:
    return pd.to_datetime(pd.Series(values), utc=True).dt.tz_localize(None)


def _timestamp(value) -> pd.Timestamp:
    return _naive_utc([value]).iloc[0]


def _hour_of_week_integral(starts, ends, weights, groups, n_groups: int) -> np.ndarray:
    """Integral of each group's load over every hour-of-week slot: (n_groups, 168) unit-hours.

    Times are float hours since a Monday 00:00 UTC, with starts < ends. An interval [s, e) gives
    w (i + 1 - s) to its first hour i, w to each whole hour between and w (e - j) to its last
    hour j (w (e - s) when i == j); the whole hours go through a difference array. Bins are then
    folded onto the week (bin b -> slot b mod 168).
    """
    first = np.floor(starts).astype(np.int64)
    last = np.floor(ends).astype(np.int64)
    n_bins = int(last.max(initial=0)) + 2
    width = -(-n_bins // HOURS) * HOURS
    row = groups.astype(np.int64) * width
    same = first == last
    partial = np.bincount(np.concatenate((row + first, row[~same] + last[~same])),
                          weights=np.concatenate((weights * np.where(same, ends - starts, first + 1 - starts),
                                                  weights[~same] * (ends[~same] - last[~same]))),
                          minlength=n_groups * width)
    inner = ~same & (last > first + 1)
    steps = np.bincount(np.concatenate((row[inner] + first[inner] + 1, row[inner] + last[inner])),
                        weights=np.concatenate((weights[inner], -weights[inner])),
                        minlength=n_groups * width)
    whole = np.cumsum(steps.reshape(n_groups, width), axis=1)
    per_bin = partial.reshape(n_groups, width) + whole
    return per_bin.reshape(n_groups, width // HOURS, HOURS).sum(axis=1)


def demand_profile(jobs: pd.DataFrame, *, flexible_classes=("batch", "hpo", "training"), growth: float = 1.0,
                   start=None, end=None) -> DemandProfile:
    """The hour-of-week demand profile of `jobs` (the schema's jobs table) in [start, end)."""
    frame = pd.DataFrame({c: jobs[c] for c in _COLUMNS if c in jobs})
    for column in ("submit_utc", "start_utc", "end_utc"):
        if column in frame:
            frame[column] = _naive_utc(frame[column]).to_numpy()
    frame["job_id"] = np.arange(len(frame))
    if frame.empty:
        raise ValueError("demand_profile needs at least one job")
    window_start = _timestamp(start) if start is not None else frame["submit_utc"].min()
    window_end = _timestamp(end) if end is not None else frame["submit_utc"].max()
    if not window_end > window_start:
        raise ValueError(f"empty demand window [{window_start}, {window_end})")

    workload = build_workload(frame, pd.DataFrame({"node": [], "gpus": []}))
    notes = list(workload.notes)
    row = workload.job_id.astype(np.int64)
    gpus = frame["gpus"].fillna(0.0).to_numpy(np.float64)[row]
    gpu_type = workload.gpu_type
    typed = pd.notna(gpu_type)
    if (~typed).sum():
        notes.append(f"{int((~typed).sum())} jobs without a gpu_type skipped")
    keys = pd.MultiIndex.from_arrays([workload.region[typed], gpu_type[typed].astype(str)])
    pools = tuple(sorted(set(keys)))
    pool_of = pd.Index(pools).get_indexer(keys)

    anchor = window_start.normalize() - pd.Timedelta(days=window_start.weekday())
    offset_h = (workload.origin_utc - anchor) / pd.Timedelta(hours=1)
    lo_h = (window_start - anchor) / pd.Timedelta(hours=1)
    hi_h = (window_end - anchor) / pd.Timedelta(hours=1)
    submit_h = offset_h + workload.submit_s[typed] / 3600.0
    starts = np.maximum(submit_h, lo_h)
    ends = np.minimum(submit_h + workload.run_s[typed] / 3600.0, hi_h)
    flexible = np.isin(workload.workload_class[typed], list(flexible_classes))
    inside = (ends > starts) & (gpus[typed] > 0)
    groups = pool_of[inside] * 2 + flexible[inside]
    gpu_hours = _hour_of_week_integral(starts[inside], ends[inside], gpus[typed][inside], groups, 2 * len(pools))
    observed = _hour_of_week_integral(np.array([lo_h]), np.array([hi_h]), np.ones(1), np.zeros(1), 1)[0]
    unseen = int((observed <= 0).sum())
    if unseen:
        notes.append(f"{unseen} hours of the week are not in the window (shorter than a week): their demand is 0")
    mean = np.divide(gpu_hours, observed, out=np.zeros_like(gpu_hours), where=observed > 0) * growth
    mean = mean.reshape(len(pools), 2, HOURS)
    return DemandProfile(pools=pools, firm=mean[:, 0], flexible=mean[:, 1],
                         weeks=float((window_end - window_start) / pd.Timedelta(days=7)),
                         observed_weeks=observed, notes=tuple(notes))
