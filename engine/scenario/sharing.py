"""A scenario's sharing tables: [[queue]] classes, [[quota]] entries and [[team]] weights.

    [[queue]]                       # replaces the default queue classes (engine.scenario.queues)
    name = "reserved"
    priority = 1.0                  # tier 0-1
    classes = ["inference"]         # rules, all optional: classes, qos, min_gpus, max_gpus,
    qos = ["guaranteed"]            #   max_requested_s; the first queue a job matches takes it,
    guaranteed = true               #   the last one takes the rest
    max_wait_s = 60                 # also: preemptible, checkpoint_s, starve_after_s, max_queued, spot
    [[quota]]                       # a holder's quota (the quota policy's `by`: a team or a queue)
    holder = "foundation"
    nominal_gpus = 96               # optional: else its weight's share of the region
    borrowing_limit_gpus = 32       # optional: else the policy's
    lending_limit_gpus = 0          # optional: else the policy's lending_fraction of nominal
    cohort = "us"                   # optional, default "all"
    region = "us-west"              # optional: else every region
    reclaim_at_work_start = true    # optional (kueue): lend only while the holder is off work, and
    reclaim_lead_min = 30           #   evict borrowers 30 min (default 0) before its working day
    [[team]]                        # share weights and organisations, over the dataset's teams table
    team = "foundation"
    weight = 3
    org = "research"
    [spot]                          # spot reclamation (engine.sim.processes.spot): interruptions of spot-tier nodes
    interruptions_per_node_hour = 0.01
    region_rate = { "us-east" = 0.03 }   # optional, per region
    fallback_after = 2              # optional: after 2 interruptions a job keeps to on-demand nodes
    hourly_factor = [1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
                                    # optional: the rate x these per local hour 0-23 (default all 1)
    interruptible_only = true       # optional: keep the work of queue classes whose spot is false off
                                    # spot nodes; false lets any job onto them (the recorded baseline,
                                    # to reproduce history); unset: true when interruptions are drawn
    [spot.region_hourly_factor]     # optional, per region (24 finite numbers >= 0 each; 0: never)
    eu-west = [0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0]
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.core.errors import ScenarioError
from engine.policies.quota import QuotaEntry
from engine.scenario.checks import known_keys, number
from engine.scenario.limits import SPOT_RATE_MAX, TEAM_WEIGHT_MAX
from engine.scenario.queues import DEFAULT_QUEUES, FIELDS, QueueClass
from engine.scenario.spot import FLAT, HOURS, SpotModel

_QUOTA = {"holder", "nominal_gpus", "borrowing_limit_gpus", "lending_limit_gpus", "cohort", "region",
          "reclaim_at_work_start", "reclaim_lead_min"}
_TEAM = {"team", "weight", "org"}
_LISTS = {"classes", "qos"}
_FLAGS = {"guaranteed", "preemptible", "spot"}


@dataclass(frozen=True)
class SharingSetup:
    """What a scenario says about sharing: queue classes, quota entries (engine.policies.quota
    QuotaEntry), team share weights and organisations (team -> org), and the spot interruption model
    (engine.scenario.spot)."""

    queues: tuple[QueueClass, ...] = DEFAULT_QUEUES
    quotas: tuple = ()
    weights: dict = field(default_factory=dict)
    orgs: dict = field(default_factory=dict)
    spot: SpotModel = field(default_factory=SpotModel)


def _table(entry, valid: set, source: str, what: str) -> dict:
    if not isinstance(entry, dict):
        raise ScenarioError(f"{source}: each {what} entry must be a table")
    return known_keys(entry, valid, source, f"{what} key")


def _number(entry: dict, key: str, source: str, what: str, minimum: float = 0.0) -> float | None:
    """entry[key] as a number >= `minimum` (infinity allowed: no limit), or None when absent."""
    return number(entry[key], f"{source}: {what} {key}", minimum, finite=False) if key in entry else None


def _rate(entry: dict, key: str, source: str, what: str) -> float:
    """A spot interruption rate: 0 to SPOT_RATE_MAX per node-hour (0 when absent)."""
    value = number(entry.get(key, 0.0), f"{source}: {what} {key}")
    if value > SPOT_RATE_MAX:
        raise ScenarioError(f"{source}: {what} {key} must be at most {SPOT_RATE_MAX:g} interruptions per node-hour "
                            f"(one a minute), got {value:g}")
    return value


def parse_queues(entries, source: str) -> tuple[QueueClass, ...] | None:
    if not entries:
        return None
    if not isinstance(entries, list):
        raise ScenarioError(f"{source}: [[queue]] must be a list of tables")
    queues, seen = [], set()
    for entry in entries:
        entry = dict(_table(entry, set(FIELDS), source, "[[queue]]"))
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"{source}: every [[queue]] needs a name")
        if name in seen:
            raise ScenarioError(f"{source}: queue {name!r} is listed twice")
        seen.add(name)
        for key in _LISTS & set(entry):
            value = entry[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ScenarioError(f"{source}: queue {name}: {key} must be a list of strings")
            entry[key] = tuple(value)
        for key in _FLAGS & set(entry):
            if not isinstance(entry[key], bool):
                raise ScenarioError(f"{source}: queue {name}: {key} must be true or false")
        for key in set(entry) - _LISTS - _FLAGS - {"name", "max_queued"}:
            entry[key] = _number(entry, key, source, f"queue {name}:")
        if "max_queued" in entry and (isinstance(entry["max_queued"], bool) or not isinstance(entry["max_queued"], int)):
            raise ScenarioError(f"{source}: queue {name}: max_queued must be an integer")
        try:
            queues.append(QueueClass(**entry))
        except ValueError as exc:
            raise ScenarioError(f"{source}: {exc}") from None
    return tuple(queues)


def parse_quotas(entries, source: str) -> tuple[QuotaEntry, ...]:
    if not isinstance(entries, list):
        raise ScenarioError(f"{source}: [[quota]] must be a list of tables")
    out = []
    for entry in entries:
        entry = _table(entry, _QUOTA, source, "[[quota]]")
        holder = entry.get("holder")
        if not isinstance(holder, str) or not holder:
            raise ScenarioError(f"{source}: every [[quota]] needs a holder (a team or queue name)")
        what = f"quota {holder}:"
        borrow = _number(entry, "borrowing_limit_gpus", source, what)
        at_work_start = entry.get("reclaim_at_work_start", False)
        if not isinstance(at_work_start, bool):
            raise ScenarioError(f"{source}: {what} reclaim_at_work_start must be true or false")
        out.append(QuotaEntry(holder, _number(entry, "nominal_gpus", source, what),
                              math.inf if borrow is None else borrow,
                              _number(entry, "lending_limit_gpus", source, what),
                              str(entry.get("cohort", "all")),
                              str(entry["region"]) if "region" in entry else None,
                              at_work_start, _number(entry, "reclaim_lead_min", source, what) or 0.0))
    return tuple(out)


def parse_teams(entries, source: str) -> tuple[dict[str, float], dict[str, str]]:
    if not isinstance(entries, list):
        raise ScenarioError(f"{source}: [[team]] must be a list of tables")
    weights, orgs = {}, {}
    for entry in entries:
        entry = _table(entry, _TEAM, source, "[[team]]")
        team = entry.get("team")
        if not isinstance(team, str) or not team:
            raise ScenarioError(f"{source}: every [[team]] needs a team name")
        weight = _number(entry, "weight", source, f"team {team}:")
        if weight is not None:
            if not 0 < weight <= TEAM_WEIGHT_MAX:
                raise ScenarioError(f"{source}: team {team}: weight must be above 0 and at most {TEAM_WEIGHT_MAX:g}, "
                                    f"got {weight:g}")
            weights[team] = weight
        if "org" in entry:
            orgs[team] = str(entry["org"])
    return weights, orgs


def _hourly(value, source: str, what: str) -> tuple[float, ...]:
    """24 finite factors >= 0, one per local hour 0-23 ([spot] hourly_factor and its per-region tables)."""
    if not isinstance(value, (list, tuple)) or len(value) != HOURS:
        got = f"{len(value)} numbers" if isinstance(value, (list, tuple)) else repr(value)
        raise ScenarioError(f"{source}: {what} must be a list of {HOURS} numbers (one per local hour 0-23), got {got}")
    for hour, factor in enumerate(value):
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 <= factor < math.inf:
            raise ScenarioError(f"{source}: {what} hour {hour} must be a finite number >= 0, got {factor!r}")
    return tuple(float(f) for f in value)


def parse_spot(entry, source: str) -> SpotModel:
    entry = _table(entry, {"interruptions_per_node_hour", "region_rate", "fallback_after", "hourly_factor",
                           "region_hourly_factor", "interruptible_only"}, source, "[spot]")
    fallback = entry.get("fallback_after", 0)
    if isinstance(fallback, bool) or not isinstance(fallback, int) or fallback < 0:
        raise ScenarioError(f"{source}: [spot] fallback_after must be an integer >= 0, got {fallback!r}")
    only = entry.get("interruptible_only")
    if only is not None and not isinstance(only, bool):
        raise ScenarioError(f"{source}: [spot] interruptible_only must be true or false, got {only!r}")
    rate = _rate(entry, "interruptions_per_node_hour", source, "[spot]")
    regions = entry.get("region_rate", {})
    if not isinstance(regions, dict):
        raise ScenarioError(f"{source}: [spot] region_rate must be a table of region = rate")
    hourly = _hourly(entry["hourly_factor"], source, "[spot] hourly_factor") if "hourly_factor" in entry else FLAT
    region_hourly = entry.get("region_hourly_factor", {})
    if not isinstance(region_hourly, dict):
        raise ScenarioError(f"{source}: [spot.region_hourly_factor] must be a table of region = [{HOURS} numbers]")
    return SpotModel(rate, {str(r): _rate(regions, r, source, "[spot] region_rate") for r in regions}, fallback,
                     hourly, {str(r): _hourly(f, source, f"[spot.region_hourly_factor] {r}")
                              for r, f in region_hourly.items()}, only)
