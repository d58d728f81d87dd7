"""Predictors: how well the runtime and failure models predict, what they look at, one job's
prediction, when the queued jobs will start, the jobs that ask for more GPUs than they use, and the
workload classes (scored on a labelled dataset, inferred on one without labels)."""
import math

import pandas as pd
import streamlit as st

from dashboard.charts import predict as charts_predict
from dashboard.charts.view import plot, say
from dashboard.data import predict as data_predict
from dashboard.forms.eta import eta_section
from dashboard.sections.classes import classes_section
from engine.core.escaping import markdown_code
from engine.core.escaping import markdown_text as md
from engine.core.text import duration
from engine.predict.registry import ModelError

RUNTIME_ROWS = {"model": "Model (P50)", "request": "User's request", "last_two": "User's last two (mean)"}
FAILURE_ROWS = {"model": "Model (calibrated)", "base_rate": "Base rate", "user_recent": "User's recent failure rate"}



def _describe(where, dataset: str, version) -> None:
    """The model status line (`where`: a container): the latest version, or that there is none yet."""
    if version is None:
        where.info(f"No model for **{md(dataset)}** yet. Training fits the runtime and failure models on every "
                   "finished job, then scores the same kind of model trained on the first 70 % of submits against "
                   "the rest.")
        return
    meta, current = version.meta, data_predict.trained_on_current_data(dataset, version)
    data = meta["data"]
    where.markdown(f"**Model v{version.number}**, trained {meta['created_utc'][:16].replace('T', ' ')} UTC on "
                   f"{data['runtime_rows']:,} finished jobs submitted {data['first_submit_utc'][:10]} to "
                   f"{data['last_submit_utc'][:10]} (training took {meta['seconds']['total']:.0f} s). "
                   + ("" if current else ":orange[The dataset has changed since: retrain to include the new jobs.]"))
    where.caption(f"Stored in {markdown_code(version.path)} with its figures (meta.json); scikit-learn "
                  f"{meta['software']['scikit_learn']}.")


def _model(dataset: str):
    """The model status line and the train button; the latest version (None before any). After training
    the status line shows the new version (not the "no model yet" it showed before the click)."""
    version = data_predict.latest_model(dataset)
    banner = st.empty()
    _describe(banner.container(), dataset, version)
    if st.button("Train a new model version" if version else "Train the models", key="pr_train",
                 type="secondary" if version else "primary"):
        with st.status("Training...", expanded=True) as status:
            try:
                version = data_predict.train(dataset, progress=lambda line: st.markdown(md(line)))
            except ModelError as exc:
                status.update(label="Training failed", state="error")
                st.error(md(exc))
                return None
            status.update(label=f"Trained model v{version.number}", state="complete", expanded=False)
        banner.empty()
        _describe(banner.container(), dataset, version)
    return version


def _runtime(report: dict) -> None:
    st.subheader("Runtime")
    model = report["model"]
    tiles = st.columns(4)
    tiles[0].metric("Mean absolute log error", f"{model['male']:.3f}",
                    f"{model['male'] - report['request']['male']:+.3f} vs requests", delta_color="inverse")
    tiles[1].metric("Accuracy (min/max)", f"{model['accuracy']:.1%}",
                    f"{100 * (model['accuracy'] - report['request']['accuracy']):+.1f} pts vs requests")
    tiles[2].metric("Outlive their P50", f"{model['underestimate_rate']:.1%}")
    tiles[3].metric("Inside P10-P90", f"{model['coverage']:.1%}", help="nominally 80 %")
    # short headers (the column is two fifths wide) and the tiles' units: percentages as on the tiles
    table = pd.DataFrame([{"runtime from": label, "log error": report[key]["male"],
                           "accuracy": 100 * report[key]["accuracy"],
                           "outlive": 100 * report[key]["underestimate_rate"]} for key, label in RUNTIME_ROWS.items()])
    left, right = st.columns([3, 2])
    plot(left, charts_predict.runtime_accuracy(report), width="stretch", key="pr_runtime_chart")
    column = st.column_config.NumberColumn
    right.dataframe(table, hide_index=True, key="pr_runtime_table", column_config={
        "log error": column(format="%.3f", help="mean absolute log error"),
        "accuracy": column(format="%.1f%%", help="the mean of min(predicted, actual) / max(predicted, actual)"),
        "outlive": column(format="%.1f%%", help="jobs that ran longer than the predicted P50")})
    right.caption(f"Scored on the {report['jobs_test']:,} jobs submitted after {report['cutoff_utc'][:16]} UTC by a "
                  f"model trained on the {report['jobs_train']:,} that had ended by then. Mean absolute log error: "
                  "0 is perfect, 0.69 is off by 2x on average; accuracy = min(pred, actual) / max(pred, actual).")


def _failure(report: dict) -> None:
    st.subheader("Failure")
    rows = [{"probability from": label, **{k: report[key][k] for k in ("roc_auc", "pr_auc", "brier")}}
            for key, label in FAILURE_ROWS.items()]
    left, right = st.columns([2, 3])
    left.dataframe(pd.DataFrame(rows), hide_index=True, key="pr_failure_table",
                   column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("roc_auc", "pr_auc", "brier")})
    left.caption(f"{report['model']['base_rate']:.1%} of the {report['jobs_test']:,} later jobs failed or were "
                 "cancelled. ROC-AUC: 0.5 is chance; PR-AUC: the base rate is chance; Brier: mean squared error of "
                 "the probability (lower is better).")
    plot(right, charts_predict.calibration(report), width="stretch", key="pr_calibration")


