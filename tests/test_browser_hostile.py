"""Every page, and the executive report, on a dataset whose every name is an attack (tests/hostile.py),
in a real Chromium against a real `streamlit run` server: no dialog opens (no injected script runs),
no request leaves 127.0.0.1 (no injected image, link, style or font loads), and the names show as
written (no name becomes a link). Screenshots to tests/artifacts/hostile_*.png."""
from urllib.parse import urlparse

from browser_helpers import ARTIFACTS, _assert_clean, _settle, pytestmark, watched  # noqa: F401  (the browser marks)
from conftest import ALL_CHARTS_DRAWN, CHROMIUM, CHROMIUM_ARGS, sample_copy, streamlit_server
from hostile import DATASET, EVIL_HOST, REGIONS, hostile_batch
from playwright.sync_api import sync_playwright

from engine.telemetry.store import Store

PAGES = ("/", "/data", "/whatif", "/fidelity", "/timezones", "/cost", "/fairness", "/capacity", "/optimise", "/predictors",
         "/report")
LOCAL = {"127.0.0.1", "localhost"}
# a link made from data (a Markdown link, or an autolink of a URL or address in a name) would be one of these
INJECTED_LINKS = f'a[href*="{EVIL_HOST}"], a[href*="example"], a[href^="javascript"], a[href^="mailto"]'


def _database(sample_file, tmp_path):
    db = sample_copy(sample_file, tmp_path)
    store = Store.open(db)
    store.delete_dataset("sample")   # deleted, it stays deleted: the hostile dataset is the only one
    store.add_import(DATASET, hostile_batch(), "hostile.csv", "sha-hostile")
    store.close()
    return db


class Watch:
    """Dialogs opened and requests that tried to leave the machine, over every page of one browser."""

    def __init__(self, context):
        self.dialogs, self.leaving = [], []
        context.route("**/*", self._route)

    def _route(self, route):
        url = urlparse(route.request.url)
        if url.scheme in ("http", "https", "ws", "wss") and url.hostname not in LOCAL:
            self.leaving.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    def page(self, context):
        page = watched(context.new_page())
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        return page


def _hover_charts(page) -> None:
    """Hover the middle of every drawn chart, so that plotly renders hover labels from the data."""
    for chart in page.locator(".main-svg .nsewdrag").all()[:6]:
        chart.hover()
        page.wait_for_timeout(150)


def _click(page, name: str, timeout_ms: int = 180_000) -> None:
    button = page.get_by_role("button", name=name, exact=True)
    button.wait_for(timeout=60_000)
    button.click()
    page.wait_for_timeout(500)
    _settle(page, timeout_ms=timeout_ms)


def test_no_page_and_no_report_runs_or_loads_anything_a_name_injects(sample_file, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    db = _database(sample_file, tmp_path)
    with streamlit_server(db, tmp_path / "server.log") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 2400}, accept_downloads=True)
        watch = Watch(context)
        try:
            for path in PAGES:
                page = watch.page(context)
                page.goto(url + path)
                page.wait_for_selector('[data-testid="stSidebarNav"]', timeout=120_000)
                _settle(page, timeout_ms=180_000)
                if path == "/whatif":
                    _click(page, "Run")
                    page.get_by_text("Why did this job wait?").wait_for(timeout=120_000)
                elif path == "/predictors":
                    _click(page, "Train the models")
                    _click(page, "Estimate the starts")
                elif path == "/report":
                    _click(page, "Build the report")
                    with page.expect_download() as download:
                        page.get_by_role("button", name="Download HTML").click()
                    report = tmp_path / "report.html"
                    download.value.save_as(report)
                _settle(page)
                _assert_clean(page)
                assert page.locator(INJECTED_LINKS).count() == 0, (path, page.locator(INJECTED_LINKS).all_inner_texts())
                _hover_charts(page)
                if path in ("/", "/whatif", "/fairness"):
                    page.screenshot(path=str(ARTIFACTS / f"hostile_{path.strip('/') or 'overview'}.png"),
                                    full_page=True)
                if path == "/":
                    body = page.inner_text("body")
                    assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == DATASET
                    assert "Overview · " + DATASET in body
                    page.wait_for_function(ALL_CHARTS_DRAWN, arg=4, timeout=60_000)
                    legend = " ".join(page.locator(".legendtext").all_text_contents())
                    assert all(region in legend for region in REGIONS), legend
                page.close()
            page = watch.page(context)
            page.goto(report.as_uri())
            page.wait_for_load_state("load")
            assert watch.dialogs == [], watch.dialogs          # an injected script ran in the report
            page.wait_for_function("n => document.querySelectorAll('.main-svg').length >= n", arg=3, timeout=60_000)
            _hover_charts(page)
            assert all(region in page.inner_text("body") for region in REGIONS)
            page.screenshot(path=str(ARTIFACTS / "hostile_report.png"), full_page=True)
        finally:
            browser.close()
    assert watch.dialogs == [] and watch.leaving == [], (watch.dialogs, watch.leaving)
