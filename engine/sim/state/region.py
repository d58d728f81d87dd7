"""One region's fleet for the simulator: a FleetState plus the bookkeeping the loop needs.

Resource "units" are milli-GPU. Pools: pool 0 is every node of the region, pool m + 1 the nodes
whose GPU model is `state.model_names[m]`; `pool_free[p]` is the free milli-GPU of pool p, kept
current on every start and finish. Running jobs sit in slots (parallel arrays, reused), so a
backfill policy gets their expected ends and units as numpy arrays without a Python loop; a run that
reads no expected end (no backfilling, no strip-packing gang policy: engine.sim.simulator's
`plans_ahead`) keeps no slots for its jobs.

Clusters: `cluster_names` (sorted) and `cluster_codes`, each node's index into them (the fleet's
`cluster` column, one cluster per region without it), read by the cluster step
(engine.sim.cycle.cluster_step) and the fit rule.

Resources on a node only grow when something on it is released, so the region keeps `released`,
the nodes of every release in order, and `no_room[shape]`, the length of that log when a job
shape last found no room. Until a released node has room for the shape, it still has none: the
simulator then refuses the shape with a few scalar checks instead of asking the policy again.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.core.fleet_view import MILLI, TIER_RANK, Placement, PlacementError, PodRequest
from engine.core.kernel_entry import Entries, entry
from engine.sim.state.fleet_state import FleetState

# engine.sim.state.whole_kernels, imported when a run first takes whole nodes: loading its compiled code
# from numba's cache is a cost runs without gang jobs need not pay
_kernels = None


class GangFleetState(FleetState):
    """FleetState plus compiled, checked allocation of whole nodes (for gang jobs).

    Taking a whole node is the same as `allocate` with every CPU, MiB and GPU of the node (a pod
    of shape gpu_count whole GPUs); doing it for all of a gang's nodes in one compiled call
    (engine.sim.state.whole_kernels) keeps replays of wide jobs fast, and keeps FleetState's
    `entirely_free` and `held_whole` (taken by `allocate_whole`) current.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The block of a node taken whole: nothing free, absent GPUs -1, one pod of all its GPUs (an
        # entirely free node holds no GPU pod, so the row replaces its figures exactly).
        self._taken = np.where(self.capacity < 0, -1, 0)
        gpu = np.flatnonzero(self.gpu_count > 0)
        self._taken[gpu, self._pods_at + self.gpu_count[gpu]] = 1
        self._whole_moves = Entries()  # move_whole's entry point, taking and giving back

    def allocate_whole(self, nodes) -> list[int]:
        """Take all of `nodes` (ascending distinct indices); raise PlacementError unless each is
        an existing, entirely free node. Returns the nodes as a list."""
        nodes = np.ascontiguousarray(nodes, np.int64)
        self.move_whole(nodes, True)
        return nodes.tolist()

    def release_whole(self, nodes) -> list[int]:
        """Give back nodes taken by `allocate_whole` (ascending, distinct); refuses nodes that are
        not all entirely taken. Returns the nodes as a list."""
        nodes = np.ascontiguousarray(nodes, np.int64)
        self.move_whole(nodes, False)
        return nodes.tolist()

    def move_whole(self, nodes: np.ndarray, take: bool) -> int:
        """Take (`take`, a bool) or give back whole `nodes` checked, in one compiled call
        (engine.sim.state.whole_kernels); returns the GPU milli moved. `nodes` must be a C-contiguous
        int64 array (`np.ascontiguousarray(nodes, np.int64)`): the call goes to the kernel's entry point
        for these types (engine.core.kernel_entry), which reads any array as one."""
        args = (self._plain, self._taken if take else self.capacity, self._flags, nodes, take)
        milli = (self._whole_moves.get(take) or self._whole_moves.made(take, _whole_kernels().move_whole, args))(*args)
        if milli < 0:
            if milli == _kernels.BAD_NODES:
                raise PlacementError(f"gang nodes must be ascending distinct existing nodes: {nodes.tolist()}")
            raise PlacementError(f"gang nodes {nodes.tolist()} are not all entirely free" if take
                                 else f"nodes {nodes.tolist()} were not taken whole")
        if self.log is not None:
            self.log.note(nodes)
        if self.fragmentation is not None:
            self.fragmentation.refresh(nodes, self.cpu_free, self.gpu_free)
        return milli


def _whole_kernels():
    """engine.sim.state.whole_kernels, loaded on first use."""
    global _kernels
    if _kernels is None:
        from engine.sim.state import whole_kernels
        _kernels = whole_kernels
    return _kernels


def cluster_codes(nodes: pd.DataFrame) -> tuple[tuple[str, ...], np.ndarray]:
    """The region's cluster names, sorted, and each node's index into them: the fleet's `cluster`
    column; a node without one (or a fleet without the column) is in the cluster named after its region."""
    region = nodes["region"].astype(str) if "region" in nodes else pd.Series("", index=nodes.index)
    named = nodes["cluster"].astype(object).where(nodes["cluster"].notna(), None) if "cluster" in nodes else None
    clusters = region if named is None else named.where(named.notna() & (named.astype(str) != ""), region).astype(str)
    codes, names = pd.factorize(clusters.to_numpy(dtype=object), sort=True)
    return tuple(str(n) for n in names), codes.astype(np.int64)


class RegionFleet:
    """Fleet state, pools and running-job slots of one region."""

    def __init__(self, nodes: pd.DataFrame) -> None:
        self.names = nodes["node"].astype(str).to_numpy()
        self.name_list = self.names.tolist()
        spot = (nodes["tier"] == "spot").to_numpy(bool) if "tier" in nodes else None
        rank = nodes["tier"].map(TIER_RANK).fillna(0).to_numpy(np.int64) if "tier" in nodes else None
        self.cluster_names, self.cluster_codes = cluster_codes(nodes)
        self.cluster_list = self.cluster_codes.tolist()
        self.state = GangFleetState(nodes["cpu_milli"].to_numpy(), nodes["memory_mib"].to_numpy(),
                                    nodes["gpu"].to_numpy(), list(nodes["model"]), rack=nodes["rack_id"].to_numpy(),
                                    spot=spot if spot is not None and spot.any() else None,
                                    tier_rank=rank if rank is not None and rank.any() else None,
                                    cluster=self.cluster_codes)
        self.view = self.state.view()
        self.node_pool = self.state.gpu_model + 1
        pool_free = np.bincount(self.node_pool, weights=self.state.gpu_count * MILLI,
                                minlength=len(self.state.model_names) + 1).astype(np.float64)
        pool_free[0] = float(self.state.gpu_count.sum() * MILLI)
        self.pool_capacity = pool_free.copy()  # installed milli-GPU per pool
        self.pool_free = pool_free.tolist()  # a list: read and written one pool at a time, per start and end
        self.pool_of_node = self.node_pool.tolist()
        self.capacity_gpus = float(self.state.gpu_count.sum())
        self.busy_milli = 0
        # per slot (engine.sim.state.slot_kernels' columns): expected end, expected end once that has
        # passed (NaN: none), start recorded for a corrector (NaN: not recorded), units, pool, the
        # cluster of the job's first node, active (1.0); one row written per start
        self.slots = np.zeros((0, 7))  # C-order float64, also once grown (running_by_cluster's entry point reads it so)
        self._running = None  # slot_kernels.running's entry point
        self._free_slots: list[int] = []
        self._grow_slots()
        self._big_enough: dict[tuple, np.ndarray] = {}
        self.every_node = np.ones(len(self.names), bool)  # big_enough's one mask for shapes any node holds
        self._node_milli = (self.state.gpu_count * MILLI).tolist()
        pools = np.unique(self.node_pool)
        self._one_pool = int(pools[0]) if len(pools) == 1 else -1
        self.released: list[int] = []
        self.no_room: dict[int, int] = {}

    def released_since(self, shape: int) -> list[int] | None:
        """Nodes released since `shape` last found no room; None when it never failed, or when more
        releases than nodes happened since (then asking the policy is cheaper than the check)."""
        mark = self.no_room.get(shape)
        if mark is None or len(self.released) - mark > len(self.names):
            return None
        return self.released[mark:]

    def remember_no_room(self, shape: int) -> None:
        self.no_room[shape] = len(self.released)

    def pool_of(self, gpu_type) -> int:
        """Pool index for a job's GPU model (0: any model); -1 when the region lacks the model."""
        if gpu_type is None:
            return 0
        names = self.state.model_names
        return names.index(gpu_type) + 1 if gpu_type in names else -1

    def fits_empty(self, num_gpu: int, cpu_milli: int, memory_mib: int, nodes: int, pool: int,
                   spot_ok: bool = True) -> bool:
        """Whether such a job fits this region's fleet when nothing runs (without `spot_ok`, on
        its nodes other than spot ones)."""
        if pool < 0 and num_gpu:
            return False
        return int(np.count_nonzero(self.big_enough(num_gpu, cpu_milli, memory_mib, pool, spot_ok))) >= nodes

    def big_enough(self, num_gpu: int, cpu_milli: int, memory_mib: int, pool: int, spot_ok: bool = True) -> np.ndarray:
        """Nodes big enough (when empty) for one pod of a gang job of this shape (cached mask);
        without `spot_ok`, spot nodes are left out."""
        key = (num_gpu, cpu_milli, memory_mib, pool, spot_ok)
        big = self._big_enough.get(key)
        if big is None:
            s = self.state
            big = (s.gpu_count >= num_gpu) & (s.cpu_total >= cpu_milli) & (s.memory_total >= memory_mib)
            if num_gpu and pool > 0:
                big &= self.node_pool == pool
            if not spot_ok and s.spot is not None:
                big &= ~s.spot
            self._big_enough[key] = big = self.every_node if big.all() else big
        return big

    def fewest_gpu_nodes(self, nodes: np.ndarray, width: int) -> np.ndarray:
        """The `width` of `nodes` with the fewest GPUs (lowest index first among equals), ascending."""
        return np.sort(nodes[np.argsort(self.state.gpu_count[nodes], kind="stable")[:width]])

    def fewest_whole_gpus(self, num_gpu: int, cpu_milli: int, memory_mib: int, pool: int, width: int) -> float:
        """The fewest GPUs a gang job of `width` such pods can hold: its whole nodes are the `width`
        big enough ones with the fewest GPUs (inf when fewer than `width` are big enough)."""
        big = self.big_enough(num_gpu, cpu_milli, memory_mib, pool).nonzero()[0]
        return float(self.state.gpu_count[self.fewest_gpu_nodes(big, width)].sum()) if len(big) >= width else math.inf

    def whole_free_nodes(self, num_gpu: int, cpu_milli: int, memory_mib: int, pool: int,
                         spot_ok: bool = True) -> np.ndarray:
        """Indices of completely free nodes big enough for one pod of a gang job, ascending."""
        big = self.big_enough(num_gpu, cpu_milli, memory_mib, pool, spot_ok)
        if big is self.every_node:  # no mask to apply
            return self.state.entirely_free.nonzero()[0]
        return (self.state.entirely_free & big).nonzero()[0]

    def allocate(self, placement: Placement, request: PodRequest) -> int:
        """Allocate one pod (checked by FleetState), update the pools; returns the milli-GPU taken."""
        self.state.move(placement, request, True)
        milli = request.total_gpu_milli
        if milli:  # a CPU-only pod leaves the pools as they are
            self._account(self.pool_of_node[placement.node], milli, -1)
        return milli

    def release(self, placement: Placement, request: PodRequest) -> None:
        self.state.move(placement, request, False)
        self.released.append(placement.node)
        milli = request.total_gpu_milli
        if milli:
            self._account(self.pool_of_node[placement.node], milli, +1)

    def allocate_whole(self, nodes) -> int:
        """Take whole `nodes` (checked); returns the milli-GPU taken."""
        nodes = np.ascontiguousarray(nodes, np.int64)
        return self._account_many(nodes, self.state.move_whole(nodes, True), -1)

    def release_whole(self, nodes) -> None:
        nodes = np.ascontiguousarray(nodes, np.int64)
        milli = self.state.move_whole(nodes, False)
        self.released.extend(nodes.tolist())
        self._account_many(nodes, milli, +1)

    def _account_many(self, nodes: np.ndarray, total: int, sign: int) -> int:
        """Account whole `nodes` holding `total` milli-GPU (sign -1 taken, +1 given back); returns `total`."""
        if self._one_pool >= 0:  # every node of the region in one pool: no per-pool split needed
            self._account(self._one_pool, total, sign)
            return total
        milli, pool_of = self._node_milli, self.pool_of_node
        for k in nodes.tolist():
            if pool_of[k] > 0:  # pool 0, every node, gets the total below
                self.pool_free[pool_of[k]] += sign * milli[k]
        self.pool_free[0] += sign * total
        self.busy_milli -= sign * total
        return total

    def _account(self, pool: int, milli: int, sign: int) -> None:
        self.pool_free[0] += sign * milli
        if pool > 0:
            self.pool_free[pool] += sign * milli
        self.busy_milli -= sign * milli

    def occupy_slot(self, expected_end_s: float, units: float, pool: int, overrun_end_s: float = math.nan,
                    begin_s: float = math.nan, cluster: int = 0) -> int:
        """Record a running job; returns its slot. overrun_end_s: when to expect it once it outlives
        expected_end_s (NaN: at once); begin_s: its start, for a corrector (running_in_pool); cluster:
        the cluster of its first node (running_by_cluster)."""
        if not self._free_slots:
            self._grow_slots()
        slot = self._free_slots.pop()
        self.slots[slot] = (expected_end_s, overrun_end_s, begin_s, units, pool, cluster, 1.0)
        return slot

    def _grow_slots(self) -> None:
        """Twice the slots (16 at first); `slot_end` is the column of expected ends."""
        n = max(len(self.slots), 16)
        self.slots = np.concatenate([self.slots, np.zeros((n, 7))])
        self.slot_end = self.slots[:, 0]
        self._free_slots = list(range(len(self.slots) - 1, len(self.slots) - n - 1, -1))

    def vacate_slot(self, slot: int) -> None:
        self.slots[slot, 6] = 0.0  # not active
        self._free_slots.append(slot)

    def running_in_pool(self, pool: int, now_s: float = -math.inf, corrector=None) -> tuple[np.ndarray, np.ndarray]:
        """(expected end s, units) of the running jobs holding units of `pool` (0: all); a job past its
        expected end at `now_s` is expected at its overrun end when it has one, or where
        `corrector(now_s, begin_s, expected_end_s, overrun_end_s)` says (EASY++'s correctors)."""
        return self.running_by_cluster(pool, now_s, corrector)[:2]

    def running_by_cluster(self, pool: int, now_s: float = -math.inf,
                           corrector=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`running_in_pool`, with the cluster of each job's first node (float64;
        engine.sim.cycle.backfill_cluster)."""
        args = (self.slots, int(pool), float(now_s), corrector is None)
        if self._running is None:  # the kernel's entry point for these types (engine.core.kernel_entry)
            if _slot_kernels is None:
                _load_slot_kernels()
            self._running = entry(_slot_kernels.running, args)
        ends, overrun, begin, units, cluster = self._running(*args)
        if corrector is not None:
            late = ends <= now_s
            if np.count_nonzero(late):
                ends[late] = corrector(now_s, begin[late], ends[late], overrun[late])
        return ends, units, cluster


# engine.sim.state.slot_kernels, imported with the first backfill pass
_slot_kernels = None


def _load_slot_kernels() -> None:
    global _slot_kernels
    from engine.sim.state import slot_kernels
    _slot_kernels = slot_kernels
