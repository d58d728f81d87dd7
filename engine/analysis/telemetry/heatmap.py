"""Utilisation by hour of the week, in each region's own local time.

Bins are the region's local-clock hours (see `Window.local_hour_edges`), so daylight-saving
changes are followed exactly: in a spring-forward week the skipped local hour gets no data,
in an autumn week the repeated hour gets two. For each (region, local weekday, local hour):
utilisation_pct = 100 x sum of busy_unit_hours / sum of capacity_unit_hours over the bins that
start at that local weekday and hour.
"""
from __future__ import annotations

from zoneinfo import ZoneInfo

import pandas as pd

from engine.analysis.telemetry.timeline import utilisation_pct

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
HEATMAP_COLUMNS = ["region", "timezone", "weekday", "weekday_name", "local_hour",
                   "busy_unit_hours", "capacity_unit_hours", "utilisation_pct"]


def hour_of_week(local_bins: pd.DataFrame, timezones: dict[str, str]) -> pd.DataFrame:
    """Region bins on local-hour edges -> one row per region, local weekday (0 = Monday) and hour."""
    if local_bins.empty:
        return pd.DataFrame(columns=HEATMAP_COLUMNS)
    parts = []
    for region, rows in local_bins.groupby("region", sort=True):
        tz = timezones.get(region, "UTC")
        local = pd.DatetimeIndex(rows["bin_start_utc"]).tz_localize("UTC").tz_convert(ZoneInfo(tz))
        cells = pd.DataFrame({
            "weekday": local.day_of_week, "local_hour": local.hour,
            "busy_unit_hours": rows["busy_unit_hours"].to_numpy(),
            "capacity_unit_hours": rows["capacity_unit_hours"].to_numpy(),
        }).groupby(["weekday", "local_hour"], as_index=False).sum()
        cells.insert(0, "timezone", tz)
        cells.insert(0, "region", region)
        parts.append(cells)
    out = pd.concat(parts, ignore_index=True)
    out["weekday_name"] = out["weekday"].map(dict(enumerate(WEEKDAYS)))
    out["utilisation_pct"] = utilisation_pct(out["busy_unit_hours"], out["capacity_unit_hours"])
    return out[HEATMAP_COLUMNS].sort_values(["region", "weekday", "local_hour"]).reset_index(drop=True)
