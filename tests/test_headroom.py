"""Load headroom and fleet compaction (engine.service.headroom): the search on predicates whose answer is
known, the service level, a two-region world where follow-the-sun doubles the work served, a fleet
whose smallest size is known, determinism, and `meridian headroom`."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import REPO
from sim_helpers import T0, fleet, job

from engine.scenario.spec import Scenario
from engine.service.headroom.measure import measure
from engine.service.headroom.search import LIMIT, Point, largest_passing
from engine.service.headroom.service import FLOOR_H, ServiceLevelError, from_baseline, from_file
from engine.service.run import run_scenario
from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store

EMPTY = {name: pd.DataFrame() for name in ("prices", "carbon", "teams")}


def _threshold(limit: float):
    asked = []

    def holds(x: float) -> Point:
        asked.append(x)
        return Point(x, x <= limit, "" if x <= limit else "batch")
    return holds, asked


@pytest.mark.parametrize("limit", [0.3, 0.95, 1.0, 2.3, 7.0])
def test_the_search_brackets_then_bisects_to_the_tolerance(limit):
    holds, asked = _threshold(limit)
    found = largest_passing(holds, tolerance=0.02)
    assert found.value <= limit < found.value * 1.02 + 1e-12 and found.monotone and not found.bounded
    assert asked[0] == 1.0 and found.evaluations == len(asked) <= 17
    assert not any(p.held for p in found.points if p.x > limit)   # the check above the answer failed


def test_the_search_says_when_it_hit_a_limit_or_found_no_monotone_answer():
    holds, _ = _threshold(100.0)
    assert largest_passing(holds).bounded and LIMIT / 1.5 <= largest_passing(holds).value <= LIMIT
    holds, _ = _threshold(0.0)
    assert largest_passing(holds).bounded
    bumpy = largest_passing(lambda x: Point(x, x <= 1.2 or 2.0 <= x <= 2.4))   # holds again above a failure
    assert bumpy.value == pytest.approx(1.2, rel=0.02) and 2.25 in [p.x for p in bumpy.points]
    assert not bumpy.monotone
    with pytest.raises(ValueError, match="tolerance"):
        largest_passing(lambda x: Point(x, True), tolerance=0.0)


def _two_regions(per_hour: int, days: int = 5) -> ImportBatch:
    """Two regions of one 8-GPU node: "west" (UTC) whose 1-GPU, 1-hour training jobs arrive `per_hour`
    an hour in its working hours (09-17 UTC, weekdays), and "east" (UTC+12, Pacific/Auckland's winter
    offset is +12) with no work of its own: off hours at west's peak."""
    rows = [job(f"{d}-{h}-{k}", (d * 24 + h) * 3600 + k * 3600 // per_hour, 3600, 1, region="west")
            for d in range(days) for h in range(9, 17) for k in range(per_hour)]
    jobs = pd.DataFrame(rows).assign(start_utc=lambda f: f["submit_utc"],
                                     end_utc=lambda f: f["submit_utc"] + pd.Timedelta(hours=1))
    nodes = pd.concat([fleet(8, region="west"), fleet(8, region="east").assign(node="e0")], ignore_index=True)
    regions = pd.DataFrame({"region": ["west", "east"], "timezone": ["UTC", "Etc/GMT-12"]})
    return ImportBatch("csv", {"jobs": jobs, "fleet": nodes, "regions": regions})


def _sun(name: str, routing: str) -> Scenario:
    return Scenario.from_dict({"name": name, "policies": {"order": {"key": "fcfs"}, "backfill": {"key": "easy"},
                                                         "routing": {"key": routing}}})


def test_follow_the_sun_serves_twice_the_work_where_the_other_region_idles_at_the_peak(tmp_path):
    # west gets n = 4 one-GPU, one-hour jobs an hour for H = 8 hours a day on C = 8 GPUs. At demand scale s
    # the backlog grows by n s - C jobs an hour, and a job arriving t hours into the day waits about
    # (n s - C) t / C hours; the p95 of a day's jobs is near t = 0.95 H, so home-only holds p95 <= T = 1 h
    # up to s = C (1 + T / (0.95 H)) / n = 2.26. Follow-the-sun sends what west cannot start to east,
    # off hours then with 8 idle GPUs: C = 16, s = 4.53 at most, twice home-only's. It routes at submit
    # only (a job queued at home stays there when east frees up first), so it gets less than that bound.
    batch = _two_regions(per_hour=4)
    slo = tmp_path / "slo.toml"
    slo.write_text("[slo]\ntraining = 1.0\n", encoding="utf-8")
    world = {**EMPTY, "regions": batch.tables["regions"]}
    report = measure(_sun("home", "home-only"), [_sun("sun", "follow-the-sun")], batch.tables["jobs"],
                     batch.tables["fleet"], world, seeds=2, slo_file=slo, workers=2)
    home, sun = report.of("home"), report.of("sun")
    assert home.load_headroom == pytest.approx(8 * (1 + 1 / (0.95 * 8)) / 4, rel=0.03), home.load_headroom_by_seed
    assert 3.6 <= sun.load_headroom <= 16 * (1 + 1 / (0.95 * 8)) / 4, sun.load_headroom_by_seed
    assert 1.6 <= sun.load_headroom_ratio <= 2.0
    assert home.monotone and sun.monotone and not home.bounded
    assert home.limited_by == sun.limited_by == "training"   # the only class with a target
    assert report.level.p95_wait_h == {"training": 1.0} and "slo.toml" in report.level.source
    # every pool is scaled alike in whole nodes: with one node a pool, no smaller fleet keeps west's node
    assert home.needed_gpus == sun.needed_gpus == 16.0 and sun.saved_gpus == 0.0


def test_the_baseline_level_floors_instant_classes_and_a_file_sets_targets(tmp_path):
    batch = _two_regions(per_hour=2, days=1)
    result = run_scenario(_sun("home", "home-only"), batch.tables["jobs"], batch.tables["fleet"])
    level = from_baseline(result)
    assert level.p95_wait_h == {"training": FLOOR_H} and level.measured_h == {"training": 0.0}
    assert level.max_guarantee_misses == 0 and level.check(result).met
    plan = tmp_path / "plan.toml"
    plan.write_text("days = 7\n[slo]\ntraining = 2\nbatch = 0.5\n[capacity]\nspot_max_share = 0\n", encoding="utf-8")
    assert from_file(plan, result).p95_wait_h == {"batch": 0.5, "training": 2.0}   # a plan file's [slo]
    for text, message in (("x = 1\n", "needs an \\[slo\\] table"), ("[slo]\nbatch = -1\n", "batch must be"),
                          ("[slo\n", "not valid TOML")):
        bad = tmp_path / "bad.toml"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ServiceLevelError, match=message):
            from_file(bad, result)


