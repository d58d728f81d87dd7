"""Off-peak prices in the cost report: the share of each held piece inside its region's window.

A region's window (engine.world.offpeak) comes from its regions-table row (a scenario's [[region]] off_peak_* edits,
engine.scenario.world): off_peak_start_hour and off_peak_end_hour (0-23, local; end <= start crosses
midnight) and off_peak_discount (0-1). A GPU-hour held in those local hours on on-demand or spot
capacity costs price x (1 - discount); reserved capacity is paid by commitment and gets nothing.
`off_peak_share` gives, per held piece, the share of its time inside its region's window, exact to
the local-hour changes (DST included, through engine.analysis.telemetry.local_hours.local_hour_bins).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.local_hours import local_hour_bins
from engine.world.offpeak import in_window, windows


def off_peak_share(region: np.ndarray, start_s: np.ndarray, end_s: np.ndarray, origin_utc, horizon_s: float,
                   regions: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    """(share of each piece's [start_s, end_s) in its region's off-peak hours, its region's discount)."""
    share, discount = np.zeros(len(region)), np.zeros(len(region))
    for name, (first, last, cut, zone) in windows(regions).items():
        mine = region == name
        if not mine.any() or horizon_s <= 0:
            continue
        edges, hours = local_hour_bins(origin_utc, horizon_s, zone)
        cumulative = np.concatenate(([0.0], np.cumsum(np.diff(edges) * in_window(hours, first, last))))
        begin, stop = start_s[mine], end_s[mine]
        inside = np.interp(stop, edges, cumulative) - np.interp(begin, edges, cumulative)
        share[mine] = np.divide(inside, stop - begin, out=np.zeros(len(begin)), where=stop > begin)
        discount[mine] = cut
    return share, discount
