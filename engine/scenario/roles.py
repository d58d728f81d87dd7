"""A scenario's [roles] table: what each region is for (engine.world.roles.Roles explains each role).

    [roles]
    primary = ["us-east", "eu-west"]        # homes of work (named in the run's roles table)
    overflow = ["us-west"]                  # the only regions moved work may go to (default: any)
    disaster_recovery = ["eu-west"]         # where work goes while its home is down (default: overflow's)
    edge = ["edge-nyc"]                     # inference only; latency-aware routing tries them first
    archive = ["eu-north"]                  # where checkpoints go with checkpoints = "archive"
    checkpoints = "archive"                 # "local" (default: free and at once, as without [roles])
    storage_usd_per_gb_month = 0.0036       # archive storage (default: S3 Glacier Flexible Retrieval)
    restore_delay_s = 10800                 # asking for an archived checkpoint -> readable (default 3 h)
    checkpoint_gb_per_gpu = 14              # a checkpoint's size per GPU held (default: 7B params, Adam)

Without the table nothing changes. Every region named must be in the fleet (after [[fleet]] edits:
an edge region can be added with `like`, engine.scenario.edits). An unknown key, a role that is not a
list of region names, an unknown `checkpoints` place or a number out of its declared range is a
ScenarioError naming the key; so is `checkpoints = "archive"` without an archive region.
"""
from __future__ import annotations

from engine.core.errors import ScenarioError
from engine.scenario.checks import declared
from engine.world.roles import CHECKPOINT_PLACES, ROLE_NAMES, Roles

_NUMBERS = ("storage_usd_per_gb_month", "restore_delay_s", "checkpoint_gb_per_gpu")


def parse_roles(table: object, source: str) -> Roles | None:
    """The [roles] table as Roles (None without one)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ScenarioError(f"{source}: [roles] must be a table, got {table!r}")
    valid = set(ROLE_NAMES) | {"checkpoints"} | set(_NUMBERS)
    extra = sorted(set(table) - valid)
    if extra:
        raise ScenarioError(f"{source}: unknown [roles] key {', '.join(extra)}; valid: {', '.join(sorted(valid))}")
    values: dict = {}
    for role in ROLE_NAMES:
        names = table.get(role, [])
        if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
            raise ScenarioError(f"{source}: [roles] {role} must be a list of region names, got {names!r}")
        values[role] = tuple(dict.fromkeys(n.strip() for n in names))
    place = table.get("checkpoints", "local")
    if place not in CHECKPOINT_PLACES:
        raise ScenarioError(f"{source}: [roles] checkpoints {place!r} is unknown; choose from "
                            f"{', '.join(CHECKPOINT_PLACES)}")
    if place == "archive" and not values["archive"]:
        raise ScenarioError(f"{source}: [roles] checkpoints = \"archive\" needs an archive region "
                            "(archive = [\"region\", ...])")
    numbers = {key: table[key] for key in _NUMBERS if key in table}
    values.update(declared(numbers, Roles, source, "[roles]"))
    return Roles(checkpoints=place, **values)


def check_regions(roles: Roles, regions: set[str], name: str) -> None:
    """Every region `roles` names is one of `regions` (the fleet's, after its edits)."""
    for role in ROLE_NAMES:
        for region in getattr(roles, role):
            if region not in regions:
                raise ScenarioError(f"{name}: [roles] {role} region {region!r} is not in the fleet; its regions: "
                                    f"{', '.join(sorted(regions))} (add an edge region with a [[fleet]] edit's like)")
