"""The What-if page's relaxation chart: jobs that had each soft constraint relaxed, per scenario
(engine.analysis.runs.relaxation.by_constraint tables in, a plotly Figure out; no Streamlit)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import LEGEND_ABOVE, PALETTE, layout
from engine.core.escaping import plotly_text as esc


def relaxed_jobs(tables: dict[str, pd.DataFrame]) -> go.Figure:
    """Grouped bars: per constraint (x), the jobs that had it relaxed under each scenario (one colour each)."""
    fig = go.Figure()
    for i, (name, table) in enumerate(tables.items()):
        fig.add_trace(go.Bar(x=table["constraint"], y=table["jobs"], name=name, marker_color=PALETTE[i % len(PALETTE)],
                             customdata=100 * table["share"],
                             hovertemplate="%{x}: %{y:,} jobs (%{customdata:.1f} % of all)<extra>" + esc(name)
                             + "</extra>"))
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="jobs relaxed", rangemode="tozero")
    fig.update_xaxes(title_text="soft constraint")
    return layout(fig, "Jobs that had each soft constraint relaxed", 360, LEGEND_ABOVE, top=80)
