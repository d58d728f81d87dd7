"""Workload and fleet edits a scenario applies to a dataset's tables (engine.scenario).

Workload edits, in this order: `window` keeps jobs submitted in [start, end); `compress` makes
arrivals `load_scale` times as dense (every time shifted towards the first submit); `grow`
changes the number of jobs by `growth`: above 1 each job gets floor(growth - 1) copies plus one
more with probability frac(growth - 1), below 1 each job is kept with probability growth
(seeded, so a scenario always edits alike). A copy is the job submitted again up to 15 minutes
later (uniform, seeded), with its recorded times shifted alike and job_id "<id>+<n>", so the
hour-of-week shape of demand is kept. Fleet edits add or remove whole nodes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

TIME_COLUMNS = ("submit_utc", "start_utc", "end_utc", "deadline_utc")
COPY_JITTER_S = 900.0


class ScenarioError(ValueError):
    """A scenario that cannot run, with a message naming the valid choices (engine.scenario
    raises it too)."""


@dataclass(frozen=True)
class FleetEdit:
    """Add (positive) or remove (negative) `gpus` GPUs of `gpu_type` in `region` (optionally `tier`)."""

    region: str
    gpu_type: str
    gpus: int
    tier: str | None = None


def window(jobs: pd.DataFrame, start_utc, end_utc) -> pd.DataFrame:
    """Jobs submitted in [start_utc, end_utc) (None: unbounded)."""
    submit = pd.to_datetime(jobs["submit_utc"])
    keep = pd.Series(True, index=jobs.index)
    if start_utc is not None:
        keep &= submit >= start_utc
    if end_utc is not None:
        keep &= submit < end_utc
    return jobs[keep].copy()


def _shift(jobs: pd.DataFrame, by: pd.Series) -> pd.DataFrame:
    jobs = jobs.copy()
    for column in TIME_COLUMNS:
        if column in jobs:
            jobs[column] = pd.to_datetime(jobs[column]) + by
    return jobs


def compress(jobs: pd.DataFrame, load_scale: float) -> pd.DataFrame:
    """Arrivals `load_scale` times as dense: inter-arrival times divided by it."""
    if load_scale == 1.0 or not len(jobs):
        return jobs
    submit = pd.to_datetime(jobs["submit_utc"])
    return _shift(jobs, (submit - submit.min()) * (1.0 / load_scale - 1.0))


def grow(jobs: pd.DataFrame, growth: float, seed: int) -> pd.DataFrame:
    """`growth` times as many jobs (see the module docstring)."""
    if growth == 1.0 or not len(jobs):
        return jobs
    rng = np.random.default_rng([seed, 1729])
    if growth < 1.0:
        return jobs[rng.random(len(jobs)) < growth].copy()
    extra = growth - 1.0
    copies = np.floor(extra).astype(int) + (rng.random(len(jobs)) < extra - math.floor(extra))
    frames = [jobs]
    for n in range(1, int(copies.max()) + 1 if len(copies) else 1):
        chosen = jobs[copies >= n]
        jitter = pd.to_timedelta(rng.uniform(0.0, COPY_JITTER_S, len(chosen)), unit="s")
        copy = _shift(chosen, pd.Series(jitter, index=chosen.index))
        copy["job_id"] = copy["job_id"].astype(str) + f"+{n}"
        frames.append(copy)
    return pd.concat(frames, ignore_index=True)


def edit_fleet(fleet: pd.DataFrame, edit: FleetEdit) -> pd.DataFrame:
    """Apply one edit by whole nodes: remove the last matching nodes, or clone the last matching one
    (adding GPUs of a tier the region has no node of clones its last node of that type into the tier)."""
    match = (fleet["region"] == edit.region) & (fleet["gpu_type"] == edit.gpu_type) & (fleet["gpus"] > 0)
    template_tier = None
    if edit.tier is not None:
        if edit.gpus > 0 and match.any() and not (match & (fleet["tier"] == edit.tier)).any():
            template_tier = edit.tier  # a tier the region lacks: clone a node of another tier into it
        else:
            match &= fleet["tier"] == edit.tier
    rows = fleet[match]
    if rows.empty:
        raise ScenarioError(f"fleet edit: no {edit.gpu_type} nodes in region {edit.region!r}"
                            + (f" tier {edit.tier!r}" if edit.tier else "") + "; regions with that type: "
                            + ", ".join(sorted(set(fleet.loc[fleet["gpu_type"] == edit.gpu_type, "region"]))))
    if edit.gpus < 0:
        removed = np.cumsum(rows["gpus"].to_numpy()[::-1])
        count = int(np.searchsorted(removed, -edit.gpus) + 1)
        return fleet.drop(index=rows.index[::-1][:count]).reset_index(drop=True)
    template = rows.iloc[-1]
    count = math.ceil(edit.gpus / int(template["gpus"]))
    clones = pd.DataFrame([template] * count).reset_index(drop=True)
    if template_tier is not None:
        clones["tier"] = template_tier
    clones["node"] = [f"{template['node']}-added-{i + 1}" for i in range(count)]
    return pd.concat([fleet, clones], ignore_index=True)
