"""The runtime-prediction claim on the public logs: the paired bootstrap (engine.service.experiments.bootstrap),
the record's prediction rows (backfill_claim, held in fidelity_record.json) against its backfilling rows, and
the Claims page's table of them (claims_logs)."""
import numpy as np
import pytest
from conftest import SHARED, open_page, shared, shown

from engine.service.experiments import backfill, bootstrap
from engine.service.experiments.backfill_claim import claim_row
from engine.service.experiments.backfill_learned import walk_forward
from engine.service.experiments.backfill_trace import load_pyss_trace
from engine.service.experiments.claims import HOLDS, NOT_HERE, PARTLY
from engine.service.experiments.claims_logs import COLUMNS, log_rows
from engine.service.experiments.fidelity import load_record

KTH = "traces/swf/KTH-SP2-1996-2.2.swf.gz"


def _pairs(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    before = rng.exponential(3600.0, n)
    return before, before * rng.uniform(0.6, 1.0, n)


def test_the_interval_holds_the_cut_and_is_seeded():
    before, after = _pairs()
    low, high = bootstrap.paired_cut_interval(before, after)
    cut = 1 - after.sum() / before.sum()
    assert low < cut < high and 0.1 < low and high < 0.3
    assert (low, high) == bootstrap.paired_cut_interval(before, after)
    assert (low, high) != bootstrap.paired_cut_interval(before, after, seed=1)


def test_chunks_draw_the_same_resamples_as_one_draw(monkeypatch):
    before, after = _pairs(500)
    whole = bootstrap.paired_cut_interval(before, after)
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 7 * 500 + 3)   # 7 resamples per chunk, the last chunk short
    assert bootstrap.paired_cut_interval(before, after) == whole


def test_only_pairs_finite_on_both_sides_count_and_nothing_gives_nan():
    before, after = _pairs(400)
    holed_before, holed_after = before.copy(), after.copy()
    holed_before[::7], holed_after[3::11] = np.nan, np.inf
    keep = np.isfinite(holed_before) & np.isfinite(holed_after)
    assert bootstrap.paired_cut_interval(holed_before, holed_after) == \
        bootstrap.paired_cut_interval(before[keep], after[keep])
    assert np.isnan(bootstrap.paired_cut_interval(np.array([np.nan]), np.array([1.0]))).all()
    assert np.isnan(bootstrap.paired_cut_interval(np.zeros(3), np.ones(3))).all()


def test_the_record_holds_the_claim_on_each_log_beside_its_backfilling_rows():
    record = load_record()
    pred = record.prediction.set_index("log")
    assert list(pred.index) == list(backfill.TRACES)
    pyss = record.backfill[record.backfill["mode"] == "pyss"].set_index(["log", "scheduler"])
    for log, row in pred.iterrows():
        assert row["slowdown_requests"] == pyss.loc[(log, "easy-sjbf"), "ours"]
        assert row["slowdown_predicted"] == pyss.loc[(log, "easy++-learned"), "ours"]
        assert row["jct_predicted_s"] == pytest.approx(pyss.loc[(log, "easy++-learned"), "mean_jct_s"], rel=1e-12)
        cut = 1 - row["jct_predicted_s"] / row["jct_requests_s"]
        assert row["jct_low"] < cut < row["jct_high"]
        assert row["jobs"] == pyss.loc[(log, "easy"), "jobs"]
    learned = record.backfill[record.backfill["scheduler"] == "easy++-learned"]
    assert len(learned) == 6 and learned["published"].isna().all() and learned["within"].isna().all()


def test_the_claims_table_gives_each_log_its_change_interval_and_verdict():
    rows = log_rows(load_record().prediction)
    assert list(rows.columns) == COLUMNS and list(rows["log"]) == list(backfill.TRACES)
    assert rows["verdict"].isin([HOLDS, PARTLY, NOT_HERE]).all()
    assert rows["JCT change"].str.fullmatch(r"[+-]\d+\.\d %").all()
    assert rows["95 % interval"].str.fullmatch(r"[+-]\d+\.\d to [+-]\d+\.\d %").all()
    assert rows.set_index("log").loc["CTC-SP2", "95 % interval"] == "-20.6 to -15.4 %"
    assert log_rows(None).empty and list(log_rows(None).columns) == COLUMNS


def test_the_claims_page_shows_the_logs_before_any_test(sample_db, monkeypatch):
    page = open_page(sample_db, monkeypatch, "app_pages/claims.py")
    assert not page.exception, page.exception
    assert any("ML runtime prediction cuts job completion time by 31 %" in shown(h) for h in page.subheader)
    table = next(d.value for d in page.dataframe if "JCT change" in d.value.columns)
    assert list(table["log"]) == list(backfill.TRACES)


@shared(KTH)
def test_the_kth_row_reproduces_from_the_log():
    """About 15 s: a walk-forward fit and two replays of KTH-SP2."""
    trace = load_pyss_trace(SHARED / KTH)
    row = claim_row("KTH-SP2", trace, walk_forward(trace).predicted_s, 0.0)
    recorded = load_record().prediction.set_index("log").loc["KTH-SP2"]
    for key in ("jct_requests_s", "jct_predicted_s", "jct_low", "jct_high", "slowdown_requests", "slowdown_predicted",
                "slowdown_low", "slowdown_high"):
        assert row[key] == recorded[key], key
    assert recorded["model_fit_s"] > 0
