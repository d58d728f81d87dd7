"""Chart builders for the Agents page and the Fidelity page's RL section: learning curves and test
sequences in, plotly Figures out (no Streamlit). Bounded slowdowns on log axes (they span 1 to 10^4)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import PALETTE, layout
from engine.core.escaping import plotly_text as esc

SERIES = {"bsld": ("agent (sampling)", PALETTE[0], "solid"), "bsld_SJF": ("SJF, same windows", PALETTE[1], "dot"),
          "bsld_F1": ("F1, same windows", PALETTE[2], "dash"),
          "validation_bsld": ("agent, validation windows (greedy)", PALETTE[3], "solid")}


def learning_curve(curve: list[dict]) -> go.Figure:
    """Mean average bounded slowdown per training epoch: the agent (sampling, as it trains) and SJF and
    F1 replayed on the epoch's windows, and the agent played greedily on the fixed validation windows
    (epoch 0: after copying a heuristic, before any PPO epoch)."""
    frame = pd.DataFrame([p for p in curve if "bsld" in p or "validation_bsld" in p])
    fig = go.Figure()
    for column, (name, color, dash) in SERIES.items():
        if column in frame:
            fig.add_trace(go.Scatter(x=frame["epoch"], y=frame[column], mode="lines+markers", name=name,
                                     line=dict(color=color, dash=dash), marker=dict(size=5),
                                     hovertemplate=f"epoch %{{x}}<br>{name}: %{{y:.2f}}<extra></extra>"))
    fig.update_xaxes(title_text="epoch")
    fig.update_yaxes(title_text="mean average bounded slowdown (lower is better)", type="log")
    return layout(fig, "Learning curve: each epoch's training windows, and the validation windows", 400)


def sequences(frame: pd.DataFrame, title: str) -> go.Figure:
    """Average bounded slowdown per test sequence (rows: start and one column per order, "agent" first);
    `title` is data-derived text (agent and log names) and is escaped here."""
    fig = go.Figure()
    orders = [c for c in frame.columns if c != "start"]
    for k, order in enumerate(orders):
        fig.add_trace(go.Bar(x=frame["start"].astype(str), y=frame[order], name=order,
                             marker_color=PALETTE[k % len(PALETTE)],
                             hovertemplate=f"sequence from job %{{x}}<br>{order}: %{{y:.2f}}<extra></extra>"))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="test sequence (first job)", type="category")
    fig.update_yaxes(title_text="average bounded slowdown", type="log")
    return layout(fig, esc(title), 360)
