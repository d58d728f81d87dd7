"""The predictors' side of the dashboard's caches (engine.predict): the model registry beside the
database, predictions of the latest model, right-sizing, and the training cut the What-if page
starts predicted windows at. dashboard.data holds the connection and the other caches.

Results are cached per (database, dataset, store fingerprint[, model version]), so an import, a
delete or a new model version invalidates them; the registry itself is read fresh on every call
(its files are small).
"""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard.data import _connection, db_path, store
from engine.analysis.telemetry.rightsize import RightSizing, rightsize
from engine.scenario.runtime import TRAIN_SHARE

ETA_SNAPSHOTS = 16  # backtest instants on the page (the benchmark uses 40)


def _tables(path: str, dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    s = _connection(path)[0].cursor()
    return s.jobs(dataset), s.regions(dataset)


@st.cache_data(show_spinner=False, max_entries=16)
def _training_cut(path: str, dataset: str, fingerprint: str) -> pd.Timestamp | None:
    submits = pd.to_datetime(_connection(path)[0].cursor().jobs(dataset)["submit_utc"])
    return None if submits.empty else submits.quantile(TRAIN_SHARE).floor("s")


def training_cut(dataset: str) -> pd.Timestamp | None:
    """Where predictions start: the submit time below which TRAIN_SHARE of the dataset's jobs were
    submitted (the models train on the jobs that ended before it); None for an empty dataset."""
    return _training_cut(str(db_path()), dataset, store().fingerprint())


def registry():
    """The model registry beside the dashboard's database (engine.predict.registry)."""
    from engine.predict.registry import ModelRegistry

    return ModelRegistry.beside(db_path())


def latest_model(dataset: str):
    """The dataset's newest ModelVersion, or None before the first training."""
    return registry().latest(dataset)


@st.cache_data(show_spinner=False, max_entries=16)
def _current(path: str, dataset: str, fingerprint: str, version: int, digest: str) -> bool:
    from engine.predict.registry import jobs_digest

    return jobs_digest(_connection(path)[0].cursor().jobs(dataset)) == digest


def trained_on_current_data(dataset: str, version) -> bool:
    """Whether `version` was trained on the dataset's jobs as they are now."""
    return _current(str(db_path()), dataset, store().fingerprint(), version.number, version.meta["data"]["digest"])


def train(dataset: str, progress: Callable[[str], None] | None = None):
    """Train, evaluate and store the next model version of `dataset` (engine.predict.registry); returns
    the ModelVersion. Raises engine.predict.registry.ModelError (e.g. too few finished jobs)."""
    jobs, regions = _tables(str(db_path()), dataset)
    return registry().train(dataset, jobs, regions, progress=progress)


@st.cache_data(show_spinner=False, max_entries=4)
def _predictions(path: str, dataset: str, fingerprint: str, version: int) -> pd.DataFrame:
    from engine.predict.registry import ModelRegistry

    jobs, regions = _tables(path, dataset)
    predicted = ModelRegistry.beside(path).load(dataset, version).predict(jobs, regions)
    keep = [c for c in ("job_id", "user_name", "team", "workload_class", "status", "gpus", "submit_utc", "start_utc",
                        "end_utc", "requested_runtime_s") if c in jobs]
    out = pd.concat([jobs[keep], predicted], axis=1)
    out["actual_s"] = (pd.to_datetime(out["end_utc"]) - pd.to_datetime(out["start_utc"])).dt.total_seconds()
    return out.set_index("job_id", drop=False)


def predictions(dataset: str, version) -> pd.DataFrame:
    """Every job of the dataset with the model's p10_s, p50_s, p90_s and fail_prob beside its request
    and actual runtime (actual_s, NaN when unknown), indexed by job_id. Raises ModelIncompatible when
    the stored model cannot be loaded here."""
    return _predictions(str(db_path()), dataset, store().fingerprint(), version.number)


@st.cache_data(show_spinner=False, max_entries=8)
def _rightsizing(path: str, dataset: str, fingerprint: str) -> RightSizing:
    s = _connection(path)[0].cursor()
    return rightsize(s.jobs(dataset), s.prices(dataset))


def rightsizing(dataset: str) -> RightSizing:
    """engine.analysis.telemetry.rightsize over the dataset's jobs at its prices (on-demand tier)."""
    return _rightsizing(str(db_path()), dataset, store().fingerprint())


def fleet_and_zones(path: str, dataset: str) -> tuple[pd.DataFrame, dict]:
    from engine.predict.features import zones_of

    s = _connection(path)[0].cursor()
    return s.fleet(dataset), zones_of(s.regions(dataset))


@st.cache_data(show_spinner=False, max_entries=4)
def _backtest(path: str, dataset: str, fingerprint: str, snapshots: int) -> dict:
    from engine.service.eta_backtest import backtest

    jobs = _connection(path)[0].cursor().jobs(dataset)
    fleet, zones = fleet_and_zones(path, dataset)
    return backtest(jobs, fleet, snapshots=snapshots, tz=zones)


def eta_backtest(dataset: str, snapshots: int = ETA_SNAPSHOTS) -> dict:
    """engine.service.eta_backtest.backtest on the dataset (FCFS + EASY replays, `snapshots` instants
    after the 70 % training cut): the coverage of the ETA's intervals against the recorded starts, raw
    and calibrated, and the calibration offsets the live ETA then uses."""
    return _backtest(str(db_path()), dataset, store().fingerprint(), snapshots)


@st.cache_data(show_spinner=False, max_entries=8)
def _eta(path: str, dataset: str, fingerprint: str, at: pd.Timestamp, calibration: tuple | None,
         version: int | None) -> pd.DataFrame:
    from engine.predict.registry import ModelRegistry
    from engine.service.eta import Calibration, eta

    jobs = _connection(path)[0].cursor().jobs(dataset)
    fleet, zones = fleet_and_zones(path, dataset)
    model = ModelRegistry.beside(path).load(dataset, version).runtime if version is not None else None
    return eta(jobs, fleet, at, model=model, tz=zones,
               calibration=Calibration(*calibration) if calibration else None)


def eta_at(dataset: str, at: pd.Timestamp, calibration: dict | None = None, version=None) -> pd.DataFrame:
    """The start interval of every job pending in `dataset` at `at` (engine.service.eta: the queue
    replayed forward under FCFS + EASY), moved by `calibration` (the backtest's lo_shift, p50_shift,
    hi_shift) when given. The runtimes come from the stored model `version` when it saw nothing after
    `at` (it was trained on the data as it is, and `at` is at or after the last outcome it saw);
    otherwise from a model fitted on the jobs ended by `at`. Raises
    engine.predict.runtime_source.NotEnoughHistory when too few jobs had ended by `at`."""
    shifts = tuple(calibration[k] for k in ("lo_shift", "p50_shift", "hi_shift")) if calibration else None
    return _eta(str(db_path()), dataset, store().fingerprint(), pd.Timestamp(at), shifts,
                usable_version(dataset, at, version))


def usable_version(dataset: str, at: pd.Timestamp, version) -> int | None:
    """`version`'s number when it saw nothing after `at` (trained on the data as it is, `at` at or after the
    last outcome it saw), else None (a model is then fitted on the jobs ended by `at`)."""
    usable = version is not None and trained_on_current_data(dataset, version) and \
        pd.Timestamp(at) >= pd.Timestamp(version.meta["data"]["last_end_utc"]).tz_localize(None)
    return version.number if usable else None


@st.cache_data(show_spinner=False, max_entries=16)
def _time_range(path: str, dataset: str, fingerprint: str) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    jobs = _connection(path)[0].cursor().jobs(dataset)
    stamps = pd.concat([pd.to_datetime(jobs[c]) for c in ("submit_utc", "start_utc", "end_utc")]).dropna()
    return None if stamps.empty else (stamps.min(), stamps.max())


def time_range(dataset: str) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """(first, last) recorded instant of the dataset's jobs (UTC), None when empty."""
    return _time_range(str(db_path()), dataset, store().fingerprint())
