"""The analysis window: the whole UTC hours a dataset covers, and bin edges inside it.

Times inside the analysis are float hours since `Window.start_utc`, so every integral comes
out in unit-hours (GPU-hours, node-hours) without further conversion.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

HOUR = pd.Timedelta(hours=1)


@dataclass(frozen=True)
class Window:
    """[start_utc, end_utc): the data's first and last instants widened to whole UTC hours.

    data_start_utc / data_end_utc are the raw first and last instants (for jobs: the earliest
    submit or start, and the latest end, start or submit, which is also where a still-running
    job is taken to stop).
    """

    start_utc: pd.Timestamp
    end_utc: pd.Timestamp
    data_start_utc: pd.Timestamp
    data_end_utc: pd.Timestamp

    @classmethod
    def covering(cls, first, last) -> "Window":
        first, last = pd.Timestamp(first), pd.Timestamp(last)
        start = first.floor("h")
        end = max(last.ceil("h"), start + HOUR)
        return cls(start, end, first, last)

    @property
    def hours(self) -> float:
        """Length of the window in hours (a whole number)."""
        return (self.end_utc - self.start_utc) / HOUR

    @property
    def days(self) -> float:
        return self.hours / 24.0

    def to_hours(self, timestamps: pd.Series) -> np.ndarray:
        """Hours since start_utc for naive-UTC timestamps; NaN for missing values."""
        values = pd.to_datetime(timestamps)
        return ((values - self.start_utc) / HOUR).to_numpy(dtype=float, na_value=np.nan)

    def to_utc(self, hours) -> pd.DatetimeIndex:
        """Inverse of `to_hours`, rounded to the second."""
        stamps = self.start_utc + pd.to_timedelta(np.asarray(hours, dtype=float) * 3600.0, unit="s")
        return pd.DatetimeIndex(stamps).round("s")

    def hour_edges(self) -> np.ndarray:
        """Edges of the UTC hour bins: 0, 1, ..., hours."""
        return np.arange(int(self.hours) + 1, dtype=float)

    def local_hour_edges(self, timezone: str) -> np.ndarray:
        """Edges of the local-clock hours of `timezone` inside the window (hours since start).

        A local hour starts whenever the local clock shows minute 0. Daylight-saving shifts
        move clocks by whole hours, so the boundaries are the UTC instants whose minute equals
        (-UTC offset) mod 60 (0 for most zones, 30 for India, 15 for Nepal). The first and last
        bins are cut at the window's ends, so they may be shorter than an hour.
        """
        offset = self.start_utc.tz_localize("UTC").tz_convert(ZoneInfo(timezone)).utcoffset()
        shift_h = ((-offset.total_seconds() / 60.0) % 60.0) / 60.0
        inner = np.arange(shift_h, math.ceil(self.hours) + 1.0, 1.0)
        inner = inner[(inner > 0.0) & (inner < self.hours)]
        return np.concatenate(([0.0], inner, [self.hours]))
