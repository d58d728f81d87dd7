"""The dashboard's access to telemetry: with the other dashboard.data_* modules (planning, predictions,
fidelity, report), the only modules with st.cache_*.

One DuckDB connection per process (st.cache_resource, keyed by the database path), a fresh
cursor for every use within a script run (connections must not be shared across threads), and
analysis results cached by (database, dataset, store fingerprint), so an import or a delete invalidates
them without any explicit clearing.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import math
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st
from plotly.graph_objects import Figure

from dashboard.charts import overview as overview_charts
from dashboard.data import shared
from engine.analysis.runs.cost import CostAssumptions
from engine.analysis.runs.fairness import (
    fairness_kpis,
    queue_sla_table,
    share_over_time,
    starvation_by_team,
    team_table,
)
from engine.analysis.runs.held import horizon_s
from engine.analysis.runs.job_story import JobStory, StoryContext, job_story
from engine.analysis.runs.stranded import Stranded
from engine.analysis.runs.world_kpis import WorldReport
from engine.analysis.telemetry.overview import Overview, build_overview
from engine.core import units
from engine.core.units import ResourceUnit
from engine.scenario.spec import Scenario
from engine.service.compare import Run, first_days, run_one, with_world
from engine.service.compare import priced as compare_priced
from engine.service.shared_runs import Place
from engine.sim.output.result import SimulationResult
from engine.sim.state.workload import build_workload
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.columns import COLUMN_ALIASES, normalise_header, resolve_columns
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.ingest import IngestResult, ingest_bytes
from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import DEFAULT_DB_PATH, Store
from engine.world.facts import World

PREVIEW_ROWS = 20
PREVIEW_BYTES = 256 * 1024


def db_path() -> Path:
    """The database file: `--db FILE` (or `--db=FILE`) among the script's arguments, else the default.

    `streamlit run dashboard/app.py -- --db FILE` passes the arguments after `--` to the script.
    """
    return path_argument("--db", DEFAULT_DB_PATH)


def path_argument(option: str, default: Path) -> Path:
    """The path after `option` (`OPTION PATH` or `OPTION=PATH`) among the script's arguments, else `default`."""
    args = sys.argv[1:]
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            return Path(args[i + 1]).expanduser()
        if arg.startswith(option + "="):
            return Path(arg.split("=", 1)[1]).expanduser()
    return default


@st.cache_resource(show_spinner="Opening the database and loading the sample data (first start only)...")
def _connection(path: str) -> tuple[Store, str | None]:
    """(the process's store on `path`, why the sample data could not be loaded or None)."""
    store = Store.open(path)
    try:
        ensure_sample(store)
    except ImportRejected as exc:
        return store, "; ".join(exc.lines()) or exc.summary()
    return store, None


def store() -> Store:
    """A store on a fresh cursor of this process's connection (a connection must not be shared
    across Streamlit's script threads; a cursor per use is cheap and safe)."""
    return _connection(str(db_path()))[0].cursor()


def sample_problem() -> str | None:
    """Why the embedded sample data is missing from a fresh database, if it could not be loaded."""
    return _connection(str(db_path()))[1]


def datasets() -> pd.DataFrame:
    """name, format, rows, start, end, files, created_utc per dataset (never cached: always fresh)."""
    return store().datasets()


@st.cache_data(show_spinner=False, max_entries=16)
def _overview(path: str, dataset: str, fingerprint: str) -> Overview:
    s = _connection(path)[0].cursor()
    return build_overview(s.jobs(dataset), s.fleet(dataset), s.regions(dataset), s.utilization(dataset))


def overview(dataset: str) -> Overview:
    """The Overview analysis of `dataset`, computed once per content of the database."""
    return _overview(str(db_path()), dataset, store().fingerprint())


@st.cache_resource(show_spinner=False, max_entries=16)
def _figures(path: str, dataset: str, fingerprint: str) -> dict[str, Figure]:
    # cache_resource, not cache_data: figures are shared read-only, and unpickling a plotly
    # Figure costs as much as building it.
    return overview_charts.overview_figures(_overview(path, dataset, fingerprint))


def overview_figures(dataset: str) -> dict[str, Figure]:
    """The Overview's charts of `dataset` (see dashboard.charts.overview), built once per content."""
    return _figures(str(db_path()), dataset, store().fingerprint())


