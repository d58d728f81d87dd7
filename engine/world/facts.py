"""Facts about regions that the simulator's router reads: calendars, carbon, prices, residency.

`World` holds a dataset's `regions`, `prices` and `carbon` tables (engine.telemetry schema); any
may be None. `RegionFacts` turns them into arrays over the simulator's regions:
- `at_work[r, q]`: region r inside its working hours at quarter-hour q of the run (q = floor(t /
  900 s) from the workload's time 0), from `Calendar.from_region` (9-18 local on its country's
  working week, engine.world.countries, minus the public holidays of its country; DST through
  zoneinfo) or, for a region in `World.calendars` (a scenario's [[region]] edits,
  engine.scenario.world), the working days, hours and holiday country given there. Under a
  scenario's `calendar = "team"` (engine.world.team_hours) a region is at work while any team the
  teams table homes there is, and `work_row(team, r)` gives a job's own team's hours. A quarter-hour grid is exact for zones whose offset is a multiple of 15 minutes,
  i.e. all of them in use.
- `g_co2e[r, q]`: the grid intensity of region r at the local hour of quarter q (the carbon
  table's profile through engine.world.grid: a region without one gets its default, a missing hour
  the mean of its profile).
- `usd_per_gpu_hour(region, gpu_type)`: the on-demand price from the prices table, else the price
  book's (engine.world.pricebook).
- `allowed(jobs)`: jobs x regions residency mask (engine.world.residency); every region when the
  dataset has no regions table or the jobs no residency column.
A region missing from the regions table runs on UTC with no holidays.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.world import offpeak
from engine.world.calendar import REGION_END_HOUR, REGION_START_HOUR, Calendar
from engine.world.data_model import DataModel
from engine.world.elastic import ElasticScaling
from engine.world.grid import hourly_intensity
from engine.world.interconnect import Interconnect
from engine.world.latency import Latency
from engine.world.partitions import Partitions
from engine.world.pricebook import on_demand_price
from engine.world.residency import allowed_mask
from engine.world.roles import Roles
from engine.world.team_hours import listed_teams, team_mode, working_calendars

QUARTER_S = 900.0


@dataclass(frozen=True)
class World:
    """A dataset's region tables: regions (region, timezone, country, jurisdiction, ...), prices
    (region, gpu_type, tier, usd_per_gpu_hour) and carbon (region, local_hour, g_co2e_per_kwh);
    calendars: region -> {working_days, work_start_hour, work_end_hour, holiday_country}, each key
    optional, overriding the region's default calendar (see `region_calendar`)."""

    regions: pd.DataFrame | None = None
    prices: pd.DataFrame | None = None
    carbon: pd.DataFrame | None = None
    calendars: Mapping[str, Mapping] | None = None
    latency: Latency | None = None  # inter-region round-trip times and the inference SLO
    teams: pd.DataFrame | None = None  # team, share_weight, ... (fair-share weights)
    data: DataModel = field(default_factory=DataModel)  # how input data moves ([data]: bandwidth, replicas, ...)
    outages: tuple = ()  # engine.scenario.world.Outage: regions down over a time range (disaster recovery)
    bursts: tuple = ()  # engine.scenario.burst.BurstPool: cloud nodes a region rents when its queue backs up
    interconnect: Interconnect = Interconnect()  # off: multi-node jobs run at their recorded speed anywhere
    partitions: Partitions = Partitions()  # off: no MIG instances, no interference on shared GPUs
    scaling: object | None = None  # engine.scenario.predictive.ScalingPlan: [[burst]] pools rented ahead of a forecast
    handoff: object | None = None  # engine.scenario.handoff.Handoff: running work handed over as working days begin
    experiments: object | None = None  # engine.scenario.experiment_plan.ExperimentPlan: [experiments] jobs and gaps
    roles: Roles | None = None  # primary, overflow, disaster recovery, edge and archive regions ([roles])
    sizing: object | None = None  # engine.scenario.rightsize.RightSize: jobs given their predicted GPUs
    elastic: ElasticScaling = ElasticScaling()  # perfect: a degraded elastic job runs runtime x asked / given
    calendar: str = "region"  # whose working hours count: "region" or "team" (engine.world.team_hours)

    @classmethod
    def of_dataset(cls, store, dataset: str) -> "World":
        """The tables of `dataset` in `store` (an engine.telemetry.store.Store)."""
        return cls(store.regions(dataset), store.prices(dataset), store.table("carbon", dataset),
                   teams=store.table("teams", dataset))

    def team_weights(self) -> dict[str, float]:
        """Team -> share weight from the teams table ({} without one)."""
        if self.teams is None or self.teams.empty or "share_weight" not in self.teams:
            return {}
        return dict(zip(self.teams["team"].astype(str), self.teams["share_weight"].astype(float)))

    def region_calendar_of(self, name: str) -> Calendar:
        """Region `name`'s calendar: `region_calendar` of its regions row (UTC, no holidays, for a region
        the table lacks) with its [[region]] calendar edits."""
        return region_calendar(_region_row(self.regions, name), (self.calendars or {}).get(name, {}))


def _region_row(regions: pd.DataFrame | None, name: str) -> dict:
    """The regions-table row of `name` as a dict; UTC with no holidays for a region the table lacks."""
    if regions is not None and len(regions) and name in set(regions["region"]):
        return regions.set_index("region").loc[name].to_dict()
    return {"timezone": "UTC", "country": None}


