"""An SWF log (plain or gzip) as numpy arrays, read with RLScheduler's semantics.

The semantics are those of the published RLScheduler code (Zhang et al., SC'20), so that
replays agree with its results:
- processors = max(allocated (field 5), requested (field 8));
- requested time = field 9, or the log's run time (field 4, as written) where field 9 is -1;
- a run time < 0 becomes 10 s, then jobs with run time 0 are dropped;
- jobs are sorted by id (stably) and indexed 0..N-1;
- the cluster has `; MaxNodes:` nodes of MaxProcs / MaxNodes processors each (MaxProcs falls back
  to MaxNodes); a job takes ceil(processors / processors per node) whole nodes.
Times are seconds from the log's time 0.
"""
from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.telemetry.errors import ErrorCollector, ImportRejected
from engine.telemetry.importers.common import decode_text
from engine.telemetry.importers.swf_header import SwfHeader
from engine.telemetry.input_limits import read_input

SWF_FIELDS = 18
_ID, _SUBMIT, _RUN, _ALLOC, _REQ_PROCS, _REQ_TIME = 0, 1, 3, 4, 7, 8
_REQ_MEMORY, _USER, _GROUP, _EXECUTABLE = 9, 11, 12, 13


@dataclass(frozen=True)
class SwfJobs:
    """The kept jobs of one log, one array entry per job, in job-id order (index 0..N-1)."""

    source: str
    job_id: np.ndarray        # int64, field 1
    submit_s: np.ndarray      # float64
    run_s: np.ndarray         # float64, true run time (> 0)
    requested_s: np.ndarray   # float64, the user's estimate (or the run time)
    procs: np.ndarray         # float64 processors
    max_nodes: int
    max_procs: int
    memory: np.ndarray | None = None      # float64 requested memory (field 10), -1: not recorded
    user: np.ndarray | None = None        # float64 user number (field 12), -1: not recorded
    group: np.ndarray | None = None       # float64 group number (field 13), -1: not recorded
    executable: np.ndarray | None = None  # float64 executable number (field 14), -1: not recorded

    @property
    def procs_per_node(self) -> float:
        return self.max_procs / self.max_nodes

    @property
    def nodes(self) -> np.ndarray:
        """int64 whole nodes each job occupies."""
        return np.ceil(self.procs / self.procs_per_node).astype(np.int64)

    def __len__(self) -> int:
        return len(self.job_id)


def load_swf_jobs(path: str | Path) -> SwfJobs:
    """Read an SWF file (gzip recognised by content). Raises ImportRejected naming bad lines."""
    return parse_swf_jobs(read_trace(path), Path(path).name)


def read_trace(path: str | Path) -> bytes:
    """A trace file's bytes; ImportRejected when it cannot be read or is no regular file (input_limits)."""
    return read_input(path)


def print_rejected(exc: ImportRejected) -> None:
    """A trace's problems, one per line, and a summary, on stderr (for the experiments' commands)."""
    for line in exc.lines():
        print(line, file=sys.stderr)
    print(f"meridian: the trace cannot be read ({exc.total} problem{'s' if exc.total != 1 else ''})", file=sys.stderr)


def parse_swf_jobs(data: bytes, source: str) -> SwfJobs:
    """`load_swf_jobs` on bytes already read; `source` names the file in messages."""
    header, values = read_swf_lines(data, source)
    if header.max_nodes is None:
        raise ImportRejected.whole_file(source, "no '; MaxNodes:' or '; MaxProcs:' header: the cluster size is unknown")

    procs = np.maximum(values[:, _ALLOC], values[:, _REQ_PROCS])
    raw_run = values[:, _RUN]
    requested = np.where(values[:, _REQ_TIME] == -1, raw_run, values[:, _REQ_TIME])
    run = np.where(raw_run < 0, 10.0, raw_run)
    keep = run > 0
    order = np.argsort(values[keep, _ID], kind="stable")
    return SwfJobs(
        source=source,
        job_id=values[keep, _ID][order].astype(np.int64),
        submit_s=values[keep, _SUBMIT][order],
        run_s=run[keep][order],
        requested_s=requested[keep][order],
        procs=procs[keep][order],
        max_nodes=header.max_nodes,
        max_procs=header.max_procs,
        **{name: values[keep, column][order] for name, column in
           (("memory", _REQ_MEMORY), ("user", _USER), ("group", _GROUP), ("executable", _EXECUTABLE))},
    )


def read_swf_lines(data: bytes, source: str) -> tuple[SwfHeader, np.ndarray]:
    """The header and the job lines, in file order, as an (n, 18) float64 array; every malformed line
    is reported (ImportRejected)."""
    text = decode_text(data, source)
    comments, body, numbers = [], [], []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith(";"):
            comments.append(stripped)
        elif stripped:
            body.append(stripped)
            numbers.append(number)
    if not body:
        raise ImportRejected.whole_file(source, "no job lines")
    return SwfHeader.parse(comments), _values(body, np.asarray(numbers), source)


def _values(body: list[str], numbers: np.ndarray, source: str) -> np.ndarray:
    """The job lines as an (n, 18) float64 array; every malformed line is reported."""
    try:
        frame = pd.read_csv(io.StringIO("\n".join(body)), sep=r"\s+", header=None, dtype=np.float64, engine="c")
        values = frame.to_numpy()
        if values.shape == (len(body), SWF_FIELDS) and np.isfinite(values).all():
            return values
    except (ValueError, pd.errors.ParserError):
        pass
    errors = ErrorCollector(source)
    for number, line in zip(numbers, body):
        parts = line.split()
        if len(parts) != SWF_FIELDS:
            errors.add(number, f"expected {SWF_FIELDS} numeric fields, found {len(parts)}")
            continue
        for k, part in enumerate(parts):
            try:
                if not np.isfinite(float(part)):
                    raise ValueError
            except ValueError:
                errors.add(number, f"field {k + 1} is not a number: {part!r}")
                break
    errors.raise_if_any()
    raise ImportRejected.whole_file(source, "the job lines could not be read as numbers")
