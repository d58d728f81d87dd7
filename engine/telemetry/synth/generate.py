"""Generate the sample bundle: world tables, job streams, FIFO replay, measured GPU and memory use, files
on disk.

`generate_sample(out_dir, seed, scale)` writes the files of `BUNDLE_FILES`; the same seed
and scale always give byte-identical files. Scale multiplies arrival rates and the fleet.
"""
from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from engine.telemetry.sample import BUNDLE_FILES
from engine.telemetry.synth import daytime, workload
from engine.telemetry.synth.clock import WINDOW_END_S
from engine.telemetry.synth.fifo import Replay, replay_pool
from engine.telemetry.synth.memory import MEMORY_STREAM, job_memory
from engine.telemetry.synth.records import jobs_table, requested_memory_gib, statuses, utilization_table
from engine.telemetry.synth.usage import USAGE_STREAM, job_usage
from engine.telemetry.synth.world import carbon_frame, fleet_frame, prices_frame, regions_frame, teams_frame

DEFAULT_SEED = 20260803
# Order of the job streams; each draws from its own generator so tuning one leaves the others as they are.
STREAMS = (("training", workload.training), ("inference", daytime.inference),
           ("development", daytime.development), ("batch", workload.batch), ("hpo", workload.hpo))


def job_specs(seed: int, scale: float) -> pd.DataFrame:
    """All job streams, in submit order (ties: stream order, then order within the stream)."""
    frames = [make(np.random.default_rng([seed, k]), scale) for k, (_, make) in enumerate(STREAMS)]
    specs = pd.concat(frames, ignore_index=True)
    return specs.iloc[np.argsort(specs["submit_s"].to_numpy(dtype=np.int64), kind="stable")].reset_index(drop=True)


def fit_to_fleet(specs: pd.DataFrame, fleet: pd.DataFrame) -> pd.DataFrame:
    """Shrink jobs that ask for more than their (scaled) pool has, so FIFO cannot block forever.

    A gang may use at most the nodes not held for the whole window by guaranteed whole-node replicas.
    """
    specs = specs.copy()
    node_milli = specs["node_milli"].to_numpy(dtype=np.int64).copy()
    nodes = specs["nodes"].to_numpy(dtype=np.int64).copy()
    guaranteed = (specs["qos"] == "guaranteed").to_numpy()
    for (region, gpu_type), group in fleet.groupby(["region", "gpu_type"], sort=True):
        caps = np.sort(group["gpus"].to_numpy(dtype=np.int64) * 1000)
        mine = ((specs["region"] == region) & (specs["gpu_type"] == gpu_type)).to_numpy()
        node_milli[mine] = np.minimum(node_milli[mine], caps[-1])
        held = int(nodes[mine & guaranteed & (node_milli == caps[-1])].sum())
        room = len(caps) - np.searchsorted(caps, node_milli[mine], side="left")
        nodes[mine] = np.minimum(nodes[mine], np.where(guaranteed[mine], room, np.maximum(1, room - held)))
    specs["node_milli"], specs["nodes"] = node_milli, nodes
    specs["gpus"] = nodes * node_milli / 1000.0
    return specs


def simulate(seed: int, scale: float) -> dict[str, pd.DataFrame]:
    """Every table of the bundle, jobs with ISO-8601 text timestamps."""
    fleet = fleet_frame(scale)
    specs = fit_to_fleet(job_specs(seed, scale), fleet)
    start = np.full(len(specs), -1, dtype=np.int64)
    end = start.copy()
    gave_up = np.zeros(len(specs), dtype=bool)
    for (region, gpu_type), group in fleet.groupby(["region", "gpu_type"], sort=True):
        idx = np.flatnonzero(((specs["region"] == region) & (specs["gpu_type"] == gpu_type)).to_numpy())
        mine = specs.iloc[idx]
        result = replay_pool(group["gpus"].to_numpy(dtype=np.int64) * 1000,
                             mine["submit_s"].to_numpy(dtype=np.int64), mine["node_milli"].to_numpy(dtype=np.int64),
                             mine["nodes"].to_numpy(dtype=np.int64), mine["run_s"].to_numpy(dtype=np.int64),
                             mine["patience_s"].to_numpy(dtype=np.int64), WINDOW_END_S)
        start[idx], end[idx], gave_up[idx] = result.start_s, result.end_s, result.gave_up
    status, start, end = statuses(specs, Replay(start, end, gave_up))
    cluster = (specs["region"] + "-" + specs["gpu_type"].str.lower()).to_numpy(dtype=object)
    usage = job_usage(np.random.default_rng([seed, USAGE_STREAM]), specs, start, end)
    usage["memory_used_gib_max"] = job_memory(np.random.default_rng([seed, MEMORY_STREAM]), specs,
                                              requested_memory_gib(specs), usage["gpus_used_max"])
    return {
        "regions": regions_frame(), "teams": teams_frame(), "prices": prices_frame(),
        "carbon": carbon_frame(), "fleet": fleet,
        "jobs": jobs_table(specs, status, start, end, usage),
        "utilization": utilization_table(fleet, cluster, specs["gpus"].to_numpy(dtype=float), start, end),
    }


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    """CSV text with a plain header; values never hold commas, quotes or newlines, so none is quoted."""
    buffer = io.BytesIO()
    buffer.write((",".join(frame.columns) + "\n").encode("utf-8"))
    pa_csv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), buffer,
                     pa_csv.WriteOptions(include_header=False, quoting_style="none"))
    return buffer.getvalue()


def generate_sample(out_dir: str | Path, seed: int = DEFAULT_SEED, scale: float = 1.0) -> dict[str, Path]:
    """Write the sample bundle into `out_dir`; returns {table: path}. Byte-identical per (seed, scale)."""
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = simulate(seed, scale)
    paths = {}
    for table, name in BUNDLE_FILES.items():
        data = _csv_bytes(tables[table])
        if name.endswith(".gz"):
            buffer = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=6, mtime=0) as gz:
                gz.write(data)
            data = buffer.getvalue()
        paths[table] = out / name
        paths[table].write_bytes(data)
    return paths
