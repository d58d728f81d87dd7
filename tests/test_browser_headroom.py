"""The headline (What-if: more work at the baseline's service level, GPUs needed) and the Claims page in a
real Chromium against a real `streamlit run` server on the sample; screenshots to tests/artifacts/."""
from browser_helpers import ARTIFACTS, _assert_clean, _enter, _page, _sample_days, _settle, pytestmark, server  # noqa: F401


def test_whatif_leads_with_the_work_served_at_the_recorded_service_level(server):  # noqa: F811
    with _page(server, "/whatif", 3600) as page:
        candidates = page.get_by_role("button", name="Run", exact=True)
        candidates.wait_for(timeout=120_000)
        _settle(page)
        _enter(page, "Demand resamplings for the headroom (seeds)", "2")
        _sample_days(page, "Run", "Simulate the jobs submitted in the first N days").click()
        page.get_by_text("Capacity at the same service level").wait_for(timeout=240_000)
        page.get_by_text("GPUs needed", exact=False).first.wait_for(timeout=240_000)
        _settle(page, timeout_ms=240_000)
        _assert_clean(page)
        body = page.inner_text("body")
        assert page.get_by_role("combobox", name="Baseline", exact=True).input_value() == "recorded"
        assert "easy-backfill serves" in body and "at recorded's service level" in body
        assert "recorded: load headroom" in body and "Service level: p95 wait at most" in body
        page.screenshot(path=str(ARTIFACTS / "whatif_headroom.png"), full_page=True)


def test_the_claims_page_tests_every_claim_on_a_day_of_the_sample(server):  # noqa: F811
    with _page(server, "/claims", 2200) as page:
        button = page.get_by_role("button", name="Test the claims", exact=True)
        button.wait_for(timeout=120_000)
        _settle(page)
        for label, value in (("Test on the first N days of the dataset (0 = all)", "1"),
                             ("Demand resamplings (seeds)", "1")):
            _enter(page, label, value)
        button.click()
        page.get_by_text("How each figure is measured").wait_for(timeout=300_000)
        _settle(page, timeout_ms=300_000)
        _assert_clean(page)
        body = page.inner_text("body")
        assert "On sample: " in body and "cannot be tested yet" in body
        assert "On public cluster logs: ML runtime prediction cuts job completion time by 31 %" in body
        assert "walk-forward runtime predictions" in body
        page.screenshot(path=str(ARTIFACTS / "claims.png"), full_page=True)
