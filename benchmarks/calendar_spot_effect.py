"""The effect on the sample of country working weeks (me-central, Saudi Arabia, works Sun-Thu) and of
keeping spot nodes for interruptible work (issue 26, items 4 and 5), for README and RESULTS.md.

Prints JSON: for the Time zones analysis, the lendable and off-hours idle GPU-hours of the fleet and
those me-central lends; for follow-the-sun and cheap-eu-follow-the-sun, the p95 wait, the jobs run
away from home and the jobs routed into me-central by local weekday of their submission (Friday is
me-central's weekend, Sunday a working day); for spot-interruptible, the interruptions per queue.
Run it on two checkouts to compare (PYTHONPATH=<checkout>).

    nice .venv/bin/python benchmarks/calendar_spot_effect.py [--scenarios DIR]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from engine.analysis.runs.sim_metrics import kpis
from engine.analysis.telemetry.timezones import build_timezones
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
ROUTED = ("follow-the-sun", "cheap-eu-follow-the-sun")
REGION, ZONE = "me-central", "Asia/Riyadh"


def time_zones(tables: dict) -> dict:
    tz = build_timezones(tables["jobs"], tables["fleet"], tables["regions"], tables["teams"])
    pairs = tz.pairs[tz.pairs["from_region"] == REGION]
    hours = tz.hourly[tz.hourly["region"] == REGION]
    weekday = hours["bin_start_utc"].dt.tz_localize("UTC").dt.tz_convert(ZONE).dt.day_name()
    return {"lendable_gpu_hours": round(tz.lendable_gpu_hours, 1),
            "off_hours_idle_gpu_hours": round(tz.off_hours_idle_gpu_hours, 1),
            f"{REGION}_lendable_gpu_hours_best_pair": round(float(pairs["lendable_gpu_hours"].max()), 1),
            f"{REGION}_at_work_hours_friday": int(hours["at_work"][weekday == "Friday"].sum()),
            f"{REGION}_at_work_hours_sunday": int(hours["at_work"][weekday == "Sunday"].sum())}


def routed(result) -> dict:
    jobs = result.jobs
    away = jobs[jobs["region"] != jobs["home_region"]]
    into = away[away["region"] == REGION]
    submitted = pd.to_datetime(result.origin_utc.value / 1e9 + into["submit_s"], unit="s", utc=True)
    days = submitted.dt.tz_convert(ZONE).dt.day_name()
    return {"wait_p95_s": round(kpis(result)["wait_p95_s"], 1), "jobs_away_from_home": len(away),
            f"into_{REGION}": len(into), f"into_{REGION}_friday": int((days == "Friday").sum()),
            f"into_{REGION}_sunday": int((days == "Sunday").sum())}


def spot(result) -> dict:
    jobs = result.jobs
    by_queue = jobs.groupby("queue")["spot_interruptions"].sum()
    return {"interruptions_by_queue": {str(q): int(n) for q, n in by_queue.items()},
            "wait_p95_s": round(kpis(result)["wait_p95_s"], 1),
            "lost_gpu_hours": round(float(jobs["lost_gpu_hours"].sum()), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=str(SCENARIOS), help="folder of the scenarios' TOML files")
    folder = Path(parser.parse_args().scenarios)
    tables = read_bundle().tables
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    out = {"time_zones": time_zones(tables)}
    for name in (*ROUTED, "spot-interruptible"):
        result = run_scenario(Scenario.load(folder / f"{name}.toml"), tables["jobs"], tables["fleet"], world)
        out[name] = spot(result) if name == "spot-interruptible" else routed(result)
        print(json.dumps({name: out[name]}), flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
