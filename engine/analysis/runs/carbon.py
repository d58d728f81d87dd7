"""Emissions of a finished simulation: kgCO2e by region, workload class, team, local hour and job.

With g_jn, t_j and the window [0, W] as in `engine.analysis.runs.cost`, kW(type) from
`CostAssumptions.kw_for` and I_r(h) the grid intensity of region r at local hour h (gCO2e/kWh,
the dataset's carbon table):

  power of job j on node n:  P_jn = kW(type of n) x g_jn                      (kW, IT load)
  energy:                    kWh_jn = P_jn x PUE x t_j / 3600
  emissions:                 kgCO2e_jn = P_jn x PUE x (integral over j's held span of
                                         I_r(local hour at t) dt, in g/kWh x s) / 3600 / 1000
  i.e. GPU power x GPU-hours x PUE x grid intensity of the place and local hour the work ran / 1000.

The local-hour split is exact, not sampled. For each region the window is cut at every instant
where the region's local wall-clock hour changes, found by converting a 15-minute UTC grid with
pandas' tz_convert (every zone's offset is a multiple of 15 minutes; this also cuts at the :30 of
Asia/Kolkata). Daylight-saving changes come out right: a fall-back day has 25 local hours (hour 1
twice), a spring-forward day 23 (no hour 2). Intensity is constant on each piece, so its running
integral C(t) is piecewise linear with knots at the cuts, and C(end) - C(start), by linear
interpolation, is the exact integral for every job in one vectorised step. `by_local_hour`
integrates the held GPUs and power over the same pieces (`engine.analysis.telemetry.intervals.integrate`).
The simulator's timeline is not used: the job intervals are exact.

Counted: the GPUs jobs hold, at board power while held (allocation-based, not measured load);
idle GPUs, CPUs and networking are not. Regions missing from the carbon table use
`CostAssumptions.default_g_co2e_per_kwh`; hours missing from a region's profile use the mean of
its listed hours; regions missing from the regions table are taken to be on UTC. Each such case is
listed in `CarbonReport.assumed`.
"""
from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from engine.analysis.runs.cost import HOUR_S, CostAssumptions, annualise, holdings, run_nodes, window_s
from engine.analysis.telemetry.local_hours import local_hour_bins
from engine.core.intervals import integrate
from engine.sim.output.result import SimulationResult
from engine.world.grid import hourly_intensity

_SUMS = ["gpu_hours", "kwh", "kg_co2e"]


@dataclass(frozen=True)
class CarbonReport:
    """by_region: region, timezone, gpu_hours, kwh, kg_co2e, g_co2e_per_kwh (energy-weighted mean
    intensity), intensity_assumed; by_class: workload_class, gpu_hours, kwh, kg_co2e; by_team: team,
    same; by_local_hour: region, local_hour (0-23), same; jobs: job_id, region, team,
    workload_class, same; totals: see `carbon_report`; assumed: one sentence per assumption made."""

    by_region: pd.DataFrame
    by_class: pd.DataFrame
    by_team: pd.DataFrame
    by_local_hour: pd.DataFrame
    jobs: pd.DataFrame
    totals: dict[str, float]
    assumed: tuple[str, ...]


def _profiles(carbon: pd.DataFrame, regions: list[str], default: float) -> tuple[dict, list[str]]:
    """region -> 24 intensities (g/kWh) by local hour (engine.world.grid), and notes on what was assumed."""
    profiles, notes = {}, []
    for region in regions:
        profiles[region], note = hourly_intensity(carbon, region, default)
        notes.extend([note] if note else [])
    return profiles, notes


def _zones(regions_table: pd.DataFrame, regions: list[str]) -> tuple[dict[str, str], list[str]]:
    """region -> IANA time zone (UTC when the regions table lacks it), and notes."""
    given = dict(zip(regions_table["region"], regions_table["timezone"])) if len(regions_table) else {}
    zones, notes = {}, []
    for region in regions:
        zone = given.get(region)
        if zone is None or pd.isna(zone):
            zone = "UTC"
            notes.append(f"{region}: no time zone; local hours taken as UTC")
        try:
            ZoneInfo(str(zone))
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"region {region!r} has time zone {zone!r}, which is not an IANA name") from None
        zones[region] = str(zone)
    return zones, notes


