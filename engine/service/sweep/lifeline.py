"""Worker processes that die with the process that started them.

A pool's workers are not the main process's children (a forkserver forks them) and block in their
task, so killing the main process (kill -9, an out-of-memory kill) used to leave them computing
points nobody would read. Each worker watches the main process instead: `watch(parent())`, called in
the worker's initializer, starts a daemon thread that checks every `interval_s` whether the process
that created the pool is still the same process (its pid, and on Linux its start time, so that a
reused pid does not count) and ends the worker with exit code `ORPHANED` when it is not. Checking
costs a few microseconds a second; a worker outlives its parent by at most `interval_s` plus the
time the simulation holds the interpreter's lock in one C call (well under a second).
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

ORPHANED = 70          # a worker's exit code when its parent is gone (EX_SOFTWARE)
INTERVAL_S = 0.5


@dataclass(frozen=True)
class Parent:
    """The process to outlive no longer: its pid and its start time (clock ticks since boot; None where
    /proc is not available)."""

    pid: int
    started: str | None


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (the process's start time), None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()   # the command name (field 2) may hold spaces
    return fields[19] if len(fields) > 19 else None


def parent() -> Parent:
    """This process, as its workers should see it."""
    pid = os.getpid()
    return Parent(pid, _start_time(pid))


def alive(who: Parent) -> bool:
    """Whether `who` still runs (and is not a new process with the same pid)."""
    try:
        os.kill(who.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass    # it exists, under another user: a reused pid
    if who.started is None:
        return True
    return _start_time(who.pid) == who.started


def watch(who: Parent, interval_s: float = INTERVAL_S) -> threading.Thread:
    """Start the daemon thread that ends this process (os._exit(ORPHANED)) once `who` is gone."""
    def loop() -> None:
        while alive(who):
            time.sleep(interval_s)
        os._exit(ORPHANED)

    thread = threading.Thread(target=loop, name="meridian-lifeline", daemon=True)
    thread.start()
    return thread
