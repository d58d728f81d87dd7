"""Job columns a generic CSV may give in another form (see `columns.DERIVED`), turned into the schema's.

- a Slurm TRES list (AllocTRES, ReqTRES: "cpu=8,mem=64G,node=1,gres/gpu:a100=4") gives gpus, gpu_type,
  cpus, memory_gib and nodes where the file has no column of its own for them; a list without
  gres/gpu is a job without GPUs (0);
- an elapsed run time (Slurm's Elapsed, [D-]HH:MM:SS, or seconds) gives a job's end as start + elapsed
  where the file records no end.
Every problem names the user's own column.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.telemetry.errors import ErrorCollector
from engine.telemetry.importers.common import CountedNote
from engine.telemetry.importers.slurm_fields import Tres, time_limit_s, tres

TRES_PARTS = {"gpus": ("gpus", "gres/gpu"), "gpu_type": ("gpu_type", "gres/gpu:TYPE"), "cpus": ("cpus", "cpu"),
              "memory_gib": ("memory_gib", "mem"), "nodes": ("nodes", "node")}


def expand_tres(text: dict[str, pd.Series], labels: dict[str, str], lines: np.ndarray, errors: ErrorCollector,
                notes: list[str]) -> np.ndarray:
    """Replace text["tres"] by the columns it gives that `text` lacks (text and labels updated in place);
    returns the mask of rows whose TRES list could not be read (each reported once)."""
    column, label = text.pop("tres"), labels.pop("tres")
    parsed: dict[str, Tres | ValueError] = {}
    for value in pd.unique(column.dropna()):
        try:
            parsed[value] = tres(str(value), label)
        except ValueError as exc:
            parsed[value] = exc
    found = [parsed.get(value) if isinstance(value, str) else None for value in column]
    failed = np.array([isinstance(item, ValueError) for item in found], dtype=bool)
    for i in np.flatnonzero(failed):
        errors.add(lines[i], str(found[i]))
    given = [name for name in TRES_PARTS if name not in text]
    for name in given:
        field, key = TRES_PARTS[name]
        values = [getattr(item, field) if isinstance(item, Tres) else None for item in found]
        if name == "gpus":   # a TRES list without gres/gpu allocates no GPUs
            values = [0.0 if isinstance(item, Tres) and v is None else v for item, v in zip(found, values)]
        text[name] = pd.Series([None if v is None else str(v) for v in values], dtype="str")
        labels[name] = f"{label} ({key})"
    if given:
        notes.append(f"{', '.join(given)} read from the Slurm TRES list in column {label!r}")
    return failed


def end_from_elapsed(elapsed: pd.Series, label: str, lines: np.ndarray, times: dict[str, np.ndarray],
                     errors: ErrorCollector, notes: list[str]) -> None:
    """Fill times["end_utc"] with start + elapsed where a started job has no end (times updated in place)."""
    seconds = durations(elapsed, label, lines, errors)
    start = times.get("start_utc")
    if start is None:
        notes.append(f"column {label!r} (elapsed run time) ignored: the file has no start times")
        return
    end = times.setdefault("end_utc", np.full(len(start), np.datetime64("NaT"), dtype=start.dtype))
    fill = np.isnat(end) & ~np.isnat(start) & np.isfinite(seconds)
    end[fill] = start[fill] + np.round(seconds[fill] * 1e6).astype("timedelta64[us]")
    if fill.any():
        notes.append(CountedNote(f"end = start + {label!r} for {{count:,}} job(s) without an end", int(fill.sum())))


def durations(text: pd.Series, label: str, lines: np.ndarray, errors: ErrorCollector) -> np.ndarray:
    """Seconds from [D-]HH:MM:SS (Slurm) or plain seconds; NaN where missing or not a duration (reported)."""
    codes, uniques = pd.factorize(text)
    table = np.array([_seconds(str(value)) for value in uniques] + [np.nan])
    values = table[codes]   # code -1 (missing) takes the NaN at the end
    bad = (codes >= 0) & np.isnan(values)
    errors.add_many(lines[bad], f"{{!r}} in column {label!r} is not a duration ([D-]HH:MM:SS or seconds)",
                    text[bad].to_numpy())
    return values


def _seconds(value: str) -> float:
    """One duration in seconds, NaN when it is not one."""
    try:
        seconds = float(value) if ":" not in value and "-" not in value else time_limit_s(value)
    except ValueError:
        return np.nan
    return np.nan if seconds is None or not np.isfinite(seconds) or seconds < 0 else float(seconds)
