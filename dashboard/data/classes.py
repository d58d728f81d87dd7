"""The workload classifier's cache for the Predictors page (engine.service.classes): a dataset's class
report, per (database, dataset, store fingerprint, split), so an import or a delete invalidates it."""
from __future__ import annotations

import streamlit as st

from dashboard.data import _connection, db_path, store


@st.cache_data(show_spinner=False, max_entries=8)
def _report(path: str, dataset: str, fingerprint: str, split: str):
    from engine.service.classes import class_report

    s = _connection(path)[0].cursor()
    return class_report(s.jobs(dataset), s.regions(dataset), split)


def class_report(dataset: str, split: str):
    """engine.service.classes.class_report of the dataset: scored on its labels with `split` ("users"
    or "time") when it has them, else its classes inferred by a model trained on the sample."""
    return _report(str(db_path()), dataset, store().fingerprint(), split)
