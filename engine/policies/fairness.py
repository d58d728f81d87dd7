"""Fair-share queue orders (family "order"): "drf", "wfq", "max-min", "lottery" and "fair-tree".

Each orders the waiting jobs of a region by a fair-share criterion over teams, read from the usage
ledger (`QueueView.shares`, engine.core.views.ShareView) and re-evaluated at every pass. Within a team
jobs go first come, first served, and a team's k-th waiting job is keyed as if the k-1 jobs of that
team ahead of it had already started ("progressive filling": cumulative demand within the team in
submit order), so one pass interleaves the teams as the criterion says. Ties end with the submit
time, then the job id (`queue_order`).

- drf: Dominant Resource Fairness (Ghodsi et al., NSDI'11) over GPUs, CPU cores and GiB of memory:
  dominant share = max over resources of (held now in the region + the team's queued demand up to
  and including this job) / region capacity, over the team's weight; lowest first. A resource the
  region has none of is ignored.
- wfq: start-time fair queuing (Goyal et al., SIGCOMM'96) on GPU-seconds. A team's start tag is
  max(served / weight, V) and its k-th job's tag adds the cost of its k-1 earlier jobs over the
  weight; cost = GPUs x requested runtime, the runtime clipped to [1 s, max_cost_s] (an unknown,
  infinite request costs max_cost_s). V, the system virtual time, is the least served / weight among
  the teams running in the region: a team returning from idleness starts at V and gets no credit for
  the time it asked for nothing (with nothing running V = 0, which changes nothing). Lowest tag
  first.
- max-min: weighted max-min fairness: the region's GPUs are water-filled over the teams' demands
  (GPUs held + queued) in proportion to their weights; key = (held + the team's queued GPUs up to and
  including this job) / the team's fair allocation, so jobs within their team's fair level (<= 1) go
  first, the team furthest below it first. A job asking no GPUs of a team holding none keys 0; a
  team with no allocation keys +inf.
- lottery: lottery scheduling (Waldspurger and Weihl, OSDI'94): each team holds tickets = its weight
  and each draw picks one of the teams with jobs left with probability tickets / tickets left; the
  winner's next job (FCFS) goes. Drawn at once with exponential clocks: the team's k-th job keys the
  sum of its first k draws E / weight, E = -ln(u) ~ Exp(1), the log form of Efraimidis-Spirakis
  keys u^(1/w), lowest first. u is a hash of (ledger seed, job id, now_s): reproducible, independent
  of call history, redrawn whenever the clock moves.
- fair-tree: hierarchical fair share organisation -> team -> project -> user, as Slurm's Fair Tree
  (https://slurm.schedmd.com/fair_tree.html). At each level a node's level fairshare LF = S / U
  against its siblings: S its share of the siblings' shares, U its share of their decayed usage
  (LF = +inf when U = 0); jobs sort by (-LF_org, -LF_team, -LF_project, -LF_user, submit), which
  merges the children of tied siblings as Fair Tree does. Simplifications: organisations weigh the
  sum of their teams' weights and siblings are every organisation and, within one, every team of the
  ledger; project and user codes are fleet-wide with no parent in the ledger, so a project's
  siblings are the projects with jobs queued here under the same team (equal shares), and a user's
  the users with jobs queued here under the same team and project (equal shares); their usage is the
  fleet-wide decayed usage of that project or user, whichever team it was used for.

Every order accepts `boost_after_s` (engine.policies.priority): jobs that waited that long go first.
Without a ledger (`queue.shares is None`) all jobs belong to one idle team of weight 1, so each
order is FCFS. All times are seconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.views import QueueView, ShareView
from engine.policies.priority import DAY_S, boost_field, boost_first, check_parameters, starving
from engine.policies.registry import register

FAMILY = "order"
_MASK64 = (1 << 64) - 1


def _ledger(queue: QueueView) -> tuple[ShareView, np.ndarray, np.ndarray, np.ndarray]:
    """The ledger and the team, project and user codes; one idle team, project and user without one."""
    if queue.shares is None:
        zeros = np.zeros(len(queue), np.int64)
        return ShareView.single(), zeros, zeros, zeros
    return queue.shares, queue.team, queue.project, queue.user


def cumulative_in_team(queue: QueueView, team: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per job, the sum of `values` (shape (..., n)) over its team's jobs submitted up to it, itself included."""
    order = np.lexsort((queue.index, queue.submit_s, team))     # by team, then submit, then job id
    ordered = values[..., order]
    running = np.cumsum(ordered, axis=-1)
    starts = np.r_[True, team[order][1:] != team[order][:-1]] if len(order) else np.zeros(0, bool)
    before_team = (running - ordered)[..., starts]
    within = running - before_team[..., np.cumsum(starts) - 1]
    result = np.empty_like(within)
    result[..., order] = within
    return result


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, with 0 / 0 = 0 and x / 0 = +inf for x > 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.where(numerator > 0, np.inf, 0.0))


