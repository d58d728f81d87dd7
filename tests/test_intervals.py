"""Exact integrals of weighted intervals over bins, and peak concurrency."""
import numpy as np
import pandas as pd
import pytest

from engine.analysis.telemetry.window import Window
from engine.core.intervals import integrate, overlap_hours, peak_concurrency


def test_a_job_spanning_two_and_a_half_hours_fills_its_bins_exactly():
    # 2 GPUs from 00:30 to 03:00: half of hour 0, all of hours 1 and 2, none of hour 3.
    busy = integrate([0.5], [3.0], [2.0], [0, 1, 2, 3, 4])
    assert busy.tolist() == [1.0, 2.0, 2.0, 0.0]


def test_fractional_gpus_and_overlapping_jobs_add_up():
    busy = integrate([0.0, 0.25, 1.5], [2.0, 0.75, 1.75], [0.25, 0.5, 1.0], [0, 1, 2])
    assert busy == pytest.approx([0.25 + 0.25, 0.25 + 0.25])


def test_intervals_outside_the_bins_contribute_nothing_and_edges_clip():
    busy = integrate([-5.0, 10.0, -1.0], [-4.0, 12.0, 0.5], [3.0, 3.0, 1.0], [0, 1])
    assert busy.tolist() == [0.5]


def test_integral_equals_the_total_allocation_when_bins_cover_everything():
    rng = np.random.default_rng(7)
    starts = rng.uniform(0, 100, 5000)
    ends = starts + rng.exponential(5, 5000)
    gpus = rng.choice([0.25, 1, 8], 5000)
    busy = integrate(starts, ends, gpus, np.arange(0, 200))
    assert busy.sum() == pytest.approx(((ends - starts) * gpus).sum(), rel=1e-9)


def test_peak_concurrency_treats_intervals_as_half_open():
    # [0, 1) and [1, 2) never overlap; [0.5, 1.5) overlaps both.
    assert peak_concurrency([0, 1], [1, 2], [2, 3]) == 3
    assert peak_concurrency([0, 1, 0.5], [1, 2, 1.5], [2, 3, 0.5]) == 3.5
    assert peak_concurrency([], [], []) == 0


def test_overlap_hours_cuts_bins_at_the_window():
    assert overlap_hours([-0.5, 0.5, 1.5, 2.5], 0.0, 2.0).tolist() == [0.5, 1.0, 0.5]


def test_window_is_whole_utc_hours_around_the_data():
    w = Window.covering(pd.Timestamp("2024-01-01 00:10"), pd.Timestamp("2024-01-01 02:20"))
    assert (w.start_utc, w.end_utc, w.hours) == (pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-01 03:00"), 3)
    assert w.hour_edges().tolist() == [0, 1, 2, 3]


def test_local_hour_edges_follow_half_hour_zones():
    w = Window.covering(pd.Timestamp("2024-01-01 00:00"), pd.Timestamp("2024-01-01 03:00"))
    # India is UTC+05:30: local hours start at hh:30 UTC.
    assert w.local_hour_edges("Asia/Kolkata").tolist() == [0, 0.5, 1.5, 2.5, 3]
    assert w.local_hour_edges("Europe/Berlin").tolist() == [0, 1, 2, 3]
