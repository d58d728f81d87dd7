"""The public traces and published results Meridian's fidelity checks read, and where each comes from.

They are not part of the repository (their publishers' terms, and their size): they live in a folder
holding `traces/` and `expected/`, by default `shared/` beside the repository. The CLI and the
dashboard take `--shared DIR`, or the environment variable MERIDIAN_SHARED; nothing below them reads
the environment. The product works without them: only live fidelity re-runs and the trace tests need
them.
"""
from __future__ import annotations

from pathlib import Path

DEFAULT_SHARED = Path(__file__).resolve().parents[4] / "shared"   # <repo>/../shared
ENVIRONMENT = "MERIDIAN_SHARED"

_PWA = ("the Parallel Workloads Archive, https://www.cs.huji.ac.il/labs/parallel/workload/ (cite Feitelson, "
        "Tsafrir and Krakov, JPDC 2014, and the log's own '; Acknowledge:' header)")
# (path prefix under the shared folder, what it is and where it comes from); the first match counts
SOURCES = (
    ("traces/swf/lublin_256", "a Lublin-Feitelson model log as RLScheduler used it: data/ of "
                              "https://github.com/DIR-LAB/deep-batch-scheduler (Zhang et al., SC'20)"),
    ("traces/swf/KTH-SP2", "the KTH-SP2 log of " + _PWA),
    ("traces/swf/", "a real cluster log of " + _PWA),
    ("traces/alibaba-openb/", "Alibaba's GPU-sharing cluster trace: cluster-trace-gpu-v2023 of "
                              "https://github.com/alibaba/clusterdata (cite Weng et al., USENIX ATC'23)"),
    ("traces/alibaba-dlrm-2025/", "Alibaba's DLRM inference trace: cluster-trace-gpu-v2025 of "
                                  "https://github.com/alibaba/clusterdata (NSDI'25)"),
    ("traces/alibaba-spot-2026/", "Alibaba's spot-GPU node list: cluster-trace-v2026-spot-gpu of "
                                  "https://github.com/alibaba/clusterdata (ASPLOS'26)"),
    ("traces/philly/", "Microsoft Philly's active-node series, from "
                       "https://github.com/S-Lab-System-Group/HeliosArtifact (CC BY 4.0)"),
    ("expected/rlscheduler", "RLScheduler's published per-sequence results (Zhang et al., SC'20), tabulated"),
    ("expected/fgd", "FGD's published 10-seed curves (Weng et al., USENIX ATC'23), tabulated"),
    ("expected/", "published results, tabulated"),
)


def source_of(relative: str) -> str:
    """What the file at `relative` (a path under the shared folder) is and where it comes from."""
    relative = relative.replace("\\", "/")
    return next((text for prefix, text in SOURCES if relative.startswith(prefix)), "a public data file")


def missing_message(shared: Path, relatives: list[str]) -> str:
    """One sentence per absent file under `shared`, then how to provide them."""
    files = "; ".join(f"{shared / r} ({source_of(r)})" for r in relatives)
    return (f"not on this machine: {files}. Put the public traces and results in {shared} (traces/ and expected/), "
            f"or point {ENVIRONMENT} (or --shared DIR) at a folder holding them.")
