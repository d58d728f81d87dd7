"""Everything the Overview page shows, computed from one dataset's tables.

Steps (jobs data):
 1. The window: whole UTC hours from the first submit/start to the last end/start/submit.
 2. Allocations: started jobs hold `gpus` GPUs over [start, end) (running ones to the data's end).
 3. Capacity per (region, GPU type) from the fleet, else inferred (see `capacity`).
 4. Busy and capacity GPU-hours per UTC hour -> timeline, idle hours, KPIs (no dollars: see
    engine.analysis.telemetry.idle).
 5. The same on each region's local-clock hours -> the hour-of-week heat map.
 6. Waits and the job mix from the job rows.
Utilisation-only data (no jobs, a utilization table) gives steps 1, 4 and 5 from the samples.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from engine.analysis.telemetry import activity, busy, heatmap, idle, kpis, mix, timeline, waits
from engine.analysis.telemetry import capacity as cap_mod
from engine.analysis.telemetry.window import Window


@dataclass(frozen=True)
class Overview:
    """Result of `build_overview`. kind is 'jobs', 'samples' or 'empty' (nothing to analyse)."""

    kind: str
    kpis: kpis.Kpis | None = None
    hourly: pd.DataFrame = field(default_factory=pd.DataFrame)        # timeline.TIMELINE_COLUMNS
    daily: pd.DataFrame = field(default_factory=pd.DataFrame)
    fleet_hourly: pd.DataFrame = field(default_factory=pd.DataFrame)  # the same, all regions together
    fleet_daily: pd.DataFrame = field(default_factory=pd.DataFrame)
    heatmap: pd.DataFrame = field(default_factory=pd.DataFrame)       # heatmap.HEATMAP_COLUMNS
    idle_by_type: pd.DataFrame = field(default_factory=pd.DataFrame)  # idle.TYPE_IDLE_COLUMNS
    capacity: pd.DataFrame = field(default_factory=pd.DataFrame)      # capacity.CAPACITY_COLUMNS
    wait_summary: pd.DataFrame = field(default_factory=pd.DataFrame)  # waits.SUMMARY_COLUMNS
    wait_ecdf: pd.DataFrame = field(default_factory=pd.DataFrame)
    mix: pd.DataFrame = field(default_factory=pd.DataFrame)           # mix.MIX_COLUMNS
    assumptions: tuple[str, ...] = ()


def _jobs(n: int) -> str:
    return f"{n:,} job" + ("" if n == 1 else "s")


def _timezones(regions: pd.DataFrame, used, notes: list[str]) -> dict[str, str]:
    zones = dict(zip(regions["region"].astype(str), regions["timezone"].astype(str))) if not regions.empty else {}
    missing = sorted(set(used) - set(zones))
    if missing:
        notes.append(f"No time zone recorded for {', '.join(missing)}: their local time is taken as UTC.")
    return {r: zones.get(r, "UTC") for r in used}


def _window_note(window: Window) -> str:
    return (f"Time range: {window.data_start_utc:%Y-%m-%d %H:%M} to {window.data_end_utc:%Y-%m-%d %H:%M} UTC, "
            f"analysed as {window.hours:.0f} whole UTC hours ({window.days:.1f} days).")


def _region_hourly(hourly: pd.DataFrame) -> pd.DataFrame:
    out = hourly.groupby(["region", "bin_start_utc"], as_index=False)[["busy_gpu_hours", "capacity_gpu_hours"]].sum()
    return out.rename(columns={"busy_gpu_hours": "busy_unit_hours", "capacity_gpu_hours": "capacity_unit_hours"})


def _timelines(region_hours: pd.DataFrame) -> dict[str, pd.DataFrame]:
    hourly = timeline.utilisation_timeline(region_hours, "hourly")
    daily = timeline.utilisation_timeline(region_hours, "daily")
    return {"hourly": hourly, "daily": daily, "fleet_hourly": timeline.fleet_timeline(hourly),
            "fleet_daily": timeline.fleet_timeline(daily)}


def _capacity_note(cap: pd.DataFrame, source: str) -> str:
    total = cap["capacity_gpus"].sum()
    if source == "fleet":
        return f"Capacity: {total:,.0f} GPUs from the fleet table."
    inferred = cap[cap["capacity_source"] == "inferred"]
    pairs = ", ".join(f"{r}/{t} {g:,.0f}" for r, t, g in inferred[["region", "gpu_type", "capacity_gpus"]]
                      .itertuples(index=False))
    head = "No fleet table" if source == "inferred" else "Not every region and GPU type is in the fleet table"
    return (f"{head}: capacity inferred as the peak concurrent allocation ({pairs}). Real capacity can only be "
            "larger, so utilisation is an upper bound and idle time a lower bound.")


def _jobs_overview(jobs, fleet, regions) -> Overview:
    notes: list[str] = []
    window = activity.job_window(jobs)
    intervals = activity.job_intervals(jobs, window)
    tiers = cap_mod.fleet_tiers(fleet)
    unknown = int((intervals["gpu_type"] == activity.UNKNOWN_GPU).sum())
    intervals = cap_mod.spread_unknown_types(intervals, tiers)
    cap, _ = cap_mod.capacity(tiers, intervals)
    source = cap_mod.capacity_source(cap)
    spread = unknown - int((intervals["gpu_type"] == activity.UNKNOWN_GPU).sum())
    if spread:
        notes.append(f"{_jobs(spread)} without a GPU type were spread over their region's GPU types "
                     "in proportion to capacity.")
    running = int((jobs["start_utc"].notna() & jobs["end_utc"].isna()).sum())
    if running:
        notes.append(f"{_jobs(running)} still running count as busy until the data's last instant.")
    hourly = busy.hourly_by_type(intervals, cap, window)
    by_type = idle.idle_by_type(hourly)
    zones = _timezones(regions, cap["region"].unique(), notes)
    local = busy.job_region_bins(intervals, cap_mod.region_capacity(cap), window,
                                 lambda region: window.local_hour_edges(zones[region]))
    region_hourly = _region_hourly(hourly)
    job_waits = waits.job_waits(jobs)
    return Overview(
        kind="jobs",
        kpis=kpis.headline(region_hourly, by_type, p95_wait_h=waits.overall_p95_wait_h(job_waits), jobs=len(jobs),
                           capacity_units=cap["capacity_gpus"].sum(), unit="gpus", window=window,
                           capacity_source=source),
        **_timelines(region_hourly),
        heatmap=heatmap.hour_of_week(local, zones),
        idle_by_type=by_type, capacity=cap,
        wait_summary=waits.wait_summary(job_waits), wait_ecdf=waits.wait_ecdf(job_waits),
        mix=mix.job_mix(jobs, window.data_end_utc),
        assumptions=(_window_note(window), _capacity_note(cap, source), *notes),
    )


def _samples_overview(samples, regions) -> Overview:
    notes: list[str] = []
    intervals, window, unit = activity.sample_intervals(samples)
    if samples["unit"].nunique() > 1:
        notes.append(f"Samples in other units than {unit} were left out.")
    zones = _timezones(regions, sorted(intervals["region"].unique()), notes)
    utc = busy.sample_region_bins(intervals, window, lambda region: window.hour_edges())
    local = busy.sample_region_bins(intervals, window, lambda region: window.local_hour_edges(zones[region]))
    hourly = utc.rename(columns={"busy_unit_hours": "busy_gpu_hours", "capacity_unit_hours": "capacity_gpu_hours"})
    hourly = hourly.assign(gpu_type=activity.UNKNOWN_GPU)
    mean_total = (hourly.groupby("region")["capacity_gpu_hours"].sum() / window.hours).rename("capacity_gpus")
    by_type = idle.idle_by_type(hourly)
    cap = mean_total.reset_index().assign(gpu_type=activity.UNKNOWN_GPU, capacity_source="samples")[
        cap_mod.CAPACITY_COLUMNS]
    notes.append(f"Utilisation from samples of busy and total {unit}: each sample holds until the next one of "
                 f"its series (at most {activity.MAX_HOLD_SPACINGS:g} typical spacings; longer gaps count as no data).")
    return Overview(
        kind="samples",
        kpis=kpis.headline(utc, by_type, p95_wait_h=float("nan"), jobs=0, capacity_units=mean_total.sum(),
                           unit=unit, window=window, capacity_source="samples"),
        **_timelines(utc),
        heatmap=heatmap.hour_of_week(local, zones),
        idle_by_type=by_type, capacity=cap,
        assumptions=(_window_note(window), *notes),
    )


def build_overview(jobs: pd.DataFrame, fleet: pd.DataFrame, regions: pd.DataFrame,
                   utilization: pd.DataFrame) -> Overview:
    """The Overview of one dataset from its tables (as returned by the store, without `dataset`).

    Jobs take precedence; without jobs, utilisation samples are used; with neither, kind='empty'.
    """
    if not jobs.empty and jobs["start_utc"].notna().any():
        return _jobs_overview(jobs, fleet, regions)
    if not utilization.empty:
        return _samples_overview(utilization, regions)
    reason = "It has job records but none of them started." if not jobs.empty else \
        "It has no job records and no utilisation samples."
    no_jobs = pd.DataFrame(columns=["region", "gpu_type", "start_h", "end_h", "gpus"])
    cap, _ = cap_mod.capacity(cap_mod.fleet_tiers(fleet), no_jobs)
    return Overview(kind="empty", capacity=cap, assumptions=(reason,))