def _keys(policy, queue: QueueView, now_s: float, fair: np.ndarray) -> np.ndarray:
    """(boost, fair key, submit) with the emergency boost of `policy.boost_after_s`."""
    boosted = starving(queue, now_s, policy.boost_after_s)
    return boost_first(np.vstack([fair, queue.submit_s]), queue, now_s, boosted)


@register(FAMILY, "drf")
@dataclass(frozen=True)
class DominantResourceFairness:
    """Dominant Resource Fairness over GPUs, CPUs and memory: the team with the lowest weighted
    dominant share (counting its queued jobs ahead) first; FCFS within a team."""

    boost_after_s: float = boost_field()

    def __post_init__(self) -> None:
        check_parameters(self, non_negative=("boost_after_s",))

    def dominant_share(self, queue: QueueView) -> np.ndarray:
        """Per job: its team's weighted dominant share once it and the team's jobs ahead of it run."""
        shares, team, _, _ = _ledger(queue)
        capacity = np.array([shares.capacity_gpus, shares.capacity_cpus, shares.capacity_memory_gib])
        held = np.stack([shares.running_gpus, shares.running_cpus, shares.running_memory_gib])[:, team]
        held = held + cumulative_in_team(queue, team, np.stack([queue.size, queue.cpus, queue.memory_gib]))
        counted = capacity > 0
        dominant = (held[counted] / capacity[counted, None]).max(axis=0, initial=0.0)
        return dominant / shares.weight[team]

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return _keys(self, queue, now_s, self.dominant_share(queue))


@register(FAMILY, "wfq")
@dataclass(frozen=True)
class WeightedFairQueuing:
    """Weighted fair queuing (start-time fair queuing) on GPU-seconds: lowest virtual start tag
    first, so teams are served in proportion to their weights; FCFS within a team."""

    max_cost_s: float = field(default=7 * DAY_S, metadata={
        "help": "longest requested runtime a job is charged for (unknown requests count this), s"})
    boost_after_s: float = boost_field()

    def __post_init__(self) -> None:
        check_parameters(self, non_negative=("boost_after_s",), positive=("max_cost_s",))

    def start_tags(self, queue: QueueView) -> np.ndarray:
        """Per job: its virtual start tag, GPU-seconds per unit of weight."""
        shares, team, _, _ = _ledger(queue)
        served = shares.served_gpu_s / shares.weight
        running = shares.running_gpus > 0
        virtual = served[running].min() if running.any() else 0.0
        cost = queue.size * np.clip(queue.requested_s, 1.0, self.max_cost_s)
        earlier = cumulative_in_team(queue, team, cost) - cost
        return np.maximum(served, virtual)[team] + earlier / shares.weight[team]

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return _keys(self, queue, now_s, self.start_tags(queue))


