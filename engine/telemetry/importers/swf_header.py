"""The `; Key: value` header of an SWF log: machine size, start time, time zone and scheduler.

Also builds what the header implies about the world: the fleet (on-premise processors, one
slot each) and the region's time zone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.telemetry.importers.timestamps import is_zone, zone_from_offset

_KEY_VALUE = re.compile(r"^;\s*([A-Za-z]\w*)\s*:\s*(.*?)\s*$")
# "; Note: uses the EASY scheduler" (CTC-SP2, KTH-SP2), "; Note: uses MAUI scheduler" (HPC2N)
_SCHEDULER = re.compile(r"^;\s*Note\s*:.*\b(EASY|MAUI)\b.*\bscheduler\b", re.IGNORECASE)
_LEADING_INT = re.compile(r"^[+-]?\d+")


@dataclass(frozen=True)
class SwfHeader:
    """Header facts Meridian uses; None where the header is silent or unreadable."""

    max_nodes: int | None = None
    max_procs: int | None = None
    unix_start_s: int | None = None     # epoch seconds of the log's time 0
    timezone: str | None = None         # IANA name from TimeZoneString, or Etc/GMT+h from TimeZone
    timezone_note: str | None = None    # how `timezone` was obtained, when not given verbatim
    scheduler: str | None = None        # "easy" or "maui" when a Note line names the scheduler

    @classmethod
    def parse(cls, comment_lines: list[str]) -> "SwfHeader":
        """Read `; Key: value` lines; the first occurrence of a key wins."""
        fields: dict[str, str] = {}
        for line in comment_lines:
            match = _KEY_VALUE.match(line)
            if match and match.group(1).lower() not in fields:
                fields[match.group(1).lower()] = match.group(2)
        max_nodes = _positive_int(fields.get("maxnodes"))
        max_procs = _positive_int(fields.get("maxprocs")) or max_nodes
        start = _leading_int(fields.get("unixstarttime"))
        tz, note = _zone(fields.get("timezonestring"), _leading_int(fields.get("timezone")))
        named = next((m.group(1).lower() for m in map(_SCHEDULER.match, comment_lines) if m), None)
        return cls(max_nodes or max_procs, max_procs, start, tz, note, named)


def _leading_int(value: str | None) -> int | None:
    """The integer a header value starts with: '338 (batch partition; 512 total)' -> 338."""
    match = _LEADING_INT.match(value or "")
    return int(match.group()) if match else None


def _positive_int(value: str | None) -> int | None:
    number = _leading_int(value)
    return number if number and number > 0 else None


def _zone(name: str | None, offset_s: int | None) -> tuple[str | None, str | None]:
    if name and is_zone(name.strip()):
        return name.strip(), None
    fixed = zone_from_offset(offset_s) if offset_s is not None else None
    if fixed:
        why = f"TimeZoneString {name!r} is not a known zone" if name else "no TimeZoneString header"
        return fixed, f"{why}; using the fixed offset of the TimeZone header ({fixed}, no DST)"
    if name:
        return None, f"TimeZoneString {name!r} is not a known time zone; ignored"
    return None, None


def fleet_table(max_nodes: int, max_procs: int, region: str) -> pd.DataFrame:
    """`max_nodes` nodes named node-0001.. sharing `max_procs` processor slots as evenly as possible.

    On-premise hardware is paid for whether used or not, hence tier 'reserved'.
    """
    per_node, extra = divmod(max_procs, max_nodes)
    slots = np.full(max_nodes, per_node, dtype=np.int64)
    slots[:extra] += 1
    width = max(4, len(str(max_nodes)))
    return pd.DataFrame({
        "region": region,
        "node": [f"node-{i:0{width}d}" for i in range(1, max_nodes + 1)],
        "gpu_type": "cpu",
        "gpus": slots,
        "cpus": slots.astype(np.float64),
        "tier": "reserved",
    })
