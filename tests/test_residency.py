"""Residency tags: allowed regions, the audit of placed jobs and the router's jobs x regions mask."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.world.residency import allowed_mask, allowed_regions, violations

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
REGIONS = pd.DataFrame({
    "region": ["us-east", "eu-west", "eu-central", "cn-north", "ap-south", "default"],
    "timezone": ["America/New_York", "Europe/Dublin", "Europe/Berlin", "Asia/Shanghai", "Asia/Kolkata", "UTC"],
    "country": ["US", "IE", "DE", "CN", "IN", None],
    "jurisdiction": ["US", "EU", "EU", "CN", "APAC", None],
})
ALL = frozenset(REGIONS["region"])


@pytest.mark.parametrize("tag, allowed", [
    ("EU", {"eu-west", "eu-central"}), ("eu", {"eu-west", "eu-central"}), (" CN ", {"cn-north"}),
    ("US", {"us-east"}), ("DE", {"eu-central"}), ("IE", {"eu-west"}), ("APAC", {"ap-south"}), ("IN", {"ap-south"}),
    ("SA", set()), ("JP", set()),
    ("regions:eu-west,ap-south", {"eu-west", "ap-south"}), ("Regions: default , us-east,", {"default", "us-east"}),
    ("EU:eu-central", {"eu-central"}), ("CN:cn-north", {"cn-north"}),
    ("", ALL), (None, ALL), (float("nan"), ALL), (pd.NA, ALL), ("  ", ALL),
])
def test_allowed_regions(tag, allowed):
    assert allowed_regions(tag, REGIONS) == frozenset(allowed)


@pytest.mark.parametrize("tag, message", [
    ("EUR", "unknown residency tag 'EUR'; valid forms: .*'EU', 'CN'.*'regions:eu-west,eu-north'.*'EU:eu-west'"),
    ("EU,US", "unknown residency tag 'EU,US'"),
    ("E1", "unknown residency tag 'E1'"),
    ("regions:", "empty region list"),
    ("EU:", "empty region list"),
    ("regions:eu-west,mars", r"unknown region\(s\) mars; regions are us-east, eu-west"),
    ("EU:eu-west,us-east,cn-north", r"region\(s\) cn-north, us-east are not in EU"),
])
def test_bad_tags_are_explained(tag, message):
    with pytest.raises(ValueError, match=message):
        allowed_regions(tag, REGIONS)


def test_regions_table_without_jurisdictions_allows_no_code():
    bare = pd.DataFrame({"region": ["default"], "timezone": ["UTC"]})
    assert allowed_regions("EU", bare) == frozenset()
    assert allowed_regions("regions:default", bare) == {"default"}
    jobs = pd.DataFrame({"job_id": ["a", "b"], "region": ["default", "default"], "residency": ["EU", None]})
    assert violations(jobs, bare).to_dict("records") == [
        {"job_id": "a", "region": "default", "tag": "EU", "allowed": ""}]


JOBS = pd.DataFrame({
    "job_id": ["j5", "j1", "j3", "j2", "j4", "j6", "j7"],
    "region": ["us-east", "eu-west", "us-east", "eu-central", "cn-north", "mars", "mars"],
    "residency": ["regions:eu-west,us-east", "EU", "EU", None, "CN:cn-north", "EU", ""],
}, index=[10, 11, 12, 13, 14, 15, 16])


def test_violations_are_exact_and_sorted_by_job():
    got = violations(JOBS, REGIONS)
    assert got.to_dict("records") == [
        {"job_id": "j3", "region": "us-east", "tag": "EU", "allowed": "eu-central,eu-west"},
        {"job_id": "j6", "region": "mars", "tag": "EU", "allowed": "eu-central,eu-west"},
    ]
    assert list(got.index) == [0, 1]


def test_allowed_mask_follows_the_regions_row_order():
    mask = allowed_mask(JOBS, REGIONS)
    assert mask.shape == (7, 6) and mask.dtype == bool
    assert mask.astype(int).tolist() == [
        [1, 1, 0, 0, 0, 0],     # regions:eu-west,us-east
        [0, 1, 1, 0, 0, 0],     # EU
        [0, 1, 1, 0, 0, 0],     # EU
        [1, 1, 1, 1, 1, 1],     # untagged
        [0, 0, 0, 1, 0, 0],     # CN:cn-north
        [0, 1, 1, 0, 0, 0],     # EU
        [1, 1, 1, 1, 1, 1],     # empty tag
    ]


def test_jobs_without_a_residency_column_are_unrestricted():
    jobs = JOBS.drop(columns="residency")
    assert allowed_mask(jobs, REGIONS).all() and allowed_mask(jobs, REGIONS).shape == (7, 6)
    assert violations(jobs, REGIONS).empty and list(violations(jobs, REGIONS).columns) == [
        "job_id", "region", "tag", "allowed"]
    assert violations(JOBS.iloc[:0], REGIONS).empty


def test_a_bad_tag_names_the_first_job_carrying_it():
    jobs = JOBS.assign(residency=["EU", "EU", "Mars", None, "Mars", "EU", ""])
    with pytest.raises(ValueError, match="job j3: unknown residency tag 'Mars'"):
        violations(jobs, REGIONS)
    with pytest.raises(ValueError, match="job j3: unknown residency tag 'Mars'"):
        allowed_mask(jobs, REGIONS)


def test_sample_history_has_no_violations_until_eu_jobs_move():
    regions = pd.read_csv(SAMPLE / "regions.csv")
    jobs = pd.read_csv(SAMPLE / "jobs.csv.gz", usecols=["job_id", "region", "residency"])
    assert jobs["residency"].value_counts().to_dict() == {"EU": 13842, "SA": 3204}
    assert violations(jobs, regions).empty
    moved = jobs.assign(region=np.where(jobs["residency"].eq("EU"), "us-east", jobs["region"]))
    found = violations(moved, regions)
    assert len(found) == 13842
    assert set(found["allowed"]) == {"eu-north,eu-west"} and set(found["region"]) == {"us-east"}
    assert found["job_id"].is_monotonic_increasing
    mask = allowed_mask(jobs, regions)
    assert mask.sum(axis=0).tolist() == [75294, 75294, 89136, 89136, 78498, 75294, 75294]


TAGS = [None, "", "EU", "CN", "US", "APAC", "SA", "regions:eu-west,ap-south", "EU:eu-central", "regions:default"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TAGS), st.sampled_from(sorted(ALL) + ["mars"])), max_size=30))
def test_audit_mask_and_tag_rules_agree(rows):
    jobs = pd.DataFrame({"job_id": [f"j{i:03d}" for i in range(len(rows))],
                         "residency": [tag for tag, _ in rows], "region": [region for _, region in rows]})
    mask = allowed_mask(jobs, REGIONS)
    names = REGIONS["region"].tolist()
    for i, (tag, _) in enumerate(rows):
        assert {names[j] for j in np.flatnonzero(mask[i])} == allowed_regions(tag, REGIONS)
    expected = [f"j{i:03d}" for i, (tag, region) in enumerate(rows)
                if tag and region not in allowed_regions(tag, REGIONS)]
    assert violations(jobs, REGIONS)["job_id"].tolist() == expected
