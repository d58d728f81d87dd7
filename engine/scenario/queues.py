"""Queue classes: the express, standard, batch, preemptible and reserved queues jobs are sorted into.

Every job joins the first queue class whose rules it matches (workload classes, recorded QoS,
GPUs asked for, requested runtime); a job that matches none joins the last one. A queue class
carries what the scheduler and the service levels need to know about its jobs:
- priority: the tier 0-1 that multifactor priority's QoS factor reads, and that priority
  preemption compares (a job may evict only jobs of a lower tier, or of the same tier and a lower
  recorded priority);
- guaranteed: production capacity (Slurm's top PriorityTier partition, Kueue's reserved quota):
  its jobs are scheduled before every other queue and evict non-guaranteed work when they do not
  fit; they are never evicted themselves;
- preemptible: its jobs may be evicted by any job of a higher tier;
- checkpoint_s: how often its jobs checkpoint (0: never, so an eviction loses all work so far);
- spot: whether its jobs may run on spot nodes, which the cloud may take back at any moment
  (engine.sim.processes.spot). Unset, it is true for interruptible work only: a preemptible class
  or one that checkpoints, never a guaranteed one; a guaranteed class cannot set it true. The
  simulator keeps the others' jobs off spot nodes, as the planner's integer program does;
- max_wait_s: the class's maximum-wait SLA (inf: none); starve_after_s: a job waiting longer is
  counted as starved; max_queued: the most of its jobs allowed to wait per region (0: no limit),
  enforced by admission policies that honour queue limits.

`DEFAULT_QUEUES` is the set a scenario gets unless it lists its own [[queue]] entries.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

INF = math.inf


@dataclass(frozen=True)
class QueueClass:
    name: str
    priority: float = 0.5
    classes: tuple[str, ...] = ()
    qos: tuple[str, ...] = ()
    min_gpus: float = 0.0
    max_gpus: float = INF
    max_requested_s: float = INF
    guaranteed: bool = False
    preemptible: bool = False
    checkpoint_s: float = 0.0
    max_wait_s: float = INF
    starve_after_s: float = 3 * 86_400.0
    max_queued: int = 0
    spot: bool | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a queue needs a name")
        if not 0.0 <= self.priority <= 1.0:
            raise ValueError(f"queue {self.name}: priority must be in 0-1, got {self.priority}")
        for name in ("min_gpus", "max_gpus", "max_requested_s", "checkpoint_s", "max_wait_s", "starve_after_s"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"queue {self.name}: {name} must be >= 0, got {getattr(self, name)}")
        if self.max_queued < 0:
            raise ValueError(f"queue {self.name}: max_queued must be >= 0, got {self.max_queued}")
        if self.guaranteed and self.preemptible:
            raise ValueError(f"queue {self.name}: a queue cannot be both guaranteed and preemptible")
        if self.guaranteed and self.spot:
            raise ValueError(f"queue {self.name}: guaranteed work cannot run on spot nodes (spot = true)")
        if self.spot is None:
            object.__setattr__(self, "spot", not self.guaranteed and (self.preemptible or self.checkpoint_s > 0))

    def matches(self, workload_class: np.ndarray, qos: np.ndarray, gpus: np.ndarray,
                requested_s: np.ndarray) -> np.ndarray:
        ok = (gpus >= self.min_gpus) & (gpus <= self.max_gpus) & (requested_s <= self.max_requested_s)
        if self.classes:
            ok &= np.isin(workload_class, self.classes)
        if self.qos:
            ok &= np.isin(qos, self.qos)
        return ok


HOUR = 3600.0
DEFAULT_QUEUES = (
    QueueClass("reserved", 1.0, classes=("inference",), qos=("guaranteed",), guaranteed=True, max_wait_s=60.0),
    QueueClass("express", 0.8, classes=("inference", "development"), max_wait_s=15 * 60.0,
               starve_after_s=4 * HOUR),
    QueueClass("batch", 0.3, classes=("batch",), checkpoint_s=HOUR, max_wait_s=24 * HOUR),
    QueueClass("preemptible", 0.1, classes=("hpo",), preemptible=True, max_wait_s=48 * HOUR),
    QueueClass("standard", 0.5, checkpoint_s=HOUR, max_wait_s=24 * HOUR),
)


def assign_queues(queues: tuple[QueueClass, ...], workload_class, qos, gpus, requested_s) -> np.ndarray:
    """Index into `queues` of each job's queue: the first whose rules match, else the last."""
    n = len(gpus)
    chosen = np.full(n, len(queues) - 1, np.int64)
    open_ = np.ones(n, bool)
    for i, queue in enumerate(queues):
        hit = open_ & queue.matches(np.asarray(workload_class, object), np.asarray(qos, object),
                                    np.asarray(gpus, np.float64), np.asarray(requested_s, np.float64))
        chosen[hit] = i
        open_ &= ~hit
    return chosen


def queue_table(queues: tuple[QueueClass, ...]) -> pd.DataFrame:
    """The queue classes as the result's queue_classes table (engine.sim.output.result)."""
    keep = ("priority", "max_wait_s", "starve_after_s", "guaranteed", "preemptible", "checkpoint_s", "spot")
    return pd.DataFrame([{"queue": q.name, **{f: getattr(q, f) for f in keep}} for q in queues])


FIELDS = tuple(f.name for f in fields(QueueClass))
