"""Routing policies (family "routing"): which region a job queues in, decided once at submit.

Every policy has one method, `scores(job, regions, now_s) -> np.ndarray`: one float64 per region
(`RegionsView` order), higher is better, -inf = never there. The simulator routes the job to the
argmax among regions whose fleet fits it (ties: the home region, then the lowest index) and keeps
it home when every score is -inf. Terms used in the docstrings:

- *eligible*: `regions.allowed` and `regions.fits` are both True. Every policy except home-only
  gives -inf to the other regions: data residency is a hard constraint.
- *free for the job*: the region has at least `job.gpus` GPUs free now (`free_gpus`, 1e-9 slack).
- *inflexible*: `job.flexible` is False (inference, development). Such a job scores 0 at home if
  home is eligible and -inf everywhere else, whatever the policy (overflow may move it, see there);
  when its data may not stay at home, it takes the fallback below.
- *fallback*: when a rule says "home" but home is not eligible, the eligible regions instead,
  ranked by most free GPUs, then fewest queued GPUs (never a region the job's data may not go to).

A policy that keeps every job home whatever the view registers with the trait `inert=True`
(engine.core.traits; the simulator then skips routing). One whose inflexible jobs stay home whenever
home is eligible says so with `keeps_inflexible_home` True (a setting, engine.core.traits: the router
then keeps such a job home without asking); overflow says it unless `move_inflexible` is set. One that
keeps any job home while home is eligible and free for it says `keeps_home_when_free` (overflow,
follow-the-sun and latency-aware); the promise leaves out inference while some region is an edge one
(latency-aware tries those first).
Rule-based policies return dense ranks (0, 1, 2, ... over the eligible regions, equal for equal
keys) so that ties stay ties for the
simulator's tie-break; `weighted` returns its weighted sum. Regions are few (a handful), so the
policies loop over them in plain Python: cheaper than numpy at that size (4-6 us a call on the
sample's 7 regions). The most routed rules, cheapest-by (lowest-carbon, cheapest), overflow's (overflow,
latency-aware's other flexible work) and follow-the-sun's, are compiled for the jobs they may move
(engine.policies.routing_kernels: ~2 us a call).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from engine.core.views import RegionsView, RouteRequest
from engine.policies.registry import register

FAMILY = "routing"
SLACK_GPUS = 1e-9   # GPUs: free_gpus counts as enough when it is at most this short of the request
_NEG_INF = float("-inf")
# engine.policies.routing_kernels, imported with the first cheapest-by choice: runs that route otherwise (or
# not at all) need not load numba for it
kernels = None


def eligible(regions: RegionsView) -> list[bool]:
    """Per region: residency allows it and its fleet could hold the job."""
    return np.logical_and(regions.allowed, regions.fits).tolist()


def home_only(job: RouteRequest, n: int, home_ok: bool = True) -> np.ndarray:
    """0 at home (when `home_ok`), -inf elsewhere."""
    scores = np.full(n, -np.inf)
    if home_ok and 0 <= job.home < n:
        scores[job.home] = 0.0
    return scores


def stay_home(job: RouteRequest, regions: RegionsView, ok: list[bool]) -> np.ndarray:
    """An inflexible job's scores: home when home is eligible; otherwise (its data may not stay
    at home) the fallback, so that no routing policy but home-only ever breaks residency."""
    if ok[job.home]:
        return home_only(job, len(ok))
    return dense_rank([(free, -queued) if fine else None for fine, free, queued in
                       zip(ok, regions.free_gpus.tolist(), regions.queued_gpus.tolist())])


def dense_rank(keys: list) -> np.ndarray:
    """Dense rank of comparable keys (tuples compare lexicographically; no NaN inside): the lowest
    key gets 0, equal keys share a rank; a None key gets -inf."""
    present = set(keys)
    present.discard(None)
    ranks = {key: float(rank) for rank, key in enumerate(sorted(present))}
    return np.array([ranks.get(k, _NEG_INF) for k in keys], np.float64)


def _validate_fraction(policy, name: str) -> None:
    value = getattr(policy, name)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"routing policy {policy.registry_key!r}: {name} must be between 0 and 1 "
                         f"(inclusive), got {value!r}")


@register(FAMILY, "home-only", inert=True)
@dataclass(frozen=True)
class HomeOnly:
    """The baseline: home scores 0, every other region -inf. It ignores residency and fit, so it
    keeps the telemetry's placement, violations included. Its `inert` trait tells the simulator it
    may skip routing altogether."""

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        return home_only(job, len(regions))


@register(FAMILY, "follow-the-sun")
@dataclass(frozen=True)
class FollowTheSun:
    """Flexible work goes where local teams are off-hours. Home if home is eligible and free for
    the job; else the *lender* with the most free GPUs, a lender being an eligible off-hours
    (`not at_work`) region other than home, free for the job, whose free/capacity is at least
    `min_free_fraction`; else home (fallback if home is not eligible). Inflexible jobs: home."""

    keeps_inflexible_home: ClassVar[bool] = True
    keeps_home_when_free: ClassVar[bool] = True

    min_free_fraction: float = field(default=0.0, metadata={
        "help": "lend only from regions with at least this share of their GPUs free, 0-1"})

    def __post_init__(self) -> None:
        _validate_fraction(self, "min_free_fraction")

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        if not job.flexible:
            return stay_home(job, regions, eligible(regions))
        return _kernels().sun_ranks(*_columns(regions), np.asarray(regions.capacity_gpus, np.float64),
                                    np.asarray(regions.queued_gpus, np.float64), np.asarray(regions.at_work, bool),
                                    float(job.gpus - SLACK_GPUS), int(job.home), float(self.min_free_fraction))


@register(FAMILY, "cheapest")
@dataclass(frozen=True)
class Cheapest:
    """Among eligible regions free for the job (home included), the lowest price of a GPU-hour there
    with the egress of moving its input data there spread over the job's GPU-hours (`priced`: the
    lowest dollars of running it there); unknown NaN prices last. When none is free, home (fallback
    if home is not eligible). Inflexible jobs: home."""

    keeps_inflexible_home: ClassVar[bool] = True

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        return _cheapest_by(job, regions, priced(job, regions))


@register(FAMILY, "lowest-carbon")
@dataclass(frozen=True)
class LowestCarbon:
    """Among eligible regions free for the job (home included), the lowest grid intensity
    `g_co2e_per_kwh` now (unknown NaN last); when none is free, home (fallback if home is not
    eligible). Inflexible jobs: home."""

    keeps_inflexible_home: ClassVar[bool] = True

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        return _cheapest_by(job, regions, regions.g_co2e_per_kwh)


def _cheapest_by(job: RouteRequest, regions: RegionsView, cost) -> np.ndarray:
    """Tier 2: free for the job, by lowest `cost` (unknown NaN last); tier 1: home; tier 0: fallback
    (dense ranks of those keys, compiled: engine.policies.routing_kernels)."""
    if not job.flexible:
        return stay_home(job, regions, eligible(regions))
    return _kernels().cheapest_ranks(*_columns(regions), np.asarray(regions.queued_gpus, np.float64),
                                     np.asarray(cost, np.float64), float(job.gpus - SLACK_GPUS), int(job.home))


def _kernels():
    """engine.policies.routing_kernels, imported on first use."""
    global kernels
    if kernels is None:
        from engine.policies import routing_kernels as kernels
    return kernels


def _columns(regions: RegionsView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(allowed, fits, free GPUs) of `regions` as the compiled rules take them (bool, bool, float64)."""
    return (np.asarray(regions.allowed, bool), np.asarray(regions.fits, bool),
            np.asarray(regions.free_gpus, np.float64))


