"""The Optimise page's charts: the trade-off a study found (a 2-D front with every trial behind it, a
3-D front for three objectives, parallel coordinates for more) and its hypervolume by generation.

`points` is a frame with one row per trial and the baseline: name, kind ("front", "trial",
"infeasible", "baseline") and one column per objective in display units (engine.analysis.runs.catalogue
formats: seconds shown as hours, 0-1 shares as percentages). No Streamlit here.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import LEGEND_ABOVE, PALETTE, layout
from engine.core.escaping import plotly_text as esc

STYLE = {"trial": ("trials", "#c7c7c7", "circle", 7), "infeasible": ("breaks a constraint", "#f4a6a6", "x", 7),
         "front": ("front", PALETTE[0], "circle", 10), "baseline": ("baseline (the base scenario)", PALETTE[3],
                                                                    "star", 16)}


def _layout(fig: go.Figure, title: str, height: int = 460) -> go.Figure:
    return layout(fig, title, height, LEGEND_ABOVE, top=80)


def _hover(rows: pd.DataFrame, columns: list[str]) -> list[str]:
    return ["<br>".join([esc(name)] + [f"{esc(c)}: {row[c]:,.4g}" for c in columns])
            for name, (_, row) in zip(rows["name"], rows.iterrows())]


def front_2d(points: pd.DataFrame, x: str, y: str) -> go.Figure:
    """Objective `y` against objective `x`: every trial, the front, the baseline."""
    fig = go.Figure()
    for kind, (label, colour, symbol, size) in STYLE.items():
        rows = points[points["kind"] == kind]
        if len(rows):
            fig.add_trace(go.Scatter(x=rows[x], y=rows[y], mode="markers", name=label, text=_hover(rows, [x, y]),
                                     hoverinfo="text", marker=dict(color=colour, symbol=symbol, size=size)))
    fig.update_xaxes(title_text=esc(x))
    fig.update_yaxes(title_text=esc(y))
    return _layout(fig, f"{esc(y)} against {esc(x)}: the front and every trial")


def front_3d(points: pd.DataFrame, axes: list[str]) -> go.Figure:
    """Three objectives in 3-D: the front and the baseline (other trials faint)."""
    fig = go.Figure()
    for kind, (label, colour, symbol, size) in STYLE.items():
        rows = points[points["kind"] == kind]
        if len(rows):
            fig.add_trace(go.Scatter3d(
                x=rows[axes[0]], y=rows[axes[1]], z=rows[axes[2]], mode="markers", name=label,
                text=_hover(rows, axes), hoverinfo="text",
                marker=dict(color=colour, size=size / 2, symbol="diamond" if symbol == "star" else "circle")))
    fig.update_layout(scene=dict(xaxis_title=esc(axes[0]), yaxis_title=esc(axes[1]), zaxis_title=esc(axes[2])))
    return _layout(fig, "The front in three objectives", height=560)


def parallel(points: pd.DataFrame, objectives: list[str]) -> go.Figure:
    """One line per front trial and the baseline (red) across every objective's axis."""
    rows = points[points["kind"].isin(["front", "baseline"])].reset_index(drop=True)
    colour = (rows["kind"] == "baseline").astype(float)
    fig = go.Figure(go.Parcoords(
        line=dict(color=colour, colorscale=[[0, PALETTE[0]], [1, PALETTE[3]]], cmin=0, cmax=1),
        dimensions=[dict(label=esc(c), values=rows[c]) for c in objectives]))
    _layout(fig, "Every objective of the front (blue) and the baseline (red)", height=440)
    fig.update_layout(margin=dict(l=70, r=70, t=110, b=30))  # room for the outer axes' labels
    return fig


def hypervolume(history: list[float]) -> go.Figure:
    """The hypervolume of the front after each generation."""
    fig = go.Figure(go.Scatter(x=list(range(len(history))), y=history, mode="lines+markers",
                               line=dict(color=PALETTE[2]), hovertemplate="generation %{x}: %{y:.3f}<extra></extra>"))
    fig.update_xaxes(title_text="generation", dtick=1)
    fig.update_yaxes(title_text="hypervolume (scaled objectives)", rangemode="tozero")
    return _layout(fig, "Progress: the front's hypervolume by generation", height=320)
