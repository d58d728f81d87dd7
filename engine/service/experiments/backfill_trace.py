"""An SWF log filtered as the SC'15 backfilling experiment filtered it (Gaussier et al., SC'15).

"Improving backfilling by using machine learning to predict running times" ran its simulator (pyss)
on Parallel Workloads Archive logs after this filter, applied in this order to the job lines:
1. keep jobs with allocated (field 5) and requested (field 8) processors <= MaxProcs;
2. if both are > 0 keep them; if only one is > 0 copy it to the other; if neither, drop the job;
3. keep run time (field 4) > 0;
4. drop jobs with requested time (field 9) <= 0;
5. where the requested time is below the run time, the run time becomes the requested time;
6. keep submit time (field 2) >= 0.
The simulator then reads, per kept job, the requested processors (field 8), the run time and the
requested time as whole seconds (truncated; at least 1 s) and the user (field 12); the machine is one
pool of `; MaxProcs:` processors (`; MaxNodes:` where MaxProcs is absent). Jobs keep the log's line
order, which is the order submissions with the same time are handled in. On CTC-SP2 this keeps 77,199
jobs, on KTH-SP2 28,481.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.service.experiments.swf_jobs import read_swf_lines, read_trace
from engine.telemetry.errors import ImportRejected

_SUBMIT, _WAIT, _RUN, _ALLOC, _REQ_PROCS, _REQ_TIME, _USER = 1, 2, 3, 4, 7, 8, 11


@dataclass(frozen=True)
class PyssTrace:
    """The filtered jobs, one entry per job in log order; times in whole seconds."""

    source: str
    processors: int          # MaxProcs: the one pool
    submit_s: np.ndarray     # int64
    run_s: np.ndarray        # int64, >= 1
    requested_s: np.ndarray  # int64, >= run
    procs: np.ndarray        # int64, 1..processors
    user: np.ndarray         # int64, the log's user number
    end_s: np.ndarray | None = None   # float64, the job's end in the log (submit + wait + run), NaN: wait unknown
    unix_start_s: int | None = None   # epoch seconds of the log's time 0 (`; UnixStartTime:`)
    timezone: str | None = None       # the log's IANA zone (`; TimeZoneString:`)

    def __len__(self) -> int:
        return len(self.submit_s)


def load_pyss_trace(path: str | Path) -> PyssTrace:
    """Read and filter an SWF log (plain or gzip). Raises ImportRejected naming bad lines."""
    return parse_pyss_trace(read_trace(path), Path(path).name)


def parse_pyss_trace(data: bytes, source: str) -> PyssTrace:
    """`load_pyss_trace` on bytes already read; `source` names the file in messages."""
    header, values = read_swf_lines(data, source)
    if not header.max_procs:
        raise ImportRejected.whole_file(source, "no '; MaxProcs:' header: the machine size is unknown")
    max_procs = int(header.max_procs)
    alloc, req = values[:, _ALLOC], values[:, _REQ_PROCS]
    keep = (alloc <= max_procs) & (req <= max_procs)                       # 1
    req = np.where(req > 0, req, alloc)                                    # 2: copy the positive one
    keep &= req > 0
    run, requested, wait = values[:, _RUN], values[:, _REQ_TIME], values[:, _WAIT]
    end = np.where(wait >= 0, values[:, _SUBMIT] + wait + run, np.nan)   # before step 5: the log's own end
    keep &= run > 0                                                        # 3
    keep &= requested > 0                                                  # 4
    run = np.minimum(run, requested)                                       # 5
    keep &= values[:, _SUBMIT] >= 0                                        # 6
    run_s = np.maximum(np.trunc(run[keep]).astype(np.int64), 1)
    requested_s = np.maximum(np.trunc(requested[keep]).astype(np.int64), 1)
    return PyssTrace(source, max_procs, np.trunc(values[keep, _SUBMIT]).astype(np.int64), run_s,
                     np.maximum(requested_s, run_s), req[keep].astype(np.int64),
                     values[keep, _USER].astype(np.int64), end[keep], header.unix_start_s, header.timezone)
