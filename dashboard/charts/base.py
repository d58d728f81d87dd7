"""The look every chart shares: template, palette, title at the left, where the legend goes, and the
axes several pages draw (weekday names, the log wait axis)."""
from __future__ import annotations

import plotly.graph_objects as go

TEMPLATE = "plotly_white"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
LEGEND_ABOVE = dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0)
LEGEND_RIGHT = dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.02)  # charts two to a row
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MIN_WAIT_H = 1 / 60  # waits below one minute are drawn at one minute on the log axis
WAIT_TICKS = {1 / 60: "1 min", 10 / 60: "10 min", 1: "1 h", 10: "10 h", 100: "100 h", 1000: "1000 h"}


def layout(fig: go.Figure, title: str, height: int, legend: dict = LEGEND_ABOVE, top: int = 60) -> go.Figure:
    """`fig` with the shared template, `title` at the top left, `height` px, `top` px above the plot."""
    fig.update_layout(template=TEMPLATE, title=dict(text=title, x=0.0, xanchor="left"), height=height,
                      margin=dict(l=10, r=10, t=top, b=10), legend=legend)
    return fig
