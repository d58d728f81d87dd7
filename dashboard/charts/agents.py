"""Chart builders for the Agents page and the Fidelity page's RL section: learning curves and test
sequences in, plotly Figures out (no Streamlit). Bounded slowdowns on log axes (they span 1 to 10^4)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import PALETTE, layout

SERIES = {"bsld": ("agent", PALETTE[0], "solid"), "bsld_SJF": ("SJF, same windows", PALETTE[1], "dot"),
          "bsld_F1": ("F1, same windows", PALETTE[2], "dash")}


def learning_curve(curve: list[dict]) -> go.Figure:
    """Mean average bounded slowdown per training epoch: the agent (sampling, as it trains) and SJF and
    F1 replayed on the epoch's windows. Epoch 0, the copy of a heuristic, has no sampled episodes."""
    frame = pd.DataFrame([p for p in curve if p.get("epoch", 0) > 0 and "bsld" in p])
    fig = go.Figure()
    for column, (name, color, dash) in SERIES.items():
        if column in frame:
            fig.add_trace(go.Scatter(x=frame["epoch"], y=frame[column], mode="lines+markers", name=name,
                                     line=dict(color=color, dash=dash), marker=dict(size=5),
                                     hovertemplate=f"epoch %{{x}}<br>{name}: %{{y:.2f}}<extra></extra>"))
    fig.update_xaxes(title_text="epoch")
    fig.update_yaxes(title_text="mean average bounded slowdown (lower is better)", type="log")
    return layout(fig, "Learning curve: each epoch's training windows", 380)


def sequences(frame: pd.DataFrame, title: str) -> go.Figure:
    """Average bounded slowdown per test sequence (rows: start and one column per order)."""
    fig = go.Figure()
    orders = [c for c in frame.columns if c not in ("start", "log", "backfill", "agent")]
    for k, order in enumerate(orders):
        fig.add_trace(go.Bar(x=frame["start"].astype(str), y=frame[order], name=order,
                             marker_color=PALETTE[k % len(PALETTE)],
                             hovertemplate=f"sequence from job %{{x}}<br>{order}: %{{y:.2f}}<extra></extra>"))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="test sequence (first job)", type="category")
    fig.update_yaxes(title_text="average bounded slowdown", type="log")
    return layout(fig, title, 360)
