"""The one job view ("why is my job waiting, and when will it start?"), drawn by the Job page, and `open_job`,
which every page that shows a job (What-if, Teams & fairness, Predictors) calls to open it there.

For a job of the dataset: as the telemetry recorded it; its story in a scenario over the window that holds
it (dashboard.data.job.window: the calling page's when the job is in it; engine.analysis.runs.job_story):
timeline, why it waited, its queue's SLA, jobs ahead of it, its priority factors and its quota; and its
predicted start from the recorded queue at an instant (its submit, or the Predictors page's instant), with
how wide the interval is and why (engine.service.eta_why), beside the start it actually had.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dashboard.charts import fairness as charts_fairness
from dashboard.charts.view import UNIT, plot, say
from dashboard.data import job as data_job
from engine.analysis.runs.job_quota import QUOTA_REASONS, job_quota, quota_text
from engine.analysis.runs.job_story import factor_table
from engine.core.escaping import markdown_text as md
from engine.core.reasons import EXPLAINED, REASONS
from engine.core.text import hours_minutes
from engine.predict.runtime_source import NotEnoughHistory
from engine.service.eta_why import NotWaiting, width_text

PAGE = "app_pages/job.py"
# a status that explains a job never (re)started
NOT_STARTED = frozenset(REASONS[1:]) | {"deferred", "waiting-for-predecessor", "restoring-dataset"}


VIEW = "job_view"       # session: what the Job page shows (job_id, scenario, days, at, page)
INPUTS = ("job_id_in", "job_scenario_in", "job_days_in")   # the Job page's widgets, re-made from VIEW when opened


def open_job(job_id: str, scenario: str, days: float, at: pd.Timestamp | None = None, page: str = "") -> None:
    """Open the Job page on `job_id` in `scenario` (a name the page offers) over the first `days` days of the
    calling `page` (the view widens the window when the job is not in it), its predicted start at `at`."""
    st.session_state[VIEW] = {"job_id": str(job_id), "scenario": scenario, "days": float(days),
                              "at": None if at is None else pd.Timestamp(at), "page": page}
    for key in INPUTS:
        st.session_state.pop(key, None)
    st.switch_page(PAGE)


def open_button(container, job_id: str | None, scenario: str, days: float, key: str, at=None, page: str = "") -> None:
    """A button that opens `job_id` in the job view (nothing when no job is chosen)."""
    if job_id and container.button(f"Open job {job_id} in the job view", key=key, icon=":material/work_history:",
                                   help="why it waited and when it starts, in the window that holds it, with its "
                                        "predicted start interval"):
        open_job(job_id, scenario, days, at, page)


def recorded_facts(job: pd.Series) -> str:
    """The job as the telemetry recorded it, in a sentence."""
    submit, start, end = (pd.to_datetime(job.get(c)) for c in ("submit_utc", "start_utc", "end_utc"))
    waited = f", started {start:%Y-%m-%d %H:%M} UTC after {hours_minutes((start - submit).total_seconds())}" \
        if pd.notna(start) else ", never started"
    return (f"Recorded: job {job['job_id']} of team {job.get('team') or '(none)'} ({job.get('workload_class')}, "
            f"{UNIT.get().count(float(job.get('gpus')))}, {job.get('region')}) was submitted {submit:%Y-%m-%d %H:%M} "
            f"UTC{waited}" + (f", ended {end:%Y-%m-%d %H:%M} UTC" if pd.notna(end) else "")
            + f" ({job.get('status')}).")


def _when(origin: pd.Timestamp, seconds: float) -> str:
    return f"{origin + pd.Timedelta(seconds=float(seconds)):%Y-%m-%d %H:%M} UTC"


def story_section(story, run) -> None:
    """The job's story in the run: when it starts, why it waited, its SLA, the jobs ahead, factors, quota."""
    origin = run.result.origin_utc
    started = math.isfinite(story.start_s)
    head = f"Submitted {_when(origin, story.submit_s)}"
    if started:
        head += f"; **starts {_when(origin, story.start_s)}** after waiting **{hours_minutes(story.wait_s)}**."
        if story.status in NOT_STARTED:
            head += f" It was evicted and never starts again: {EXPLAINED[story.status]}."
        elif story.status == "waiting at the end":
            head += " It was evicted and is waiting again at the end of the window."
    elif story.status in NOT_STARTED:
        head += f" and never starts: {EXPLAINED[story.status]}."
    else:
        head += f" and is still waiting at the end of the window, {hours_minutes(story.wait_s)} later."
    st.markdown(head)
    if not story.reasons.empty:
        parts = [f"{100 * share:.0f}% {md(EXPLAINED.get(reason, reason))} ({hours_minutes(seconds)})"
                 for reason, seconds, share in story.reasons.itertuples(index=False)]
        st.markdown("Why it waited: " + "; ".join(parts) + ".")
    quota = job_quota(run.result, story.row)
    if quota is not None and (story.status in QUOTA_REASONS or story.reasons["reason"].isin(QUOTA_REASONS).any()):
        st.markdown(md(say(f"{quota_text(quota)} It asks for {story.gpus:g} GPUs.")))
    sla = {"met": "met", "missed": "**missed**", "pending": "not yet decided", "none": "no limit"}[story.sla]
    lines = [f"Its queue *{md(story.queue)}* promises a start within {hours_minutes(story.max_wait_s)}: {sla}."]
    if story.starved:
        lines.append("It waited long enough to count as **starved**.")
    if story.preemptions:
        again = " and started again" if len(story.starts) > story.preemptions else ""
        lines.append(say(f"It was evicted {story.preemptions} time(s){again}, losing "
                         f"{story.lost_gpu_hours:,.1f} GPU-hours of work since its last checkpoint."))
    st.markdown(" ".join(lines))
    columns = st.columns(4)
    columns[0].metric("Starts (UTC)", f"{origin + pd.Timedelta(seconds=story.start_s):%b %d, %H:%M}"
                      if started else "never")
    columns[1].metric("Waited", hours_minutes(story.wait_s))
    columns[2].metric("Max-wait SLA", story.sla)
    columns[3].metric("Jobs ahead at submit", f"{story.moments[0].jobs_ahead:,}",
                      help=f"of {story.moments[0].waiting:,} jobs waiting in {md(story.region)} then, itself included")
    _factors(story)
    timeline = story.timeline.assign(time_utc=origin + pd.to_timedelta(story.timeline["time_s"], unit="s"))
    st.dataframe(timeline[["time_utc", "event"]], hide_index=True, key="job_timeline",
                 column_config={"time_utc": st.column_config.DatetimeColumn("time (UTC)", format="YYYY-MM-DD HH:mm:ss")})


