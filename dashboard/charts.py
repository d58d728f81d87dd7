"""Chart builders: analysis DataFrames in, plotly Figures out (no Streamlit here).

Every figure uses the explicit `plotly_white` template, so it looks the same in the browser
and in exported images.
"""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts_base import LEGEND_ABOVE, PALETTE, layout
from engine.core.escaping import plotly_text as esc

HEAT_SCALE = "RdYlBu"  # red = idle, blue = busy; readable with red-green colour blindness
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MIN_WAIT_H = 1 / 60  # waits below one minute are drawn at one minute on the log axis
WAIT_TICKS = {1 / 60: "1 min", 10 / 60: "10 min", 1: "1 h", 10: "10 h", 100: "100 h", 1000: "1000 h"}


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


def idle_bars(idle: pd.DataFrame, value: str, title: str, axis_title: str, prefix: str = "") -> go.Figure:
    """Bars per region, stacked by GPU type, of `value` (idle_gpu_hours or idle_usd); `prefix` e.g. "$"."""
    fig = go.Figure()
    for i, (gpu_type, rows) in enumerate(idle.groupby("gpu_type", sort=True)):
        fig.add_trace(go.Bar(x=rows["region"], y=rows[value], name=str(gpu_type),
                             marker_color=PALETTE[i % len(PALETTE)]))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(categoryorder="total descending")
    fig.update_yaxes(title_text=axis_title, tickprefix=prefix)
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

    Names: timeline_daily, timeline_hourly, heatmap, idle_hours, and where the data allows
    idle_usd (capacity priced in GPUs), waits and mix (job records).
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
    if k.price_source != "none":
        assumed = "" if k.price_source == "dataset" else " (prices assumed)"
        figures["idle_usd"] = idle_bars(overview.idle_by_type, "idle_usd", f"Idle dollars by region{assumed}",
                                        "idle dollars", prefix="$")
    if overview.kind == "jobs":
        figures["waits"] = wait_ecdf(overview.wait_ecdf)
        figures["mix"] = job_mix(overview.mix)
    return figures


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
    return _layout(fig, "GPU-hours idle while a waiting job could have used them")


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
