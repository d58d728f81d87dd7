"""Helpers of the browser tests: a real `streamlit run` server on a database, Chromium driven by
Playwright, waits for Streamlit to settle, and the shared database fixture."""
from contextlib import contextmanager
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

@contextmanager
def _served(database, tmp_path, path: str, height: int, errors: list | None = None):
    """A fresh server on `database` and a browser page opened at `path` (nothing awaited yet);
    `errors`, when given, collects the page's uncaught JavaScript errors."""
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(database, tmp_path / "server.log") as url, playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": height})
            if errors is not None:
                page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url + path)
            yield page
        finally:
            browser.close()


@contextmanager
def _opened(database, tmp_path, path: str, height: int, charts: int, timeout_ms: int = 120_000):
    """A fresh server on `database` and a page at `path`, once `charts` charts are drawn and the
    page is clean (no exception, no error); the browser closes on exit."""
    with _served(database, tmp_path, path, height) as page:
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=charts, timeout=timeout_ms)
        _settle(page, timeout_ms=timeout_ms)
        _assert_clean(page)
        yield page


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


@pytest.fixture
def database(tmp_path):
    db = tmp_path / "meridian.duckdb"
    store = Store.open(db)
    store.add_import("tiny", TINY, "tiny.csv", "sha-tiny")
    store.close()
    return db
