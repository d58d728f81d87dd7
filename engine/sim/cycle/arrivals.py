"""Arrivals of the simulator's loop (engine.sim.simulator): routing, data transfers, admission and
degradation of each arriving job, and routing waiting jobs again when their region goes down; a job's
queue membership (requeued after an eviction or its quota's hold, parked while its quota holds it) and the
region's waiting counts it joins and leaves.

`Arrivals` is a part of `_Run` kept in its own file; it reads and writes the run's state.
"""
from __future__ import annotations

from engine.core.reasons import DEGRADED, EXCEEDS, FORECAST, NEVER, REJECTED, TRANSFERRING
from engine.policies.admission import AdmissionRequest
from engine.sim.state.events import DEFERRED

WEEK_S = 7 * 86_400.0  # the longest request the admission forecast counts


class Arrivals:
    """The arrival steps of a run (mixed into engine.sim.simulator._Run)."""

    def _arrive(self, j: int, now: float, route: bool = True) -> str:
        """Route job j (when a router runs), then queue it or record why not (never fits, refused by
        admission, more than its quota can ever give: engine.sim.cycle.quota_gate); returns its region. A
        job away from its input data waits for the data first (data_gb x 8 / transfer_gbps s). A job
        whose user gave up while it was held back or its data moved is not queued. With [data] replicas,
        prefetch, compression or incremental sync, engine.sim.processes.data_moves decides what moves and
        when it is there (with prefetch the job queues at once and waits for its data in the queue). A
        stage of a chain is routed once (`route` False: it was routed at its hand-over) and waits for its
        predecessor's checkpoint to reach the region it was sent to (engine.sim.processes.chains). Before
        it is routed, a job whose dataset is archived ([roles] datasets) waits for its restore
        (engine.sim.processes.dataset_archive)."""
        if self.patience.left(j):
            return self.region_name[j]
        if self.dataset_archive is not None and self.dataset_archive.waits(j, now):
            return self.region_name[j]
        if route and self.router is not None and not self.transferred[j]:
            self._move(j, self.router.route(j, now))
            if self.chains is not None and self.chains.sent_after_routing(j, now):
                return self.region_name[j]
        region = self.region_name[j]
        if self.data_moves is not None and not self.transferred[j]:
            self.transferred[j] = True
            ready = self.data_moves.arrive(j, self.region_index[region], now)
            if ready > now:
                self.log(now, j, TRANSFERRING)
                if not self.data_gate:
                    self.events.push(ready, DEFERRED, j)
                    return region
        elif self.transfer_gbps > 0 and not self.transferred[j] and self.data_gb[j] > 0 \
                and self.data_region[j] >= 0 and self.data_region[j] != self.region_index[region]:
            self.transferred[j] = True
            self.events.push(now + self.data_gb[j] * 8.0 / self.transfer_gbps, DEFERRED, j)
            self.log(now, j, TRANSFERRING)
            return region
        queue = self.queues[region]
        if self.never[j]:
            self.decide(now, j, NEVER)
            return region
        if not self.admits_all:
            admission = self.p.admission.admit(self._admission_request(j, region))
            if not admission.admitted:
                self.decide(now, j, FORECAST if admission.reason == "forecast" else REJECTED)
                return region
            if admission.nodes and admission.nodes < self.width[j]:
                self._degrade(j, admission.nodes, now)
        if self.sharing.gated and self.sharing.exceeds_quota(j, region):
            self.decide(now, j, EXCEEDS)
            return region
        self.count_waiting(j, region, +1)
        if not self.sharing.joins_vip(j, region):
            self.arrived[region].append(j)
            queue.add(self.key_of[j])
        return region

    def _move(self, j: int, r: int) -> None:
        """Send job j to the region of index r (its pool and fit there)."""
        name = self.router.names[r]
        if name != self.region_name[j]:
            self.latency_ms[j] = self.router.facts.latency_ms[self.router.home[j], r]
            pool = int(self.shape_pools[self.shape_list[j], r])
            self.region_name[j], self.region_of[j] = name, self.regions[name]
            self.nodes_of.pop(j, None)  # an evicted job's last nodes belong to the region it leaves
            self.alloc_gpus[j] = 0.0
            self.pool[j] = self.pool_list[j] = pool
            self.never[j] = not self.shape_fits[self.shape_list[j], r]
            if self.clusters is not None:
                self.clusters.reshape(j)

    def _admission_request(self, j: int, region: str) -> AdmissionRequest:
        fleet, w = self.regions[region], self.w
        waiting, limit = self.sharing.class_full(j, region)
        free = 0
        if self.width[j] > 1:
            free = len(fleet.whole_free_nodes(self.num_gpu[j], self.cpu_milli[j], self.memory_mib[j],
                                              self.pool_list[j]))
        return AdmissionRequest(self.queues[region].count, waiting, limit, self.gpus[j], self.width[j],
                                self.requested[j], str(w.workload_class[j]), self.queued_gpu_s[region],
                                fleet.pool_capacity[self.pool_list[j]] / 1000.0, free)

    def _degrade(self, j: int, nodes: int, now: float) -> None:
        """Elastic job j runs on `nodes` nodes instead: its work takes longer in proportion (perfect
        scaling), or by the world's Amdahl model of its class (engine.world.elastic)."""
        scale = self.width[j] / nodes
        elastic = self.world.elastic if self.world is not None else None
        slower = scale if elastic is None or elastic.perfect else \
            elastic.runtime_scale(str(self.w.workload_class[j]), self.gpus[j], self.gpus[j] / scale)
        self.width[j] = nodes
        self.units_list[j] = self.units[j] = self.units[j] / scale
        self.gpus[j] = self.gpus[j] / scale
        self.run_s[j] = self.remaining[j] = self.run_s[j] * slower
        self.requested[j] = self.requested_s[j] = self.requested[j] * slower
        self.region_of[j].no_room.pop(self.shape_list[j], None)
        if self.clusters is not None:
            self.clusters.reshape(j)
        self.log(now, j, DEGRADED)

    def requeue(self, j: int, region: str) -> None:
        """Put job j (evicted, or back from the quota gate) into its region's queue."""
        self.parked[j] = False
        self.arrived[region].append(j)
        self.queues[region].add(self.key_of[j])

    def park(self, j: int, region: str, reason: int, now: float) -> None:
        """Take job j out of its region's queue while its quota holds it back."""
        self.parked[j] = True
        self.queues[region].remove(self.key_of[j])
        self.block(now, j, reason)

    def count_waiting(self, j: int, region: str, sign: int) -> None:
        """Job j joins (+1) or leaves (-1) `region`'s waiting counts: its GPUs (read by the router and cloud
        bursts), and, only when an admission policy reads them, its GPU-seconds and its queue class's count."""
        gpus = sign * self.gpus[j]
        self.queued_gpus[region] += gpus
        if not self.admits_all:
            requested = self.requested[j]
            self.queued_gpu_s[region] += gpus * (WEEK_S if WEEK_S < requested else requested)  # min(), no call
            self.sharing.count(j, region, sign)

    def waiting_in(self, region: str) -> list[int]:
        """The jobs waiting in `region`'s queue and its guaranteed queue."""
        return [*self.key_job[self.queues[region].keys()].tolist(), *self.sharing.vip[region]]

    def reroute(self, j: int, region: str, now: float) -> str:
        """Take waiting job j out of `region` and route it again (an outage); returns its new region."""
        vip = self.sharing.vip[region]
        if j in vip:
            vip.remove(j)
        else:
            self.queues[region].remove(self.key_of[j])
        self.count_waiting(j, region, -1)
        self._move(j, self.router.route(j, now))
        moved = self.region_name[j]
        if self.sharing.gated and self.sharing.exceeds_quota(j, moved):
            self.decide(now, j, EXCEEDS)
            return moved
        self.count_waiting(j, moved, +1)
        if not self.sharing.joins_vip(j, moved):
            self.arrived[moved].append(j)
            self.queues[moved].add(self.key_of[j])
        return moved
