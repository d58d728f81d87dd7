"""The job view's data: a job of the dataset as recorded, the simulation window that holds it, its story in a
scenario (dashboard.data.story over the What-if runs' cache) and its predicted start from the recorded queue
at an instant (engine.service.eta_why). dashboard.data holds the connection and the other caches.

The window that holds a job: the calling page's first N days when the job was submitted in them (so the view
shows the run that page showed), else the first whole days up to WINDOW_MARGIN_DAYS past its submit day, or
the whole dataset when that reaches its last submit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.data import _connection, db_path, store
from dashboard.data import predict as data_predict

WINDOW_MARGIN_DAYS = 2   # days simulated past the job's submit day, so that it can start inside the window


@dataclass(frozen=True)
class Window:
    """days: the first N days to simulate (0: all); note: why, when it is not the calling page's window."""

    days: float
    note: str = ""


@st.cache_data(show_spinner=False, max_entries=8)
def _jobs(path: str, dataset: str, fingerprint: str) -> pd.DataFrame:
    jobs = _connection(path)[0].cursor().jobs(dataset)
    return jobs.assign(job_id=jobs["job_id"].astype(str)).set_index("job_id", drop=False)


def recorded(dataset: str, job_id: str) -> pd.Series | None:
    """The job's row as the telemetry recorded it, None when the dataset has no such job."""
    jobs = _jobs(str(db_path()), dataset, store().fingerprint())
    return jobs.loc[job_id] if job_id in jobs.index else None


def window(dataset: str, job_id: str, days: float, page: str = "") -> Window:
    """The first N days that hold `job_id`: `days` when its submit falls in them, else see the module."""
    jobs = _jobs(str(db_path()), dataset, store().fingerprint())
    submits = pd.to_datetime(jobs["submit_utc"])
    first, last = submits.min(), submits.max()
    submit = submits.loc[job_id]
    day = (submit - first) / pd.Timedelta(days=1)
    if not days or day < days:
        return Window(float(days or 0))
    needed = math.floor(day) + 1 + WINDOW_MARGIN_DAYS
    whole = first + pd.Timedelta(days=needed) > last
    held = "all of the dataset" if whole else f"its first {needed} days"
    source = f"the {page} page's window" if page else "the window chosen"
    return Window(0.0 if whole else float(needed),
                  f"Job {job_id} was submitted on day {math.floor(day) + 1} of the dataset, after {source} (its first "
                  f"{days_text(days)}): it is simulated over {held} instead.")


def days_text(days: float) -> str:
    """'1 day', '7 days', '2.5 days'."""
    return f"{days:g} day" + ("" if days == 1 else "s")


def story(dataset: str, spec: dict, days: float, job_id: str):
    """(the job's story, the run it is from) in the scenario `spec` over the first `days` days, None when the
    job was not submitted in that window."""
    run = data.whatif_run(dataset, spec, days)
    found = (run.result.jobs["job_id"].astype(str) == str(job_id)).to_numpy().nonzero()[0]
    if not len(found):
        return None
    return data.story(dataset, spec, days, int(found[0])), run


@st.cache_data(show_spinner=False, max_entries=16)
def _predicted(path: str, dataset: str, fingerprint: str, job_id: str, at: pd.Timestamp, version: int | None):
    from engine.predict.registry import ModelRegistry
    from engine.service.eta_why import job_eta

    jobs = _connection(path)[0].cursor().jobs(dataset)
    fleet, zones = data_predict.fleet_and_zones(path, dataset)
    model = ModelRegistry.beside(path).load(dataset, version).runtime if version is not None else None
    return job_eta(jobs, fleet, at, job_id, model=model, tz=zones)


def predicted(dataset: str, job_id: str, at: pd.Timestamp):
    """engine.service.eta_why.job_eta of the job at `at` (UTC): the stored model when it saw nothing after `at`,
    else one fitted on the jobs ended by then (half a minute on the sample). Raises NotWaiting, NotEnoughHistory."""
    version = data_predict.usable_version(dataset, at, data_predict.latest_model(dataset))
    return _predicted(str(db_path()), dataset, store().fingerprint(), str(job_id), pd.Timestamp(at), version)