def test_compaction_finds_the_smallest_fleet_that_holds_the_level():
    # Four 8-GPU nodes; two 8-GPU jobs at a time, back to back, each starting as the last ends: two
    # nodes hold every start on time, one does not. Needed: 2 nodes, 16 GPUs; compaction 16 GPUs.
    jobs = pd.DataFrame([job(f"{k}-{i}", 3600 * i, 3600, 8) for i in range(24) for k in range(2)])
    jobs = jobs.assign(start_utc=jobs["submit_utc"], end_utc=jobs["submit_utc"] + pd.Timedelta(hours=1))
    report = measure(Scenario.from_dict({"name": "fifo"}), [], jobs, fleet(8, 8, 8, 8),
                     {**EMPTY, "regions": pd.DataFrame()}, seeds=1, workers=1)
    base = report.baseline
    assert (base.fleet_gpus, base.needed_gpus, base.compaction_gpus) == (32.0, 16.0, 16.0)
    assert base.compaction_usd_per_year == 16 * 30_000 / 3 and base.saved_gpus == 0.0
    assert base.load_headroom_ratio == 1.0 and report.table()["scenario"].tolist() == ["fifo"]


def test_searches_are_deterministic_and_kept(tmp_path):
    batch = _two_regions(per_hour=3, days=2)
    args = (_sun("home", "home-only"), [], batch.tables["jobs"], batch.tables["fleet"],
            {**EMPTY, "regions": batch.tables["regions"]})
    first = measure(*args, seeds=2, workers=1)
    seen = []
    again = measure(*args, seeds=2, workers=1, progress=lambda done, total, outcome: seen.append((done, total)))
    assert again.table().equals(first.table())
    assert seen == [(1, 3), (2, 3), (3, 3)]   # every search from the process's cache


def test_local_processes_and_a_dask_cluster_give_the_same_answers():
    pytest.importorskip("distributed")
    from engine.service.headroom import measure as measure_module

    batch = _two_regions(per_hour=3, days=2)
    args = (_sun("home", "home-only"), [_sun("sun", "follow-the-sun")], batch.tables["jobs"], batch.tables["fleet"],
            {**EMPTY, "regions": batch.tables["regions"]})
    tables = []
    for backend in ({"workers": 1}, {"workers": 2}, {"workers": 2, "dask": "local"}):
        measure_module._CACHE.clear()
        tables.append(measure(*args, seeds=2, **backend).table())
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])
    assert tables[0].set_index("scenario").loc["sun", "load_headroom_ratio"] > 1


def test_meridian_headroom_prints_json_and_refuses_a_bad_slo_file(tmp_path):
    db = tmp_path / "m.duckdb"
    store = Store.open(db)
    store.add_import("two", _two_regions(per_hour=3, days=2), "two.csv", "sha-two")
    store.close()
    sun = tmp_path / "sun.toml"
    sun.write_text('name = "sun"\n[policies]\nbackfill = "easy"\nrouting = "follow-the-sun"\n', encoding="utf-8")

    def meridian(*args):
        return subprocess.run([sys.executable, "-m", "engine.cli", "headroom", "--dataset", "two", "--db", str(db),
                               *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=300)
    done = meridian("--scenario", sun, "--seeds", "2", "--workers", "1", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [s["scenario"] for s in out["scenarios"]] == ["recorded", "sun"]
    assert out["seeds"] == [0, 1] and out["jobs"] == 48 and "assumed" not in out["service_level"]
    sun_row = out["scenarios"][1]
    assert sun_row["load_headroom_ratio"] == pytest.approx(np.mean(sun_row["load_headroom_ratio_by_seed"]))
    assert {s["kind"] for s in sun_row["searches"]} == {"demand", "fleet"} and sun_row["searches"][0]["points"]
    assert len([line for line in done.stderr.splitlines() if line.startswith("[")]) == 6
    text = meridian("--scenario", sun, "--seeds", "1", "--workers", "1")
    assert text.returncode == 0 and text.stdout.startswith("service level: p95 wait at most training")
    bad = tmp_path / "bad.toml"
    bad.write_text("[slo]\ntraining = 'soon'\n", encoding="utf-8")
    refused = meridian("--scenario", sun, "--slo", bad)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr and "training must be" in refused.stderr
    assert T0.year == 2026
