"""Eviction planning: which running jobs to evict so that a waiting job fits (engine.policies.preemption).

The preemption policy names the running jobs it would evict, most willingly first. The planner
then finds the fewest of them that make room, the way kube-scheduler picks a node for a
preemptor: for a one-pod job it visits nodes in the order of their most willing victim and, on
each, takes victims in the policy's order until the pod fits there (a pod that fits after evicting
the victims on one node ends the search; the first 32 candidate nodes are tried). For a gang job it
needs whole free nodes: it takes the nodes big enough for one pod whose occupants are all victims,
fewest victims first, and under a cluster step all in one cluster that holds it (the cluster step
would not let it span clusters; a one-pod job's plan frees room on one node, so in a cluster the step
can pick). The plan is computed on the live fleet state by releasing victims and putting
them back exactly (nothing is evicted unless the plan succeeds). A job of a [partitions] MIG rule
needs an instance: engine.sim.cycle.preempt_mig plans its victims by the slices they hold.
"""
from __future__ import annotations

import bisect
from array import array

import numpy as np

from engine.core.fleet_view import fits_on
from engine.sim.cycle.preempt_mig import plan_mig

MAX_NODES = 32


class Planner:
    """Nodes' occupants in every region, and plans of evictions for one run."""

    def __init__(self, regions: dict, qclass: list[int], n_classes: int) -> None:
        """`qclass[j]`: job j's queue class, one of `n_classes`."""
        self.occupants = {r: [set() for _ in range(len(f.names))] for r, f in regions.items()}
        # running jobs, ascending: a machine array, which numpy copies at C speed (engine.sim.state.running_view)
        self.jobs: dict[str, array] = {r: array("q") for r in regions}
        self.version = dict.fromkeys(regions, 0)  # bumped at every change of a region's running jobs
        self.qclass = qclass
        self.classes = {r: [0] * n_classes for r in regions}  # per region and queue class: its running jobs

    def occupy(self, region: str, j: int, nodes, sign: int) -> None:
        on, jobs = self.occupants[region], self.jobs[region]
        i = bisect.bisect_left(jobs, j)
        if sign > 0:
            for n in nodes:
                on[n].add(j)
            if i == len(jobs) or jobs[i] != j:
                jobs.insert(i, j)
                self.classes[region][self.qclass[j]] += 1
        else:
            for n in nodes:
                on[n].discard(j)
            if i < len(jobs) and jobs[i] == j:
                del jobs[i]
                self.classes[region][self.qclass[j]] -= 1
        self.version[region] += 1

    def plan(self, run, j: int, fleet, region: str, victims: list[int]) -> list[int] | None:
        """The victims (a prefix-wise choice from `victims`, in the policy's order) to evict so that
        job j fits in `fleet` now, or None when no choice makes room."""
        if not victims:
            return None
        if run.width[j] > 1:
            return self._plan_gang(run, j, fleet, region, victims)
        if run.partitions is not None and run.partitions.takes[j]:
            return plan_mig(self, run, j, fleet, region, victims)
        return self.plan_pod(run, run.request_of(j), run.pool_list[j], fleet, region, victims)

    def plan_pod(self, run, request, pool: int, fleet, region: str, victims: list[int],
                 allowed: np.ndarray | None = None) -> list[int] | None:
        """The victims to evict so that one pod of `request` (of `pool`) fits on a node (of `allowed`
        only, a mask; None: any), or None."""
        on_node: dict[int, list[int]] = {}  # the victims on each node, in the policy's order; the nodes in the
        for v in victims:  # order of their most willing victim (a dict keeps the order nodes are first met)
            for n in run.nodes_of[v]:
                here = on_node.setdefault(int(n), [])
                if not here or here[-1] != v:
                    here.append(v)
        nodes = [n for n in on_node if allowed is None or allowed[n]][:MAX_NODES]
        state = fleet.state
        for node in nodes:
            if pool > 0 and fleet.node_pool[node] != pool:
                continue
            here = on_node[node]
            cpu, memory, milli = (int(state.cpu_free[node]), int(state.memory_free[node]),
                                  int(state.gpu_free_total[node]))
            for v in here:  # what evicting all of them would free here: a bound before trying
                pods = run.pods[v]
                if isinstance(pods, tuple):
                    cpu, memory, milli = (cpu + pods[1].cpu_milli, memory + pods[1].memory_mib,
                                          milli + pods[1].total_gpu_milli)
                else:
                    cpu, memory, milli = int(state.cpu_total[node]), int(state.memory_total[node]), 10 ** 9
            if cpu < request.cpu_milli or memory < request.memory_mib or milli < request.total_gpu_milli:
                continue
            taken = []
            for v in here:
                run.unhold(v, fleet)
                taken.append(v)
                if fits_on(fleet.view, request, np.array([node]))[0]:
                    for t in reversed(taken):
                        run.rehold(t, fleet)
                    return taken
            for t in reversed(taken):
                run.rehold(t, fleet)
        return None

    def _plan_gang(self, run, j: int, fleet, region: str, victims: list[int]) -> list[int] | None:
        """Whole nodes for gang j. Under a cluster step, when some cluster holds the gang, its nodes
        must all be in one cluster (it never spans clusters then): the plan is made in each cluster
        that holds it, and the one evicting the fewest victims wins (ties: the lowest index)."""
        holds = None if run.clusters is None else run.clusters.holds(j, fleet)[0]
        if holds is None or not holds.any():
            return self._gang_in(run, j, fleet, region, victims, None)
        best = None
        for c in np.flatnonzero(holds).tolist():
            plan = self._gang_in(run, j, fleet, region, victims, fleet.cluster_codes == c)
            if plan is not None and (best is None or len(plan) < len(best)):
                best = plan
        return best

    def _gang_in(self, run, j: int, fleet, region: str, victims: list[int],
                 allowed_nodes: np.ndarray | None) -> list[int] | None:
        """The fewest-victims whole nodes for gang j among `allowed_nodes` (a mask; None: all)."""
        w = run.w
        spot_ok = run.spot_ok[j]
        free = fleet.whole_free_nodes(int(w.num_gpu[j]), int(w.cpu_milli[j]), int(w.memory_mib[j]),
                                      run.pool_list[j], spot_ok)
        if allowed_nodes is not None:
            free = free[allowed_nodes[free]]
        need = run.width[j] - len(free)
        if need <= 0:
            return []
        big = fleet.big_enough(int(w.num_gpu[j]), int(w.cpu_milli[j]), int(w.memory_mib[j]), run.pool_list[j], spot_ok)
        if allowed_nodes is not None:
            big = big & allowed_nodes
        allowed = set(victims)
        candidates = []
        for node in np.flatnonzero(big & ~fleet.state.entirely_free).tolist():
            on = self.occupants[region][node]
            if on and on <= allowed:
                candidates.append((len(on), node))
        if len(candidates) < need:
            return None
        chosen: list[int] = []
        for _, node in sorted(candidates)[:need]:
            chosen.extend(v for v in self.occupants[region][node] if v not in chosen)
        return sorted(chosen, key=victims.index)
