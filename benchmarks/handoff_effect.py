"""What live follow-the-sun's hand-offs do on the whole sample (issue 26, items 3 and 4).

Runs `follow-the-sun.toml`, `live-handoff.toml` (region calendars), live-handoff without its minimum
run and minimum request left, follow-the-sun and live-handoff on the teams' calendars
(`calendar = "team"`), live-handoff on team calendars with hourly re-checks over the day's first
4 hours (`team-calendars.toml`) and the same re-checks on region calendars, on the whole sample, and
prints, per run: hand-off moves (of them at a re-check) and jobs, GPU-hours lost and moved, mean, p95
and p99 wait, served GPU-hours, and the home work waiting at a working-day start (the "day_start" KPIs,
engine.analysis.runs.handoff.day_start_kpis: how many jobs, their mean wait; on the run's calendars).

    nice .venv/bin/python benchmarks/handoff_effect.py
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from engine.analysis.runs.handoff import day_start_kpis
from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import prepared, run_prepared
from engine.sim.state.workload import build_workload
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"


def scenarios() -> list[Scenario]:
    sun, live, team = (Scenario.load(SCENARIOS / f"{name}.toml")
                       for name in ("follow-the-sun", "live-handoff", "team-calendars"))
    bare = replace(live, name="live-handoff, no minimums", handoff=replace(live.handoff, min_run_h=0.0, min_left_h=0.0))
    recheck = replace(live, name="live-handoff, re-check 4 h", handoff=team.handoff)
    return [sun, live, bare, recheck, replace(sun, name="follow-the-sun, team calendars", calendar="team"),
            replace(team, name="live-handoff, team calendars", handoff=live.handoff), team]


def main() -> int:
    tables = read_bundle().tables
    dataset = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    print("scenario | moves (at a re-check) (jobs) | GPU-h lost | GPU-h moved | mean wait h | p95 wait h | "
          "p99 wait h | served GPU-h | home work waiting at a day start: jobs, mean wait h")
    for scenario in scenarios():
        world, jobs, fleet = prepared(scenario, tables["jobs"], tables["fleet"], dataset)
        result = run_prepared(scenario, world, build_workload(jobs, fleet))
        k, day = kpis(result), day_start_kpis(result, world)
        moves = result.handoffs
        rechecked = 0 if moves is None else int((moves["reason"] == "working-day-recheck").sum())
        print(f"{scenario.name} | {k.get('handoff_moves', 0):,} ({rechecked:,}) ({k.get('handoff_jobs', 0):,}) | "
              f"{k.get('handoff_lost_gpu_hours', 0.0):,.1f} | {k.get('handoff_moved_gpu_hours', 0.0):,.0f} | "
              f"{k['wait_mean_s'] / 3600:.3f} | {k['wait_p95_s'] / 3600:.2f} | {k['wait_p99_s'] / 3600:.2f} | "
              f"{k['served_gpu_hours']:,.0f} | {day['day_start_wait_jobs']:,}, "
              f"{day['day_start_wait_mean_s'] / 3600:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
