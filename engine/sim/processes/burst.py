"""Burst to cloud: extra GPU nodes a region rents when its queue backs up, after a provisioning delay.

A scenario's [[burst]] entries (engine.scenario.burst) each give a region a pool of up to
`max_nodes` cloud nodes of one GPU type. The simulator adds them to the region's fleet as tier
"burst" nodes, after the installed nodes (so first-fit placement fills the installed fleet first),
and holds them "down" until rented: a down node is taken whole by nobody, so no policy can place
on it, and it counts neither as busy nor as installed capacity.

Rules, evaluated after every scheduling pass of a region with a pool:
- Trigger. When the job at the front of the queue (the blocked head) has waited `trigger_wait_min`
  since it was submitted and fits a burst node, the region rents
  min(free pool nodes, ceil(queued GPUs / gpus_per_node) - nodes already provisioning) nodes: the
  GPUs of every waiting job, less what is already on its way. A head that has not waited long
  enough gets a check at the moment it will have (a BURST_CHECK event).
- Provisioning. A rented node comes up `provision_min` later (BURST_UP) and the region gets a pass.
- Release. A node that is up and entirely free gets an idle deadline `idle_release_min` later; if
  it is still free then (BURST_IDLE), it goes back. A job starting on it cancels the deadline.
- Billing. A node is billed at `usd_per_gpu_hour` per GPU from the moment it is rented (cloud
  instances bill while they boot) until it goes back or the run ends: `rented_s` to `returned_s`.

`table()` gives one row per rental: region, node, gpu_type, gpus, usd_per_gpu_hour, rented_s,
up_s, returned_s (NaN: still rented at the end), trigger_job_id (the head that asked for it).
Times are seconds from the workload's time 0.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.scenario.burst import BurstPool
from engine.sim.processes.base import WorldProcess
from engine.world.facts import on_demand_prices, region_on_demand_price

BURST_TIER = "burst"
BURST_UP = 10
BURST_CHECK = 11
BURST_IDLE = 12




def burst_price(pool: BurstPool, prices: dict[tuple, float]) -> float:
    """The pool's USD per GPU-hour: its own, else the region's on-demand price (`prices` from
    engine.world.facts.on_demand_prices), else the price book's."""
    if pool.usd_per_gpu_hour is not None:
        return float(pool.usd_per_gpu_hour)
    return region_on_demand_price(prices, pool.region, pool.gpu_type)


def burst_nodes(fleet: pd.DataFrame, pools: tuple[BurstPool, ...], prefix: str = "burst") -> pd.DataFrame:
    """Rows to append to a normalised fleet (engine.sim.state.workload.normalise_fleet) for every pool's
    nodes, named <prefix>-<region>-<gpu type>-<k>, each pool on a rack of its own. A pool whose region
    is not in the fleet is an error that lists the fleet's regions."""
    regions = set(fleet["region"])
    rows, rack = [], int(fleet["rack_id"].max()) + 1 if len(fleet) else 0
    for pool in pools:
        if pool.region not in regions:
            raise ValueError(f"[[burst]] region {pool.region!r} is not in the fleet; its regions: "
                             f"{', '.join(sorted(map(str, regions)))}")
        same = fleet[fleet["model"] == pool.gpu_type]
        cpus = pool.cpus_per_node if pool.cpus_per_node is not None else (
            same["cpu_milli"].iloc[-1] / 1000.0 if len(same) else 16.0 * pool.gpus_per_node)
        memory = pool.memory_gib_per_node if pool.memory_gib_per_node is not None else (
            same["memory_mib"].iloc[-1] / 1024.0 if len(same) else 128.0 * pool.gpus_per_node)
        for k in range(pool.max_nodes):
            rows.append({"region": pool.region, "node": f"{prefix}-{pool.region}-{pool.gpu_type}-{k + 1}",
                         "gpus": pool.gpus_per_node, "gpu_type": pool.gpu_type, "tier": BURST_TIER,
                         "gpu": pool.gpus_per_node, "cpu_milli": int(round(cpus * 1000)),
                         "memory_mib": int(round(memory * 1024)), "model": pool.gpu_type, "rack_id": rack})
        rack += 1
    return pd.DataFrame(rows)


