"""The Overview page's charts: utilisation over time, the hour-of-week heatmap, idle hours by region, the wait CDF and the job mix (analysis DataFrames in, plotly Figures out; no Streamlit)."""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.base import LEGEND_ABOVE, MIN_WAIT_H, PALETTE, WAIT_TICKS, WEEKDAYS, layout
from engine.core.escaping import plotly_text as esc

HEAT_SCALE = "RdYlBu"  # red = idle, blue = busy; readable with red-green colour blindness


def _layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    return layout(fig, title, height, LEGEND_ABOVE, top=80)


def utilisation_timeline(timeline: pd.DataFrame, fleet: pd.DataFrame | None = None,
                         title: str = "Fleet utilisation over time") -> go.Figure:
    """One line per region, utilisation_pct against bin_start_utc; `fleet` (same columns) as a bold line."""
    fig = go.Figure()
    if fleet is not None and not fleet.empty:
        fig.add_trace(go.Scatter(
            x=fleet["bin_start_utc"], y=fleet["utilisation_pct"], name="whole fleet",
            mode="lines" if len(fleet) > 48 else "lines+markers",
            line=dict(width=3, color="#1b2430"),
            hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:.1f}%<extra>whole fleet</extra>"))
    for i, (region, rows) in enumerate(timeline.groupby("region", sort=True)):
        fig.add_trace(go.Scatter(
            x=rows["bin_start_utc"], y=rows["utilisation_pct"], name=str(region),
            mode="lines" if len(rows) > 48 else "lines+markers",
            line=dict(width=1.2, color=PALETTE[i % len(PALETTE)]), opacity=0.75,
            hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:.1f}%<extra>" + esc(region) + "</extra>"))
    fig.update_yaxes(title_text="utilisation (%)", rangemode="tozero")
    fig.update_xaxes(title_text="time (UTC)")
    return _layout(fig, title)


def hour_of_week_heatmap(cells: pd.DataFrame, columns: int = 4) -> go.Figure:
    """A grid of heat maps, one per region: y = local weekday, x = local hour, colour = utilisation."""
    regions = list(dict.fromkeys(cells["region"]))
    columns = max(1, min(columns, len(regions)))
    rows = math.ceil(len(regions) / columns) or 1
    zones = cells.drop_duplicates("region").set_index("region")["timezone"]
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[esc(f"{r} ({zones[r]})") for r in regions],
                        horizontal_spacing=0.035, vertical_spacing=0.3 / rows)
    for i, region in enumerate(regions):
        grid = (cells[cells["region"] == region]
                .pivot_table(index="weekday", columns="local_hour", values="utilisation_pct", aggfunc="first")
                .reindex(index=range(7), columns=range(24)))
        fig.add_trace(go.Heatmap(
            z=grid.to_numpy(), x=list(range(24)), y=list(WEEKDAYS), coloraxis="coloraxis",
            hovertemplate="%{y} %{x}:00 local<br>%{z:.1f}%<extra>" + esc(region) + "</extra>"),
            row=i // columns + 1, col=i % columns + 1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(tickvals=[0, 6, 12, 18], ticktext=["00", "06", "12", "18"])
    fig.update_layout(coloraxis=dict(colorscale=HEAT_SCALE, cmin=0, cmax=100,
                                     colorbar=dict(title="util %", thickness=12)))
    fig.update_annotations(font_size=12)
    return _layout(fig, "Utilisation by hour of week, in each region's local time", height=120 + 230 * rows)


def idle_bars(idle: pd.DataFrame, value: str, title: str, axis_title: str) -> go.Figure:
    """Bars per region, stacked by GPU type, of `value` (e.g. idle_gpu_hours)."""
    fig = go.Figure()
    for i, (gpu_type, rows) in enumerate(idle.groupby("gpu_type", sort=True)):
        fig.add_trace(go.Bar(x=rows["region"], y=rows[value], name=str(gpu_type),
                             marker_color=PALETTE[i % len(PALETTE)]))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(categoryorder="total descending")
    fig.update_yaxes(title_text=axis_title)
    return _layout(fig, title)


def wait_ecdf(ecdf: pd.DataFrame) -> go.Figure:
    """Share of jobs that started within x hours, one line per workload class, log x axis."""
    fig = go.Figure()
    for i, (cls, rows) in enumerate(ecdf.groupby("workload_class", sort=False)):
        fig.add_trace(go.Scatter(
            x=rows["wait_h"].clip(lower=MIN_WAIT_H), y=100 * rows["share"], name=str(cls), mode="lines",
            line=dict(shape="hv", color=PALETTE[i % len(PALETTE)]),
            hovertemplate="%{y:.0f}% waited at most %{x:.2f} h<extra>" + esc(cls) + "</extra>"))
    fig.update_xaxes(type="log", tickvals=list(WAIT_TICKS), ticktext=list(WAIT_TICKS.values()),
                     title_text="queue wait (log scale; under 1 min shown at 1 min)")
    fig.update_yaxes(title_text="jobs started within (%)", range=[0, 101])
    _layout(fig, "Queue wait by workload class")
    fig.update_layout(legend=dict(orientation="v", yanchor="bottom", y=0.03, xanchor="right", x=0.99,
                                  bgcolor="rgba(255,255,255,0.85)"))
    return fig


def job_mix(mix: pd.DataFrame) -> go.Figure:
    """Share of jobs and of GPU-hours per workload class, side by side."""
    fig = go.Figure([
        go.Bar(x=mix["workload_class"], y=mix["jobs_pct"], name="share of jobs", marker_color=PALETTE[0],
               customdata=mix["jobs"], hovertemplate="%{customdata:,} jobs (%{y:.1f}%)<extra></extra>"),
        go.Bar(x=mix["workload_class"], y=mix["gpu_hours_pct"], name="share of GPU-hours",
               marker_color=PALETTE[1], customdata=mix["gpu_hours"],
               hovertemplate="%{customdata:,.0f} GPU-hours (%{y:.1f}%)<extra></extra>"),
    ])
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text="%")
    return _layout(fig, "Job mix")


def overview_figures(overview) -> dict[str, go.Figure]:
    """Every Overview chart of an `engine.analysis.telemetry.overview.Overview` (kind 'jobs' or 'samples'), by name.

    Names: timeline_daily, timeline_hourly, heatmap, idle_hours, and for job records waits and mix (the
    page's dollars come from the recorded replay: dashboard.data.priced).
    """
    k = overview.kpis
    unit = "GPU" if k.unit == "gpus" else k.unit.rstrip("s")
    figures = {
        "timeline_daily": utilisation_timeline(overview.daily, overview.fleet_daily),
        "timeline_hourly": utilisation_timeline(overview.hourly, overview.fleet_hourly),
        "heatmap": hour_of_week_heatmap(overview.heatmap),
        "idle_hours": idle_bars(overview.idle_by_type, "idle_gpu_hours", f"Idle {unit}-hours by region",
                                f"idle {unit}-hours"),
    }
    if overview.kind == "jobs":
        figures["waits"] = wait_ecdf(overview.wait_ecdf)
        figures["mix"] = job_mix(overview.mix)
    return figures
