"""Helpers of the browser tests: a real `streamlit run` server on a database, Chromium driven by
Playwright, waits for Streamlit to settle, a fresh database per test, and one server per test file."""
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

import pytest
from conftest import ALL_CHARTS_DRAWN, CHROMIUM, CHROMIUM_ARGS, streamlit_server
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from test_app_pages import TINY

from engine.telemetry.store import Store

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium")]

ARTIFACTS = Path(__file__).parent / "artifacts"
EXCEPTION = '[data-testid="stException"]'


class ScriptRuns:
    """Whether a script run a page asked for is yet to finish, read from the page's websocket: an action asks for
    a run with a rerun_script message, and the run is over at the first script_finished after a new_session that
    followed the ask (a run stopped early for a later ask is not: the later run ends it). Streamlit's own signs
    come too late for a test: its status widget shows once a run has lasted 500 ms, and the app's script state
    changes only when the server has started the run, which under load is hundreds of ms after the action."""

    def __init__(self, page) -> None:
        self.pending = self.started = False
        page.on("websocket", lambda ws: (ws.on("framesent", self._sent), ws.on("framereceived", self._received)))

    def _sent(self, payload) -> None:
        if isinstance(payload, bytes) and BackMsg.FromString(payload).WhichOneof("type") == "rerun_script":
            self.pending, self.started = True, False

    def _received(self, payload) -> None:
        if not (self.pending and isinstance(payload, bytes)):
            return
        message = ForwardMsg.FromString(payload)
        kind = message.WhichOneof("type")
        if kind == "new_session":
            self.started = True
        elif kind == "script_finished" and self.started and message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            self.pending = False


RUNS = WeakKeyDictionary()  # page -> its ScriptRuns, from watched(page)
NOT_RUNNING = """() => document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState === 'notRunning'"""


def watched(page):
    """`page`, its script runs followed (before it opens anything) so that _settle can wait for them."""
    RUNS[page] = ScriptRuns(page)
    return page


def _settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until every script run the page asked for has finished (the page from watched()), then 100 ms for
    the browser to draw what the last one sent. An action's ask leaves within 300 ms of it (measured: within
    40 ms, a data editor's edit 140-170 ms, on a loaded 2-core machine)."""
    runs, deadline = RUNS[page], time.monotonic() + timeout_ms / 1000
    page.wait_for_timeout(300)
    while runs.pending:
        if time.monotonic() > deadline:
            raise playwright_api.TimeoutError(f"the script run did not finish in {timeout_ms} ms")
        page.wait_for_timeout(100)
    page.wait_for_function(NOT_RUNNING, timeout=max(1_000, (deadline - time.monotonic()) * 1000))
    page.wait_for_timeout(100)


PRICED = """() => { const values = Array.from(document.querySelectorAll('[data-testid="stMetricValue"]'));
    return values.length >= 5 && values.every(v => v.innerText.trim() !== '...'); }"""


def _wait_for_overview(page, charts: int = 6) -> None:
    """The Overview drawn, its dollars priced (a background replay of the dataset: seconds) and `charts` drawn."""
    page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
    page.wait_for_function(PRICED, timeout=180_000)
    page.wait_for_function(ALL_CHARTS_DRAWN, arg=charts, timeout=120_000)
    _settle(page)


def _metrics(page) -> dict[str, str]:
    labels = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
    values = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    return {label.strip(): value.strip() for label, value in zip(labels, values)}


def _assert_clean(page) -> None:
    assert page.locator(EXCEPTION).count() == 0
    assert "Traceback" not in page.inner_text("body")


TABLE_ROWS = """frames => frames.map(frame => Array.from(frame.querySelectorAll('tr'))
    .map(row => row.firstElementChild ? row.firstElementChild.textContent.trim() : '').filter(Boolean).join(' | '))
    .filter(Boolean)"""


