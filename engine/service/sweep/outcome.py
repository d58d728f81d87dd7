"""What one point of a sweep gives back, and how a worker computes it.

`evaluate` runs one point's scenario over the dataset's tables with engine.service.compare.run_scenarios,
the code path of `meridian compare`, so `kpis` holds the same KPIs in the same order and units
(sim_metrics.kpis and, for a priced fleet, the world KPIs: cost, carbon, residency, egress; a sweep
measures no headroom: each of its points is one run). `classes` holds
one row per workload class of engine.analysis.runs.slo.class_waits (jobs, started, censored wait
mean/p50/p95/p99 in seconds: a job that never started waits until the run's end), over the jobs
submitted from the point's score_from_utc on (all without one). Any exception a
point raises becomes a failed outcome with a one-line error; the other points are not affected.
"""
from __future__ import annotations

import json
import math
import numbers
import os
import socket
import time
from dataclasses import asdict, dataclass, field

import pandas as pd

from engine.analysis.runs.slo import class_waits
from engine.service.compare import run_scenarios

OK, FAILED = "ok", "failed"


@dataclass(frozen=True)
class SweepOutcome:
    """One point's result. status: "ok" or "failed" (error: "<ExceptionType>: <message>", one line);
    kpis: KPI name -> number (None for a non-finite value), empty when failed; classes: class_waits
    rows; elapsed_s: wall-clock seconds the point took in its worker; worker: "<host>:<pid>"."""

    index: int
    name: str
    params: dict
    status: str
    error: str | None = None
    kpis: dict = field(default_factory=dict)
    classes: list = field(default_factory=list)
    elapsed_s: float = 0.0
    worker: str = ""

    def record(self) -> dict:
        """A JSON-ready dict of every field."""
        return asdict(self)


def worker_id() -> str:
    """This process, as "<host>:<pid>"."""
    return f"{socket.gethostname()}:{os.getpid()}"


def error_line(exc: BaseException) -> str:
    """"<ExceptionType>: <first line of its message>" (no traceback)."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


def failed(point, message: str, elapsed_s: float = 0.0, worker: str = "") -> SweepOutcome:
    """A failed outcome of `point` (an engine.service.sweep.grid.Point)."""
    return SweepOutcome(point.index, point.name, dict(point.params), FAILED, message, elapsed_s=elapsed_s,
                        worker=worker)


def evaluate(point, jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict) -> SweepOutcome:
    """Run `point` (an engine.service.sweep.grid.Point) over the dataset's jobs, fleet and world tables
    ({prices, regions, carbon, teams}) and measure it; never raises for a point's error."""
    began = time.perf_counter()
    try:
        (run,), _ = run_scenarios([point.scenario], jobs, fleet, world_tables)
        since = 0.0 if point.score_from_utc is None else \
            (pd.Timestamp(point.score_from_utc) - pd.Timestamp(run.result.origin_utc)).total_seconds()
        classes = json.loads(class_waits(run.result, since_s=since).to_json(orient="records"))
    except Exception as exc:  # noqa: BLE001 - any error of one point is that point's outcome
        return failed(point, error_line(exc), time.perf_counter() - began, worker_id())
    return SweepOutcome(point.index, point.name, dict(point.params), OK, None,
                        {key: _number(value) for key, value in run.kpis.items()}, classes,
                        time.perf_counter() - began, worker_id())


def _number(value) -> float | int | None:
    """A KPI as a plain int or float; None for NaN and infinities (JSON has neither)."""
    if isinstance(value, numbers.Integral):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None
