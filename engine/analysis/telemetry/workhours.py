"""Working hours of regions and teams as UTC bands, and their holidays, for the Time zones page.

Calendars come from `engine.world.calendar`: a region works 9-18 local on its country's working
week (engine.world.countries: Sun-Thu in Saudi Arabia) with the public holidays of its country
(`Calendar.from_region`); a team works its own hours, week (its country's when blank) and holiday
country (`Calendar.from_team`). Bands are the calendar's shifts (`Calendar.work_intervals`), so
daylight-saving time moves them in UTC and holidays remove them. Weeks are UTC weeks starting
Monday 00:00.
"""
from __future__ import annotations

import warnings
from collections import Counter

import holidays as holidays_pkg
import pandas as pd

from engine.world.calendar import DAY_NAMES, Calendar

WEEK = pd.Timedelta(days=7)
CALENDAR_COLUMNS = ["kind", "name", "timezone", "working_days", "hours", "holiday_country", "home_region"]
BAND_COLUMNS = ["kind", "name", "start_utc", "end_utc", "local_start"]
DAY_BAND_COLUMNS = ["kind", "name", "start_hour_utc", "end_hour_utc"]
HOLIDAY_COLUMNS = ["kind", "name", "country", "date", "holiday"]
WEEK_HOURS_COLUMNS = ["region", "kind", "name", "timezone", "working_days", "hours", "shifts", "hours_at_work",
                      "holidays"]


def calendars(regions: pd.DataFrame, teams: pd.DataFrame, used_regions,
              notes: list[str]) -> dict[tuple[str, str], Calendar]:
    """{("region" | "team", name): Calendar}: the regions in `used_regions` and every team.

    A used region missing from the regions table works Mon-Fri 9-18 UTC without holidays; a row
    whose time zone, hours, week or holiday country is invalid is left out. Both cases add a note."""
    out: dict[tuple[str, str], Calendar] = {}
    rows = {str(r["region"]): r for _, r in regions.iterrows()} if not regions.empty else {}
    missing = []
    for region in sorted(used_regions):
        if region not in rows:
            missing.append(region)
            out[("region", region)] = Calendar("UTC")
            continue
        _add(out, ("region", region), lambda row=rows[region]: Calendar.from_region(row), notes)
    if missing:
        notes.append(f"No time zone recorded for {', '.join(missing)}: taken as UTC, Mon-Fri 9-18, no holidays.")
    for _, row in teams.sort_values("team", kind="stable").iterrows() if not teams.empty else ():
        _add(out, ("team", str(row["team"])), lambda row=row: Calendar.from_team(row), notes)
    return out


def _add(out: dict, key: tuple[str, str], build, notes: list[str]) -> None:
    try:
        out[key] = build()
    except (ValueError, KeyError, TypeError) as exc:
        notes.append(f"The {key[0]} {key[1]} has no usable calendar and is left out: {exc}")


def calendar_table(cals: dict[tuple[str, str], Calendar], teams: pd.DataFrame) -> pd.DataFrame:
    """One row per calendar: kind, name, timezone, working_days (see `days_text`), hours ("9-18"),
    holiday_country ("" for none), home_region (teams only)."""
    homes = dict(zip(teams["team"].astype(str), teams["home_region"])) if not teams.empty else {}
    rows = []
    for (kind, name), cal in cals.items():
        country = "-".join(p for p in (cal.holiday_country, cal.holiday_subdivision) if p)
        home = homes.get(name) if kind == "team" else None
        rows.append((kind, name, cal.tz, days_text(cal.working_days),
                     f"{cal.start_hour}-{cal.end_hour}", country, "" if pd.isna(home) or home is None else str(home)))
    return pd.DataFrame(rows, columns=CALENDAR_COLUMNS)


def week_hours(table: pd.DataFrame, week_bands: pd.DataFrame, holidays: pd.DataFrame,
                week_start: pd.Timestamp) -> pd.DataFrame:
    """Each region's working hours in the UTC week from `week_start` with those of the teams it is home to
    beside it: one row per calendar of `table` (`calendar_table`), grouped by region (a team under its
    home region, one without a home last). Columns: region, kind, name, timezone, working_days, hours,
    shifts (the week's shifts, `bands`), hours_at_work (their hours inside the week) and holidays (the
    holidays of `holiday_list` that took a shift on a local date of the week, "; "-joined)."""
    lengths = (week_bands["end_utc"] - week_bands["start_utc"]) / pd.Timedelta(hours=1)
    worked = lengths.groupby([week_bands["kind"], week_bands["name"]]).agg(["size", "sum"])
    first, last = pd.Timestamp(week_start) - pd.Timedelta(days=1), pd.Timestamp(week_start) + WEEK
    inside = holidays[(holidays["date"] >= first) & (holidays["date"] <= last)]
    named = inside.groupby(["kind", "name"])["holiday"].agg(lambda names: "; ".join(dict.fromkeys(names)))
    rows = []
    for row in table.itertuples(index=False):
        key = (row.kind, row.name)
        shifts, hours = worked.loc[key] if key in worked.index else (0, 0.0)
        region = row.name if row.kind == "region" else row.home_region
        rows.append((region, row.kind, row.name, row.timezone, row.working_days, row.hours, int(shifts),
                     float(hours), named.get(key, "")))
    out = pd.DataFrame(rows, columns=WEEK_HOURS_COLUMNS)
    order = out.assign(_none=out["region"] == "", _team=out["kind"] == "team")
    return out.loc[order.sort_values(["_none", "region", "_team", "name"], kind="stable").index].reset_index(drop=True)


