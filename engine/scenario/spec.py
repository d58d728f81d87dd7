"""Scenario: what to simulate, as data (a TOML file or the same dict built by the dashboard).

    name = "easy-backfill"
    seed = 0
    [policies]
    order = { key = "fcfs" }
    placement = { key = "best-fit", cpu_weight = 0.5 }   # other keys: the policy's parameters
    backfill = { key = "easy" }
    admission = { key = "accept-all" }
    [workload]                      # optional
    start_utc = "2026-08-03T00:00:00"   # keep jobs submitted in [start_utc, end_utc)
    end_utc = "2026-08-10T00:00:00"
    load_scale = 1.5                # arrivals 1.5x as dense (inter-arrival times / 1.5)
    growth = 1.3                    # 30 % more jobs, each region's hour-of-week shape and the job mix
                                    # kept (seeded resampling: engine.scenario.demand)
    timer_s = 600                   # top level, optional: a scheduling pass every 10 min while jobs
                                    # wait (for time-dependent orders); 0 (default): events only
    calendar = "team"               # top level, optional: whose working hours the router, timing and
                                    # [handoff] count: "region" (default) or "team" (engine.world.team_hours)
    [[fleet]]                       # optional fleet edits, applied in order
    region = "us-east"
    gpu_type = "H100"
    tier = "reserved"               # optional
    add_gpus = 16                   # or remove_gpus; whole nodes, cloned from the last matching one
                                    # like = "us-east": add_gpus cloned from that region's nodes (a new
                                    # region, e.g. an edge location, modelled on it: engine.scenario.edits)
    [[region]]                      # optional world edits, one entry per region (engine.scenario.world)
    region = "eu-west"
    price_scale = 0.8               # all its prices x 0.8; usd_per_gpu_hour = { H100 = 3.2 } sets on-demand
    carbon_scale = 0.5              # or g_co2e_per_kwh = 120 (flat)
    working_days = "Sun-Thu"        # work_start_hour, work_end_hour (0-23), holiday_country ("" = none)
    [[queue]], [[quota]], [[team]]  # optional sharing tables: queue classes, quotas, share weights,
    [spot]                          # and spot interruptions: a rate per node-hour, per region, x a factor
                                    # per local hour (engine.scenario.sharing)
    [[outage]]                      # optional: a region's fleet is down (disaster recovery, engine.sim.processes.outage)
    region = "us-east"
    start_utc = "2026-08-05T12:00:00"
    end_utc = "2026-08-06T00:00:00"
    [[burst]]                       # optional: cloud nodes a region rents when its queue backs up
    region = "us-east"              # gpu_type, max_nodes, provision_min, trigger_wait_min, ...
    gpu_type = "H100"               # (engine.scenario.burst, engine.sim.processes.burst)
    [data]                          # optional: a job away from its input data waits for it to move
    transfer_gbps = 10              # data_size_gb x 8 / transfer_gbps seconds (0, the default: instant);
                                    # replicas, prefetch, compression, incremental sync: engine.scenario.data
    [runtime]                       # optional: what the scheduler knows of runtimes and failures
    source = "predicted"            # "request" (default): the users' requests; "predicted": the model's,
    quantile = "p50"                # trained on the jobs before the window's start; p10, p50 or p90
    failure = true                  # predicted failure probabilities (engine.scenario.runtime)
    [interconnect]                  # optional: multi-node jobs slow down when their nodes span racks or
    cluster_gbps = 200              # clusters (bandwidths per level, a share of communication per class:
                                    # engine.world.interconnect); off without the table
    [clusters]                      # optional: racks_per_cluster = 2 splits each of the fleet's clusters
                                    # into clusters of 2 racks (engine.scenario.clusters); the cluster
                                    # policy ([policies] cluster = "best-fit", ...) picks a job's cluster
    [roles]                         # optional: primary, overflow, disaster_recovery, edge and archive
                                    # regions, where checkpoints and datasets go and what archiving
                                    # costs (engine.scenario.roles, engine.world.roles)
    [partitions]                    # optional: MIG instances for the rule's inference and development
    mode = "mig"                    # jobs, or time-slicing / MPS with interference between co-tenants
                                    # (engine.world.partitions); off without the table
    [predictive_scaling]            # optional: the [[burst]] pools rent ahead of the forecast peak instead
    enabled = true                  # of on waits (weeks, headroom_quantile, lead_min, ...:
                                    # engine.scenario.predictive); without [workload] start_utc
                                    # the window starts `weeks` whole weeks after the first submit
    [handoff]                       # optional: live follow-the-sun, running flexible work borrowed from
    enabled = true                  # other regions moves on as a region's working day begins
                                    # (checkpoint_min, restart_min, min_run_h, ...: engine.scenario.handoff)
    [[chain]]                       # optional: staged workflows from the workload's jobs (engine.scenario.chains)
    stages = ["ap-northeast", "eu-west", "us-east"]   # each stage starts when the one before ends
    workload_class = "training"     # count, team, checkpoint_gb (moved between regions at [data] transfer_gbps)
    [experiments]                   # optional: teams queue sweeps and evaluation batches for their nights and
    teams = ["llm-research"]        # weekends, sized from the forecast idle GPUs (kinds, fill_share, gpus,
                                    # duration_h, weeks, demand_quantile, sizing, max_nodes:
                                    # engine.scenario.experiments)
    [rightsize]                     # optional: jobs get their predicted GPUs (quantile, margin_pct,
    enabled = true                  # oom_at_fraction, classes) and memory (memory, memory_quantile,
                                    # memory_margin_pct); one given too little runs out of memory
                                    # and restarts with its request (engine.scenario.rightsize)
    [elastic_scaling]               # optional: an elastic job admitted on fewer nodes runs at Amdahl's
    model = "amdahl"                # speed-up (serial fraction per class; "fitted": fitted from the
                                    # dataset's jobs), not perfect scaling (engine.world.elastic)

A scenario applies to any dataset: the fleet comes from the dataset unless the scenario edits it.
Families missing from [policies] take the defaults (fcfs, first-fit, none, accept-all, no quota,
no preemption, any cluster). Errors
are `ScenarioError`s that name the valid choices.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

import engine.policies.admission  # noqa: F401  (registers the family)
import engine.policies.backfill  # noqa: F401  (registers the family)
import engine.policies.cluster  # noqa: F401  (registers the family)
import engine.policies.gang  # noqa: F401  (registers the family)
import engine.policies.preemption  # noqa: F401  (registers the family)
import engine.policies.quota  # noqa: F401  (registers the family)
import engine.policies.routing  # noqa: F401  (registers the family)
import engine.policies.timing  # noqa: F401  (registers the family)
from engine.core.errors import ScenarioError
from engine.core.toml_file import read_toml
from engine.policies import registry
from engine.policies.bundle import Policies
from engine.policies.quota import QuotaEntry
from engine.scenario import limits
from engine.scenario.burst import parse_bursts
from engine.scenario.chains import ChainSpec, build_chains, parse_chains
from engine.scenario.checks import known_keys
from engine.scenario.clusters import ClusterSplit, parse_clusters, split_clusters
from engine.scenario.cross_checks import handoff_section, predictive_section, runtime_fields
from engine.scenario.data import parse_data
from engine.scenario.demand import scale_demand
from engine.scenario.edits import FleetEdit, compress, edit_fleet, like_world, parse_fleet_edit, window
from engine.scenario.experiment_plan import add_experiments
from engine.scenario.experiments import Experiments, parse_experiments
from engine.scenario.handoff import Handoff
from engine.scenario.partitions import parse_partitions, replica_requests
from engine.scenario.predictive import PredictiveScaling, scaling_plan
from engine.scenario.queues import DEFAULT_QUEUES, QueueClass
from engine.scenario.rightsize import RightSize, parse_rightsize, with_sizing
from engine.scenario.roles import check_regions, parse_roles
from engine.scenario.runtime import RuntimeChoice, parse_runtime, with_predictions
from engine.scenario.sharing import SharingSetup, parse_queues, parse_quotas, parse_spot, parse_teams
from engine.scenario.spot import SpotModel
from engine.scenario.workload_keys import parse_workload, shown
from engine.scenario.world import RegionEdit, edit_world, parse_outages, parse_region_edits
from engine.world.data_model import DataModel
from engine.world.elastic import ElasticScaling, parse_elastic
from engine.world.facts import World
from engine.world.interconnect import Interconnect, parse_interconnect
from engine.world.latency import Latency, parse_latency
from engine.world.partitions import Partitions
from engine.world.roles import Roles
from engine.world.team_hours import REGION, parse_calendar_choice

DEFAULTS = {"order": "fcfs", "placement": "first-fit", "backfill": "none", "admission": "accept-all",
            "gang": "lowest-index", "routing": "home-only", "timing": "immediate", "quota": "none",
            "preemption": "none", "cluster": "any"}
_TOP = {"name", "seed", "timer_s", "calendar", "policies", "workload", "fleet", "region", "latency", "queue", "quota", "team",
        "spot", "data", "outage", "burst", "runtime", "interconnect", "clusters", "predictive_scaling",
        "handoff", "chain", "experiments", "roles", "partitions", "rightsize", "elastic_scaling"}
# _TOP's [name] tables, and its [[name]] lists of tables
_TABLES = {"policies", "workload", "latency", "spot", "data", "runtime", "interconnect", "clusters",
           "predictive_scaling", "handoff", "experiments", "roles", "partitions", "rightsize", "elastic_scaling"}
_ARRAYS = {"fleet", "region", "queue", "quota", "team", "outage", "burst", "chain"}


@dataclass(frozen=True)
class Scenario:
    """Policies by registry key with parameters, a seed, and optional fleet, workload and region edits."""

    name: str
    policies: dict[str, tuple[str, dict]]
    seed: int = 0
    start_utc: pd.Timestamp | None = None
    end_utc: pd.Timestamp | None = None
    load_scale: float = 1.0
    growth: float = 1.0
    timer_s: float = 0.0
    fleet_edits: tuple[FleetEdit, ...] = field(default=())
    region_edits: tuple[RegionEdit, ...] = field(default=())
    latency: Latency | None = None
    queues: tuple[QueueClass, ...] | None = None
    quotas: tuple[QuotaEntry, ...] = field(default=())
    team_weights: dict = field(default_factory=dict)
    team_orgs: dict = field(default_factory=dict)
    spot: SpotModel = field(default_factory=SpotModel)
    data: DataModel = field(default_factory=DataModel)
    outages: tuple = ()
    bursts: tuple = ()
    runtime_source: str = "request"
    runtime_quantile: str = "p50"
    predict_failure: bool = False
    interconnect: Interconnect = field(default_factory=Interconnect)
    clusters: ClusterSplit = field(default_factory=ClusterSplit)
    predictive: PredictiveScaling = field(default_factory=PredictiveScaling)
    handoff: Handoff = field(default_factory=Handoff)
    chains: tuple[ChainSpec, ...] = ()
    experiments: Experiments = field(default_factory=Experiments)
    roles: Roles | None = None
    partitions: Partitions = field(default_factory=Partitions)
    rightsize: RightSize = field(default_factory=RightSize)
    elastic: ElasticScaling = field(default_factory=ElasticScaling)
    calendar: str = REGION

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """Read and validate a TOML scenario file."""
        path = Path(path)
        if path.is_file():
            limits.check_file_bytes(path.stat().st_size, str(path))
        data = read_toml(path, "scenario", ScenarioError)
        return cls.from_dict(data, default_name=path.stem, source=str(path))

    @classmethod
    def from_dict(cls, data: dict, default_name: str = "scenario", source: str = "scenario") -> "Scenario":
        known_keys(data, _TOP, source, "top-level key")
        limits.check_structure(data, source)
        _shapes(data, source)
        policies = data.get("policies", {})
        families = registry.families()
        known_keys(policies, set(DEFAULTS), source, "policy family")
        chosen = {}
        for family, default in DEFAULTS.items():
            spec = policies.get(family, {"key": default})
            if not isinstance(spec, str | dict):
                raise ScenarioError(f"{source}: [policies] {family} must be a policy key or a table with a key, "
                                    f"got {spec!r}")
            spec = {"key": spec} if isinstance(spec, str) else dict(spec)
            key = spec.pop("key", None)
            if key not in families.get(family, []):
                raise ScenarioError(f"{source}: {family} policy {key!r} is unknown; "
                                    f"choose from {', '.join(families.get(family, []))}")
            try:
                registry.make(family, key, **spec)
            except (registry.PolicyError, ValueError, TypeError) as exc:
                raise ScenarioError(f"{source}: {exc}") from None
            chosen[family] = (key, spec)
        scale, growth, start, end = parse_workload(data.get("workload", {}), source)
        timer = data.get("timer_s", 0.0)
        low, high = limits.TIMER_S
        if isinstance(timer, bool) or not isinstance(timer, (int, float)) or not (timer == 0 or low <= timer <= high):
            raise ScenarioError(f"{source}: timer_s must be 0 (no timer) or {low:g} to {high:,.0f} seconds, "
                                f"got {timer!r}")
        weights, orgs = parse_teams(data.get("team", []), source)
        seed = data.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ScenarioError(f"{source}: seed must be a whole number >= 0, got {seed!r}")
        bursts = parse_bursts(data.get("burst", []), source)
        predictive = predictive_section(data.get("predictive_scaling", {}), bursts, scale, source)
        return cls(name=str(data.get("name", default_name)), policies=chosen, seed=seed,
                   start_utc=start, end_utc=end,
                   load_scale=scale, growth=growth, timer_s=float(timer),
                   calendar=parse_calendar_choice(data.get("calendar", REGION), source, ScenarioError),
                   fleet_edits=tuple(parse_fleet_edit(e, source) for e in data.get("fleet", [])),
                   region_edits=parse_region_edits(data.get("region", []), source),
                   latency=parse_latency(data["latency"], source, ScenarioError) if "latency" in data else None,
                   queues=parse_queues(data.get("queue"), source), quotas=parse_quotas(data.get("quota", []), source),
                   team_weights=weights, team_orgs=orgs, spot=parse_spot(data.get("spot", {}), source),
                   data=parse_data(data.get("data", {}), source),
                   outages=parse_outages(data.get("outage", []), source),
                   bursts=bursts, predictive=predictive,
                   interconnect=parse_interconnect(data.get("interconnect", {"enabled": False}), source,
                                                   ScenarioError),
                   clusters=parse_clusters(data.get("clusters", {}), source),
                   handoff=handoff_section(data.get("handoff", {}), chosen["routing"][0], source),
                   chains=parse_chains(data.get("chain", []), source),
                   experiments=parse_experiments(data.get("experiments", {}), source, scale),
                   roles=parse_roles(data.get("roles"), source),
                   partitions=parse_partitions(data.get("partitions", {"enabled": False}), source),
                   rightsize=parse_rightsize(data.get("rightsize", {}), source),
                   elastic=parse_elastic(data.get("elastic_scaling", {}), source, ScenarioError),
                   **runtime_fields(parse_runtime(data.get("runtime", {}), source), chosen["order"][0], source))

    def build_policies(self) -> Policies:
        """The policy objects, built from their registry keys and parameters."""
        return Policies(**{family: registry.make(family, key, **params)
                           for family, (key, params) in self.policies.items()})

    def sharing(self, world: World) -> SharingSetup:
        """Queue classes, quota entries, and team weights: the dataset's teams table's share_weight
        with this scenario's [[team]] weights over it."""
        return SharingSetup(self.queues or DEFAULT_QUEUES, self.quotas, {**world.team_weights(), **self.team_weights},
                            dict(self.team_orgs), self.spot)

    def world(self, world: World, fleet: pd.DataFrame | None = None) -> World:
        """The dataset's `world` with this scenario's [[region]] edits (engine.scenario.world.edit_world;
        `fleet`, the dataset's, lets a region exist only there and completes its prices from the book)."""
        if self.latency is not None:
            world = replace(world, latency=self.latency)
        if self.data != DataModel():
            world = replace(world, data=self.data)
        if self.outages:
            world = replace(world, outages=self.outages)
        if fleet is not None:
            _known_regions(self, fleet)
        if self.bursts and (self.predictive.reactive or not self.predictive.enabled):
            world = replace(world, bursts=self.bursts)
        if self.interconnect.enabled:
            world = replace(world, interconnect=self.interconnect)
        if self.handoff.enabled:
            world = replace(world, handoff=self.handoff)
        if self.calendar != REGION:
            world = replace(world, calendar=self.calendar)
        if any(edit.like is not None for edit in self.fleet_edits):
            world = like_world(world, self.fleet_edits)
        if self.roles is not None:
            world = replace(world, roles=self.roles)
        if self.partitions.enabled:
            world = replace(world, partitions=self.partitions)
        if self.rightsize.enabled:
            world = replace(world, sizing=self.rightsize)
        if not self.elastic.perfect:
            world = replace(world, elastic=self.elastic)
        try:
            return edit_world(world, self.region_edits, fleet)
        except ScenarioError as exc:
            raise ScenarioError(f"{self.name}: {exc}") from None

    def scaled(self, world: World, history: pd.DataFrame, jobs: pd.DataFrame, fleet: pd.DataFrame) -> World:
        """`world` with the [predictive_scaling] plan (engine.scenario.predictive) when it is on: forecast
        from `history` (the dataset's jobs) before start_utc for the window up to end_utc (else a week
        past the last submit of `jobs`, the ones the run replays, on `fleet`, the one it runs on)."""
        if not self.predictive.enabled:
            return world
        start, end = self.window_start(history), self.end_utc
        if end is None:
            last = pd.to_datetime(jobs["submit_utc"]).max() if len(jobs) else start
            end = max(last, start) + pd.Timedelta(days=7)
        plan = scaling_plan(self.predictive, self.bursts, history, fleet, start, end, self.name)
        return replace(world, scaling=plan)

    def window_start(self, jobs: pd.DataFrame) -> pd.Timestamp | None:
        """[workload] start_utc; without one, for [predictive_scaling] or [experiments], `weeks` whole weeks
        (the former's when both are on) after the first submit of `jobs` (the dataset's), so the forecast has
        its history; else None."""
        forecasts = self.predictive.enabled or self.experiments.enabled
        if self.start_utc is not None or not forecasts or not len(jobs):
            return self.start_utc
        first = pd.to_datetime(jobs["submit_utc"]).min().floor("h")
        weeks = self.predictive.weeks if self.predictive.enabled else self.experiments.settings.weeks
        return first + pd.Timedelta(weeks=weeks)

    def with_experiments(self, world: World, history: pd.DataFrame, jobs: pd.DataFrame,
                         fleet: pd.DataFrame) -> tuple[World, pd.DataFrame]:
        """(`world` with the [experiments] plan, `jobs` with its jobs) when the table is on: forecast from
        `history` (the dataset's jobs) before the window's start (engine.scenario.experiment_plan.add_experiments)."""
        if not self.experiments.enabled:
            return world, jobs
        return add_experiments(self.experiments, world, history, jobs, fleet, self.window_start(history),
                               self.end_utc, self.seed, self.name)

    def apply(self, jobs: pd.DataFrame, fleet: pd.DataFrame,
              zones: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The dataset's jobs and fleet with this scenario's workload and fleet edits applied ([[chain]]s
        built last, on the jobs the run replays). With
        predictions ([runtime]) the models train on the jobs before the window's start (without one:
        on the first TRAIN_SHARE of submits, and the window starts there); `zones` (region -> IANA
        zone) sets each job's local submit hour."""
        choice = RuntimeChoice(self.runtime_source, self.runtime_quantile, self.predict_failure)
        given = len(jobs)
        jobs, start = with_predictions(jobs, self.window_start(jobs), choice, zones, self.name)
        jobs, start = with_sizing(jobs, start, self.rightsize, zones, self.name)
        jobs = window(jobs, start, self.end_utc)
        if given and not len(jobs):
            raise ScenarioError(f"{self.name}: no job was submitted in its window ([workload] start_utc "
                                f"{shown(start)}, end_utc {shown(self.end_utc)})")
        limits.check_jobs(len(jobs), self.growth, self.name)
        jobs = build_chains(scale_demand(compress(jobs, self.load_scale), self.growth, self.seed), self.chains,
                            self.name)
        jobs = replica_requests(jobs, self.partitions)
        for edit in self.fleet_edits:
            fleet = edit_fleet(fleet, edit)
        return jobs, split_clusters(fleet, self.clusters)


