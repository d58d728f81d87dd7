"""The garbage collector is paused during a simulation and restored as it was afterwards."""
from __future__ import annotations

import gc

import pytest
from sim_helpers import fleet, job, run

from engine.sim.output import collector


def test_a_run_pauses_the_collector_and_turns_it_back_on(monkeypatch):
    seen = []
    real = collector.gc.disable
    monkeypatch.setattr(collector.gc, "disable", lambda: (real(), seen.append(gc.isenabled())))
    assert gc.isenabled()
    run([job(0, 0, 100, 1), job(1, 5, 50, 1)], fleet(1))
    assert seen == [False] and gc.isenabled()


def test_a_collector_that_was_off_stays_off_and_an_error_still_restores_it():
    gc.disable()
    try:
        with collector.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), collector.collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()