def import_file(name: str, content: bytes, *, format: str, dataset: str | None,
                options: ImportOptions) -> IngestResult:
    """Import an uploaded file (raises ImportRejected with the file's problems)."""
    return ingest_bytes(store(), content, name, format=format, dataset=dataset or None, options=options)


def rejects(dataset: str) -> pd.DataFrame:
    """The rows `dataset`'s imports set aside: file, line, problem (never cached: always fresh)."""
    return store().rejects(dataset)


def delete_dataset(name: str) -> bool:
    return store().delete_dataset(name)


def _head_text(content: bytes) -> str:
    if content[:2] == b"\x1f\x8b":
        try:
            content = gzip.GzipFile(fileobj=io.BytesIO(content)).read(PREVIEW_BYTES)
        except (OSError, EOFError):
            return ""
    return content[:PREVIEW_BYTES].decode("utf-8-sig", errors="replace")


def csv_preview(name: str, content: bytes) -> tuple[pd.DataFrame, dict[str, str]]:
    """(header + first PREVIEW_ROWS rows as text, {source column: Meridian column it matches}).

    The match is the generic CSV importer's own (`resolve_columns`); when the header lacks a
    required column, each column is matched alone against the alias table instead.
    """
    lines = _head_text(content).splitlines()[: PREVIEW_ROWS + 1]
    rows = list(csv.reader(lines))
    if not rows:
        return pd.DataFrame(), {}
    header = [h.strip() for h in rows[0]]
    body = [r + [""] * (len(header) - len(r)) for r in rows[1:]]
    preview = pd.DataFrame([r[: len(header)] for r in body], columns=_unique(header))
    try:
        plan = resolve_columns(header, {}, name)
        matched = {header[index]: column for column, index in plan.sources.items()}
    except ImportRejected:
        lookup = {alias: column for column, aliases in COLUMN_ALIASES.items() for alias in aliases}
        matched = {h: lookup[normalise_header(h)] for h in header if normalise_header(h) in lookup}
    return preview, matched


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


SCENARIO_DIR = Path(__file__).resolve().parents[2] / "sample_data" / "scenarios"


def bundled_scenarios() -> dict[str, dict]:
    """The example scenarios shipped in sample_data/scenarios/, by file stem, as TOML dicts."""
    out = {}
    for path in sorted(SCENARIO_DIR.glob("*.toml")):
        out[path.stem] = tomllib.loads(path.read_text(encoding="utf-8"))
    return out


@dataclass(frozen=True)
class WhatIfRun:
    """One scenario's run: its KPIs (the simulation's, then its stranded capacity's), the full result,
    the submit window simulated (UTC, end exclusive), the number of jobs simulated, its stranded
    capacity over time and by region (engine.analysis.runs.stranded), and the service's Run it came from
    (engine.service.compare.run_one: the CLI's, the report's and the pages' one code path)."""

    name: str
    kpis: dict[str, float]
    result: SimulationResult
    start_utc: pd.Timestamp | None
    end_utc: pd.Timestamp | None
    jobs: int
    stranded: Stranded | None = None
    run: Run | None = None  # engine.service.compare's record of it, which the world KPIs extend


def scenario_of(spec: dict, path: str | Path | None = None) -> Scenario:
    """The scenario of a Scenario.from_dict dict, with a learned order's agent loaded from the model
    registry beside the database (`path`, default the dashboard's) or the packaged agents."""
    from engine.predict.rl.agent_registry import AgentRegistry
    from engine.service.rl.agents import bind

    scenario = Scenario.from_dict(spec, source=str(spec.get("name", "scenario")))
    return bind(scenario, AgentRegistry.beside(path or db_path()))


def scenario_key(spec: dict) -> str:
    """The cache key of a scenario dict: its JSON, with the version of the trained agent a learned order
    names (retraining an agent under the same name makes a new run, not a cached one)."""
    order = spec.get("policies", {}).get("order") if isinstance(spec.get("policies"), dict) else None
    agent = None
    if isinstance(order, dict) and order.get("key") == "rl":
        from engine.policies.rl_order import DEFAULT_AGENT
        from engine.predict.rl.agent_registry import AgentRegistry

        versions = AgentRegistry.beside(db_path()).versions(str(order.get("model", DEFAULT_AGENT)))
        agent = versions[-1].number if versions else "packaged"
    return json.dumps({"scenario": spec, "agent": agent}, sort_keys=True, default=str)


