"""Everything the Time zones page shows, computed from one dataset's tables.

Steps (all times UTC, in whole-hour bins of the Overview's window):
 1. The window: whole UTC hours from the first submit/start to the last end/start/submit.
 2. Running: a started job holds `gpus` GPUs from start to end (a running one until the data's last
    instant) -> busy GPU-hours per region and hour; capacity per region from the fleet, else the peak
    allocation (exactly as the Overview, so utilisation agrees with it).
 3. Waiting: a job waits with its `gpus` from submit to start; one that never started waits until its
    end (cancelled in the queue) or the data's end (still pending) -> queued GPU-hours.
    demand = busy + queued (GPUs asked for by jobs submitted and not yet finished); submitted = GPUs of
    the jobs submitted in the hour (one submitted at the window's very end counts in its last hour).
 4. Region calendars (see workhours): at work or off, and why, at the middle of each hour.
 5. The follow-the-sun hand-off (see handoff), with residency tags limiting where waiting jobs may go.
 6. Profiles per region and UTC hour of day (and UTC hour of week, Monday 00:00-00:59 = 0):
    X_gpus = sum of X GPU-hours over those hours / their number (a mean number of GPUs);
    utilisation_pct = 100 x sum busy / sum capacity; demand_pct = 100 x sum demand / sum capacity;
    at_work_pct = share of those hours the region was at work.
 7. Residency audit: `engine.world.residency.violations` over the jobs that started.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.analysis.telemetry import activity, handoff, workhours
from engine.analysis.telemetry import capacity as cap_mod
from engine.analysis.telemetry.timeline import utilisation_pct
from engine.core.intervals import integrate
from engine.core.vocabulary import DEFAULT_REGION, FLEXIBLE_CLASSES
from engine.world import residency
from engine.world.team_hours import REGION, TEAM, home_teams, homed_calendars

HOURLY_COLUMNS = ["region", "bin_start_utc", "capacity_gpus", "busy_gpu_hours", "queued_gpu_hours",
                  "flexible_queued_gpu_hours", "submitted_gpus", "idle_gpu_hours", "at_work", "off_reason",
                  "local_hour"]
PROFILE_VALUES = ["capacity_gpus", "busy_gpus", "queued_gpus", "demand_gpus", "submitted_gpus", "off_idle_gpus",
                  "utilisation_pct", "demand_pct", "at_work_pct"]
DAILY_COLUMNS = ["region", "date", "busy_gpu_hours", "capacity_gpu_hours", "utilisation_pct"]


@dataclass(frozen=True)
class ResidencyAudit:
    """violations is None when the audit could not run; message says what was found or why not."""

    violations: int | None
    table: pd.DataFrame   # residency.violations columns: job_id, region, tag, allowed
    message: str


@dataclass(frozen=True)
class TimeZones:
    """Result of `build_timezones`. kind is 'jobs', or 'empty' with `reason` saying why."""

    kind: str
    reason: str = ""
    start_utc: pd.Timestamp | None = None
    end_utc: pd.Timestamp | None = None
    hourly: pd.DataFrame = field(default_factory=pd.DataFrame)            # HOURLY_COLUMNS
    by_hour: pd.DataFrame = field(default_factory=pd.DataFrame)           # region, utc_hour, PROFILE_VALUES
    by_hour_of_week: pd.DataFrame = field(default_factory=pd.DataFrame)   # region, utc_hour_of_week, ...
    daily: pd.DataFrame = field(default_factory=pd.DataFrame)             # DAILY_COLUMNS
    calendar: str = REGION                                                # whose hours: "region" | "team"
    calendar_use: pd.DataFrame = field(default_factory=pd.DataFrame)      # region, working_hours_of
    calendars: dict = field(default_factory=dict)                         # workhours.calendars
    calendar_table: pd.DataFrame = field(default_factory=pd.DataFrame)    # workhours.CALENDAR_COLUMNS
    holidays: pd.DataFrame = field(default_factory=pd.DataFrame)          # workhours.HOLIDAY_COLUMNS
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)             # handoff.PAIR_COLUMNS
    handoff_by_hour: pd.DataFrame = field(default_factory=pd.DataFrame)   # utc_hour, lendable_gpus, off_idle_gpus
    idle_gpu_hours: float = 0.0
    off_hours_idle_gpu_hours: float = 0.0
    flexible_queued_gpu_hours: float = 0.0
    lendable_gpu_hours: float = 0.0
    residency: ResidencyAudit | None = None
    notes: tuple[str, ...] = ()

    def weeks(self) -> list[pd.Timestamp]:
        """Mondays 00:00 UTC of the weeks the data touches."""
        return workhours.week_starts(self.start_utc, self.end_utc)

    def default_week(self) -> pd.Timestamp:
        return workhours.default_week(self.start_utc, self.end_utc)

    def bands(self, week_start: pd.Timestamp) -> pd.DataFrame:
        """Working-hour bands of every region and team in that UTC week (workhours.bands)."""
        return workhours.bands(self.calendars, week_start)

    def week_hours(self, week_start: pd.Timestamp) -> pd.DataFrame:
        """Every region's and team's working hours in that UTC week, teams beside their home regions
        (workhours.week_hours)."""
        return workhours.week_hours(self.calendar_table, self.bands(week_start), self.holidays, week_start)

    def day_bands(self, week_start: pd.Timestamp) -> pd.DataFrame:
        """Each calendar's usual shift that week in UTC hours of the day (workhours.day_bands)."""
        return workhours.day_bands(self.bands(week_start))


