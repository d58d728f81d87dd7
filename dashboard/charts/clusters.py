"""The What-if page's chart by cluster: one bar per cluster and scenario of a by-cluster table's column
(engine.analysis.runs.clusters; DataFrames in, a plotly Figure out; no Streamlit)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import LEGEND_ABOVE, PALETTE, layout
from engine.analysis.runs.catalogue import CATALOGUE
from engine.core.escaping import plotly_text as esc


def cluster_bars(tables: dict[str, pd.DataFrame], value: str) -> go.Figure:
    """Grouped bars: x the clusters ("region / cluster"), one trace per scenario, y its `value` (a
    catalogue key of the "cluster" group: a share as %, seconds as hours)."""
    kpi = CATALOGUE[value]
    scale, axis = {"pct": (100.0, "%"), "duration": (1 / 3600.0, "h")}.get(kpi.fmt, (1.0, kpi.unit))
    fig = go.Figure()
    for i, (name, table) in enumerate(tables.items()):
        x = [f"{r} / {c}" for r, c in zip(table["region"], table["cluster"])]
        fig.add_trace(go.Bar(x=x, y=table[value] * scale, name=name, marker_color=PALETTE[i % len(PALETTE)],
                             hovertemplate="%{x}<br>%{y:,.1f} " + esc(axis) + "<extra>" + esc(name) + "</extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text=f"{kpi.label} ({axis})", rangemode="tozero")
    fig.update_xaxes(title_text="region / cluster", tickangle=-45)
    return layout(fig, f"{kpi.label} by cluster", 420, LEGEND_ABOVE, top=80)