def on_demand_prices(prices: pd.DataFrame | None) -> dict[tuple, float]:
    """(region, gpu_type) -> USD per GPU-hour of a prices table's on-demand rows (the last row of a
    repeated pair wins)."""
    prices = _rows(prices)
    on_demand = prices[prices["tier"] == "on-demand"] if len(prices) else prices
    return {(p.region, p.gpu_type): float(p.usd_per_gpu_hour) for p in on_demand.itertuples(index=False)}


def region_on_demand_price(prices: dict[tuple, float], region: str, gpu_type: str | None) -> float:
    """The on-demand price of `gpu_type` in `region` from `on_demand_prices`, else the price book's."""
    price = prices.get((region, gpu_type))
    return price if price is not None else on_demand_price(gpu_type)


def _rows(table: pd.DataFrame | None) -> pd.DataFrame:
    return table if table is not None else pd.DataFrame()


def region_calendar(row: Mapping, override: Mapping) -> Calendar:
    """The calendar of a regions row (Calendar.from_region) with `override`'s working_days (text such
    as "Sun-Thu"), work_start_hour, work_end_hour and holiday_country ("" = no holidays) in place of
    the defaults (the working week of the row's country, 9-18, the row's country's holidays). A
    holiday_country override changes the holidays only, not the working week."""
    days = override.get("working_days") or Calendar.from_region(row).working_days
    if "holiday_country" in override:
        row = {**row, "country": override["holiday_country"]}
    return Calendar.from_region(row, days, override.get("work_start_hour", REGION_START_HOUR),
                                override.get("work_end_hour", REGION_END_HOUR))


class RegionFacts:
    """The world's facts for regions `names`, over [0, span_s] seconds from `origin_utc`."""

    def __init__(self, world: World, names: list[str], origin_utc: pd.Timestamp, span_s: float) -> None:
        self.names, self.world = names, world
        self.latency = world.latency or Latency()
        self.latency_ms = self.latency.matrix(names)
        regions = _rows(world.regions)
        known = regions.set_index("region") if len(regions) else pd.DataFrame()
        quarters = np.arange(int(span_s // QUARTER_S) + 1) * QUARTER_S
        instants = quarters + origin_utc.value / 1e9
        self.at_work = np.zeros((len(names), len(quarters)), bool)
        self.g_co2e = np.zeros((len(names), len(quarters)))
        carbon = _rows(world.carbon)
        working = working_calendars(world, names)
        self.price_factor = np.ones((len(names), len(quarters)))  # x on-demand price: off-peak discounts
        peak = offpeak.windows(regions)
        for r, name in enumerate(names):
            local_hour = (world.region_calendar_of(name).local_seconds(instants) // 3600) % 24
            self.at_work[r] = np.logical_or.reduce([c.at_work(instants) for c in working[r]])
            by_hour, _ = hourly_intensity(carbon, name)
            self.g_co2e[r] = by_hour[local_hour]
            if name in peak:
                first, last, cut, _ = peak[name]
                self.price_factor[r] = np.where(offpeak.in_window(local_hour, first, last), 1.0 - cut, 1.0)
        egress = known["egress_usd_per_gb"] if "egress_usd_per_gb" in known else pd.Series(dtype=float)
        self.egress_usd_per_gb = np.array([float(pd.to_numeric(egress.get(n), errors="coerce"))
                                           if n in egress.index else np.nan for n in names], np.float64)
        self._prices = on_demand_prices(world.prices)
        self.team_at_work = {team: calendar.at_work(instants) for team, calendar in
                             (listed_teams(world.teams) if team_mode(world) else {}).items()}

    def work_row(self, team: str, r: int) -> np.ndarray:
        """Bool per quarter: a job of `team` whose home is region r is at work (its team's calendar under
        `calendar = "team"` when the teams table lists the team, else the region's `at_work` row)."""
        row = self.team_at_work.get(team)
        return self.at_work[r] if row is None else row

    def quarter(self, now_s: float) -> int:
        return min(int(now_s // QUARTER_S), self.at_work.shape[1] - 1)

    def quarter_span(self, q: int) -> tuple[float, float]:
        """The seconds [from, until) whose `quarter` is q (the last column's runs on to +inf)."""
        return q * QUARTER_S, (q + 1) * QUARTER_S if q < self.at_work.shape[1] - 1 else math.inf

    def usd_per_gpu_hour(self, region: str, gpu_type: str | None) -> float:
        return region_on_demand_price(self._prices, region, gpu_type)

    def allowed(self, jobs: pd.DataFrame) -> np.ndarray:
        """jobs x regions (simulator order) bool: may the job's data go there."""
        regions = _rows(self.world.regions)
        if not len(regions) or "residency" not in jobs:
            return np.ones((len(jobs), len(self.names)), bool)
        mask = allowed_mask(jobs, regions)
        order = {name: i for i, name in enumerate(regions["region"])}
        untagged = jobs["residency"].isna().to_numpy() | (jobs["residency"].astype(str).str.strip() == "").to_numpy()
        out = np.empty((len(jobs), len(self.names)), bool)
        for r, name in enumerate(self.names):  # a region the table lacks takes untagged jobs only
            out[:, r] = mask[:, order[name]] if name in order else untagged
        return out
