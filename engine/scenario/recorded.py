"""The `recorded` baseline: the policies that reproduce how a dataset's telemetry was scheduled, and
how closely they do.

Every improvement is measured against a baseline, so the baseline must match what happened. The
dataset says how it was scheduled when its source does (`Store.recorded_scheduler`: the sample's
generator, or an SWF log's "; Note: uses ... scheduler" header line); `recorded_baseline` turns that
into a scenario named "recorded" (RECORDED below; a source that says nothing gets FCFS with EASY
backfilling, the commonest configuration, and the scenario's note says it was assumed).

`reproduction` checks the baseline against the history: per workload class, the p50 and p95 wait of
the jobs that started in both the telemetry and the replay, recorded against replayed, within 10 %
or 6 minutes, whichever is larger (a class whose recorded p50 is 0 cannot deviate by a share).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.scenario.spec import Scenario

TOLERANCE_SHARE = 0.10
TOLERANCE_H = 0.1  # 6 minutes
REPRODUCTION_COLUMNS = ("workload_class", "jobs", "recorded_p50_h", "replayed_p50_h", "recorded_p95_h",
                        "replayed_p95_h", "p50_deviation_pct", "p95_deviation_pct", "within")


@dataclass(frozen=True)
class Recorded:
    """The policies (family -> registry key) of one recorded scheduler, and what they stand for."""

    policies: dict[str, str]
    description: str


RECORDED = {
    "per-pool-fifo": Recorded({"order": "fcfs", "backfill": "per-pool", "placement": "best-fit"},
                              "first come, first served on each pool (one region's GPUs of one model) with "
                              "best-fit placement and no backfilling, users giving up as recorded: how the "
                              "sample's generator scheduled its history (engine.telemetry.synth.fifo)"),
    "easy": Recorded({"order": "fcfs", "backfill": "easy"},
                     "first come, first served with EASY backfilling, the scheduler the log's header names"),
    "maui": Recorded({"order": "fcfs", "backfill": "easy"},
                     "the log's header names the Maui scheduler, modelled as first come, first served with EASY "
                     "backfilling (Maui's priorities, fair share and per-user limits are not modelled)"),
}
ASSUMED = Recorded({"order": "fcfs", "backfill": "easy"},
                   "the data does not say how it was scheduled: first come, first served with EASY backfilling "
                   "(the commonest configuration) is assumed")


def recorded_of(scheduler: str | None) -> Recorded:
    """The recorded scheduler of a dataset (`Store.recorded_scheduler`; None or unknown: ASSUMED)."""
    return RECORDED.get(scheduler or "", ASSUMED)


def recorded_spec(scheduler: str | None) -> dict:
    """The scenario "recorded" of a dataset scheduled by `scheduler`, as a Scenario.from_dict dict. Any
    job may run on spot nodes, as the history placed it ([spot] interruptible_only = false)."""
    return {"name": "recorded", "policies": {f: {"key": k} for f, k in recorded_of(scheduler).policies.items()},
            "spot": {"interruptible_only": False}}


def recorded_baseline(scheduler: str | None) -> Scenario:
    """The scenario "recorded" for a dataset whose telemetry was scheduled by `scheduler`."""
    return Scenario.from_dict(recorded_spec(scheduler))


def reproduction(jobs: pd.DataFrame, replayed: pd.DataFrame) -> pd.DataFrame:
    """Recorded against replayed waits per workload class (REPRODUCTION_COLUMNS), over the jobs that
    started in both: `jobs` the dataset's table (job_id, workload_class, submit_utc, start_utc),
    `replayed` a SimulationResult's jobs table (job_id, started, wait_s). Deviations in % of the
    recorded value (NaN when that is 0); `within` as the module docstring says. An "all" row first."""
    recorded = jobs.assign(recorded_s=(pd.to_datetime(jobs["start_utc"]) - pd.to_datetime(jobs["submit_utc"]))
                           .dt.total_seconds())[["job_id", "workload_class", "recorded_s"]]
    both = recorded.merge(replayed.loc[replayed["started"], ["job_id", "wait_s"]], on="job_id", how="inner")
    both = both[both["recorded_s"].notna()]
    groups = [("all", both), *((str(c), rows) for c, rows in both.groupby("workload_class", sort=True))]
    return pd.DataFrame([_row(name, rows) for name, rows in groups], columns=list(REPRODUCTION_COLUMNS))


def _row(name: str, rows: pd.DataFrame) -> dict:
    out = {"workload_class": name, "jobs": len(rows)}
    ok = True
    for q in (50, 95):
        rec = float(np.quantile(rows["recorded_s"], q / 100)) / 3600.0 if len(rows) else 0.0
        rep = float(np.quantile(rows["wait_s"], q / 100)) / 3600.0 if len(rows) else 0.0
        out[f"recorded_p{q}_h"], out[f"replayed_p{q}_h"] = rec, rep
        out[f"p{q}_deviation_pct"] = 100.0 * (rep - rec) / rec if rec > 0 else np.nan
        ok &= abs(rep - rec) <= max(TOLERANCE_SHARE * rec, TOLERANCE_H)
    out["within"] = bool(ok)
    return out
