"""Admission policies (family "admission"): does an arriving job join the queue at all?

Every policy has one method, `admit(queue_length, now_s) -> bool`, called once per arriving job
with the number of jobs already waiting in its region. A refused job never runs; the result
records it with the reason "rejected-by-admission".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.policies.registry import register

FAMILY = "admission"


@register(FAMILY, "accept-all")
@dataclass(frozen=True)
class AcceptAll:
    """Every job joins the queue."""

    def admit(self, queue_length: int, now_s: float) -> bool:
        return True


@register(FAMILY, "queue-length-limit")
@dataclass(frozen=True)
class QueueLengthLimit:
    """Refuse arrivals while `max_queued` or more jobs already wait in the region."""

    max_queued: int = field(default=1000, metadata={"help": "most jobs allowed to wait per region"})

    def __post_init__(self) -> None:
        if self.max_queued < 0:
            raise ValueError(f"max_queued must be >= 0, got {self.max_queued}")

    def admit(self, queue_length: int, now_s: float) -> bool:
        return queue_length < self.max_queued
