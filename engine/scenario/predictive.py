"""A scenario's [predictive_scaling] table: the [[burst]] pools rent ahead of the forecast peak, not on waits.

    [predictive_scaling]
    enabled = true              # off by default: the pools react to waits as [[burst]] says
    weeks = 4                   # forecast each hour of the week from the same hour in the last 4 weeks
    headroom_quantile = 0.75    # ... their 75th percentile (0.5: the median)
    lead_min = 30               # rent this long before the forecast hour (the pool's provision_min
                                # later the node is up)
    min_shortfall_gpus = 8      # a forecast shortfall below this is left alone
    reserved = false            # true: pay the region's reserved price for the GPU type (a capacity
                                # block booked ahead) instead of the pool's burst price
    reactive = false            # true: the pools also rent on waits, as [[burst]] alone does

Semantics. For each [[burst]] pool (region, GPU type, gpus_per_node, max_nodes, provision_min),
engine.predict.demand_forecast forecasts the GPUs of that type its region's jobs ask for (waiting or
running) in each hour of the run's window from the whole weeks of history before the window's start
([workload] start_utc; without one the window starts `weeks` whole weeks after the data's first
submit, engine.scenario.spec.Scenario.window_start), and backtests the same forecast on those weeks. The forecast
shortfall of hour h is forecast(h) - the GPUs of that type the region has installed; the pool's
target for hour h is min(max_nodes, ceil(shortfall / gpus_per_node)) nodes when the shortfall is at
least min_shortfall_gpus, else 0. The simulator (engine.sim.processes.forecast_scaling) rents up to
the target lead_min before hour h starts and returns nodes above the target from hour h's start, each
as soon as no job holds it. Every number has a unit and a range (the fields' metadata).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.core.bounds import bounded_field
from engine.core.errors import ScenarioError
from engine.predict.demand_forecast import WEEK_H, backtest, hourly_demand, seasonal_forecast
from engine.scenario.checks import declared

ERROR_COLUMNS = ["region", "gpu_type", "history_weeks", "weeks", "headroom_quantile", "held_out_weeks", "mae_gpus",
                 "mape_pct", "naive_mae_gpus", "naive_mape_pct"]


def _switch(default: bool, what: str, label: str):
    return field(default=default, metadata={"help": what, "label": label})


@dataclass(frozen=True)
class PredictiveScaling:
    """The [predictive_scaling] table's values (the module docstring explains each); the fields'
    metadata gives their unit, range, help and label (the scenario builder draws its widgets from them)."""

    enabled: bool = _switch(False, "the [[burst]] pools rent ahead of the forecast peak", "Scale ahead of the forecast")
    weeks: int = bounded_field(4, "weeks", 1, 52, "history weeks each hour of the week is forecast from",
                               "Forecast from the last")
    headroom_quantile: float = bounded_field(0.75, "quantile", 0.0, 1.0, "of those weeks' demand at that hour "
                                             "(0.5: the median)", "Headroom quantile")
    lead_min: float = bounded_field(30.0, "min", 0.0, 1440.0, "rent this long before the forecast hour", "Lead time")
    min_shortfall_gpus: float = bounded_field(8.0, "GPUs", 0.0, 1e6, "a smaller forecast shortfall is left alone",
                                              "Smallest shortfall acted on")
    reserved: bool = _switch(False, "pay the region's reserved price (a capacity block) instead of the burst "
                             "price", "Reserved, not rented")
    reactive: bool = _switch(False, "the pools also rent when the queue's head has waited", "Keep reactive bursts")


def parse_predictive(table: object, source: str) -> PredictiveScaling:
    """The [predictive_scaling] table (defaults for missing keys)."""
    return PredictiveScaling(**declared(table, PredictiveScaling, source, "[predictive_scaling]"))


@dataclass(frozen=True)
class ScalingPlan:
    """What a run's forecast asks of each [[burst]] pool: `targets[p][h]` nodes of pool p for the
    hour starting `start_utc` + h hours; `errors` the forecast's backtest per pool (ERROR_COLUMNS)."""

    settings: PredictiveScaling
    pools: tuple
    start_utc: pd.Timestamp
    targets: tuple
    errors: pd.DataFrame


def scaling_plan(settings: PredictiveScaling, pools: tuple, history: pd.DataFrame, fleet: pd.DataFrame,
                 start: pd.Timestamp, end: pd.Timestamp, name: str) -> ScalingPlan:
    """The plan for the window [start, end) (see the module docstring). `history`: the dataset's jobs
    (those submitted before `start` are used); `fleet`: the one the scenario runs on."""
    submits = pd.to_datetime(history["submit_utc"])
    start = start.floor("h")
    first = submits.min() if len(history) else start
    weeks = int((start - first) // pd.Timedelta(hours=WEEK_H)) if first < start else 0
    if weeks < 1:
        raise ScenarioError(f"{name}: [predictive_scaling] forecasts from the weeks before [workload] start_utc; "
                            f"the data has {_days(start - first)} days before {start:%Y-%m-%d %H:%M}, "
                            "at least 7 needed")
    hours = max(int(math.ceil((end - start) / pd.Timedelta(hours=1))), 1)
    since = start - pd.Timedelta(hours=WEEK_H * weeks)
    before = history[submits < start]
    targets, errors = [], []
    for pool in pools:
        mine = before[(before["region"] == pool.region) & (before["gpu_type"] == pool.gpu_type)]
        series = hourly_demand(mine, since, start)
        forecast = seasonal_forecast(series, hours, settings.weeks, settings.headroom_quantile)
        installed = float(fleet.loc[(fleet["region"] == pool.region) & (fleet["gpu_type"] == pool.gpu_type),
                                    "gpus"].sum())
        short = forecast - installed
        nodes = np.minimum(np.ceil(np.maximum(short, 0.0) / pool.gpus_per_node), pool.max_nodes)
        targets.append(np.where(short >= max(settings.min_shortfall_gpus, 1e-9), nodes, 0).astype(np.int64))
        score = backtest(series, settings.weeks, settings.headroom_quantile)
        errors.append({"region": pool.region, "gpu_type": pool.gpu_type, "history_weeks": weeks,
                       "weeks": settings.weeks, "headroom_quantile": settings.headroom_quantile,
                       "held_out_weeks": score.held_out_weeks if score else 0,
                       **({key: getattr(score, key) if score else math.nan for key in ERROR_COLUMNS[6:]})})
    return ScalingPlan(settings, tuple(pools), start, tuple(targets), pd.DataFrame(errors, columns=ERROR_COLUMNS))


def _days(span: pd.Timedelta) -> str:
    return f"{max(span / pd.Timedelta(days=1), 0.0):.1f}"
