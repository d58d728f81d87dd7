"""The Predictors page's workload-class section: the classifier scored on a labelled dataset (accuracy,
per-class precision and recall, confusion matrix), or a log's classes inferred by a model trained on the
sample (engine.service.classes), with the shares of jobs and GPU-hours per class."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.charts import classes as charts
from dashboard.charts.view import plot, say
from dashboard.data import classes as data
from engine.core.escaping import markdown_text as md

SPLITS = {"users": "users it never saw", "time": "later jobs"}
EXPLAINED = ("Gradient boosting over what any log has: size, run and requested time, submit hour and weekday, the "
             "submit rhythm (gap to the user's previous submit, the user's submits within 10 minutes and of the same "
             "size within an hour) and the user's aggregates and history; never the queue, QoS, priority, project, "
             "team or GPU type (an SWF log lacks them, and the sample's queue names the class). `meridian classify` "
             "prints the same.")


def classes_section(dataset: str) -> None:
    """Draw the section; the classifier runs on the button's first press (then cached per dataset)."""
    st.subheader("Workload classes")
    st.caption(EXPLAINED)
    split = st.segmented_control("Held out", list(SPLITS), default="users", format_func=SPLITS.get,
                                 key="pr_classes_split") or "users"
    if not (st.button("Classify the workload", key="pr_classes_run") or st.session_state.get("pr_classes_shown")):
        return
    st.session_state["pr_classes_shown"] = True
    with st.spinner("Classifying..."):
        try:
            report = data.class_report(dataset, split)
        except ValueError as exc:
            st.error(md(exc))
            return
    if report.evaluation is not None:
        _scored(report.evaluation)
    else:
        st.markdown(f"**{md(dataset)}** carries no workload classes: they are inferred by a model trained on "
                    f"{md(report.trained_on)}. On the sample it scores the figures `meridian classify --dataset "
                    "sample` prints; a real log's workload may differ from the sample's in ways no score here shows.")
    plot(st, charts.shares(report.shares, report.evaluation is None, say("GPU-hours")), width="stretch",
         key="pr_classes_shares")


def _scored(report: dict) -> None:
    how = SPLITS[report["split"]]
    tiles = st.columns(3)
    tiles[0].metric("Accuracy", f"{report['accuracy']:.1%}",
                    f"{100 * (report['accuracy'] - report['majority_accuracy']):+.1f} pts vs always "
                    f"'{report['majority_class']}'")
    tiles[1].metric("Held-out jobs", f"{report['jobs_test']:,}", f"{report['users']:,} users", delta_color="off")
    tiles[2].metric("Lowest recall", f"{min(r['recall'] for r in report['per_class']):.1%}",
                    min(report["per_class"], key=lambda r: r["recall"])["class"], delta_color="off")
    left, right = st.columns([3, 2])
    plot(left, charts.confusion(report), width="stretch", key="pr_classes_confusion")
    table = pd.DataFrame(report["per_class"])
    number = st.column_config.NumberColumn
    right.dataframe(table, hide_index=True, key="pr_classes_table", column_config={
        "support": number("jobs", format="%,d"), "precision": number(format="%.3f"),
        "recall": number(format="%.3f"), "f1": number("F1", format="%.3f")})
    right.caption(f"Scored on {how}: " + ("each job predicted by a model trained on the other users' jobs "
                                          "(user-grouped folds)." if report["split"] == "users" else
                                          "trained on the first 70 % of submits, tested on the rest."))
