"""Chart builders for the Predictors page: evaluation reports and tables in, plotly Figures out (no
Streamlit). Runtimes in hours on log axes (they span seconds to days), probabilities 0-1.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import LEGEND_ABOVE, PALETTE, layout
from engine.core.escaping import plotly_text as esc

RUNTIME_SOURCES = {"model": "model (P50)", "request": "user's request", "last_two": "mean of the user's last two"}
FAILURE_SOURCES = {"model": "model", "base_rate": "base rate", "user_recent": "user's recent failure rate"}


def _layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    return layout(fig, title, height, {**LEGEND_ABOVE, "y": 1.0})


def runtime_accuracy(report: dict) -> go.Figure:
    """Mean absolute log error and accuracy of the model's P50 against the baselines
    (engine.predict.evaluate.evaluate_runtime's report), side by side."""
    fig = go.Figure()
    names = [RUNTIME_SOURCES[k] for k in RUNTIME_SOURCES]
    for i, (metric, label) in enumerate((("male", "mean absolute log error (lower is better)"),
                                         ("accuracy", "accuracy min/max (higher is better)"))):
        values = [report[k][metric] for k in RUNTIME_SOURCES]
        fig.add_trace(go.Bar(x=names, y=values, name=label, marker_color=PALETTE[i], text=[f"{v:.3f}" for v in values],
                             textposition="outside", hovertemplate="%{x}<br>" + label + " %{y:.3f}<extra></extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, f"Runtime: the model against the baselines on {report['jobs_test']:,} later jobs")


def calibration(report: dict) -> go.Figure:
    """Observed failure rate against the predicted probability per bin (engine.predict.metrics.
    calibration_table), marker size by jobs, with the diagonal of perfect calibration."""
    table = pd.DataFrame(report["calibration"])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfectly calibrated",
                             line=dict(color="#999999", dash="dot"), hoverinfo="skip"))
    if len(table):
        size = 8 + 22 * np.sqrt(table["jobs"] / table["jobs"].max())
        fig.add_trace(go.Scatter(x=table["predicted"], y=table["observed"], mode="lines+markers", name="model",
                                 marker=dict(size=size, color=PALETTE[0]), customdata=table["jobs"],
                                 hovertemplate="predicted %{x:.2f}<br>observed %{y:.2f}<br>%{customdata:,} jobs"
                                               "<extra></extra>"))
    fig.update_xaxes(title_text="predicted probability of failing or being cancelled", range=[0, 1])
    fig.update_yaxes(title_text="observed share that failed", range=[0, 1])
    return _layout(fig, "Failure model calibration (later jobs)")


def importance(report: dict, title: str) -> go.Figure:
    """Permutation importance (engine.predict.importance: features [{feature, mean, std}]): how much
    the model's score (`report["score"]`) worsens when a feature is shuffled, largest on top."""
    table = pd.DataFrame(report["features"]).sort_values("mean")
    fig = go.Figure(go.Bar(x=table["mean"], y=table["feature"], orientation="h", marker_color=PALETTE[1],
                           error_x=dict(type="data", array=table["std"]),
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_xaxes(title_text=f"how much {report['score']} worsens when shuffled")
    return _layout(fig, title, height=max(300, 26 * len(table) + 100))


def job_interval(row: dict) -> go.Figure:
    """One job's P10-P90 runtime interval with its P50, the user's request and (when known) the
    actual runtime, in hours on a log axis."""
    fig = go.Figure()
    hours = {k: row.get(k) / 3600 for k in ("p10_s", "p50_s", "p90_s", "request_s", "actual_s")
             if row.get(k) is not None and np.isfinite(row.get(k))}
    fig.add_trace(go.Scatter(x=[hours["p10_s"], hours["p90_s"]], y=["runtime"] * 2, mode="lines",
                             line=dict(color=PALETTE[0], width=14), name="P10-P90",
                             hovertemplate="%{x:.2f} h<extra>P10-P90</extra>"))
    for key, label, symbol, colour in (("p50_s", "P50", "diamond", PALETTE[0]),
                                       ("request_s", "request", "line-ns-open", PALETTE[3]),
                                       ("actual_s", "actual", "x", PALETTE[2])):
        if key in hours:
            fig.add_trace(go.Scatter(x=[hours[key]], y=["runtime"], mode="markers", name=label,
                                     marker=dict(symbol=symbol, size=18, color=colour, line=dict(width=3, color=colour)),
                                     hovertemplate=f"{label} %{{x:.2f}} h<extra></extra>"))
    fig.update_xaxes(type="log", title_text="hours (log)")
    fig.update_yaxes(showticklabels=False)
    return _layout(fig, "Predicted runtime", height=220)


def eta_intervals(queue: pd.DataFrame, at: pd.Timestamp, limit: int = 40) -> go.Figure:
    """The first `limit` queued jobs' predicted start intervals (start_lo_utc .. start_hi_utc, P50
    marked) after the instant `at`, in queue order top to bottom."""
    rows = queue.head(limit).iloc[::-1]
    fig = go.Figure()
    for _, job in rows.iterrows():
        fig.add_trace(go.Scatter(x=[job["start_lo_utc"], job["start_hi_utc"]], y=[job["job_id"]] * 2, mode="lines",
                                 line=dict(color=PALETTE[0], width=10), showlegend=False,
                                 hovertemplate=f"{esc(job['job_id'])}<br>%{{x}}<extra>interval</extra>"))
    fig.add_trace(go.Scatter(x=rows["start_p50_utc"], y=rows["job_id"], mode="markers", name="median start",
                             marker=dict(symbol="diamond", size=9, color=PALETTE[3]),
                             hovertemplate="%{y}<br>median start %{x}<extra></extra>"))
    fig.add_vline(x=at, line=dict(color="#666666", dash="dot"))
    fig.update_xaxes(title_text="predicted start (UTC)")
    return _layout(fig, "When will the queued jobs start?", height=max(320, 20 * len(rows) + 120))