def _simulate(path: str, dataset: str, content: str, days: float) -> WhatIfRun:
    scenario = scenario_of(json.loads(content)["scenario"], path)
    s = _connection(path)[0].cursor()
    jobs, fleet = s.jobs(dataset), s.fleet(dataset)
    run = run_one(first_days([scenario], jobs, days)[0], jobs, fleet, World.of_dataset(s, dataset))
    scenario = run.scenario
    return WhatIfRun(scenario.name, run.kpis, run.result, scenario.start_utc, scenario.end_utc, len(run.result.jobs),
                     run.stranded, run)


def shared_whatif(path: str, dataset: str, content: str, days: float, fingerprint: str,
                  waiting: Callable[[Place], None] | None = None) -> WhatIfRun:
    """The run, computed once for every session (dashboard.data.shared; shared, not copied: read only)."""
    return shared.runs().run(("whatif", path, dataset, content, days, fingerprint),
                             lambda: _simulate(path, dataset, content, days), waiting)


def whatif_run(dataset: str, scenario: dict, days: float, waiting: Callable[[Place], None] | None = None) -> WhatIfRun:
    """Run `scenario` (a Scenario.from_dict dict) over `dataset`'s jobs submitted in its first `days`
    days (0 = all, or the scenario's own [workload] window), computed once per (dataset, scenario content,
    window, store fingerprint) for every session, through the server's pool of heavy runs: `waiting(place)`
    while it waits for a slot or for another session's identical run. Raises ScenarioError for an invalid
    scenario."""
    content = scenario_key(scenario)
    return shared_whatif(str(db_path()), dataset, content, float(days), store().fingerprint(), waiting)


# --- Cost & carbon (engine.analysis.runs.world_kpis) --------------------------------------------------
WORLD_TABLES = ("prices", "regions", "carbon")


def assumptions_text(assumptions: CostAssumptions) -> str:
    """`assumptions` as canonical JSON: the cache key of the world reports, and what the session keeps."""
    return json.dumps({"pue": assumptions.pue, "kw_per_gpu": dict(sorted(assumptions.kw_per_gpu.items())),
                       "kw_other": assumptions.kw_other, "annualisation_days": assumptions.annualisation_days,
                       "default_g_co2e_per_kwh": assumptions.default_g_co2e_per_kwh,
                       "price_overrides": sorted([*key, usd] for key, usd in assumptions.price_overrides.items())},
                      sort_keys=True)


def assumptions_from_text(text: str) -> CostAssumptions:
    """The inverse of assumptions_text."""
    spec = json.loads(text)
    overrides = {tuple(row[:3]): float(row[3]) for row in spec.pop("price_overrides")}
    return CostAssumptions(**spec, price_overrides=overrides)


@st.cache_data(show_spinner=False, max_entries=16)
def _world_tables(path: str, dataset: str, fingerprint: str) -> dict[str, pd.DataFrame]:
    s = _connection(path)[0].cursor()
    fleet = s.fleet(dataset)
    return {**{name: s.table(name, dataset) for name in WORLD_TABLES},
            "gpu_types": pd.DataFrame({"gpu_type": sorted(set(fleet["gpu_type"].dropna().astype(str)))}),
            "fleet_regions": pd.DataFrame({"region": sorted(set(fleet["region"].dropna().astype(str)))}),
            "fleet_nodes": fleet[[c for c in ("node", "region", "gpu_type", "tier", "gpus") if c in fleet]].reset_index(drop=True)}


@st.cache_data(show_spinner=False, max_entries=32)
def _unit(path: str, dataset: str, fingerprint: str) -> ResourceUnit:
    s = _connection(path)[0].cursor()
    types = s.fleet(dataset)["gpu_type"]
    return units.of(types if len(types) else s.jobs(dataset)["gpu_type"])


def unit(dataset: str) -> ResourceUnit:
    """What `dataset`'s fleet counts (engine.core.units): processors for a CPU log, else GPUs."""
    return _unit(str(db_path()), dataset, store().fingerprint())


def has_prices(dataset: str) -> bool:
    """Whether `dataset`'s dollars are computed (engine.service.compare.priced: not an unpriced CPU log)."""
    tables = world_tables(dataset)
    return compare_priced(tables["gpu_types"], tables["prices"])