def move_usd(job: RouteRequest, regions: RegionsView) -> list[float]:
    """Per region: dollars of egress to move the job's input data there (0 in the data's region, and
    for a job without data; an unknown egress price counts as 0)."""
    n = len(regions)
    if job.data_region < 0 or job.data_gb <= 0 or regions.egress_usd_per_gb is None:
        return [0.0] * n
    price = float(regions.egress_usd_per_gb[job.data_region])
    price = price if price == price else 0.0
    return [0.0 if i == job.data_region else job.data_gb * price for i in range(n)]


def priced(job: RouteRequest, regions: RegionsView) -> list[float]:
    """Per region: what a GPU-hour of the job costs there, egress included: usd_per_gpu_hour +
    move_usd / the job's requested GPU-hours (GPUs x requested hours; one GPU-hour when that is not a
    positive finite number). Dollars of running the job there = this x its GPU-hours, so the order of
    the regions is that of the job's whole bill; the price itself for a job that moves no data (NaN
    where the price is unknown)."""
    gpu_hours = job.gpus * job.requested_s / 3600.0
    spread = gpu_hours if 0.0 < gpu_hours < math.inf else 1.0
    return [price + usd / spread for price, usd in zip(regions.usd_per_gpu_hour.tolist(), move_usd(job, regions))]


