"""Hour-of-week demand profile: exact pro-rata arithmetic on hand-made jobs, and the sample's totals."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.service.planning.demand import HOURS, demand_profile

ROOT = Path(__file__).resolve().parents[1]
MONDAY = pd.Timestamp("2026-08-03")  # a Monday, 00:00 UTC


def _utc(hours: float | None) -> str | None:
    if hours is None:
        return None
    return (MONDAY + pd.Timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _job(submit_h, run_h=None, *, wait_h=0.0, gpus=1.0, cls="inference", status="completed", requested_s=None,
         region="us-east", gpu_type="H100"):
    """A job submitted `submit_h` hours after MONDAY that waited `wait_h` hours and ran `run_h` hours
    (run_h None: never started)."""
    started = run_h is not None
    return {
        "submit_utc": _utc(submit_h),
        "start_utc": _utc(submit_h + wait_h) if started else None,
        "end_utc": _utc(submit_h + wait_h + run_h) if started and status != "running" else None,
        "gpus": gpus, "region": region, "gpu_type": gpu_type, "workload_class": cls, "status": status,
        "requested_runtime_s": requested_s,
    }


def _profile(rows, **kwargs):
    return demand_profile(pd.DataFrame(rows), **kwargs)


TWO_WEEKS = {"start": "2026-08-03T00:00:00Z", "end": "2026-08-17T00:00:00Z"}


def test_a_job_across_the_week_boundary_is_split_pro_rata():
    # Sunday 22:30 for 3 hours, 2 GPUs, queued 4 h (demand ignores the wait): hours 166..1 of the week
    profile = _profile([_job(6 * 24 + 22.5, 3.0, wait_h=4.0, gpus=2.0)], **TWO_WEEKS)
    expected = np.zeros(HOURS)
    expected[[166, 167, 0, 1]] = np.array([0.5, 1.0, 1.0, 0.5]) * 2.0 / 2  # GPU-hours / 2 weeks observed
    assert profile.pools == (("us-east", "H100"),)
    np.testing.assert_allclose(profile.firm[0], expected, atol=1e-12)
    np.testing.assert_allclose(profile.flexible, 0.0)
    assert profile.weeks == 2.0
    np.testing.assert_allclose(profile.observed_weeks, 2.0)


@pytest.mark.parametrize("growth", [1.0, 1.3])
def test_fractional_gpus_flexible_classes_and_growth(growth):
    rows = [_job(10.25, 0.75, gpus=0.5, cls="hpo"),                         # 0.5 GPU x 0.75 h in hour 10
            _job(24 + 10.5, 2.0, gpus=8.0, cls="training", region="eu-west", gpu_type="A100"),
            _job(10.0, 1.0, gpus=1.0, cls="development")]
    profile = _profile(rows, growth=growth, **TWO_WEEKS)
    assert profile.pools == (("eu-west", "A100"), ("us-east", "H100"))
    flexible, firm = np.zeros((2, HOURS)), np.zeros((2, HOURS))
    flexible[1, 10] = 0.5 * 0.75 / 2
    flexible[0, [34, 35, 36]] = np.array([0.5, 1.0, 0.5]) * 8.0 / 2
    firm[1, 10] = 1.0 / 2
    np.testing.assert_allclose(profile.flexible, flexible * growth, atol=1e-12)
    np.testing.assert_allclose(profile.firm, firm * growth, atol=1e-12)


def test_flexible_classes_are_configurable():
    rows = [_job(3.0, 1.0, cls="batch"), _job(3.0, 1.0, cls="inference")]
    profile = _profile(rows, flexible_classes=("batch", "inference"), **TWO_WEEKS)
    assert profile.firm.sum() == 0.0
    assert profile.flexible[0, 3] == pytest.approx(1.0)


@pytest.mark.parametrize("job, expected_gpu_hours, note", [
    (_job(5.0, None, status="pending", requested_s=5400), 1.5, "requested runtime"),   # runs its request
    (_job(5.0, None, status="cancelled"), 0.0, "skipped"),                              # nothing to go on
])
def test_true_runtime_follows_the_simulator(job, expected_gpu_hours, note):
    profile = _profile([_job(0.0, 1.0), job], **TWO_WEEKS)
    assert (profile.firm * profile.observed_weeks).sum() == pytest.approx(1.0 + expected_gpu_hours)
    assert any(note in n for n in profile.notes)


def test_a_running_job_runs_to_the_data_end():
    # observed end = the latest submit/start/end in the table = hour 30; the running job started at 20
    rows = [_job(0.0, 30.0), _job(18.0, 1.0, wait_h=2.0, status="running")]
    profile = _profile(rows, **TWO_WEEKS)
    gpu_hours = profile.firm[0] * profile.observed_weeks
    np.testing.assert_allclose(gpu_hours[18:28], 2.0)  # it ran 30 - 20 = 10 h, placed at its submit
    np.testing.assert_allclose(gpu_hours[28:30], 1.0)
    assert gpu_hours.sum() == pytest.approx(30.0 + 10.0)


def test_jobs_are_clipped_to_the_window_and_partial_hours_are_observed_pro_rata():
    window = {"start": _utc(0.5), "end": _utc(7 * 24 + 0.5)}  # one week, starting half-way through hour 0
    rows = [_job(0.0, 2.0, gpus=4.0), _job(7 * 24 - 1.0, 3.0, gpus=2.0)]
    profile = _profile(rows, **window)
    assert profile.weeks == pytest.approx(1.0)
    np.testing.assert_allclose(profile.observed_weeks, 1.0)  # slot 0: [0.5, 1) and next week's [0, 0.5)
    gpu_hours = profile.firm[0] * profile.observed_weeks
    # job 1: [0.5, 2) inside -> 2 GPUs-hours in hour 0 and 4 in hour 1;
    # job 2: [167, 170) -> hour 167 whole, next week's hour 0 until 0.5 -> 1 GPU-hour
    assert gpu_hours[0] == pytest.approx(4.0 * 0.5 + 2.0 * 0.5)
    assert gpu_hours[1] == pytest.approx(4.0)
    assert gpu_hours[167] == pytest.approx(2.0)
    assert gpu_hours.sum() == pytest.approx(2.0 + 4.0 + 2.0 + 1.0)


def test_a_window_shorter_than_a_week_leaves_unseen_hours_at_zero():
    rows = [_job(h, 1.0, gpus=3.0) for h in range(0, 72, 2)]
    profile = _profile(rows, start=_utc(0.0), end=_utc(72.0))
    assert profile.weeks == pytest.approx(3 / 7)
    np.testing.assert_allclose(profile.observed_weeks[:72], 1.0)
    np.testing.assert_allclose(profile.observed_weeks[72:], 0.0)
    np.testing.assert_allclose(profile.firm[0, :72], np.tile([3.0, 0.0], 36))  # mean of one observation
    np.testing.assert_allclose(profile.firm[0, 72:], 0.0)
    assert any("96 hours of the week are not in the window" in n for n in profile.notes)


def test_the_default_window_is_first_to_last_submit():
    rows = [_job(1.0, 5.0), _job(3.0, 1.0, gpus=2.0)]
    profile = _profile(rows)
    assert profile.weeks == pytest.approx(2.0 / 168)
    gpu_hours = profile.firm[0] * profile.observed_weeks
    assert gpu_hours.sum() == pytest.approx(2.0)  # [1, 3) of the first job; the second starts at the end
    np.testing.assert_allclose(profile.observed_weeks[[1, 2]], 1.0)


def test_an_empty_window_is_refused():
    with pytest.raises(ValueError, match="empty demand window"):
        _profile([_job(0.0, 1.0)], start=_utc(5.0), end=_utc(5.0))


def _true_runtime_h(jobs: pd.DataFrame) -> pd.Series:
    """The simulator's true runtime, written out independently of engine.sim.state.workload."""
    submit, start, end = (pd.to_datetime(jobs[c], utc=True) for c in ("submit_utc", "start_utc", "end_utc"))
    observed_end = max(submit.max(), start.max(), end.max())
    running = (jobs["status"] == "running") & start.notna() & end.isna()
    recorded = (end - start).dt.total_seconds().where(~running, (observed_end - start).dt.total_seconds())
    return recorded.clip(lower=0).fillna(jobs["requested_runtime_s"]) / 3600.0