def _when_label(label: str) -> str:
    return "at the window end" if label == "window end" else f"when {label}"


def _factors(story) -> None:
    moments = md("; ".join(f"{_when_label(m.label)}, {m.jobs_ahead:,} ahead of it ({m.waiting:,} waiting in "
                           f"{story.region})" for m in story.moments))
    if not story.has_factors:
        st.markdown(f"The order *{md(story.order)}* has no priority factors. Jobs ahead of it in its order: "
                    f"{moments}.")
        return
    table = factor_table(story)
    st.markdown(f"Priority under *{md(story.order)}* (highest first; like Slurm's `sprio`). Jobs ahead of it in this "
                f"order: {moments}." + (" An emergency boost put it first (it had waited too long)."
                                        if any(m.boosted for m in story.moments) else ""))
    left, right = st.columns([3, 2])
    plot(left, charts_fairness.factor_bars(table), theme=None)
    shown = table.assign(weight=table["weight"].map(lambda w: "" if pd.isna(w) else f"{w:,g}"))  # the total has none
    right.dataframe(shown, hide_index=True, key="job_factors",
                    column_config={c: st.column_config.NumberColumn(format="%.1f") for c in table.columns
                                   if c not in ("factor", "weight")})


def predicted_section(dataset: str, job: pd.Series, at: pd.Timestamp | None) -> None:
    """The job's predicted start from the recorded queue at `at` (default: its submit), on request."""
    st.subheader("When will it start? The predicted interval")
    submit, start = pd.to_datetime(job["submit_utc"]), pd.to_datetime(job.get("start_utc"))
    at = submit if at is None else pd.Timestamp(at)
    if pd.notna(start) and start <= at:
        st.info(md(f"At {at:%Y-%m-%d %H:%M} UTC the job was already running (it started {start:%Y-%m-%d %H:%M} "
                   "UTC): there is no start to predict then."))
        return
    st.caption(md(f"From the queue as recorded at {at:%Y-%m-%d %H:%M} UTC"
                  + (" (its submit)" if at == submit else "") + ": the queue replayed forward 40 times under FCFS "
                  "+ EASY backfilling with runtimes drawn from the runtime model's P10/P50/P90, as the Predictors "
                  "page does for the whole queue; about half a minute when the stored model saw that instant's "
                  "future (a model is then fitted on the jobs ended by it)."))
    key = ("job_predicted", dataset, str(job["job_id"]), at)
    if st.session_state.get("job_predicted_key") != key and not st.button(
            "Predict its start", key="job_predict", type="primary", icon=":material/schedule:"):
        return
    with st.spinner("Replaying the queue..."):
        try:
            answer = data_job.predicted(dataset, str(job["job_id"]), at)
        except (NotWaiting, NotEnoughHistory) as exc:
            st.warning(md(f"No prediction: {exc}."))
            return
    st.session_state["job_predicted_key"] = key
    row = answer.row
    tiles = st.columns(4)
    likely = row["wait_p50_s"]
    tiles[0].metric("Most likely start", "never" if not math.isfinite(likely) else
                    "now" if likely < 60.0 else f"in {hours_minutes(likely)}", help=md(f"80 % interval: {row['eta_text']}"))
    tiles[1].metric("Interval width", "unbounded" if not math.isfinite(answer.width_s) else
                    hours_minutes(answer.width_s), help="upper bound less lower bound of the 80 % interval")
    tiles[2].metric("Jobs ahead in its region", f"{int(row['jobs_ahead']):,}",
                    help=say(f"{row['gpus_ahead']:,.0f} GPUs asked for by the jobs ahead of it"))
    tiles[3].metric("Why it waits then", row["why_text"])
    st.markdown(md(f"Expected to start {row['eta_text']}. " + width_text(answer, UNIT.get())))
    if pd.notna(start):
        actual = (start - at).total_seconds()
        inside = row["wait_lo_s"] <= actual <= row["wait_hi_s"]
        st.markdown(md(f"It actually started {hours_minutes(actual)} after that instant "
                       f"({start:%Y-%m-%d %H:%M} UTC): {'inside' if inside else 'outside'} the interval."))
    if not answer.drivers.empty:
        st.dataframe(answer.drivers.assign(share=100 * answer.drivers["share"],
                                           left_p10_h=answer.drivers["left_p10_s"] / 3600,
                                           left_p90_h=answer.drivers["left_p90_s"] / 3600)[
            ["job_id", "state", "gpus", "share", "left_p10_h", "left_p90_h"]], hide_index=True, key="job_drivers",
            column_config={"job_id": "released it: job", "gpus": st.column_config.NumberColumn(say("GPUs"),
                                                                                                 format="%g"),
                           "share": st.column_config.NumberColumn("share of replays", format="%.0f%%"),
                           "left_p10_h": st.column_config.NumberColumn("run left, P10 (h)", format="%.1f"),
                           "left_p90_h": st.column_config.NumberColumn("run left, P90 (h)", format="%.1f")})
