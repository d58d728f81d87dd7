"""Timer passes: every `timer_s` seconds while jobs wait, every region with waiting jobs gets a
scheduling pass, so that time-dependent orders re-rank even when nothing arrives or ends.

One TIMER event is pending at a time, pushed after a batch while any queue holds a job. Timers stop
after IDLE_TIMERS batches in a row found nothing running and no other event to come (a pending
timer is one): only timers could still come, and the jobs still waiting never start (they stay
waiting).
"""
from __future__ import annotations

from engine.sim.processes.base import WorldProcess

TIMER = 2
IDLE_TIMERS = 100  # timer passes in a row with nothing running and nothing else to come before timers stop


class Timer(WorldProcess):
    kinds = (TIMER,)
    cause = "timer_s (a scheduling pass every timer_s seconds while jobs wait)"

    def __init__(self, events, queues: dict, running: dict, timer_s: float) -> None:
        """`queues`: region -> WaitingQueue; `running`: the run's job -> pods of the jobs running now."""
        self.events, self.queues, self.running, self.timer_s = events, queues, running, timer_s
        self.pending, self.idle = False, 0

    @classmethod
    def attach(cls, run) -> Timer | None:
        return cls(run.events, run.queues, run.pods, run.timer_s) if run.timer_s > 0 else None

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        self.pending = False
        return [r for r, q in self.queues.items() if q.count]

    def after_batch(self, now: float) -> None:
        self.idle = self.idle + 1 if not self.running and not len(self.events) else 0
        if not self.pending and self.idle <= IDLE_TIMERS and any(q.count for q in self.queues.values()):
            self.events.push(now + self.timer_s, TIMER, -1)
            self.pending = True
