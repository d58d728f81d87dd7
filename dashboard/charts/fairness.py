"""Chart builders for the Teams & fairness page: fairness tables in, plotly Figures out (no Streamlit).

Every figure uses the explicit `plotly_white` template (as dashboard.charts), so it looks the same in
the browser and in exported images. Shares are fractions drawn as percent, waits in hours.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import LEGEND_RIGHT, PALETTE, layout
from engine.core.escaping import plotly_text as esc

HOUR_S = 3600.0
SCENARIO_COLOURS = ("#9aa5b1", "#1f77b4")  # baseline grey, scenario blue


def _layout(fig: go.Figure, title: str, height: int = 400) -> go.Figure:
    return layout(fig, title, height, LEGEND_RIGHT)


def share_vs_entitlement(shares: pd.DataFrame, origin_utc: pd.Timestamp, title: str) -> go.Figure:
    """One solid line per team: its share of the GPUs held in each step (engine.analysis.runs.fairness
    share_over_time), and a dotted line of the same colour at its entitlement."""
    fig = go.Figure()
    time_utc = origin_utc + pd.to_timedelta(shares["time_s"].to_numpy(), unit="s")
    frame = shares.assign(time_utc=time_utc)
    for i, (team, rows) in enumerate(frame.groupby("team", sort=True)):
        colour = PALETTE[i % len(PALETTE)]
        name = str(team) or "(none)"
        fig.add_trace(go.Scatter(x=rows["time_utc"], y=100 * rows["share"], mode="lines", name=name,
                                 legendgroup=name, line=dict(color=colour, width=1.6),
                                 hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:.1f}% of GPUs held<extra>"
                                               + esc(name) + "</extra>"))
        fig.add_trace(go.Scatter(x=rows["time_utc"], y=100 * rows["entitlement"], mode="lines", name=name,
                                 legendgroup=name, showlegend=False, line=dict(color=colour, width=1, dash="dot"),
                                 hovertemplate="entitled to %{y:.1f}%<extra>" + esc(name) + "</extra>"))
    fig.update_yaxes(title_text="share of GPUs held (%)", rangemode="tozero")
    fig.update_xaxes(title_text="time (UTC)")
    return _layout(fig, title, height=440)


def team_waits(tables: dict[str, pd.DataFrame]) -> go.Figure:
    """p95 wait per team (engine.analysis.runs.fairness team_table), one bar group per team and one bar per
    scenario (baseline first), hours."""
    fig = go.Figure()
    for i, (name, table) in enumerate(tables.items()):
        teams = table["team"].astype(str).replace("", "(none)")
        fig.add_trace(go.Bar(x=teams, y=table["wait_p95_s"] / HOUR_S, name=name,
                             marker_color=SCENARIO_COLOURS[i % len(SCENARIO_COLOURS)],
                             customdata=table["wait_mean_s"] / HOUR_S,
                             hovertemplate="%{x}<br>p95 wait %{y:.2f} h<br>mean wait %{customdata:.2f} h<extra>"
                                           + esc(name) + "</extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="p95 wait (h)", rangemode="tozero")
    fig.update_xaxes(title_text="team")
    return _layout(fig, "Waits by team: p95 wait before the first start")


def factor_bars(factors: pd.DataFrame) -> go.Figure:
    """The weighted priority factors of one job (engine.analysis.runs.job_story factor_table, without its
    "total" row), one bar group per factor and one bar per moment (submitted, started, ...)."""
    fig = go.Figure()
    parts = factors[factors["factor"] != "total"]
    moments = [c for c in factors.columns if c not in ("factor", "weight")]
    for i, moment in enumerate(moments):
        fig.add_trace(go.Bar(x=parts["factor"], y=parts[moment], name=f"at {moment}" if moment != "window end"
                             else "at the window end", marker_color=PALETTE[i % len(PALETTE)],
                             hovertemplate="%{x}: %{y:,.1f}<extra>" + esc(moment) + "</extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="weighted factor (priority points)", rangemode="tozero")
    return _layout(fig, "Priority factors (weight x factor; the priority is their sum)", height=340)
