"""Helpers of the browser tests: a real `streamlit run` server on a database, Chromium driven by
Playwright, waits for Streamlit to settle, a fresh database per test, and one server per test file."""
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ALL_CHARTS_DRAWN, CHROMIUM, CHROMIUM_ARGS, streamlit_server
from test_app_pages import TINY

from engine.telemetry.store import Store

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium")]

ARTIFACTS = Path(__file__).parent / "artifacts"
EXCEPTION = '[data-testid="stException"]'


def _settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has finished the current script run."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)
    page.wait_for_timeout(300)


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
    page = server.browser.new_page(viewport={"width": 1440, "height": height})
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


def _sample_days(page, button: str, days_label: str, days: str = "1"):
    """Wait for the button named `button`, check that the sample is the chosen dataset, and enter
    `days` in the number field labelled `days_label`; returns the button."""
    target = page.get_by_role("button", name=button, exact=True)
    target.wait_for(timeout=120_000)
    _settle(page)
    assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
    field = page.get_by_role("spinbutton", name=days_label)
    field.fill(days)
    field.press("Enter")
    _settle(page)
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
