"""SLO attainment and cost as the fleet grows: today's fleet scaled pool by pool, run as a sweep.

Each point multiplies every (region, gpu_type, tier) of today's fleet by a scale factor (whole
nodes: GPUs added or removed as [[fleet]] edits, engine.scenario.edits.scaled_fleet_edits) and replays the
plan's window under the plan's check scenario (engine.service.planning.plan.check_scenario), on the sweep
runner's processes (engine.service.sweep). Waits are scored from the window's start, as the plan's check
scores them (the warm-up is simulated, not scored).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import pandas as pd

from engine.scenario.edits import scaled_fleet_edits
from engine.service.planning.fleet_build import fleet_gpus, tier_ordered
from engine.service.planning.plan import check_scenario
from engine.service.planning.settings import PlanSettings
from engine.service.sweep.grid import Point
from engine.service.sweep.runner import run_sweep

SCALES = (0.6, 0.8, 1.0, 1.2, 1.4, 1.7, 2.0)


def curve_points(fleet: pd.DataFrame, settings: PlanSettings, growth: float, start: pd.Timestamp,
                 end: pd.Timestamp, scales=SCALES) -> tuple[Point, ...]:
    """One sweep point per scale factor, named "fleet x<scale>"."""
    base = check_scenario(settings, growth, start, end)
    return tuple(Point(i, f"fleet x{scale:g}", {"fleet scale": scale},
                       replace(base, name=f"fleet x{scale:g}", fleet_edits=scaled_fleet_edits(fleet, scale)),
                       score_from_utc=start)
                 for i, scale in enumerate(scales))


def fleet_curve(jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict, settings: PlanSettings, growth: float,
                start: pd.Timestamp, end: pd.Timestamp, scales=SCALES, workers: int | None = None,
                progress: Callable | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(points: scale, gpus, cost_usd_per_year, utilization, attainment (share of classes with a
    target that meet it), met (all do), error; classes: scale, gpus, workload_class, p95_h, target_h).
    Failed points keep a row with their error and no figures."""
    fleet = tier_ordered(fleet)
    points = curve_points(fleet, settings, growth, start, end, scales)
    outcomes = run_sweep(points, (jobs, fleet, world_tables), workers=workers, progress=progress)
    rows, classes = [], []
    for point, outcome in zip(points, outcomes):
        scale = point.params["fleet scale"]
        gpus = int(fleet_gpus(point.scenario.apply(jobs.iloc[:0], fleet)[1])["total"].sum())
        waits = {c["workload_class"]: c["wait_p95_s"] / 3600.0 for c in outcome.classes}
        judged = {name: waits.get(name, 0.0) <= target + 1e-9 for name, target in settings.slo_h.items()}
        ok = outcome.status == "ok"
        rows.append({"scale": scale, "gpus": gpus,
                     "cost_usd_per_year": outcome.kpis.get("cost_usd_per_year", math.nan) if ok else math.nan,
                     "utilization": outcome.kpis.get("utilization", math.nan) if ok else math.nan,
                     "attainment": sum(judged.values()) / len(judged) if ok else math.nan,
                     "met": ok and all(judged.values()), "error": outcome.error or ""})
        classes += [{"scale": scale, "gpus": gpus, "workload_class": name, "p95_h": p95,
                     "target_h": settings.slo_h.get(name, math.nan)} for name, p95 in sorted(waits.items())]
    return pd.DataFrame(rows), pd.DataFrame(classes, columns=["scale", "gpus", "workload_class", "p95_h", "target_h"])
