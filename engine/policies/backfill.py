"""Backfilling policies (family "backfill"): may a job behind a blocked head start now?

Every policy has one method, `window(head_units, free_units, running_end_s, running_units, now_s,
*, head_requested_s, head_pool) -> Window | None`. The simulator calls it when the queue's head does
not fit; None means "no backfilling this pass". A window holds the reservations of one scheduling
pass: a candidate further back may start when it fits now (the simulator checks that by placing it)
and the window `allows` it. Every window class has:
- `allows(now_s, requested_s, units, pools) -> ndarray[bool]`, vectorised over candidates (a window
  that is not `sequential` is EASY's `Window` or built on it: its rule over `shadow_s` and
  `extra_units` is compiled in engine.policies.easy_kernels, and the simulator's pass scans with it);
- `after_start(now_s, requested_s, units, pool)`: the window once that candidate started;
- `after_skip(now_s, requested_s, units, pool)`: the window once that candidate, in queue order,
  stays queued this pass (not allowed, or allowed but it fit on no node);
- `sequential`: False when `after_skip` changes nothing, so `allows` may be evaluated over all
  candidates at once; True when the loop must visit the candidates one by one in queue order,
  asking `allows` for that one candidate then calling `after_start` or `after_skip`. A sequential
  window walked one candidate at a time (not `by_pool`) also has `scan(now_s, requested_s, units,
  fits, refused, start, stop, passed=None) -> int`: that walk from candidate `start` up to the first
  whose units are free now (`fits`) and that it allows, skipping the others (marking in `refused` those
  it refused), in one call (the simulator then tries to place that one); a candidate `passed` (bool
  per candidate: its shape found no room this pass) that it allows is skipped as `after_skip` would.
A window may also have `plan(now_s, waiting) -> (window, order)`: shown the waiting jobs first, it
returns the window to use and the candidates to try, in its order (engine.policies.backfill_order;
EASY-SJBF, selective, list scheduling and lookahead, in the backfill_*.py modules).
Windows are per-pass scratch objects built by `window()`: `after_start` / `after_skip` may update
the window in place and return it (`ProfileWindow` does), so use only the returned window. The
policy objects themselves are frozen and stateless.

Units are resource units of the head job's resource pool (milli-GPU of the GPU models the head
may use; processors in SWF replays; a candidate from another pool counts 0); `pools` are the
candidates' pools and `head_pool` the head's (0: any GPU model of the region; m + 1: the nodes of
the region's m-th model; engine.sim.state.region); `running_end_s` are the running jobs' expected ends,
start + requested runtime (never the true runtime), seconds from time 0; `head_requested_s` is the
head job's requested runtime in s (+inf when unknown: its reservation then never ends). "none" and
"easy" ignore it. A policy whose window is always None registers with the trait `inert=True`
(engine.core.traits).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import ClassVar

import numpy as np

from engine.core.kernel_entry import entry
from engine.policies.profile import Profile
from engine.policies.registry import register

FAMILY = "backfill"
EARLIEST = 64  # running jobs EASY first sorts by end when there are more (all of them if those do not suffice)
# engine.policies.easy_kernels, imported with the first EASY window: numba costs a process about 0.2 s,
# which runs without backfilling need not pay
kernels = None


def flags(n: int, value: bool) -> np.ndarray:
    """At least `n` flags all `value`, one array per value shared by every pass, never written: the walk's
    masks (engine.policies.profile_kernels.scan) when every candidate reserves (conservative) or none is
    passed over."""
    shared = _flags[value]
    if len(shared) < n:
        shared = _flags[value] = np.full(max(n, 2 * len(shared)), value)
    return shared


_flags = {True: np.ones(0, bool), False: np.zeros(0, bool)}


def compiled(name: str):
    """engine.policies.<name>, a module of numba kernels (a backfill variant's), imported on first use
    like `easy_kernels`: runs without that variant need not load it."""
    return import_module(f"engine.policies.{name}")


def easy_kernels():
    """engine.policies.easy_kernels (imported on first use)."""
    global kernels
    if kernels is None:
        from engine.policies import easy_kernels as loaded
        kernels = loaded
    return kernels


@dataclass(frozen=True)
class Window:
    """The head's reservation: it starts at `shadow_s`; `extra_units` are free then beyond its need."""

    sequential: ClassVar[bool] = False
    by_pool: ClassVar[bool] = False
    shadow_s: float
    extra_units: float

    def allows(self, now_s: float, requested_s: np.ndarray, units: np.ndarray, pools=None) -> np.ndarray:
        """Candidates that cannot delay the head: done by the shadow time, or small enough for the extra
        (engine.policies.easy_kernels.admits, the rule the simulator's pass applies too)."""
        return easy_kernels().allows(float(now_s), np.asarray(requested_s, np.float64), np.asarray(units, np.float64),
                                     float(self.shadow_s), float(self.extra_units))

    def after_start(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "Window":
        """The window once a candidate started: one that outlives the shadow time uses up extra."""
        if now_s + requested_s <= self.shadow_s:
            return self
        return replace(self, extra_units=self.extra_units - units)

    def after_skip(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "Window":
        """A candidate that stays queued holds no reservation under EASY: the window is unchanged."""
        return self


@dataclass
class ProfileWindow:
    """Every queued job's reservation, as the free units left over time (`profile`, from now).

    Sequential: `allows` answers for the next candidate in queue order, given the candidates
    before it; `after_start` and `after_skip` update the profile in place and return self.
    """

    sequential: ClassVar[bool] = True
    by_pool: ClassVar[bool] = False
    profile: Profile
    limit: int = 0  # candidates the pass may consider (0: all): the policy's max_job_test

    def allows(self, now_s: float, requested_s: np.ndarray, units: np.ndarray, pools=None) -> np.ndarray:
        """Candidates whose units stay free over [now_s, now_s + requested_s) around every reservation."""
        return np.asarray(units) <= self.profile.lowest(now_s, requested_s)

    def after_start(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "ProfileWindow":
        """The started candidate takes its units over [now_s, now_s + requested_s)."""
        self.profile.reserve(now_s, units, requested_s)
        return self

    def after_skip(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "ProfileWindow":
        """The skipped candidate reserves at the earliest time it fits (never, if it never fits)."""
        self.profile.reserve_earliest(units, requested_s)
        return self

    def scan(self, now_s: float, requested_s: np.ndarray, units: np.ndarray, fits: np.ndarray, refused: np.ndarray,
             start: int, stop: int, passed: np.ndarray | None = None) -> int:
        return self.profile.scan(now_s, requested_s, units, fits, refused, flags(len(fits), True),
                                 flags(len(fits), False) if passed is None else passed, start, stop)


@register(FAMILY, "none", inert=True)
@dataclass(frozen=True)
class NoBackfill:
    """No backfilling: a blocked head blocks everyone behind it. Its `inert` trait tells the simulator it
    need not gather the running jobs' ends for a window that is always None."""

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> Window | None:
        return None


@register(FAMILY, "easy")
@dataclass(frozen=True)
class EasyBackfill:
    """EASY (Lifka 1995; Mu'alem and Feitelson 2001): one reservation, for the head job.

    The shadow time is when enough running jobs will have ended (by their requested runtimes) for
    the head to fit; the extra units are what is free at the shadow time beyond the head's need.
    A candidate may start if it fits now and either ends by the shadow time or fits in the extra.
    If the head cannot be satisfied even when every running job ends, the shadow time is +inf.
    """

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> Window:
        if free_units >= head_units:
            return Window(now_s, free_units - head_units)
        return Window(*_reservation(head_units, free_units, running_end_s, running_units, now_s))


_reserve = None  # easy_kernels.reservation's entry point (engine.core.kernel_entry)


def _reservation(head_units, free_units, end_s, units, now_s) -> tuple[float, float]:
    """easy_kernels.reservation (shadow_s, extra_units), called through its entry point: the arguments'
    types are fixed here (floats, C-contiguous float64 arrays, an int)."""
    global _reserve
    args = (float(head_units), float(free_units), np.ascontiguousarray(end_s, np.float64),
            np.ascontiguousarray(units, np.float64), float(now_s), EARLIEST)
    if _reserve is None:
        _reserve = entry(easy_kernels().reservation, args)
    return _reserve(*args)


@register(FAMILY, "conservative")
@dataclass(frozen=True)
class ConservativeBackfill:
    """Conservative backfilling (Mu'alem and Feitelson 2001): a reservation for every queued job.

    The pass starts from the free units expected over time (running jobs end at start + requested
    runtime; one past its requested end is expected now) and reserves the head at the earliest
    time it fits for its requested runtime. Then each candidate, in queue order, may start now if
    its units stay free for its whole requested runtime around every reservation made so far;
    otherwise it reserves at the earliest such time, so no job behind it may delay it. A job that
    can never fit (more units than the pool has) reserves nothing. Reservations are rebuilt at
    every pass, in the current queue order; they cover the head's pool only (jobs of other pools
    count 0 units there). `max_job_test` > 0 considers only that many waiting jobs behind the head
    per pass, like Slurm's bf_max_job_test (default 500 there): the rest neither start nor reserve
    in that pass, and keep their reasons. Fewer reservations make a pass over a long queue cheaper
    and let jobs further back start sooner, at the price of the guarantee that no backfilled job
    delays any job ahead of it.
    """

    max_job_test: int = field(default=0, metadata={"help": "waiting jobs behind the head considered per pass, "
                                                           "like Slurm's bf_max_job_test (0: all)"})

    def __post_init__(self) -> None:
        if self.max_job_test < 0:
            raise ValueError(f"max_job_test must be >= 0, got {self.max_job_test}")

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> ProfileWindow:
        profile = Profile.expected(now_s, float(free_units), running_end_s, running_units,
                                   head=(float(head_units), head_requested_s))
        return ProfileWindow(profile, self.max_job_test)


@dataclass
class PoolWindow:
    """First come, first served within each pool: a candidate may start only while no job ahead of
    it in its own pool is waiting. `blocked` holds the pools with a job left waiting this pass (the
    head's from the start); a pool-0 job (any model) belongs to every pool. Sequential: `after_skip`
    blocks the skipped candidate's pool."""

    sequential: ClassVar[bool] = True
    by_pool: ClassVar[bool] = True  # the simulator walks the candidates pool by pool (engine.sim.cycle.backfill_pass)
    blocked: set = field(default_factory=set)
    limit: int = 0

    def allows(self, now_s: float, requested_s: np.ndarray, units: np.ndarray, pools=None) -> np.ndarray:
        pools = np.asarray(pools, np.int64)
        if 0 in self.blocked:
            return np.zeros(len(pools), bool)
        return ~np.isin(pools, list(self.blocked)) & ((pools != 0) | (len(self.blocked) == 0))

    def after_start(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "PoolWindow":
        return self

    def after_skip(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "PoolWindow":
        self.blocked.add(int(pool))
        return self


@register(FAMILY, "per-pool")
@dataclass(frozen=True)
class PerPoolFifo:
    """No backfilling inside a pool (the nodes of one GPU model in a region), none needed across them:
    each pool is first come, first served on its own, so a head job waiting for H100s does not hold
    back the L4 jobs behind it. This is how the sample's generator scheduled the recorded history
    (engine.telemetry.synth.fifo: strict FIFO per region and GPU type); with one pool it is "none"."""

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> PoolWindow:
        return PoolWindow({int(head_pool)})