def _totals(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    return frame.groupby(key, as_index=False, sort=True)[_SUMS].sum()


def carbon_report(result: SimulationResult, fleet: pd.DataFrame, regions: pd.DataFrame, carbon: pd.DataFrame,
                  assumptions: CostAssumptions | None = None) -> CarbonReport:
    """Emissions of `result` on `fleet` with the dataset's regions and carbon tables (module docstring).

    totals: kg_co2e, kwh, gpu_hours, g_co2e_per_kwh (energy-weighted mean intensity), window_s,
    kg_co2e_per_year (annualised over the window)."""
    assumptions = assumptions or CostAssumptions()
    held = holdings(result, run_nodes(fleet, result))
    horizon = window_s(result)
    names = sorted(set(result.capacity_gpus) | set(held["region"]))
    profiles, intensity_notes = _profiles(carbon, names, assumptions.default_g_co2e_per_kwh)
    zones, zone_notes = _zones(regions, names)
    types = held["gpu_type"].astype(str)
    kw_of = {name: assumptions.kw_for(name) for name in types.unique()}
    kw = types.map(kw_of).to_numpy(np.float64) * held["gpus"].to_numpy(np.float64)
    facility_kw = kw * assumptions.pue
    start, end = held["start_s"].to_numpy(np.float64), held["end_s"].to_numpy(np.float64)
    kg = np.zeros(len(held))
    hourly = [pd.DataFrame(columns=["region", "local_hour", *_SUMS])]
    for region in names:
        edges, hours = local_hour_bins(result.origin_utc, horizon, zones[region])
        intensity = profiles[region][hours]
        running = np.concatenate(([0.0], np.cumsum(intensity * np.diff(edges))))   # g/kWh x s
        mine = (held["region"] == region).to_numpy()
        exposure = np.interp(end[mine], edges, running) - np.interp(start[mine], edges, running)
        kg[mine] = facility_kw[mine] * exposure / HOUR_S / 1000.0
        gpu_s = integrate(start[mine], end[mine], held["gpus"].to_numpy(np.float64)[mine], edges)
        kw_s = integrate(start[mine], end[mine], facility_kw[mine], edges)
        hourly.append(pd.DataFrame({
            "region": region, "local_hour": np.arange(24),
            "gpu_hours": np.bincount(hours, weights=gpu_s, minlength=24) / HOUR_S,
            "kwh": np.bincount(hours, weights=kw_s, minlength=24) / HOUR_S,
            "kg_co2e": np.bincount(hours, weights=kw_s * intensity, minlength=24) / HOUR_S / 1000.0}))
    pieces = held[["job_id", "region", "team", "workload_class", "gpu_hours"]].assign(
        kwh=facility_kw * (end - start) / HOUR_S, kg_co2e=kg)
    jobs = pieces.groupby("job_id", as_index=False, sort=True).agg(
        region=("region", "first"), team=("team", "first"), workload_class=("workload_class", "first"),
        gpu_hours=("gpu_hours", "sum"), kwh=("kwh", "sum"), kg_co2e=("kg_co2e", "sum"))
    by_region = pd.DataFrame({"region": names, "timezone": [zones[r] for r in names]}).merge(
        _totals(pieces, "region"), on="region", how="left").fillna({c: 0.0 for c in _SUMS})
    by_region["g_co2e_per_kwh"] = np.divide(by_region["kg_co2e"] * 1000.0, by_region["kwh"],
                                            out=np.zeros(len(by_region)), where=by_region["kwh"] > 0)
    by_region["intensity_assumed"] = [any(note.startswith(f"{r}: ") for note in intensity_notes) for r in names]
    kwh_total, kg_total = float(pieces["kwh"].sum()), float(kg.sum())
    totals = {"kg_co2e": kg_total, "kwh": kwh_total, "gpu_hours": float(pieces["gpu_hours"].sum()),
              "g_co2e_per_kwh": kg_total * 1000.0 / kwh_total if kwh_total > 0 else 0.0, "window_s": horizon,
              "kg_co2e_per_year": annualise(kg_total, horizon, assumptions.annualisation_days) if horizon > 0
              else 0.0}
    return CarbonReport(by_region=by_region, by_class=_totals(pieces, "workload_class"),
                        by_team=_totals(pieces, "team"), by_local_hour=pd.concat(hourly, ignore_index=True),
                        jobs=jobs, totals=totals, assumed=tuple(intensity_notes + zone_notes))