def water_fill(capacity: float, demand: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Weighted max-min fair allocation of `capacity` over `demand` (weights > 0): each gets
    min(demand, level x weight) with the level that hands out the whole capacity (or every demand,
    when the capacity covers them all)."""
    demand = np.maximum(demand, 0.0)
    if demand.sum() <= capacity:
        return demand.astype(np.float64)
    order = np.argsort(demand / weight, kind="stable")
    d, w = demand[order], weight[order]
    given_before = np.cumsum(d) - d
    weight_left = np.cumsum(w[::-1])[::-1]
    level = (capacity - given_before) / weight_left
    first_unsatisfied = np.flatnonzero(d / w > level)[0]
    return np.minimum(demand, level[first_unsatisfied] * weight)


@register(FAMILY, "max-min")
@dataclass(frozen=True)
class MaxMinFairness:
    """Weighted max-min fairness: GPUs water-filled over the teams' demands; jobs within their
    team's fair allocation first, the team furthest below it first; FCFS within a team."""

    boost_after_s: float = boost_field()

    def __post_init__(self) -> None:
        check_parameters(self, non_negative=("boost_after_s",))

    def fair_allocation(self, queue: QueueView) -> np.ndarray:
        """Per team of the ledger: its fair share of the region's GPUs, GPUs."""
        shares, team, _, _ = _ledger(queue)
        demand = shares.running_gpus + np.bincount(team, queue.size, minlength=len(shares.weight))
        return water_fill(shares.capacity_gpus, demand, shares.weight)

    def fill_ratio(self, queue: QueueView) -> np.ndarray:
        """Per job: its team's GPUs once it and the team's jobs ahead of it run, over the fair allocation."""
        shares, team, _, _ = _ledger(queue)
        held = shares.running_gpus[team] + cumulative_in_team(queue, team, queue.size)
        return _ratio(held, self.fair_allocation(queue)[team])

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return _keys(self, queue, now_s, self.fill_ratio(queue))


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser (Steele et al. 2014), elementwise on uint64 arrays."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def uniforms(seed: int, index: np.ndarray, now_s: float) -> np.ndarray:
    """One u in (0, 1) per job id, a hash of (seed, job id, the bits of now_s)."""
    state = _splitmix64(np.array([int(seed) & _MASK64], np.uint64))
    state = _splitmix64(state ^ np.array([now_s], np.float64).view(np.uint64))
    bits = _splitmix64(state ^ np.asarray(index, np.int64).astype(np.uint64))
    return ((bits >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53


@register(FAMILY, "lottery")
@dataclass(frozen=True)
class LotteryScheduling:
    """Lottery scheduling, seeded: each draw picks a team with probability proportional to its
    weight (tickets) among the teams with jobs left; FCFS within a team."""

    boost_after_s: float = boost_field()

    def __post_init__(self) -> None:
        check_parameters(self, non_negative=("boost_after_s",))

    def draw_times(self, queue: QueueView, now_s: float) -> np.ndarray:
        """Per job: when its team's clock reaches it, the sum of the team's draws up to it; lowest first."""
        shares, team, _, _ = _ledger(queue)
        draws = -np.log(uniforms(shares.seed, queue.index, now_s)) / shares.weight[team]
        return cumulative_in_team(queue, team, draws)

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        return _keys(self, queue, now_s, self.draw_times(queue, now_s))


def _level_fairshare(share: np.ndarray, usage: np.ndarray, share_total: np.ndarray,
                     usage_total: np.ndarray) -> np.ndarray:
    """LF = (share / share_total) / (usage / usage_total); +inf when the usage share is 0."""
    used = _ratio(usage, usage_total)
    with np.errstate(divide="ignore"):
        return np.where(used > 0, (share / share_total) / np.where(used > 0, used, 1.0), np.inf)


def _children_fairshare(parent: np.ndarray, child: np.ndarray, usage: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per job, LF of its (parent, child) node among the nodes of the same parent that have queued
    jobs (equal shares, `usage` per child code), and a code of that node."""
    width = max(len(usage), 1)
    node, inverse = np.unique(parent * width + child, return_inverse=True)
    node_parent, node_usage = node // width, usage[node % width]
    siblings = np.bincount(node_parent)[node_parent].astype(np.float64)
    sibling_usage = np.bincount(node_parent, node_usage)[node_parent]
    lf = _level_fairshare(np.ones(len(node)), node_usage, siblings, sibling_usage)
    return lf[inverse.reshape(-1)], inverse.reshape(-1)


@register(FAMILY, "fair-tree", reads_members=True)
@dataclass(frozen=True)
class FairTree:
    """Hierarchical fair share, organisation -> team -> project -> user, as Slurm's Fair Tree: at
    each level the sibling with the highest share / usage first; FCFS at the leaves."""

    half_life_s: float = field(default=7 * DAY_S, metadata={"help": "half-life of the decayed usage, s"})
    boost_after_s: float = boost_field()

    def __post_init__(self) -> None:
        check_parameters(self, non_negative=("boost_after_s",), positive=("half_life_s",))

    def level_fairshare(self, queue: QueueView) -> np.ndarray:
        """(4, n): each job's LF at the organisation, team, project and user levels."""
        shares, team, project, user = _ledger(queue)
        org_weight = np.bincount(shares.org, shares.weight, minlength=len(shares.orgs))
        org_usage = np.bincount(shares.org, shares.usage_gpu_s, minlength=len(shares.orgs))
        lf_org = _level_fairshare(org_weight, org_usage, org_weight.sum(), org_usage.sum())
        lf_team = _level_fairshare(shares.weight, shares.usage_gpu_s, org_weight[shares.org],
                                   org_usage[shares.org])
        lf_project, team_project = _children_fairshare(team, project, shares.project_usage_gpu_s)
        lf_user, _ = _children_fairshare(team_project, user, shares.user_usage_gpu_s)
        return np.stack([lf_org[shares.org[team]], lf_team[team], lf_project, lf_user])

    def keys(self, queue: QueueView, now_s: float) -> np.ndarray:
        levels = np.vstack([-self.level_fairshare(queue), queue.submit_s])
        return boost_first(levels, queue, now_s, starving(queue, now_s, self.boost_after_s))
