"""Fidelity comparisons against the published tables, on the real traces, and the committed record."""
import json
import math

import pandas as pd
import pytest
from conftest import FIDELITY_INPUTS, TRACES, shared

from engine.service.experiments import backfill as sc15
from engine.service.experiments import fidelity

INPUTS = fidelity.Inputs.under(TRACES.parent)


@pytest.fixture(scope="module")
def record():
    return fidelity.load_record()


@pytest.fixture(scope="module")
def rls_now():
    """Two of the 40 (policy, backfill) runs re-run now: 20 sequences, 40 rows."""
    runs = fidelity.run_rlscheduler(INPUTS.lublin_1, [("SJF", "none"), ("F1", "compat")])
    return fidelity.compare_rlscheduler(fidelity.published_rlscheduler(INPUTS.rlscheduler_published), runs)


@shared(*FIDELITY_INPUTS)
def test_published_tables_are_read_with_our_names():
    rls = fidelity.published_rlscheduler(INPUTS.rlscheduler_published)
    assert len(rls) == 200 and list(rls.columns) == ["policy", "backfill", "start", "metric", "published"]
    assert list(rls["policy"].unique()) == ["FCFS", "SJF", "WFP3", "UNICEP", "F1"]
    row = rls[(rls.policy == "SJF") & (rls.backfill == "none") & (rls.start == 1981)].set_index("metric")
    assert row.loc["avg_bounded_slowdown", "published"] == 204.258453
    fgd = fidelity.published_fgd(INPUTS.fgd_published)
    assert len(fgd) == 126 and list(fgd["policy"].unique()) == ["random", "dotprod", "clustering", "packing",
                                                                 "bestfit", "fgd"]
    row = fgd[(fgd.policy == "random") & (fgd.metric == "gpu_alloc_ratio_pct") & (fgd.arrived_pct == 100)].iloc[0]
    assert (row["published"], row["published_std"], row["published_min"]) == (86.303, 0.332, 85.87)


@shared(*FIDELITY_INPUTS)
def test_rlscheduler_rows_compare_each_sequence_and_metric(rls_now):
    assert list(rls_now.columns) == ["policy", "backfill", "start", "metric", "published", "ours", "difference",
                                     "tolerance", "within"]
    assert len(rls_now) == 40 and rls_now["within"].all() and (rls_now["tolerance"] == 0.01).all()
    assert (rls_now["difference"] == rls_now["ours"] - rls_now["published"]).all()
    assert rls_now["difference"].abs().max() < 1e-6          # the replay is exact to the CSV's 6 decimals
    sjf = rls_now[(rls_now.policy == "SJF") & (rls_now.start == 1981)].set_index("metric")["ours"]
    assert sjf["avg_bounded_slowdown"] == pytest.approx(204.258453, abs=1e-6)
    runs = fidelity.rlscheduler_runs(rls_now)
    assert len(runs) == 20 and runs["within"].all()


@shared(*FIDELITY_INPUTS)
def test_a_sequence_off_by_more_than_the_tolerance_is_not_within(rls_now):
    ours = rls_now[fidelity.RLS_KEYS + ["ours"]].copy()
    ours.loc[0, "ours"] += 0.02
    rows = fidelity.rlscheduler_rows(rls_now, ours)
    assert not rows.loc[0, "within"] and rows["within"].sum() == 39
    assert fidelity.rlscheduler_runs(rows)["within"].sum() == 19


@shared(*FIDELITY_INPUTS)
def test_rows_recomputed_now_equal_the_record(rls_now, record):
    merged = rls_now.merge(record.rlscheduler, on=fidelity.RLS_KEYS, suffixes=("", "_recorded"))
    assert len(merged) == 40
    assert (merged["ours"] == merged["ours_recorded"]).all()
    assert (merged["published"] == merged["published_recorded"]).all()


@shared(*FIDELITY_INPUTS)
def test_fgd_one_policy_one_seed():
    result = fidelity.run_fgd(INPUTS.openb_nodes, INPUTS.openb_pods, ["bestfit"], seeds=(42,))
    rows = fidelity.compare_fgd(fidelity.published_fgd(INPUTS.fgd_published), result, n_seeds=1)
    assert len(rows) == 21 and set(rows["policy"]) == {"bestfit"} and (rows["n_seeds"] == 1).all()
    alloc = rows[rows.metric == "gpu_alloc_ratio_pct"].set_index("arrived_pct")
    assert list(alloc.index) == [50, 80, 90, 100, 110, 120, 130]
    assert alloc.loc[100, "ours"] == 92.92 and alloc.loc[100, "published"] == 92.862
    # one seed against a 10-seed mean: 0.7 + 2 x std x sqrt(1 - 1/10)
    assert alloc.loc[100, "tolerance"] == pytest.approx(0.7 + 2 * 0.144 * math.sqrt(0.9))
    assert alloc["within"].all()
    frag = rows[rows.metric != "gpu_alloc_ratio_pct"]
    assert frag["tolerance"].isna().all() and frag["within"].isna().all()


