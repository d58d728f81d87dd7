"""Starting a job (step 4b of the simulator's loop, engine.sim.simulator): the checks, the
placement or gang choice, the checked allocation and the bookkeeping of a start.

A job starts only if all its pods fit now (a gang job takes whole free nodes chosen by the gang
policy, all or none). Under a cluster policy that is not inert, the cluster step first picks the
job's cluster (engine.sim.cycle.cluster_step) and its pods go to that cluster's nodes only. Before
asking a policy, cheap refusals: the quota gate, the free units of
the job's pool, and the per-shape "no room" memo (engine.sim.state.region: a shape that found no room
still has none until a node released since has room for it). A started job takes a running-job
slot in its region, leaves the waiting counts, is logged STARTED or BACKFILLED, and its finish
(or failure) is scheduled after its remaining work (longer for a multi-node job spread over racks or
clusters under an [interconnect]: engine.sim.processes.interconnect).

`Starts` is a part of `_Run` kept in its own file; it reads and writes the run's state.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from engine.core.cluster_view import ANY, WAIT
from engine.core.fleet_view import PodRequest, fits_on
from engine.core.reasons import BACKFILLED, STARTED
from engine.sim.state.events import FAILURE, FINISH
from engine.sim.state.region import RegionFleet

AVOIDS_SPOT = 1 << 40  # added to a shape id for jobs kept off spot nodes


class Starts:
    """The start steps of a run (mixed into engine.sim.simulator._Run)."""

    def try_start(self, j: int, now: float, fleet: RegionFleet, backfilled: bool) -> bool:
        """Place job j now if it fits (all pods or none); start it and schedule its finish."""
        sharing = self.sharing
        if sharing.gated and sharing.blocks(j, self.region_name[j], now):
            return False
        mig = self.partitions is not None and self.partitions.takes[j]
        if not mig:
            if self.units_list[j] > fleet.pool_free[self.pool_list[j]]:
                return False
            shape = self.shape_list[j]
            if not self.spot_ok[j]:  # kept off spot nodes: its own "no room" memo
                shape += AVOIDS_SPOT
            if shape in fleet.no_room:  # it found no room: it has none until a node released since has room
                released = fleet.released_since(shape)
                if released is not None and not (released and self._room_on(j, fleet, released)):
                    return False
        if self.data_gate and self.data_moves.ready_at[j] > now:  # its GPUs are free; its data is on its way
            self.data_moves.held(j, now)
            return False
        if self.archive is not None and self.archive.holds_back(j, now):  # its checkpoint is being restored
            return False
        if mig:  # a MIG instance (engine.sim.processes.partitions): its CPU-only pod, compute/7 of a GPU
            cluster = ANY if self.clusters is None else self.clusters.pick_mig(j, fleet, self.partitions.placer)
            if cluster == WAIT:
                return False
            # backfilled, it may switch a whole GPU only when its pass counted the GPU (backfill_mig)
            placed = self.partitions.place(j, fleet, now, not backfilled or self.units_list[j] > 0, cluster,
                                           head=not backfilled)
            if placed is None:
                return False
            self.pods[j], held = placed
            node = self.pods[j][0].node
            return self._started(j, now, fleet, 0, held, node, [node], backfilled)
        request = self.request_of(j) if self.width[j] == 1 else None
        cluster = ANY if self.clusters is None else self.clusters.pick(j, fleet, request)
        if cluster == WAIT:  # no cluster has room now: until a node with room for the shape is released
            fleet.remember_no_room(shape)
            return False
        if self.width[j] > 1:
            nodes = self._gang_nodes(j, fleet, now, cluster)
            if nodes is None:
                fleet.remember_no_room(shape)
                return False
            if sharing.gated:
                nodes = self._within_quota(j, fleet, nodes, cluster)
                if sharing.blocks(j, self.region_name[j], now, float(fleet.state.gpu_count[nodes].sum())):
                    return False  # its whole nodes would take its holder past its quota
            units = fleet.allocate_whole(nodes)
            self.pods[j] = nodes
            first = int(nodes[0])
        else:
            if cluster != ANY:
                request = self.on_cluster(request, cluster)
            placement = self.batch.take(j, fleet.view, request) if self.batch.on else None
            if placement is None:
                placement = self.p.placement.choose(fleet.view, request, self.rng)
            if placement is None:
                fleet.remember_no_room(shape)
                return False
            units = fleet.allocate(placement, request)
            self.pods[j] = (placement, request)
            first = placement.node
            nodes = [first]
        return self._started(j, now, fleet, units, units / 1000.0, first, nodes, backfilled)

    def _started(self, j: int, now: float, fleet: RegionFleet, units: int, held: float, first: int, nodes,
                 backfilled: bool) -> bool:
        """The bookkeeping of job j's start on `nodes` (the first of them `first`), taking `units`
        milli-GPU of its pool and holding `held` GPUs; schedules its finish (or failure)."""
        self.alloc_gpus[j] = held
        self.nodes_of[j] = nodes
        if self.plans_ahead:  # its expected end is read (backfill, strip packing): it takes a slot
            requested = self.requested[j]
            if self.history is None:
                self.slot[j] = fleet.occupy_slot(now + requested, units, fleet.pool_of_node[first],
                                                 now + self.overrun[j], math.nan, fleet.cluster_list[first])
            else:  # EASY++: expected at its prediction, then as its policy's corrector says (from its request)
                self.slot[j] = fleet.occupy_slot(now + self.history.expected(j, requested), units,
                                                 fleet.pool_of_node[first], now + requested, now,
                                                 fleet.cluster_list[first])
        if math.isnan(self.start[j]):
            self.start[j] = now
        region = self.region_name[j]
        self.count_waiting(j, region, -1)
        self.sharing.started(j, region, nodes, now)
        self.log(now, j, BACKFILLED if backfilled else STARTED)
        if now <= self.submit[j]:
            self.reason[j] = 0
        running = self.remaining[j] if self.links is None else self.links.running_s(j, fleet, nodes, now,
                                                                                   self.remaining[j])
        if self.partitions is not None and self.width[j] == 1:
            running = self.partitions.running_s(j, fleet, now, running)
        self.events.push(now + running, FAILURE if self.failed[j] else FINISH,
                         j + self.n_jobs * self.generation[j])
        if self.processes.on_start:
            for hook in self.processes.on_start:  # a right-sized job given too little runs out of memory
                hook(j, now, running)
        return True

    def _none_fit(self, new: list[int], fleet: RegionFleet) -> bool:
        """Whether none of jobs `new` fits in the free units of its pool (the cheapest refusal of `try_start`)."""
        units, pools, free = self.units_list, self.pool_list, fleet.pool_free
        return all(units[j] > free[pools[j]] for j in new)

    def _gang_nodes(self, j: int, fleet: RegionFleet, now: float, cluster: int) -> np.ndarray | None:
        free = self._whole_free(j, fleet, cluster)
        if len(free) < self.width[j]:
            return None
        if self.gang_sees_time:  # a strip-packing policy: when each node frees, when the gang would end
            return self.gang.choose_nodes(fleet.view, free, self.width[j], self.rng,
                                          free_at=self._node_free_at(fleet, now), end_s=now + self.requested[j])
        return self.gang.choose_nodes(fleet.view, free, self.width[j], self.rng)

    def _whole_free(self, j: int, fleet: RegionFleet, cluster: int) -> np.ndarray:
        """The entirely free nodes big enough for one pod of gang job j, of `cluster` only (ANY: all)."""
        free = fleet.whole_free_nodes(self.num_gpu[j], self.cpu_milli[j], self.memory_mib[j], self.pool_list[j],
                                      self.spot_ok[j])
        return free if cluster == ANY else free[fleet.cluster_codes[free] == cluster]

    def _node_free_at(self, fleet: RegionFleet, now: float) -> np.ndarray:
        """Per node of `fleet`, when its running jobs are expected to have ended (now for an idle node)."""
        at = np.full(len(fleet.name_list), now)
        ends, region_of, slot, nodes_of = fleet.slot_end, self.region_of, self.slot, self.nodes_of
        for j in self.pods:
            if region_of[j] is fleet:
                held = nodes_of[j]
                at[held] = np.maximum(at[held], ends[slot[j]])
        return at

    def _within_quota(self, j: int, fleet: RegionFleet, nodes: np.ndarray, cluster: int) -> np.ndarray:
        """The gang policy's `nodes` for job j, or, when their GPUs would take its quota holder past
        its quota, the free nodes with the fewest GPUs (lowest index first among equals) if they hold
        fewer: on nodes of mixed sizes the quota may allow the small ones."""
        counts = fleet.state.gpu_count
        if self.sharing.passes(j, self.region_name[j], float(counts[nodes].sum())):
            return nodes
        fewest = fleet.fewest_gpu_nodes(self._whole_free(j, fleet, cluster), self.width[j])
        return fewest if counts[fewest].sum() < counts[nodes].sum() else nodes

    def _room_on(self, j: int, fleet: RegionFleet, nodes: list[int]) -> bool:
        """Whether job j's pod (a whole node for a gang job) fits on any of `nodes` (repeats allowed) now."""
        if self.width[j] > 1:
            big = fleet.big_enough(self.num_gpu[j], self.cpu_milli[j], self.memory_mib[j], self.pool_list[j],
                                   self.spot_ok[j])
            if big is fleet.every_node:
                return bool(np.count_nonzero(fleet.state.entirely_free[nodes]))
            nodes = np.array(nodes)
            return bool(np.count_nonzero(fleet.state.entirely_free[nodes] & big[nodes]))
        return bool(np.count_nonzero(fits_on(fleet.view, self.request_of(j), np.array(nodes))))

    def request_of(self, j: int) -> PodRequest:
        """Job j's pod request (one object per distinct shape), on any node (`on_cluster`: on one cluster's)."""
        t, g = self.gpu_type[j], self.num_gpu[j]
        key = (self.cpu_milli[j], self.memory_mib[j], g, self.gpu_milli[j], (t,) if t is not None and g else (),
               self.spot_ok[j])
        request = self.requests.get(key)
        if request is None:
            request = self.requests[key] = PodRequest(*key)
        return request

    def on_cluster(self, request: PodRequest, cluster: int) -> PodRequest:
        """`request` (one of `request_of`'s) on `cluster`'s nodes only: one object per request and cluster,
        kept in `requests` under (the request's id, cluster), which no shape's key equals."""
        key = (id(request), cluster)
        placed = self.requests.get(key)
        if placed is None:
            placed = self.requests[key] = replace(request, cluster=cluster)
        return placed