def world_tables(dataset: str) -> dict[str, pd.DataFrame]:
    """The dataset's prices, regions and carbon tables, "gpu_types" and "fleet_regions" (the fleet's GPU
    types and regions, one column each) and "fleet_nodes" (its nodes' node, region, gpu_type, tier and gpus:
    what the builder's fleet edits are checked against), read once per content of the database."""
    return _world_tables(str(db_path()), dataset, store().fingerprint())


@st.cache_data(show_spinner=False, max_entries=64)
def _whatif_world(path: str, dataset: str, content: str, days: float, assumptions: str,
                  fingerprint: str) -> WorldReport:
    run = shared_whatif(path, dataset, content, days, fingerprint)
    tables = _world_tables(path, dataset, fingerprint)
    fleet = _connection(path)[0].cursor().fleet(dataset)
    world = World(tables["regions"], tables["prices"], tables["carbon"])
    return with_world(run.run, fleet, world, assumptions_from_text(assumptions)).world


def whatif_world(dataset: str, scenario: dict, days: float,
                 assumptions: CostAssumptions | None = None) -> WorldReport:
    """Cost, carbon and residency (engine.analysis.runs.world_kpis.world_report) of `whatif_run(dataset,
    scenario, days)`, on the fleet the scenario ran on, with the dataset's world tables; cached per
    (dataset, scenario content, window, assumptions, store fingerprint) and sharing whatif_run's run."""
    content = scenario_key(scenario)
    return _whatif_world(str(db_path()), dataset, content, float(days),
                         assumptions_text(assumptions or CostAssumptions()), store().fingerprint())


# --- Teams & fairness (engine.analysis.runs.fairness, engine.analysis.runs.job_story) -----------------------
SHARE_POINTS = 200  # at most this many steps in a share-over-time series


@st.cache_data(show_spinner=False, max_entries=16)
def _teams_table(path: str, dataset: str, fingerprint: str) -> pd.DataFrame:
    return _connection(path)[0].cursor().table("teams", dataset)


def teams_table(dataset: str) -> pd.DataFrame:
    """The dataset's teams table (team, share_weight, ...), read once per content of the database."""
    return _teams_table(str(db_path()), dataset, store().fingerprint())


@dataclass(frozen=True)
class FairnessReport:
    """The fairness figures of one run (engine.analysis.runs.fairness): kpis (fairness_kpis), teams
    (team_table), shares (share_over_time, steps of whole hours, at most SHARE_POINTS), starvation
    (starvation_by_team) and queues (queue_sla_table)."""

    kpis: dict[str, float]
    teams: pd.DataFrame
    shares: pd.DataFrame
    starvation: pd.DataFrame
    queues: pd.DataFrame


@st.cache_data(show_spinner=False, max_entries=32)
def _fairness(path: str, dataset: str, content: str, days: float, fingerprint: str) -> FairnessReport:
    result = shared_whatif(path, dataset, content, days, fingerprint).result
    hours = max(1, math.ceil(horizon_s(result) / 3600.0 / SHARE_POINTS))
    return FairnessReport(fairness_kpis(result), team_table(result), share_over_time(result, hours * 3600.0),
                          starvation_by_team(result), queue_sla_table(result))


def fairness_report(dataset: str, scenario: dict, days: float) -> FairnessReport:
    """The fairness figures of `whatif_run(dataset, scenario, days)`, cached with it."""
    content = scenario_key(scenario)
    return _fairness(str(db_path()), dataset, content, float(days), store().fingerprint())


@st.cache_resource(show_spinner=False, max_entries=16)
def _story_context(path: str, dataset: str, content: str, days: float, fingerprint: str) -> StoryContext:
    # cache_resource: the context is read-only, and holds the order policy and per-job arrays
    run = shared_whatif(path, dataset, content, days, fingerprint).run
    return StoryContext.of(run.scenario, build_workload(run.jobs, run.fleet))  # the jobs and fleet it ran


def story(dataset: str, scenario: dict, days: float, row: int) -> JobStory:
    """The story (engine.analysis.runs.job_story) of the job at `row` of `whatif_run(dataset, scenario,
    days)`'s jobs, on the scenario's order policy and the workload it ran."""
    content = scenario_key(scenario)
    args = (str(db_path()), dataset, content, float(days), store().fingerprint())
    return job_story(shared_whatif(*args).result, int(row), _story_context(*args))
