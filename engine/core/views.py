"""Read-only views of simulator state that policies receive.

A view is a bundle of numpy arrays, one entry per item, that costs nothing to build: `take`
selects a subset by fancy indexing and every array is a non-writeable view, so a policy cannot
change simulator state through it. Times are seconds from the workload's time 0.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

import numpy as np

_CODES = ("index", "team", "user", "project", "queue_class")  # int64 fields; the others float64


@dataclass(frozen=True)
class ShareView:
    """Who holds and has used what, at the moment a region's queue is ordered (engine.sim.state.ledger).

    Per team (index = the team code of `QueueView.team`): teams (names), org (int64 code of the
    team's organisation, into `orgs`), weight (float64 share weight > 0, from the teams table's
    share_weight or the scenario's [[team]] entries; 1 by default), usage_gpu_s (fleet-wide GPU-seconds
    used, decayed with half-life `half_life_s`: work done one half-life ago counts half), served_gpu_s
    (fleet-wide GPU-seconds used, not decayed), running_gpus / running_cpus / running_memory_gib (held
    now in this region). Per user and per project code: user_usage_gpu_s, project_usage_gpu_s (decayed,
    fleet-wide). capacity_gpus / capacity_cpus / capacity_memory_gib: the region's installed totals.
    seed: the run's seed (seeded policies such as lottery draw from it and the time, never from
    shared state).

    `deferred` builds a view whose arrays are computed at their first read (the simulator's ledger:
    most orders read only a few of them).
    """

    teams: tuple[str, ...]
    orgs: tuple[str, ...]
    org: np.ndarray
    weight: np.ndarray
    usage_gpu_s: np.ndarray
    served_gpu_s: np.ndarray
    running_gpus: np.ndarray
    running_cpus: np.ndarray
    running_memory_gib: np.ndarray
    user_usage_gpu_s: np.ndarray
    project_usage_gpu_s: np.ndarray
    capacity_gpus: float
    capacity_cpus: float
    capacity_memory_gib: float
    half_life_s: float
    seed: int = 0

    @classmethod
    def single(cls, teams: int = 1, users: int = 1, projects: int = 1, capacity_gpus: float = 1.0) -> "ShareView":
        """An idle ledger: `teams` teams of weight 1 in one organisation, nothing used or running."""
        zeros = np.zeros(teams)
        return cls(tuple(f"team{i}" for i in range(teams)), ("org",), np.zeros(teams, np.int64), np.ones(teams),
                   zeros, zeros, zeros, zeros, zeros, np.zeros(users), np.zeros(projects),
                   capacity_gpus, 0.0, 0.0, 7 * 86_400.0)

    @classmethod
    def deferred(cls, given: dict, compute: Callable[[str], object]) -> "ShareView":
        """A view with the fields in `given`; every other field is `compute(name)`, called at its
        first read and kept."""
        view = object.__new__(cls)
        view.__dict__.update(given)
        view.__dict__["_compute"] = compute
        return view

    def __getattr__(self, name: str):
        """A field of a `deferred` view not read yet (called only for attributes not set)."""
        compute = self.__dict__.get("_compute")
        if compute is None or name not in _SHARE_FIELDS:
            raise AttributeError(f"'ShareView' object has no attribute {name!r}")
        value = self.__dict__[name] = compute(name)
        return value


@dataclass(frozen=True)
class QueueView:
    """The waiting jobs, one entry per job, in no particular order.

    index: int64 stable job id (position in the workload); every order ends with it.
    submit_s: float64 submit time, seconds from the workload's time 0.
    requested_s: float64 runtime known at submit (the user's request, later a prediction), seconds.
    size: float64 resource units asked for: GPUs (fractions allowed) in the simulator,
        processors in SWF replays.
    priority: float64 the job's priority field; higher runs earlier under the priority order.
    deadline_s: float64 deadline, seconds from time 0; +inf when the job has none.
    team, user, project: int64 codes into `shares.teams` and the ledger's user and project arrays
        (0 when the workload has none).
    queue_class: int64 code of the job's queue (engine.scenario.queues: reserved, express, ...);
    qos: float64 that queue's priority tier, 0-1 (Slurm's QoS / partition factor).
    cpus, memory_gib: float64 CPU cores and GiB of memory asked for in total.
    fail_prob: float64 predicted probability that the job fails or is cancelled, 0-1
        (engine.predict.failure_source; 0 when unknown).
    shares: the ledger at this moment (engine.core.views.ShareView), None outside the simulator.
    """

    index: np.ndarray
    submit_s: np.ndarray
    requested_s: np.ndarray
    size: np.ndarray
    priority: np.ndarray
    deadline_s: np.ndarray
    team: np.ndarray | None = None
    user: np.ndarray | None = None
    project: np.ndarray | None = None
    queue_class: np.ndarray | None = None
    qos: np.ndarray | None = None
    cpus: np.ndarray | None = None
    memory_gib: np.ndarray | None = None
    fail_prob: np.ndarray | None = None
    shares: ShareView | None = None

    def __post_init__(self) -> None:
        lengths = set()
        n = len(self.index)
        for f in fields(self):
            if f.name == "shares":
                continue
            value = getattr(self, f.name)
            if value is None:
                value = np.full(n, 0.5) if f.name == "qos" else np.zeros(n)
            array = np.asarray(value, dtype=np.int64 if f.name in _CODES else np.float64)
            if array.ndim != 1:
                raise ValueError(f"QueueView.{f.name} must be one-dimensional, got shape {array.shape}")
            view = array.view()
            view.flags.writeable = False
            object.__setattr__(self, f.name, view)
            lengths.add(len(view))
        if len(lengths) > 1:
            raise ValueError(f"QueueView arrays differ in length: {sorted(lengths)}")

    @classmethod
    def of(cls, submit_s, requested_s, size, *, index=None, priority=None, deadline_s=None, **more) -> "QueueView":
        """A view from the three arrays every workload has; index defaults to 0..n-1, priority to 0,
        deadline to +inf, codes to 0, qos to 0.5; `more` sets the other fields."""
        n = len(submit_s)
        return cls(
            index=np.arange(n) if index is None else index,
            submit_s=submit_s,
            requested_s=requested_s,
            size=size,
            priority=np.zeros(n) if priority is None else priority,
            deadline_s=np.full(n, np.inf) if deadline_s is None else deadline_s,
            **more,
        )

    def take(self, positions) -> "QueueView":
        """The jobs at `positions` (integer array or boolean mask), in that order (same ledger)."""
        view = object.__new__(QueueView)
        for name in _ARRAYS:
            array = getattr(self, name)[positions]  # a fresh array of the validated dtype
            array.flags.writeable = False
            object.__setattr__(view, name, array)
        object.__setattr__(view, "shares", self.shares)
        return view

    def with_shares(self, shares: ShareView | None) -> "QueueView":
        view = object.__new__(QueueView)
        for name in _ARRAYS:
            object.__setattr__(view, name, getattr(self, name))
        object.__setattr__(view, "shares", shares)
        return view

    def __len__(self) -> int:
        return len(self.index)


_ARRAYS = tuple(f.name for f in fields(QueueView) if f.name != "shares")
_SHARE_FIELDS = frozenset(f.name for f in fields(ShareView))


@dataclass(frozen=True)
class RouteRequest:
    """The job a router places, as known at submit time.

    index: stable job id (position in the workload); home: index of its home region in
    `RegionsView.names`; gpus: GPU equivalents asked for; workload_class: one of
    engine.core.vocabulary.WORKLOAD_CLASSES; flexible: True for work that may run anywhere its data may go
    (training, batch, HPO), False for work tied to its home (inference, development);
    requested_s: the runtime asked for, seconds; submit_s: seconds from time 0; data_region: index
    of the region holding its input data (-1: unknown or none); data_gb: the data's size, GB;
    deadline_s: when it must end, seconds from time 0 (+inf: no deadline).
    """

    index: int
    home: int
    gpus: float
    workload_class: str
    flexible: bool
    requested_s: float
    submit_s: float
    data_region: int = -1
    data_gb: float = 0.0
    deadline_s: float = float("inf")

    @classmethod
    def of(cls, *values) -> "RouteRequest":
        """A request from every field's value, in field order (the router's one per routed job)."""
        return assembled(cls, values)


@dataclass(frozen=True)
class RegionsView:
    """Every region at the moment a job is routed, one entry per region (simulator order).

    names: region names. free_gpus / capacity_gpus: GPUs of the job's GPU model (any model for a
    job without one) free now / installed, float64. queued_gpus: GPUs asked for by the jobs
    waiting in the region's queue, float64. at_work: bool, the region is inside its local working
    hours now (its calendar: engine.world.calendar, 9-18 local on its country's working week by
    default, holidays of its country). usd_per_gpu_hour: on-demand price of the job's GPU model
    there (NaN: unknown). g_co2e_per_kwh: grid carbon intensity there at the current local hour. allowed: bool, the
    job's data-residency tag allows the region (engine.world.residency). fits: bool, the region's
    fleet could hold the job when empty (GPU model, node sizes). latency_ms: round-trip time from
    the job's home region (where its users are) to each region, ms (0 at home, inf unknown; None:
    no latency data); slo_ms: the latency SLO of inference (engine.world.latency);
    egress_usd_per_gb: the price of moving data out of each region (NaN: unknown; None: no data);
    edge: bool, the region is an edge location ([roles] edge, engine.world.roles; None: no roles).
    """

    names: tuple[str, ...]
    free_gpus: np.ndarray
    capacity_gpus: np.ndarray
    queued_gpus: np.ndarray
    at_work: np.ndarray
    usd_per_gpu_hour: np.ndarray
    g_co2e_per_kwh: np.ndarray
    allowed: np.ndarray
    fits: np.ndarray
    latency_ms: np.ndarray | None = None
    slo_ms: float = float("inf")
    egress_usd_per_gb: np.ndarray | None = None
    edge: np.ndarray | None = None

    @classmethod
    def of(cls, *values) -> "RegionsView":
        """A view from every field's value, in field order (the router's one per routed job)."""
        return assembled(cls, values)

    def __len__(self) -> int:
        return len(self.names)


_FIELDS: dict[type, tuple[str, ...]] = {}  # the field names of each class `assembled` built


def assembled(cls, values: tuple):
    """An instance of the frozen dataclass `cls` holding `values`, one per field in field order, set
    straight into its __dict__: half the cost of the generated __init__, which sets each field through
    object.__setattr__ (the router builds two per routed job, ~90,000 on the sample; the holder two
    per flexible job; the cluster step two per start: engine.core.cluster_view; soft-constraints routing
    one Routed per routed job)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
    if len(values) != len(names):
        raise TypeError(f"{cls.__name__}.of takes {len(names)} values ({', '.join(names)}), got {len(values)}")
    made = object.__new__(cls)
    made.__dict__.update(zip(names, values))
    return made


@dataclass(frozen=True)
class TimingView:
    """When a job could start, seen from its submit time in the region it is routed to.

    start_s: candidate start instants, float64 seconds from time 0, on a quarter-hour grid from
    now (the first entry) up to the latest start the policy may choose. g_co2e_per_kwh: the mean
    grid intensity the job would run under if started at each candidate (over its requested
    runtime, at most a day). at_work: bool, the region is in its working hours at each candidate.
    latest_start_s: the job's deadline minus its requested runtime (+inf without a deadline): a
    delay past it is cut back to it. price_factor: the mean price over the job's requested runtime
    (at most a day) if started at each candidate, as a multiple of the region's list price (below 1
    inside off-peak windows, engine.world.offpeak; None: no price data).
    """

    start_s: np.ndarray
    g_co2e_per_kwh: np.ndarray
    at_work: np.ndarray
    latest_start_s: float
    price_factor: np.ndarray | None = None

    @classmethod
    def of(cls, *values) -> "TimingView":
        """A view from every field's value, in field order (the holder's one per flexible job)."""
        return assembled(cls, values)