def _importance(importance: dict) -> None:
    st.subheader("What the models look at")
    left, right = st.columns(2)
    for column, key, title in ((left, "runtime", "Runtime model (P50)"), (right, "failure", "Failure model")):
        report = importance.get(key) or {}
        if report.get("features"):
            plot(column, charts_predict.importance(report, title), width="stretch", key=f"pr_imp_{key}")
        else:
            column.info(md(f"{title}: {report.get('note', 'no importance measured')}"))
    st.caption("Permutation importance on up to 5,000 later jobs: how much the score worsens when one feature's "
               "values are shuffled among the jobs.")


def _job(dataset: str, version) -> None:
    st.subheader("One job")
    try:
        table = data_predict.predictions(dataset, version)
    except ModelError as exc:
        st.error(md(exc))
        return
    default = table["job_id"].iloc[-1]
    job_id = st.text_input("Job id", value=default, key="pr_job").strip()
    if job_id not in table.index:
        st.warning(md(f"No job {job_id!r} in {dataset}."))
        return
    job = table.loc[[job_id]].iloc[0]
    row = {"p10_s": job["p10_s"], "p50_s": job["p50_s"], "p90_s": job["p90_s"],
           "request_s": job.get("requested_runtime_s"), "actual_s": job["actual_s"]}
    said = {key: duration(value, "unknown") for key, value in row.items()}
    st.markdown(f"**{md(job_id)}** ({md(job.get('workload_class', '') or 'job')}, {job.get('gpus', float('nan')):g} "
                f"{say('GPUs')}, {md(job.get('user_name', '') or 'unknown user')}, {md(job.get('status', ''))}): the model "
                f"expects it to run **{said['p50_s']}** (80 % between {said['p10_s']} and {said['p90_s']}); "
                f"its user asked for {said['request_s']}"
                + (f" and it ran {said['actual_s']}" if math.isfinite(row["actual_s"]) else "")
                + f". Chance it fails or is cancelled: **{job['fail_prob']:.0%}**.")
    plot(st, charts_predict.job_interval(row), width="stretch", key="pr_job_chart")


def _rightsizing(dataset: str) -> None:
    st.subheader(say("Right-sizing: jobs that ask for more GPUs than they use"))
    sizing = data_predict.rightsizing(dataset)
    totals = sizing.totals
    if not totals.get("measured"):
        st.info(say("This dataset has no per-job GPU use (`gpus_used_max` or `gpu_util_pct` columns), so there is "
                    "nothing to right-size from."))
        return
    tiles = st.columns(4)
    tiles[0].metric("Jobs over-asking", f"{totals['over_asking']:,.0f}", f"{totals['over_asking_pct']:.1f}% of measured",
                    delta_color="off")
    tiles[1].metric(say("GPU-hours that would be freed"), f"{totals['freed_gpu_hours']:,.0f}",
                    f"{totals['freed_pct']:.1f}% of measured", delta_color="off")
    tiles[2].metric("Dollars freed (on-demand)", f"${totals['freed_usd']:,.0f}")
    tiles[3].metric("Jobs measured", f"{totals['measured']:,.0f}", f"{totals['measured_pct']:.1f}% of jobs that ran",
                    delta_color="off")
    left, right = st.columns(2)
    left.markdown("**By team**")
    left.dataframe(sizing.by_team.assign(team=sizing.by_team["team"].fillna("(none)")), hide_index=True,
                   key="pr_rs_team", column_config=_rightsizing_columns())
    right.markdown("**Largest savings**")
    right.dataframe(sizing.jobs[sizing.jobs["over_asking"]].head(100)[
        ["job_id", "team", "workload_class", "gpus", "gpus_used_max", "gpu_util_pct", "recommended_gpus",
         "freed_gpu_hours", "freed_usd"]].fillna({"team": "(none)"}), hide_index=True, key="pr_rs_jobs",
        column_config=_rightsizing_columns())
    st.caption(say("A job's need is the most GPUs it had busy at once (or its mean use when no peak is measured); "
                   "the recommendation is the smallest size its shape allows that holds it (whole GPUs on one node, "
                   "whole nodes for gangs). Freed GPU-hours = (asked - recommended) x hours run; dollars at the "
                   "dataset's on-demand price."))


def _rightsizing_columns() -> dict:
    """The right-sizing tables' headings (in the dataset's unit) and number formats."""
    number = st.column_config.NumberColumn
    return {"job_id": "job", "workload_class": "class", "jobs": number("jobs", format="%,d"),
            "over_asking": number("over-asking", format="%,d"), "gpus": number(say("GPUs asked"), format="%g"),
            "gpus_used_max": number(say("most GPUs busy"), format="%g"),
            "gpu_util_pct": number("mean use", format="%.0f%%"),
            "recommended_gpus": number("recommended", format="%g"),
            "gpu_hours": number(say("GPU-hours"), format="%,.0f"),
            "freed_gpu_hours": number(say("GPU-hours freed"), format="%,.0f"),
            "freed_pct": number("freed (% of team's)", format="%.1f%%"),
            "freed_pct_of_all": number("freed (% of all)", format="%.1f%%"),
            "freed_usd": number("$ freed", format="$%,.0f")}


st.title("Predictors")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No dataset yet: import one on the Data page.")
    st.stop()
st.caption(f"Runtime and failure models learned from **{md(dataset)}**'s history, from what is known when a job is "
           "submitted; scored on later jobs against simple baselines. The What-if page can let the scheduler see "
           "their predictions instead of the users' requests.")
model = _model(dataset)
if model is not None:
    evaluation = model.meta.get("evaluation")
    if evaluation:
        _runtime(evaluation["runtime"])
        _failure(evaluation["failure"])
        _importance(evaluation["importance"])
    else:
        st.info("This version was trained without an evaluation (`--no-eval`); train again here to score it.")
    _job(dataset, model)
    eta_section(dataset, model)
_rightsizing(dataset)
classes_section(dataset)