class Bursts(WorldProcess):
    """The burst pools of one run (engine.sim.simulator._Run): rentals, returns and their record.
    Burst nodes are numbered b = 0, 1, ... over all pools; `node[b]` is b's index in its region's
    fleet. `prefix` starts its nodes' names (engine.sim.processes.forecast_scaling has its own)."""

    kinds = (BURST_UP, BURST_CHECK, BURST_IDLE)
    prefix = "burst"
    cause = "[[burst]] pools (their trigger_wait_min and idle_release_min)"
    result_fields = ("burst",)

    @classmethod
    def fleet_rows(cls, fleet: pd.DataFrame, world) -> pd.DataFrame | None:
        pools = tuple(world.bursts) if world is not None else ()
        return burst_nodes(fleet, pools, cls.prefix) if pools else None

    @classmethod
    def attach(cls, run) -> Bursts | None:
        world = run.world
        if world is None or not world.bursts:
            return None
        return cls(run, tuple(world.bursts), world.prices)

    def __init__(self, run, pools: tuple[BurstPool, ...], prices: pd.DataFrame | None) -> None:
        self.run, self.pools = run, pools
        on_demand = on_demand_prices(prices)
        self.price = [burst_price(pool, on_demand) for pool in pools]
        self.members: list[list[int]] = []  # per pool: its burst nodes
        self.by_region: dict[str, list[int]] = {}  # per region: the pools there
        self.node: list[int] = []
        self.pool_of: list[int] = []
        for p, pool in enumerate(pools):
            index = {name: i for i, name in enumerate(run.regions[pool.region].names)}
            first = len(self.node)
            self.node += [index[f"{self.prefix}-{pool.region}-{pool.gpu_type}-{k + 1}"] for k in range(pool.max_nodes)]
            self.pool_of += [p] * pool.max_nodes
            self.members.append(list(range(first, len(self.node))))
            self.by_region.setdefault(pool.region, []).append(p)
        self.state = ["down"] * len(self.node)  # down, provisioning or up
        self.idle_since: list[float | None] = [None] * len(self.node)
        self.current: list[dict | None] = [None] * len(self.node)  # the open rental of each node
        self.rentals: list[dict] = []
        self.check_at: dict[str, float] = {}  # the pending trigger check of each region
        for p, pool in enumerate(pools):
            fleet = run.regions[pool.region]
            nodes = np.asarray(sorted(self.node[b] for b in self.members[p]), np.int64)
            self._take(fleet, nodes)
            milli = float(fleet.state.gpu_count[nodes].sum()) * 1000.0
            fleet.capacity_gpus -= milli / 1000.0  # installed capacity: burst GPUs count only while rented
            fleet.pool_capacity[0] -= milli
            fleet.pool_capacity[int(fleet.node_pool[nodes[0]])] -= milli

    @staticmethod
    def _take(fleet, nodes: np.ndarray) -> None:
        """Hold `nodes` down: taken whole (no policy can place on them), but not busy."""
        before = fleet.busy_milli
        fleet.allocate_whole(nodes)
        fleet.busy_milli = before

    @staticmethod
    def _give(fleet, nodes: np.ndarray) -> None:
        """Bring held-down `nodes` up, entirely free."""
        before = fleet.busy_milli
        fleet.release_whole(nodes)
        fleet.busy_milli = before

    def after_pass(self, region: str, now: float) -> None:
        """Start the idle deadlines of free nodes; rent nodes when the queue's head waited long enough."""
        pools = self.by_region.get(region)
        if pools is None:
            return
        run = self.run
        free = run.regions[region].state.entirely_free
        for p in pools:
            for b in self.members[p]:
                if self.state[b] != "up":
                    continue
                if not free[self.node[b]]:
                    self.idle_since[b] = None
                elif self.idle_since[b] is None:
                    self.idle_since[b] = now
                    run.events.push(now + self.pools[p].idle_release_min * 60.0, BURST_IDLE, b)
        head, queue = run.blocked_head[region], run.queues[region]
        if not queue.count or run.down(region) or head < 0 or not queue.mask[run.key_of[head]]:
            return  # no blocked head still waiting in the queue (an evicted, requeued head is one)
        for p in pools:
            if self._fits(head, p):
                self._rent(region, p, head, now)

    def _rent(self, region: str, p: int, head: int, now: float) -> None:
        """Rent pool p's nodes for the waiting GPUs once `head` has waited the trigger time, else
        check again when it will have."""
        run, pool = self.run, self.pools[p]
        due = run.submit[head] + pool.trigger_wait_min * 60.0
        if now < due:
            pending = self.check_at.get(region)
            if pending is None or pending < now or pending > due:
                self.check_at[region] = due
                run.events.push(due, BURST_CHECK, run.region_index[region])
            return
        coming = sum(self.state[b] == "provisioning" for b in self.members[p])
        wanted = math.ceil(run.queued_gpus[region] / pool.gpus_per_node) - coming
        for b in [b for b in self.members[p] if self.state[b] == "down"][:max(wanted, 0)]:
            self.state[b] = "provisioning"
            self.current[b] = {"region": region, "node": run.regions[region].names[self.node[b]],
                               "gpu_type": pool.gpu_type, "gpus": pool.gpus_per_node,
                               "usd_per_gpu_hour": self.price[p], "rented_s": now, "up_s": math.nan,
                               "returned_s": math.nan, "trigger_job_id": run.w.job_id[head]}
            self.rentals.append(self.current[b])
            run.events.push(now + pool.provision_min * 60.0, BURST_UP, b)

    def _fits(self, j: int, p: int) -> bool:
        """Whether one pod of job j (a whole node of a gang job) fits a node of pool p."""
        w, pool = self.run.w, self.pools[p]
        if w.num_gpu[j] > 0 and w.gpu_type[j] is not None and w.gpu_type[j] != pool.gpu_type:
            return False
        state, node = self.run.regions[pool.region].state, self.node[self.members[p][0]]
        return bool(w.num_gpu[j] <= state.gpu_count[node] and w.cpu_milli[j] <= state.cpu_total[node]
                    and w.memory_mib[j] <= state.memory_total[node])

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        """Handle a burst event (payload: a region index for BURST_CHECK, else a burst node);
        returns the regions that need a scheduling pass."""
        run = self.run
        if kind == BURST_CHECK:
            return [list(run.regions)[payload]]
        b, pool = payload, self.pools[self.pool_of[payload]]
        fleet, node = run.regions[pool.region], np.asarray([self.node[payload]], np.int64)
        if kind == BURST_UP:
            self._give(fleet, node)
            self.state[b], self.idle_since[b] = "up", None
            self.current[b]["up_s"] = now
            run.freed[pool.region] = True
            return [pool.region]
        since = self.idle_since[b]
        if self.state[b] != "up" or since is None or now - since < pool.idle_release_min * 60.0 \
                or not fleet.state.entirely_free[node[0]]:
            return []  # a job used it since, or a later deadline stands
        self._take(fleet, node)
        self.state[b], self.idle_since[b] = "down", None
        self.current[b]["returned_s"] = now
        self.current[b] = None
        return [pool.region]

    def result(self) -> dict[str, object]:
        return {"burst": self.table()}

    def table(self) -> pd.DataFrame:
        """One row per rental (see the module docstring)."""
        return pd.DataFrame(self.rentals, columns=["region", "node", "gpu_type", "gpus", "usd_per_gpu_hour",
                                                   "rented_s", "up_s", "returned_s", "trigger_job_id"])
