"""One queued job's predicted start and why its interval is as wide as it is (engine.service.eta_why), on a
hand-built queue whose answer is known."""
import numpy as np
import pandas as pd
import pytest

from engine.core.units import PROCESSOR
from engine.service.eta_why import NotWaiting, job_eta, width_text

T = pd.Timestamp
AT = T("2024-03-04 12:00")
FLEET = pd.DataFrame({"region": ["eu"], "node": ["n1"], "gpu_type": ["H100"], "gpus": [4], "tier": ["reserved"]})


def _jobs() -> pd.DataFrame:
    """a holds all 4 GPUs since 11:00 (ended 14:00 in the record); b (2 GPUs) waits for it from 11:50; c, in
    another region, is irrelevant to b; d ran and ended before the instant."""
    return pd.DataFrame({
        "job_id": ["d", "a", "b", "c"], "user_name": ["u"] * 4, "team": ["t"] * 4, "workload_class": ["batch"] * 4,
        "queue": [None] * 4, "region": ["eu", "eu", "eu", "us"], "gpus": [1.0, 4.0, 2.0, 1.0], "nodes": [1] * 4,
        "requested_runtime_s": [3600.0, 7200.0, 3600.0, 3600.0],
        "submit_utc": [T("2024-03-04 09:00"), T("2024-03-04 11:00"), T("2024-03-04 11:50"), T("2024-03-04 11:55")],
        "start_utc": [T("2024-03-04 09:00"), T("2024-03-04 11:00"), T("2024-03-04 14:00"), pd.NaT],
        "end_utc": [T("2024-03-04 10:00"), T("2024-03-04 14:00"), T("2024-03-04 15:00"), pd.NaT],
        "status": ["completed", "completed", "completed", "pending"]})


class Quantiles:
    """A runtime model stand-in: every job's P10 / P50 / P90 are 1 h / 2 h / 4 h."""

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"p10_s": 3600.0, "p50_s": 7200.0, "p90_s": 14400.0}, index=frame.index)


def test_the_job_starts_when_the_job_holding_its_gpus_ends_and_the_interval_is_that_ends_spread():
    answer = job_eta(_jobs(), FLEET.assign(region="eu"), AT, "b", model=Quantiles(), samples=40)
    assert answer.region == "eu" and answer.drivers["job_id"].tolist() == ["a"]
    driver = answer.drivers.iloc[0]
    assert driver["share"] == 1.0 and driver["state"] == "running for 1 h" and driver["gpus"] == 4.0
    # b's start is a's end in every replay, so b's wait quantiles are a's remaining runtime's
    assert answer.row["wait_lo_s"] == pytest.approx(driver["left_p10_s"])
    assert answer.row["wait_hi_s"] == pytest.approx(driver["left_p90_s"])
    assert answer.width_s == pytest.approx(answer.row["wait_hi_s"] - answer.row["wait_lo_s"])
    assert answer.shares == {"at once": 0.0, "never": 0.0, "another pass": 0.0}
    text = width_text(answer)
    assert text.startswith("The 80% interval is ") and "It starts when GPUs come free in eu: 100% of the replays " \
        "when job a ended (running for 1 h, 4 GPUs, " in text
    assert "4 processors" in width_text(answer, PROCESSOR)


def test_a_job_with_room_starts_at_once_and_one_not_waiting_is_refused():
    jobs = _jobs()
    answer = job_eta(jobs, FLEET.assign(region="us"), AT, "c", model=Quantiles(), samples=8)
    assert answer.shares["at once"] == 1.0 and np.isfinite(answer.width_s)
    assert width_text(answer).startswith("It starts at once in the replays")
    with pytest.raises(NotWaiting, match="job a was not waiting at 2024-03-04 12:00 UTC"):
        job_eta(jobs, FLEET, AT, "a", model=Quantiles(), samples=4)