def _per_region(names: list[str], region: np.ndarray, start_h, end_h, weight, edges) -> np.ndarray:
    """(regions x hours) integrals of `weight` held over [start_h, end_h), per region."""
    return np.stack([integrate(start_h[region == name], end_h[region == name], weight[region == name], edges)
                     for name in names]) if names else np.zeros((0, len(edges) - 1))


def _allowed(jobs: pd.DataFrame, regions: pd.DataFrame, names: list[str], notes: list[str]) -> np.ndarray:
    """(jobs x names) bool: may the job run in that region by its residency tag. Regions missing from
    the regions table take untagged jobs only; unreadable tags lift every restriction (with a note)."""
    everywhere = np.ones((len(jobs), len(names)), dtype=bool)
    if regions.empty or "residency" not in jobs:
        return everywhere
    try:
        mask = residency.allowed_mask(jobs, regions)
    except ValueError as exc:
        notes.append(f"Residency tags ignored for the hand-off: {exc}")
        return everywhere
    untagged = jobs["residency"].astype("string").str.strip().fillna("").eq("").to_numpy()
    column = {str(name): i for i, name in enumerate(regions["region"])}
    return np.stack([mask[:, column[n]] if n in column else untagged for n in names], axis=1)


def working_calendars(cals: dict, teams: pd.DataFrame, names: list[str], calendar: str) -> list[list]:
    """Per region of `names`, the calendars whose working hours make it "at work": its own (None when it
    has no usable one) or, with `calendar` "team", those of the teams homed there, the rule of
    engine.world.team_hours (a region with no team, or none with a usable calendar, keeps its own)."""
    team_cals = {name: cal for (kind, name), cal in cals.items() if kind == "team"} if calendar == TEAM else {}
    return homed_calendars(team_cals, home_teams(teams if team_cals else None), names,
                           lambda name: cals.get(("region", name)))


