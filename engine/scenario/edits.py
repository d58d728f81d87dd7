"""Workload and fleet edits a scenario applies to a dataset's tables (engine.scenario).

Workload edits, in this order: `window` keeps jobs submitted in [start, end); `compress` makes
arrivals `load_scale` times as dense (every time shifted towards the first submit); then growth
resamples the demand (engine.scenario.demand.scale_demand, seeded, so a scenario always edits
alike). Fleet edits add or remove whole nodes; FleetEdit's fields declare their label, help and
(for the GPUs) unit and range, which the scenario parser checks and the What-if builder draws. An edit
with `like` adds nodes to a region cloned from another region's (a new edge region, say): its nodes
are the other region's last node of the type, in a cluster and rack of their own, and the new region
takes the other's rows of the regions, prices and carbon tables (`like_world`: its time zone,
jurisdiction, egress price, prices and grid), so it keeps the residency, calendar and prices of the
region it was modelled on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from engine.core.bounds import bound_of
from engine.core.errors import ScenarioError
from engine.core.vocabulary import TIERS
from engine.scenario.checks import known_keys
from engine.scenario.limits import MAX_FLEET_GPUS
from engine.world.facts import World

TIME_COLUMNS = ("submit_utc", "start_utc", "end_utc", "deadline_utc")


@dataclass(frozen=True)
class FleetEdit:
    """Add (positive) or remove (negative) `gpus` GPUs of `gpu_type` in `region` (optionally `tier`)."""

    region: str = field(metadata={"label": "Region", "help": "a region of the dataset's fleet"})
    gpu_type: str = field(metadata={"label": "GPU type", "help": "the region must have nodes of this type"})
    gpus: int = field(metadata={
        "unit": "GPUs", "min": -MAX_FLEET_GPUS, "max": MAX_FLEET_GPUS, "label": "Added, or removed if negative",
        "help": "whole nodes: added ones clone the region's last node of the type (rounded up), removed ones are its "
                "last nodes (add_gpus / remove_gpus in the file)"})
    tier: str | None = field(default=None, metadata={
        "label": "Tier", "help": "only nodes of this tier (blank: any); adding to a tier the region lacks clones a "
                                 "node of another tier into it"})
    like: str | None = field(default=None, metadata={
        "label": "Like region", "help": "add the nodes by cloning this region's (a new region, e.g. an edge "
                                        "location, takes its time zone, jurisdiction, prices and grid); blank: "
                                        "the edited region's own"})


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


def edit_fleet(fleet: pd.DataFrame, edit: FleetEdit) -> pd.DataFrame:
    """Apply one edit by whole nodes: remove the last matching nodes, or clone the last matching one
    (adding GPUs of a tier the region has no node of clones its last node of that type into the tier);
    with `like`, clone the last matching node of that region into `edit.region`."""
    if edit.like is not None:
        return _clone_like(fleet, edit)
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


def _clone_like(fleet: pd.DataFrame, edit: FleetEdit) -> pd.DataFrame:
    """`edit.gpus` GPUs (whole nodes, rounded up) in `edit.region`, each a copy of region `edit.like`'s last
    node of the GPU type (and tier, when given), in the cluster "<region>-<type>" and its one rack."""
    match = (fleet["region"] == edit.like) & (fleet["gpu_type"] == edit.gpu_type) & (fleet["gpus"] > 0)
    if edit.tier is not None:
        match &= fleet["tier"] == edit.tier
    rows = fleet[match]
    if rows.empty:
        raise ScenarioError(f"fleet edit: like region {edit.like!r} has no {edit.gpu_type} nodes"
                            + (f" of tier {edit.tier!r}" if edit.tier else ""))
    template = rows.iloc[-1]
    count, have = math.ceil(edit.gpus / int(template["gpus"])), int((fleet["region"] == edit.region).sum())
    cluster = f"{edit.region}-{edit.gpu_type.lower()}"
    clones = pd.DataFrame([template] * count).reset_index(drop=True)
    clones["region"] = edit.region
    clones["node"] = [f"{cluster}-n{have + i:04d}" for i in range(count)]
    for column, value in (("cluster", cluster), ("rack", f"{cluster}-r000")):
        if column in clones:
            clones[column] = value
    return pd.concat([fleet, clones], ignore_index=True)


def like_world(world: World, edits: tuple[FleetEdit, ...]) -> World:
    """`world` with, for each `like` edit whose region the regions table lacks, a copy of the like
    region's rows in the regions, prices and carbon tables under the new region's name."""
    known = set(world.regions["region"].astype(str)) if world.regions is not None and len(world.regions) else set()
    tables = {"regions": world.regions, "prices": world.prices, "carbon": world.carbon}
    for edit in edits:
        if edit.like is None or edit.region in known:
            continue
        known.add(edit.region)
        for name, table in tables.items():
            if table is not None and "region" in table and not (table["region"] == edit.region).any():
                rows = table[table["region"] == edit.like].assign(region=edit.region)
                tables[name] = pd.concat([table, rows], ignore_index=True)
    return replace(world, **tables)


def scaled_fleet_edits(fleet: pd.DataFrame, scale: float) -> tuple[FleetEdit, ...]:
    """[[fleet]] edits that make every (region, GPU type, tier) pool `scale` times its nodes today,
    rounded to whole nodes (a pool may vanish when scaled down far enough)."""
    nodes = fleet[fleet["gpus"] > 0]
    edits = []
    for (region, gpu_type, tier), group in nodes.groupby(["region", "gpu_type", "tier"], sort=True):
        per_node = int(group["gpus"].max())
        delta = round((scale - 1.0) * len(group)) * per_node
        if delta:
            edits.append(FleetEdit(region, gpu_type, int(delta), tier))
    return tuple(edits)


_FLEET = {"region", "gpu_type", "tier", "add_gpus", "remove_gpus", "like"}
FLEET_GPUS = bound_of("gpus", int, next(f for f in fields(FleetEdit) if f.name == "gpus").metadata)


def parse_fleet_edit(spec: dict, source: str) -> FleetEdit:
    """One [[fleet]] table: region, gpu_type, add_gpus or remove_gpus (FleetEdit.gpus's range), tier optional."""
    known_keys(spec, _FLEET, source, "[[fleet]] key")
    missing = sorted({"region", "gpu_type"} - set(spec))
    if missing or ("add_gpus" in spec) == ("remove_gpus" in spec):
        raise ScenarioError(f"{source}: a [[fleet]] edit needs region, gpu_type and one of add_gpus, remove_gpus")
    count, most = spec.get("add_gpus", spec.get("remove_gpus")), FLEET_GPUS.high
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= most:
        raise ScenarioError(f"{source}: add_gpus / remove_gpus must be a whole number of GPUs from 0 to "
                            f"{most:,.0f}, got {count!r}")
    if "tier" in spec and spec["tier"] not in TIERS:
        raise ScenarioError(f"{source}: [[fleet]] tier {spec['tier']!r} is unknown; choose from {', '.join(TIERS)}")
    like = spec.get("like")
    if like is not None and (not isinstance(like, str) or not like.strip() or "add_gpus" not in spec):
        raise ScenarioError(f"{source}: [[fleet]] like must name a region to clone add_gpus from, got {like!r}"
                            + ("" if "add_gpus" in spec else " (like goes with add_gpus only)"))
    return FleetEdit(str(spec["region"]), str(spec["gpu_type"]), count if "add_gpus" in spec else -count,
                     spec.get("tier"), like.strip() if like else None)
