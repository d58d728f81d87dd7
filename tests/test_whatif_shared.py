"""Two sessions asking the What-if page for the same comparison at once share its computations
(dashboard.data.shared): each scenario is simulated once and the headroom measured once, and both
sessions show the same figures."""
import threading

from streamlit.runtime.scriptrunner import magic
from streamlit.testing.v1 import AppTest
from test_whatif_page import APP, QUEUE, _kpi_table, whatif_app

from dashboard.data import shared


def _second_session() -> AppTest:
    """Another session on the What-if page of the database whatif_app opened, set up the same way."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset"] = "queue"
    at.switch_page("app_pages/whatif.py").run()
    at.selectbox(key="wi_baseline").select("fifo").run()
    at.number_input(key="wi_seeds").set_value(1).run()
    return at


def _one_parse_at_a_time(monkeypatch) -> None:
    """Page scripts parsed one at a time: CPython 3.11's ast.parse in two threads at once can fail with
    "SystemError: AST constructor recursion depth mismatch" (a CPython 3.11 bug seen in the full suite),
    which has nothing to do with sharing."""
    lock, parse = threading.Lock(), magic.add_magic

    def serialised(code, path):
        with lock:
            return parse(code, path)
    monkeypatch.setattr(magic, "add_magic", serialised)


def test_two_sessions_running_the_same_whatif_share_one_computation(tmp_path, monkeypatch):
    _one_parse_at_a_time(monkeypatch)
    sessions = [whatif_app(tmp_path, monkeypatch, QUEUE), _second_session()]
    before = shared.runs().computed
    threads = [threading.Thread(target=lambda at=at: at.button(key="wi_run").click().run()) for at in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    for at in sessions:
        assert not at.exception, at.exception
        assert "Capacity at the same service level" in [h.value for h in at.subheader]
    assert shared.runs().computed - before == 3   # fifo, easy-backfill and the headroom of the pair
    assert _kpi_table(sessions[0]).equals(_kpi_table(sessions[1]))
