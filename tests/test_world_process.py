"""A world process registered from outside the engine runs in the loop without editing it
(engine.sim.processes.table): a toy maintenance window that drains one region for an hour."""
from __future__ import annotations

import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.processes import table
from engine.sim.processes.base import WorldProcess
from engine.sim.processes.timer import TIMER

DRAIN_START, DRAIN_END = 50, 51  # event kinds no engine process uses
HOUR = 3600.0


class Maintenance(WorldProcess):
    """Region "a" takes no new work over [1 h, 2 h); a job queued meanwhile starts when it ends."""

    kinds = (DRAIN_START, DRAIN_END)
    job_columns = {"toy_seen": bool}
    calls: list = []

    def __init__(self, run) -> None:
        self.draining = False
        self.seen = [False] * len(run.w)
        run.events.push(HOUR, DRAIN_START, 0)
        run.events.push(2 * HOUR, DRAIN_END, 0)

    @classmethod
    def attach(cls, run):
        return cls(run)

    def on_event(self, kind, payload, now):
        self.calls.append((kind, now))
        self.draining = kind == DRAIN_START
        return ["a"]

    def holds(self, region):
        return self.draining and region == "a"

    def on_arrival(self, j, now):
        self.seen[j] = True
        return False

    def columns(self):
        return {"toy_seen": pd.array(self.seen, dtype=bool)}


@pytest.fixture
def registered():
    table.register(Maintenance)
    Maintenance.calls = []
    yield Maintenance
    table.unregister(Maintenance)


def toy_run():
    jobs = pd.DataFrame([job(0, 0, 600, 8, region="a"), job(1, 1.5 * HOUR, 600, 8, region="a"),
                         job(2, 1.5 * HOUR, 600, 8, region="b")])
    nodes = pd.concat([fleet(8, region="a"), fleet(8, region="b")], ignore_index=True)
    nodes["node"] = ["a0", "b0"]
    return run_scenario(Scenario.from_dict({"name": "toy"}), jobs, nodes)


def test_a_registered_process_gets_its_events_hooks_and_result_column(registered):
    result = toy_run()
    starts = dict(zip(result.jobs["job_id"], result.jobs["start_s"]))
    assert registered.calls == [(DRAIN_START, HOUR), (DRAIN_END, 2 * HOUR)]
    assert starts["j0"] == 0.0  # before the window
    assert starts["j1"] == 2 * HOUR  # queued while "a" was held: starts when the window ends
    assert starts["j2"] == 1.5 * HOUR  # "b" is not held
    assert result.jobs["toy_seen"].tolist() == [True, True, True]


def test_without_it_the_run_is_the_plain_one(registered):
    table.unregister(Maintenance)
    try:
        plain = toy_run()
    finally:
        table.register(Maintenance)
    assert "toy_seen" not in plain.jobs
    assert plain.jobs["start_s"].tolist() == [0.0, 1.5 * HOUR, 1.5 * HOUR]


def test_a_kind_already_taken_is_refused():
    class Clash(WorldProcess):
        kinds = (TIMER,)

    with pytest.raises(ValueError, match="event kind 2 is Timer's"):
        table.register(Clash)
