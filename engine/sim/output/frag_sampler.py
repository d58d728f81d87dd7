"""Samples each region's GPU fragmentation (FGD's measure) on a regular time grid during a run.

Fragmentation follows Weng et al. (USENIX ATC'23; engine.core.fragmentation): the free GPU milli
that the typical pods of a target workload cannot use. The target here is the simulated
workload itself: the pod shapes (CPU milli, per-GPU milli, GPU count, GPU model) of its jobs,
one pod per job, the most popular covering 95 % of them (`TargetWorkload.typical`).

Samples lie on a grid from time 0 every `interval_s` (one hour, or longer so that a run has at
most `MAX_SAMPLES` of them) up to the end of the measurement window. Fleet state is constant
between event batches, so the sample at grid time t is taken just before the first batch later
than t: it is the state at t exactly. Each sample gives, per region, idle GPUs (free milli / 1000)
and fragmented GPUs (F(M) summed over nodes / 1000).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.fragmentation import FragmentationIndex, TargetWorkload
from engine.sim.processes.base import WorldProcess

HOUR_S = 3600.0
MAX_SAMPLES = 1000


def workload_target(num_gpu: np.ndarray, gpu_milli: np.ndarray, cpu_milli: np.ndarray,
                    gpu_type: np.ndarray) -> TargetWorkload | None:
    """The typical pod shapes of the jobs that use GPUs (None when none does)."""
    uses = num_gpu > 0
    if not uses.any():
        return None
    model, models = pd.factorize(gpu_type[uses])  # None: -1
    shapes = pd.DataFrame({"cpu": cpu_milli[uses], "milli": gpu_milli[uses], "gpus": num_gpu[uses], "model": model})
    counts = {(cpu, milli, gpus, (models[m],) if m >= 0 else ()): count  # shapes in the order they first occur
              for (cpu, milli, gpus, m), count in shapes.groupby(list(shapes), sort=False).size().items()}
    return TargetWorkload.most_popular(counts)


class FragmentationSampler(WorldProcess):
    """Collects (time_s, region, idle_gpus, frag_gpus) rows; `table()` returns them."""

    result_fields = ("fragmentation",)

    @classmethod
    def attach(cls, run) -> FragmentationSampler:
        w = run.w
        return cls(workload_target(w.num_gpu, w.gpu_milli, w.cpu_milli, w.gpu_type), run.regions, w.observed_end_s)

    def result(self) -> dict[str, object]:
        return {"fragmentation": self.table()}

    def __init__(self, target: TargetWorkload | None, regions: dict, end_s: float) -> None:
        """`end_s`: the measurement window's end (0: unknown, then the last event's time)."""
        self.target, self.regions = target, regions
        self.end_s = end_s if end_s > 0 else np.inf
        self.interval_s = max(HOUR_S, end_s / MAX_SAMPLES) if end_s > 0 else HOUR_S
        self.next_s = 0.0
        self.rows: list[tuple[float, str, float, float]] = []
        self.indexes = {name: FragmentationIndex(target, f.state.gpu_model, f.state.model_names, f.state.cpu_free,
                                                 f.state.gpu_free)
                        for name, f in regions.items() if target is not None and len(f.state.cpu_free)}
        self._all = {name: np.arange(len(f.state.cpu_free)) for name, f in regions.items()}

    def before_batch(self, now_s: float) -> None:
        """Record every grid time before `now_s` (and within the window) from the current state."""
        while self.next_s < now_s and self.next_s <= self.end_s:
            self._sample(self.next_s)
            self.next_s += self.interval_s

    def finish(self, last_event_s: float) -> None:
        """After the last event: record the grid times left up to the window's end (or up to the
        last event when the window is unknown); every job has ended, so the fleet is idle."""
        if not np.isfinite(self.end_s):
            self.end_s = last_event_s
        self.before_batch(float(np.nextafter(self.end_s, np.inf)))

    def _sample(self, time_s: float) -> None:
        for name, fleet in self.regions.items():
            state = fleet.state
            idle = float(state.gpu_free_total.sum()) / 1000.0
            frag, index = 0.0, self.indexes.get(name)
            if index is not None:
                index.refresh(self._all[name], state.cpu_free, state.gpu_free)
                frag = float(index.weighted.sum()) / index.total_weight / 1000.0
            self.rows.append((time_s, name, idle, frag))

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["time_s", "region", "idle_gpus", "frag_gpus"])
