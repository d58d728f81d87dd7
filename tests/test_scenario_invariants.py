"""Invariants of every bundled scenario's result on the sample's first three days (with the
sample's regions, prices and carbon tables), whatever features the scenario uses (routing, spot,
bursts, outages, quotas, preemption, reclaim, holds, data transfer):

- a job's pieces of running (segments) start at or after its submit, in order, without overlap;
  only the last may still be running at the end, and only for a job with no end;
- a job started iff it has a piece, and logged one start ("started" or "backfilled") per piece;
- a job that ended has its last piece ending then, completed or failed as the job; a job that
  started and has no end is running at the end or was evicted and waits (its last piece preempted);
- a region's busy GPUs never exceed its installed GPUs plus the burst nodes it could rent;
- every decision lies between its job's submit and the end of the run.
"""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "sample_data" / "scenarios").glob("*.toml"))
STARTS = ("started", "backfilled")


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_bundled_scenario_results_are_consistent(sample_tables, path):
    jobs, fleet, world = sample_tables
    loaded = Scenario.load(path)  # three days from its own window start (a forecast needs the weeks before it)
    start = loaded.start_utc if loaded.start_utc is not None else pd.Timestamp(jobs["submit_utc"].min())
    scenario = replace(loaded, start_utc=start, end_utc=start + pd.Timedelta(days=3))
    result = run_scenario(scenario, jobs, fleet, world)
    table, pieces, log = result.jobs, result.segments, result.decisions

    rows = pieces["row"].to_numpy(np.int64)
    submit = table["submit_s"].to_numpy()[rows]
    assert (pieces["start_s"].to_numpy() >= submit).all()
    by_job = pieces.assign(next_start=pieces.groupby("row")["start_s"].shift(-1))
    ends = by_job["end_s"].to_numpy()
    later = by_job["next_start"].notna().to_numpy()
    assert (ends[later] <= by_job["next_start"].to_numpy()[later]).all()  # in order, no overlap
    assert not np.isnan(ends[later]).any()  # only a last piece may still run

    count = np.bincount(rows, minlength=len(table))
    started = table["started"].to_numpy(bool)
    assert ((count > 0) == started).all()
    logged = log[log["decision"].isin(STARTS)]
    assert (np.bincount(logged["row"].to_numpy(np.int64), minlength=len(table)) == count).all()

    last = pieces.groupby("row").tail(1).set_index("row")
    end = table["end_s"].to_numpy()
    done = np.flatnonzero(np.isfinite(end))
    assert (last.loc[done, "end_s"].to_numpy() == end[done]).all()
    outcome = np.where(table["failed"].to_numpy(bool)[done], "failed", "completed")
    assert (last.loc[done, "outcome"].to_numpy() == outcome).all()
    open_ = np.flatnonzero(started & np.isnan(end))
    running = last.loc[open_, "outcome"].to_numpy()
    assert np.isin(running, ["running", "preempted", "out-of-memory"]).all()
    assert (np.isnan(last.loc[open_, "end_s"].to_numpy()) == (running == "running")).all()

    bursts = {b.region: b.max_nodes * b.gpus_per_node for b in scenario.bursts}
    for region, capacity in result.capacity_gpus.items():
        busy = result.timeline.loc[result.timeline["region"] == region, "busy_gpus"]
        assert busy.max() <= capacity + bursts.get(region, 0) + 1e-9, region

    times = log["time_s"].to_numpy()
    assert (times >= table["submit_s"].to_numpy()[log["row"].to_numpy(np.int64)]).all()
    assert times.max() <= max(np.nanmax(end), np.nanmax(pieces["start_s"].to_numpy())) + 1e-9
