"""The report's three charts as plotly JSON figures ({"data": [...], "layout": {...}}) with the
explicit `plotly_white` template (exported charts stay white wherever they are drawn). Data strings
in the traces are escaped where the figure is drawn (engine.core.escaping.plotly_figure); names this
module writes into its own markup (titles, hover templates) are escaped here.

`plotly.graph_objects.Figure(spec)` turns one into a Figure; `st.plotly_chart` and plotly.js take
them as they are. Sizes are fixed so that the printed page matches the screen.

  utilisation_by_local_hour  heat maps side by side, baseline then candidate: region (west to east)
                             x local hour of day, colour = utilisation % (tables.local_hour_utilisation)
  spend_by_tier              $ per year by pricing tier per scenario, reserved split into the hours
                             jobs held and the idle hours (cost report's spend table, annualised)
  waits_by_class             p95 queue wait (hours) by workload class per scenario
"""
from __future__ import annotations

from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from engine.core.escaping import plotly_text
from engine.service.compare import Run
from engine.service.report.assets import plotly_white
from engine.service.report.tables import local_hour_utilisation

WIDTH = 700
SCENARIO_COLOURS = ("#7f8c9a", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")
TIER_GROUPS = ("reserved, used", "reserved, idle", "on-demand", "spot", "egress, storage")
TIER_LABELS = TIER_GROUPS   # plain text: data strings are escaped


def _layout(height: int, width: int, **extra) -> dict:
    return {"template": plotly_white(), "height": height, "width": width, "autosize": False,
            "margin": {"l": 60, "r": 10, "t": 30, "b": 40}, "font": {"size": 11},
            "legend": {"orientation": "h", "y": 1.12, "x": 0}, **extra}


def _colour(i: int) -> str:
    return SCENARIO_COLOURS[i % len(SCENARIO_COLOURS)]


def _west_to_east(run: Run) -> list[str]:
    """Regions ordered by their UTC offset at the window's start, then name."""
    zones = dict(zip(run.world.carbon.by_region["region"], run.world.carbon.by_region["timezone"]))
    start = pd.Timestamp(run.result.origin_utc).to_pydatetime()
    offset = {r: ZoneInfo(zones.get(r, "UTC")).utcoffset(start).total_seconds() for r in run.result.capacity_gpus}
    return sorted(offset, key=lambda r: (offset[r], r))


def utilisation_by_local_hour(baseline: Run, candidate: Run, height: int = 240) -> dict:
    regions = _west_to_east(baseline)
    data = []
    for i, run in enumerate((baseline, candidate)):
        table = local_hour_utilisation(run).pivot(index="region", columns="local_hour", values="util")
        z = (table.reindex(regions) * 100.0).round(1)
        data.append({"type": "heatmap", "x": list(range(24)), "y": regions,
                     "z": [[None if np.isnan(v) else float(v) for v in row] for row in z.to_numpy()],
                     "coloraxis": "coloraxis", "xaxis": "x" if i == 0 else "x2", "yaxis": "y",
                     "name": run.scenario.name,
                     "hovertemplate": ("%{y}, %{x}:00 local: %{z:.1f}%<extra>" + plotly_text(run.scenario.name)
                                       + "</extra>")})
    titles = [{"text": f"<b>{plotly_text(run.scenario.name)}</b>" + (" (baseline)" if i == 0 else ""), "x": x, "y": 1.0,
               "xref": "paper", "yref": "paper", "xanchor": "center", "yanchor": "bottom", "showarrow": False}
              for i, (run, x) in enumerate(((baseline, 0.22), (candidate, 0.69)))]
    axis = {"title": {"text": "local hour of day"}, "dtick": 3, "showgrid": False}
    return {"data": data, "layout": _layout(
        height, WIDTH, margin={"l": 95, "r": 10, "t": 24, "b": 40}, annotations=titles,
        xaxis={**axis, "domain": [0.0, 0.44]}, xaxis2={**axis, "domain": [0.47, 0.91], "anchor": "y"},
        yaxis={"showgrid": False, "autorange": "reversed"},
        coloraxis={"colorscale": "Viridis", "cmin": 0, "cmax": 100,
                   "colorbar": {"title": {"text": "util %"}, "thickness": 12, "len": 1.0, "x": 0.93}})}


def tier_spend(run: Run, days_per_year: float) -> dict[str, float]:
    """TIER_GROUPS -> USD per year of one run."""
    spend, totals = run.world.cost.spend, run.world.cost.totals
    window = totals["window_s"]
    year = days_per_year * 86_400.0 / window if window > 0 else 0.0
    tier = spend.groupby("tier")[["usd", "idle_usd"]].sum()

    def total(name: str, column: str) -> float:
        return float(tier[column].get(name, 0.0)) * year
    return {"reserved, used": total("reserved", "usd") - total("reserved", "idle_usd"),
            "reserved, idle": total("reserved", "idle_usd"), "on-demand": total("on-demand", "usd"),
            "spot": total("spot", "usd"),
            "egress, storage": (totals.get("usd_egress", 0.0) + totals.get("usd_storage", 0.0)) * year}


def spend_by_tier(runs: list[Run], days_per_year: float, height: int = 230) -> dict:
    data = [{"type": "bar", "name": run.scenario.name, "x": list(TIER_LABELS), "marker": {"color": _colour(i)},
             "y": [round(v, 2) for v in tier_spend(run, days_per_year).values()],
             "hovertemplate": "$%{y:,.0f} per year<extra>" + plotly_text(run.scenario.name) + "</extra>"}
            for i, run in enumerate(runs)]
    return {"data": data, "layout": _layout(
        height, WIDTH // 2 - 6, barmode="group", title={"text": "Spend by tier, $ per year", "x": 0.02, "y": 0.98},
        margin={"l": 55, "r": 10, "t": 52, "b": 50}, legend={"orientation": "h", "y": 1.1, "x": 0},
        xaxis={"tickangle": -20}, yaxis={"tickprefix": "$", "tickformat": "~s"})}


def waits_by_class(waits: pd.DataFrame, height: int = 230) -> dict:
    """waits: tables.class_waits' rows."""
    data = []
    for i, (name, rows) in enumerate(waits.groupby("scenario", sort=False)):
        data.append({"type": "bar", "name": name, "x": list(rows["workload_class"]), "marker": {"color": _colour(i)},
                     "y": [round(float(s) / 3600.0, 3) for s in rows["wait_p95_s"]],
                     "hovertemplate": "%{x}: p95 wait %{y:.2f} h<extra>" + plotly_text(name) + "</extra>"})
    return {"data": data, "layout": _layout(
        height, WIDTH // 2 - 6, barmode="group", title={"text": "p95 queue wait by workload class, hours",
                                                     "x": 0.02, "y": 0.98},
        margin={"l": 45, "r": 10, "t": 52, "b": 40}, legend={"orientation": "h", "y": 1.1, "x": 0},
        yaxis={"rangemode": "tozero"})}
