"""Chart builders for the Capacity planning page: plan tables in, plotly Figures out (no Streamlit).

Waits in hours (log axis: targets span minutes to days), cost in USD per year, fleet size in GPUs.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.base import LEGEND_RIGHT, MIN_WAIT_H, PALETTE, WAIT_TICKS, layout
from engine.core.escaping import plotly_text as esc

TIER_COLOURS = {"reserved": "#1f77b4", "spot": "#2ca02c", "on-demand": "#ff7f0e"}


def _layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    return layout(fig, title, height, LEGEND_RIGHT)


def slo_curves(curve: pd.DataFrame, targets: dict[str, float], marks: dict[str, float]) -> go.Figure:
    """p95 wait per workload class (solid, one colour each) against fleet GPUs, with its target as a
    dotted line of the same colour; `marks` (label -> GPUs) are drawn as vertical lines (today, plan).
    `curve`: gpus, workload_class, p95_h (engine.service.planning.curves long table)."""
    fig = go.Figure()
    for i, (name, rows) in enumerate(curve.sort_values("gpus").groupby("workload_class", sort=True)):
        colour = PALETTE[i % len(PALETTE)]
        fig.add_trace(go.Scatter(x=rows["gpus"], y=rows["p95_h"].clip(lower=MIN_WAIT_H), mode="lines+markers",
                                 name=name, legendgroup=name, line=dict(color=colour, width=2),
                                 hovertemplate="%{x:,} GPUs<br>p95 wait %{y:.2f} h<extra>" + esc(name) + "</extra>"))
        if name in targets:
            fig.add_trace(go.Scatter(x=[rows["gpus"].min(), rows["gpus"].max()], y=[targets[name]] * 2, mode="lines",
                                     name=f"{name} target", legendgroup=name, showlegend=False,
                                     line=dict(color=colour, width=1, dash="dot"),
                                     hovertemplate=f"target {targets[name]:g} h<extra>{esc(name)}</extra>"))
    _marks(fig, marks)
    fig.update_yaxes(title_text="p95 wait (log)", type="log", tickvals=list(WAIT_TICKS),
                     ticktext=list(WAIT_TICKS.values()))
    fig.update_xaxes(title_text="fleet GPUs")
    return _layout(fig, "p95 wait by workload class as the fleet grows (dotted: target)")


def cost_curve(points: pd.DataFrame, marks: dict[str, tuple[float, float]]) -> go.Figure:
    """Cost per year and the share of classes meeting their target against fleet GPUs; `marks`
    (label -> (GPUs, USD per year)) are the named fleets (today, plan) as labelled points.
    `points`: gpus, cost_usd_per_year, attainment (0-1)."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    points = points.sort_values("gpus")
    fig.add_trace(go.Scatter(x=points["gpus"], y=points["cost_usd_per_year"], mode="lines+markers",
                             name="cost (today's mix, scaled)", line=dict(color=PALETTE[0], width=2),
                             hovertemplate="%{x:,} GPUs<br>$%{y:,.0f} per year<extra></extra>"), secondary_y=False)
    fig.add_trace(go.Scatter(x=points["gpus"], y=100 * points["attainment"], mode="lines+markers",
                             name="classes meeting their target", line=dict(color=PALETTE[2], width=2, dash="dash"),
                             hovertemplate="%{x:,} GPUs<br>%{y:.0f}% of classes meet their target<extra></extra>"),
                  secondary_y=True)
    for i, (label, (gpus, usd)) in enumerate(marks.items()):
        fig.add_trace(go.Scatter(x=[gpus], y=[usd], mode="markers+text", text=[label], textposition="top center",
                                 name=label, marker=dict(size=12, symbol="diamond", color=PALETTE[3 + i]),
                                 hovertemplate=f"{esc(label)}<br>%{{x:,}} GPUs<br>$%{{y:,.0f}} per year<extra></extra>"),
                      secondary_y=False)
    fig.update_yaxes(title_text="cost (USD per year)", rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title_text="classes meeting target (%)", range=[0, 105], dtick=20, showgrid=False,
                     secondary_y=True)
    fig.update_xaxes(title_text="fleet GPUs")
    return _layout(fig, "Cost and SLO attainment as the fleet grows")


def fleet_bars(change: pd.DataFrame) -> go.Figure:
    """GPUs per pool (region / GPU type), stacked by tier, today's bar beside the plan's.
    `change`: engine.service.planning.summary.fleet_comparison."""
    pools = change["region"] + " " + change["gpu_type"]
    fig = go.Figure()
    for tier, colour in TIER_COLOURS.items():
        column = tier.replace("-", "_")
        for which, opacity in (("today", 0.45), ("plan", 1.0)):
            fig.add_trace(go.Bar(x=[pools, [which] * len(pools)], y=change[f"{which}_{column}"], name=tier,
                                 legendgroup=tier, showlegend=which == "plan", marker_color=colour, opacity=opacity,
                                 hovertemplate="%{x}<br>%{y:,} " + tier + " GPUs<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="GPUs")
    return _layout(fig, "GPUs by region and type: today (pale) and the plan, by pricing tier", height=440)


def _marks(fig: go.Figure, marks: dict[str, float]) -> None:
    for i, (label, gpus) in enumerate(marks.items()):
        fig.add_vline(x=gpus, line=dict(color="#555", width=1, dash="dash"),
                      annotation=dict(text=esc(label), yshift=12 * i), annotation_position="top right")
