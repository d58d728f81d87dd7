"""A capacity plan as tables and a JSON document (`meridian plan --json`, the Capacity planning page).

Units: GPUs, USD per year (the check simulation's spend over its window, annualised: reserved
GPUs every hour, spot and on-demand GPUs while held), utilisation 0-1 (allocation-based, over the
simulated window), waits in hours.
"""
from __future__ import annotations

import json

import pandas as pd

from engine.service.planning.fleet_build import TIERS
from engine.service.planning.plan import FleetCheck, PlanResult


def fleet_comparison(result: PlanResult) -> pd.DataFrame:
    """One row per (region, gpu_type): today's and the recommended (or closest) GPUs per tier and in
    total (today_reserved, plan_reserved, today_spot, ..., today_on_demand, ..., plan_total) and
    the change in total."""
    today = result.today.gpus.set_index(["region", "gpu_type"])
    best = result.best.check.gpus.set_index(["region", "gpu_type"])
    keys = today.index.union(best.index)
    today, best = today.reindex(keys, fill_value=0), best.reindex(keys, fill_value=0)
    table = pd.DataFrame(index=keys)
    for tier in (*TIERS, "total"):
        column = tier.replace("-", "_")
        table[f"today_{column}"] = today[tier].astype(int)
        table[f"plan_{column}"] = best[tier].astype(int)
    table["change"] = table["plan_total"] - table["today_total"]
    return table.reset_index()


def check_record(check: FleetCheck) -> dict:
    return {"gpus": int(check.gpus["total"].sum()), "cost_usd_per_year": check.cost_usd_per_year,
            "utilization": float(check.kpis["utilization"]), "met": check.met,
            "slo": _records(check.slo), "fleet": _records(check.gpus)}


def plan_record(result: PlanResult) -> dict:
    """The JSON document: window, growth, today's check, each round, the recommendation (null when
    no round met every target) and the yearly saving against today."""
    recommended = result.recommended
    return {
        "growth": result.growth,
        "window": {"start_utc": result.start_utc.isoformat() + "Z", "end_utc": result.end_utc.isoformat() + "Z",
                   "days": result.settings.days, "warmup_days": result.settings.warmup_days},
        "slo_p95_wait_h": result.settings.slo_h,
        "met": recommended is not None,
        "today": check_record(result.today),
        "rounds": [{"round": it.number, "integer_program_usd_per_week": it.plan.weekly_cost_usd,
                    "compacted_factor": it.compacted,
                    "missed_pools": [list(pool) for pool in it.missed_pools], **check_record(it.check)}
                   for it in result.iterations],
        "recommended": None if recommended is None else {"round": recommended.number,
                                                         **check_record(recommended.check)},
        "saving_usd_per_year": None if recommended is None
        else result.today.cost_usd_per_year - recommended.check.cost_usd_per_year,
        "fleet_change": _records(fleet_comparison(result)),
        "notes": list(result.notes),
    }


def _records(table: pd.DataFrame) -> list[dict]:
    return json.loads(table.to_json(orient="records"))