@shared(*FIDELITY_INPUTS)
def test_the_published_order_check():
    published = fidelity.published_fgd(INPUTS.fgd_published)
    assert fidelity.fgd_order_holds(published, column="published")
    swapped = published.copy()
    swapped.loc[swapped.policy == "fgd", "published"] -= 5       # FGD below BestFit
    assert not fidelity.fgd_order_holds(swapped, column="published")
    assert not fidelity.fgd_order_holds(published[published.policy != "random"], column="published")


def test_the_record_is_complete_and_within_tolerance(record):
    assert len(record.rlscheduler) == 200 and record.rlscheduler["within"].all()
    assert len(record.fgd) == 126 and record.meta["fgd_seeds"] == list(range(42, 52))
    tolerated = record.fgd[record.fgd["tolerance"].notna()]
    assert len(tolerated) == 42 and set(tolerated["metric"]) == {"gpu_alloc_ratio_pct"} and tolerated["within"].all()
    s = fidelity.summary(record.rlscheduler, record.fgd).set_index("experiment")
    assert (s.loc["rlscheduler", "runs"], s.loc["rlscheduler", "runs_within"]) == (100, 100)
    assert (s.loc["fgd", "runs"], s.loc["fgd", "runs_within"]) == (42, 42)
    assert s.loc["fgd", "order_holds"] is True
    assert s.loc["rlscheduler", "max_abs_difference"] < 1e-6 and s.loc["fgd", "max_abs_difference"] < 0.7
    meta = record.meta
    assert meta["command"].startswith("python benchmarks/fidelity_record.py") and meta["created_utc"].endswith("Z")
    assert meta["commit"] is None or len(meta["commit"]) == 40


@shared(*FIDELITY_INPUTS)
def test_the_record_holds_the_published_tables_exactly(record):
    rls = fidelity.published_rlscheduler(INPUTS.rlscheduler_published)
    pd.testing.assert_frame_equal(record.rlscheduler[rls.columns], rls)
    fgd = fidelity.published_fgd(INPUTS.fgd_published)
    pd.testing.assert_frame_equal(record.fgd[fgd.columns], fgd)


def test_the_record_round_trips_through_json(record):
    again = fidelity.Record.from_json(json.loads(json.dumps(record.to_json())))
    pd.testing.assert_frame_equal(again.rlscheduler, record.rlscheduler)
    pd.testing.assert_frame_equal(again.fgd, record.fgd)
    pd.testing.assert_frame_equal(again.evolved, record.evolved)
    pd.testing.assert_frame_equal(again.backfill, record.backfill)
    assert again.meta == record.meta


def test_the_record_holds_the_sc15_backfilling_table(record):
    rows = record.backfill
    assert len(rows) == 36 and list(rows["log"].unique()) == ["CTC-SP2", "KTH-SP2", "SDSC-BLUE"]
    for _, group in rows.groupby("log"):   # each recorded scheduler in both modes, Meridian's easy++-learned last
        assert list(group["scheduler"]) == [name for name in sc15.RECORDED_SCHEDULERS for _ in sc15.MODES]
    held = rows[rows["within"].notna()]
    assert set(held["log"]) == {"CTC-SP2"} and set(held["mode"]) == {"pyss"} and len(held) == 5 and held["within"].all()
    assert (held["relative_difference"].abs() < 0.005).all()
    assert rows.groupby("log")["jobs"].first().to_dict()["KTH-SP2"] == 28_481
    assert rows[rows["log"] != "CTC-SP2"]["published"].isna().all()
    assert record.meta["backfill_inputs"]["CTC-SP2"] == "traces/swf/CTC-SP2-1996-3.1-cln.swf.gz"


@shared("traces/swf/KTH-SP2-1996-2.2.swf.gz")
def test_a_backfilling_run_recomputed_now_equals_the_record(record):
    from engine.service.experiments import backfill
    from engine.service.experiments.backfill_trace import load_pyss_trace

    trace = load_pyss_trace(TRACES / "swf" / "KTH-SP2-1996-2.2.swf.gz")
    recorded = record.backfill.set_index(["log", "scheduler", "mode"])["ours"]
    for mode in backfill.MODES:
        now = backfill.run_one(trace, "easy-sjbf", mode)["avg_bounded_slowdown"]
        assert now == recorded["KTH-SP2", "easy-sjbf", mode]


@shared(*FIDELITY_INPUTS)
def test_missing_inputs_are_listed(tmp_path):
    inputs = fidelity.Inputs.under(tmp_path)
    assert inputs.missing("lublin_1") == [tmp_path / "traces" / "swf" / "lublin_256.swf"]
    assert len(inputs.missing()) == 6 and INPUTS.missing() == []