def _shapes(data: dict, source: str) -> None:
    """Every [table] a table and every [[table]] a list of tables, before their own checks."""
    for key in sorted(_TABLES & data.keys()):
        if not isinstance(data[key], dict):
            raise ScenarioError(f"{source}: [{key}] must be a table, got {data[key]!r}")
    for key in sorted(_ARRAYS & data.keys()):
        if not isinstance(data[key], list) or not all(isinstance(entry, dict) for entry in data[key]):
            raise ScenarioError(f"{source}: {key} must be a list of [[{key}]] tables, got {data[key]!r}")


def _known_regions(scenario: Scenario, fleet: pd.DataFrame) -> None:
    """Every region a [[burst]] pool, an [[outage]], a [spot] rate or a [[chain]] stage names must be in the
    fleet; [roles]' regions in the fleet or added by a [[fleet]] edit's like."""
    regions = set(fleet["region"].astype(str)) if "region" in fleet else set()
    if scenario.roles is not None:
        check_regions(scenario.roles, regions | {e.region for e in scenario.fleet_edits if e.like}, scenario.name)
    named = ([("[[burst]]", pool.region) for pool in scenario.bursts]
             + [("[[outage]]", outage.region) for outage in scenario.outages]
             + [("[spot] region_rate", r) for r in scenario.spot.region_rate]
             + [("[spot.region_hourly_factor]", r) for r in scenario.spot.region_hourly_factor]
             + [("[[chain]] stages", r) for chain in scenario.chains for r in chain.stages])
    for where, region in named:
        if region not in regions:
            raise ScenarioError(f"{scenario.name}: {where} region {region!r} is not in the fleet; "
                                f"its regions: {', '.join(sorted(regions))}")
