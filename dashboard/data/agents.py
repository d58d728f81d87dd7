"""The scheduling agents' side of the dashboard's caches (engine.service.rl): the packaged agents and
those in the model registry beside the database, their training records, live evaluations on a trace
or the sidebar's dataset, and the Fidelity page's RL record. dashboard.data holds the connection."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.data import _connection, db_path, store
from dashboard.data.fidelity import shared_path
from engine.service.rl import fidelity as rl_fidelity


def _registry(path: str | Path):
    from engine.predict.rl.agent_registry import AgentRegistry

    return AgentRegistry.beside(path)


def agents() -> list[tuple[str, int | None]]:
    """(name, version) of every agent: the packaged ones (version None), then each trained version."""
    from engine.policies.rl_agent import packaged_names

    registry = _registry(db_path())
    return [(n, None) for n in packaged_names()] + [(n, v.number) for n in registry.agents()
                                                    for v in registry.versions(n)]


def meta(name: str, version: int | None) -> dict:
    """The agent's training record: the registry's meta.json, or the packaged agent's (read fresh: small)."""
    from engine.policies.rl_agent import packaged_meta

    return packaged_meta(name) if version is None else _registry(db_path()).version(name, version).meta


def logs() -> dict[str, Path]:
    """The public logs a live evaluation may use (label -> file under the shared folder, present or not)."""
    return {label: shared_path() / relative for label, relative in rl_fidelity.LOGS.items()}


@st.cache_data(show_spinner=False, max_entries=16)
def _evaluate(path: str, name: str, version: int | None, source: str, mtime_or_fingerprint: str, backfill: str,
              dataset: bool) -> dict:
    from engine.policies.rl_agent import packaged
    from engine.service.experiments.swf_jobs import load_swf_jobs
    from engine.service.rl.evaluate import evaluate
    from engine.service.rl.logs import dataset_jobs

    agent = packaged(name) if version is None else _registry(path).load(name, version)
    if dataset:
        s = _connection(path)[0].cursor()
        log = dataset_jobs(s.jobs(source), s.fleet(source), source)[0]
    else:
        log = load_swf_jobs(source)
    return evaluate(log, agent, backfill)


def evaluate_on_trace(name: str, version: int | None, trace: Path, backfill: str) -> dict:
    """engine.service.rl.evaluate.evaluate of the agent on a trace's ten test sequences, cached per
    agent, trace content and mode."""
    return _evaluate(str(db_path()), name, version, str(trace), str(trace.stat().st_mtime_ns), backfill, False)


def evaluate_on_dataset(name: str, version: int | None, dataset: str, backfill: str) -> dict:
    """The same on the dataset's jobs (engine.service.rl.logs.dataset_jobs), cached per store content."""
    return _evaluate(str(db_path()), name, version, dataset, store().fingerprint(), backfill, True)


@st.cache_data(show_spinner=False, max_entries=4)
def _record(path: str, mtime_ns: int) -> rl_fidelity.RLRecord:
    return rl_fidelity.load_record(path)


def record(path: Path = rl_fidelity.RECORD) -> rl_fidelity.RLRecord:
    """The committed RL fidelity record, re-read when the file changes."""
    return _record(str(path), path.stat().st_mtime_ns)
