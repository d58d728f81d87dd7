"""The What-if page's Constraint relaxations section in a real Chromium against a real `streamlit run`
server on a day of the sample; screenshot to tests/artifacts/whatif_relaxations.png."""
from browser_helpers import ARTIFACTS, _assert_clean, _enter, _sample_days, _served, _settle, database, pytestmark  # noqa: F401


def test_whatif_shows_relaxations_per_constraint_and_per_team_on_a_day_of_the_sample(database, tmp_path):  # noqa: F811
    with _served(database, tmp_path, "/whatif", 1500) as page:
        page.get_by_role("button", name="Run", exact=True).wait_for(timeout=120_000)
        _settle(page)
        _enter(page, "Demand resamplings for the headroom (seeds)", "1")
        candidates = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Candidates")
        candidates.locator('input').click()
        page.keyboard.type("soft-constraints")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        _settle(page)
        assert "soft-constraints" in candidates.inner_text()     # the section waited for below is its
        _sample_days(page, "Run", "Simulate the jobs submitted in the first N days").click()
        heading = page.get_by_text("Constraint relaxations", exact=True)
        heading.wait_for(timeout=240_000)
        _settle(page, timeout_ms=240_000)
        _assert_clean(page)
        body = page.inner_text("body")
        assert "Jobs that had each soft constraint relaxed" in body
        for tab in ("Per constraint", "Per team", "Per job"):
            assert page.get_by_role("tab", name=tab, exact=True).count() == 1
        heading.evaluate("element => element.scrollIntoView()")
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "whatif_relaxations.png"))
        page.get_by_role("tab", name="Per team", exact=True).click()
        page.wait_for_timeout(800)
        heading.evaluate("element => element.scrollIntoView()")
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "whatif_relaxations_team.png"))
