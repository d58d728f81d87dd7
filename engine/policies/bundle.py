"""The policies a run schedules with: one per family, as built by `registry.make` (engine.policies)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Policies:
    """One policy per family, as built by `registry.make`."""

    order: object
    placement: object
    backfill: object
    admission: object
    gang: object = None
    routing: object = None
    timing: object = None
    quota: object = None
    preemption: object = None
    cluster: object = None
