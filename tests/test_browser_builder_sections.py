"""The What-if builder's hand-off, staged workflows, automated experiments, GPU partitions, right-sizing,
elastic scaling and region roles sections in a real Chromium against a real `streamlit run` server on the
sample: each opened and set (a chain typed into its table), the custom scenario run as the baseline beside
easy-backfill over a day, and the run's KPI tables carry each section's figures. One server, one browser,
one run. The scenario built is checked, from its downloaded TOML, before it runs. Full-page screenshots (the
viewport stretched to the page) to tests/artifacts/whatif_builder_sections.png and
whatif_builder_sections_results.png; when a wait gives up, the page as it was then under the test's tmp_path."""
import re
from functools import partial

from browser_helpers import ARTIFACTS, _assert_clean, _diagnosed, _enter, _served, _settle, database, pytestmark  # noqa: F401
from playwright.sync_api import expect
from test_browser_scenario_files import _open, download_custom

from engine.scenario.spec import Scenario

SCROLLER = '[data-testid="stMain"]'
STAGE_CELLS = ((85, 54), (190, 54))  # px in the chain table at 1440 px wide: its first row's stage 1 and 2


def _pick(page, label: str, option: str) -> None:
    """Choose `option` in the select box `label`."""
    page.get_by_role("combobox", name=label, exact=True).click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")
    _settle(page)


def _choose(page, label: str, *options: str, clear: bool = False) -> None:
    """Add `options` to the multiselect `label` (emptied first when `clear`). Enter takes whichever option is
    highlighted, a wrong one when a rerun cut the typing short, so it is pressed only once the filter holds the
    whole option and the option shows (the scenario built is checked whole, extras included: _check_built)."""
    box = page.locator('[data-testid="stMultiSelect"]').filter(has=page.get_by_text(label, exact=True))
    if clear:
        box.get_by_role("button", name="Clear all").click()
        _settle(page)
    field = box.locator("input")
    for option in options:
        for _ in range(3):  # a rerun ending (a field before it commits on blur) can wipe the filter typed
            field.click()
            _settle(page)
            field.fill(option)
            page.wait_for_timeout(300)
            if field.input_value() == option:
                break
        expect(field).to_have_value(option)
        page.get_by_role("option", name=option, exact=True).wait_for(timeout=30_000)
        page.keyboard.press("Enter")
        _settle(page)
    page.keyboard.press("Escape")
    _settle(page)
    missing = [option for option in options if option not in box.inner_text()]
    assert not missing, f"{label}: {missing} not chosen; the box shows {box.inner_text()!r}"


_number = partial(_enter, exact=True)


def _tick(page, label: str) -> None:
    page.get_by_text(label, exact=True).click()
    _settle(page)


def _grid(page, caption: str):
    """The table in the innermost expander showing `caption`."""
    return page.locator('[data-testid="stExpanderDetails"]').filter(has_text=caption).last.locator(
        '[data-testid="stDataFrame"]').first


def _chain(page, *regions: str) -> None:
    """Add a row to the staged workflows' table and type its first stages (a select box per cell: select the
    cell, Enter opens its list, the typed name filters it, Enter takes it; a cell edited while the script
    reruns can be lost, so each is checked and typed again if it was)."""
    grid = _grid(page, "Each row chains")
    grid.scroll_into_view_if_needed()
    grid.hover()                    # its toolbar shows on hover
    page.wait_for_timeout(500)
    grid.get_by_role("button", name="Add row").click()
    _settle(page)
    box = grid.bounding_box()
    for stage, ((x, y), region) in enumerate(zip(STAGE_CELLS, regions)):
        for _ in range(3):
            page.mouse.click(box["x"] + x, box["y"] + y)
            page.wait_for_timeout(300)
            page.keyboard.press("Enter")
            page.wait_for_timeout(500)
            page.keyboard.type(region)
            page.keyboard.press("Enter")
            _settle(page)
            page.keyboard.press("Escape")
            if "".join(regions[:stage + 1]) in grid.text_content():
                break
        else:
            raise AssertionError(f"stage {stage + 1} of the chain could not be typed: {grid.text_content()}")


def _rows(grid) -> dict[str, list[str]]:
    """A drawn table's rows by their first cell (the data grid's accessible copy)."""
    cells = grid.locator("tr").evaluate_all("rows => rows.map(r => Array.from(r.children).map(c => c.innerText))")
    return {row[0]: row[1:] for row in cells if row}


def _number_in(text: str) -> float:
    return float(re.sub(r"[^\d.]", "", text) or "nan")


def _full_screenshot(page, name: str) -> None:
    """The whole page: Streamlit scrolls its main block, not the document, so stretch the viewport to it."""
    size = page.viewport_size
    height = page.locator(SCROLLER).evaluate("main => main.scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": height})
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    page.set_viewport_size(size)


def _replace(page, label: str, *options: str) -> None:
    _choose(page, label, *options, clear=True)


