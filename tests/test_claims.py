"""The industry's claims on a dataset (engine.service.experiments.claims): the verdict rules, every claim
measured on a day of the sample, and the Claims page (AppTest). The claims are measured once: the page's own
call of the engine, recorded, gives the table the engine's tests read and the page must show."""
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from conftest import open_page, shown
from streamlit.testing.v1 import AppTest
from test_scenario import SCENARIOS

from dashboard.data import headroom, shared
from engine.scenario.recorded import recorded_baseline
from engine.scenario.spec import Scenario
from engine.service.experiments.claims import (
    CLAIMS,
    COLUMNS,
    HOLDS,
    NOT_HERE,
    PARTLY,
    UNTESTED,
    measure_claims,
    verdict,
)

SUN, FAIR_SHARE, STRANDED = CLAIMS[1], CLAIMS[4], CLAIMS[0]


@pytest.mark.parametrize("claim, measured, expected", [
    (SUN, 0.37, HOLDS), (SUN, 0.28, HOLDS), (SUN, 0.27, PARTLY), (SUN, 0.10, PARTLY), (SUN, 0.09, NOT_HERE),
    (SUN, -0.06, NOT_HERE), (FAIR_SHARE, 0.95, HOLDS), (FAIR_SHARE, 0.85, HOLDS), (FAIR_SHARE, 0.70, PARTLY),
    (FAIR_SHARE, 0.46, NOT_HERE), (STRANDED, 0.04, NOT_HERE), (SUN, np.nan, UNTESTED)])
def test_the_verdict_rules(claim, measured, expected):
    assert verdict(claim, measured) == expected


@dataclass
class PageRun:
    """The Claims page's prompt before **Test the claims**, the page after it, and the one measure_claims call
    it made."""
    prompt: str
    app: AppTest
    arguments: dict
    steps: list
    table: pd.DataFrame


@pytest.fixture(scope="module")
def page_run(sample_db) -> PageRun:
    """The Claims page (AppTest) testing the claims on the sample's first day with one seed; the engine's call
    behind it (dashboard.data.headroom.measure_claims) recorded: its arguments, progress steps and table."""
    calls = []

    def recorded(jobs, fleet, world, scenarios, baseline, days, seeds, workers, progress):
        steps = []
        table = measure_claims(jobs, fleet, world, scenarios, baseline, days, seeds=seeds, workers=workers,
                               progress=lambda message: (steps.append(message), progress(message)))
        calls.append(({"scenarios": scenarios, "baseline": baseline, "days": days, "seeds": seeds,
                       "workers": workers}, steps, table))
        return table

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(headroom, "measure_claims", recorded)
        app = open_page(sample_db, patch, "app_pages/claims.py", cl_days=1.0, cl_seeds=1)
        prompt = shown(app.info[0])
        app.button(key="cl_run").click().run(timeout=420)   # 12 replays and a headroom search
    (arguments, steps, table), = calls
    return PageRun(prompt, app, arguments, steps, table)


@pytest.fixture(scope="module")
def one_day(page_run):
    return page_run.table, page_run.steps


def test_the_page_measures_the_claims_with_the_bundled_scenarios_and_the_recorded_baseline(page_run):
    bundled = {n: Scenario.load(SCENARIOS / f"{n}.toml")
               for n in ("fifo", "easy-backfill", "follow-the-sun", "priority-fairshare")}
    called = page_run.arguments
    assert {name: called["scenarios"][name] for name in bundled} == bundled
    assert called["baseline"] == recorded_baseline("per-pool-fifo")
    assert (called["days"], called["seeds"], called["workers"]) == (1.0, 1, 2)


