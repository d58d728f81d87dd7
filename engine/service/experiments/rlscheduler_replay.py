"""One RLScheduler job sequence replayed with the published code's event handling.

The cluster is a count of identical free nodes; a job holds `nodes` of them from its start until
start + run. The replay follows RLScheduler (Zhang et al., SC'20) step by step:

1. The queue starts with the first job, the clock at its submit time, the cluster empty.
2. The queue-order policy picks a job. The pick is final: it is not re-picked when a better job
   arrives.
3. While the picked job does not fit, the backfill mode may start other jobs, then the clock moves
   by ONE event: the next arrival joins the queue if it is submitted no later than the next
   completion, otherwise one running job completes. Arrivals join only while time advances.
4. The picked job starts; if the queue is not empty, go to 2 at the same time.
5. With the queue empty: stop when no arrival is left, otherwise advance one event at a time
   until a job arrives, and go to 2.

Ties: equal completion times complete in the order of the published code's running list (start
order, reordered by requested end whenever `reorder_running_by_requested_end` is called).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from engine.core.traits import traits_of
from engine.core.views import QueueView


@dataclass(frozen=True)
class Sequence:
    """The jobs of one replay, in submit order, with the cluster they run on. Times in seconds."""

    submit_s: np.ndarray
    run_s: np.ndarray
    requested_s: np.ndarray
    procs: np.ndarray
    nodes: np.ndarray          # int64 whole nodes per job
    cluster_nodes: int
    procs_per_node: float

    def __len__(self) -> int:
        return len(self.submit_s)

    def view(self) -> QueueView:
        return QueueView.of(self.submit_s, self.requested_s, self.procs)


class JobQueue:
    """The waiting jobs and the order policy that ranks them.

    With `authors_ties` the queue is the published code's list: each pick stable-sorts it by
    the policy's keys and each FCFS scan stable-sorts it by submit time, so ties fall to the
    list's current order. Otherwise ties fall to the job index. Keys that do not depend on the
    clock are computed once; `fixed_now_s`, when set, is the clock every key is computed at (the
    published code's WFP3/UNICEP quirk uses -1).
    """

    def __init__(self, sequence: Sequence, policy, *, authors_ties: bool, fixed_now_s: float | None = None):
        self._view = sequence.view()
        self._submit = sequence.submit_s
        self._policy = policy
        self._authors_ties = authors_ties
        self._buffer = np.empty(len(sequence), dtype=np.int64)   # members in list order, then spare room
        self._count = 0
        self._slot = np.empty(len(sequence), dtype=np.int64)     # position -> index in _buffer (no authors' ties)
        self._fcfs_sort_due = False
        self._keys = None
        self._rank = None
        if fixed_now_s is not None or not traits_of(policy).time_dependent:
            self._keys = policy.keys(self._view, -1.0 if fixed_now_s is None else fixed_now_s)
            self._rank = np.empty(len(sequence), dtype=np.int64)
            self._rank[np.lexsort((self._view.index, *self._keys[::-1]))] = np.arange(len(sequence))

    @property
    def members(self) -> np.ndarray:
        """Positions of the waiting jobs, in list order (a view: copy it to keep it)."""
        return self._buffer[:self._count]

    def __len__(self) -> int:
        return self._count

    def add(self, position: int) -> None:
        self._buffer[self._count] = position
        self._slot[position] = self._count
        self._count += 1

    def remove(self, position: int) -> None:
        """Remove a waiting job: keeping the list order with authors' ties, else swapping in the last."""
        self._count -= 1
        if self._authors_ties:
            members = self._buffer[:self._count + 1]
            i = int(np.flatnonzero(members == position)[0])
            members[i:-1] = members[i + 1:]
            return
        i, last = self._slot[position], self._buffer[self._count]
        self._buffer[i] = last
        self._slot[last] = i

    def pick(self, now_s: float) -> int:
        """The job the policy puts first."""
        members = self.members
        if self._authors_ties:
            self._apply_due_sort()
            keys = self._keys[:, members] if self._keys is not None else self._dynamic_keys(now_s)
            members[:] = members[np.lexsort(keys[::-1])]
            return int(members[0])
        if self._rank is not None:
            return int(members[np.argmin(self._rank[members])])
        return int(self.policy_order(now_s)[0])

    def policy_order(self, now_s: float) -> np.ndarray:
        """Waiting jobs in the policy's order, ties by index."""
        members = self.members
        if self._rank is not None:
            return members[np.argsort(self._rank[members])]
        keys = self._dynamic_keys(now_s)
        return members[np.lexsort((members, *keys[::-1]))]

    def fcfs_order(self) -> np.ndarray:
        """Waiting jobs by submit time; ties keep the list order (authors) or go by index."""
        members = self.members
        if self._authors_ties:
            self._apply_due_sort()
            return members.copy()
        return members[np.lexsort((members, self._submit[members]))]

    def sort_by_submit_later(self) -> None:
        """The published code's in-place stable sort by submit, applied when the order is next read.

        Deferring is exact: a stable sort of (sorted list + new arrivals) equals a stable sort of
        (list + new arrivals), and removals keep the relative order.
        """
        self._fcfs_sort_due = self._authors_ties

    def _apply_due_sort(self) -> None:
        if self._fcfs_sort_due:
            members = self.members
            members[:] = members[np.argsort(self._submit[members], kind="stable")]
            self._fcfs_sort_due = False

    def _dynamic_keys(self, now_s: float) -> np.ndarray:
        return self._policy.keys(self._view.take(self.members), now_s)


class Replay:
    """Clock, free nodes, arrivals, running jobs and start times of one replay (steps 1, 3 and 5)."""

    def __init__(self, sequence: Sequence, queue: JobQueue):
        n = len(sequence)
        self.sequence = sequence
        self.queue = queue
        self.now_s = float(sequence.submit_s[0])
        self.free_nodes = sequence.cluster_nodes
        self.next_arrival = 1
        self.start_s = np.full(n, np.nan)
        # Python lists: the event loop reads single values, where lists beat numpy scalars.
        self._submit, self._run, self._nodes = (sequence.submit_s.tolist(), sequence.run_s.tolist(),
                                                sequence.nodes.tolist())
        self._running: list[tuple[float, int, int]] = []   # heap of (end_s, list order, position)
        self._running_buffer = np.empty(n, dtype=np.int64)  # running positions, any order
        self._running_count = 0
        self._slot = np.empty(n, dtype=np.int64)            # position -> index in _running_buffer
        self._list_order = np.zeros(n, dtype=np.int64)
        self._order = 0
        self._by_size: list[tuple[int, int]] = []           # heap of (nodes, position); started ones linger
        self._started = [False] * n
        self._enqueue(0)

    def _enqueue(self, position: int) -> None:
        self.queue.add(position)
        heapq.heappush(self._by_size, (self._nodes[position], position))

    def smallest_waiting(self, excluding: int) -> float:
        """The fewest nodes any waiting job other than `excluding` needs (inf when there is none)."""
        heap = self._by_size
        while heap and self._started[heap[0][1]]:
            heapq.heappop(heap)
        if not heap:
            return np.inf
        if heap[0][1] != excluding:
            return heap[0][0]
        top = heapq.heappop(heap)
        smallest = self.smallest_waiting(excluding)
        heapq.heappush(heap, top)
        return smallest

    def fits(self, position: int) -> bool:
        return self._nodes[position] <= self.free_nodes

    def start(self, position: int) -> None:
        """Start a waiting job now; never over-allocates."""
        need = self._nodes[position]
        if need > self.free_nodes:
            raise AssertionError(f"job {position} needs {need} nodes, {self.free_nodes} free")
        self.queue.remove(position)
        self.start_s[position] = self.now_s
        self._started[position] = True
        self.free_nodes -= need
        heapq.heappush(self._running, (self.now_s + self._run[position], self._order, position))
        self._list_order[position] = self._order
        self._order += 1
        self._slot[position] = self._running_count
        self._running_buffer[self._running_count] = position
        self._running_count += 1

    def advance(self) -> None:
        """Process exactly one event: an arrival, or else one completion."""
        next_end_s = self._running[0][0] if self._running else np.inf
        if self.next_arrival < len(self._submit) and self._submit[self.next_arrival] <= next_end_s:
            self.now_s = max(self.now_s, self._submit[self.next_arrival])
            self._enqueue(self.next_arrival)
            self.next_arrival += 1
        elif self._running:
            end_s, _, position = heapq.heappop(self._running)
            self.now_s = max(self.now_s, end_s)
            self.free_nodes += self._nodes[position]
            slot, last = self._slot[position], self._running_buffer[self._running_count - 1]
            self._running_buffer[slot] = last
            self._slot[last] = slot
            self._running_count -= 1
        else:
            raise AssertionError("advance() with nothing running and nothing left to arrive")

    def running(self) -> tuple[np.ndarray, np.ndarray]:
        """(positions, requested end times in s) of the running jobs, by requested end."""
        positions = self._running_buffer[:self._running_count]
        requested_end_s = self.start_s[positions] + self.sequence.requested_s[positions]
        order = np.argsort(requested_end_s)
        return positions[order], requested_end_s[order]

    def reorder_running_by_requested_end(self) -> None:
        """Renumber the running list as the published code's stable sort by requested end does."""
        positions = self._running_buffer[:self._running_count]
        requested_end_s = self.start_s[positions] + self.sequence.requested_s[positions]
        ordered = positions[np.lexsort((self._list_order[positions], requested_end_s))]
        self._list_order[ordered] = np.arange(self._order, self._order + len(ordered))
        self._order += len(ordered)
        self._running = [(end_s, int(self._list_order[p]), p) for end_s, _, p in self._running]
        heapq.heapify(self._running)


def commit(state: Replay, picked: int, wait_for) -> bool:
    """Steps 3-5 for a picked job: wait until it fits (`wait_for(replay, picked)`), start it, and
    with the queue empty advance to the next arrival; True when the sequence is over."""
    if not state.fits(picked):
        wait_for(state, picked)
    state.start(picked)
    if len(state.queue):
        return False
    if state.next_arrival >= len(state.sequence):
        return True
    while not len(state.queue):
        state.advance()
    return False


def replay(sequence: Sequence, queue: JobQueue, wait_for) -> Replay:
    """Run steps 1-5 with the queue's policy picking (step 2)."""
    state = Replay(sequence, queue)
    while not commit(state, queue.pick(state.now_s), wait_for):
        pass
    return state