@register(FAMILY, "data-local")
@dataclass(frozen=True)
class DataLocal:
    """Among eligible regions free for the job, the cheapest to move its input data to (its data's
    region first, at no cost), then the most free GPUs; when none is free, the data's region if
    eligible, else home (fallback if home is not eligible). Inflexible jobs: home."""

    keeps_inflexible_home: ClassVar[bool] = True

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        ok = eligible(regions)
        if not job.flexible:
            return stay_home(job, regions, ok)
        need, keys = job.gpus - SLACK_GPUS, []
        waits_at = job.data_region if 0 <= job.data_region < len(ok) and ok[job.data_region] else job.home
        for i, (fine, free, queued, usd) in enumerate(zip(ok, regions.free_gpus.tolist(),
                                                          regions.queued_gpus.tolist(), move_usd(job, regions))):
            if not fine:
                keys.append(None)
            elif free >= need:
                keys.append((2, -usd, free))
            else:
                keys.append((1, 0.0, 0.0) if i == waits_at else (0, free, -queued))
        return dense_rank(keys)


@register(FAMILY, "overflow")
@dataclass(frozen=True)
class Overflow:
    """Home while home is eligible and free for the job; otherwise the eligible region with the
    most free GPUs, then the fewest queued GPUs (home included: it wins when it still has the most).
    Inflexible jobs stay home unless `move_inflexible` is set, then they overflow too."""

    move_inflexible: bool = field(default=False, metadata={
        "help": "let inference and development jobs overflow as well"})

    keeps_home_when_free: ClassVar[bool] = True

    @property
    def keeps_inflexible_home(self) -> bool:
        return not self.move_inflexible

    def __post_init__(self) -> None:
        if not isinstance(self.move_inflexible, bool):
            raise ValueError(f"routing policy 'overflow': move_inflexible must be true or false, "
                             f"got {self.move_inflexible!r}")

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        if not (job.flexible or self.move_inflexible):
            return stay_home(job, regions, eligible(regions))
        return _overflow(job, regions)


@register(FAMILY, "latency-aware")
@dataclass(frozen=True)
class LatencyAware:
    """Overflow that keeps inference near its users. Inference (`workload_class` "inference"):
    first, with edge regions (`edge`, a scenario's [roles]), the nearest eligible edge region within
    `slo_ms` of home with room for it beyond the GPUs already queued there (free - queued >= its
    GPUs; then the most free GPUs); else home while home is eligible and
    free for it; else, among eligible regions free for it whose round-trip time from home
    (`latency_ms`) is within `slo_ms`, the nearest (then the most free GPUs); else home. Other
    flexible work overflows as in `overflow`; development stays home. So a job stays home while home is
    eligible and free for it, inference excepted while some region is an edge one (`keeps_home_when_free`)."""

    keeps_home_when_free: ClassVar[bool] = True

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        if job.workload_class != "inference" and job.flexible:
            return _overflow(job, regions)
        ok = eligible(regions)
        need, free = job.gpus - SLACK_GPUS, regions.free_gpus.tolist()
        if job.workload_class == "inference":
            latency = (regions.latency_ms.tolist() if regions.latency_ms is not None
                       else [0.0 if i == job.home else math.inf for i in range(len(ok))])
            near = [fine and f >= need and ms <= regions.slo_ms for fine, f, ms in zip(ok, free, latency)]
            if regions.edge is not None:
                room = [e and close and f - q >= need for e, close, f, q in
                        zip(regions.edge.tolist(), near, free, regions.queued_gpus.tolist())]
                if any(room):
                    return dense_rank([(-ms, f) if fits else None for fits, ms, f in zip(room, latency, free)])
            if ok[job.home] and free[job.home] >= need:
                return home_only(job, len(ok))
            if not any(near):
                return stay_home(job, regions, ok)
            return dense_rank([(-ms, f) if close else None for close, ms, f in zip(near, latency, free)])
        return stay_home(job, regions, ok)


