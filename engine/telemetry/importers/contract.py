"""The data contract of a jobs table: every column's type, unit and range, checked at import with the file
and the line (engine.telemetry.importers.jobs_frame applies it to every job importer's rows).

What passes is what the simulator and the pages are built for; a value outside is a row problem naming
its line, column and the limit, never an "internal error" or an exhausted memory later on.

| column                                   | type    | unit             | range                          |
|------------------------------------------|---------|------------------|--------------------------------|
| submit_utc, start_utc, end_utc,          | time    | UTC              | 1970-01-01 to 2100-01-01       |
| deadline_utc                             |         |                  |                                |
| gpus                                     | number  | GPUs             | 0 to 100,000                   |
| gpu_milli                                | whole   | 1/1000 GPU       | 0 to 1,000                     |
| cpus                                     | number  | cores            | 0 to 10,000,000                |
| memory_gib                               | number  | GiB              | 0 to 10,000,000                |
| nodes                                    | whole   | nodes            | 0 to 1,000,000                 |
| requested_runtime_s                      | number  | seconds          | 0 to 100 years                 |
| data_size_gb                             | number  | GB               | 0 to 1e9                       |
| priority                                 | number  | (the scheduler's)| -1e15 to 1e15                  |
| gpu_util_pct                             | number  | percent          | 0 to 100                       |
| gpus_used_max                            | number  | GPUs             | 0 to the job's GPUs            |
| gpus_used_pct                            | number  | % of one GPU     | 0 to 100 x the job's GPUs      |
| job_id, user_name, team, project, qos,   | text    |                  | at most 256 characters, no     |
| queue, gpu_type, region, cluster,        |         |                  | control character but tab, LF  |
| data_location, residency                 |         |                  | and CR (NUL, ESC, ... refused) |
| columns of a file                        |         |                  | at most 1,000                  |
"""
from __future__ import annotations

import numpy as np

TEXT_COLUMNS = ("job_id", "user_name", "team", "project", "qos", "queue", "gpu_type", "region",
                "cluster", "data_location", "residency")
TIME_COLUMNS = ("submit_utc", "start_utc", "end_utc", "deadline_utc")
EARLIEST, LATEST = np.datetime64("1970-01-01T00:00:00", "ns"), np.datetime64("2100-01-01T00:00:00", "ns")
MAX_TEXT_CHARS = 256
MAX_COLUMNS = 1_000
CONTROL_CHARACTERS = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"   # tab, LF and CR stay: quoted multi-line values
# column -> (minimum, maximum, whole numbers only); gpus_used_max and gpus_used_pct are bounded by the job's
# GPUs as well (jobs_frame).
NUMBER_COLUMNS = {
    "priority": (-1e15, 1e15, False), "gpus": (0, 100_000, False), "gpu_milli": (0, 1000, True),
    "cpus": (0, 10_000_000, False), "memory_gib": (0, 10_000_000, False), "nodes": (0, 1_000_000, True),
    "requested_runtime_s": (0, 100 * 365 * 86_400, False), "data_size_gb": (0, 1e9, False),
    "gpu_util_pct": (0, 100, False), "gpus_used_max": (0, 100_000, False), "gpus_used_pct": (0, 10_000_000, False),
}
