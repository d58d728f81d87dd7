"""Off-peak windows: a region's local hours when its on-demand and spot GPUs cost less.

They live in the regions table (a scenario's [[region]] off_peak_* edits, engine.scenario.world):
off_peak_start_hour and off_peak_end_hour (0-23, local; end <= start crosses midnight) and
off_peak_discount (0-1). The cost report (engine.analysis.telemetry.offpeak) and the router's prices
(engine.world.facts) read them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ("off_peak_start_hour", "off_peak_end_hour", "off_peak_discount")


def windows(regions: pd.DataFrame | None) -> dict[str, tuple[int, int, float, str]]:
    """region -> (start hour, end hour, discount, time zone) for regions with an off-peak discount."""
    if regions is None or regions.empty or not set(COLUMNS) <= set(regions.columns):
        return {}
    out = {}
    for row in regions.itertuples(index=False):
        discount = getattr(row, "off_peak_discount")
        if discount == discount and discount > 0:
            zone = getattr(row, "timezone", None)
            out[str(row.region)] = (int(row.off_peak_start_hour), int(row.off_peak_end_hour), float(discount),
                                    zone if isinstance(zone, str) and zone else "UTC")
    return out


def in_window(hours: np.ndarray, start: int, end: int) -> np.ndarray:
    """Whether each local hour lies in [start, end) (crossing midnight when end <= start)."""
    return (hours >= start) & (hours < end) if start < end else (hours >= start) | (hours < end)
