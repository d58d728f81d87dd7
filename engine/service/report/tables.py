"""The report's tables, from the runs engine.service.compare made (no number is computed twice).

W is a run's measurement window (seconds), H = W / 3600, N_r the GPUs installed in region r.

  region utilisation      U_r = GPU-hours held by jobs in r inside the window / (N_r x H)
                          (cost report's gpu_hours_used; summed over regions it is the fleet's
                          `utilization` x fleet GPUs x H)
  region idle $/yr        idle dollars of r's reserved GPUs x days per year x 86400 / W
  region spend $/yr       all dollars of r (every tier) x days per year x 86400 / W
  region carbon t/yr      kgCO2e of work run in r x days per year x 86400 / W / 1000
  local-hour utilisation  U_r(h) = GPU-hours held in r while r's wall clock showed hour h /
                          (N_r x hours of the window at local hour h in r); exact over the
                          pieces carbon_report cuts at every local-hour change (DST-aware)
  p95 wait by class       engine.analysis.runs.sim_metrics.by_group's wait_p95_s (started jobs)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.cost import DAY_S, HOUR_S
from engine.analysis.runs.roles_kpis import archive_storage_by_region
from engine.analysis.runs.sim_metrics import by_group
from engine.analysis.telemetry.local_hours import local_hour_bins
from engine.service.compare import Run

REGION_COLUMNS = ["region", "gpus_baseline", "gpus_candidate", "util_baseline", "util_candidate",
                  "idle_usd_per_year_baseline", "idle_usd_per_year_candidate", "spend_usd_per_year_baseline",
                  "spend_usd_per_year_candidate", "carbon_t_per_year_baseline", "carbon_t_per_year_candidate"]


def _per_year(run: Run, days_per_year: float) -> float:
    """The factor that turns a figure over the run's window into one per year."""
    window = run.world.cost.totals["window_s"]
    return days_per_year * DAY_S / window if window > 0 else 0.0


def region_figures(run: Run, days_per_year: float) -> pd.DataFrame:
    """region, gpus, util, idle_usd_per_year, spend_usd_per_year, carbon_t_per_year of one run. A region's
    spend holds the egress of the jobs that ran there (the data they pulled in) and, when the run made
    replicas, its share of their storage by the GB it holds (engine.analysis.runs.data_kpis), and, when it is an
    archive region ([roles]), the storage of the checkpoints and datasets it kept (engine.analysis.runs.roles_kpis)."""
    cost, carbon = run.world.cost.by_region, run.world.carbon.by_region
    hours = run.world.cost.totals["window_s"] / HOUR_S
    year = _per_year(run, days_per_year)
    table = cost[["region", "installed_gpus", "gpu_hours_used", "idle_usd", "usd"]].merge(
        carbon[["region", "kg_co2e"]], on="region", how="left").fillna({"kg_co2e": 0.0})
    pulled = run.world.cost.jobs.groupby("region")["egress_usd"].sum() if "egress_usd" in run.world.cost.jobs \
        else pd.Series(dtype=float)
    archived = archive_storage_by_region(run.result) if run.result is not None else pd.Series(dtype=float)
    replicas = run.world.cost.totals.get("usd_storage", 0.0) - float(archived.sum())
    table["usd"] = table["usd"] + table["region"].map(pulled).fillna(0.0) \
        + _storage_shares(run, table["region"]) * replicas + table["region"].map(archived).fillna(0.0)
    capacity = table["installed_gpus"].to_numpy(np.float64) * hours
    return pd.DataFrame({
        "region": table["region"], "gpus": table["installed_gpus"],
        "util": np.divide(table["gpu_hours_used"], capacity, out=np.zeros(len(table)), where=capacity > 0),
        "idle_usd_per_year": table["idle_usd"] * year, "spend_usd_per_year": table["usd"] * year,
        "carbon_t_per_year": table["kg_co2e"] * year / 1000.0})


def _storage_shares(run: Run, regions: pd.Series) -> np.ndarray:
    """Each region's share of the GB the run's replicas hold (0 everywhere without replicas)."""
    held = run.result.datasets if run.result is not None else None
    if held is None or held.empty:
        return np.zeros(len(regions))
    gb = {}
    for size, where in zip(held["size_gb"].astype(float), held["replicas"]):
        for region in filter(None, where.split(";")):
            gb[region] = gb.get(region, 0.0) + size
    total = sum(gb.values())
    return regions.map(gb).fillna(0.0).to_numpy(np.float64) / total if total > 0 else np.zeros(len(regions))


def region_table(baseline: Run, candidate: Run, days_per_year: float) -> pd.DataFrame:
    """REGION_COLUMNS, one row per region of either run (0 where a region is absent from one)."""
    base, cand = region_figures(baseline, days_per_year), region_figures(candidate, days_per_year)
    table = base.merge(cand, on="region", how="outer", suffixes=("_baseline", "_candidate")).fillna(0.0)
    return table[REGION_COLUMNS].sort_values("region", kind="stable").reset_index(drop=True)


def local_hour_utilisation(run: Run) -> pd.DataFrame:
    """region, local_hour (0-23), util (0-1; NaN for an hour the window never shows)."""
    result, carbon = run.result, run.world.carbon
    window = carbon.totals["window_s"]
    zones = dict(zip(carbon.by_region["region"], carbon.by_region["timezone"]))
    rows = []
    for region, capacity in sorted(result.capacity_gpus.items()):
        edges, hours = local_hour_bins(result.origin_utc, window, zones.get(region, "UTC"))
        span_h = np.bincount(hours, weights=np.diff(edges), minlength=24) / HOUR_S
        held = carbon.by_local_hour[carbon.by_local_hour["region"] == region].set_index("local_hour")
        held_h = held["gpu_hours"].reindex(range(24), fill_value=0.0).to_numpy(np.float64)
        available = float(capacity) * span_h
        util = np.divide(held_h, available, out=np.full(24, np.nan), where=available > 0)
        rows.append(pd.DataFrame({"region": region, "local_hour": np.arange(24), "util": util}))
    return pd.concat(rows, ignore_index=True)


def class_waits(runs: list[Run]) -> pd.DataFrame:
    """scenario, workload_class, jobs, wait_p95_s per run and workload class."""
    return pd.concat([by_group(run.result, "workload_class")[["workload_class", "jobs", "wait_p95_s"]]
                      .assign(scenario=run.scenario.name) for run in runs], ignore_index=True)[
        ["scenario", "workload_class", "jobs", "wait_p95_s"]]


def kpi_table(runs: list[Run]) -> pd.DataFrame:
    """kpi, then one column per scenario: exactly the values `meridian compare` prints."""
    keys = list(runs[0].kpis)
    return pd.DataFrame({"kpi": keys, **{run.scenario.name: [run.kpis.get(k, np.nan) for k in keys]
                                        for run in runs}})
