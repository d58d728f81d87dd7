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
    datasets = "named"                      # datasets kept in the archive: "none" (default), "all", "named"
    dataset_names = ["vision@eu-west"]      # with "named": which (a job's dataset, else project@data_location)
    dataset_idle_days = 14                  # 0 (default): archived from the start, hot once restored;
                                            # N: archived once no job used it for N days

Without the table nothing changes. Every region named must be in the fleet (after [[fleet]] edits:
an edge region can be added with `like`, engine.scenario.edits). An unknown key, a role that is not a
list of region names, an unknown `checkpoints` place or a number out of its declared range is a
ScenarioError naming the key; so is `checkpoints = "archive"` or `datasets` other than "none" without an
archive region, `datasets = "named"` without names, or names with another `datasets`.
"""
from __future__ import annotations

from engine.core.errors import ScenarioError
from engine.scenario.checks import declared
from engine.world.roles import CHECKPOINT_PLACES, DATASET_CHOICES, ROLE_NAMES, Roles

_NUMBERS = ("storage_usd_per_gb_month", "restore_delay_s", "checkpoint_gb_per_gpu", "dataset_idle_days")


def parse_roles(table: object, source: str) -> Roles | None:
    """The [roles] table as Roles (None without one)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ScenarioError(f"{source}: [roles] must be a table, got {table!r}")
    valid = set(ROLE_NAMES) | {"checkpoints", "datasets", "dataset_names"} | set(_NUMBERS)
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
    values.update(_datasets(table, source, bool(values["archive"])))
    numbers = {key: table[key] for key in _NUMBERS if key in table}
    values.update(declared(numbers, Roles, source, "[roles]"))
    return Roles(checkpoints=place, **values)


def _datasets(table: dict, source: str, archive: bool) -> dict:
    """The `datasets` and `dataset_names` values, checked."""
    which = table.get("datasets", "none")
    if which not in DATASET_CHOICES:
        raise ScenarioError(f"{source}: [roles] datasets {which!r} is unknown; choose from {', '.join(DATASET_CHOICES)}")
    names = table.get("dataset_names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise ScenarioError(f"{source}: [roles] dataset_names must be a list of dataset names, got {names!r}")
    if which != "none" and not archive:
        raise ScenarioError(f"{source}: [roles] datasets = {which!r} needs an archive region "
                            "(archive = [\"region\", ...])")
    if which == "named" and not names:
        raise ScenarioError(f"{source}: [roles] datasets = \"named\" needs dataset_names = [\"dataset\", ...]")
    if names and which != "named":
        raise ScenarioError(f"{source}: [roles] dataset_names is only read with datasets = \"named\" "
                            f"(datasets is {which!r})")
    return {"datasets": which, "dataset_names": tuple(dict.fromkeys(n.strip() for n in names))}


def check_regions(roles: Roles, regions: set[str], name: str) -> None:
    """Every region `roles` names is one of `regions` (the fleet's, after its edits)."""
    for role in ROLE_NAMES:
        for region in getattr(roles, role):
            if region not in regions:
                raise ScenarioError(f"{name}: [roles] {role} region {region!r} is not in the fleet; its regions: "
                                    f"{', '.join(sorted(regions))} (add an edge region with a [[fleet]] edit's like)")
