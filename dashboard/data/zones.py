"""The Time zones page's analysis and charts of a dataset (engine.analysis.telemetry.timezones,
dashboard.charts.timezones), on the regions' or the teams' working hours, cached per content of the
database. dashboard.data holds the connection and other caches."""
from __future__ import annotations

import pandas as pd
import streamlit as st
from plotly.graph_objects import Figure

from dashboard.charts import timezones as charts_timezones
from dashboard.data import _connection, db_path, store
from engine.analysis.telemetry.timezones import TimeZones, build_timezones


@st.cache_data(show_spinner=False, max_entries=16)
def _timezones(path: str, dataset: str, fingerprint: str, calendar: str) -> TimeZones:
    s = _connection(path)[0].cursor()
    return build_timezones(s.jobs(dataset), s.fleet(dataset), s.regions(dataset), s.table("teams", dataset),
                           calendar)


def timezones(dataset: str, calendar: str = "region") -> TimeZones:
    """The Time zones analysis of `dataset` (engine.analysis.telemetry.timezones) on the regions' ("region")
    or the teams' ("team") working hours, computed once per content of the database."""
    return _timezones(str(db_path()), dataset, store().fingerprint(), calendar)


@st.cache_resource(show_spinner=False, max_entries=32)
def _timezone_figures(path: str, dataset: str, fingerprint: str, calendar: str,
                      week: pd.Timestamp) -> dict[str, Figure]:
    return charts_timezones.timezone_figures(_timezones(path, dataset, fingerprint, calendar), week)


def timezone_figures(dataset: str, week: pd.Timestamp, calendar: str = "region") -> dict[str, Figure]:
    """The Time zones page's charts of `dataset` for one reference week and whose working hours (see
    charts_timezones.timezone_figures)."""
    return _timezone_figures(str(db_path()), dataset, store().fingerprint(), calendar, pd.Timestamp(week))