@contextmanager
def _diagnosed(page, folder: Path, name: str):
    """On a Playwright timeout inside, save what the page shows under `folder` and print both paths:
    `name`.png (the whole page: Streamlit scrolls its main block, so the viewport is stretched to it) and
    `name`.txt (whether a script run was going, the first cells of every data frame's rows, which a canvas
    draws and the page's text lacks, empty frames left out, then the page's text); then re-raise."""
    try:
        yield
    except playwright_api.TimeoutError:
        shot, text = folder / f"{name}.png", folder / f"{name}.txt"
        running = not page.evaluate(NOT_RUNNING)
        tables = page.locator('[data-testid="stDataFrame"]').evaluate_all(TABLE_ROWS)
        height = page.locator('[data-testid="stMain"]').evaluate("main => main.scrollHeight")
        page.set_viewport_size({"width": page.viewport_size["width"], "height": min(height, 30_000)})
        page.screenshot(path=str(shot), full_page=True)
        text.write_text(f"script running: {running}\n\ndata frames, by their rows' first cells:\n"
                        + "\n".join(f"- {rows}" for rows in tables) + "\n\n" + page.inner_text("body"))
        print(f"the page when the wait gave up: {shot} and {text}")
        raise


@dataclass(frozen=True)
class Server:
    """A running `streamlit run` server's base URL and the Chromium that opens its pages."""
    url: str
    browser: object


@contextmanager
def _serving(database: Path, log: Path):
    """A fresh server on `database` and a Chromium, both closed on exit."""
    with streamlit_server(database, log) as url, playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield Server(url, browser)
        finally:
            browser.close()


@contextmanager
def _beside(server: Server, database: Path, log: Path):
    """A fresh server on `database` whose pages `server`'s Chromium opens (one Playwright per process)."""
    with streamlit_server(database, log) as url:
        yield Server(url, server.browser)


@contextmanager
def _page(server: Server, path: str, height: int, errors: list | None = None):
    """A new page of `server` at `path` (a session of its own; nothing awaited yet), closed on exit;
    `errors`, when given, collects the page's uncaught JavaScript errors."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = watched(server.browser.new_page(viewport={"width": 1440, "height": height}))
    try:
        if errors is not None:
            page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server.url + path)
        yield page
    finally:
        page.close()


@contextmanager
def _served(database, tmp_path, path: str, height: int, errors: list | None = None):
    """A fresh server on `database` and a browser page opened at `path` (nothing awaited yet)."""
    with _serving(database, tmp_path / "server.log") as server, _page(server, path, height, errors) as page:
        yield page


def _drawn(page, charts: int, timeout_ms: int = 120_000) -> None:
    """Wait until `charts` charts are drawn and Streamlit has settled; the page must be clean."""
    page.wait_for_function(ALL_CHARTS_DRAWN, arg=charts, timeout=timeout_ms)
    _settle(page, timeout_ms=timeout_ms)
    _assert_clean(page)


def _enter(page, label: str, value: str, exact: bool = False, timeout_ms: int = 60_000) -> None:
    """Type `value` into the number field labelled `label`, commit it, wait for the run that asks for and check
    that the field holds it (a value the page missed fails here, not as a slower run or a section never drawn)."""
    field = page.get_by_role("spinbutton", name=label, exact=exact)
    field.fill(value)
    field.press("Enter")
    _settle(page, timeout_ms)
    assert float(field.input_value()) == float(value), (label, field.input_value())


def _sample_days(page, button: str, days_label: str, days: str = "1"):
    """Wait for the button named `button`, check that the sample is the chosen dataset, and enter
    `days` in the number field labelled `days_label`; returns the button."""
    target = page.get_by_role("button", name=button, exact=True)
    target.wait_for(timeout=120_000)
    _settle(page)
    assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
    _enter(page, days_label, days)
    return target


def _go(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    _settle(page)


def _tiny_database(folder: Path) -> Path:
    """A fresh database in `folder` holding the dataset 'tiny' (the app adds the sample)."""
    db = folder / "meridian.duckdb"
    store = Store.open(db)
    store.add_import("tiny", TINY, "tiny.csv", "sha-tiny")
    store.close()
    return db


@pytest.fixture
def database(tmp_path):
    return _tiny_database(tmp_path)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server and one Chromium for a whole test file, on a fresh database holding 'tiny': each test
    opens its own page, a Streamlit session of its own, with `_page(server, ...)`."""
    folder = tmp_path_factory.mktemp("server")
    with _serving(_tiny_database(folder), folder / "server.log") as running:
        yield running
