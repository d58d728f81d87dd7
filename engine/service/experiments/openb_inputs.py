"""Alibaba openb node and pod lists (cluster-trace-gpu-v2023) as inputs of the FGD experiment.

Node list `sn,cpu_milli,memory_mib,gpu,model`; pod list `name,cpu_milli,memory_mib,num_gpu,gpu_milli`
plus an optional `gpu_spec` (allowed GPU models separated by `|`); other columns (times, qos,
phase) are ignored. Plain or gzipped files; every bad row is reported with its line (ImportRejected).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.core.fleet_view import MILLI, PodRequest
from engine.telemetry.errors import ErrorCollector, ImportRejected
from engine.telemetry.importers.common import decode_text
from engine.telemetry.importers.contract import OPENB_NODES, OPENB_PODS, OPENB_TEXT, Limit
from engine.telemetry.importers.csv_records import CSV
from engine.telemetry.importers.named_columns import check_texts, numbers, read_rows, report_empty
from engine.telemetry.input_limits import read_input

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")


@dataclass(frozen=True)
class PodList:
    """Pods in file order: name, and int64 arrays cpu_milli, memory_mib, num_gpu, gpu_milli (per GPU);
    gpu_models: allowed GPU models per pod (empty tuple: any)."""

    source: str
    name: np.ndarray
    cpu_milli: np.ndarray
    memory_mib: np.ndarray
    num_gpu: np.ndarray
    gpu_milli: np.ndarray
    gpu_models: tuple[tuple[str, ...], ...]

    def __len__(self) -> int:
        return len(self.name)

    @property
    def total_gpu_milli(self) -> np.ndarray:
        return self.num_gpu * self.gpu_milli

    def requests(self) -> list[PodRequest]:
        """One PodRequest per pod, in file order."""
        return [PodRequest(int(c), int(m), int(n), int(g), s) for c, m, n, g, s in zip(
            self.cpu_milli, self.memory_mib, self.num_gpu, self.gpu_milli, self.gpu_models)]


def _read(path: str | Path) -> tuple[str, str]:
    path = Path(path)
    return decode_text(read_input(path), path.name), path.name


def _whole(rows, column: str, errors: ErrorCollector, limits: dict[str, Limit]) -> np.ndarray:
    """A column of whole numbers within the data contract's `limits` (contract.OPENB_NODES or OPENB_PODS)."""
    return np.nan_to_num(numbers(rows, column, errors, limit=limits[column])).astype(np.int64)


def load_nodes(path: str | Path) -> pd.DataFrame:
    """Columns sn, cpu_milli, memory_mib, gpu (count), model ('' for a CPU-only node), in file order."""
    text, source = _read(path)
    errors = ErrorCollector(source)
    rows = read_rows(text, source, CSV, NODE_COLUMNS, (), errors)
    frame = pd.DataFrame({"sn": rows.frame["sn"]})
    for column in ("cpu_milli", "memory_mib", "gpu"):
        frame[column] = _whole(rows, column, errors, OPENB_NODES)
    frame["model"] = rows.frame["model"]
    report_empty(rows, "sn", errors)
    check_texts(rows, OPENB_TEXT, errors)
    lacking = ((frame["gpu"] > 0) & (frame["model"] == "")).to_numpy()
    errors.add_many(rows.lines[lacking], "a node with GPUs needs a GPU model")
    errors.raise_if_any()
    if not len(frame):
        raise ImportRejected.whole_file(source, "no nodes")
    return frame


def load_pods(path: str | Path) -> PodList:
    """Every pod row, whatever its phase; times are ignored."""
    text, source = _read(path)
    errors = ErrorCollector(source)
    rows = read_rows(text, source, CSV, POD_COLUMNS, ("gpu_spec",), errors)
    cpu, memory, num_gpu, gpu_milli = (_whole(rows, c, errors, OPENB_PODS)
                                       for c in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli"))
    report_empty(rows, "name", errors)
    check_texts(rows, OPENB_TEXT, errors)
    checked = errors.valid(rows.lines)   # rows whose values passed: a rejected value is not read as 0 below
    mismatch = checked & ((num_gpu == 0) != (gpu_milli == 0))
    errors.add_many(rows.lines[mismatch], "num_gpu and gpu_milli must both be 0 (CPU only) or both positive")
    shared = checked & (gpu_milli > 0) & (gpu_milli < MILLI) & (num_gpu != 1)
    errors.add_many(rows.lines[shared], "a pod sharing a GPU (gpu_milli < 1000) must ask for num_gpu 1")
    errors.raise_if_any()
    if not len(rows):
        raise ImportRejected.whole_file(source, "no pods")
    specs = rows.text("gpu_spec", "")
    models = tuple(tuple(m.strip() for m in spec.split("|") if m.strip()) for spec in specs)
    return PodList(source, rows.frame["name"].to_numpy(), cpu, memory, num_gpu, gpu_milli, models)
