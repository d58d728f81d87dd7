"""One region's fleet for the simulator: a FleetState plus the bookkeeping the loop needs.

Resource "units" are milli-GPU. Pools: pool 0 is every node of the region, pool m + 1 the nodes
whose GPU model is `state.model_names[m]`; `pool_free[p]` is the free milli-GPU of pool p, kept
current on every start and finish. Running jobs sit in slots (parallel arrays, reused), so a
backfill policy gets their expected ends and units as numpy arrays without a Python loop.

Resources on a node only grow when something on it is released, so the region keeps `released`,
the nodes of every release in order, and `no_room[shape]`, the length of that log when a job
shape last found no room. Until a released node has room for the shape, it still has none: the
simulator then refuses the shape with a few scalar checks instead of asking the policy again.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.sim.fleet_state import MILLI, TIER_RANK, FleetState, Placement, PlacementError, PodRequest


class GangFleetState(FleetState):
    """FleetState plus vectorised, checked allocation of whole nodes (for gang jobs).

    Taking a whole node is the same as `allocate` with every CPU, MiB and GPU of the node (a pod
    of shape gpu_count whole GPUs); doing it for all of a gang's nodes in one numpy step keeps
    replays of wide jobs fast. Two boolean arrays are kept current on every change of a node:
    `entirely_free` (nothing allocated on it) and `held_whole` (taken by `allocate_whole`).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.entirely_free = np.ones(len(self.cpu_free), bool)
        self.held_whole = np.zeros(len(self.cpu_free), bool)
        self._taken = np.where(self.capacity < 0, -1, 0)  # the block of a node taken whole
        self._all_gpu = bool((self.gpu_count > 0).all())
        self._pods_flat = self.gpu_pods.reshape(-1)  # a view: gpu_pods is C-contiguous
        self._whole_slot = np.arange(len(self.cpu_free)) * self.gpu_pods.shape[1] + self.gpu_count

    def _apply(self, placement: Placement, request: PodRequest, sign: int) -> None:
        super()._apply(placement, request, sign)
        node = placement.node
        self.entirely_free[node] = (self.cpu_free[node] == self.cpu_total[node]
                                    and self.memory_free[node] == self.memory_total[node]
                                    and self.gpu_idle[node] == self.gpu_count[node])

    def allocate_whole(self, nodes: np.ndarray) -> None:
        """Take all of `nodes` (ascending distinct indices); raise PlacementError unless each is
        an existing, entirely free node."""
        nodes = np.asarray(nodes, np.int64)
        where = _rows(nodes)
        if len(nodes):
            if nodes[0] < 0 or nodes[-1] >= len(self.cpu_free) or np.count_nonzero(nodes[1:] <= nodes[:-1]):
                raise PlacementError(f"gang nodes must be ascending distinct existing nodes: {nodes.tolist()}")
            if np.count_nonzero(self.entirely_free[where]) != len(nodes):
                raise PlacementError(f"gang nodes {nodes.tolist()} are not all entirely free")
        self._whole(nodes, where, -1)

    def release_whole(self, nodes: np.ndarray) -> None:
        """Give back nodes taken by `allocate_whole` (ascending, distinct); refuses nodes that are
        not all entirely taken."""
        nodes = np.asarray(nodes, np.int64)
        if np.count_nonzero(nodes[1:] <= nodes[:-1]):
            raise PlacementError(f"nodes to release must be ascending and distinct: {nodes.tolist()}")
        where = _rows(nodes)
        if np.count_nonzero(self.held_whole[where]) != len(nodes) \
                or np.count_nonzero(self.free[where, :3]):  # CPU, memory and GPU milli all taken
            raise PlacementError(f"nodes {nodes.tolist()} were not taken whole")
        self._whole(nodes, where, +1)

    def _whole(self, nodes: np.ndarray, where, sign: int) -> None:
        take = sign < 0
        self.free[where] = self._taken[where] if take else self.capacity[where]
        self.entirely_free[where] = not take
        self.held_whole[where] = take
        gpu = where if self._all_gpu else nodes[self.gpu_count[nodes] > 0]
        self._pods_flat[self._whole_slot[gpu]] -= sign  # nodes are distinct, so no index repeats
        if self.fragmentation is not None:
            self.fragmentation.refresh(nodes, self.cpu_free, self.gpu_free)


def _rows(nodes: np.ndarray):
    """A slice for nodes that span consecutive indices (numpy slices cost a fraction of fancy
    indexing), else the index array itself. Only for nodes already known, or checked before use,
    to be ascending and distinct."""
    n = len(nodes)
    if n > 1:
        first = int(nodes[0])
        if int(nodes[n - 1]) - first == n - 1 and first >= 0:
            return slice(first, first + n)
    return nodes


