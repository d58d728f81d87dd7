"""The Predictors page's "When will the queued jobs start?" section: the queue at an instant of the
dataset with every pending job's predicted start interval (engine.service.eta), and the backtest
that measures, then calibrates, those intervals (engine.service.eta_backtest)."""
from __future__ import annotations

import datetime as dt
import math

import pandas as pd
import streamlit as st

from dashboard.charts import predict as charts_predict
from dashboard.charts.view import plot
from dashboard.data import predict as data_predict
from dashboard.data.headroom import RECORDED
from dashboard.forms.job import open_button
from engine.core.escaping import markdown_text as md
from engine.core.text import hours
from engine.predict.runtime_source import NotEnoughHistory

SHOWN = {"job_id": "job", "region": "region", "gpus": "GPUs", "waited_s": "waited (h)", "jobs_ahead": "jobs ahead",
         "why_text": "why it waits", "eta_text": "expected start", "start_lo_utc": "earliest (UTC)",
         "start_p50_utc": "most likely (UTC)", "start_hi_utc": "latest (UTC)"}


def _instant(dataset: str) -> pd.Timestamp | None:
    """The instant picked (UTC); left at its default, the dataset's last recorded instant ("now")."""
    span = data_predict.time_range(dataset)
    if span is None:
        return None
    first, last = span
    default = last.floor("min").time()
    left, right = st.columns(2)
    day = left.date_input("Queue as it was on (UTC)", value=last.date(), min_value=first.date(),
                          max_value=last.date(), key="pr_eta_day")
    time = right.time_input("at (UTC)", value=default, key="pr_eta_time", step=3600,
                            help="Left as it is: the last recorded instant of the dataset, its queue now")
    if (day, time) == (last.date(), default):
        return last
    return min(pd.Timestamp(dt.datetime.combine(day, time)), last)


def _backtest(dataset: str) -> dict | None:
    report = st.session_state.get("pr_eta_backtest")
    if report and report[0] == dataset:
        return report[1]
    if st.button("Backtest the intervals", key="pr_eta_backtest_run",
                 help=f"Replays the queue at {data_predict.ETA_SNAPSHOTS} past instants and compares the intervals "
                      "with the starts the telemetry recorded; the first half calibrates, the second half scores. "
                      "Takes a minute or two."):
        with st.spinner("Backtesting..."):
            try:
                result = data_predict.eta_backtest(dataset)
            except (NotEnoughHistory, ValueError) as exc:
                st.error(md(f"The backtest could not run: {exc}"))
                return None
        st.session_state["pr_eta_backtest"] = (dataset, result)
        return result
    return None


def _coverage(report: dict) -> None:
    raw, calibrated, baseline = report["raw"], report["calibrated"], report["baseline"]
    level = report["level"]
    tiles = st.columns(4)
    tiles[0].metric(f"Raw {level:.0%} interval holds the start", f"{raw['coverage']:.0%}")
    tiles[1].metric("Calibrated", f"{calibrated['coverage']:.0%}", f"{100 * (calibrated['coverage'] - level):+.0f} pts "
                    f"vs {level:.0%}", delta_color="off")
    tiles[2].metric("Median interval width", hours(calibrated["width_h"] * 3600))
    tiles[3].metric("Point error (MALE)", f"{calibrated['male']:.2f}", f"{calibrated['male'] - baseline['male']:+.2f} vs "
                    "recent waits", delta_color="inverse")
    st.caption(f"Backtest: {report['jobs_scored']:,} waits of {report['distinct_jobs_scored']:,} jobs at "
               f"{report['snapshots'] - report['calibration_snapshots']} instants after "
               f"{report['cutoff_utc'][:16]} UTC (the first {report['calibration_snapshots']} instants calibrate). "
               "MALE: mean absolute error of ln(remaining wait + 1 min); the baseline is the median wait of recent "
               "jobs of the same size. " + ("The intervals of the queue now (the data's last instant) are calibrated "
                                            "with these offsets, whose coverage came closer to the level; earlier "
                                            "instants stay raw, since the backtest saw what followed them."
                                            if _calibrates(report) else "The live intervals below stay raw: their "
                                            "coverage came closer to the level than the calibrated one."))


