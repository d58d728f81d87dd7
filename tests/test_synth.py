"""The sample generator: determinism, the FIFO replay, and the shape of the committed sample."""
import datetime as dt
import gzip
from pathlib import Path
from zoneinfo import ZoneInfo

import holidays
import numpy as np
import pandas as pd
import pytest

from engine.core.vocabulary import WORKLOAD_CLASSES
from engine.telemetry.synth.fifo import replay_pool
from engine.telemetry.synth.generate import BUNDLE_FILES, DEFAULT_SEED, generate_sample

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
WINDOW = (pd.Timestamp("2026-08-03"), pd.Timestamp("2026-10-26"))   # documented in sample_data/README.md


def _content(path: Path) -> bytes:
    """A file's content; gzip files uncompressed (compressed bytes may differ between zlib builds)."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


# -- determinism -------------------------------------------------------------------------------

def test_same_seed_and_scale_give_byte_identical_files(tmp_path):
    first = generate_sample(tmp_path / "a", seed=7, scale=0.1)
    second = generate_sample(tmp_path / "b", seed=7, scale=0.1)
    assert sorted(first) == sorted(BUNDLE_FILES)
    for table in BUNDLE_FILES:
        assert first[table].read_bytes() == second[table].read_bytes(), table
    other = generate_sample(tmp_path / "c", seed=8, scale=0.1)
    assert other["jobs"].read_bytes() != first["jobs"].read_bytes()
    assert other["fleet"].read_bytes() == first["fleet"].read_bytes()   # the world does not depend on the seed


@pytest.mark.slow
def test_committed_sample_is_the_generators_output(tmp_path):
    """sample_data/ must be regenerated whenever the generator changes (see its README).

    Marked slow so that CI, which resolves the newest numpy/holidays/pandas, is not blocked by
    an upstream release that shifts the output; run `pytest -m slow` after touching the generator.
    """
    paths = generate_sample(tmp_path, seed=DEFAULT_SEED, scale=1.0)
    for table, path in paths.items():
        assert _content(path) == _content(SAMPLE / path.name), table


def test_scale_multiplies_jobs_and_fleet(tmp_path):
    small = generate_sample(tmp_path / "s", scale=0.2)
    fleet = pd.read_csv(small["fleet"])
    jobs = pd.read_csv(small["jobs"])
    full_fleet = pd.read_csv(SAMPLE / "fleet.csv")
    full_jobs = pd.read_csv(SAMPLE / "jobs.csv.gz", usecols=["job_id"])
    assert 0.15 < fleet["gpus"].sum() / full_fleet["gpus"].sum() < 0.3
    assert 0.12 < len(jobs) / len(full_jobs) < 0.3
    with pytest.raises(ValueError):
        generate_sample(tmp_path / "bad", scale=0)


# -- the FIFO replay on hand-built pools -----------------------------------------------------------

def _replay(capacity_gpus, jobs, horizon=10_000):
    """jobs: (submit_s, gpus_per_node, nodes, run_s[, patience_s])."""
    rows = [tuple(j) + ((-1,) if len(j) == 4 else ()) for j in jobs]
    a = np.array(rows, dtype=np.int64).reshape(-1, 5)
    return replay_pool(np.array(capacity_gpus, dtype=np.int64) * 1000, a[:, 0], a[:, 1] * 1000, a[:, 2],
                       a[:, 3], a[:, 4], horizon)


def test_head_of_line_blocks_jobs_that_would_fit():
    # node of 8 GPUs: job 0 takes 6; job 1 needs 4 and waits; job 2 needs 1 and fits but must wait behind job 1
    r = _replay([8], [(0, 6, 1, 100), (10, 4, 1, 50), (20, 1, 1, 10)])
    assert r.start_s.tolist() == [0, 100, 100]
    assert r.end_s.tolist() == [100, 150, 110]


def test_gang_needs_whole_free_nodes():
    # two 8-GPU nodes; one GPU busy on node 0 until t=500 blocks a 2-node gang until then
    r = _replay([8, 8], [(0, 1, 1, 500), (1, 8, 2, 100), (2, 1, 1, 10)])
    assert r.start_s.tolist() == [0, 500, 600]


def test_best_fit_keeps_whole_nodes_free_for_big_jobs():
    # job 1 (2 GPUs) goes on the fuller node 1 (4 free), leaving node 0 whole for job 2 (8 GPUs)
    r = _replay([8, 8], [(0, 4, 1, 1000), (0, 2, 1, 1000), (5, 8, 1, 10)])
    assert r.start_s.tolist() == [0, 0, 5]


def test_user_gives_up_and_pending_jobs_at_the_horizon():
    r = _replay([8], [(0, 8, 1, 1000), (10, 8, 1, 100, 300), (20, 8, 1, 100)], horizon=1050)
    assert r.gave_up.tolist() == [False, True, False]
    assert r.end_s[1] == 310 and r.start_s[1] == -1
    assert r.start_s[2] == 1000 and r.end_s[2] == 1100   # ends after the horizon: running
    pending = _replay([8], [(0, 8, 1, 1000), (20, 8, 1, 100)], horizon=900)
    assert pending.start_s.tolist() == [0, -1] and pending.end_s[1] == -1 and not pending.gave_up[1]


def test_a_job_larger_than_the_pool_is_refused():
    with pytest.raises(ValueError):
        _replay([8], [(0, 8, 2, 10)])


# -- shape of the committed sample ------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample():
    jobs = pd.read_csv(SAMPLE / "jobs.csv.gz", dtype={"job_id": str})
    for column in ("submit_utc", "start_utc", "end_utc", "deadline_utc"):
        jobs[column] = pd.to_datetime(jobs[column], format="%Y-%m-%dT%H:%M:%SZ")
    tables = {name: pd.read_csv(SAMPLE / f"{name}.csv") for name in ("fleet", "regions", "prices", "carbon", "teams")}
    return {"jobs": jobs, **tables}


def test_committed_files_are_small():
    sizes = [(SAMPLE / name).stat().st_size for name in BUNDLE_FILES.values()]
    assert sum(sizes) < 15 * 2**20


def test_regions_span_four_continents_and_time_zones(sample):
    regions = sample["regions"]
    noon = dt.datetime(2026, 8, 3, 12, tzinfo=dt.UTC)
    offsets = {noon.astimezone(ZoneInfo(tz)).utcoffset() for tz in regions["timezone"]}
    assert len(regions) >= 5 and len(offsets) >= 4
    assert {"America/New_York", "Europe/Dublin", "Asia/Riyadh", "Asia/Tokyo"} <= set(regions["timezone"])
    assert {"US", "EU", "SA"} <= set(regions["jurisdiction"])
    assert (regions["egress_usd_per_gb"] > 0).all()


def test_prices_per_tier_differ_by_region(sample):
    prices = sample["prices"].pivot_table(index=["region", "gpu_type"], columns="tier", values="usd_per_gpu_hour")
    assert len(prices) == len(sample["regions"]) * 3 and not prices.isna().any().any()
    assert ((prices["spot"] < prices["reserved"]) & (prices["reserved"] < prices["on-demand"])).all()
    h100 = prices.xs("H100", level="gpu_type")["on-demand"]
    assert h100.nunique() >= 5
    assert not sample["prices"]["assumed"].any()


def test_carbon_profiles_have_realistic_shapes(sample):
    carbon = sample["carbon"].pivot(index="local_hour", columns="region", values="g_co2e_per_kwh")
    assert list(carbon.index) == list(range(24))
    assert 10 <= carbon["us-west"].idxmin() <= 15          # California's solar dip at midday
    assert carbon.mean().idxmin() == "eu-north"            # Swedish hydro and nuclear
    assert carbon.mean().idxmax() == "ap-south"            # Indian coal
    assert carbon["ap-south"].max() / carbon["ap-south"].min() < 1.2   # flat


def test_fleet_nodes_tiers_and_racks(sample):
    fleet = sample["fleet"]
    assert set(fleet.loc[fleet["gpu_type"] != "L4", "gpus"]) == {8}
    assert set(fleet.loc[fleet["gpu_type"] == "L4", "gpus"]) == {4, 8}
    tiers = fleet["tier"].value_counts(normalize=True)
    assert tiers["reserved"] > 0.5 and tiers["on-demand"] > 0.05 and tiers["spot"] > 0.02
    assert fleet["node"].is_unique and fleet["rack"].notna().all()


def test_teams_have_calendars_including_a_sunday_to_thursday_week(sample):
    teams = sample["teams"]
    assert len(teams) >= 10 and len(set(teams["timezone"])) >= 6
    sun_thu = teams[teams["working_days"] == "Sun-Thu"]
    assert set(sun_thu["timezone"]) & {"Asia/Riyadh", "Asia/Jerusalem"}
    for country in teams["holiday_country"]:
        assert holidays.country_holidays(country, years=2026)
    assert set(teams["home_region"]) <= set(sample["regions"]["region"])
    assert (teams["work_end_hour"] > teams["work_start_hour"]).all()


def test_jobs_cover_every_class_and_outcome(sample):
    jobs = sample["jobs"]
    assert 40_000 <= len(jobs) <= 120_000 and jobs["job_id"].is_unique
    assert set(jobs["workload_class"]) == set(WORKLOAD_CLASSES) - {"unknown"}
    assert {"completed", "failed", "cancelled", "running", "pending"} <= set(jobs["status"])
    failed = jobs.groupby("workload_class")["status"].apply(lambda s: (s == "failed").mean())
    assert failed.between(0.02, 0.15).all() and failed["training"] > failed["inference"]
    running, pending = jobs[jobs["status"] == "running"], jobs[jobs["status"] == "pending"]
    assert running["end_utc"].isna().all() and running["start_utc"].notna().all()
    assert pending["start_utc"].isna().all() and pending["end_utc"].isna().all()
    assert jobs["submit_utc"].min() == WINDOW[0] and jobs["submit_utc"].max() < WINDOW[1]
    assert (jobs["end_utc"].dropna() <= WINDOW[1]).all()
    assert (WINDOW[1] - WINDOW[0]).days == 84


def test_runtime_requests_are_overestimates(sample):
    jobs = sample["jobs"].dropna(subset=["start_utc", "end_utc", "requested_runtime_s"])
    actual = (jobs["end_utc"] - jobs["start_utc"]).dt.total_seconds()
    ratio = jobs["requested_runtime_s"] / actual
    assert (ratio > 1).mean() > 0.9 and 2 <= ratio.median() <= 10


def test_workload_classes_have_their_shapes(sample):
    jobs = sample["jobs"]
    ran = (jobs["end_utc"] - jobs["start_utc"]).dt.total_seconds() / 3600
    training = jobs["workload_class"] == "training"
    assert set(jobs.loc[training, "gpus"]) == {8, 16, 32, 64} and (jobs.loc[training, "nodes"] >= 2).any()
    assert (ran[training] > 5 * 24).sum() >= 20                                # week-long runs
    fractional = jobs[jobs["gpus"] < 1]
    assert len(fractional) > 1000 and set(fractional["gpu_milli"]) == {500} and set(fractional["gpu_type"]) == {"L4"}
    sweeps = jobs[jobs["workload_class"] == "hpo"].groupby("project")["submit_utc"]
    assert (sweeps.size() >= 100).all() and (sweeps.max() - sweeps.min()).max() <= pd.Timedelta(minutes=15)
    assert ran[jobs["workload_class"] == "hpo"].median() < 1
    batch = jobs[jobs["workload_class"] == "batch"]
    assert batch[["deadline_utc", "data_location", "data_size_gb"]].notna().all().all()
    assert (batch["deadline_utc"] > batch["submit_utc"]).all()
    guaranteed = jobs[(jobs["workload_class"] == "inference") & (jobs["qos"] == "guaranteed")]
    assert len(guaranteed) >= 9 and (guaranteed["status"] == "running").all()
    dev = jobs[jobs["workload_class"] == "development"]
    assert (dev["gpus"] <= 2).all() and ran[dev.index].max() <= 8


def test_residency_tags_keep_data_in_their_jurisdiction(sample):
    jobs = sample["jobs"]
    regions = sample["regions"].set_index("region")["jurisdiction"]
    for tag in ("EU", "SA"):
        tagged = jobs[jobs["residency"] == tag]
        assert len(tagged) > 100
        assert set(tagged["region"].map(regions)) == {tag}
        assert set(tagged["data_location"].dropna().map(regions)) == {tag}


def _busy_gpu_seconds(jobs, begin, end):
    start = jobs["start_utc"].clip(lower=begin)
    stop = jobs["end_utc"].fillna(end).clip(upper=end)
    return ((stop - start).dt.total_seconds().clip(lower=0) * jobs["gpus"]).where(jobs["start_utc"].notna(), 0)


def test_fleet_idles_about_forty_percent_while_a_backlog_waits(sample):
    jobs, fleet = sample["jobs"], sample["fleet"]
    begin, end = WINDOW
    busy = _busy_gpu_seconds(jobs, begin, end).sum()
    idle = 1 - busy / (fleet["gpus"].sum() * (end - begin).total_seconds())
    assert 0.35 <= idle <= 0.45
    wait_h = (jobs["start_utc"] - jobs["submit_utc"]).dt.total_seconds() / 3600
    p95 = wait_h.groupby(jobs["workload_class"]).quantile(0.95)
    assert p95["batch"] > 1 and p95["training"] > 1 and p95["hpo"] > 1


def test_recorded_fifo_never_overbooks_and_starts_in_submit_order(sample):
    jobs = sample["jobs"]
    capacity = sample["fleet"].groupby("cluster")["gpus"].sum()
    far = pd.Timestamp("2100-01-01")
    for cluster, group in jobs[jobs["start_utc"].notna()].groupby("cluster"):
        times = np.concatenate([group["start_utc"].to_numpy(), group["end_utc"].fillna(far).to_numpy()])
        deltas = np.concatenate([group["gpus"].to_numpy(), -group["gpus"].to_numpy()])
        order = np.lexsort((deltas, times))   # at equal times, releases before starts
        assert np.cumsum(deltas[order]).max() <= capacity[cluster] + 1e-9, cluster
        ordered = group.sort_values(["submit_utc", "job_id"])
        assert ordered["start_utc"].is_monotonic_increasing, cluster


def _local_hours(jobs, timezone):
    """GPU-hours of each job spread over the local (weekday, hour) slots it ran in."""
    rows = []
    for start, end, gpus in zip(jobs["start_utc"], jobs["end_utc"], jobs["gpus"]):
        t = start
        while t < end:
            step = min(end, t.floor("h") + pd.Timedelta(hours=1))
            local = t.tz_localize("UTC").tz_convert(timezone)
            rows.append((local.weekday(), t.hour, gpus * (step - t).total_seconds() / 3600))
            t = step
    return pd.DataFrame(rows, columns=["weekday", "utc_hour", "gpu_hours"])


def test_development_follows_each_teams_local_working_week(sample):
    jobs = sample["jobs"]
    dev = jobs[(jobs["workload_class"] == "development") & jobs["end_utc"].notna()]
    teams = sample["teams"].set_index("team")
    tokyo = _local_hours(dev[dev["team"] == "robotics"], teams.loc["robotics", "timezone"])
    new_york = _local_hours(dev[dev["team"] == "search"], teams.loc["search", "timezone"])
    riyadh = _local_hours(dev[dev["team"] == "arabic-nlp"], teams.loc["arabic-nlp", "timezone"])
    tokyo_peak = tokyo.groupby("utc_hour")["gpu_hours"].sum().idxmax()
    new_york_peak = new_york.groupby("utc_hour")["gpu_hours"].sum().idxmax()
    assert 0 <= tokyo_peak <= 9 and 13 <= new_york_peak <= 22     # 09-18 local in Tokyo and New York
    assert new_york.loc[new_york["weekday"] >= 5, "gpu_hours"].sum() < 0.02 * new_york["gpu_hours"].sum()
    assert riyadh.loc[riyadh["weekday"].isin([4, 5]), "gpu_hours"].sum() < 0.02 * riyadh["gpu_hours"].sum()
    assert riyadh.loc[riyadh["weekday"] == 6, "gpu_hours"].sum() > 0.1 * riyadh["gpu_hours"].sum()  # Sunday


def test_no_development_sessions_start_on_national_holidays(sample):
    jobs = sample["jobs"]
    dev = jobs[jobs["workload_class"] == "development"]
    for team, day in (("search", "2026-09-07"), ("robotics", "2026-09-21"), ("arabic-nlp", "2026-09-23")):
        tz = sample["teams"].set_index("team").loc[team, "timezone"]
        local = dev.loc[dev["team"] == team, "submit_utc"].dt.tz_localize("UTC").dt.tz_convert(tz)
        assert (local.dt.date.astype(str) == day).sum() == 0, team
        assert (local.dt.date.astype(str) == "2026-09-16").sum() > 0, team   # an ordinary Wednesday


def test_regions_peak_at_different_utc_hours():
    util = pd.read_csv(SAMPLE / "utilization.csv.gz")
    hour = pd.to_datetime(util["ts_utc"], format="%Y-%m-%dT%H:%M:%SZ").dt.hour
    busy = util.groupby(["region", hour])["busy"].sum().unstack()
    peaks = busy.idxmax(axis=1)
    assert peaks.nunique() >= 4
    assert (util["busy"] <= util["total"] + 1e-9).all()
