"""The scenario's [clusters] table: how a region's nodes are grouped into clusters for the cluster step
(engine.policies.cluster) and the interconnect (engine.world.interconnect).

    [clusters]
    racks_per_cluster = 2     # split each of the fleet's clusters into clusters of 2 racks (0: as recorded)

Without the table the fleet's `cluster` column stands (one cluster per region without one). A fleet
whose clusters each hold one GPU type (the bundled sample's: region + GPU type) leaves the cluster step
nothing to choose, since a job's GPU type names its cluster; splitting by racks gives it a choice. The
split keeps each recorded cluster's racks in their sorted order: racks 0..n-1 form "<cluster>-c0", the
next n "<cluster>-c1", and so on (nodes without a rack share one). The field's declaration (unit,
range, label, help) is what the scenario builder draws (dashboard.forms.world_sections).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import pandas as pd

from engine.core.bounds import bound_of
from engine.core.errors import ScenarioError


@dataclass(frozen=True)
class ClusterSplit:
    """Racks per cluster (0: the fleet's clusters as recorded)."""

    racks_per_cluster: int = field(default=0, metadata={
        "unit": "racks", "min": 0, "max": 10_000, "label": "Racks per cluster",
        "help": "split each recorded cluster into clusters of this many racks (0: keep the fleet's clusters)"})


def parse_clusters(spec: object, source: str) -> ClusterSplit:
    """A [clusters] table as a ClusterSplit; a ScenarioError names the key and its range."""
    if not isinstance(spec, dict):
        raise ScenarioError(f"{source}: [clusters] must be a table, got {spec!r}")
    valid = {f.name for f in fields(ClusterSplit)}
    extra = sorted(set(spec) - valid)
    if extra:
        raise ScenarioError(f"{source}: unknown [clusters] key {', '.join(extra)}; valid: {', '.join(sorted(valid))}")
    values = {}
    for f in fields(ClusterSplit):
        if f.name not in spec:
            continue
        value = spec[f.name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ScenarioError(f"{source}: [clusters] {f.name} must be a whole number, got {value!r}")
        why = bound_of(f.name, int, f.metadata).check(f.name, value)
        if why:
            raise ScenarioError(f"{source}: [clusters] {why}")
        values[f.name] = value
    return ClusterSplit(**values)


def split_clusters(fleet: pd.DataFrame, split: ClusterSplit) -> pd.DataFrame:
    """`fleet` with its `cluster` column split by racks (see the module docstring); unchanged at 0."""
    size = split.racks_per_cluster
    if size <= 0 or not len(fleet):
        return fleet
    region = fleet["region"].astype(str) if "region" in fleet else pd.Series("", index=fleet.index)
    recorded = fleet["cluster"] if "cluster" in fleet else pd.Series(None, index=fleet.index, dtype=object)
    recorded = recorded.astype(object).where(recorded.notna() & (recorded.astype(str) != ""), region).astype(str)
    racks = fleet["rack"].astype(object).where(fleet["rack"].notna(), "").astype(str) if "rack" in fleet \
        else pd.Series("", index=fleet.index)
    rank = (pd.DataFrame({"region": region, "cluster": recorded, "rack": racks})
            .groupby(["region", "cluster"], sort=False)["rack"].rank(method="dense").astype(int) - 1)
    out = fleet.copy()
    out["cluster"] = recorded + "-c" + (rank // size).astype(str)
    return out