def _live_calibration(dataset: str, at: pd.Timestamp, report: dict | None) -> bool:
    """Calibrate the intervals at `at` with the backtest's offsets only for the queue now (the data's
    last instant): the backtest saw what followed any earlier instant."""
    return bool(report) and _calibrates(report) and at >= data_predict.time_range(dataset)[1]


def _calibrates(report: dict) -> bool:
    """Whether the calibration brought the backtest's coverage closer to its level than the raw interval."""
    level = report["level"]
    return abs(report["calibrated"]["coverage"] - level) < abs(report["raw"]["coverage"] - level)


def why_sentence(table: pd.DataFrame) -> str:
    """'Why: 40 no room yet, 12 behind other jobs, 3 could start now (...).' from the table's why_text."""
    counts = table["why_text"].value_counts(sort=True)
    text = "Why: " + ", ".join(f"{n:,} {words}" for words, n in counts.items())
    if (table["why"] == "started").any():
        text += (" (\"could start now\": they fit now under the replayed policies, so what held them back was the "
                 "scheduler that ran: a stricter order, no backfilling, or limits the simulator does not model, such "
                 "as per-user limits)")
    return text + "."


def eta_section(dataset: str, version=None) -> None:
    st.subheader("When will the queued jobs start?")
    st.caption("The queue at an instant replayed forward 40 times under FCFS + EASY backfilling, each time with "
               "runtimes drawn from the runtime model's P10/P50/P90 (a running job conditioned on how long it has "
               "run); the interval holds 80 % of the replayed starts. Jobs submitted later are not simulated, so "
               "the raw interval is optimistic; the backtest measures by how much and calibrates it.")
    report = _backtest(dataset)
    if report:
        _coverage(report)
    at = _instant(dataset)
    if at is None or not st.button("Estimate the starts", key="pr_eta_run", type="primary"):
        stored = st.session_state.get("pr_eta")
        if not stored or stored[0] != dataset:
            return
        at, table = stored[1], stored[2]
    else:
        with st.spinner("Replaying the queue..."):
            try:
                table = data_predict.eta_at(dataset, at, report["calibration"] if _live_calibration(dataset, at, report) else None,
                                            version)
            except NotEnoughHistory as exc:
                st.error(md(exc))
                return
        st.session_state["pr_eta"] = (dataset, at, table)
    if table.empty:
        st.info(f"No job was waiting at {at:%Y-%m-%d %H:%M} UTC.")
        return
    never = int((~table["wait_p50_s"].map(math.isfinite)).sum())
    st.markdown(f"At **{at:%Y-%m-%d %H:%M} UTC**, {len(table):,} jobs were waiting"
                + (f"; {never} of them never fit the fleet." if never else ".") + " " + md(why_sentence(table)))
    shown = table.assign(waited_s=table["waited_s"] / 3600)[list(SHOWN)].rename(columns=SHOWN)
    st.dataframe(shown, hide_index=True, key="pr_eta_table",
                 column_config={"waited (h)": st.column_config.NumberColumn(format="%.1f")})
    plot(st, charts_predict.eta_intervals(table.dropna(subset=["start_p50_utc"]), at),
                    width="stretch", key="pr_eta_chart")
    left, right = st.columns([2, 3], vertical_alignment="bottom")
    job_id = left.selectbox("A job of this queue", table["job_id"].astype(str).tolist(), key="pr_eta_job",
                            help="its own view: why it waits, how wide its interval is and why")
    open_button(right, job_id, RECORDED, 0.0, key="pr_open_job", at=at, page="Predictors")
