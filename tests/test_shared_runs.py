"""engine.service.shared_runs: identical runs computed once across threads, at most `slots` at a time, each
waiting caller told its place in the queue."""
import threading
import time

import pytest

from engine.service.shared_runs import Place, SharedRuns


def _threads(targets) -> list:
    results = [None] * len(targets)

    def call(i, target):
        try:
            results[i] = target()
        except Exception as exc:
            results[i] = exc
    threads = [threading.Thread(target=call, args=(i, t)) for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_concurrent_callers_of_one_key_share_one_computation():
    runs, calls, waiters, told = SharedRuns(slots=2, poll_s=0.02), [], set(), []

    def compute():   # runs until the 7 other callers are all waiting for it
        calls.append(1)
        deadline = time.monotonic() + 20
        while len(waiters) < 7 and time.monotonic() < deadline:
            time.sleep(0.01)
        return {"answer": 42}

    def waiting(place):
        waiters.add(threading.get_ident())
        told.append(place)
    results = _threads([lambda: runs.run("same", compute, waiting) for _ in range(8)])
    assert len(calls) == 1 and runs.computed == 1 and len(waiters) == 7
    assert all(r is results[0] for r in results) and results[0] == {"answer": 42}
    assert set(told) == {Place(0, 1)}   # each was told the run was under way
    assert runs.run("same", compute) is results[0] and len(calls) == 1   # kept afterwards


def test_at_most_slots_run_at_once_and_the_queue_places_are_told():
    runs, gate = SharedRuns(slots=1, poll_s=0.02), threading.Event()
    running, peak, lock = [0], [0], threading.Lock()

    def compute(name):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        gate.wait(10)
        with lock:
            running[0] -= 1
        return name
    first = threading.Thread(target=runs.run, args=("a", lambda: compute("a")))
    first.start()
    while runs.place("a") != Place(0, 1):
        time.sleep(0.005)
    told: dict[str, list[Place]] = {"b": [], "c": []}
    second = threading.Thread(target=runs.run, args=("b", lambda: compute("b"), told["b"].append))
    second.start()
    while runs.place("b") is None:
        time.sleep(0.005)
    third = threading.Thread(target=runs.run, args=("c", lambda: compute("c"), told["c"].append))
    third.start()
    while not told["c"]:
        time.sleep(0.005)
    assert runs.place("b") == Place(1, 1) and runs.place("c") == Place(2, 1)
    assert told["c"][0].describe() == "Queued: 2nd in line, 2 runs ahead..."
    gate.set()
    for thread in (first, second, third):
        thread.join(timeout=30)
    assert peak[0] == 1 and runs.computed == 3
    assert Place(1, 1) in told["b"]


def test_an_error_reaches_every_waiter_and_is_not_kept():
    runs, calls, waiters = SharedRuns(slots=2, poll_s=0.02), [], set()

    def failing():   # fails once the 3 other callers are waiting for it
        calls.append(1)
        deadline = time.monotonic() + 20
        while len(waiters) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        raise ValueError("no jobs in the window")
    results = _threads([lambda: runs.run("bad", failing, lambda _: waiters.add(threading.get_ident()))
                        for _ in range(4)])
    assert len(calls) == 1 and all(isinstance(r, ValueError) for r in results)
    with pytest.raises(ValueError):
        runs.run("bad", failing)
    assert len(calls) == 2 and runs.computed == 0


def test_a_stopped_computation_is_taken_over_by_a_waiting_caller():
    runs, started = SharedRuns(slots=1, poll_s=0.02), threading.Event()

    class Stopped(BaseException):
        pass

    def stopped():
        started.set()
        time.sleep(0.3)   # the caller below is waiting for this computation when it stops
        raise Stopped

    def owner():
        try:
            runs.run("k", stopped)
        except Stopped:
            return "stopped"
    first = threading.Thread(target=owner)
    first.start()
    started.wait(10)
    assert runs.place("k") == Place(0, 1)
    assert runs.run("k", lambda: "done") == "done"
    first.join(timeout=10)
    assert runs.computed == 1


def test_the_oldest_result_is_dropped_past_the_size():
    runs = SharedRuns(slots=1, size=2)
    for key in "abc":
        runs.run(key, lambda key=key: key)
    calls = []
    runs.run("a", lambda: calls.append("a"))
    assert calls == ["a"] and runs.run("c", lambda: calls.append("c")) == "c"
