"""The Fidelity page's data: the committed record of the full reproductions and live re-runs of
one published sequence or seed (engine.service.experiments.fidelity), cached per input file content and
computed through the server's pool of heavy runs (dashboard.data.shared: once for every session asking
the same, at most MERIDIAN_HEAVY_RUNS at a time). dashboard.data holds the connection and the other caches."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from dashboard.data import path_argument, shared
from engine.service.experiments import fidelity
from engine.service.experiments.public_data import DEFAULT_SHARED, ENVIRONMENT


def shared_path() -> Path:
    """The folder holding `traces/` and `expected/`: `--shared DIR` among the script's arguments, else
    the MERIDIAN_SHARED environment variable, else `<repo>/../shared`."""
    return path_argument("--shared", Path(os.environ.get(ENVIRONMENT) or DEFAULT_SHARED).expanduser())


def fidelity_inputs() -> fidelity.Inputs:
    """Where the Fidelity page's live re-runs find their traces (never cached: files may appear)."""
    return fidelity.Inputs.under(shared_path())


@st.cache_data(show_spinner=False, max_entries=4)
def _fidelity_record(path: str, mtime_ns: int) -> fidelity.Record:
    return fidelity.load_record(path)


def fidelity_record(path: Path = fidelity.RECORD) -> fidelity.Record:
    """The committed record of the full reproductions, re-read when the file changes."""
    return _fidelity_record(str(path), path.stat().st_mtime_ns)


@st.cache_data(show_spinner=False, max_entries=32)
def _rlscheduler_rerun(trace: str, mtime_ns: int, policy: str, backfill: str) -> dict:
    return shared.runs().run(("rlscheduler", trace, mtime_ns, policy, backfill),
                             lambda: fidelity.run_rlscheduler(trace, [(policy, backfill)])[(policy, backfill)])


def rlscheduler_rerun(trace: Path, policy: str, backfill: str) -> dict[tuple[str, str], dict]:
    """{(policy, backfill): the ten published sequences re-run now}, cached per trace content and run."""
    return {(policy, backfill): _rlscheduler_rerun(str(trace), trace.stat().st_mtime_ns, policy, backfill)}


@st.cache_data(show_spinner=False, max_entries=32)
def _fgd_rerun(nodes: str, pods: str, mtimes: tuple[int, int], policy: str, seed: int) -> dict:
    return shared.runs().run(("fgd", nodes, pods, mtimes, policy, seed),
                             lambda: fidelity.run_fgd(nodes, pods, [policy], seeds=(seed,))[policy])


def fgd_rerun(nodes: Path, pods: Path, policy: str, seed: int) -> dict[str, dict]:
    """{policy: one seed of the FGD experiment re-run now}, cached per input content, policy and seed."""
    mtimes = (nodes.stat().st_mtime_ns, pods.stat().st_mtime_ns)
    return {policy: _fgd_rerun(str(nodes), str(pods), mtimes, policy, int(seed))}


@st.cache_data(show_spinner=False, max_entries=8)
def _evolve_rerun(trace: str, mtime_ns: int, backfill: str, trials: int) -> dict:
    from engine.service.experiments.rlscheduler_evolve import document, evolve
    from engine.service.experiments.swf_jobs import load_swf_jobs

    def compute() -> dict:
        jobs = load_swf_jobs(trace)
        return document(evolve(jobs, backfill, trials=trials), jobs.source, backfill)
    return shared.runs().run(("evolve", trace, mtime_ns, backfill, trials), compute)


def evolve_rerun(trace: Path, backfill: str, trials: int) -> dict:
    """The evolved order's search re-run now on `trace` (`meridian experiment evolve --json`'s document),
    cached per trace content, backfill mode and trial count."""
    return _evolve_rerun(str(trace), trace.stat().st_mtime_ns, backfill, int(trials))


@st.cache_data(show_spinner=False, max_entries=32)
def _backfill_rerun(trace: str, mtime_ns: int, scheduler: str, mode: str) -> dict:
    from engine.service.experiments.backfill import run_one
    from engine.service.experiments.backfill_trace import load_pyss_trace

    return shared.runs().run(("backfill", trace, mtime_ns, scheduler, mode),
                             lambda: run_one(load_pyss_trace(trace), scheduler, mode))


def backfill_rerun(trace: Path, scheduler: str, mode: str) -> dict:
    """One scheduler of the SC'15 backfilling experiment re-run now on `trace` (backfill.run_one's row),
    cached per trace content, scheduler and mode."""
    return _backfill_rerun(str(trace), trace.stat().st_mtime_ns, scheduler, mode)
