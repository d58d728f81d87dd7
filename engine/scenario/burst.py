"""A scenario's [[burst]] entries: cloud capacity a region rents when its queue backs up.

    [[burst]]
    region = "us-east"          # required: a region of the fleet
    gpu_type = "H100"           # required
    max_nodes = 4               # nodes the region may rent at once (default 4)
    gpus_per_node = 8           # default 8
    provision_min = 15          # minutes from renting a node to its first job (default 15)
    trigger_wait_min = 30       # rent once the queue's head has waited this long (default 30)
    idle_release_min = 30       # return a node idle this long (default 30)
    usd_per_gpu_hour = 4.5      # optional: else the region's on-demand price for the type
    cpus_per_node = 96          # optional: else the fleet's last node of the type (16 per GPU without one)
    memory_gib_per_node = 1024  # optional: likewise (128 GiB per GPU without one)

Semantics in engine.sim.processes.burst. Errors name the entry and the valid keys.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.core.errors import ScenarioError
from engine.scenario.checks import number
from engine.scenario.limits import BURST_MAX_NODES, GPUS_PER_NODE_MAX

_KEYS = ("region", "gpu_type", "max_nodes", "gpus_per_node", "provision_min", "trigger_wait_min", "idle_release_min",
         "usd_per_gpu_hour", "cpus_per_node", "memory_gib_per_node")
_COUNTS = ("max_nodes", "gpus_per_node")
_MINUTES = ("provision_min", "trigger_wait_min", "idle_release_min")
_OPTIONAL = ("usd_per_gpu_hour", "cpus_per_node", "memory_gib_per_node")


@dataclass(frozen=True)
class BurstPool:
    """Cloud capacity a region may rent: up to max_nodes nodes of gpus_per_node GPUs of gpu_type.
    cpus_per_node / memory_gib_per_node: None copies the fleet's last node of that GPU type (else
    16 cores and 128 GiB per GPU). usd_per_gpu_hour: None takes the region's on-demand price for
    the type (the dataset's prices table, else the price book)."""

    region: str
    gpu_type: str
    max_nodes: int = 4
    gpus_per_node: int = 8
    provision_min: float = 15.0
    trigger_wait_min: float = 30.0
    idle_release_min: float = 30.0
    usd_per_gpu_hour: float | None = None
    cpus_per_node: float | None = None
    memory_gib_per_node: float | None = None


def parse_bursts(entries: object, source: str) -> tuple[BurstPool, ...]:
    """The [[burst]] list as BurstPools; at most one pool per (region, GPU type)."""
    if not isinstance(entries, list):
        raise ScenarioError(f"{source}: burst must be a list of [[burst]] tables")
    pools, seen = [], set()
    for n, spec in enumerate(entries, start=1):
        where = f"{source}: [[burst]] #{n}"
        if not isinstance(spec, dict):
            raise ScenarioError(f"{where} must be a table")
        extra = sorted(set(spec) - set(_KEYS))
        if extra:
            raise ScenarioError(f"{where}: unknown key(s) {', '.join(extra)}; valid: {', '.join(_KEYS)}")
        for key in ("region", "gpu_type"):
            if not isinstance(spec.get(key), str) or not spec[key].strip():
                raise ScenarioError(f"{where}: {key} is required (a name, such as \"us-east\" or \"H100\")")
        values = {key: spec[key] for key in ("region", "gpu_type")}
        for key in _COUNTS:
            if key in spec:
                value = spec[key]
                most = BURST_MAX_NODES if key == "max_nodes" else GPUS_PER_NODE_MAX
                if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                    raise ScenarioError(f"{where}: {key} must be a whole number from 1 to {most:,}, got {value!r}")
                values[key] = value
        for key in _MINUTES + _OPTIONAL:
            if key in spec:
                values[key] = number(spec[key], f"{where}: {key}", inclusive=key not in ("cpus_per_node", "memory_gib_per_node"))
        key = (values["region"], values["gpu_type"])
        if key in seen:
            raise ScenarioError(f"{where}: a second pool of {key[1]} in {key[0]}; raise max_nodes instead")
        seen.add(key)
        pools.append(BurstPool(**values))
    return tuple(pools)
