"""Teams & fairness: who gets what under a sharing scenario, against FIFO, and why a job waits."""

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.charts import fairness as charts_fairness
from dashboard.charts.view import plot, say
from dashboard.forms.job import open_button
from engine.analysis.runs import catalogue
from engine.analysis.runs.fairness import longest_waiting
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text as md
from engine.core.reasons import EXPLAINED
from engine.core.text import hours_minutes

BASELINE = "fifo"
DEFAULT_SCENARIO = "priority-fairshare"
DEFAULT_DAYS = 3.0  # the page simulates as it opens: a few days of the sample take a few seconds
# KPI tiles: key -> (value format, delta format, help); label and direction from the KPI catalogue
_TILE_FORMATS = {
    "jain_index": ("{:.3f}", "{:+.3f}", "1 = every team got its fair share of what was used (or all it asked for)"),
    "deadline_hit_rate": ("pct", "pts", "jobs with a deadline that completed by it"),
    "inference_guarantee_violations": ("{:,.0f}", "{:+,.0f}",
                                       "jobs of guaranteed (production inference) queues that waited past their limit"),
    "max_wait_sla_attainment": ("pct", "pts", "jobs that started within their queue's maximum wait"),
    "preemptions": ("{:,.0f}", "{:+,.0f}", "times a running job was evicted and requeued"),
    "lost_gpu_hours": ("{:,.1f}", "{:+,.1f}", "work since the last checkpoint, lost to evictions"),
    "starved_jobs": ("{:,.0f}", "{:+,.0f}", "jobs that waited longer than their queue allows"),
}
TILES = {key: (catalogue.label(key), value, delta, catalogue.higher_is_better(key), help_text)
         for key, (value, delta, help_text) in _TILE_FORMATS.items()}
PERCENT = st.column_config.NumberColumn(format="%.1f%%")


def _tile(key: str, value: float, base: float | None) -> tuple[str, str | None, str]:
    _, fmt, delta_fmt, higher, _ = TILES[key]
    shown = f"{100 * value:.1f}%" if fmt == "pct" else fmt.format(value)
    if base is None:
        return shown, None, "off"
    diff = value - base
    delta = f"{100 * diff:+.1f} pts" if delta_fmt == "pts" else delta_fmt.format(diff)
    return shown, delta, "off" if diff == 0 else "normal" if higher else "inverse"


def _choose() -> tuple[str, dict, float]:
    bundled = data.bundled_scenarios()
    names = list(bundled)
    st.session_state.setdefault("fair_scenario", DEFAULT_SCENARIO if DEFAULT_SCENARIO in names else names[0])
    st.session_state.setdefault("fair_days", DEFAULT_DAYS)
    left, right = st.columns([2, 1])
    name = left.selectbox("Scenario to inspect", names, key="fair_scenario",
                          help="the example scenarios in sample_data/scenarios/; compared with fifo")
    days = right.number_input("First N days of the dataset (0 = all)", min_value=0.0, step=1.0, format="%g",
                              key="fair_days",
                              help="as on the What-if page; a week of the sample takes several seconds")
    return name, bundled, days


def _kpis(name: str, report: data.FairnessReport, base: data.FairnessReport | None) -> None:
    st.markdown(f"**{md(name)}**" + ("" if base is None else f" · change against **{md(BASELINE)}**"))
    for col, key in zip(st.columns(len(TILES)), TILES):
        value, delta, colour = _tile(key, report.kpis[key], None if base is None else base.kpis[key])
        col.metric(say(TILES[key][0]), value, delta, delta_color=colour, help=say(TILES[key][4]))


def _teams(name: str, run: data.WhatIfRun, report: data.FairnessReport, base: data.FairnessReport | None) -> None:
    st.subheader("Each team's share against its entitlement")
    st.caption(say("Solid: the team's share of all GPUs held at the time; dotted: its entitlement (its share "
                   "weight over all teams' weights). A team above its line used capacity others left idle or were "
                   "denied."))
    plot(st, charts_fairness.share_vs_entitlement(report.shares, run.result.origin_utc,
                                                         say(f"Share of GPUs held, by team ({name})")), theme=None)
    st.subheader("Waits by team")
    tables = {BASELINE: base.teams, name: report.teams} if base is not None else {name: report.teams}
    plot(st, charts_fairness.team_waits(tables), theme=None)
    table = report.teams.merge(report.starvation[["team", "longest_wait_s"]], on="team", how="left")
    table = table.assign(team=table["team"].replace("", "(none)"), entitlement=100 * table["entitlement"],
                         share=100 * table["share"], deadline_hit_rate=100 * table["deadline_hit_rate"],
                         wait_mean_h=table["wait_mean_s"] / 3600, wait_p95_h=table["wait_p95_s"] / 3600,
                         longest_wait_h=table["longest_wait_s"] / 3600)
    shown = ["team", "weight", "entitlement", "share", "gpu_hours", "fair_gpu_hours", "jobs", "wait_mean_h",
             "wait_p95_h", "longest_wait_h", "starved_jobs", "preemptions", "lost_gpu_hours", "deadline_hit_rate"]
    number = st.column_config.NumberColumn
    st.dataframe(table[shown], hide_index=True, key="fair_teams", column_config={
        "weight": number(format="%g"), "entitlement": PERCENT, "share": PERCENT,
        "deadline_hit_rate": number("deadlines met", format="%.1f%%"),
        "gpu_hours": number(say("GPU-hours"), format="%.1f"),
        "fair_gpu_hours": number(say("fair GPU-hours"), format="%.1f"),
        "lost_gpu_hours": number(say("lost GPU-hours"), format="%.1f"), "starved_jobs": "starved",
        "wait_mean_h": number("mean wait (h)", format="%.1f"), "wait_p95_h": number("p95 wait (h)", format="%.1f"),
        "longest_wait_h": number("longest wait (h)", format="%.1f")})
    st.caption(say("Share and GPU-hours count what each team held inside the window; fair GPU-hours split the "
                   "same total by weight, no team getting more than it asked for. Waits in hours, before the first "
                   "start; longest wait counts jobs still waiting at the window's end. Starved: waited longer than "
                   "its queue allows before it counts as starved."))