# (section, a text inside it once open, its steps: (action, its arguments)); spot interruptions evict the jobs
# whose checkpoints the roles section archives
SECTIONS = (
    ("Live follow-the-sun: hand running work over", "Hand running work over",
     ((_tick, "Hand running work over"), (_number, "Minimum run between moves (h)", "0.5"))),
    ("Spot interruptions", "Interruptions per spot node-hour", ((_number, "Interruptions per spot node-hour", "0.05"),)),
    ("GPU partitions: MIG, time-slicing, MPS", "Partition GPUs", ((_tick, "Partition GPUs"),)),
    ("Staged workflows: chains of jobs across regions", "Each row chains", ((_chain, "ap-northeast", "eu-west"),)),
    ("Automated experiments for nights and weekends", "Teams queue sweeps", ((_choose, "Teams", "llm-research"),)),
    ("Right-sizing at submit: predicted GPUs, out-of-memory restarts", "Right-size at submit",
     ((_tick, "Right-size at submit"), (_number, "Need quantile (quantile)", "0.1"),
      (_replace, "Classes", "development", "inference"))),
    ("Elastic scaling: Amdahl instead of perfect scaling", "An elastic job admitted",
     ((_tick, "amdahl"), (_number, "Training: serial fraction (fraction)", "0.1"))),
    ("Region roles: edge locations, overflow, disaster recovery, archive", "New edge locations",
     ((_choose, "Archive", "eu-north"), (_pick, "Checkpoints of evicted jobs", "archive"))))
POLICIES = (("Admission", "controls"), ("Backfill", "easy"), ("Placement", "best-fit"), ("Routing", "follow-the-sun"))
# what the policies and each section set, as the scenario built holds it
BUILT = (("policies", lambda s: all(s.policies[label.lower()][0] == option for label, option in POLICIES)),
         ("hand-off", lambda s: s.handoff.enabled and s.handoff.min_run_h == 0.5),
         ("spot", lambda s: s.spot.interruptions_per_node_hour == 0.05),
         ("partitions", lambda s: s.partitions.enabled),
         ("chain", lambda s: [chain.stages[:2] for chain in s.chains] == [("ap-northeast", "eu-west")]),
         ("experiments", lambda s: s.experiments.teams == ("llm-research",)),
         ("right-sizing", lambda s: s.rightsize.enabled and s.rightsize.quantile == 0.1
          and sorted(s.rightsize.classes.split(",")) == ["development", "inference"]),
         ("elastic", lambda s: s.elastic.model == "amdahl" and s.elastic.training_serial_fraction == 0.1),
         ("roles", lambda s: s.roles is not None and s.roles.archive == ("eu-north",) and s.roles.checkpoints == "archive"))


def _build(page) -> None:
    """The custom scenario as the baseline, its policies and the sections set."""
    _pick(page, "Baseline", "custom")
    for label, option in POLICIES:
        _pick(page, label, option)
    for section, inside, steps in SECTIONS:
        _open(page, section, inside)
        for action, *arguments in steps:
            action(page, *arguments)


def _check_built(page, tmp_path) -> None:
    """The scenario built holds every setting (a step the page missed fails here, by name, not as a table row the
    run never draws)."""
    saved = download_custom(page, tmp_path)[0]
    scenario = Scenario.load(saved)
    missing = [name for name, holds in BUILT if not holds(scenario)]
    assert not missing, f"the scenario built lacks {missing}:\n{saved.read_text()}"


def test_the_builder_sections_reach_the_run_and_its_kpis(database, tmp_path):  # noqa: F811
    errors = []
    with _served(database, tmp_path, "/whatif", 1600, errors) as page, _diagnosed(page, tmp_path, "whatif_at_timeout"):
        page.get_by_role("button", name="Run", exact=True).wait_for(timeout=120_000)
        _settle(page)
        _build(page)
        _assert_clean(page)
        _check_built(page, tmp_path)
        _number(page, "Simulate the jobs submitted in the first N days of the dataset (0 = all)", "1")
        _number(page, "Demand resamplings for the headroom (seeds)", "1")
        _full_screenshot(page, "whatif_builder_sections.png")
        page.get_by_role("button", name="Run", exact=True).click()
        kpis = page.locator('[data-testid="stDataFrame"]').filter(has_text="Hand-off moves").first
        kpis.wait_for(timeout=180_000)        # CI's 2 cores: the runs take seconds, more under load
        world = page.locator('[data-testid="stDataFrame"]').filter(has_text="Checkpoints archived").first
        world.wait_for(timeout=120_000)
        page.get_by_text("Stranded capacity", exact=True).wait_for(timeout=120_000)
        _assert_clean(page)       # the headroom searches still run: what they draw is the headroom tests'
        rows, costs = _rows(kpis), _rows(world)
        body = page.inner_text("body")
        # rows: kpi -> (what, custom, easy-backfill, its delta, delta %); the sections' KPIs are the custom's alone
        for key in ("mig_instances", "mig_gpu_hours_saved", "rightsized_jobs", "gpus_saved_at_submit", "oom_restarts",
                    "chains", "chains_completed", "experiments_jobs", "experiments_filled_gpu_hours"):
            assert _number_in(rows[key][1]) > 0 and rows[key][2] == "n/a", (key, rows[key])
        assert _number_in(costs["checkpoints_archived"][1]) > 0, costs["checkpoints_archived"]
        # live follow-the-sun moves rarely within a day: its figures are shown, with a note when they are 0
        assert rows["handoff_moves"][0] == "Hand-off moves" and rows["handoff_moves"][2] == "n/a"
        if _number_in(rows["handoff_moves"][1]) == 0:
            assert "custom: [handoff] moved no running work" in body
        assert "Simulated jobs submitted from 2026-10-01 14:07 to 2026-10-02 14:07 UTC" in body
        _full_screenshot(page, "whatif_builder_sections_results.png")
        _assert_clean(page)
    assert errors == []