def _calendar_state(cals: dict, working: list[list], names: list[str],
                    mid_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(at_work, off_reason, local_hour), each regions x hours, at the hours' midpoints: a region is at work
    while any of its `working` calendars is; off on a "weekend" when none works that weekday, on a
    "holiday" when one whose working day it is has a holiday. local_hour is on the region's own clock. A
    region without a usable calendar counts as at work (it never lends)."""
    at_work = np.ones((len(names), len(mid_s)), dtype=bool)
    reason = np.full(at_work.shape, "", dtype=object)
    local_hour = np.zeros(at_work.shape, dtype=np.int64)
    for i, name in enumerate(names):
        own = cals.get(("region", name))
        if own is not None:
            local_hour[i] = own.local_hour_of_week(mid_s) % 24
        if working[i] == [None]:
            continue
        weekday = np.stack([np.isin(cal.local_hour_of_week(mid_s) // 24, cal.working_days) for cal in working[i]])
        holiday = np.stack([cal.is_holiday(mid_s) for cal in working[i]])
        at_work[i] = np.any([cal.at_work(mid_s) for cal in working[i]], axis=0)
        reason[i] = handoff.off_reasons(weekday.any(axis=0), (weekday & holiday).any(axis=0), at_work[i])
    return at_work, reason, local_hour


def _calendar_use(cals: dict, working: list[list], names: list[str]) -> pd.DataFrame:
    """Per region, whose working hours its off-hours figures follow: "region's own" calendar, "teams: a, b"
    (those of the teams homed there) or "none usable (always at work)"."""
    label = {id(cal): (kind, name) for (kind, name), cal in cals.items()}

    def whose(cals_of: list) -> str:
        if cals_of == [None]:
            return "none usable (always at work)"
        keys = [label[id(cal)] for cal in cals_of]
        return "region's own" if keys[0][0] == "region" else "teams: " + ", ".join(name for _, name in keys)
    return pd.DataFrame({"region": names, "working_hours_of": [whose(c) for c in working]})


def _profile(hourly: pd.DataFrame, key: str, values: pd.Series) -> pd.DataFrame:
    frame = hourly.assign(**{key: values, "demand_gpu_hours": hourly["busy_gpu_hours"] + hourly["queued_gpu_hours"],
                             "off_idle": hourly["idle_gpu_hours"] * ~hourly["at_work"], "hours": 1})
    sums = frame.groupby(["region", key], as_index=False)[
        ["capacity_gpus", "busy_gpu_hours", "queued_gpu_hours", "demand_gpu_hours", "submitted_gpus", "off_idle",
         "at_work", "hours"]].sum()
    n = sums["hours"]
    out = sums[["region", key]].assign(
        capacity_gpus=sums["capacity_gpus"] / n, busy_gpus=sums["busy_gpu_hours"] / n,
        queued_gpus=sums["queued_gpu_hours"] / n, demand_gpus=sums["demand_gpu_hours"] / n,
        submitted_gpus=sums["submitted_gpus"] / n, off_idle_gpus=sums["off_idle"] / n,
        utilisation_pct=utilisation_pct(sums["busy_gpu_hours"], sums["capacity_gpus"]),
        demand_pct=utilisation_pct(sums["demand_gpu_hours"], sums["capacity_gpus"]),
        at_work_pct=100.0 * sums["at_work"] / n)
    return out.sort_values(["region", key], kind="stable").reset_index(drop=True)


def _daily(hourly: pd.DataFrame) -> pd.DataFrame:
    days = hourly.assign(date=hourly["bin_start_utc"].dt.normalize(), capacity_gpu_hours=hourly["capacity_gpus"])
    out = days.groupby(["region", "date"], as_index=False)[["busy_gpu_hours", "capacity_gpu_hours"]].sum()
    out["utilisation_pct"] = utilisation_pct(out["busy_gpu_hours"], out["capacity_gpu_hours"])
    return out[DAILY_COLUMNS]


def audit_residency(jobs: pd.DataFrame, regions: pd.DataFrame) -> ResidencyAudit:
    """Residency violations among the jobs that started (ran somewhere)."""
    empty = pd.DataFrame(columns=["job_id", "region", "tag", "allowed"])
    ran = jobs[jobs["start_utc"].notna()]
    tagged = int(ran["residency"].astype("string").str.strip().fillna("").ne("").sum()) if "residency" in ran else 0
    if not tagged:
        return ResidencyAudit(0, empty, "No job that ran carries a residency tag, so none can violate one.")
    if regions.empty:
        return ResidencyAudit(None, empty, "No regions table: the regions' jurisdictions are unknown, so "
                                           "residency cannot be audited.")
    try:
        table = residency.violations(ran, regions)
    except ValueError as exc:
        return ResidencyAudit(None, empty, f"Residency could not be audited: {exc}")
    if table.empty:
        return ResidencyAudit(0, table, f"All {tagged:,} jobs that ran with a residency tag ran in a region "
                                        "their tag allows.")
    return ResidencyAudit(len(table), table, f"{len(table):,} of the {tagged:,} jobs that ran with a residency "
                                             "tag ran in a region their tag does not allow.")


def build_timezones(jobs: pd.DataFrame, fleet: pd.DataFrame, regions: pd.DataFrame,
                    teams: pd.DataFrame, calendar: str = REGION) -> TimeZones:
    """The Time zones analysis of one dataset's tables (as the store returns them). `calendar` says whose
    working hours make a region off-hours (and so its idle GPUs off-hours idle and lendable): "region"
    its own calendar, "team" those of the teams homed there (see `working_calendars`)."""
    if jobs.empty:
        return TimeZones("empty", reason="It has no job records: demand, utilisation and the hand-off all "
                                         "come from jobs.")
    notes: list[str] = []
    window = activity.job_window(jobs)
    edges = window.hour_edges()
    n_hours = len(edges) - 1
    tiers = cap_mod.fleet_tiers(fleet)
    running = cap_mod.spread_unknown_types(activity.job_intervals(jobs, window), tiers)
    cap, _ = cap_mod.capacity(tiers, running)
    region_gpus = cap_mod.region_capacity(cap)
    job_region = jobs["region"].astype(object).fillna(DEFAULT_REGION).astype(str).to_numpy()
    names = sorted(set(region_gpus.index.astype(str)) | set(job_region))

    busy = _per_region(names, running["region"].astype(str).to_numpy(), running["start_h"].to_numpy(),
                       running["end_h"].to_numpy(), running["gpus"].to_numpy(), edges)
    submit_h, start_h, end_h = (window.to_hours(jobs[c]) for c in ("submit_utc", "start_utc", "end_utc"))
    data_end_h = float(window.to_hours(pd.Series([window.data_end_utc]))[0])
    wait_end = np.where(~np.isnan(start_h), start_h, np.where(~np.isnan(end_h), end_h, data_end_h))
    gpus = jobs["gpus"].to_numpy(dtype=float)
    waits = (wait_end > submit_h) & (gpus > 0)
    queued = _per_region(names, job_region[waits], submit_h[waits], wait_end[waits], gpus[waits], edges)
    flexible = waits & jobs["workload_class"].isin(FLEXIBLE_CLASSES).to_numpy()
    flex_queued = _per_region(names, job_region[flexible], submit_h[flexible], wait_end[flexible], gpus[flexible],
                              edges)
    submit_bin = np.clip(np.floor(submit_h).astype(np.int64), 0, n_hours - 1)
    region_index = {name: i for i, name in enumerate(names)}
    submitted = np.zeros((len(names), n_hours))
    np.add.at(submitted, ([region_index[r] for r in job_region], submit_bin), gpus)

    capacity = region_gpus.reindex(names, fill_value=0.0).to_numpy(dtype=float)
    idle = np.maximum(capacity[:, None] - busy, 0.0)
    cals = workhours.calendars(regions, teams, names, notes)
    working = working_calendars(cals, teams, names, calendar)
    start_s = window.start_utc.tz_localize("UTC").timestamp()
    at_work, reason, local_hour = _calendar_state(cals, working, names, start_s + (np.arange(n_hours) + 0.5) * 3600.0)
    off = ~at_work

    # flexible waiting jobs grouped by (home region, allowed-region row) for the hand-off bounds
    allowed_rows, tag_row = np.unique(_allowed(jobs[flexible], regions, names, notes), axis=0, return_inverse=True)
    waiting_by_tag = np.zeros((len(names), len(allowed_rows), n_hours))
    home = np.array([region_index[r] for r in job_region[flexible]], dtype=np.int64)
    for s, c in set(zip(home.tolist(), tag_row.ravel().tolist())):
        rows = (home == s) & (tag_row.ravel() == c)
        waiting_by_tag[s, c] = integrate(submit_h[flexible][rows], wait_end[flexible][rows], gpus[flexible][rows],
                                         edges)
    waiting = np.einsum("sch,cr->srh", waiting_by_tag, allowed_rows.astype(float))
    pairs = handoff.pair_bounds(idle, off, waiting)
    lendable = handoff.fleet_bound(idle, off, waiting_by_tag, allowed_rows, pairs)

    bins = window.start_utc + pd.to_timedelta(np.arange(n_hours), unit="h")
    hourly = pd.DataFrame({
        "region": np.repeat(names, n_hours), "bin_start_utc": np.tile(bins, len(names)),
        "capacity_gpus": np.repeat(capacity, n_hours), "busy_gpu_hours": busy.ravel(),
        "queued_gpu_hours": queued.ravel(), "flexible_queued_gpu_hours": flex_queued.ravel(),
        "submitted_gpus": submitted.ravel(), "idle_gpu_hours": idle.ravel(), "at_work": at_work.ravel(),
        "off_reason": reason.ravel().astype(str), "local_hour": local_hour.ravel()})
    fleet_hours = pd.DataFrame({"utc_hour": bins.hour, "lendable": lendable, "off_idle": (idle * off).sum(axis=0)})
    by_hour = fleet_hours.groupby("utc_hour", as_index=False).mean()
    notes.append(f"Time range: {window.data_start_utc:%Y-%m-%d %H:%M} to {window.data_end_utc:%Y-%m-%d %H:%M} UTC, "
                 f"{n_hours:,} whole UTC hour{'' if n_hours == 1 else 's'}.")
    return TimeZones(
        kind="jobs", start_utc=window.start_utc, end_utc=window.end_utc, hourly=hourly[HOURLY_COLUMNS],
        by_hour=_profile(hourly, "utc_hour", hourly["bin_start_utc"].dt.hour),
        by_hour_of_week=_profile(hourly, "utc_hour_of_week",
                                 hourly["bin_start_utc"].dt.day_of_week * 24 + hourly["bin_start_utc"].dt.hour),
        daily=_daily(hourly), calendar=calendar, calendar_use=_calendar_use(cals, working, names), calendars=cals, calendar_table=workhours.calendar_table(cals, teams),
        holidays=workhours.holiday_list(cals, window.start_utc, window.end_utc),
        pairs=handoff.pair_table(pairs, names, bins, local_hour, reason),
        handoff_by_hour=by_hour.rename(columns={"lendable": "lendable_gpus", "off_idle": "off_idle_gpus"}),
        idle_gpu_hours=float(idle.sum()), off_hours_idle_gpu_hours=float((idle * off).sum()),
        flexible_queued_gpu_hours=float(flex_queued.sum()), lendable_gpu_hours=float(lendable.sum()),
        residency=audit_residency(jobs, regions), notes=tuple(notes))
