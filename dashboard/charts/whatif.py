"""The What-if page's charts: scenario lines over time, wait CDFs by class per scenario, busy and idle
GPUs by region, and stranded capacity (run-result DataFrames in, plotly Figures out; no Streamlit)."""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.base import LEGEND_ABOVE, MIN_WAIT_H, PALETTE, WAIT_TICKS, layout
from engine.core.escaping import plotly_text as esc

LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.12, xanchor="left", x=0.0)


def _layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    return layout(fig, title, height, LEGEND_ABOVE, top=80)


def scenario_lines(series: dict[str, pd.DataFrame], value: str, title: str, axis_title: str,
                   percent: bool = False) -> go.Figure:
    """One step line per scenario of `value` (a fleet_series column) against time_utc."""
    fig = go.Figure()
    for i, (name, rows) in enumerate(series.items()):
        y = 100 * rows[value] if percent else rows[value]
        fig.add_trace(go.Scatter(
            x=rows["time_utc"], y=y, name=name, mode="lines",
            line=dict(shape="hv", width=1.5, color=PALETTE[i % len(PALETTE)]),
            hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:,.1f}<extra>" + esc(name) + "</extra>"))
    fig.update_yaxes(title_text=axis_title, rangemode="tozero")
    fig.update_xaxes(title_text="time (UTC)")
    return _layout(fig, title)


def scenario_wait_ecdfs(ecdfs: dict[str, pd.DataFrame]) -> go.Figure:
    """Wait CDF by workload class, one panel per scenario (columns of sim_series.wait_ecdf), log x axis;
    a class keeps its colour across panels."""
    names = list(ecdfs)
    classes = sorted({str(c) for e in ecdfs.values() for c in e["workload_class"]})
    colours = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(classes)}
    fig = make_subplots(rows=1, cols=max(1, len(names)), subplot_titles=[esc(n) for n in names] or [""], shared_yaxes=True,
                        horizontal_spacing=0.04)
    for col, name in enumerate(names, start=1):
        for cls, rows in ecdfs[name].groupby("workload_class", sort=True):
            fig.add_trace(go.Scatter(
                x=(rows["wait_s"] / 3600).clip(lower=MIN_WAIT_H), y=100 * rows["fraction"], name=str(cls),
                legendgroup=str(cls), showlegend=col == 1, mode="lines",
                line=dict(shape="hv", color=colours[str(cls)]),
                hovertemplate="%{y:.0f}% waited at most %{x:.2f} h<extra>" + esc(f"{cls} · {name}") + "</extra>"),
                row=1, col=col)
    fig.update_xaxes(type="log", tickvals=list(WAIT_TICKS), ticktext=list(WAIT_TICKS.values()),
                     title_text="queue wait (log)")
    fig.update_yaxes(range=[0, 101])
    fig.update_yaxes(title_text="jobs started within (%)", row=1, col=1)
    fig.update_annotations(font_size=12)
    _layout(fig, "Queue wait by workload class", height=420)
    fig.update_layout(margin=dict(t=110), legend=dict(y=1.1))
    return fig


def scenario_region_gpus(series: dict[str, pd.DataFrame], columns: int = 2) -> go.Figure:
    """Busy (solid) and idle (dotted) GPUs over time, one panel per region, one colour per scenario
    (columns of sim_series.region_series)."""
    names = list(series)
    regions = sorted({str(r) for s in series.values() for r in s["region"]})
    columns = max(1, min(columns, len(regions)))
    rows = math.ceil(len(regions) / columns) or 1
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[esc(r) for r in regions] or [""], shared_xaxes=True,
                        horizontal_spacing=0.06, vertical_spacing=0.25 / rows)
    for i, region in enumerate(regions):
        row, col = i // columns + 1, i % columns + 1
        for j, name in enumerate(names):
            panel = series[name][series[name]["region"].astype(str) == region]
            for value, dash in (("busy_gpus", "solid"), ("idle_gpus", "dot")):
                label = f"{name} · {value.removesuffix('_gpus')}"
                fig.add_trace(go.Scatter(
                    x=panel["time_utc"], y=panel[value], name=label, legendgroup=label, showlegend=i == 0,
                    mode="lines", line=dict(shape="hv", width=1.3, dash=dash, color=PALETTE[j % len(PALETTE)]),
                    hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:,.1f} GPUs<extra>" + esc(f"{label} · {region}")
                                  + "</extra>"),
                    row=row, col=col)
    fig.update_xaxes(showticklabels=True)
    fig.update_yaxes(rangemode="tozero")
    fig.update_yaxes(title_text="GPUs", col=1)
    fig.update_annotations(font_size=12)
    _layout(fig, "Busy and idle GPUs by region", height=140 + 220 * rows)
    fig.update_layout(margin=dict(t=70, b=70), legend=dict(yref="container", y=0.0, yanchor="bottom"))
    return fig


STRANDED_PARTS = (("order", "in its region (order, no backfilling)", "#d62728"),
                  ("elsewhere", "in another region it may use", "#ff7f0e"),
                  ("fragmented", "in fragments no waiting job fits", "#9467bd"))


def stranded_parts(kpis: dict[str, dict]) -> go.Figure:
    """Per scenario (name -> KPIs), its stranded GPU-hours stacked by part (engine.analysis.runs.stranded)."""
    names = list(kpis)
    fig = go.Figure()
    for part, label, colour in STRANDED_PARTS:
        fig.add_trace(go.Bar(x=names, y=[kpis[n][f"stranded_{part}_gpu_hours"] for n in names], name=label,
                             marker_color=colour, hovertemplate="%{x}: %{y:,.0f} GPU-hours<extra>" + esc(label)
                             + "</extra>"))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="stranded GPU-hours", rangemode="tozero")
    # the legend below the bars: its three long names, stacked in half the page's width, covered the title above
    fig = layout(fig, "GPU-hours idle while a waiting job could have used them", 440, LEGEND_BELOW, top=60)
    return fig.update_layout(margin_b=90)


def stranded_timeline(tables: dict[str, pd.DataFrame], origins: dict[str, pd.Timestamp]) -> go.Figure:
    """One line per scenario: GPUs stranded (the three parts, every region) at each sample instant."""
    fig = go.Figure()
    for i, (name, table) in enumerate(tables.items()):
        total = table.assign(gpus=table[[f"{p}_gpus" for p, _, _ in STRANDED_PARTS]].sum(axis=1)).groupby(
            "time_s", sort=True)["gpus"].sum()
        fig.add_trace(go.Scatter(x=origins[name] + pd.to_timedelta(total.index, unit="s"), y=total.to_numpy(),
                                 name=name, mode="lines",
                                 line=dict(shape="hv", width=1.4, color=PALETTE[i % len(PALETTE)]),
                                 hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:,.1f} GPUs stranded<extra>" + esc(name)
                                 + "</extra>"))
    fig.update_yaxes(title_text="GPUs stranded", rangemode="tozero")
    fig.update_xaxes(title_text="time (UTC)")
    return _layout(fig, "Stranded GPUs over time")
