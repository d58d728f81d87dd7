"""Chart builders for the Cost & carbon page: cost and carbon reports in, plotly Figures out (no Streamlit).

Every figure uses the explicit `plotly_white` template (as dashboard.charts), so it looks the same in
the browser and in exported images. Dollars in USD, emissions in kgCO2e.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.charts.base import LEGEND_RIGHT, PALETTE, layout
from engine.core.escaping import plotly_text as esc

# Stacked spend parts: (label, colour). Reserved GPUs are paid whether used or not, so their
# dollars split into the part jobs used and the idle part; on-demand and spot are paid only in use;
# rented cloud burst nodes from renting to return (engine.sim.processes.burst), shown only when some run rented.
SPEND_PARTS = (("reserved, used", "#1f4e79"), ("reserved, idle", "#d9a19a"), ("on-demand", "#ff7f0e"),
               ("spot", "#2ca02c"), ("cloud burst", "#9467bd"))
CARBON_SCALE = "YlOrRd"


def _layout(fig: go.Figure, title: str, height: int = 400) -> go.Figure:
    """These charts sit two to a row, so the legend goes to the right of the plot."""
    return layout(fig, title, height, LEGEND_RIGHT)


def spend_parts(spend: pd.DataFrame, key: str) -> pd.DataFrame:
    """USD per `key` value (rows, sorted) and SPEND_PARTS label (columns) from a CostReport.spend table:
    reserved used = usd - idle_usd of the reserved tier, reserved idle = its idle_usd."""
    tier = spend["tier"].to_numpy()
    usd, idle = spend["usd"].to_numpy(np.float64), spend["idle_usd"].to_numpy(np.float64)
    parts = pd.DataFrame({key: spend[key].to_numpy(),
                          "reserved, used": np.where(tier == "reserved", usd - idle, 0.0),
                          "reserved, idle": np.where(tier == "reserved", idle, 0.0),
                          "on-demand": np.where(tier == "on-demand", usd, 0.0),
                          "spot": np.where(tier == "spot", usd, 0.0),
                          "cloud burst": np.where(tier == "burst", usd, 0.0)})
    return parts.groupby(key, sort=True)[[label for label, _ in SPEND_PARTS]].sum()


def _short_usd(value: float) -> str:
    """$ with k / M suffixes above ten thousand, so bar labels stay narrow."""
    if abs(value) >= 1e6:
        return f"${value / 1e6:,.2f}M" if abs(value) < 1e7 else f"${value / 1e6:,.1f}M"
    return f"${value / 1e3:,.0f}k" if abs(value) >= 1e4 else f"${value:,.2f}" if abs(value) < 100 else f"${value:,.0f}"


def _stacked(parts: pd.DataFrame, title: str, axis_title: str) -> go.Figure:
    fig = go.Figure()
    labels = [str(x) for x in parts.index]
    for label, colour in SPEND_PARTS:
        if label == "cloud burst" and not parts[label].any():
            continue  # bursting is opt-in: no legend entry for a part no scenario has
        fig.add_trace(go.Bar(x=labels, y=parts[label], name=label, marker_color=colour,
                             hovertemplate="%{x}<br>$%{y:,.0f}<extra>" + label + "</extra>"))
    totals = parts.sum(axis=1)
    fig.add_trace(go.Scatter(x=labels, y=totals, mode="text", text=[_short_usd(v) for v in totals],
                             textposition="top center", showlegend=False, hoverinfo="skip"))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="spend (USD)", rangemode="tozero", range=[0, 1.15 * max(totals.max(), 1e-9)])
    fig.update_xaxes(title_text=axis_title)
    return _layout(fig, title)


def spend_by_region(spend: pd.DataFrame, scenario: str) -> go.Figure:
    """Stacked bars per region: reserved used / reserved idle / on-demand / spot dollars."""
    return _stacked(spend_parts(spend, "region"), f"Spend by region and tier · {esc(scenario)}", "region")


def spend_by_scenario(spends: dict[str, pd.DataFrame]) -> go.Figure:
    """Stacked bars per scenario (in the given order) of the same four parts, from each CostReport.spend."""
    parts = pd.DataFrame({name: spend_parts(spend, "tier").sum() for name, spend in spends.items()}).T
    return _stacked(parts, "Spend by tier, per scenario", "scenario")


def carbon_by_region(by_region: pd.DataFrame, scenario: str) -> go.Figure:
    """Bars of kgCO2e per region, coloured by its energy-weighted grid intensity (gCO2e/kWh)."""
    rows = by_region.sort_values("region", kind="stable")
    fig = go.Figure(go.Bar(
        x=rows["region"], y=rows["kg_co2e"], text=[f"{v:,.0f}" for v in rows["kg_co2e"]], textposition="outside",
        customdata=np.stack([rows["g_co2e_per_kwh"], rows["kwh"]], axis=1),
        marker=dict(color=rows["g_co2e_per_kwh"], colorscale=CARBON_SCALE, cmin=0,
                    colorbar=dict(title="gCO2e/kWh", thickness=12)),
        hovertemplate="%{x}<br>%{y:,.1f} kgCO2e<br>%{customdata[1]:,.0f} kWh at %{customdata[0]:,.0f} "
                      "gCO2e/kWh<extra></extra>"))
    fig.update_yaxes(title_text="emissions (kgCO2e)", rangemode="tozero",
                     range=[0, 1.15 * max(float(rows["kg_co2e"].max() or 0.0), 1e-9)])
    fig.update_xaxes(title_text="region")
    return _layout(fig, f"Carbon by region · {esc(scenario)}")


def carbon_by_local_hour(by_local_hour: pd.DataFrame, scenario: str) -> go.Figure:
    """Stacked bars of kgCO2e by local hour of day (each region's own clock), one colour per region."""
    fig = go.Figure()
    for i, (region, rows) in enumerate(by_local_hour.groupby("region", sort=True)):
        rows = rows.sort_values("local_hour", kind="stable")
        fig.add_trace(go.Bar(x=rows["local_hour"], y=rows["kg_co2e"], name=str(region),
                             marker_color=PALETTE[i % len(PALETTE)],
                             hovertemplate="%{x}:00 local<br>%{y:,.1f} kgCO2e<extra>" + esc(region) + "</extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text="local hour of day (each region's own clock)", tickmode="array",
                     tickvals=list(range(0, 24, 3)), ticktext=[f"{h:02d}:00" for h in range(0, 24, 3)])
    fig.update_yaxes(title_text="emissions (kgCO2e)", rangemode="tozero")
    return _layout(fig, f"Carbon by local hour · {esc(scenario)}")


def tradeoff(points: pd.DataFrame) -> go.Figure:
    """Scenarios as points: x = cost_usd, y = wait_p95_h, marker size and colour = carbon_kg; `scenario`
    labels each point."""
    carbon = points["carbon_kg"].to_numpy(np.float64)
    top = max(float(carbon.max()), 1e-9) if len(carbon) else 1.0
    sizes = 18 + 32 * np.sqrt(carbon / top)
    fig = go.Figure(go.Scatter(
        x=points["cost_usd"], y=points["wait_p95_h"], mode="markers+text", text=points["scenario"],
        textposition="middle right", textfont=dict(size=13), customdata=carbon,
        marker=dict(size=sizes, color=carbon, colorscale=CARBON_SCALE, cmin=0, cmax=top,
                    line=dict(width=1, color="#333"), colorbar=dict(title="kgCO2e", thickness=12)),
        hovertemplate="%{text}<br>$%{x:,.0f}<br>p95 wait %{y:,.2f} h<br>%{customdata:,.0f} kgCO2e<extra></extra>"))
    for axis, column in ((fig.update_xaxes, "cost_usd"), (fig.update_yaxes, "wait_p95_h")):
        low, high = float(points[column].min()), float(points[column].max())
        pad = max(0.25 * (high - low), 0.1 * abs(high), 1e-6)
        axis(range=[max(low - pad, 0.0) if low >= 0 else low - pad, high + pad])
    fig.update_xaxes(title_text="spend over the window (USD)", tickprefix="$", separatethousands=True)
    fig.update_yaxes(title_text="p95 queue wait (h)")
    return _layout(fig, "Cost, wait and carbon trade-off (lower left is better; smaller, paler dots emit less)",
                   height=420)
