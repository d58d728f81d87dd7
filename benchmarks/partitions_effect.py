"""What GPU partitions do to the sample's inference and development work (issue 27, item 3).

Runs sample_data/scenarios/mig-inference.toml (its first week, EASY backfilling) without its
[partitions] table (whole GPUs), as bundled (MIG), as bundled with repacking (`repack` "checkpoint" and
"wait"), and with its rule under time-slicing and MPS (engine/world/partitions.py, their default
interference), and prints: GPU-hours held by jobs (GPUs allocated x start to end, the whole run), the
same counting each GPU in MIG mode whole instead of its instances, mean JCT (all jobs, and the rule's
inference and development jobs), p95 wait, and the partitions KPIs (engine/analysis/runs/partitions.py).
With --scarce every variant runs on the fleet with three quarters of its A100s and H100s in the regions
where the rule's jobs run removed (SCARCE: [[fleet]] edits), where MIG GPUs are short.

    nice .venv/bin/python benchmarks/partitions_effect.py [--scarce]
"""
from __future__ import annotations

import copy
import sys
import time
from pathlib import Path

from engine.analysis.runs.partitions import partitions_kpis
from engine.analysis.runs.sim_metrics import kpis
from engine.core.errors import ScenarioError
from engine.core.toml_file import read_toml
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

SCENARIO = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios" / "mig-inference.toml"
SCARCE = [{"region": "eu-west", "gpu_type": "A100", "remove_gpus": 96},
          {"region": "eu-north", "gpu_type": "H100", "remove_gpus": 96},
          {"region": "us-east", "gpu_type": "A100", "remove_gpus": 96},
          {"region": "us-east", "gpu_type": "H100", "remove_gpus": 128},
          {"region": "us-west", "gpu_type": "H100", "remove_gpus": 160}]


def variants(scarce: bool = False) -> list[tuple[str, Scenario]]:
    """(label, scenario): without [partitions], MIG as bundled, with repacking, with inference on 4g
    instances (which sit only at slice 0, so 1g instances block them) with and without repacking, and
    time-slicing and MPS with its rule."""
    bundled = read_toml(SCENARIO, "scenario", ScenarioError)
    out = []
    for label, changes in (("whole GPUs", None), ("MIG", {}),
                           ("MIG, repack checkpoint", {"repack": "checkpoint"}), ("MIG, repack wait", {"repack": "wait"}),
                           ("MIG 4g/1g", {"inference_profile": "4g"}),
                           ("MIG 4g/1g, repack checkpoint", {"inference_profile": "4g", "repack": "checkpoint"}),
                           ("MIG 4g/1g, repack wait", {"inference_profile": "4g", "repack": "wait"}),
                           ("time-slicing", {"mode": "time-slicing"}), ("MPS", {"mode": "mps"})):
        spec = copy.deepcopy(bundled)
        if scarce:
            spec["fleet"] = SCARCE
        if changes is None:
            spec.pop("partitions")
        else:
            spec["partitions"].update(changes)
        out.append((label, Scenario.from_dict(spec, default_name=f"mig-inference {label}")))
    return out


def row(result) -> dict:
    k, p, jobs = kpis(result), partitions_kpis(result), result.jobs
    held = float(((jobs["end_s"] - jobs["start_s"]) * jobs["gpus_allocated"]).sum()) / 3600.0
    rule = jobs[jobs["workload_class"].isin(["inference", "development"])]
    return {"held": held, "held_whole": held - p.get("mig_slice_gpu_hours", 0.0) + p.get("mig_mode_gpu_hours", 0.0),
            "jct": k["jct_mean_s"] / 3600, "rule_jct": float((rule["end_s"] - rule["submit_s"]).mean()) / 3600,
            "p95": k["wait_p95_s"] / 3600, **p}


def main() -> int:
    scarce = "--scarce" in sys.argv[1:]
    tables = read_bundle().tables
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    print("| scenario | GPU-h held by jobs | counting MIG GPUs whole | mean JCT (h) | inference+development JCT (h) | "
          "p95 wait (h) | MIG instances | slices used | reconfigurations | drain GPU-h | repacks (drained) | "
          "repack drain GPU-h | interference | run s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, scenario in variants(scarce):
        started = time.perf_counter()
        r = row(run_scenario(scenario, tables["jobs"], tables["fleet"], world))
        print(f"| {label} | {r['held']:,.0f} | {r['held_whole']:,.0f} | {r['jct']:.2f} | {r['rule_jct']:.2f} | "
              f"{r['p95']:.2f} | {r.get('mig_instances', 0):,} | {r.get('mig_slice_use', 0):.1%} | "
              f"{r.get('mig_reconfigurations', 0):,} | {r.get('mig_drain_gpu_hours', 0):.1f} | "
              f"{r.get('mig_repacks', 0):,} ({r.get('mig_repack_drained', 0):,}) | "
              f"{r.get('mig_repack_drain_gpu_hours', 0):.2f} | "
              f"x{r.get('interference_mean_slowdown', 1):.3f} | {time.perf_counter() - started:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