def days_text(days: tuple[int, ...]) -> str:
    """Weekday numbers (Mon = 0) as the shortest working-week text: (0, 1, 2, 3, 4) -> "Mon-Fri",
    (0, 1, 2, 3, 6) -> "Sun-Thu", (0, 2, 4) -> "Mon,Wed,Fri"; runs may wrap through Sunday."""
    chosen = set(days)
    if len(chosen) == 7:
        return "Mon-Sun"
    parts = []
    for first in sorted(d for d in chosen if (d - 1) % 7 not in chosen):
        last = first
        while (last + 1) % 7 in chosen:
            last = (last + 1) % 7
        parts.append(DAY_NAMES[first] if first == last else f"{DAY_NAMES[first]}-{DAY_NAMES[last]}")
    return ",".join(parts)


def week_starts(start_utc: pd.Timestamp, end_utc: pd.Timestamp) -> list[pd.Timestamp]:
    """Mondays 00:00 UTC of the weeks that overlap [start_utc, end_utc)."""
    first = pd.Timestamp(start_utc).normalize() - pd.Timedelta(days=pd.Timestamp(start_utc).day_of_week)
    return list(pd.date_range(first, pd.Timestamp(end_utc) - pd.Timedelta(seconds=1), freq="7D"))


def default_week(start_utc: pd.Timestamp, end_utc: pd.Timestamp) -> pd.Timestamp:
    """The first week wholly inside [start_utc, end_utc), else the first week that overlaps it."""
    weeks = week_starts(start_utc, end_utc)
    whole = [w for w in weeks if w >= start_utc and w + WEEK <= end_utc]
    return (whole or weeks)[0]


def bands(cals: dict[tuple[str, str], Calendar], week_start: pd.Timestamp) -> pd.DataFrame:
    """Every shift overlapping the UTC week from `week_start` (a Monday 00:00), cut to the week.

    Columns: kind, name, start_utc, end_utc (naive UTC), local_start (the shift's start on the
    local clock, e.g. "Mon 09:00"). One row per worked, non-holiday day of the calendar."""
    lo = pd.Timestamp(week_start).tz_localize("UTC").timestamp()
    hi = lo + WEEK.total_seconds()
    rows = []
    for (kind, name), cal in cals.items():
        starts, ends = cal.work_intervals(lo, hi)
        for s, e in zip(starts, ends):
            local = pd.Timestamp(int(s), unit="s", tz="UTC").tz_convert(cal.tz)
            rows.append((kind, name, pd.Timestamp(max(int(s), lo), unit="s"), pd.Timestamp(min(int(e), hi), unit="s"),
                         f"{DAY_NAMES[local.day_of_week]} {local:%H:%M}"))
    return pd.DataFrame(rows, columns=BAND_COLUMNS).astype({"start_utc": "datetime64[ns]", "end_utc": "datetime64[ns]"})


def day_bands(week_bands: pd.DataFrame) -> pd.DataFrame:
    """Each calendar's most common shift of the week as UTC hours of the day: start_hour_utc in
    [0, 24), end_hour_utc = start + shift length (above 24 when the shift crosses midnight UTC).
    Ties go to the earliest shift of the week."""
    rows = []
    for (kind, name), group in week_bands.groupby(["kind", "name"], sort=False):
        starts = (group["start_utc"] - group["start_utc"].dt.normalize()) / pd.Timedelta(hours=1)
        lengths = (group["end_utc"] - group["start_utc"]) / pd.Timedelta(hours=1)
        counts = Counter(zip(starts, lengths))
        (start, length), _ = max(counts.items(), key=lambda item: item[1])
        rows.append((kind, name, float(start), float(start + length)))
    return pd.DataFrame(rows, columns=DAY_BAND_COLUMNS)


def holiday_list(cals: dict[tuple[str, str], Calendar], start_utc: pd.Timestamp,
                 end_utc: pd.Timestamp) -> pd.DataFrame:
    """Holidays that cost each calendar a shift: those on a working day of its week, on the local
    dates [start_utc, end_utc) touches (weekend holidays, such as Sweden's Sundays, are left out).

    Columns: kind, name, country (e.g. "DE" or "US-CA"), date (local), holiday (the holidays
    package's name, in English where it has a translation; several names joined by "; ").
    Sorted by date, kind, name."""
    rows = []
    for (kind, name), cal in cals.items():
        if cal.holiday_country is None:
            continue
        first = pd.Timestamp(start_utc).tz_localize("UTC").tz_convert(cal.tz).date()
        last = (pd.Timestamp(end_utc) - pd.Timedelta(seconds=1)).tz_localize("UTC").tz_convert(cal.tz).date()
        table = _named_holidays(cal.holiday_country, cal.holiday_subdivision, tuple(range(first.year, last.year + 1)))
        country = "-".join(p for p in (cal.holiday_country, cal.holiday_subdivision) if p)
        for day, label in sorted(table.items()):
            if first <= day <= last and day.weekday() in cal.working_days:
                rows.append((kind, name, country, pd.Timestamp(day), label))
    out = pd.DataFrame(rows, columns=HOLIDAY_COLUMNS)
    return out.sort_values(["date", "kind", "name"], kind="stable").reset_index(drop=True)


def _named_holidays(country: str, subdivision: str | None, years: tuple[int, ...]) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return dict(holidays_pkg.country_holidays(country, subdiv=subdivision, years=years, language="en_US"))
