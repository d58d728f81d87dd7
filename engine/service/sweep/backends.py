"""Where a sweep's points (or a headroom search's tasks) run: a local process pool, or a Dask cluster.

Both yield each point's outcome as soon as it completes (completion order, not index order) and
ship the dataset's tables to each worker once, not with every point. What runs is `task(point, jobs,
fleet, world_tables)`, a module-level function (so a worker can import it by name; default: a
sweep point's `evaluate`), and a point that fails becomes `fail(point, message)` (default: a failed
`SweepOutcome`); a point needs an `index`:

- `local_outcomes`: a `ProcessPoolExecutor` of `workers` processes (forkserver start method, with
  this module preloaded in the server so that each worker forks with the engine imported); the
  tables travel once per worker through the pool's initializer. A worker process that dies (killed,
  out of memory, a crash in native code) breaks the pool and loses every unfinished point; those
  points then run again, each in a pool of its own (`workers` at a time), so that only a point that
  kills its worker again is reported failed. Each worker ends itself when the process that started
  the pool is gone (engine.service.sweep.lifeline), so a killed sweep leaves no worker computing
  points nobody will read. The workers never run the parent's `__main__` (under
  Streamlit that is the page script, in a test a temporary file): every task is a function of an
  engine module, so the pool starts while `__main__` is a bare module.
- `dask_outcomes`: `address` "local" starts a `distributed.LocalCluster` of `workers` single-threaded
  worker processes for the sweep; "tcp://host:port" connects to a running scheduler whose workers
  must have Meridian installed (the task functions are imported there by name). The tables are
  scattered to every worker once (`broadcast=True`). A task that Dask gives up on (its worker died
  too often: KilledWorker) is reported failed.

Dask is an optional extra (`pip install 'meridian[dask]'`), imported only when asked for.
"""
from __future__ import annotations

import logging
import multiprocessing
import sys
import types
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass

import pandas as pd

from engine.service.sweep import lifeline
from engine.service.sweep.outcome import error_line, evaluate, failed

DIED = "WorkerDied: the worker process running this point died (killed, out of memory, or crashed)"
DASK_MISSING = "Dask is not installed: pip install 'meridian[dask]' (or run without --dask)"
CONNECT_TIMEOUT_S = 10


class SweepUnavailable(RuntimeError):
    """The backend cannot run at all: Dask missing, or its scheduler unreachable."""


@dataclass(frozen=True)
class Tables:
    """The dataset's tables every point runs on: jobs, fleet, and {prices, regions, carbon, teams}."""

    jobs: pd.DataFrame
    fleet: pd.DataFrame
    world_tables: dict


_WORKER: Tables | None = None  # this pool worker's tables


def _init_worker(tables: Tables, main: lifeline.Parent) -> None:
    global _WORKER
    _WORKER = tables
    lifeline.watch(main)


def _run_local(task, point):
    """A pool worker's work: one point over the tables its initializer received."""
    return task(point, _WORKER.jobs, _WORKER.fleet, _WORKER.world_tables)


def _run_dask(task, point, tables: Tables):
    """A Dask worker's work: one point over the scattered tables."""
    return task(point, tables.jobs, tables.fleet, tables.world_tables)


def _pool(workers: int, tables: Tables) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                               initargs=(tables, lifeline.parent()))


@contextmanager
def _bare_main() -> Iterator[None]:
    """While the pool spawns its processes, `__main__` is an empty module: a forkserver child would
    otherwise import the parent's main script again (Streamlit puts the page there)."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _pool_round(points: Sequence, tables: Tables, workers: int, lost: list, task, fail) -> Iterator:
    """Outcomes of `points` on one pool as they complete; points lost to a broken pool go to `lost`."""
    pool = _pool(min(workers, len(points)), tables)
    try:
        with _bare_main():  # the processes (and the forkserver) start at submit
            futures = {pool.submit(_run_local, task, point): point for point in points}
        for future in as_completed(futures):
            try:
                yield future.result()
            except BrokenProcessPool:
                lost.append(futures[future])
            except Exception as exc:  # noqa: BLE001 - e.g. an outcome that cannot travel back
                yield fail(futures[future], error_line(exc))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _alone(point, tables: Tables, task, fail):
    """`point` in a pool of its own; failed if it kills that pool's worker too."""
    lost: list = []
    outcomes = list(_pool_round([point], tables, 1, lost, task, fail))
    return outcomes[0] if outcomes else fail(point, DIED)


def local_outcomes(points: Sequence, tables: Tables, workers: int, task=evaluate, fail=failed) -> Iterator:
    """Every point's outcome on a local process pool of `workers` processes, as each completes."""
    lost: list = []
    yield from _pool_round(points, tables, workers, lost, task, fail)
    if not lost:
        return
    with ThreadPoolExecutor(min(workers, len(lost))) as threads:
        futures = [threads.submit(_alone, point, tables, task, fail) for point in sorted(lost, key=lambda p: p.index)]
        for future in as_completed(futures):
            yield future.result()


def _distributed():
    try:
        import distributed
    except ImportError:
        raise SweepUnavailable(DASK_MISSING) from None
    return distributed


def dask_outcomes(points: Sequence, tables: Tables, workers: int, address: str, task=evaluate,
                  fail=failed) -> Iterator:
    """Every point's outcome on a Dask cluster ("local": a LocalCluster of `workers` processes, else a
    scheduler address), as each completes."""
    distributed = _distributed()
    cluster = None
    try:
        if address == "local":
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                               dashboard_address=None, silence_logs=logging.ERROR)
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        raise SweepUnavailable(f"cannot reach the Dask scheduler at {address}: {error_line(exc)}") from None
    try:
        shared = client.scatter(tables, broadcast=True)
        run = uuid.uuid4().hex
        futures = {client.submit(_run_dask, task, point, shared, key=f"meridian-sweep-{run}-{point.index}",
                                 pure=False): point for point in points}
        for future in distributed.as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker, a lost connection: that point failed
                yield fail(futures[future], error_line(exc))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