class RegionFleet:
    """Fleet state, pools and running-job slots of one region."""

    def __init__(self, nodes: pd.DataFrame) -> None:
        self.names = nodes["node"].astype(str).to_numpy()
        spot = (nodes["tier"] == "spot").to_numpy(bool) if "tier" in nodes else None
        rank = nodes["tier"].map(TIER_RANK).fillna(0).to_numpy(np.int64) if "tier" in nodes else None
        self.state = GangFleetState(nodes["cpu_milli"].to_numpy(), nodes["memory_mib"].to_numpy(),
                                    nodes["gpu"].to_numpy(), list(nodes["model"]), rack=nodes["rack_id"].to_numpy(),
                                    spot=spot if spot is not None and spot.any() else None,
                                    tier_rank=rank if rank is not None and rank.any() else None)
        self.view = self.state.view()
        self.node_pool = self.state.gpu_model + 1
        self.pool_free = np.bincount(self.node_pool, weights=self.state.gpu_count * MILLI,
                                     minlength=len(self.state.model_names) + 1).astype(np.float64)
        self.pool_free[0] = float(self.state.gpu_count.sum() * MILLI)
        self.pool_capacity = self.pool_free.copy()  # installed milli-GPU per pool
        self.capacity_gpus = float(self.state.gpu_count.sum())
        self.busy_milli = 0
        self.slot_end = np.zeros(16)
        self.slot_overrun = np.full(16, np.nan)  # expected end once slot_end has passed (NaN: none)
        self.slot_units = np.zeros(16)
        self.slot_pool = np.zeros(16, np.int64)
        self.slot_active = np.zeros(16, bool)
        self._free_slots = list(range(15, -1, -1))
        self._big_enough: dict[tuple, np.ndarray] = {}
        self._node_milli = (self.state.gpu_count * MILLI).astype(np.float64)
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

    def fits_empty(self, num_gpu: int, cpu_milli: int, memory_mib: int, nodes: int, pool: int) -> bool:
        """Whether such a job fits this region's fleet when nothing runs."""
        if pool < 0 and num_gpu:
            return False
        s = self.state
        ok = (s.gpu_count >= num_gpu) & (s.cpu_total >= cpu_milli) & (s.memory_total >= memory_mib)
        if num_gpu and pool > 0:
            ok &= self.node_pool == pool
        return int(ok.sum()) >= nodes

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
            self._big_enough[key] = big
        return big

    def whole_free_nodes(self, num_gpu: int, cpu_milli: int, memory_mib: int, pool: int,
                         spot_ok: bool = True) -> np.ndarray:
        """Indices of completely free nodes big enough for one pod of a gang job, ascending."""
        big = self.big_enough(num_gpu, cpu_milli, memory_mib, pool, spot_ok)
        return (self.state.entirely_free & big).nonzero()[0]

    def allocate(self, placement: Placement, request: PodRequest) -> int:
        """Allocate one pod (checked by FleetState), update the pools; returns the milli-GPU taken."""
        self.state.allocate(placement, request)
        milli = request.total_gpu_milli
        self._account(self.node_pool[placement.node], milli, -1)
        return milli

    def release(self, placement: Placement, request: PodRequest) -> None:
        self.state.release(placement, request)
        self.released.append(placement.node)
        self._account(self.node_pool[placement.node], request.total_gpu_milli, +1)

    def allocate_whole(self, nodes: np.ndarray) -> int:
        """Take whole `nodes` (checked); returns the milli-GPU taken."""
        self.state.allocate_whole(nodes)
        return self._account_many(nodes, -1)

    def release_whole(self, nodes: np.ndarray) -> None:
        self.state.release_whole(nodes)
        self.released.extend(nodes.tolist())
        self._account_many(nodes, +1)

    def _account_many(self, nodes: np.ndarray, sign: int) -> int:
        milli = self._node_milli[_rows(nodes)]
        total = int(np.add.reduce(milli))
        if self._one_pool >= 0:  # every node of the region in one pool: no per-pool split needed
            self._account(self._one_pool, total, sign)
            return total
        per_pool = np.bincount(self.node_pool[nodes], weights=milli, minlength=len(self.pool_free))
        per_pool[0] = total  # pool 0 is every node, whatever its model
        self.pool_free += sign * per_pool
        self.busy_milli -= sign * total
        return total

    def _account(self, pool: int, milli: int, sign: int) -> None:
        self.pool_free[0] += sign * milli
        if pool > 0:
            self.pool_free[pool] += sign * milli
        self.busy_milli -= sign * milli

    def occupy_slot(self, expected_end_s: float, units: float, pool: int, overrun_end_s: float = math.nan) -> int:
        """Record a running job; returns its slot. overrun_end_s: when to expect it once it outlives
        expected_end_s (NaN: at once)."""
        if not self._free_slots:
            n = len(self.slot_end)
            self.slot_end = np.concatenate([self.slot_end, np.zeros(n)])
            self.slot_overrun = np.concatenate([self.slot_overrun, np.full(n, np.nan)])
            self.slot_units = np.concatenate([self.slot_units, np.zeros(n)])
            self.slot_pool = np.concatenate([self.slot_pool, np.zeros(n, np.int64)])
            self.slot_active = np.concatenate([self.slot_active, np.zeros(n, bool)])
            self._free_slots = list(range(2 * n - 1, n - 1, -1))
        slot = self._free_slots.pop()
        self.slot_end[slot], self.slot_units[slot] = expected_end_s, units
        self.slot_overrun[slot] = overrun_end_s
        self.slot_pool[slot], self.slot_active[slot] = pool, True
        return slot

    def vacate_slot(self, slot: int) -> None:
        self.slot_active[slot] = False
        self._free_slots.append(slot)

    def running_in_pool(self, pool: int, now_s: float = -math.inf) -> tuple[np.ndarray, np.ndarray]:
        """(expected end s, units) of the running jobs holding units of `pool` (0: all); a job past
        its expected end at `now_s` is expected at its overrun end when it has one."""
        mask = self.slot_active if pool == 0 else self.slot_active & (self.slot_pool == pool)
        ends = self.slot_end[mask]
        overrun = self.slot_overrun[mask]
        late = (ends <= now_s) & np.isfinite(overrun)
        return (np.where(late, overrun, ends) if late.any() else ends), self.slot_units[mask]
