"""A scenario's [handoff] table: live follow-the-sun, running work handed over as the day passes.

    [handoff]
    enabled = true              # off by default: work stays where it was routed at submit
    checkpoint_min = 10         # writing the checkpoint: the job holds its GPUs and makes no progress
    checkpoint_gb_per_gpu = 16  # the checkpoint's size per GPU the job holds (weights + optimizer state)
    transfer_gbps = 0           # the link the checkpoint crosses; 0: the [data] table's transfer_gbps
                                # (0 there too: the checkpoint moves instantly)
    restart_min = 5             # loading the checkpoint at the destination: run on its GPUs, no progress
    min_run_h = 4               # a job runs this long in a region (since it started or restarted there)
                                # before it may be moved again
    min_left_h = 2              # only long-running work: at least this much of its request left
    recheck_h = 0               # look again during the working day's first hours (0: at its start only)
    recheck_every_min = 60      # how often within those hours

Semantics (engine.sim.processes.handoff). When a region's working day begins (its calendar:
engine.world.facts.region_calendar, its country's working week and holidays unless [[region]]
overrides them) and work of its own teams (jobs whose home is the region) waits there for a GPU
pool the region has too little free of, the region hands over borrowed work: running flexible jobs
(training, batch, HPO) whose home is elsewhere, that have run at least `min_run_h` there and have at
least `min_left_h` of their request left, largest first, until the pool's shortfall is covered.
Each goes to a region that is off-hours now, whose fleet could hold it and has room for it now,
that its residency allows (never a region its data may not go to): its home first (the reverse
hand-off: work goes back as its own region's day ends), else the one with the most room, then the
lowest index. The move costs `checkpoint_min` (the job keeps its GPUs), then `checkpoint_gb_per_gpu`
x GPUs x 8 / `transfer_gbps` seconds in transit (no GPUs held), then `restart_min` of running at the
destination before it progresses again. With `recheck_h` > 0 the region looks again every
`recheck_every_min` for the first `recheck_h` hours of its working day (at the day's start + k x
`recheck_every_min` while that is within `recheck_h` and the day's calendar is still at work: at most
`recheck_h` x 60 / `recheck_every_min` looks a day), since its backlog may build after 9:00; a move
decided at a re-check has the reason "working-day-recheck". Under the scenario's `calendar = "team"`
(engine.world.team_hours) the day starts are each home team's: when a team homed in the region begins its
day, the shortfall of that team's waiting work triggers the hand-over, and a destination is off-hours
when no team homed there is at work. Every number has a unit and a range (the fields' metadata).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.core.bounds import bounded_field
from engine.scenario.checks import declared


@dataclass(frozen=True)
class Handoff:
    """The [handoff] table's values (the module docstring explains each); the fields' metadata gives
    their unit, range, help and label (the scenario builder draws its widgets from them)."""

    enabled: bool = field(default=False, metadata={
        "help": "running flexible work borrowed from other regions moves on as a region's working day begins",
        "label": "Hand running work over"})
    checkpoint_min: float = bounded_field(10.0, "min", 0.0, 1440.0, "writing the checkpoint (GPUs held, no progress)",
                                          "Checkpoint time")
    checkpoint_gb_per_gpu: float = bounded_field(16.0, "GB per GPU", 0.0, 1e5, "the checkpoint's size per GPU held",
                                                 "Checkpoint size")
    transfer_gbps: float = bounded_field(0.0, "Gbit/s", 0.0, 1e6, "the link the checkpoint crosses (0: the [data] "
                                         "table's bandwidth)", "Checkpoint link")
    restart_min: float = bounded_field(5.0, "min", 0.0, 1440.0, "loading the checkpoint at the destination",
                                       "Restart time")
    min_run_h: float = bounded_field(4.0, "h", 0.0, 1e4, "a job runs this long in a region before it moves again",
                                     "Minimum run between moves")
    min_left_h: float = bounded_field(2.0, "h", 0.0, 1e4, "only jobs with at least this much of their request left",
                                      "Smallest request left")
    recheck_h: float = bounded_field(0.0, "h", 0.0, 24.0, "look again during the working day's first hours "
                                     "(0: at its start only)", "Re-check window")
    recheck_every_min: float = bounded_field(60.0, "min", 5.0, 1440.0, "how often to look again within the "
                                             "re-check window", "Re-check interval")

    def link_gbps(self, data_gbps: float) -> float:
        """The checkpoint's bandwidth: this table's, else the [data] table's (0: instant)."""
        return self.transfer_gbps if self.transfer_gbps > 0 else float(data_gbps)


def parse_handoff(table: object, source: str) -> Handoff:
    """The [handoff] table (defaults for missing keys)."""
    return Handoff(**declared(table, Handoff, source, "[handoff]"))