def test_every_claim_is_measured_or_says_why_not(one_day):
    table, steps = one_day
    assert list(table.columns) == COLUMNS and len(table) == len(CLAIMS) == 10
    assert set(table["verdict"]) <= {HOLDS, PARTLY, NOT_HERE, UNTESTED}
    untested = table[table["verdict"] == UNTESTED]
    assert list(untested["claim"].str.split().str[0]) == ["Reinforcement-learning"]
    assert all("issue" in why for why in untested["why"]), list(untested["why"])
    measured = table[table["verdict"] != UNTESTED]
    assert measured["measured"].notna().all() and (measured["method"] != "").all()
    sun = table.set_index("claim").loc[SUN.text]
    assert sun["scenarios"] == "follow-the-sun vs fifo" and "work at fifo's service level" in sun["measured_text"]
    assert 0 <= table.set_index("claim").loc[STRANDED.text, "measured"] < 1
    assert len(steps) == 5 and steps[0].startswith("replaying recorded, fifo")


def test_the_claims_page_tests_the_claims_and_explains_them(sample_db, monkeypatch, page_run):
    assert "Press **Test the claims**" in page_run.prompt
    app = page_run.app
    assert not app.exception, app.exception
    assert not app.error, [shown(e) for e in app.error]
    table = [d.value for d in app.dataframe if "claim (as reported)" in d.value.columns][0]
    assert list(table["claim (as reported)"]) == list(page_run.table["claim"])
    assert table["verdict"].str.contains("cannot be tested yet").sum() == 1
    assert list(table["measured here"]) == list(page_run.table["measured_text"])   # the engine's figures
    assert any(shown(m).startswith("On sample: ") for m in app.markdown)
    computed = shared.runs().computed
    other = open_page(sample_db, monkeypatch, "app_pages/claims.py", cl_days=1.0, cl_seeds=1)
    other.button(key="cl_run").click().run(timeout=60)   # another session: the same claims, shared
    assert not other.exception and not other.error
    assert shared.runs().computed == computed
    assert [d.value for d in other.dataframe if "claim (as reported)" in d.value.columns][0].equals(table)


def test_the_prediction_claim_compares_the_best_predicted_run_with_its_policies_on_requests(one_day):
    row = one_day[0].set_index("claim").loc[CLAIMS[7].text]
    predicted, requests = row["scenarios"].split(" vs ")
    assert predicted.split(" (")[0] == requests.removesuffix(" seeing requests")
    assert predicted.endswith(("(p50)", "(sched)")) and requests.split()[0] in ("easy-backfill", "easy-sjbf")
    assert "mean JCT" in row["measured_text"] and "bounded slowdown" in row["measured_text"]
    assert "95 % paired bootstrap" in row["spread"]
    assert row["why"].count(" %") == 4 and "chosen after seeing them" in row["why"]
    assert np.isfinite(row["measured"])


def test_the_bootstrap_interval_holds_the_cut_of_the_common_jobs():
    from types import SimpleNamespace

    import pandas as pd

    from engine.service.experiments.claims_prediction import _interval

    def run(jct):
        jobs = pd.DataFrame({"submit_s": 0.0, "end_s": jct, "started": [True] * len(jct)})
        return SimpleNamespace(result=SimpleNamespace(jobs=jobs))
    before = np.array([100.0, 200.0, 300.0, 400.0, np.nan])
    after = np.array([80.0, 150.0, 300.0, 320.0, 50.0])
    low, high = _interval(run(before), run(after))
    point = 1 - (80 + 150 + 300 + 320) / (100 + 200 + 300 + 400)   # 0.15, the unfinished job left out
    assert low <= point <= high and 0 <= low and high <= 0.25
    assert (low, high) == _interval(run(before), run(after))   # seeded


def test_the_classification_claim_judges_inferred_classes_by_the_recorded_labels(one_day):
    row = one_day[0].set_index("claim").loc[CLAIMS[2].text]
    assert row["scenarios"] == "fifo with inferred classes vs fifo without classes"
    assert row["measured"] > 0   # the standard queue fits fewer classes than the inferred queues
    assert "resource matching" in row["measured_text"] and row["spread"].startswith("classifier accuracy ")
    assert float(row["spread"].split()[-2]) >= 90
