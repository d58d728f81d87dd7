"""The predictors' side of the dashboard's caches (engine.predict): the training cut the What-if
page starts predicted windows at. dashboard.data holds the connection and the other caches.

Cached per (database, dataset, store fingerprint), so an import or a delete invalidates them.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.data import _connection, db_path, store
from engine.scenario_runtime import TRAIN_SHARE


@st.cache_data(show_spinner=False, max_entries=16)
def _training_cut(path: str, dataset: str, fingerprint: str) -> pd.Timestamp | None:
    submits = pd.to_datetime(_connection(path)[0].cursor().jobs(dataset)["submit_utc"])
    return None if submits.empty else submits.quantile(TRAIN_SHARE).floor("s")


def training_cut(dataset: str) -> pd.Timestamp | None:
    """Where predictions start: the submit time below which TRAIN_SHARE of the dataset's jobs were
    submitted (the models train on the jobs that ended before it); None for an empty dataset."""
    return _training_cut(str(db_path()), dataset, store().fingerprint())
