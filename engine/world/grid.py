"""Grid carbon intensity by local hour: one region's 24-hour profile from a dataset's carbon table.

The carbon table holds (region, local_hour 0-23, g_co2e_per_kwh). A region without rows gets
DEFAULT_G_CO2E_PER_KWH at every hour; hours missing from a region's rows take the mean of its
other hours. The simulator's router (engine.world.facts) and the carbon report
(engine.analysis.runs.carbon) both read intensities through here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

DEFAULT_G_CO2E_PER_KWH = 480.0  # about the world-average grid, for regions without a carbon profile


def hourly_intensity(carbon: pd.DataFrame, region: str,
                     default: float = DEFAULT_G_CO2E_PER_KWH) -> tuple[np.ndarray, str | None]:
    """(24 intensities in gCO2e/kWh by local hour, a note on what was assumed or None)."""
    rows = carbon[carbon["region"] == region] if len(carbon) else carbon
    if rows.empty:
        return np.full(24, float(default)), f"{region}: no carbon profile; {default:g} gCO2e/kWh assumed at every hour"
    profile = np.full(24, np.nan)
    profile[rows["local_hour"].to_numpy(np.int64)] = rows["g_co2e_per_kwh"].to_numpy(np.float64)
    missing = int(np.isnan(profile).sum())
    if not missing:
        return profile, None
    profile[np.isnan(profile)] = np.nanmean(profile)
    return profile, f"{region}: {missing} local hours without an intensity take the mean of the others"
