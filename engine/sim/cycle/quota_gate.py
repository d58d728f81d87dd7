"""Quota gate: holds back jobs whose start would take their team or queue past its quota.

Per region, the quota policy's `QuotaBook` (engine.policies.quota) gives every holder a nominal
quota, a borrowing limit, a lending limit, a cohort and a cap, in GPUs. With u the GPUs holders
hold now (engine.sim.state.ledger) and G = nominal - lending limit the guaranteed, unlent part, a job of
holder h asking for g GPUs may start when:
  u_h + g <= cap_h                                         (else "blocked-by-team-limit")
  u_h + g <= nominal_h + borrowing limit_h, and
  sum over h's cohort of max(0, u_k - G_k), with u_h + g for h, <= sum over the cohort of lending
  limits                                                   (else "blocked-by-quota").
When only the cohort sum fails and u_h + g <= nominal_h, others are using what h lent: the gate
answers RECLAIM, and a preemption policy with `reclaim` may evict borrowers.
A holder whose entry has `reclaim_at_work_start` (`clocked`) lends nothing while it is at work:
`withhold` sets its lending limit to 0 (G_h = nominal_h) for the working day and `lend` restores
the book's afterwards; `excess` is then what its cohort's borrowers hold beyond the lending pool
left, the GPUs a reclaim must free.

A job asking for more than its holder can ever hold (more than cap_h, nominal_h + borrowing
limit_h, or G_h + its cohort's lending limits, from the book) never passes: the simulator turns it
away at arrival, "exceeds-quota" (Kueue's inadmissible workload), instead of parking it where it
would hold back its holder's later jobs for good.
A held-back job is parked: out of its region's queue, so it does not block the jobs behind it
(Kueue's BestEffortFIFO). When a job of the region stops holding GPUs, each holder's parked jobs
that fit its headroom return to the queue, in queue order (lowest queue key first: the rank under
a time-independent order, else the submit order). One too large for the headroom left stays parked
and does not hold back a smaller one behind it (as a newer arrival of that size would pass the
gate too). A pass re-checks them. Parked jobs are kept per holder and size, so a return looks at
the first job of each size only.
Jobs of guaranteed queues are not gated (they run on guaranteed capacity).
"""
from __future__ import annotations

import heapq

import numpy as np

from engine.core.reasons import QUOTA, TEAM_LIMIT

OK, RECLAIM = 0, -1
ROUNDING = 2.3e-16  # over 2^-53: a bound on the relative error of one float addition or subtraction
SLACK_MAX = 1e-10  # a cohort sum kept up to date by `moved` is summed anew past this rounding bound (far
# below the gate's 1e-9, so that a pool left at exactly 0 is still told apart without `_pool_left`)
# engine.sim.cycle.quota_kernels, imported with the first exact pool: numba costs a process about 0.2 s, which runs
# without quotas need not pay
kernels = None


