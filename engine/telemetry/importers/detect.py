"""Guess a file's format from its name and first lines."""
from __future__ import annotations

import gzip
import io
import re

_SWF_LINE = re.compile(r"^\s*-?\d+(\.\d+)?(\s+-?\d+(\.\d+)?){17}\s*$")


def _head(data: bytes, size: int = 65536) -> bytes:
    if data[:2] != b"\x1f\x8b":
        return data[:size]
    try:
        return gzip.GzipFile(fileobj=io.BytesIO(data)).read(size)
    except (OSError, EOFError):
        return b""


def _header_fields(line: str, sep: str) -> set[str]:
    return {f.strip().strip('"').lower() for f in line.split(sep)}


def detect_format(name: str, data: bytes) -> str:
    """Return one of the importer format names. Falls back to 'csv'."""
    head = _head(data)
    text = head.decode("utf-8-sig", errors="replace")  # -sig: spreadsheet exports start with a BOM
    lines = [ln for ln in text.splitlines() if ln.strip()]
    lower = name.lower()
    if lower.endswith((".swf", ".swf.gz")) or (lines and lines[0].lstrip().startswith(";")):
        return "swf"
    if not lines:
        return "csv"
    first = lines[0]
    if _SWF_LINE.match(first):
        return "swf"
    if "|" in first and "jobid" in _header_fields(first, "|"):
        return "sacct"
    fields = _header_fields(first, ",")
    if {"sn", "cpu_milli", "memory_mib", "gpu", "model"} <= fields:
        return "openb-nodes"
    if {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"} <= fields:
        return "openb-pods"
    has_time = bool(fields & {"time", "timestamp", "ts", "ts_utc"})
    has_util = bool(fields & {"active", "busy", "busy_gpus", "util_pct", "utilization", "utilisation"})
    if has_time and has_util and not fields & {"submit", "submit_time", "submit_utc"}:
        return "utilization"
    return "csv"
