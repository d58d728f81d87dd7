"""The Fidelity page's SC'15 backfilling section (dashboard/sections/backfill_fidelity.py): the recorded table
with the method and tolerance, a live re-run, and the page without the traces."""
import sys

import pandas as pd
import pytest
from conftest import open_page, shared, shown

PAGE = "app_pages/fidelity.py"
CTC = "traces/swf/CTC-SP2-1996-3.1-cln.swf.gz"


@pytest.fixture
def page(sample_db, monkeypatch):
    return open_page(sample_db, monkeypatch, PAGE)


def _table(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "pyss-compatible" in d.value.columns)


def test_the_section_shows_the_recorded_table_with_its_method_and_tolerance(page):
    assert {m.label: m.value for m in page.metric}["SC'15 backfilling · CTC-SP2 · figures within 0.5 %"] == "5 of 5"
    text = " ".join(shown(m) for m in page.markdown)
    assert "SC'15 backfilling, CTC-SP2: 5 of 5 published figures reproduced within 0.5 %" in text
    assert "**Tolerance**: the pyss-compatible figures within 0.5 % of the published CTC-SP2 figures" in text
    assert "77,199 jobs of CTC-SP2" in text and "not among the published" in text
    table = _table(page)
    assert list(table["log"].unique()) == ["CTC-SP2", "KTH-SP2", "SDSC-BLUE"] and len(table) == 18
    ctc = table[table["log"] == "CTC-SP2"].set_index("scheduler")
    assert list(ctc["published"]) == ["49.57", "30.04", "26.53", "30.40", "17.57", "not held here"]
    learned = ctc.loc["EASY++ with Meridian's runtime model"]
    assert learned["pyss-compatible"] < ctc.loc["EASY++", "pyss-compatible"] and pd.isna(learned["within"])
    assert "**EASY++ with Meridian's runtime model** (pyss-compatible mode, average bounded slowdown): CTC-SP2 " \
           f"{learned['pyss-compatible']:.2f} (EASY++ 26.5" in text and "chosen on KTH-SP2" in text
    assert ctc.loc["EASY (user estimates)", "pyss-compatible"] == pytest.approx(49.57, abs=0.005)
    paper = ctc.drop(index="EASY++ with Meridian's runtime model")
    assert paper["within"].all() and (paper["pyss vs published"].abs() < 0.5).all()
    assert ctc.loc["EASY++", "textbook"] != pytest.approx(ctc.loc["EASY++", "pyss-compatible"], abs=0.5)
    kth = table[table["log"] == "KTH-SP2"]
    assert (kth["jobs"] == "28,481").all() and (kth["published"] == "not held here").all()
    assert kth["within"].isna().all() and kth["pyss vs published"].isna().all()


def _rerun(page, log: str, scheduler: str, mode: str) -> None:
    page.selectbox(key="fid_bf_log").select(log).run()
    page.selectbox(key="fid_bf_scheduler").select(scheduler).run()
    page.selectbox(key="fid_bf_mode").select(mode).run()
    page.button(key="fid_bf_run").click().run()
    assert not page.exception, page.exception


@shared(CTC)
def test_one_scheduler_runs_again_and_matches_the_record(page):
    _rerun(page, "CTC-SP2", "easy++", "pyss")
    done = [shown(s) for s in page.success if "CTC-SP2, EASY++, pyss-compatible" in shown(s)]
    assert len(done) == 1 and "published 26.53: within 0.5 %; identical to the record." in done[0]
    page.selectbox(key="fid_bf_mode").select("textbook").run()
    page.button(key="fid_bf_run").click().run()
    assert any("the textbook mode is not held to it" in shown(i) and "identical to the record" in shown(i)
               for i in page.info)


@shared("traces/swf/KTH-SP2-1996-2.2.swf.gz")
def test_the_learned_scheduler_runs_again_and_matches_the_record(page):
    _rerun(page, "KTH-SP2", "easy++-learned", "pyss")
    assert any("KTH-SP2, EASY++ with Meridian's runtime model, pyss-compatible" in shown(i)
               and "identical to the record" in shown(i) for i in page.info)


def test_without_the_traces_the_record_shows_and_the_page_says_where_to_put_them(sample_db, monkeypatch, tmp_path):
    at = open_page(sample_db, monkeypatch, PAGE)
    monkeypatch.setattr(sys, "argv", sys.argv + ["--shared", str(tmp_path / "nowhere")])
    at.run()
    assert not at.exception, at.exception
    assert len(_table(at)) == 18
    notes = [shown(i) for i in at.info if "Live re-runs need the trace files" in shown(i) and "CTC-SP2" in shown(i)]
    assert len(notes) == 1 and str(tmp_path / "nowhere" / CTC) in notes[0]
    assert all(b.key != "fid_bf_run" for b in at.button)
