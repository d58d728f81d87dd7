"""WaitingQueue (engine.sim.state.queue): its keys, head and count follow the jobs waiting now under any
sequence of adds and removes (keys re-added, added out of order, the queue emptied and refilled)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sim.state.queue import WaitingQueue

SIZE = 40
steps = st.lists(st.tuples(st.sampled_from(["add", "remove", "remove_many", "keys"]), st.integers(0, SIZE - 1)),
                 max_size=120)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_keys_are_the_waiting_keys_ascending_after_any_adds_and_removes(ops):
    queue, waiting = WaitingQueue(SIZE), set()
    for op, key in ops:
        if op == "add" and key not in waiting:
            queue.add(key)
            waiting.add(key)
        elif op == "remove" and waiting:
            taken = min(waiting, key=lambda k: (k - key) % SIZE)  # the next waiting key from `key` on
            queue.remove(taken)
            waiting.discard(taken)
        elif op == "remove_many" and waiting:
            taken = sorted(waiting)[key % len(waiting):][:3]
            queue.remove_many(np.array(taken[::-1], np.int64))
            waiting -= set(taken)
        elif op == "keys":
            keys = queue.keys()
            assert keys.dtype == np.int64 and keys.tolist() == sorted(waiting)
        assert len(queue) == len(waiting)
        assert queue.lo == (min(waiting) if waiting else SIZE)
    assert queue.keys().tolist() == sorted(waiting)


def test_keys_added_in_order_after_the_last_call_are_appended_and_removed_ones_dropped():
    queue = WaitingQueue(10)
    for key in (2, 5):
        queue.add(key)
    assert queue.keys().tolist() == [2, 5]
    queue.remove(2)
    for key in (7, 9, 2):
        queue.add(key)
    assert queue.keys().tolist() == [2, 5, 7, 9]
    queue.remove(9)
    queue.remove(5)
    queue.add(5)
    assert queue.keys().tolist() == [2, 5, 7]
