"""What live follow-the-sun's hand-offs do on the whole sample (issue 26, item 3).

Runs `follow-the-sun.toml` and `live-handoff.toml` (and live-handoff without its minimum run and
minimum request left) on the whole sample and prints, per run: hand-off moves and jobs, GPU-hours
lost and moved, mean, p95 and p99 wait, served GPU-hours, and the home work waiting at a
working-day start (engine.analysis.runs.handoff.day_start_wait: how many jobs, their mean wait).

    nice .venv/bin/python benchmarks/handoff_effect.py
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from engine.analysis.runs.handoff import day_start_wait
from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import prepared, run_prepared
from engine.sim.state.workload import build_workload
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"


def scenarios() -> list[Scenario]:
    sun, live = (Scenario.load(SCENARIOS / f"{name}.toml") for name in ("follow-the-sun", "live-handoff"))
    bare = replace(live, name="live-handoff, no minimums", handoff=replace(live.handoff, min_run_h=0.0, min_left_h=0.0))
    return [sun, live, bare]


def main() -> int:
    tables = read_bundle().tables
    dataset = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    print("scenario | moves (jobs) | GPU-h lost | GPU-h moved | mean wait h | p95 wait h | p99 wait h | "
          "served GPU-h | home work waiting at a day start: jobs, mean wait h")
    for scenario in scenarios():
        world, jobs, fleet = prepared(scenario, tables["jobs"], tables["fleet"], dataset)
        result = run_prepared(scenario, world, build_workload(jobs, fleet))
        k = kpis(result)
        waiting, wait_s = day_start_wait(result, world)
        print(f"{scenario.name} | {k.get('handoff_moves', 0):,} ({k.get('handoff_jobs', 0):,}) | "
              f"{k.get('handoff_lost_gpu_hours', 0.0):,.1f} | {k.get('handoff_moved_gpu_hours', 0.0):,.0f} | "
              f"{k['wait_mean_s'] / 3600:.3f} | {k['wait_p95_s'] / 3600:.2f} | {k['wait_p99_s'] / 3600:.2f} | "
              f"{k['served_gpu_hours']:,.0f} | {waiting:,}, {wait_s / 3600:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
