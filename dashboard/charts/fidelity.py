"""The Fidelity page's charts: ours against the published figures of RLScheduler and FGD."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.base import LEGEND_ABOVE, PALETTE, layout
from engine.service.experiments import fgd, fidelity, rlscheduler

BACKFILLS = {"none": "no backfilling", "compat": "RLScheduler's backfilling"}
FGD_METRICS = {"gpu_alloc_ratio_pct": "GPU allocation ratio (%)", "gpu_frag_ratio_pct": "fragmentation ratio (%)",
               "gpu_frag_amount_pct": "fragmentation amount (% of GPUs)"}
RLS_METRICS = {"avg_bounded_slowdown": "avg bounded slowdown", "utilization": "utilization"}
FGD_LABELS = {key: name.split("-", 1)[1] for name, key in fidelity.FGD_NAMES.items()}


def rls_figure(rows: pd.DataFrame, title: str) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=list(RLS_METRICS.values()), horizontal_spacing=0.08)
    for col, metric in enumerate(RLS_METRICS, start=1):
        part = rows[rows["metric"] == metric]
        if part.empty:
            continue
        low, high = part[["published", "ours"]].min().min(), part[["published", "ours"]].max().max()
        fig.add_trace(go.Scatter(x=[low, high], y=[low, high], mode="lines", showlegend=False, hoverinfo="skip",
                                 line=dict(color="#9aa0a6", dash="dot", width=1)), row=1, col=col)
        for i, policy in enumerate(rlscheduler.POLICIES):
            for backfill, symbol in (("none", "circle"), ("compat", "diamond")):
                pts = part[(part["policy"] == policy) & (part["backfill"] == backfill)]
                if pts.empty:
                    continue
                fig.add_trace(go.Scatter(
                    x=pts["published"], y=pts["ours"], mode="markers", name=f"{policy}, {BACKFILLS[backfill]}",
                    legendgroup=f"{policy}{backfill}", showlegend=col == 1,
                    marker=dict(color=PALETTE[i], symbol=symbol, size=8, line=dict(width=0.5, color="white")),
                    customdata=pts[["start", "difference"]],
                    hovertemplate="sequence from job %{customdata[0]}<br>published %{x:.6g}<br>ours %{y:.6g}"
                                  "<br>difference %{customdata[1]:.2g}<extra>" + f"{policy} · {backfill}</extra>"),
                    row=1, col=col)
    fig.update_xaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_xaxes(title_text="published")
    fig.update_yaxes(title_text="ours", row=1, col=1)
    return legend_below(layout(fig, title, 520, LEGEND_ABOVE, top=80))


def legend_below(fig: go.Figure) -> go.Figure:
    fig.update_layout(margin=dict(t=60, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0.0))
    return fig


def fgd_figure(rows: pd.DataFrame, metric: str, title: str) -> go.Figure:
    """Dashed lines: the published 10-seed means; markers: ours; one colour per policy."""
    fig = go.Figure()
    part = rows[rows["metric"] == metric]
    for i, policy in enumerate(fgd.POLICIES):
        pts = part[part["policy"] == policy].sort_values("arrived_pct")
        if pts.empty:
            continue
        colour, label = PALETTE[i], FGD_LABELS[policy]
        fig.add_trace(go.Scatter(
            x=pts["arrived_pct"], y=pts["published"], mode="lines", legendgroup=policy, showlegend=False,
            line=dict(color=colour, dash="dash", width=1.5),
            hovertemplate="%{x}% arrived: %{y:.2f}<extra>" + label + " published</extra>"))
        fig.add_trace(go.Scatter(
            x=pts["arrived_pct"], y=pts["ours"], mode="markers+lines", legendgroup=policy, name=label,
            marker=dict(color=colour, size=8), line=dict(color=colour, width=1), customdata=pts["difference"],
            hovertemplate="%{x}% arrived: %{y:.2f} (difference %{customdata:+.2f})<extra>" + label + " ours</extra>"))
    fig.update_xaxes(title_text="GPU requests arrived (% of capacity)", tickvals=list(fgd.LEVELS))
    fig.update_yaxes(title_text=FGD_METRICS[metric])
    return legend_below(layout(fig, title, 500, LEGEND_ABOVE, top=80))


def fgd_seed_figure(alloc: pd.DataFrame, seed: int) -> go.Figure:
    """One seed's GPU allocation ratio against the published 10-seed mean and range (left), and its
    difference from that mean against the one-seed allowance (right)."""
    pts = alloc.sort_values("arrived_pct")
    x, back = list(pts["arrived_pct"]), list(pts["arrived_pct"][::-1])
    label = FGD_LABELS[pts["policy"].iloc[0]]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08, subplot_titles=[
        "GPU allocation ratio (%)", "difference from the published mean (points)"])
    grey, colour = "rgba(127,127,127,0.25)", PALETTE[list(fgd.POLICIES).index(pts["policy"].iloc[0])]
    fig.add_trace(go.Scatter(x=x + back, y=list(pts["published_max"]) + list(pts["published_min"][::-1]),
                             fill="toself", mode="none", fillcolor=grey, name="published range of 10 seeds",
                             hoverinfo="skip"), row=1, col=1)
    fig.add_trace(go.Scatter(x=x, y=pts["published"], mode="lines", name="published 10-seed mean",
                             line=dict(color="#1b2430", dash="dash", width=1.5)), row=1, col=1)
    fig.add_trace(go.Scatter(x=x, y=pts["ours"], mode="markers+lines", name=f"{label}, seed {seed} (ours)",
                             marker=dict(color=colour, size=8), line=dict(color=colour, width=1)), row=1, col=1)
    fig.add_trace(go.Scatter(x=x + back, y=list(pts["tolerance"]) + list(-pts["tolerance"][::-1]), fill="toself",
                             mode="none", fillcolor="rgba(44,160,44,0.15)", name="one-seed allowance",
                             hoverinfo="skip"), row=1, col=2)
    spread = list(pts["published_max"] - pts["published"]) + list((pts["published_min"] - pts["published"])[::-1])
    fig.add_trace(go.Scatter(x=x + back, y=spread, fill="toself", mode="none", fillcolor=grey, showlegend=False,
                             hoverinfo="skip"), row=1, col=2)
    fig.add_trace(go.Scatter(x=x, y=pts["difference"], mode="markers+lines", showlegend=False,
                             marker=dict(color=colour, size=8), line=dict(color=colour, width=1),
                             hovertemplate="%{x}% arrived: %{y:+.2f} points<extra></extra>"), row=1, col=2)
    fig.update_xaxes(title_text="GPU requests arrived (% of capacity)", tickvals=list(fgd.LEVELS))
    return legend_below(layout(fig, f"Seed {seed} just now against the published 10-seed mean", 480, LEGEND_ABOVE, top=80))
