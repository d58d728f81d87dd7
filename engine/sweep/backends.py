"""Where a sweep's points run: a local process pool, or a Dask distributed cluster.

Both yield each point's `SweepOutcome` as soon as it completes (completion order, not index order)
and ship the dataset's tables to each worker once, not with every point:

- `local_outcomes`: a `ProcessPoolExecutor` of `workers` processes (forkserver start method, with
  this module preloaded in the server so that each worker forks with the engine imported); the
  tables travel once per worker through the pool's initializer. A worker process that dies (killed,
  out of memory, a crash in native code) breaks the pool and loses every unfinished point; those
  points then run again, each in a pool of its own (`workers` at a time), so that only a point that
  kills its worker again is reported failed.
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
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import pandas as pd

from engine.sweep.outcome import SweepOutcome, error_line, evaluate, failed

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


def _init_worker(tables: Tables) -> None:
    global _WORKER
    _WORKER = tables


def _run_local(point) -> SweepOutcome:
    """A pool worker's task: one point over the tables its initializer received."""
    return evaluate(point, _WORKER.jobs, _WORKER.fleet, _WORKER.world_tables)


def _run_dask(point, tables: Tables) -> SweepOutcome:
    """A Dask worker's task: one point over the scattered tables."""
    return evaluate(point, tables.jobs, tables.fleet, tables.world_tables)


def _pool(workers: int, tables: Tables) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(tables,))


def _pool_round(points: Sequence, tables: Tables, workers: int, lost: list) -> Iterator[SweepOutcome]:
    """Outcomes of `points` on one pool as they complete; points lost to a broken pool go to `lost`."""
    pool = _pool(min(workers, len(points)), tables)
    try:
        futures = {pool.submit(_run_local, point): point for point in points}
        for future in as_completed(futures):
            try:
                yield future.result()
            except BrokenProcessPool:
                lost.append(futures[future])
            except Exception as exc:  # noqa: BLE001 - e.g. an outcome that cannot travel back
                yield failed(futures[future], error_line(exc))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _alone(point, tables: Tables) -> SweepOutcome:
    """`point` in a pool of its own; failed if it kills that pool's worker too."""
    lost: list = []
    outcomes = list(_pool_round([point], tables, 1, lost))
    return outcomes[0] if outcomes else failed(point, DIED)


def local_outcomes(points: Sequence, tables: Tables, workers: int) -> Iterator[SweepOutcome]:
    """Every point's outcome on a local process pool of `workers` processes, as each completes."""
    lost: list = []
    yield from _pool_round(points, tables, workers, lost)
    if not lost:
        return
    with ThreadPoolExecutor(min(workers, len(lost))) as threads:
        futures = [threads.submit(_alone, point, tables) for point in sorted(lost, key=lambda p: p.index)]
        for future in as_completed(futures):
            yield future.result()


def _distributed():
    try:
        import distributed
    except ImportError:
        raise SweepUnavailable(DASK_MISSING) from None
    return distributed


def dask_outcomes(points: Sequence, tables: Tables, workers: int, address: str) -> Iterator[SweepOutcome]:
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
        futures = {client.submit(_run_dask, point, shared, key=f"meridian-sweep-{run}-{point.index}",
                                 pure=False): point for point in points}
        for future in distributed.as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker, a lost connection: that point failed
                yield failed(futures[future], error_line(exc))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
