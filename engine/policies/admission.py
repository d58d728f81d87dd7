"""Admission policies (family "admission"): does an arriving job join the queue at all, and how big?

Every policy has one method, `admit(request: AdmissionRequest) -> Admission`, called once per
arriving job. A refused job never runs; the result records why: "rejected-by-admission" (its
region's or its queue class's queue was full) or "rejected-by-forecast" (the work queued ahead of
it would not drain within the horizon). An elastic job may be admitted with fewer nodes
("degraded"): it then runs on those, for its runtime scaled by nodes asked / nodes given
(perfect data-parallel scaling), or, under a scenario's `[elastic_scaling] model = "amdahl"`, by
Amdahl's law with its class's serial fraction (engine.world.elastic; the simulator applies it).
Per-team concurrent-GPU limits are the quota family's "team-limit" (engine.policies.quota).
A policy that admits every job as asked registers with the trait `inert=True` (engine.core.traits;
the simulator then does not call it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.policies.registry import register

FAMILY = "admission"


@dataclass(frozen=True)
class AdmissionRequest:
    """An arriving job and its region's queue. queue_length: jobs waiting in the region;
    class_queue_length / class_max_queued: jobs of its queue class waiting there and the class's
    limit (0: none); gpus, nodes, requested_s (inf: no request), workload_class: the job;
    queued_gpu_s: GPU-seconds requested by the jobs waiting in the region (requests capped at a
    week); capacity_gpus: GPUs of its pool in the region; free_nodes: whole free nodes that could
    hold one of its pods now (gang jobs only, else 0)."""

    queue_length: int
    class_queue_length: int = 0
    class_max_queued: int = 0
    gpus: float = 1.0
    nodes: int = 1
    requested_s: float = math.inf
    workload_class: str = "unknown"
    queued_gpu_s: float = 0.0
    capacity_gpus: float = 1.0
    free_nodes: int = 0


@dataclass(frozen=True)
class Admission:
    """admitted; reason: "queue-full" or "forecast" when refused; nodes: nodes to run on (0: as asked)."""

    admitted: bool
    reason: str = ""
    nodes: int = 0


ADMIT = Admission(True)
QUEUE_FULL = Admission(False, "queue-full")


@register(FAMILY, "accept-all", inert=True)
@dataclass(frozen=True)
class AcceptAll:
    """Every job joins the queue."""

    def admit(self, request: AdmissionRequest) -> Admission:
        return ADMIT


@register(FAMILY, "queue-length-limit")
@dataclass(frozen=True)
class QueueLengthLimit:
    """Refuse arrivals while `max_queued` or more jobs already wait in the region."""

    max_queued: int = field(default=1000, metadata={"help": "most jobs allowed to wait per region"})

    def __post_init__(self) -> None:
        if self.max_queued < 0:
            raise ValueError(f"max_queued must be >= 0, got {self.max_queued}")

    def admit(self, request: AdmissionRequest) -> Admission:
        return ADMIT if request.queue_length < self.max_queued else QUEUE_FULL


@register(FAMILY, "controls")
@dataclass(frozen=True)
class Controls:
    """Queue-length limits per region and per queue class, rejection when the forecast wait exceeds
    a horizon, and degradation of elastic gang jobs to the nodes free now."""

    max_queued: int = field(default=0, metadata={"help": "most jobs allowed to wait per region (0: no limit)"})
    queue_limits: bool = field(default=True, metadata={"help": "enforce each queue class's max_queued"})
    forecast_max_wait_s: float = field(default=0.0, metadata={
        "help": "refuse a job when the GPU-seconds queued ahead / the pool's GPUs exceed this, s (0: off)"})
    elastic_classes: str = field(default="training", metadata={
        "help": "comma-separated workload classes whose gang jobs may run on fewer nodes ('' : none)"})
    elastic_min_fraction: float = field(default=0.5, metadata={
        "help": "an elastic job runs on at least this share of the nodes it asked for"})

    def __post_init__(self) -> None:
        if self.max_queued < 0 or self.forecast_max_wait_s < 0:
            raise ValueError("max_queued and forecast_max_wait_s must be >= 0")
        if not 0.0 < self.elastic_min_fraction <= 1.0:
            raise ValueError(f"elastic_min_fraction must be in (0, 1], got {self.elastic_min_fraction}")

    def admit(self, request: AdmissionRequest) -> Admission:
        if self.max_queued and request.queue_length >= self.max_queued:
            return QUEUE_FULL
        if self.queue_limits and request.class_max_queued and request.class_queue_length >= request.class_max_queued:
            return QUEUE_FULL
        if self.forecast_max_wait_s and request.capacity_gpus > 0 \
                and request.queued_gpu_s / request.capacity_gpus > self.forecast_max_wait_s:
            return Admission(False, "forecast")
        elastic = {c.strip() for c in self.elastic_classes.split(",") if c.strip()}
        if request.nodes > 1 and request.workload_class in elastic and request.free_nodes < request.nodes:
            least = max(1, math.ceil(request.nodes * self.elastic_min_fraction))
            if request.free_nodes >= least:
                return Admission(True, nodes=request.free_nodes)
        return ADMIT
