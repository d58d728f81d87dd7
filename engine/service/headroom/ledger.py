"""Headroom searches kept in the database as they finish, so that a killed run resumes: `stored_run`.

    with stored_run(store, "sample", ["recorded", "follow-the-sun"], searches=8) as ledger:
        report = measure(..., ledger=ledger)

The run is saved 'running' (engine.telemetry.headroom_runs) as soon as it has a search to compute
(a request this process answered from its own cache leaves no row), every finished search is stored
under its key the moment it arrives, and the run ends 'ok', 'failed' (a search or the level could not
be computed) or 'interrupted' (stopped: Ctrl-C, SIGTERM; or killed, which the next process to open
the database records). Any later request with the same inputs finds the searches it kept: only the
others run.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from engine.service.headroom.tasks import SearchOutcome
from engine.telemetry.headroom_runs import finish_run, keep_search, kept_searches, save_run
from engine.telemetry.store import Store


class StoreLedger:
    """engine.service.headroom.measure.Ledger over one store (a cursor of the calling thread)."""

    def __init__(self, store: Store, source: str, scenarios: list[str], searches: int) -> None:
        self.store, self.source, self.scenarios, self.searches = store, source, scenarios, searches
        self.run_id: int | None = None   # saved once a search has to be computed
        self.reused = 0                  # searches found kept (this run did not compute them)

    def found(self, keys: list[str]) -> dict[str, SearchOutcome]:
        kept = {key: SearchOutcome.from_record(record) for key, record in kept_searches(self.store, keys).items()}
        self.reused += len(kept)
        if len(kept) < len(keys) and self.run_id is None:
            self.run_id = save_run(self.store, self.source, self.scenarios, self.searches)
        return kept

    def keep(self, key: str, outcome: SearchOutcome) -> None:
        keep_search(self.store, self.run_id, key, outcome.record())


@contextmanager
def stored_run(store: Store, source: str, scenarios: list[str], searches: int) -> Iterator[StoreLedger]:
    """A ledger for one headroom run, its status recorded when the block ends (see the module docstring)."""
    began = time.perf_counter()
    ledger = StoreLedger(store, source, scenarios, searches)
    status = "interrupted"
    try:
        yield ledger
        status = "ok"
    except Exception:
        status = "failed"
        raise
    finally:
        if ledger.run_id is not None:
            finish_run(store, ledger.run_id, time.perf_counter() - began, status)
