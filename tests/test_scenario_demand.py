"""The demand resampler (engine.scenario.demand) on the bundled sample: each region's hour-of-week
profile, the class mix and the teams scale by s within one job per stratum run; s = 1 is the data
itself; the same seed, the same jobs; time is never compressed."""
import numpy as np
import pandas as pd
import pytest

from engine.scenario.demand import hour_of_week, scale_demand
from engine.telemetry.sample import read_bundle


@pytest.fixture(scope="module")
def jobs():
    return read_bundle().tables["jobs"]


def _profile(frame: pd.DataFrame) -> pd.Series:
    return frame.assign(how=hour_of_week(frame["submit_utc"])).groupby(["region", "how"]).size()


@pytest.mark.parametrize("scale", [0.5, 1.3, 2.0])
def test_every_region_hour_class_and_team_scales_by_s(jobs, scale):
    out = scale_demand(jobs, scale, seed=7)
    assert len(out) == pytest.approx(scale * len(jobs), abs=1)
    # each (region, hour of week) cell within one job of s x its count: the strata of a cell are
    # consecutive, and systematic rounding keeps any run of them within one job
    before, after = _profile(jobs), _profile(out).reindex(_profile(jobs).index, fill_value=0)
    assert (after - scale * before).abs().max() <= 1.0
    # the mix: every class's and every region's team's share within 0.1 point and 0.5 % of its count
    share = lambda f, by: f.groupby(by).size() / len(f)  # noqa: E731
    assert (share(out, "workload_class") - share(jobs, "workload_class")).abs().max() < 0.001
    teams = out.groupby(["region", "team"]).size() / (scale * jobs.groupby(["region", "team"]).size())
    assert (teams - 1).abs().max() < 0.005
    assert out["job_id"].is_unique


def test_copies_are_submitted_in_their_donors_hour_with_their_times_shifted_alike(jobs):
    out = scale_demand(jobs, 1.3, seed=1)
    copies = out[out["job_id"].str.contains("+r", regex=False)]
    donors = jobs.set_index("job_id").loc[copies["job_id"].str.split("+").str[0]]
    assert (copies["submit_utc"].dt.floor("h").to_numpy() == donors["submit_utc"].dt.floor("h").to_numpy()).all()
    moved = copies["submit_utc"].to_numpy() - donors["submit_utc"].to_numpy()
    ran = donors["start_utc"].notna().to_numpy()
    assert (copies["start_utc"].to_numpy()[ran] - donors["start_utc"].to_numpy()[ran] == moved[ran]).all()
    for column in ("gpus", "workload_class", "team", "region", "gpu_type", "status"):
        assert (copies[column].to_numpy() == donors[column].to_numpy()).all()


def test_scale_one_is_the_data_and_a_seed_always_gives_the_same_jobs(jobs):
    assert scale_demand(jobs, 1.0, seed=5) is jobs
    assert scale_demand(jobs, 1.3, seed=5).equals(scale_demand(jobs, 1.3, seed=5))
    assert not scale_demand(jobs, 1.3, seed=5).equals(scale_demand(jobs, 1.3, seed=6))
    thinned = scale_demand(jobs, 0.5, seed=5)
    assert set(thinned["job_id"]) <= set(jobs["job_id"])


def test_time_is_never_compressed(jobs):
    out = scale_demand(jobs, 2.0, seed=2)
    span = lambda f: pd.to_datetime(f["submit_utc"]).max() - pd.to_datetime(f["submit_utc"]).min()  # noqa: E731
    assert span(out) <= span(jobs) + pd.Timedelta(hours=1)
    assert np.isclose(span(out) / span(jobs), 1.0, atol=1e-3)


def test_a_non_positive_scale_is_refused(jobs):
    with pytest.raises(ValueError, match="positive"):
        scale_demand(jobs, 0.0)
