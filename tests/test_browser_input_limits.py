"""Issue 28, item 3 in a real Chromium against a real `streamlit run` server: the Data page states the upload
limits before a file is chosen (the memory an import needs among them), refuses a gzip bomb made here with one line naming it, and the database is
left exactly as it was. Screenshot to tests/artifacts/."""
from browser_helpers import (  # noqa: F401  (the fixture and the browser marks)
    ARTIFACTS,
    _assert_clean,
    _served,
    _settle,
    database,
    pytestmark,
)
from test_input_limits import BOMB, snapshot
from test_input_limits import hostile as hostile  # noqa: F401  (the fixture)

from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import Store

LIMITS = ("Limits: an upload of at most 500 MB; gzip content may expand to at most 1,024 MiB and 100 times its "
          "compressed size")
MEMORY = ("an import needs about 2 MiB of memory per MiB of text (the content once decompressed) plus 512 MiB for "
          "a jobs CSV, read in chunks")


def test_the_data_page_states_the_limits_and_refuses_a_bomb(database, tmp_path, hostile):  # noqa: F811
    store = Store.open(database)
    ensure_sample(store)            # what the server does when it starts
    before = snapshot(store)
    store.close()
    with _served(database, tmp_path, "/data", 1600) as page:
        page.locator("input[type=file]").wait_for(state="attached", timeout=120_000)
        _settle(page)
        assert LIMITS in page.inner_text("body") and MEMORY in page.inner_text("body")
        page.set_input_files("input[type=file]", str(hostile["bomb.swf.gz"]))
        _settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("Import rejected: bomb.swf.gz: gzip content expands to more than 16 MiB").wait_for(
            timeout=60_000)
        _settle(page)
        _assert_clean(page)
        assert BOMB in page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "data-bomb-refused.png"), full_page=True)
    store = Store.open(database)
    assert snapshot(store) == before
    store.close()
