"""Charts of the Time zones page (DataFrames of engine.analysis.telemetry.timezones -> plotly Figures; no
streamlit), in the style of dashboard.charts."""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts.base import LEGEND_ABOVE, PALETTE, WEEKDAYS, layout
from engine.core.escaping import plotly_text as esc

BAND_FILL = "rgba(255, 193, 7, 0.22)"  # working hours: a light amber band


def _timezone_layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    return layout(fig, title, height, LEGEND_ABOVE, top=80)


def _region_grid(regions: list[str], columns: int, titles: list[str]) -> tuple[go.Figure, int]:
    columns = max(1, min(columns, len(regions)))
    rows = math.ceil(len(regions) / columns) or 1
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[esc(t) for t in titles] or [""], shared_xaxes=True,
                        horizontal_spacing=0.06, vertical_spacing=0.3 / rows)
    return fig, rows


def utc_hour_profile(profile: pd.DataFrame, key: str, bands: pd.DataFrame, period: int, title: str,
                     columns: int = 2) -> go.Figure:
    """Utilisation and demand (% of capacity) by UTC hour of day (`period` 24) or week (168), one panel
    per region, as steps over each hour; `bands` (kind, name, x0, x1 in hours of the period, x1 may pass
    the period's end and wraps) shaded as the region's working hours."""
    regions = list(dict.fromkeys(profile["region"]))
    fig, rows = _region_grid(regions, columns, regions)
    shapes = []
    for i, region in enumerate(regions):
        row, col = i // columns + 1, i % columns + 1
        panel = profile[profile["region"] == region]
        for value, name, colour, dash in (("utilisation_pct", "utilisation", PALETTE[0], "solid"),
                                          ("demand_pct", "demand (running + queued)", PALETTE[1], "dot")):
            x = list(panel[key]) + [period]
            y = list(panel[value]) + [panel[value].iloc[-1] if len(panel) else None]
            fig.add_trace(go.Scatter(
                x=x, y=y, name=name, legendgroup=name, showlegend=i == 0, mode="lines",
                line=dict(shape="hv", color=colour, dash=dash, width=1.6),
                hovertemplate="UTC hour %{x}<br>%{y:.0f}% of capacity<extra>" + esc(f"{name} · {region}") + "</extra>"),
                row=row, col=col)
        axis = "" if i == 0 else str(i + 1)   # one shape list for all panels: add_vrect per band is slow
        own = bands[(bands["kind"] == "region") & (bands["name"] == region)]
        for x0, x1 in own[["x0", "x1"]].itertuples(index=False):
            for lo, hi in ((x0, min(x1, period)), (0.0, x1 - period)):
                if hi > lo:
                    shapes.append(dict(type="rect", xref=f"x{axis}", yref=f"y{axis} domain", x0=lo, x1=hi, y0=0,
                                       y1=1, fillcolor=BAND_FILL, line_width=0, layer="below"))
    if period == 24:
        fig.update_xaxes(range=[0, 24], tickvals=list(range(0, 25, 3)), showticklabels=True)
    else:
        fig.update_xaxes(range=[0, 168], tickvals=list(range(0, 168, 24)), ticktext=list(WEEKDAYS),
                         showticklabels=True)
    fig.update_layout(shapes=shapes)
    fig.update_yaxes(rangemode="tozero", ticksuffix="%")
    fig.update_annotations(font_size=12)
    _timezone_layout(fig, title, height=140 + 200 * rows)
    fig.update_layout(margin=dict(t=90))
    return fig


def work_gantt(bands: pd.DataFrame, week_start: pd.Timestamp) -> go.Figure:
    """Who is at work in the UTC week from `week_start`: one row per region and team, one bar per shift."""
    fig = go.Figure()
    order = bands.drop_duplicates(["kind", "name"])
    labels = [f"{k} · {n}" for k, n in zip(order["kind"], order["name"])]
    for i, kind in enumerate(("region", "team")):
        rows = bands[bands["kind"] == kind]
        x, y, text = [], [], []
        for name, start, end, local in rows[["name", "start_utc", "end_utc", "local_start"]].itertuples(index=False):
            x += [start, end, None]
            y += [f"{kind} · {name}"] * 2 + [None]
            text += [f"{name}: from {local} local"] * 2 + [None]
        fig.add_trace(go.Scatter(x=x, y=y, text=text, mode="lines", name=f"{kind}s' working hours",
                                 line=dict(width=9, color=PALETTE[i]),
                                 hovertemplate="%{text}<br>%{x|%a %H:%M} UTC<extra></extra>"))
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], type="category")
    fig.update_xaxes(range=[week_start, week_start + pd.Timedelta(days=7)], title_text="time (UTC)",
                     dtick=24 * 3600 * 1000, tickformat="%a %d %b 00:00", tickangle=0, gridcolor="#c8c8c8",
                     minor=dict(dtick=6 * 3600 * 1000, showgrid=True, gridcolor="#eeeeee"))
    return _timezone_layout(fig, f"Who is at work, week of {week_start:%a %d %b %Y} (UTC)",
                   height=120 + 22 * max(len(labels), 4))


