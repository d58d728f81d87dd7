"""The registration table of world processes, and the hooks of one run's attached processes.

`PROCESSES` lists every world process class (engine.sim.processes.base.WorldProcess) in the order
the loop calls their hooks; a run attaches each (its `attach` may decline). Event kinds, in tie
order at equal times (the loop's own kinds are engine.sim.state.events'):

  2  TIMER         timer passes                     engine.sim.processes.timer
  6  SPOT          spot node interruptions          engine.sim.processes.spot
  7, 8             region outages start, end        engine.sim.processes.outage
  9  CLOCK         reclaim by the clock             engine.sim.processes.reclaim_clock
  10, 11, 12       burst node up, trigger, idle     engine.sim.processes.burst
  13 GIVEUP        users giving up                  engine.sim.cycle.patience (every run's)
  14 DATA_READY    prefetched input data arrived    engine.sim.processes.data_moves
  15, 16           forecast step, forecast node up  engine.sim.processes.forecast_scaling
  17, 18           working-day start, hand-off move engine.sim.processes.handoff
  19 CHAIN         a chain's stage handed over      engine.sim.processes.chains
  21 RESTORED      archived checkpoint restored     engine.sim.processes.archive
  23, 24           MIG GPU idle, MIG GPU whole      engine.sim.processes.partitions
  25 OOM           right-sized jobs out of memory   engine.sim.processes.oom_restarts

Chains (engine.sim.processes.chains) take arrivals before the holder and hear of finishes; the
load-shifting holder (engine.sim.processes.holder) takes arrivals (deferred arrivals are the
loop's), the fragmentation sampler (engine.sim.output.frag_sampler) samples before batches, the
interconnect (engine.sim.processes.interconnect) paces multi-node jobs as they start, the GPU partitions
(engine.sim.processes.partitions) place MIG instances, pace the jobs of shared GPUs and hear of releases; the
[experiments] report (engine.sim.processes.experiment_fill) only measures at the end; archived datasets
(engine.sim.processes.dataset_archive) hold arrivals from the loop's own arrival step and hear of releases.
A new process: its module, and a line here (or `register` from outside the engine, as a test does).
"""
from __future__ import annotations

import numpy as np

from engine.sim.output.frag_sampler import FragmentationSampler
from engine.sim.processes.archive import Archive
from engine.sim.processes.base import WorldProcess
from engine.sim.processes.burst import Bursts
from engine.sim.processes.chains import Chains
from engine.sim.processes.data_moves import DataMoves
from engine.sim.processes.dataset_archive import DatasetArchive
from engine.sim.processes.experiment_fill import ExperimentFill
from engine.sim.processes.forecast_scaling import ForecastScaling
from engine.sim.processes.handoff import Handoffs
from engine.sim.processes.holder import Holder
from engine.sim.processes.interconnect import Links
from engine.sim.processes.oom_restarts import OomRestarts
from engine.sim.processes.outage import Outages
from engine.sim.processes.partitions import GpuPartitions
from engine.sim.processes.reclaim_clock import ClockEdges
from engine.sim.processes.spot import SpotReclaimer
from engine.sim.processes.timer import Timer
from engine.sim.state.events import ARRIVAL, DEFERRED, FAILURE, FINISH, REPASS

LOOP_KINDS = (FINISH, FAILURE, DEFERRED, ARRIVAL, REPASS)

PROCESSES: list[type[WorldProcess]] = [Timer, Chains, Holder, SpotReclaimer, Outages, ClockEdges, Bursts, DataMoves,
                                       FragmentationSampler, Links, ForecastScaling, Handoffs, ExperimentFill, Archive,
                                       GpuPartitions, OomRestarts, DatasetArchive]


def register(process: type[WorldProcess]) -> None:
    """Add a world process class to the table (after the others); its kinds must be new."""
    taken = {k: p.__name__ for p in PROCESSES for k in p.kinds} | dict.fromkeys(LOOP_KINDS, "the loop")
    for kind in process.kinds:
        if kind in taken:
            raise ValueError(f"{process.__name__}: event kind {kind} is {taken[kind]}'s")
    PROCESSES.append(process)


def unregister(process: type[WorldProcess]) -> None:
    PROCESSES.remove(process)


def _overrides(process: WorldProcess, hook: str) -> bool:
    return getattr(type(process), hook) is not getattr(WorldProcess, hook)


class Attached:
    """The processes one run attached, and for each hook the bound methods of those that override it."""

    def __init__(self, processes: list[WorldProcess], classes: list[type[WorldProcess]]) -> None:
        self.processes, self.classes = processes, classes
        self.handler = {kind: p.on_event for p in processes for kind in p.kinds}
        hooks = {hook: [getattr(p, hook) for p in processes if _overrides(p, hook)]
                 for hook in ("on_arrival", "on_start", "on_release", "on_finish", "before_batch", "after_pass",
                              "after_batch", "holds", "finish")}
        self.on_arrival, self.on_start, self.on_finish = hooks["on_arrival"], hooks["on_start"], hooks["on_finish"]
        self.on_release = hooks["on_release"]
        self.before_batch = hooks["before_batch"]
        self.after_pass, self.after_batch = hooks["after_pass"], hooks["after_batch"]
        self.holds, self.finish = hooks["holds"], hooks["finish"]

    def job_columns(self, n: int) -> dict:
        """Every registered class's per-job columns, in table order (zeros where a run did not attach it),
        then the attached processes' `attached_columns` and those of their `optional_columns` they gave."""
        attached = {type(p): p.columns() for p in self.processes}
        columns = {name: attached[cls][name] if cls in attached else np.zeros(n, dtype)
                   for cls in self.classes for name, dtype in cls.job_columns.items()}
        return columns | {name: attached[cls][name] for cls in self.classes if cls in attached
                          for name in (*cls.attached_columns, *cls.optional_columns) if name in attached[cls]}

    def result(self) -> dict[str, object]:
        """Every registered class's SimulationResult fields (None where a run did not attach it)."""
        fields = {name: None for cls in self.classes for name in cls.result_fields}
        for p in self.processes:
            fields.update(p.result())
        return fields


def fleet_rows(fleet, world) -> list:
    """The nodes the registered processes add to the fleet (frames; none when no process adds any)."""
    return [rows for cls in PROCESSES if (rows := cls.fleet_rows(fleet, world)) is not None]


def attach(run, first: list[WorldProcess]) -> Attached:
    """Attach every registered process to `run` after `first` (the run's own: its patience)."""
    classes = [type(p) for p in first] + list(PROCESSES)
    run.events.background_kinds = frozenset(kind for cls in classes for kind in cls.background)  # before any push
    return Attached(first + [p for cls in PROCESSES if (p := cls.attach(run)) is not None], classes)
