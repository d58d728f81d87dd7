"""The Agents page and the Fidelity page's RL section through Streamlit's AppTest on a real DuckDB file."""
import sys
from pathlib import Path

import pytest
from conftest import shared, shown
from rl_helpers import random_log
from streamlit.testing.v1 import AppTest

from engine.predict.rl.agent_registry import AgentRegistry
from engine.predict.rl.ppo import PPOSettings
from engine.service.rl.fidelity import RUNS, load_record
from engine.service.rl.session import train_agent
from engine.service.rl.train import TrainSettings
from engine.telemetry.store import Store

APP = str(Path(__file__).parents[1] / "dashboard" / "app.py")
TINY = TrainSettings(backfill="compat", epochs=2, trajectories=4, group=2, length=24, imitation_windows=2,
                     imitation_steps=3, ppo=PPOSettings(minibatch=64, passes=2))


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("agents") / "meridian.duckdb"
    Store.open(path).close()
    train_agent(AgentRegistry.beside(path), "mine", random_log(300, 8), TINY)
    return path


def _page(db, monkeypatch, page="app_pages/agents.py") -> AppTest:
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_the_agents_page_shows_a_trained_agents_curve_and_record(db, monkeypatch):
    at = _page(db, monkeypatch)
    choices = at.selectbox(key="agents_choice").options
    assert "mine v1 (trained here)" in choices and "lublin-1 (packaged)" in choices
    at.selectbox(key="agents_choice").select(("mine", 1)).run()
    assert not at.exception, at.exception
    metrics = {m.label: shown(m.value) for m in at.metric}
    assert metrics["Trained on"] == "random.swf" and metrics["Backfilling"] == "RLScheduler's backfilling"
    assert any("2 epochs of 4 episodes (2 per window) of 24 jobs, after copying F1's picks" in shown(c)
               for c in at.caption)
    assert len(at.get("plotly_chart")) == 1                  # the learning curve; no test sequences in 300 jobs


def test_the_packaged_agent_and_a_live_evaluation_on_the_sample(db, monkeypatch):
    at = _page(db, monkeypatch)
    assert at.selectbox(key="agents_choice").value == ("hpc2n", None)    # the first packaged agent, with its record
    assert "Agents" in at.title[0].value
    at.selectbox(key="agents_log").select("dataset sample").run()
    at.button(key="agents_run").click().run()
    assert not at.exception, at.exception
    # the sample as one pool of its 1,320 GPUs never makes a job wait: every order scores 1
    assert any("the agent's mean average bounded slowdown is 1.00: it does not beat the better of SJF and F1 (1.00)"
               in shown(m) for m in at.markdown)
    assert len(at.get("plotly_chart")) == 3                  # the curve, the recorded and the live sequences


def test_the_fidelity_page_shows_the_rl_record(db, monkeypatch):
    record = load_record()
    at = _page(db, monkeypatch, "app_pages/fidelity.py")
    table = [d.value for d in at.dataframe if "beats_SJF_and_F1" in d.value.columns][0]
    assert len(table) == len(record.runs) and set(table["log"]) <= {"Lublin-1", "Lublin-2", "HPC2N"}
    own = record.runs[record.runs["log"] == "Lublin-1"]
    assert any(f"the agents beat both SJF and F1 in {int(own['beats_SJF_and_F1'].sum())} of {len(own)} modes" in
               shown(m) for m in at.markdown)
    at.selectbox(key="fid_rl_pick").select_index(1).run()
    assert not at.exception, at.exception


def test_the_record_covers_every_run_and_the_agents_beat_sjf_and_f1_on_lublin_1():
    record = load_record()
    assert [tuple(r) for r in record.runs[["agent", "log", "backfill"]].itertuples(index=False)] == list(RUNS)
    own = record.runs[record.runs["log"] == "Lublin-1"].set_index("backfill")
    assert own.loc["none", "agent_bsld"] < min(own.loc["none", "SJF"], own.loc["none", "F1"])
    assert own.loc["compat", "agent_bsld"] < min(own.loc["compat", "SJF"], own.loc["compat", "F1"])
    assert own.loc["none", "SJF"] == pytest.approx(277.35, abs=0.01) and own.loc["compat", "F1"] == pytest.approx(75.07,
                                                                                                                 abs=0.01)
    assert set(record.training["agent"]) == {r[0] for r in RUNS}


@shared("traces/swf/lublin_256.swf")
def test_the_packaged_lublin_agent_replays_its_recorded_test_figure():
    from conftest import TRACES

    from engine.policies.rl_agent import packaged
    from engine.service.experiments.swf_jobs import load_swf_jobs
    from engine.service.rl.evaluate import evaluate

    record = load_record().runs.set_index(["agent", "log"])
    result = evaluate(load_swf_jobs(TRACES / "swf" / "lublin_256.swf"), packaged("lublin-1-backfill"), "compat",
                      orders=("SJF",))
    assert result["orders"]["agent"]["mean"]["avg_bounded_slowdown"] == pytest.approx(
        record.loc[("lublin-1-backfill", "Lublin-1"), "agent_bsld"], abs=1e-9)
