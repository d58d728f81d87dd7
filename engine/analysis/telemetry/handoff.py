"""Follow-the-sun hand-off: idle GPUs of regions in their off-hours that flexible work queued in
other regions at the same hour could have used. An upper bound read from telemetry, not a schedule.

Per UTC hour h, lending region r (the lender) and borrowing region s (s != r):

    idle[r, h]     = max(capacity_r - busy_r(h), 0) GPU-hours (busy = GPUs allocated to running jobs)
    off[r, h]      = r's region calendar is not at work at the middle of hour h
    waiting[s, r, h] = GPU-hours in hour h of flexible jobs (training, batch, hpo) waiting in s's queue
                       (between submit and start) whose residency tag allows region r
    pair[r, s, h]  = off[r, h] x min(idle[r, h], waiting[s, r, h])

pair[r, s] summed over hours is what r could have lent s had nothing else competed for the same GPUs
or the same jobs: each pair is an upper bound on its own, and pairs must not be added up. The fleet's
bound per hour is

    lendable[h] = min(sum of idle[r, h] over off-hours regions r,
                      GPU-hours of flexible queued jobs allowed in at least one off-hours region
                      other than their own,
                      sum of pair[r, s, h] over all pairs),

each term an upper bound of what could have moved, so their minimum is one too; it never exceeds
the off-hours idle GPU-hours. GPU types, job sizes that do not fit, transfer times and the hour's
start-up are all ignored, which is why these are bounds.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

OFF_REASONS = ("after hours", "weekend", "holiday")
PAIR_COLUMNS = ["from_region", "to_region", "lendable_gpu_hours", "hours", "after_hours_pct", "weekend_pct",
                "holiday_pct", "peak_utc_hour", "from_local_hour", "to_local_hour"]


def pair_bounds(idle: np.ndarray, off: np.ndarray, waiting: np.ndarray) -> np.ndarray:
    """pair[r, s, h] (see the module docstring) from idle (R x H), off (R x H, bool) and
    waiting[s, r, h] (R x R x H); zero on the diagonal."""
    lend = np.minimum(idle[:, None, :], np.transpose(waiting, (1, 0, 2))) * off[:, None, :]
    lend[np.arange(len(idle)), np.arange(len(idle)), :] = 0.0
    return lend


def fleet_bound(idle: np.ndarray, off: np.ndarray, waiting_by_tag: np.ndarray, allowed: np.ndarray,
                pairs: np.ndarray) -> np.ndarray:
    """lendable[h] (see the module docstring). waiting_by_tag[s, c, h] holds the flexible queued
    GPU-hours of region s whose residency tags have allowed-region row c; allowed is (C x R) bool."""
    n = len(idle)
    offered = (idle * off).sum(axis=0)
    # reachable[s, c, h]: some off-hours region other than s allows tag row c
    reachable = np.einsum("cr,rh,sr->sch", allowed.astype(float), off.astype(float), 1.0 - np.eye(n)) > 0
    movable = (waiting_by_tag * reachable).sum(axis=(0, 1))
    return np.minimum(np.minimum(offered, movable), pairs.sum(axis=(0, 1)))


def off_reasons(weekday_works: np.ndarray, holiday: np.ndarray, at_work: np.ndarray) -> np.ndarray:
    """Why each hour is off: "" at work, else "holiday" (a holiday on a working day), "weekend"
    (not a working day of the calendar), or "after hours" (a working day, outside its hours)."""
    return np.select([at_work, ~weekday_works, holiday], ["", "weekend", "holiday"], "after hours")


def pair_table(pairs: np.ndarray, regions: list[str], bin_start_utc: pd.DatetimeIndex, local_hour: np.ndarray,
               reasons: np.ndarray) -> pd.DataFrame:
    """One row per (from_region, to_region) with lendable GPU-hours > 0, largest first.

    hours = hours with something to lend; *_pct = share of the GPU-hours lent while the lender was
    off for that reason; peak_utc_hour = the UTC hour of the day lending the most; from/to_local_hour =
    the two regions' most common local hour at that UTC hour (daylight saving may move it)."""
    utc_hour = np.asarray(bin_start_utc.hour)
    rows = []
    for r, s in zip(*np.nonzero(pairs.sum(axis=2) > 0)):
        lent = pairs[r, s]
        total = float(lent.sum())
        shares = [100.0 * float(lent[reasons[r] == reason].sum()) / total for reason in OFF_REASONS]
        peak = int(np.argmax(np.bincount(utc_hour, weights=lent, minlength=24)))
        at_peak = utc_hour == peak
        rows.append((regions[r], regions[s], total, int((lent > 0).sum()), *shares, peak,
                     _mode(local_hour[r, at_peak]), _mode(local_hour[s, at_peak])))
    out = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    return out.sort_values(["lendable_gpu_hours", "from_region", "to_region"], ascending=[False, True, True],
                           kind="stable").reset_index(drop=True)


def _mode(values: np.ndarray) -> int:
    return int(np.argmax(np.bincount(values.astype(np.int64), minlength=24)))


def part_of_day(local_hour: int) -> str:
    """morning 05-11, afternoon 12-16, evening 17-21, night 22-04 (local clock hours)."""
    if 5 <= local_hour < 12:
        return "morning"
    if 12 <= local_hour < 17:
        return "afternoon"
    if 17 <= local_hour < 22:
        return "evening"
    return "night"


def describe(row) -> str:
    """A pair_table row in plain words."""
    reasons = ", ".join(f"{name} {row[f'{key}_pct']:.0f}%" for name, key in
                        (("after hours", "after_hours"), ("weekends", "weekend"), ("holidays", "holiday"))
                        if row[f"{key}_pct"] >= 0.5)
    return (f"From {row['from_region']}'s {part_of_day(row['from_local_hour'])} "
            f"({row['from_local_hour']:02d}:00 local) to {row['to_region']}'s {part_of_day(row['to_local_hour'])} "
            f"({row['to_local_hour']:02d}:00 local), busiest around {row['peak_utc_hour']:02d}:00 UTC: up to "
            f"{row['lendable_gpu_hours']:,.0f} GPU-hours over {row['hours']:,} hours "
            f"(lender off: {reasons}).")
