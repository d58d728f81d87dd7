"""A scenario's [rightsize] table: jobs are given the GPUs they are predicted to use, not the GPUs they ask for.

    [rightsize]
    enabled = true              # off by default: every job gets its request
    quantile = 0.9              # the GPU-need model's quantile of the used share (engine.predict.gpu_need)
    margin_pct = 0              # GPUs kept above the prediction, in percent of it
    oom_at_fraction = 0.5       # a job given too little fails out of memory this far into its run
    classes = "training,batch,hpo,inference,development"   # the workload classes it applies to
    memory = false              # size host memory too (off: every job gets the memory it asked for)
    memory_quantile = 0.9       # the memory-need model's quantile of the used share of memory_gib
    memory_margin_pct = 10      # GiB kept above the memory prediction, in percent of it

Semantics. The GPU-need model (engine.predict.gpu_need: the quantile `quantile` of a job's used
share, peak GPUs busy at once / GPUs asked, from submit-time features and the user's measured
history) is trained on the measured jobs that had ended before the window's start ([workload]
start_utc; without one, on the first TRAIN_SHARE of submits, and the window starts there:
engine.predict.size_source). Each job of `classes` submitted in the window is given
r = recommended_gpus(its request, need x (1 + margin_pct / 100)) (engine.core.sizing, the retrospective
right-sizing's rule: whole GPUs on one node, whole nodes of a gang, a share of a GPU not cut); the jobs table then
carries `sized_gpus` = r where r is below the request (NaN elsewhere: the job gets its request).

In the run (engine.sim.processes.oom_restarts) a sized job is placed with r GPUs. If its measured
peak (`gpus_used_max`) exceeds r it runs out of memory `oom_at_fraction` x its run time after it
starts (a model: the telemetry gives the peak, not when it came; 0.5, half-way, is the expected
time of a peak equally likely at any moment of the run), loses that running (r x that time in
GPU-hours), and rejoins its queue with its full request and its whole run to do again. A job
without a measured peak is taken to fit (optimistic: its risk is not seen). The restart keeps the
job's place in the queue order keyed at submit.

Memory (`memory = true`). The memory-need model (the same family: engine.predict.gpu_need.NeedModel on
`memory_used_gib_max` / `memory_gib`, at `memory_quantile`) is trained on the jobs measured for memory
that ended before the cut, and each job of `classes` in the window is given m = ceil(need x (1 +
memory_margin_pct / 100)) GiB where that is below its request: the jobs table carries `sized_memory_gib`
= m (NaN elsewhere). In the run its pods ask for m / pods GiB each, at most what each pod asked for, so
node fit (engine.sim.state.region: a node's free memory) sees the sized memory. The job's memory given is
that per pod x its pods (a GPU-sized gang on fewer nodes holds fewer nodes' memory). If its measured
peak memory exceeds that, it runs out of memory as a job given too few GPUs does (at `oom_at_fraction` of
its run, restarted with its full request: GPUs and memory); a job short of both fails once. A job without
a measured peak memory is taken to fit. Without `memory`, memory is not modelled: a job keeps its
memory per pod as asked, and no job fails for memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from engine.core.bounds import bounded_field
from engine.core.errors import ScenarioError
from engine.core.vocabulary import WORKLOAD_CLASSES
from engine.scenario.checks import declared

ALL_CLASSES = ",".join(c for c in WORKLOAD_CLASSES if c != "unknown")
TRAIN_SHARE = 0.7  # predictions without a window start: train on the first 70 % of submits


@dataclass(frozen=True)
class RightSize:
    """The [rightsize] table's values (the module docstring explains each); the numeric fields'
    metadata gives their unit, range, help and label (the scenario builder draws its widgets from them)."""

    enabled: bool = field(default=False, metadata={"help": "give jobs their predicted GPUs instead of their request",
                                                    "label": "Right-size at submit"})
    quantile: float = bounded_field(0.9, "quantile", 0.05, 0.99, "of the used share predicted (nine jobs in ten use no "
                                    "more at 0.9)", "Need quantile")
    margin_pct: float = bounded_field(0.0, "%", 0.0, 100.0, "GPUs kept above the prediction", "Safety margin")
    oom_at_fraction: float = bounded_field(0.5, "fraction", 0.01, 1.0, "of its run time at which a job given too "
                                           "little fails out of memory", "Out of memory at")
    classes: str = field(default=ALL_CLASSES, metadata={"help": "comma-separated workload classes it applies to",
                                                        "label": "Classes"})
    memory: bool = field(default=False, metadata={"help": "give jobs their predicted host memory too",
                                                  "label": "Right-size memory"})
    memory_quantile: float = bounded_field(0.9, "quantile", 0.05, 0.99, "of the used share of the memory asked "
                                           "for that is predicted", "Memory need quantile")
    memory_margin_pct: float = bounded_field(10.0, "%", 0.0, 100.0, "GiB kept above the memory prediction",
                                             "Memory safety margin")

    @property
    def class_set(self) -> frozenset[str]:
        return frozenset(c.strip() for c in self.classes.split(",") if c.strip())


def parse_rightsize(table: object, source: str) -> RightSize:
    """The [rightsize] table (defaults for missing keys); ScenarioError names the key and the problem."""
    table = dict(table) if isinstance(table, dict) else table
    classes = table.pop("classes", ALL_CLASSES) if isinstance(table, dict) else ALL_CLASSES
    values = declared(table, RightSize, source, "[rightsize]")
    if not isinstance(classes, str):
        raise ScenarioError(f"{source}: [rightsize] classes must be a comma-separated string, got {classes!r}")
    unknown = sorted({c.strip() for c in classes.split(",") if c.strip()} - set(WORKLOAD_CLASSES))
    if unknown:
        raise ScenarioError(f"{source}: [rightsize] classes {', '.join(unknown)} unknown; "
                            f"choose from {', '.join(WORKLOAD_CLASSES)}")
    return RightSize(**values, classes=classes)


def with_sizing(jobs: pd.DataFrame, start: pd.Timestamp | None, settings: RightSize, zones: dict | None,
                name: str) -> tuple[pd.DataFrame, pd.Timestamp | None]:
    """The jobs with `sized_gpus` when [rightsize] is on (and `sized_memory_gib` with `memory`), and the
    window start (set to the training cut when there was none). ScenarioError when there is too little
    measured history before the cut."""
    if not settings.enabled or not len(jobs):
        return jobs, start
    from engine.predict.size_source import NotEnoughMeasured, with_sized_gpus

    if start is None:
        start = pd.to_datetime(jobs["submit_utc"]).quantile(TRAIN_SHARE)
    try:
        jobs = with_sized_gpus(jobs, start, settings.quantile, settings.margin_pct, settings.class_set, zones or None,
                               settings.memory_quantile if settings.memory else None, settings.memory_margin_pct)
    except NotEnoughMeasured as exc:
        raise ScenarioError(f"{name}: [rightsize] {exc}; start the window later ([workload] start_utc)") from None
    return jobs, start
