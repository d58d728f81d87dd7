"""The Overview's dollars: a dataset's recorded history priced by the KPI catalogue's definitions.

The telemetry says when each job held how many GPUs of which type, not which pricing tier's nodes, so
it cannot be priced by itself. The recorded baseline (engine.scenario.recorded; the Fidelity page shows
how closely it reproduces the recorded starts) replays the whole dataset and places every job on a
node; its cost report (engine.analysis.runs.cost) is the one the What-if, Cost & carbon and Report pages
and `meridian simulate --scenario recorded` give for the same window, so every page shows the same
spend and idle cost.

A replay of a large dataset takes seconds (the whole sample about ten), so it runs in a background
thread of the server, started the first time a page asks, and the page polls for it: the rest of the
Overview is drawn meanwhile, and nothing else waits. The replay goes through `dashboard.data`'s What-if
caches, so the What-if page's recorded run of the whole dataset is then free.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import pandas as pd
import streamlit as st
from plotly.graph_objects import Figure

from dashboard import data
from dashboard.charts import cost as charts_cost
from dashboard.data import db_path, store
from engine.analysis.runs.world_kpis import WorldReport
from engine.core.errors import ScenarioError
from engine.scenario.recorded import recorded_of, recorded_spec
from engine.service.compare import UNPRICED, Unusable, priced

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="meridian-priced")  # a small dataset never waits behind a big one


@dataclass(frozen=True)
class Priced:
    """The recorded history's cost report, or why there is none.

    world: the recorded replay's cost, carbon and residency report (None: `reason` says why); recorded:
    what the recorded baseline stands for; jobs: the jobs replayed; start_utc, end_utc: the window W."""

    world: WorldReport | None
    reason: str = ""
    recorded: str = ""
    jobs: int = 0
    start_utc: pd.Timestamp | None = None
    end_utc: pd.Timestamp | None = None


def _price(path: str, dataset: str, content: str, assumptions: str, fingerprint: str) -> Priced:
    """Replay the whole dataset under its recorded baseline and price it (run in the pool's thread)."""
    s = data._connection(path)[0].cursor()
    scheduler = s.recorded_scheduler(dataset)
    fleet, prices = s.fleet(dataset), s.prices(dataset)
    if fleet.empty:
        return Priced(None, "it has no fleet table (nodes with GPU types and pricing tiers) to price")
    if s.jobs(dataset).empty:
        return Priced(None, "it has no job records to replay")
    if not priced(fleet, prices):
        return Priced(None, UNPRICED)
    try:
        run = data.shared_whatif(path, dataset, content, 0.0, fingerprint)
        world = data._whatif_world(path, dataset, content, 0.0, assumptions, fingerprint)
    except (ScenarioError, Unusable, ValueError) as exc:
        return Priced(None, f"the recorded replay could not be priced: {exc}")
    origin = run.result.origin_utc
    return Priced(world, recorded=recorded_of(scheduler).description, jobs=run.jobs, start_utc=origin,
                  end_utc=origin + pd.Timedelta(seconds=world.cost.totals["window_s"]))


@st.cache_resource(show_spinner=False, max_entries=16)
def _started(path: str, dataset: str, assumptions: str, fingerprint: str) -> Future:
    content = data.scenario_key(recorded_spec(data._connection(path)[0].cursor().recorded_scheduler(dataset)))
    return _POOL.submit(_price, path, dataset, content, assumptions, fingerprint)


def history(dataset: str, assumptions: str) -> Future:
    """A Future of the dataset's Priced recorded history under `assumptions` (data.assumptions_text), started
    once per (database, dataset, assumptions, content); `.done()` says whether it is ready."""
    return _started(str(db_path()), dataset, assumptions, store().fingerprint())


@st.cache_resource(show_spinner=False, max_entries=16)
def _spend_figure(path: str, dataset: str, assumptions: str, fingerprint: str) -> Figure:
    # cache_resource: one read-only figure for every session, as the Overview's other charts
    world = _started(path, dataset, assumptions, fingerprint).result().world
    return charts_cost.spend_by_region(world.cost.spend, "recorded history")


def spend_figure(dataset: str, assumptions: str) -> Figure:
    """The recorded history's spend by region and tier, once `history(dataset, assumptions)` is done and
    priced (its `world` is not None)."""
    return _spend_figure(str(db_path()), dataset, assumptions, store().fingerprint())