def _queues(report: data.FairnessReport) -> None:
    st.subheader("Service levels by queue")
    table = report.queues.assign(attainment=100 * report.queues["attainment"],
                                 max_wait=report.queues["max_wait_s"].map(hours_minutes),
                                 wait_p95=report.queues["wait_p95_s"].map(hours_minutes))
    st.dataframe(table[["queue", "jobs", "max_wait", "attainment", "wait_p95", "preemptions"]], hide_index=True,
                 key="fair_queues", column_config={"attainment": PERCENT, "wait_p95": "p95 wait",
                                                   "max_wait": "max wait (SLA)"})
    st.caption("Attainment: jobs that started within their queue's maximum wait, of those decided (started, or "
               "already past the limit).")


def _job_label(waits: pd.DataFrame):
    """Job id and wait, for the job picker's rows."""
    labels = dict(zip(waits["row"], waits["job_id"] + " · waited " + waits["wait_s"].map(hours_minutes)))
    return lambda row: labels.get(row, str(row))


def _explain(dataset: str, name: str, days: float, run: data.WhatIfRun, report: data.FairnessReport) -> None:
    st.subheader("Why is my job waiting, and when will it start?")
    teams = report.starvation.sort_values("longest_wait_s", ascending=False, kind="stable")["team"].tolist()
    if not teams:
        st.info("No jobs in this run.")
        return
    left, right, lookup = st.columns([1, 2, 1])
    typed = bool(str(st.session_state.get("fair_job_id", "")).strip())  # a job ID wins: the pickers stand aside
    team = left.selectbox("Team", teams, key="fair_team", format_func=lambda t: t or "(none)", disabled=typed,
                          help="teams with the longest wait first (clear the job ID to pick here)")
    waits = longest_waiting(run.result, team)
    row = right.selectbox("Job (longest wait first)", waits["row"].tolist(), key="fair_job",
                          format_func=_job_label(waits), disabled=typed, help="clear the job ID to pick here")
    job_id = lookup.text_input("Or a job ID", key="fair_job_id",
                               help="any job of the dataset, of any team: the job view finds the window that holds "
                                    "it").strip()
    if not job_id and row is not None:
        job_id = str(run.result.jobs["job_id"].iloc[int(row)])
    if job_id:
        story = data.story(dataset, data.bundled_scenarios()[name], days, int(row)) if not typed and row is not None \
            else None
        if story is not None:
            st.markdown(md(f"Job {story.job_id} of team {story.team or '(none)'} " + (
                f"waited {hours_minutes(story.wait_s)} in {name}, {_share(story)}." if story.wait_s >= 1 else
                f"did not wait in {name}.")))
        open_button(st, job_id, name, days, key="fair_open_job", page="Teams & fairness")


def _share(story) -> str:
    """The reason the job waited longest, in words."""
    if story.reasons.empty:
        return "for no recorded reason"
    reason, _, share = story.reasons.sort_values("share", ascending=False, kind="stable").iloc[0]
    return f"mostly ({100 * share:.0f}%) because {EXPLAINED.get(reason, reason)}"


st.title("Teams & fairness")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No datasets yet: import one on the Data page.")
    st.stop()
st.caption(f"How a sharing scenario splits the fleet among the teams of **{md(dataset)}**, compared with first come, "
           "first served; and for any job, why it waits and when it starts.")
name, bundled, days = _choose()
try:
    with st.spinner(md(f"Simulating {name} and {BASELINE}...")):
        run = data.whatif_run(dataset, bundled[name], days)
        report = data.fairness_report(dataset, bundled[name], days)
        base = data.fairness_report(dataset, bundled[BASELINE], days) if name != BASELINE and BASELINE in bundled \
            else None
except (ScenarioError, ValueError) as exc:
    st.error(md(f"{name}: {exc}"))
    st.stop()
window = "the whole dataset" if run.start_utc is None else \
    f"jobs submitted from {run.start_utc:%Y-%m-%d %H:%M} to {run.end_utc:%Y-%m-%d %H:%M} UTC"
st.info(md(f"Simulated {window} ({run.jobs:,} jobs)."))
_kpis(name, report, base)
_teams(name, run, report, base)
_queues(report)
_explain(dataset, name, days, run, report)
