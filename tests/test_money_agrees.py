"""One definition of every money figure (engine.analysis.runs.catalogue.MONEY), so the same dataset and window
give the same spend and idle cost everywhere: the Overview, What-if, Cost & carbon and Report pages, and
`meridian simulate` / `meridian compare` (issue 29, item 2). The dataset is the sample's first day as a
dataset of its own, so that "the whole dataset" (the Overview's window) is cheap to replay."""
import json
import re
import shutil
import subprocess
import sys
import time

import pandas as pd
import pytest
from conftest import APP, REPO, shown
from streamlit.testing.v1 import AppTest

from engine.analysis.runs.catalogue import MONEY
from engine.analysis.runs.catalogue import shown as money
from engine.scenario.recorded import recorded_baseline
from engine.service.compare import run_one, with_world
from engine.service.report.fmt import usd
from engine.telemetry.batch import ImportBatch
from engine.telemetry.sample import read_bundle
from engine.telemetry.store import Store
from engine.world.facts import World

DATASET = "one-day"
KEYS = ("cost_usd_per_year", "idle_cost_usd_per_year")


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    """(the database the pages open, a copy for the CLI: one process holds a DuckDB file at a time)."""
    bundle = read_bundle()
    jobs = bundle.tables["jobs"]
    kept = jobs[jobs["submit_utc"] < jobs["submit_utc"].min() + pd.Timedelta(days=1)]
    tables = {name: frame for name, frame in bundle.tables.items() if name != "utilization"}
    folder = tmp_path_factory.mktemp("money")
    path = folder / "m.duckdb"
    store = Store.open(path)
    store.add_import(DATASET, ImportBatch("sample", {**tables, "jobs": kept}, scheduler="per-pool-fifo"),
                     "one-day", "sha-one-day")
    store.close()
    shutil.copy(path, folder / "cli.duckdb")
    return path, folder / "cli.duckdb"


@pytest.fixture(scope="module")
def figures(dbs):
    """The recorded replay's figures from engine.service.compare, the one code path: {key: USD}."""
    store = Store.open(dbs[1], read_only=True)
    jobs, fleet, world = store.jobs(DATASET), store.fleet(DATASET), World.of_dataset(store, DATASET)
    store.close()
    run = with_world(run_one(recorded_baseline("per-pool-fifo"), jobs, fleet, world), fleet, world)
    return {key: run.kpis[key] for key in KEYS}


@pytest.fixture(scope="module")
def service(figures):
    """The same as the pages show them: {key: "$X"}."""
    return {key: money(key, value) for key, value in figures.items()}


def _cli(dbs, *args) -> dict:
    proc = subprocess.run([sys.executable, "-m", "engine.cli", *args, "--dataset", DATASET, "--json",
                           "--db", str(dbs[1])], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _page(dbs, monkeypatch, page: str, **state) -> AppTest:
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(dbs[0])])
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["dataset"] = DATASET
    for key, value in state.items():
        at.session_state[key] = value
    at.switch_page("app_pages/data.py").run()  # AppTest finds a page by file name only after a first run
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_the_cli_prints_the_services_figures(dbs, service):
    simulate = _cli(dbs, "simulate", "--scenario", "recorded")["kpis"]
    compare = _cli(dbs, "compare", "--scenario", "recorded", "--scenario",
                   str(REPO / "sample_data" / "scenarios" / "fifo.toml"), "--no-headroom")[0]["kpis"]
    assert {key: money(key, simulate[key]) for key in KEYS} == service
    assert {key: money(key, compare[key]) for key in KEYS} == service


def test_the_overview_shows_them(dbs, service, monkeypatch):
    at = _page(dbs, monkeypatch, "app_pages/overview.py")
    deadline = time.monotonic() + 120
    while any(m.value == "..." for m in at.metric) and time.monotonic() < deadline:
        time.sleep(0.5)
        at.run()
    tiles = {m.label: m.value for m in at.metric}
    assert {"cost_usd_per_year": tiles["Spend a year"], "idle_cost_usd_per_year": tiles["Idle cost a year"]} == service
    methods = " ".join(shown(m) for m in at.expander[0].markdown)
    assert all(MONEY[key] in methods for key in KEYS)   # the one definition, in the page's "how computed"


def test_cost_and_carbon_shows_them_over_all_of_the_dataset(dbs, service, monkeypatch):
    at = _page(dbs, monkeypatch, "app_pages/costcarbon.py", cc_days=0.0, cc_scenarios=[])
    table = at.dataframe[0].value   # KPIs as rows, scenarios as columns, as the catalogue prints them
    assert {key: table.loc[key, "recorded"] for key in KEYS} == service
    caption = " ".join(shown(c) for c in at.caption)
    assert f"{service['cost_usd_per_year']} a year at this rate" in caption
    methods = " ".join(shown(m) for m in at.expander[-1].markdown)
    assert all(MONEY[key] in methods for key in KEYS)


def test_what_if_shows_them_for_the_recorded_baseline(dbs, service, monkeypatch):
    at = _page(dbs, monkeypatch, "app_pages/whatif.py", wi_days=0.0, wi_candidates=["fifo"], wi_seeds=1)
    assert at.selectbox(key="wi_baseline").value == "recorded"
    at.button(key="wi_run").click().run()
    assert not at.exception, at.exception
    world = next(d.value for d in at.dataframe if "cost_usd_per_year" in d.value.index)
    assert {key: world.loc[key, "recorded"] for key in KEYS} == service   # shown as the catalogue formats them
    methods = " ".join(shown(m) for e in at.expander for m in e.markdown)
    assert all(MONEY[key] in methods for key in KEYS)


def test_the_report_states_them(dbs, figures, monkeypatch):
    at = _page(dbs, monkeypatch, "app_pages/report.py", rp_baseline="recorded", rp_candidates=["fifo"], rp_days=0.0)
    at.button(key="rp_build").click().run()
    assert not at.exception, at.exception
    text = " ".join(shown(m) for m in at.markdown)
    idle = re.search(r"Idle reserved GPUs cost (\$[\d,.]+[KM]?) a year under recorded", text)
    spend = re.search(r"Spend (\$[\d,.]+[KM]?) to \$[\d,.]+[KM]? a year", text)
    # the report rounds for a reader in a hurry ($1.23M, $456K): the same figures, fewer digits
    assert {"cost_usd_per_year": spend.group(1), "idle_cost_usd_per_year": idle.group(1)} == {
        key: usd(value) for key, value in figures.items()}
