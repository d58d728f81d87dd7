"""The dashboard's headroom figures, recorded baseline and claims: how much more work a scenario serves, and
on how few GPUs, at the baseline's service level (engine.service.headroom), the scenario that reproduces how a
dataset was scheduled (engine.scenario.recorded), and the industry's claims tested on the dataset
(engine.service.experiments.claims). dashboard.data holds the connection and other caches.

A headroom report is computed once for every session asking the same (dashboard.data.shared), and
engine.service.headroom.measure also keeps every finished search in this process (keyed by the tables'
content, scenario, seed, level), so a new report sharing searches with an earlier one costs one baseline
run for them, and a progress callback can report each search of a first computation as it finishes. Each search is also
stored in the database as it finishes (engine.service.headroom.ledger): after a restart, or a server killed
midway, the same request finds them there.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.data import db_path, shared, store
from engine.scenario.recorded import recorded_of, recorded_spec, reproduction
from engine.scenario.spec import Scenario
from engine.service.compare import WORLD_TABLES, first_days
from engine.service.experiments.claims import measure_claims
from engine.service.headroom.ledger import stored_run
from engine.service.headroom.measure import HeadroomReport, measure
from engine.service.run import run_scenario
from engine.world.facts import World

RECORDED = "recorded"


def recorded(dataset: str) -> tuple[dict, str]:
    """(the dataset's recorded baseline as a scenario dict, what it stands for in words)."""
    scheduler = store().recorded_scheduler(dataset)
    return recorded_spec(scheduler), recorded_of(scheduler).description


def _scenario(spec: dict, jobs: pd.DataFrame, days: float) -> Scenario:
    """The scenario of `spec` over the first `days` days (0: all), as the What-if page runs it."""
    return first_days([data.scenario_of(spec)], jobs, days)[0]


def headroom(dataset: str, specs: list[tuple[str, dict]], days: float, seeds: int = 3,
             progress=None, waiting=None) -> HeadroomReport:
    """The load headroom and GPUs needed of every (label, scenario dict) in `specs`, the first the
    baseline, over the first `days` days (0: all): computed once for every session asking the same, through
    the server's pool of heavy runs (dashboard.data.shared); `progress(done, total, outcome)` per search
    of the session computing it, `waiting(place)` while a session waits for a slot or for another's run.
    Raises ScenarioError or engine.service.headroom.measure.HeadroomError."""
    s = store()
    key = ("headroom", str(db_path()), dataset, tuple((label, data.scenario_key(spec)) for label, spec in specs),
           float(days), int(seeds), s.fingerprint())
    return shared.runs().run(key, lambda: _measure(s, dataset, specs, days, seeds, progress), waiting)


def _measure(s, dataset: str, specs: list[tuple[str, dict]], days: float, seeds: int, progress) -> HeadroomReport:
    jobs, fleet = s.jobs(dataset), s.fleet(dataset)
    world = {name: s.table(name, dataset) for name in WORLD_TABLES}
    scenarios = [replace(_scenario(spec, jobs, days), name=label) for label, spec in specs]
    with stored_run(s, dataset, [label for label, _ in specs], len(specs) * (seeds + 1)) as ledger:
        return measure(scenarios[0], scenarios[1:], jobs, fleet, world, seeds=seeds, workers=2, progress=progress,
                       ledger=ledger)


@st.cache_data(show_spinner=False, max_entries=8)
def _reproduction(path: str, dataset: str, fingerprint: str) -> tuple[pd.DataFrame, str, int]:
    s = store()  # the store on `path` (the cache key)
    jobs = s.jobs(dataset)
    spec, description = recorded_spec(s.recorded_scheduler(dataset)), recorded_of(s.recorded_scheduler(dataset))
    result = run_scenario(Scenario.from_dict(spec), jobs, s.fleet(dataset), World.of_dataset(s, dataset))
    return reproduction(jobs, result.jobs), description.description, len(result.jobs)


def recorded_reproduction(dataset: str) -> tuple[pd.DataFrame, str, int]:
    """(engine.scenario.recorded.reproduction of the whole dataset under its recorded baseline, what the
    baseline stands for, the jobs replayed), once per content of the database."""
    return _reproduction(str(db_path()), dataset, store().fingerprint())


def claims(dataset: str, days: float, seeds: int, progress=None, waiting=None) -> pd.DataFrame:
    """engine.service.experiments.claims.measure_claims on the dataset's first `days` days (0: all), with the
    bundled scenarios and the dataset's recorded baseline, computed once for every session asking the same
    through the server's pool of heavy runs (dashboard.data.shared; the table is shared, read only);
    `progress(message)` per step of the session computing it, `waiting(place)` while a session waits."""
    s = store()
    key = ("claims", str(db_path()), dataset, s.fingerprint(), float(days), int(seeds))
    return shared.runs().run(key, lambda: _claims(s, dataset, days, seeds, progress), waiting)


def _claims(s, dataset: str, days: float, seeds: int, progress) -> pd.DataFrame:
    jobs, fleet = s.jobs(dataset), s.fleet(dataset)
    world = {name: s.table(name, dataset) for name in WORLD_TABLES}
    bundled = {name: Scenario.from_dict(spec, source=name) for name, spec in data.bundled_scenarios().items()}
    baseline = Scenario.from_dict(recorded_spec(s.recorded_scheduler(dataset)))
    return measure_claims(jobs, fleet, world, bundled, baseline, days or None, seeds=seeds, workers=2,
                          progress=progress)