def daily_with_holidays(daily: pd.DataFrame, holidays: pd.DataFrame) -> go.Figure:
    """Daily utilisation per region (UTC days), with each region's holidays marked on its line."""
    fig = go.Figure()
    for i, (region, rows) in enumerate(daily.groupby("region", sort=True)):
        colour = PALETTE[i % len(PALETTE)]
        fig.add_trace(go.Scatter(x=rows["date"], y=rows["utilisation_pct"], name=str(region), mode="lines",
                                 line=dict(width=1.4, color=colour), legendgroup=str(region),
                                 hovertemplate="%{x|%a %d %b}<br>%{y:.1f}%<extra>" + esc(region) + "</extra>"))
        days = holidays[(holidays["kind"] == "region") & (holidays["name"] == region)]
        marked = days.merge(rows, on="date", how="inner")
        if not marked.empty:
            fig.add_trace(go.Scatter(
                x=marked["date"], y=marked["utilisation_pct"], mode="markers", showlegend=False,
                legendgroup=str(region), text=marked["holiday"],
                marker=dict(symbol="star", size=13, color=colour, line=dict(width=1, color="#1b2430")),
                hovertemplate="%{x|%a %d %b}: %{text}<br>%{y:.1f}%<extra>" + esc(region) + "</extra>"))
    fig.update_yaxes(title_text="utilisation (%)", rangemode="tozero")
    fig.update_xaxes(title_text="day (UTC)")
    return _timezone_layout(fig, "Daily utilisation by region, holidays starred")


def handoff_matrix(pairs: pd.DataFrame, regions: list[str]) -> go.Figure:
    """Lendable GPU-hours (each pair's own upper bound) from the lending region (rows) to the borrowing one."""
    grid = (pairs.pivot_table(index="from_region", columns="to_region", values="lendable_gpu_hours", aggfunc="sum")
            .reindex(index=regions, columns=regions))
    fig = go.Figure(go.Heatmap(z=grid.to_numpy(), x=regions, y=regions, colorscale="Blues",
                               colorbar=dict(title="GPU-h", thickness=12),
                               hovertemplate="%{y} → %{x}<br>up to %{z:,.0f} GPU-hours<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title_text="lender (off-hours)")
    fig.update_xaxes(title_text="borrower (flexible work waiting)")
    return _timezone_layout(fig, "Lendable GPU-hours by region pair", height=440)


def offhours_idle_by_hour(by_hour: pd.DataFrame, fleet: pd.DataFrame) -> go.Figure:
    """Mean idle GPUs of regions in their off-hours per UTC hour of day, stacked by region, and the
    fleet's lendable bound as a line."""
    fig = go.Figure()
    for i, (region, rows) in enumerate(by_hour.groupby("region", sort=True)):
        fig.add_trace(go.Bar(
            x=rows["utc_hour"], y=rows["off_idle_gpus"], name=str(region), marker_color=PALETTE[i % len(PALETTE)],
            hovertemplate="%{x}:00 UTC<br>%{y:,.0f} idle GPUs off-hours<extra>" + esc(region) + "</extra>"))
    fig.add_trace(go.Scatter(x=fleet["utc_hour"], y=fleet["lendable_gpus"], name="lendable (upper bound)",
                             mode="lines+markers", line=dict(width=3, color="#1b2430"),
                             hovertemplate="%{x}:00 UTC<br>up to %{y:,.0f} GPUs<extra>lendable</extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text="UTC hour of day", tickvals=list(range(0, 24, 3)))
    fig.update_yaxes(title_text="GPUs (mean over the days)")
    _timezone_layout(fig, "Idle GPUs in off-hours regions, by UTC hour", height=440)
    fig.update_layout(legend=dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.02))
    return fig


def timezone_figures(tz, week_start: pd.Timestamp) -> dict[str, go.Figure]:
    """Every Time zones chart of an `engine.analysis.telemetry.timezones.TimeZones` (kind 'jobs') for one reference
    week: profile_day, profile_week, gantt, daily, handoff_hours, handoff_matrix."""
    bands = tz.bands(week_start)
    day = tz.day_bands(week_start).rename(columns={"start_hour_utc": "x0", "end_hour_utc": "x1"})
    week = bands.assign(x0=(bands["start_utc"] - week_start) / pd.Timedelta(hours=1),
                        x1=(bands["end_utc"] - week_start) / pd.Timedelta(hours=1))
    regions = sorted(tz.hourly["region"].unique())
    label = f"{week_start:%d %b %Y}"
    return {
        "profile_day": utc_hour_profile(tz.by_hour, "utc_hour", day, 24, "Utilisation and demand by UTC hour "
                                        f"of day; shaded: local working hours (week of {label})"),
        "profile_week": utc_hour_profile(tz.by_hour_of_week, "utc_hour_of_week", week, 168, "Utilisation and "
                                         f"demand by UTC hour of week; shaded: local working hours, week of {label}"),
        "gantt": work_gantt(bands, week_start),
        "daily": daily_with_holidays(tz.daily, tz.holidays),
        "handoff_hours": offhours_idle_by_hour(tz.by_hour, tz.handoff_by_hour),
        "handoff_matrix": handoff_matrix(tz.pairs, regions),
    }
