"""Shared test helpers."""
import os
import re
from dataclasses import fields
from pathlib import Path

import pytest

from engine.service.experiments.public_data import DEFAULT_SHARED, ENVIRONMENT, missing_message

# Real public traces and published results, read-only, outside the repository (../shared, or the folder
# MERIDIAN_SHARED names). A test that reads them is marked `@shared("traces/swf/...", ...)`: without the
# files it is skipped with the reason (which file, where it comes from), except under CI (the CI
# variable set, as .ci/run does), where the folder must be present and a missing file fails the test.
SHARED = Path(os.environ.get(ENVIRONMENT) or DEFAULT_SHARED)
TRACES = SHARED / "traces"
EXPECTED = SHARED / "expected"


# The files fidelity re-runs read (engine.service.experiments.fidelity.Inputs), and FGD's openb inputs.
OPENB_INPUTS = ("traces/alibaba-openb/openb_node_list_gpu_node.csv", "traces/alibaba-openb/openb_pod_list_default.csv")
FIDELITY_INPUTS = ("traces/swf/lublin_256.swf", *OPENB_INPUTS, "expected/rlscheduler_lublin1_published.csv",
                   "expected/fgd_default_published.csv", "traces/swf/HPC2N-2002-2.2-cln.swf.gz")


def shared(*relatives: str):
    """Mark a test as reading these files (paths under the shared folder)."""
    return pytest.mark.shared(*relatives)


def pytest_runtest_setup(item):
    """Skip (or, under CI, fail) a test marked `shared` whose files are absent, before its fixtures load them."""
    missing = [r for mark in item.iter_markers("shared") for r in mark.args if not (SHARED / r).exists()]
    if missing:
        reason = "needs public data " + missing_message(SHARED, list(dict.fromkeys(missing)))
        if os.environ.get("CI"):
            pytest.fail("CI must have the shared folder: " + reason, pytrace=False)
        pytest.skip(reason)


# --- A real Streamlit server for browser tests and benchmarks ------------------------------
import contextlib  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(db: Path, log: Path, timeout_s: float = 90.0):
    """Run `streamlit run dashboard/app.py -- --db DB` from the repository root in its own process
    group; yield its base URL once /_stcore/health answers ok; stop the group afterwards (SIGTERM, then SIGKILL
    after 4 s: the builder test's server, its headroom searches still running, took the old 10 s every time)."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--", "--db", str(db)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not become healthy in {timeout_s} s")
            time.sleep(0.25)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:  # an idle server stops in 0.5-2.8 s; one still running a script ignores SIGTERM until it ends
            proc.wait(timeout=4)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


# Playwright predicate: at least `n` Plotly charts on the page have drawn their SVG.
ALL_CHARTS_DRAWN = """n => Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
    .filter(chart => chart.querySelector('.main-svg')).length >= n"""


# --- The sample dataset in a real DuckDB file, and a page of the app on it (AppTest) ----------
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(REPO / "dashboard" / "app.py")


@pytest.fixture(scope="session")
def sample_file(tmp_path_factory) -> Path:
    """A DuckDB file holding the sample dataset, built once per test process (ensure_sample: 2-3 s);
    never opened by a test: `sample_copy` hands out copies of it."""
    from engine.telemetry.sample import ensure_sample
    from engine.telemetry.store import Store

    db = tmp_path_factory.mktemp("sample-master") / "meridian.duckdb"
    store = Store.open(db)
    ensure_sample(store)
    store.close()
    return db


def sample_copy(sample_file: Path, folder: Path, name: str = "meridian.duckdb") -> Path:
    """A database `folder`/`name` holding the sample dataset: a byte copy of `sample_file`, the same as
    ensure_sample on a fresh database gives."""
    db = folder / name
    db.write_bytes(sample_file.read_bytes())
    return db


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory, sample_file) -> Path:
    """A DuckDB file holding the sample dataset, one per test module."""
    return sample_copy(sample_file, tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def sample_tables(tmp_path_factory, sample_file):
    """(jobs, fleet, World) of the sample dataset, read from a fresh DuckDB file, one per test module."""
    from engine.telemetry.store import Store
    from engine.world.facts import World

    store = Store.open(sample_copy(sample_file, tmp_path_factory.mktemp("sample-tables"), "m.duckdb"))
    data = store.jobs("sample"), store.fleet("sample"), World.of_dataset(store, "sample")
    store.close()
    return data


def shown(element) -> str:
    """An AppTest text element (markdown, caption, info, error...), or a widget label, as a reader sees
    it: the Markdown source with the backslash escapes and the (invisible) word joiners of
    engine.core.escaping.markdown_text taken out."""
    text = element if isinstance(element, str) else element.value
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text).replace("\u2060", "")


def open_page(db: Path, monkeypatch, page: str, **state) -> AppTest:
    """The app on database `db`, switched to `page` (e.g. "app_pages/report.py") with `state` preset in
    st.session_state; fails on any exception or error message."""
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def assert_declared_widgets(app: AppTest, model: type, prefix: str) -> None:
    """Every field of the dataclass `model` has its builder widget under `prefix` (dashboard.forms.
    world_sections.declared_inputs): a checkbox at the default for a bool, else a number input at the
    default bounded by the field's declared range."""
    for spec in fields(model):
        if spec.type == "bool":
            assert app.checkbox(key=f"{prefix}:{spec.name}").value is spec.default
        else:
            widget = app.number_input(key=f"{prefix}:{spec.name}")
            assert widget.value == spec.default
            assert (widget.min, widget.max) == (spec.metadata["min"], spec.metadata["max"]), spec.name
