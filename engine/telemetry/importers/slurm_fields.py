"""Slurm's value syntaxes: job states, time limits, TRES lists, and partition names as workload hints.

Each parser takes one text value and returns Meridian's value, or raises `ValueError` whose
message is the reason shown to the user.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

STATES = {
    "COMPLETED": "completed",
    "FAILED": "failed", "TIMEOUT": "failed", "OUT_OF_MEMORY": "failed", "NODE_FAIL": "failed",
    "BOOT_FAIL": "failed", "DEADLINE": "failed",
    "CANCELLED": "cancelled",
    "PREEMPTED": "preempted",
    "RUNNING": "running", "SUSPENDED": "running", "REQUEUED": "running", "RESIZING": "running",
    "PENDING": "pending",
}
NO_LIMIT = {"", "UNLIMITED", "PARTITION_LIMIT", "NONE", "INVALID"}
# Substrings of a partition name that reveal the workload, checked in this order.
PARTITION_HINTS = (
    ("interactive", "development"), ("debug", "development"), ("dev", "development"),
    ("infer", "inference"),
    ("train", "training"),
    ("hpo", "hpo"), ("sweep", "hpo"),
    ("batch", "batch"),
)
_DURATION = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)([KMGTP]?)$", re.IGNORECASE)
_MIB_PER_UNIT = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024**2, "P": 1024**3}


def job_state(value: str) -> str:
    """'CANCELLED by 123' -> 'cancelled'; 'TIMEOUT' -> 'failed'."""
    words = value.split()
    key = words[0].rstrip("+").upper() if words else ""
    if key not in STATES:
        raise ValueError(f"unknown state {value!r}")
    return STATES[key]


def time_limit_s(value: str) -> float | None:
    """Slurm duration -> seconds; None for no limit.

    Forms: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; UNLIMITED and Partition_Limit are None.
    """
    if value.strip().upper() in NO_LIMIT:
        return None
    match = _DURATION.match(value.strip())
    if not match:
        raise ValueError(f"Timelimit is not a duration: {value!r}")
    days, first, second, third = match.groups()
    parts = [int(p) for p in (first, second, third) if p is not None]
    if days is not None:
        hours, minutes, seconds = (parts + [0, 0])[:3]
        return float(((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds)
    if len(parts) == 3:
        return float((parts[0] * 60 + parts[1]) * 60 + parts[2])
    minutes, seconds = (parts + [0])[:2]
    return float(minutes * 60 + seconds)


@dataclass(frozen=True)
class Tres:
    """What a TRES list allocates; None where it says nothing."""

    gpus: float | None = None
    gpu_type: str | None = None     # upper-case; several types joined by '|'
    cpus: float | None = None
    memory_gib: float | None = None
    nodes: int | None = None


def tres(value: str, column: str) -> Tres:
    """'cpu=8,mem=64G,node=1,gres/gpu=4,gres/gpu:a100=4' -> Tres(4, 'A100', 8, 64, 1)."""
    fields: dict[str, str] = {}
    for item in value.split(","):
        key, sep, amount = item.strip().partition("=")
        if not item.strip():
            continue
        if not sep:
            raise ValueError(f"{column}: {item.strip()!r} is not key=value")
        fields[key.strip().lower()] = amount.strip()

    def number(key: str) -> float | None:
        if key not in fields:
            return None
        try:
            amount = float(fields[key])
        except ValueError:
            raise ValueError(f"{column}: {key} is not a number: {fields[key]!r}") from None
        if amount < 0:
            raise ValueError(f"{column}: {key} is negative: {fields[key]!r}")
        return amount

    typed = {key.split(":", 1)[1]: number(key) for key in fields if key.startswith("gres/gpu:")}
    gpus = number("gres/gpu")
    if gpus is None and typed:
        gpus = float(sum(typed.values()))
    gpu_type = "|".join(sorted(name.upper() for name in typed)) or None
    memory = None
    if "mem" in fields:
        match = _MEMORY.match(fields["mem"])
        if not match:
            raise ValueError(f"{column}: mem is not a size: {fields['mem']!r}")
        memory = float(match.group(1)) * _MIB_PER_UNIT[match.group(2).upper()] / 1024
    nodes = number("node")
    return Tres(gpus, gpu_type, number("cpu"), memory, None if nodes is None else int(nodes))


def workload_from_partition(partition: str | None) -> str:
    """A workload class guessed from words in a partition name; 'unknown' when it says nothing."""
    name = (partition or "").lower()
    for hint, workload in PARTITION_HINTS:
        if hint in name:
            return workload
    return "unknown"
