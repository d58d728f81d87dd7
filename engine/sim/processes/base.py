"""What a world process is to the simulator's loop: its event kinds and its hooks.

The loop (engine.sim.simulator) knows arrivals, finishes and the scheduling pass. Everything else
that happens in a run's world (timers, load-shifting holds, spot interruptions, outages, reclaims by
the clock, cloud bursts, users giving up, fragmentation samples) is a `WorldProcess`: a class that
declares the event kinds it handles and overrides the hooks it needs, listed in the registration
table (engine.sim.processes.table). The loop calls only the hooks a process overrides, so a process a
run does not use (its `attach` returned None) costs nothing.

Event kinds are integers, and their order is the tie order of events at equal times
(engine.sim.state.events): a process picks numbers that no other registered process uses (the table
checks), and where among the others its events fall at equal times.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd


class WorldProcess:
    """A process of the run's world beside the loop's own arrivals, finishes and passes.

    kinds: the event kinds `on_event` handles. background: those of them that do not by themselves
    keep a run going (a spot node's next interruption: engine.sim.state.events.EventQueue.background).
    job_columns: {column: dtype} the process adds to the per-job table, in this order (zeros when a
    run did not attach it). attached_columns: {column: dtype} it adds only to the per-job table of a run
    that attached it (a run without it keeps its table as it was); optional_columns: likewise, only when the
    run's `columns` gives them (a setting of the process asks for them). result_fields: the SimulationResult
    fields `result` fills (None when a run did not attach it). cause: what in a scenario drives its
    events, named when a run overruns its work budget (engine.sim.budget)."""

    kinds: tuple[int, ...] = ()
    cause: str = ""
    background: tuple[int, ...] = ()
    job_columns: dict[str, type] = {}
    attached_columns: dict[str, type] = {}
    optional_columns: dict[str, type] = {}
    result_fields: tuple[str, ...] = ()

    @classmethod
    def fleet_rows(cls, fleet: pd.DataFrame, world) -> pd.DataFrame | None:
        """Nodes the process adds to the normalised fleet before the run's regions are built (None: none)."""
        return None

    @classmethod
    def attach(cls, run) -> WorldProcess | None:
        """The process for this run (engine.sim.simulator._Run, its state built), or None when the run
        does not need it. Events the process starts with are pushed here."""
        raise NotImplementedError

    def on_event(self, kind: int, payload: int, now: float) -> Iterable[str]:
        """Handle an event of one of `kinds`; returns the regions that need a scheduling pass."""
        return ()

    def on_arrival(self, j: int, now: float) -> bool:
        """Job j arrives now: True when the process takes it (it arrives later, as a deferred arrival)."""
        return False

    def on_finish(self, j: int, now: float) -> None:
        """Job j ended now (completed or failed; not an eviction), its pods released."""

    def on_start(self, j: int, now: float, running_s: float) -> None:
        """Job j started now and will run `running_s` seconds unless stopped."""

    def on_release(self, j: int, now: float) -> None:
        """Job j stops holding its pods now (finished, failed or evicted), after the fleet took them back."""

    def before_batch(self, now: float) -> None:
        """Before the events at time `now` are handled (the state is still that of the last batch)."""

    def after_pass(self, region: str, now: float) -> None:
        """After the scheduling passes of `region` at `now`."""

    def after_batch(self, now: float) -> None:
        """After every pass of the batch at `now`."""

    def holds(self, region: str) -> bool:
        """True while `region` may not schedule (the loop skips its passes)."""
        return False

    def finish(self, last: float) -> None:
        """After the last event (at time `last`)."""

    def columns(self) -> dict[str, np.ndarray]:
        """The per-job columns named in `job_columns`, `attached_columns` and (those given) `optional_columns`."""
        return {}

    def result(self) -> dict[str, object]:
        """The SimulationResult fields named in `result_fields`."""
        return {}