@pytest.fixture(scope="module")
def sample_jobs():
    return pd.read_csv(ROOT / "sample_data" / "jobs.csv.gz")


def test_sample_profile_keeps_every_gpu_hour_of_the_window(sample_jobs):
    profile = demand_profile(sample_jobs)
    submit = pd.to_datetime(sample_jobs["submit_utc"], utc=True)
    lo, hi = submit.min(), submit.max()
    run_h = _true_runtime_h(sample_jobs)
    begin_h = ((submit - lo).dt.total_seconds() / 3600.0)
    inside_h = (np.minimum(begin_h + run_h, (hi - lo).total_seconds() / 3600.0) - begin_h).clip(lower=0).fillna(0)
    gpu_hours = sample_jobs["gpus"] * inside_h
    flexible = sample_jobs["workload_class"].isin(["batch", "hpo", "training"])
    assert len(profile.pools) == 14
    assert profile.weeks == pytest.approx(12.0, abs=1e-3)
    assert (profile.flexible * profile.observed_weeks).sum() == pytest.approx(gpu_hours[flexible].sum(), rel=1e-9)
    assert (profile.firm * profile.observed_weeks).sum() == pytest.approx(gpu_hours[~flexible].sum(), rel=1e-9)
    per_pool = gpu_hours.groupby([sample_jobs["region"], sample_jobs["gpu_type"]]).sum()
    np.testing.assert_allclose(((profile.firm + profile.flexible) * profile.observed_weeks).sum(axis=1),
                               per_pool.loc[list(profile.pools)].to_numpy(), rtol=1e-9)
