"""Region edits a scenario applies to a dataset's world (engine.world.facts.World): prices, carbon, calendars.

    [[region]]                          # any number of entries, one region each
    region = "eu-west"                  # a region of the dataset (its regions table or its fleet)
    price_scale = 0.8                   # every price row of the region, all tiers, x 0.8
    usd_per_gpu_hour = { H100 = 3.2 }   # on-demand USD per GPU-hour by GPU type; reserved and spot follow
    carbon_scale = 0.5                  # the region's hourly grid intensity x 0.5, or instead
    g_co2e_per_kwh = 120.0              # one flat intensity (gCO2e/kWh) at every local hour
    working_days = "Sun-Thu"            # the region's working week (default: its country's, 9-18)
    work_start_hour = 8                 # 0-23, local
    work_end_hour = 17                  # 0-23, local; <= start: the shift crosses midnight
    holiday_country = "IL"              # ISO 3166 code (optionally "-subdivision"); "" for no holidays
    off_peak_start_hour = 22            # local off-peak hours (0-23; end <= start crosses midnight) ...
    off_peak_end_hour = 6
    off_peak_discount = 0.3             # ... when on-demand and spot GPUs cost 30 % less

Prices: `price_scale` multiplies the region's rows; a GPU type of the region's fleet without rows
first gets the price book's rows (engine.world.pricebook, still flagged `assumed`), so the scale
applies to the dollars the cost report would otherwise take from the book. `usd_per_gpu_hour`
then sets the on-demand price exactly (the scale does not apply to it) and moves reserved and
spot with it: new tier price = new on-demand x (the dataset's tier / on-demand ratio for that
region and GPU type when the dataset has both rows, else the price book's TIER_MULTIPLIER).
Carbon: `carbon_scale` needs a profile in the dataset (a region without one runs on a default that
is not the data's; give `g_co2e_per_kwh` instead), `g_co2e_per_kwh` replaces the profile by 24
equal hours. Calendars go to `World.calendars`, which the router's `RegionFacts` reads. Off-peak
windows go to the regions table (columns off_peak_start_hour, off_peak_end_hour, off_peak_discount;
a region missing from it gets a row on UTC), which the cost report (engine.analysis.telemetry.offpeak) and the
router's prices read.

The calendar and off-peak fields are declared once on RegionEdit (label, help, and a unit and range
or the working weeks offered, in each field's metadata): the parser checks them and the What-if
builder draws its calendar and off-peak tables from them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import pandas as pd

from engine.core.bounds import bound_of
from engine.core.errors import ScenarioError
from engine.scenario.checks import number
from engine.telemetry.batch import TABLE_COLUMNS
from engine.world.calendar import parse_holiday_spec, parse_working_days
from engine.world.facts import World
from engine.world.pricebook import TIER_MULTIPLIER, default_price_rows

KEYS = {"region", "price_scale", "usd_per_gpu_hour", "carbon_scale", "g_co2e_per_kwh", "working_days",
        "work_start_hour", "work_end_hour", "holiday_country", "off_peak_start_hour", "off_peak_end_hour",
        "off_peak_discount"}
OFF_PEAK = ("off_peak_start_hour", "off_peak_end_hour", "off_peak_discount")
CALENDAR_KEYS = ("working_days", "work_start_hour", "work_end_hour", "holiday_country")
HOURS_PER_DAY = 24
WEEKS_OFFERED = ("Mon-Fri", "Sun-Thu", "Sat-Wed", "Mon-Sat", "Mon-Sun")  # any text parse_working_days reads is valid


def _hour_field(label: str, what: str):
    return field(default=None, metadata={"unit": "h", "min": 0, "max": HOURS_PER_DAY - 1, "label": label,
                                         "help": f"{what}, a whole local hour 0-23"})


@dataclass(frozen=True)
class Outage:
    """A region's fleet is down over [start_utc, end_utc) (the simulator's engine.sim.processes.outage)."""

    region: str
    start_utc: pd.Timestamp
    end_utc: pd.Timestamp


@dataclass(frozen=True)
class RegionEdit:
    """One region's edits; None (or 1.0 for the scales, () for the prices) leaves that part alone.
    usd_per_gpu_hour: (gpu_type, on-demand USD per GPU-hour) pairs, sorted by GPU type."""

    region: str
    price_scale: float = 1.0
    usd_per_gpu_hour: tuple[tuple[str, float], ...] = ()
    carbon_scale: float = 1.0
    g_co2e_per_kwh: float | None = None
    working_days: str | None = field(default=None, metadata={
        "label": "Working days", "choices": WEEKS_OFFERED,
        "help": "its local working week; default: its country's (engine.world.countries)"})
    work_start_hour: int | None = _hour_field("Work starts", "its working day starts")
    work_end_hour: int | None = _hour_field("Work ends", "its working day ends (at or before the start: past midnight)")
    holiday_country: str | None = field(default=None, metadata={
        "label": "Holidays of", "help": "whose public holidays it keeps: an ISO 3166 code, optionally with a "
                                        "subdivision (US, DE-BY); blank for none; default: its country's"})
    off_peak_start_hour: int | None = _hour_field("Off-peak from", "the cheap hours start")
    off_peak_end_hour: int | None = _hour_field("Off-peak until", "the cheap hours end (at or before the start: "
                                                                  "past midnight)")
    off_peak_discount: float | None = field(default=None, metadata={
        "unit": "fraction", "min": 0.0, "max": 1.0, "label": "Off-peak discount",
        "help": "on-demand and spot GPU-hours in the window cost this share less"})

    def calendar(self) -> dict:
        """The calendar keys this edit sets (World.calendars' per-region mapping)."""
        return {key: getattr(self, key) for key in CALENDAR_KEYS if getattr(self, key) is not None}


def declared(name: str):
    """RegionEdit's field `name` (its metadata: label, help, and unit and range or choices)."""
    return next(spec for spec in fields(RegionEdit) if spec.name == name)


def _hour(spec: dict, key: str, where: str) -> int | None:
    if key not in spec:
        return None
    value, bound = spec[key], bound_of(key, int, declared(key).metadata)
    if isinstance(value, bool) or not isinstance(value, int) or bound.check(key, value):
        raise ScenarioError(f"{where}: {key} must be a whole local hour {bound.low:g}-{bound.high:g}, got {value!r}")
    return value


def _text(spec: dict, key: str, parse, example: str, where: str) -> str | None:
    """spec[key] (None when absent) after `parse` accepted it."""
    if key not in spec:
        return None
    value = spec[key]
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: {key} must be a text such as {example}, got {value!r}")
    try:
        parse(value)
    except ValueError as exc:
        raise ScenarioError(f"{where}: {exc}") from None
    return value


def parse_region_edit(spec: object, source: str) -> RegionEdit:
    """One [[region]] table, validated (the region's existence is checked by `edit_world`)."""
    if not isinstance(spec, dict):
        raise ScenarioError(f"{source}: each [[region]] entry must be a table, got {spec!r}")
    extra = sorted(set(spec) - KEYS)
    if extra:
        raise ScenarioError(f"{source}: unknown [[region]] key {', '.join(extra)}; valid: {', '.join(sorted(KEYS))}")
    region = spec.get("region")
    if not isinstance(region, str) or not region.strip():
        raise ScenarioError(f"{source}: a [[region]] entry needs region = \"<name of a dataset region>\"")
    where = f"{source}: [[region]] {region}"
    if "carbon_scale" in spec and "g_co2e_per_kwh" in spec:
        raise ScenarioError(f"{where}: give carbon_scale or g_co2e_per_kwh, not both")
    prices = spec.get("usd_per_gpu_hour", {})
    if not isinstance(prices, dict):
        raise ScenarioError(f"{where}: usd_per_gpu_hour must be a table such as {{ H100 = 3.2, A100 = 1.9 }}, "
                            f"got {prices!r}")
    on_demand = tuple(sorted((str(gpu), number(prices[gpu], f"{where} usd_per_gpu_hour: {gpu}", 0, False))
                             for gpu in prices))
    days = _text(spec, "working_days", parse_working_days, '"Mon-Fri" or "Sun-Thu"', where)
    peak = [key for key in OFF_PEAK if key in spec]
    if peak and len(peak) != len(OFF_PEAK):
        raise ScenarioError(f"{where}: an off-peak window needs off_peak_start_hour, off_peak_end_hour and "
                            "off_peak_discount together")
    discount = number(spec["off_peak_discount"], f"{where}: off_peak_discount", 0) if peak else None
    share = bound_of("off_peak_discount", float, declared("off_peak_discount").metadata)
    if discount is not None and share.check("off_peak_discount", discount):
        raise ScenarioError(f"{where}: off_peak_discount must be a share between {share.low:g} and {share.high:g}, "
                            f"got {discount:g}")
    holiday = _text(spec, "holiday_country", parse_holiday_spec, '"US", "DE-BY" or "" (no holidays)', where)
    return RegionEdit(
        region=region.strip(),
        price_scale=number(spec["price_scale"], f"{where}: price_scale", 0, False) if "price_scale" in spec else 1.0,
        usd_per_gpu_hour=on_demand,
        carbon_scale=number(spec["carbon_scale"], f"{where}: carbon_scale", 0, False) if "carbon_scale" in spec else 1.0,
        g_co2e_per_kwh=number(spec["g_co2e_per_kwh"], f"{where}: g_co2e_per_kwh", 0) if "g_co2e_per_kwh" in spec else None,
        working_days=days, work_start_hour=_hour(spec, "work_start_hour", where),
        work_end_hour=_hour(spec, "work_end_hour", where), holiday_country=holiday,
        off_peak_start_hour=_hour(spec, "off_peak_start_hour", where),
        off_peak_end_hour=_hour(spec, "off_peak_end_hour", where), off_peak_discount=discount)


def parse_region_edits(entries: object, source: str) -> tuple[RegionEdit, ...]:
    """The [[region]] list (one entry per region)."""
    if not isinstance(entries, list):
        raise ScenarioError(f"{source}: region must be a list of [[region]] tables")
    edits = tuple(parse_region_edit(spec, source) for spec in entries)
    names = [e.region for e in edits]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(f"{source}: [[region]] {', '.join(twice)} appears more than once; "
                            "put all edits of a region in one entry")
    return edits


def _table(frame: pd.DataFrame | None, name: str) -> pd.DataFrame:
    if frame is None or not len(frame.columns):
        return pd.DataFrame(columns=list(TABLE_COLUMNS[name]))
    return frame.reset_index(drop=True)


def _names(frame: pd.DataFrame | None, column: str) -> set[str]:
    return set() if frame is None or column not in frame else set(frame[column].dropna().astype(str))


def _prices(prices: pd.DataFrame, edit: RegionEdit, fleet_types: list[str]) -> pd.DataFrame:
    if "assumed" not in prices:
        prices = prices.assign(assumed=False)
    have = set(prices.loc[prices["region"] == edit.region, "gpu_type"].astype(str))
    book = [row for gpu in fleet_types if gpu not in have for row in default_price_rows(edit.region, gpu)]
    if book:
        prices = pd.concat([prices, pd.DataFrame(book)], ignore_index=True)
    prices = prices.copy()
    mine = prices["region"] == edit.region
    prices.loc[mine, "usd_per_gpu_hour"] = prices.loc[mine, "usd_per_gpu_hour"].astype(float) * edit.price_scale
    for gpu, usd in edit.usd_per_gpu_hour:
        rows = prices[mine & (prices["gpu_type"] == gpu)]
        old = dict(zip(rows["tier"], rows["usd_per_gpu_hour"].astype(float)))
        prices = prices.drop(index=rows.index)
        new = []
        for tier, multiplier in TIER_MULTIPLIER.items():
            from_data = tier != "on-demand" and tier in old and old.get("on-demand", 0.0) > 0
            ratio = old[tier] / old["on-demand"] if from_data else multiplier
            new.append({"region": edit.region, "gpu_type": gpu, "tier": tier, "usd_per_gpu_hour": usd * ratio,
                        "assumed": tier != "on-demand" and not from_data})
        prices = pd.concat([prices, pd.DataFrame(new)], ignore_index=True)
        mine = prices["region"] == edit.region
    return prices.sort_values(["region", "gpu_type", "tier"], kind="stable").reset_index(drop=True)


def _carbon(carbon: pd.DataFrame, edit: RegionEdit) -> pd.DataFrame:
    mine = carbon["region"] == edit.region
    if edit.g_co2e_per_kwh is not None:
        flat = pd.DataFrame({"region": edit.region, "local_hour": range(HOURS_PER_DAY),
                             "g_co2e_per_kwh": edit.g_co2e_per_kwh})
        return pd.concat([carbon[~mine], flat], ignore_index=True)
    if edit.carbon_scale == 1.0:
        return carbon
    if not mine.any():
        raise ScenarioError(f"[[region]] {edit.region}: carbon_scale needs the region's carbon profile and the "
                            "dataset has none; give a flat g_co2e_per_kwh instead")
    carbon = carbon.copy()
    carbon.loc[mine, "g_co2e_per_kwh"] = carbon.loc[mine, "g_co2e_per_kwh"].astype(float) * edit.carbon_scale
    return carbon


def edit_world(world: World, edits: tuple[RegionEdit, ...], fleet: pd.DataFrame | None = None) -> World:
    """`world` with `edits` applied (the same object when there are none). Regions must exist in the
    world's regions table or in `fleet` (the dataset's fleet; without it only the regions table
    counts, and price_scale cannot complete a region's prices from the price book)."""
    if not edits:
        return world
    valid = _names(world.regions, "region") | _names(fleet, "region")
    gpu_types = _names(world.prices, "gpu_type") | _names(fleet, "gpu_type")
    prices, carbon = _table(world.prices, "prices"), _table(world.carbon, "carbon")
    regions = world.regions
    calendars = dict(world.calendars or {})
    for edit in edits:
        if edit.region not in valid:
            raise ScenarioError(f"[[region]] {edit.region!r} is not a region of the dataset; valid: "
                                f"{', '.join(sorted(valid)) or 'none'}")
        unknown = sorted({gpu for gpu, _ in edit.usd_per_gpu_hour} - gpu_types)
        if unknown:
            raise ScenarioError(f"[[region]] {edit.region}: usd_per_gpu_hour names GPU type {', '.join(unknown)} "
                                f"that the dataset does not have; valid: {', '.join(sorted(gpu_types)) or 'none'}")
        if edit.price_scale != 1.0 or edit.usd_per_gpu_hour:
            types = [] if fleet is None else sorted(_names(fleet[fleet["region"] == edit.region], "gpu_type"))
            prices = _prices(prices, edit, types)
        carbon = _carbon(carbon, edit)
        if edit.calendar():
            calendars[edit.region] = {**calendars.get(edit.region, {}), **edit.calendar()}
        if edit.off_peak_discount is not None:
            regions = _off_peak(regions, edit)
    return replace(world, prices=prices, carbon=carbon, calendars=calendars or None, regions=regions)


def _off_peak(regions: pd.DataFrame | None, edit: RegionEdit) -> pd.DataFrame:
    """The regions table with the edit's off-peak window on its region's row (added on UTC if missing)."""
    table = _table(regions, "regions").copy()
    if edit.region not in set(table["region"].astype(str)):
        table = pd.concat([table, pd.DataFrame([{"region": edit.region, "timezone": "UTC"}])], ignore_index=True)
    for key in OFF_PEAK:
        if key not in table:
            table[key] = float("nan")
        table.loc[table["region"].astype(str) == edit.region, key] = float(getattr(edit, key))
    return table


def parse_outages(entries: object, source: str) -> tuple:
    """The [[outage]] list: region, start_utc, end_utc (UTC unless the time says otherwise)."""

    if not isinstance(entries, list):
        raise ScenarioError(f"{source}: outage must be a list of [[outage]] tables")
    out = []
    for spec in entries:
        if not isinstance(spec, dict):
            raise ScenarioError(f"{source}: each [[outage]] must be a table")
        extra = sorted(set(spec) - {"region", "start_utc", "end_utc"})
        if extra or not {"region", "start_utc", "end_utc"} <= set(spec):
            raise ScenarioError(f"{source}: an [[outage]] needs exactly region, start_utc and end_utc"
                                + (f" (unknown: {', '.join(extra)})" if extra else ""))
        times = []
        for key in ("start_utc", "end_utc"):
            try:
                stamp = pd.Timestamp(spec[key])
            except (ValueError, TypeError):
                raise ScenarioError(f"{source}: [[outage]] {key} must be a date-time, got {spec[key]!r}") from None
            times.append(stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo else stamp)
        if times[1] <= times[0]:
            raise ScenarioError(f"{source}: [[outage]] of {spec['region']} ends before it starts")
        out.append(Outage(str(spec["region"]), *times))
    return tuple(out)
