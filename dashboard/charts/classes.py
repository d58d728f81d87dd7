"""Chart builders for the workload classifier (Predictors page): its confusion matrix and a log's class
shares, from engine.service.classes' report (no Streamlit)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import PALETTE, layout


def confusion(report: dict) -> go.Figure:
    """The confusion matrix of engine.predict.classify.evaluate's `report`: true class down, predicted
    across; each cell's colour is its share of the true class's jobs (its recall on the diagonal), its
    text the jobs."""
    classes = [row["class"] for row in report["per_class"]]
    counts = np.array(report["confusion"], dtype=float)
    share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    fig = go.Figure(go.Heatmap(
        z=share, x=classes, y=classes, zmin=0, zmax=1, colorscale="Blues", colorbar=dict(title="share of row"),
        text=[[f"{int(n):,}" for n in row] for row in counts], texttemplate="%{text}",
        hovertemplate="true %{y}, predicted %{x}<br>%{text} jobs (%{z:.1%} of the true class)<extra></extra>"))
    fig.update_xaxes(title_text="predicted class", side="bottom")
    fig.update_yaxes(title_text="true class", autorange="reversed")
    how = "user-grouped folds" if report["split"] == "users" else "time split"
    return layout(fig, f"Confusion matrix on {report['jobs_test']:,} held-out jobs ({how})", 420)


def shares(table: pd.DataFrame, inferred: bool, unit: str = "GPU-hours") -> go.Figure:
    """Share of jobs and of `unit` per class (engine.predict.classify.class_shares' table)."""
    fig = go.Figure()
    for i, (column, label) in enumerate((("job_share", "jobs"), ("gpu_hour_share", unit))):
        fig.add_trace(go.Bar(x=table["workload_class"], y=table[column], name=f"share of {label}",
                             marker_color=PALETTE[i], text=[f"{v:.1%}" for v in table[column]],
                             textposition="outside", hovertemplate="%{x}: %{y:.1%}<extra></extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    what = "inferred classes (model trained on the sample)" if inferred else "labelled classes"
    return layout(fig, f"Share of jobs and {unit} by {what}", 360)