def _overflow(job: RouteRequest, regions: RegionsView) -> np.ndarray:
    """Home while eligible and free for the job; else the eligible region with the most free GPUs,
    then the fewest queued (home included: it wins when it still has the most)."""
    return _kernels().overflow_ranks(*_columns(regions), np.asarray(regions.queued_gpus, np.float64),
                                     float(job.gpus - SLACK_GPUS), int(job.home))


def _weight(default: float, what: str):
    return field(default=default, metadata={"help": f"weight of {what}, >= 0"})


@register(FAMILY, "weighted")
@dataclass(frozen=True)
class Weighted:
    """A weighted sum over eligible regions (others -inf); inflexible jobs: home.

    score = w_home x [home] + w_free x free/capacity + w_offhours x [not at_work]
          + w_price x (1 - price / max price) + w_carbon x (1 - intensity / max intensity)
          - w_queue x queued/capacity - w_wait_penalty x [not free for the job]
          - w_egress x dollars to move the job's input data there / the most it costs anywhere.
    price is `priced`: a GPU-hour's price there with the egress of moving the job's input data there
    spread over its GPU-hours, so the price term counts egress as well (the on-demand price alone for
    a job that moves no data); w_egress adds egress on its own on top.
    Maxima are over the eligible regions with a known value; an unknown (NaN) price or intensity
    scores 0 on that term, as does every region when the maximum is not positive. A region without
    capacity scores 0 on the free and queue terms.
    """

    keeps_inflexible_home: ClassVar[bool] = True

    w_home: float = _weight(0.25, "staying home (bonus)")
    w_free: float = _weight(1.0, "the region's free share of GPUs")
    w_offhours: float = _weight(0.5, "the region being off-hours")
    w_price: float = _weight(0.5, "a low price of a GPU-hour there, egress included")
    w_carbon: float = _weight(0.5, "a low grid carbon intensity")
    w_queue: float = _weight(1.0, "the queued GPUs per installed GPU (penalty)")
    w_wait_penalty: float = _weight(1.0, "the region lacking free GPUs for the job now (penalty)")
    w_egress: float = _weight(0.0, "the egress dollars of moving the job's input data there (penalty)")

    def __post_init__(self) -> None:
        for name in ("w_home", "w_free", "w_offhours", "w_price", "w_carbon", "w_queue", "w_wait_penalty",
                     "w_egress"):
            value = getattr(self, name)
            if not (0.0 <= value < math.inf):
                raise ValueError(f"routing policy 'weighted': {name} must be a finite number >= 0, got {value!r}")

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        ok = eligible(regions)
        if not job.flexible:
            return stay_home(job, regions, ok)
        prices, carbon = priced(job, regions), regions.g_co2e_per_kwh.tolist()
        top_price, top_carbon = _top(prices, ok), _top(carbon, ok)
        need, scores = job.gpus - SLACK_GPUS, []
        moves = move_usd(job, regions)
        top_move = _top(moves, ok)
        for i, (fine, free, capacity, queued, at_work, price, intensity, usd) in enumerate(zip(
                ok, regions.free_gpus.tolist(), regions.capacity_gpus.tolist(), regions.queued_gpus.tolist(),
                regions.at_work.tolist(), prices, carbon, moves)):
            if not fine:
                scores.append(_NEG_INF)
                continue
            per_gpu = 1.0 / capacity if capacity > 0 else 0.0
            scores.append(self.w_home * (i == job.home) + self.w_free * free * per_gpu
                          + self.w_offhours * (not at_work)
                          + self.w_price * _saving(price, top_price) + self.w_carbon * _saving(intensity, top_carbon)
                          - self.w_queue * queued * per_gpu - self.w_wait_penalty * (free < need)
                          - (self.w_egress * usd / top_move if top_move > 0 else 0.0))
        return np.array(scores, np.float64)


def _top(values: list[float], ok: list[bool]) -> float:
    """The largest known (non-NaN) value over eligible regions; 0 when there is none."""
    return max((v for v, fine in zip(values, ok) if fine and v == v), default=0.0)


def _saving(value: float, top: float) -> float:
    """1 - value / top; 0 when the value is unknown (NaN) or top is not positive."""
    return 1.0 - value / top if top > 0 and value == value else 0.0
