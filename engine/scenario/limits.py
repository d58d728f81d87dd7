"""The scenario contract's limits: how big and how deep a scenario may be, and the ranges of the values
that are not policy parameters (those have theirs in engine.core.bounds).

A scenario comes from a file, the dashboard's builder or an upload; any of them may be careless or
hostile. Each limit below keeps a value that parses from reaching the simulator where it would hang
it, fill the memory or fail deep inside with an "internal error"; a value outside is refused with a
ScenarioError naming the key, the limit and the unit. The simulator's own work budget
(engine.sim.budget) is the last line behind them.

| what                                   | limit                                   |
|----------------------------------------|-----------------------------------------|
| a scenario file                        | 1 MiB                                   |
| nesting of tables and arrays           | 8 levels                                |
| values in a scenario                   | 100,000                                 |
| timer_s                                | 0 (none), or 1 s to 10 years            |
| [workload] load_scale                  | 0.001 to 1,000 (x the arrival rate)      |
| [workload] growth                      | 0.001 to 100 (x the jobs)                |
| [workload] start_utc, end_utc          | 1970-01-01 to 2100-01-01, start < end    |
| jobs of a run after growth             | 4,000,000                               |
| [spot] rates                           | at most 60 interruptions per node-hour   |
| [[team]] weight                        | above 0, at most 1e9                     |
| [[fleet]] add_gpus, remove_gpus        | at most 1,000,000                        |
| [[burst]] max_nodes, gpus_per_node     | at most 10,000 nodes of at most 64 GPUs  |
"""
from __future__ import annotations

import pandas as pd

from engine.core.errors import ScenarioError

MAX_FILE_BYTES = 1 << 20
MAX_DEPTH = 8
MAX_VALUES = 100_000
TIMER_S = (1.0, 10 * 365 * 86400.0)
LOAD_SCALE = (1e-3, 1e3)
GROWTH = (1e-3, 100.0)
EARLIEST, LATEST = pd.Timestamp("1970-01-01"), pd.Timestamp("2100-01-01")
MAX_JOBS = 4_000_000
SPOT_RATE_MAX = 60.0
TEAM_WEIGHT_MAX = 1e9
MAX_FLEET_GPUS = 1_000_000
BURST_MAX_NODES = 10_000
GPUS_PER_NODE_MAX = 64


def check_file_bytes(size: int, source: str) -> None:
    """A scenario file (on disk or uploaded) of `size` bytes is at most MAX_FILE_BYTES."""
    if size > MAX_FILE_BYTES:
        raise ScenarioError(f"{source}: a scenario file is at most {MAX_FILE_BYTES:,} bytes; this one has {size:,}")


def check_structure(data: object, source: str) -> None:
    """Refuse a scenario nested deeper than MAX_DEPTH or holding more than MAX_VALUES values, before any
    section reads it (walked without recursion, so no depth can overflow the stack)."""
    stack, values = [(data, 0)], 0
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                raise ScenarioError(f"{source}: tables and arrays nested deeper than {MAX_DEPTH} levels")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
        values += 1
        if values > MAX_VALUES:
            raise ScenarioError(f"{source}: more than {MAX_VALUES:,} values in one scenario")


def check_jobs(jobs: int, growth: float, name: str) -> None:
    """Refuse a run whose workload would exceed MAX_JOBS after growth (before any job is made)."""
    if jobs * growth > MAX_JOBS:
        raise ScenarioError(f"{name}: [workload] growth {growth:g} would make about {jobs * growth:,.0f} jobs from "
                            f"{jobs:,}; a run holds at most {MAX_JOBS:,}: lower growth or choose a shorter window")
