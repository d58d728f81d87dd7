"""What GPU partitions did in a run under [partitions] (engine.world.partitions): MIG instances and
the GPUs held in MIG mode, the reconfigurations and their drain cost, and the interference on shared
GPUs. A run without a `partitions` table has none of these.

A MIG instance's job holds compute/7 of a GPU; a GPU in MIG mode is held whole by its partition from
its switch into MIG mode to the end of its switch back (or the run's end). `mig_gpu_hours_saved`
compares the whole GPUs the instances' jobs would have held for the same running (1 GPU each) with
the GPU-hours the GPUs in MIG mode were held: the saving of packing instances, less their unused
slices and the time the GPUs spent switching (negative when MIG cost more than it packed).
"""
from __future__ import annotations

import pandas as pd

from engine.sim.output.result import SimulationResult


def _hours(rows: pd.DataFrame, share: bool = True) -> float:
    span = rows["end_s"] - rows["start_s"]
    return float(((span * rows["gpu_share"]) if share else span).sum()) / 3600.0


def partitions_kpis(result: SimulationResult) -> dict[str, float]:
    """mig_instances, mig_slice_gpu_hours, mig_mode_gpu_hours, mig_slice_use (the first over the second;
    0 without MIG GPUs), mig_gpu_hours_saved, mig_reconfigurations, mig_drain_gpu_hours (of the switches),
    mig_repacks, mig_repack_drained (instances drained by them), mig_repack_drain_gpu_hours, shared_gpu_pieces, interference_mean_slowdown (over shared pieces; 1 without any) and
    interference_extra_gpu_hours (the running interference added, times the GPUs held); {} for a run
    without partitions."""
    table = result.partitions
    if table is None:
        return {}
    event = table["event"]
    instances, mode, shared = table[event == "instance"], table[event == "to-mig"], table[event == "shared"]
    switches, repacks = table[event.isin(["to-mig", "to-whole"])], table[event == "repack"]
    slices, held = _hours(instances), _hours(mode, share=False)
    extra = (shared["end_s"] - shared["start_s"]) * (1.0 - 1.0 / shared["slowdown"]) * shared["gpu_share"]
    return {"mig_instances": len(instances), "mig_slice_gpu_hours": slices, "mig_mode_gpu_hours": held,
            "mig_slice_use": slices / held if held > 0 else 0.0,
            "mig_gpu_hours_saved": _hours(instances, share=False) - held,
            "mig_reconfigurations": len(switches), "mig_drain_gpu_hours": float(switches["drain_gpu_hours"].sum()),
            "mig_repacks": len(repacks), "mig_repack_drained": int(repacks["co_tenants"].sum()),
            "mig_repack_drain_gpu_hours": float(repacks["drain_gpu_hours"].sum()),
            "shared_gpu_pieces": len(shared),
            "interference_mean_slowdown": float(shared["slowdown"].mean()) if len(shared) else 1.0,
            "interference_extra_gpu_hours": float(extra.sum()) / 3600.0}


def summary(names: list[str], results: list[SimulationResult]) -> pd.DataFrame:
    """One row per run with partitions: scenario, gpu_hours_held (GPUs allocated x start to end, the
    whole run), the partitions KPIs and rule_jct_h (mean completion time of the inference and
    development jobs that finished, hours; NaN without any)."""
    rows = []
    for name, result in zip(names, results):
        if result.partitions is None:
            continue
        jobs = result.jobs
        held = float(((jobs["end_s"] - jobs["start_s"]) * jobs["gpus_allocated"]).sum()) / 3600.0
        rule = jobs[jobs["workload_class"].isin(["inference", "development"]) & jobs["end_s"].notna()]
        rows.append({"scenario": name, "gpu_hours_held": held, **partitions_kpis(result),
                     "rule_jct_h": float((rule["end_s"] - rule["submit_s"]).mean()) / 3600.0 if len(rule) else
                     float("nan")})
    return pd.DataFrame(rows)
