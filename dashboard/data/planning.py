"""The Capacity planning page's cached computations and saved sweeps (the cache side of engine.service.planning
and engine.service.sweep; dashboard.data holds the connection and every other cache).

A plan and its fleet curve are cached per (database, dataset, store fingerprint, plan form as
canonical JSON, growth), so an import or a delete invalidates them. The curve runs on the sweep
runner's local processes (two: the machine's cores).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.data import _connection, db_path, store
from engine.service.compare import WORLD_TABLES
from engine.service.planning.curves import fleet_curve
from engine.service.planning.plan import PlanResult, plan_fleet
from engine.service.planning.settings import PlanSettings, settings_from_dict
from engine.telemetry.sweeps import list_sweeps, load_sweep

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "sample_data" / "scenarios"
CURVE_WORKERS = 2


def _tables(path: str, dataset: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    s = _connection(path)[0].cursor()
    return s.jobs(dataset), s.fleet(dataset), {name: s.table(name, dataset) for name in WORLD_TABLES}


def settings(form: dict) -> PlanSettings:
    """The plan form (a plan-file dict; `scenario` names a bundled scenario file) as settings;
    raises engine.service.planning.settings.PlanError for a bad value."""
    return settings_from_dict(form, "the plan form", SCENARIO_DIR)


@st.cache_data(show_spinner=False, max_entries=8)
def _plan(path: str, dataset: str, fingerprint: str, form: str, growth: float) -> PlanResult:
    return plan_fleet(*_tables(path, dataset), settings(json.loads(form)), growth)


def plan(dataset: str, form: dict, growth: float) -> PlanResult:
    """The capacity plan of `dataset` for the form's targets and assumptions and `growth`."""
    return _plan(str(db_path()), dataset, store().fingerprint(), json.dumps(form, sort_keys=True), float(growth))


@st.cache_data(show_spinner=False, max_entries=8)
def _curve(path: str, dataset: str, fingerprint: str, form: str, growth: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    result = _plan(path, dataset, fingerprint, form, growth)
    return fleet_curve(*_tables(path, dataset), result.settings, growth, result.start_utc, result.end_utc,
                       workers=CURVE_WORKERS)


def curve(dataset: str, form: dict, growth: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(points, per-class waits) of today's fleet scaled 0.6-2x on the plan's window
    (engine.service.planning.curves.fleet_curve)."""
    return _curve(str(db_path()), dataset, store().fingerprint(), json.dumps(form, sort_keys=True), float(growth))


def saved_sweeps() -> pd.DataFrame:
    """The sweeps stored in the database (engine.telemetry.sweeps.list_sweeps; never cached)."""
    return list_sweeps(store())


def saved_sweep(sweep_id: int) -> tuple[dict, list[dict]] | None:
    """One stored sweep: (its row, its outcomes in index order), or None."""
    return load_sweep(store(), sweep_id)
