"""The server's one pool of heavy runs (engine.service.shared_runs.SharedRuns), shared by every session:
What-if simulations and headroom searches are computed once per (database, dataset, scenario content,
options, store fingerprint), at most MERIDIAN_HEAVY_RUNS (environment, default 2) at a time, and a
session waiting for one is told its place in the queue. Each computation is logged on the server's
stderr (`meridian.shared`), which benchmarks/load_test.py counts.
"""
from __future__ import annotations

import logging
import os
import sys

import streamlit as st

from engine.service.shared_runs import SharedRuns, log

SLOTS_VARIABLE = "MERIDIAN_HEAVY_RUNS"
KEPT = 32  # results kept (a What-if run of the whole sample holds every job's outcome)


class _Stderr(logging.StreamHandler):
    """Lines to whatever sys.stderr is when they are written (a test runner swaps and closes its own)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _) -> None:
        pass


@st.cache_resource(show_spinner=False)
def runs() -> SharedRuns:
    """The process's SharedRuns (created on first use; its log lines go to stderr)."""
    if not log.handlers:
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    return SharedRuns(slots=max(1, int(os.environ.get(SLOTS_VARIABLE, "2"))), size=KEPT)