class QuotaGate:
    """Quota books and parked jobs of one run."""

    def __init__(self, policy, holder: np.ndarray, holders: tuple[str, ...], weights: np.ndarray,
                 regions: list, entries: dict) -> None:
        """`holder[j]`: job j's holder code; `entries[region name]`: {holder: QuotaEntry}."""
        self.holder = holder.tolist()
        self.holders = holders
        self.books = [policy.book(holders, weights, f.capacity_gpus, entries.get(name, {}))
                      for name, f in regions]
        self.lending = [book.lend.copy() for book in self.books]  # lending limits now (withheld: 0)
        index = {h: i for i, h in enumerate(holders)}
        self.clocked = [(r, index[e.holder], e.reclaim_lead_min * 60.0)
                        for r, (name, _) in enumerate(regions) if self.books[r].quotas
                        for e in entries.get(name, {}).values() if e.reclaim_at_work_start and e.holder in index]
        self.parked: list[dict[int, dict[float, list]]] = [{} for _ in regions]  # region, holder, GPUs: (key, j)
        self.count = [0] * len(regions)
        # Python copies of the books for the scalar checks at every start (cheaper than numpy scalars)
        self.limits = [(book.cap.tolist(), book.nominal.tolist(), (book.nominal + book.borrow).tolist())
                       for book in self.books]
        self.members = [[np.flatnonzero(book.cohort == c) for c in book.cohort.tolist()] for book in self.books]
        self.cohorts = [[members.tolist() for members in region] for region in self.members]
        self.cohort_of = [_dense(book.cohort.tolist()) for book in self.books]  # per holder, cohorts numbered 0, 1, ...
        self.groups = [[cohorts[of.index(c)] for c in range(len(set(of)))]  # per cohort number: its holders
                       for cohorts, of in zip(self.cohorts, self.cohort_of)]
        self.most = [_most(book) for book in self.books]
        self.above = [book.nominal + 1e-9 for book in self.books]  # borrowing: usage above this
        self.above_list = [above.tolist() for above in self.above]
        self.pools: list = [None] * len(regions)
        self.taken: list = [None] * len(regions)  # per region: see `_taken` (None: to build when read)
        for r in range(len(regions)):
            self._lending_changed(r)

    def check(self, usage: list[float], region: int, j: int, gpus: float) -> int:
        """OK, RECLAIM, or the reason code (QUOTA, TEAM_LIMIT) for job j of `gpus` in `region`;
        `usage`: GPUs held now per holder in `region`."""
        if gpus <= 0:
            return OK
        cap, nominal, ceiling = self.limits[region]
        h = self.holder[j]
        after = usage[h] + gpus
        if after > cap[h] + 1e-9:
            return TEAM_LIMIT
        if not self.books[region].quotas:
            return OK
        if after > ceiling[h] + 1e-9:
            return QUOTA
        if self._pool_left_near(region, usage, h, gpus) >= -1e-9:
            return OK
        return RECLAIM if after <= nominal[h] + 1e-9 else QUOTA

    def exceeds(self, region: int, j: int, gpus: float) -> bool:
        """Whether job j asks for more GPUs than its holder can ever hold in `region`."""
        return gpus > self.most[region][self.holder[j]] + 1e-9

    def moved(self, region: int, h: int, usage: list[float]) -> None:
        """Holder h's usage in `region` changed (a start or a stop): its term of `_taken` and its
        cohort's sum, with that sum's rounding bound; rebuilt when the bound passes SLACK_MAX."""
        taken = self.taken[region]
        if taken is None:
            return
        excess, sums, slack = taken
        new = max(usage[h] - self.pools[region][1][h], 0.0)
        old = excess[h]
        if new == old:
            return
        c = self.cohort_of[region][h]
        less = sums[c] - old
        excess[h], sums[c] = new, less + new
        slack[c] += ROUNDING * (abs(less) + abs(sums[c]))
        if slack[c] > SLACK_MAX:
            self.taken[region] = None

    def _pool_left_near(self, region: int, usage: list[float], h: int, gpus: float) -> float:
        """`_pool_left` from h's cohort sum (`_taken`) with h's own term swapped for its term after
        the start: other roundings than numpy's. The sum is within its slack of the exact sum of the
        terms; the rest differs from `_pool_left` by less than (k + 6) eps M, k the cohort's size,
        M = lent + the sum + h's new term + 1 (every term >= 0). So when this figure is further than
        the slack + 2e-15 (k + 2) M from the gate's -1e-9 threshold the verdict is the same; nearer,
        it is `_pool_left` itself."""
        lent, guaranteed, _ = self.pools[region]
        taken = self.taken[region]
        if taken is None:
            taken = self.taken[region] = self._taken(region, usage)
        excess, sums, slack = taken
        c = self.cohort_of[region][h]
        own = max(usage[h] + gpus - guaranteed[h], 0.0)
        left = lent[h] - (sums[c] - excess[h] + own)
        size = len(self.cohorts[region][h])
        if abs(left + 1e-9) > slack[c] + 2e-15 * (size + 2) * (abs(lent[h]) + sums[c] + own + 1.0):
            return left
        return self._pool_left(region, usage, h, gpus)

    def _taken(self, region: int, usage: list[float]) -> tuple[list[float], list[float], list[float]]:
        """Per holder of `region`, what it uses beyond its guaranteed part (its term); per cohort,
        the sum of its members' terms and a bound on that sum's rounding error (its slack). Kept
        up to date by `moved` until the lending moves."""
        guaranteed = self.pools[region][1]
        excess = [max(u - g, 0.0) for u, g in zip(usage, guaranteed)]
        sums = [sum([excess[k] for k in members]) for members in self.groups[region]]
        slack = [ROUNDING * len(members) * total for members, total in zip(self.groups[region], sums)]
        return excess, sums, slack

    def _lending_changed(self, region: int) -> None:
        """Recompute the region's Python figures of the lending pool: per holder, its cohort's
        lending limits summed (numpy's sum, as `_pool_left`), and each holder's guaranteed part."""
        book, lend = self.books[region], self.lending[region]
        lent = [float(lend[members].sum()) for members in self.cohorts[region]]
        guaranteed = book.nominal - lend
        self.pools[region] = (lent, guaranteed.tolist(), guaranteed)
        self.taken[region] = None

    def _pool_left(self, region: int, usage: list[float], h: int, gpus: float) -> float:
        """The lending pool of h's cohort left after h takes `gpus` more: its lending limits summed
        less what its members use beyond their guaranteed parts, in numpy's roundings."""
        global kernels
        if kernels is None:
            from engine.sim.cycle import quota_kernels as kernels
        lent, _, guaranteed = self.pools[region]
        return kernels.pool_left(np.array(usage, np.float64), self.members[region][h], guaranteed, h, float(gpus),
                                 lent[h])

    def withhold(self, region: int, h: int) -> None:
        """Holder h lends nothing in `region` from now (its working day)."""
        self.lending[region][h] = 0.0
        self._lending_changed(region)

    def lend(self, region: int, h: int) -> None:
        """Holder h lends its book's lending limit in `region` again (off work)."""
        self.lending[region][h] = self.books[region].lend[h]
        self._lending_changed(region)

    def excess(self, usage: list[float], region: int, h: int) -> float:
        """GPUs h's cohort uses beyond its lending pool now (0: h can take its whole nominal quota)."""
        return max(-self._pool_left(region, usage, h, 0.0), 0.0)

    def headroom(self, usage: list[float], region: int, h: int, reclaim: bool) -> float:
        """GPUs holder h could still take in `region` (what may pass the gate now)."""
        cap, nominal, ceiling = self.limits[region]
        u = usage[h]
        room = min(cap[h] - u, ceiling[h] - u)
        if not self.books[region].quotas:
            return room
        pool = max(self.pools[region][1][h] - u, 0.0) + self._pool_left(region, usage, h, 0.0)
        if reclaim:
            pool = max(pool, nominal[h] - u)
        return min(room, pool)

    def borrowing(self, usage: list[float], region: int) -> np.ndarray:
        """Per holder: holds more than its nominal quota in `region` (bool)."""
        return np.array(usage, np.float64) > self.above[region]

    def borrows(self, usage: list[float], region: int, holder: int) -> bool:
        """`borrowing` of one holder, without the array."""
        return usage[holder] > self.above_list[region][holder]

    def park(self, region: int, j: int, key: int, gpus: float) -> None:
        """Park job j (queue key `key`, asking `gpus`) until its holder has room."""
        heapq.heappush(self.parked[region].setdefault(self.holder[j], {}).setdefault(gpus, []), (key, j))
        self.count[region] += 1

    def withdraw(self, region: int, j: int) -> None:
        """Take parked job j out of the gate (its user gave up, engine.sim.cycle.patience)."""
        sizes = self.parked[region].get(self.holder[j], {})
        for gpus, heap in list(sizes.items()):
            kept = [entry for entry in heap if entry[1] != j]
            if len(kept) != len(heap):
                heapq.heapify(kept)
                if kept:
                    sizes[gpus] = kept
                else:
                    del sizes[gpus]
                self.count[region] -= 1
                return

    def release(self, usage: list[float], region: int, reclaim: bool) -> list[int]:
        """The parked jobs of `region` to put back in the queue now: per holder, the one with the
        lowest queue key that fits the headroom left, again and again."""
        back = []
        for h, sizes in self.parked[region].items():
            if not sizes:
                continue
            room = self.headroom(usage, region, h, reclaim)
            while True:
                fits = [(heap[0], gpus) for gpus, heap in sizes.items() if gpus <= room + 1e-9]
                if not fits:
                    break
                _, gpus = min(fits)
                _, j = heapq.heappop(sizes[gpus])
                if not sizes[gpus]:
                    del sizes[gpus]
                room -= gpus
                back.append(j)
        self.count[region] -= len(back)
        return back


def _most(book) -> list[float]:
    """Per holder, the most GPUs it can ever hold: its cap and, with quotas, its nominal quota plus
    borrowing limit, and its guaranteed part plus its cohort's lending limits (every other holder idle)."""
    most = book.cap.copy()
    if book.quotas:
        lent = np.array([book.lend[book.cohort == c].sum() for c in book.cohort.tolist()])
        most = np.minimum(most, np.minimum(book.nominal + book.borrow, book.nominal - book.lend + lent))
    return most.tolist()


def _dense(codes: list[int]) -> list[int]:
    """`codes` renumbered 0, 1, ... in the order they first appear."""
    number: dict[int, int] = {}
    return [number.setdefault(c, len(number)) for c in codes]
