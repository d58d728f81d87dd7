"""The cheapest reserved / on-demand / spot fleet that serves an hour-of-week demand profile (MILP).

Per pool p (region, gpu_type; g = GPUs per node) and hour h of a cyclic week (the profile's
hours: 168 in production, fewer in hand-made instances), with D = max_defer_h and demand scaled by
the pool's headroom:

    integers    R_p, O_p, S_p >= 0          reserved, on-demand and spot nodes (see below)
    continuous  r, o, s >= 0                GPUs used per tier in hour h
                f >= 0                      deferrable (flexible) GPUs served in hour h
                b                           deferred GPU-hours still waiting at the end of hour h

    r + o + s = headroom * firm_h + f_h     every hour's work is served ...
    s <= f                                  ... spot only serves deferrable work
    b_h = b_{h-1} + headroom * flex_h - f_h (cyclic: b_{-1} = b_{H-1})
    0 <= b_h <= headroom * (flex over hours h-D+1 .. h)   nothing waits more than D hours (FIFO);
                                            D = 0 forces f = flex
    r <= g R,  o <= g O,  s <= spot_efficiency g S
    min_reserved_nodes <= R <= max_reserved_nodes,  g O <= max_on_demand_gpus,  g S <= max_spot_gpus
    R + O + S >= min_nodes                  the pool is wide enough for its widest gang

    minimise  sum_p [ H g reserved_usd R + sum_h (on_demand_usd o + spot_usd s / spot_efficiency) ]
              + eps sum_p (O + S)

Prices are USD per GPU-hour; reserved GPUs are paid every hour, used or not; on-demand GPUs only
while used; spot GPUs while held, and only `spot_efficiency` of those hours become useful work
(the rest is lost to interruptions and re-run), hence spot_usd / spot_efficiency per useful
GPU-hour. The cost is that of one cycle of the profile: a week for a 168-hour profile.

On-demand and spot nodes cost nothing by themselves (their hours do), so any O, S above the peak
use would be as cheap; the tie-break eps (O + S) asks for the least. Per pool, eps = 5e-7 x a
lower bound on the pool's cost (its demand GPU-hours at its cheapest rate, or its committed
reserved nodes) / an upper bound on its O + S (its peak servable GPUs over g and over eff g, plus
min_nodes), so the tie-break moves the optimum by at most 5e-7 relative (on the sample: by less
than 1e-12). HiGHS's tolerances are absolute, so the whole objective is scaled to make that cost
bound 1e6: without it the tie-break drowns in them and the caps come out far above the least.

Only R is declared integer to the solver. O and S enter only through o <= g O and s <= eff g S
and their caps floor(max_gpus / g), so a dispatch is feasible with integer O, S exactly when it
is with continuous ones. The program solves them continuous (on the sample with max_defer_h = 4,
HiGHS needs 12-13 s instead of running into the 30 s limit) and the plan reports
O = ceil(max_h o / g) and S = ceil(max_h s / (eff g)), the least whole nodes that carry the
chosen dispatch; eps makes that dispatch one of the least peaked among the equally cheap ones.
Where that leaves the pool below min_nodes, the missing nodes are added as on-demand (within its
cap), then spot: they carry no work in the hourly dispatch, and on-demand and spot hours are paid
only when used, so they cost nothing in this model (the program checked they fit the caps).

Pools are independent (nothing couples them), so each is solved as its own program (a sparse
constraint matrix, HiGHS via `scipy.optimize.milp`): the same optimum as one program over all
pools, 6-7 times faster on the sample (HiGHS spends its time in cuts and heuristics at the top of
a large search). An infeasible instance (caps too small) raises ValueError naming the pool
and the first hour it cannot serve, found by re-solving with the caps at their limits and an
unserved-GPUs slack. tests/test_fleet_milp.py checks the answers against brute force.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from engine.service.planning.demand import DemandProfile

TIERS = ("reserved", "on-demand", "spot")
_EPS_SHARE = 5e-7
_SCALED_COST = 1e6
_MIP_GAP = 1e-8
_TOL = 1e-7


@dataclass(frozen=True)
class PoolOptions:
    """What one pool (region, gpu_type) may buy, and at what price (USD per GPU-hour)."""

    region: str
    gpu_type: str
    gpus_per_node: int
    reserved_usd: float
    on_demand_usd: float
    spot_usd: float
    max_on_demand_gpus: float = field(default=math.inf, metadata={"help": "most on-demand GPUs the pool may hold"})
    max_spot_gpus: float = field(default=math.inf, metadata={"help": "most spot GPUs the pool may hold"})
    min_reserved_nodes: int = field(default=0, metadata={"help": "reserved nodes already committed to"})
    max_reserved_nodes: float = field(default=math.inf, metadata={"help": "most reserved nodes on offer"})
    min_nodes: int = field(default=0, metadata={
        "help": "fewest nodes of the pool in all tiers (e.g. the widest gang job's nodes)"})
    spot_efficiency: float = field(default=0.9, metadata={
        "help": "share of spot GPU-hours that become useful work (the rest is lost to interruptions)"})

    @property
    def name(self) -> str:
        return f"{self.region}/{self.gpu_type}"


@dataclass(frozen=True)
class FleetPlan:
    """The chosen fleet and its hourly dispatch.

    reserved_nodes, on_demand_nodes, spot_nodes: int per pool (`pools` order); served: tier ->
    (pools, hours) GPUs used; backlog: (pools, hours) deferred GPU-hours waiting at the end of
    each hour; weekly_cost_usd: cost of one cycle of the profile (without the tie-break);
    cost_by_pool_tier: region, gpu_type, tier, nodes, gpus, weekly_usd; status: "optimal" or
    why the solver stopped early; solve_s: wall time of the solve.
    """

    pools: tuple[tuple[str, str], ...]
    reserved_nodes: np.ndarray
    on_demand_nodes: np.ndarray
    spot_nodes: np.ndarray
    served: dict[str, np.ndarray]
    backlog: np.ndarray
    weekly_cost_usd: float
    cost_by_pool_tier: pd.DataFrame
    status: str
    solve_s: float


@dataclass(frozen=True)
class _Instance:
    """Per-pool arrays of one program: demand (P, H) already scaled by headroom, options (P,)."""

    pools: tuple[tuple[str, str], ...]
    firm: np.ndarray
    flex: np.ndarray
    backlog_cap: np.ndarray
    g: np.ndarray
    price: np.ndarray  # (P, 3): reserved, on-demand, spot per GPU-hour
    efficiency: np.ndarray
    node_lo: np.ndarray  # (P, 3) node bounds per tier
    node_hi: np.ndarray
    min_nodes: np.ndarray  # (P,) fewest nodes in all tiers

    @property
    def shape(self) -> tuple[int, int]:
        return self.firm.shape


def _window_sums(values: np.ndarray, width: int) -> np.ndarray:
    """Cyclic sums of the last `width` hours ending at each hour (width capped at the cycle)."""
    hours = values.shape[1]
    width = min(width, hours)
    padded = np.concatenate((values[:, hours - width:], values), axis=1)
    cum = np.concatenate((np.zeros((len(values), 1)), np.cumsum(padded, axis=1)), axis=1)
    return cum[:, width + 1:] - cum[:, 1:hours + 1]


def _instance(profile: DemandProfile, pools: list[PoolOptions], max_defer_h: int, headroom) -> _Instance:
    by_pool = {(o.region, o.gpu_type): o for o in pools}
    if len(by_pool) != len(pools):
        raise ValueError("two PoolOptions for the same (region, gpu_type)")
    shape = (len(profile.pools), profile.hours)
    if profile.firm.shape != shape or profile.flexible.shape != shape:
        raise ValueError(f"firm and flexible demand must both be (pools, hours) = {shape}")
    missing = [f"{r}/{t}" for r, t in profile.pools if (r, t) not in by_pool]
    if missing:
        raise ValueError(f"no PoolOptions for pools with demand: {', '.join(missing)}")
    names = tuple(sorted(set(profile.pools) | set(by_pool)))
    hours = profile.hours
    row = {pool: i for i, pool in enumerate(profile.pools)}
    firm, flex = np.zeros((len(names), hours)), np.zeros((len(names), hours))
    for i, pool in enumerate(names):
        if pool in row:
            firm[i], flex[i] = profile.firm[row[pool]], profile.flexible[row[pool]]
    if not (np.isfinite(firm).all() and np.isfinite(flex).all()) or (firm < 0).any() or (flex < 0).any():
        raise ValueError("demand must be finite and >= 0")
    if isinstance(headroom, Mapping):
        headroom = [headroom.get(pool, 1.0) for pool in names]
    scale = np.broadcast_to(np.asarray(headroom, dtype=float), (len(names),))
    if (scale <= 0).any() or not np.isfinite(scale).all():
        raise ValueError("headroom must be > 0")
    if max_defer_h < 0:
        raise ValueError("max_defer_h must be >= 0")
    firm, flex = firm * scale[:, None], flex * scale[:, None]
    opts = [by_pool[p] for p in names]
    g = np.array([o.gpus_per_node for o in opts], dtype=float)
    node_lo, node_hi = _node_bounds(opts, g)
    return _Instance(
        pools=names, firm=firm, flex=flex, backlog_cap=_window_sums(flex, max_defer_h),
        g=g, price=np.array([[o.reserved_usd, o.on_demand_usd, o.spot_usd] for o in opts], dtype=float),
        efficiency=np.array([o.spot_efficiency for o in opts], dtype=float),
        node_lo=node_lo, node_hi=node_hi, min_nodes=np.array([o.min_nodes for o in opts], dtype=float),
    )


def _node_bounds(opts: list[PoolOptions], g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P, 3) lower and upper bounds on reserved, on-demand and spot nodes; ValueError on options
    that no fleet can meet."""
    node_hi = np.array([[o.max_reserved_nodes, o.max_on_demand_gpus, o.max_spot_gpus] for o in opts], dtype=float)
    node_hi[:, 1:] = np.floor(node_hi[:, 1:] / g[:, None] + 1e-9)
    node_hi[:, 0] = np.floor(node_hi[:, 0])
    node_lo = np.zeros_like(node_hi)
    node_lo[:, 0] = [o.min_reserved_nodes for o in opts]
    for o, most in zip(opts, node_hi.sum(axis=1)):
        if o.gpus_per_node <= 0 or not 0 < o.spot_efficiency <= 1:
            raise ValueError(f"pool {o.name}: gpus_per_node must be > 0 and spot_efficiency in (0, 1]")
        if o.min_reserved_nodes > o.max_reserved_nodes:
            raise ValueError(f"pool {o.name}: min_reserved_nodes {o.min_reserved_nodes} > "
                             f"max_reserved_nodes {o.max_reserved_nodes:g}")
        if o.min_nodes > most:
            raise ValueError(f"pool {o.name}: min_nodes {o.min_nodes} > the {most:g} nodes its caps allow")
    return node_lo, node_hi


def _matrix(inst: _Instance, slack: bool) -> sp.csr_matrix:
    """Rows (each P x H, pool-major): balance, spot <= flexible, backlog, three capacity rows;
    then P rows R + O + S (min_nodes).

    Columns: R, O, S (P each), then r, o, s, f, b (P x H each), then the slack u when asked.
    """
    n_pools, hours = inst.shape
    eye = sp.identity(n_pools * hours, format="csr")
    shift = sp.csr_matrix((np.ones(hours), (np.arange(hours), (np.arange(hours) - 1) % hours)), shape=(hours, hours))
    previous = sp.kron(sp.identity(n_pools), shift, format="csr")
    pools = sp.identity(n_pools, format="csr")
    per_node = sp.kron(sp.diags(inst.g), np.ones((hours, 1)), format="csr")
    spot_node = sp.kron(sp.diags(inst.g * inst.efficiency), np.ones((hours, 1)), format="csr")
    blocks = [
        [None, None, None, eye, eye, eye, -eye, None],
        [None, None, None, None, None, eye, -eye, None],
        [None, None, None, None, None, None, eye, eye - previous],
        [-per_node, None, None, eye, None, None, None, None],
        [None, -per_node, None, None, eye, None, None, None],
        [None, None, -spot_node, None, None, eye, None, None],
        [pools, pools, pools, None, None, None, None, None],
    ]
    if slack:
        blocks = [row + [eye if i == 0 else None] for i, row in enumerate(blocks)]
    return sp.bmat(blocks, format="csr")


def _row_bounds(inst: _Instance) -> tuple[np.ndarray, np.ndarray]:
    n = inst.firm.size
    zeros, inf = np.zeros(n), np.full(n, np.inf)
    lo = np.concatenate((inst.firm.ravel(), -inf, inst.flex.ravel(), -inf, -inf, -inf, inst.min_nodes))
    hi = np.concatenate((inst.firm.ravel(), zeros, inst.flex.ravel(), zeros, zeros, zeros,
                         np.full(len(inst.min_nodes), np.inf)))
    return lo, hi


def _flow_bounds(inst: _Instance) -> tuple[np.ndarray, np.ndarray]:
    n = inst.firm.size
    return np.zeros(5 * n), np.concatenate((np.full(4 * n, np.inf), inst.backlog_cap.ravel()))


def _objective(inst: _Instance, max_defer_h: int) -> np.ndarray:
    """Costs of all columns and the tie-break (see the module docstring), scaled so that the cost's
    lower bound is _SCALED_COST (HiGHS's tolerances are absolute)."""
    n_pools, hours = inst.shape
    cheapest = np.minimum.reduce([inst.price[:, 0], inst.price[:, 1], inst.price[:, 2] / inst.efficiency])
    lower = np.maximum(hours * inst.g * inst.price[:, 0] * inst.node_lo[:, 0],
                       cheapest * (inst.firm + inst.flex).sum(axis=1))
    peak = inst.firm.max(axis=1, initial=0.0) + _window_sums(inst.flex, max_defer_h + 1).max(axis=1, initial=0.0)
    nodes = np.ceil(peak / inst.g) + np.ceil(peak / (inst.g * inst.efficiency)) + 2 + inst.min_nodes
    scale = _SCALED_COST / lower.sum() if lower.sum() > 0 else 1.0
    eps = scale * _EPS_SHARE * np.where(lower > 0, lower, inst.g * inst.price.min(axis=1)) / nodes
    return np.concatenate((scale * hours * inst.g * inst.price[:, 0], eps, eps,
                           np.zeros(n_pools * hours),
                           scale * np.repeat(inst.price[:, 1], hours),
                           scale * np.repeat(inst.price[:, 2] / inst.efficiency, hours),
                           np.zeros(2 * n_pools * hours)))


def _solve(inst: _Instance, max_defer_h: int, time_limit_s: float):
    n_pools, hours = inst.shape
    flow_lo, flow_hi = _flow_bounds(inst)
    row_lo, row_hi = _row_bounds(inst)
    return milp(
        _objective(inst, max_defer_h),
        constraints=LinearConstraint(_matrix(inst, slack=False), row_lo, row_hi),
        integrality=np.concatenate((np.ones(n_pools), np.zeros(2 * n_pools + 5 * n_pools * hours))),
        bounds=Bounds(np.concatenate((inst.node_lo.T.ravel(), flow_lo)),
                      np.concatenate((inst.node_hi.T.ravel(), flow_hi))),
        options={"time_limit": time_limit_s, "mip_rel_gap": _MIP_GAP},
    )


def _shortfall(inst: _Instance) -> ValueError | None:
    """The first pool and hour that cannot be served with every cap at its limit (None: none)."""
    n_pools, hours = inst.shape
    n = n_pools * hours
    fixed = np.isfinite(inst.node_hi)
    node_lo = np.where(fixed, inst.node_hi, 0.0).T.ravel()
    flow_lo, flow_hi = _flow_bounds(inst)
    row_lo, row_hi = _row_bounds(inst)
    res = milp(np.concatenate((np.zeros(3 * n_pools + 5 * n), np.ones(n))),
               constraints=LinearConstraint(_matrix(inst, slack=True), row_lo, row_hi),
               bounds=Bounds(np.concatenate((node_lo, flow_lo, np.zeros(n))),
                             np.concatenate((inst.node_hi.T.ravel(), flow_hi, np.full(n, np.inf)))))
    short = res.x[-n:].reshape(n_pools, hours) if res.x is not None else np.zeros((n_pools, hours))
    where = np.argwhere(short > _TOL)
    if not len(where):
        return None
    p, h = where[0]
    region, gpu_type = inst.pools[p]
    lo, hi = inst.node_lo[p], inst.node_hi[p]
    return ValueError(
        f"pool {region}/{gpu_type} cannot serve its demand at hour {h}: {short[p, h]:.6g} GPUs short "
        f"with at most {hi[0]:g} reserved (at least {lo[0]:g}), {hi[1]:g} on-demand and {hi[2]:g} spot "
        f"nodes of {inst.g[p]:g} GPUs; raise a cap, allow more deferral or lower the headroom")


def _plan(inst: _Instance, x: np.ndarray, status: str, solve_s: float) -> FleetPlan:
    n_pools, hours = inst.shape
    flows = np.maximum(x[3 * n_pools:].reshape(5, n_pools, hours), 0.0)
    reserved_used, on_demand, spot = flows[0], flows[1], flows[2]
    reserved = np.rint(x[:n_pools]).astype(np.int64)
    on_demand_nodes = np.ceil(on_demand.max(axis=1, initial=0.0) / inst.g - _TOL).astype(np.int64)
    spot_nodes = np.ceil(spot.max(axis=1, initial=0.0) / (inst.g * inst.efficiency) - _TOL).astype(np.int64)
    missing = np.maximum(inst.min_nodes.astype(np.int64) - reserved - on_demand_nodes - spot_nodes, 0)
    extra = np.minimum(missing, inst.node_hi[:, 1] - on_demand_nodes).astype(np.int64)
    on_demand_nodes, spot_nodes = on_demand_nodes + extra, spot_nodes + missing - extra
    nodes = np.stack((reserved, on_demand_nodes, spot_nodes), axis=1)
    usd = np.stack((hours * inst.g * inst.price[:, 0] * reserved, inst.price[:, 1] * on_demand.sum(axis=1),
                    inst.price[:, 2] / inst.efficiency * spot.sum(axis=1)), axis=1)
    table = pd.DataFrame({
        "region": np.repeat([p[0] for p in inst.pools], len(TIERS)),
        "gpu_type": np.repeat([p[1] for p in inst.pools], len(TIERS)),
        "tier": np.tile(TIERS, n_pools),
        "nodes": nodes.ravel(),
        "gpus": (nodes * inst.g[:, None]).ravel(),
        "weekly_usd": usd.ravel(),
    })
    return FleetPlan(
        pools=inst.pools, reserved_nodes=reserved, on_demand_nodes=on_demand_nodes, spot_nodes=spot_nodes,
        served=dict(zip(TIERS, (reserved_used, on_demand, spot))), backlog=flows[4],
        weekly_cost_usd=float(usd.sum()), cost_by_pool_tier=table, status=status, solve_s=solve_s,
    )


def optimise_fleet(profile: DemandProfile, pools: list[PoolOptions], *, max_defer_h: int = 0, headroom=1.0,
                   time_limit_s: float = 30) -> FleetPlan:
    """The cheapest fleet serving `profile` (see the module docstring) over the profile's pools and
    any pool with options but no demand. headroom scales demand: a scalar, one value per plan pool
    (sorted (region, gpu_type) order, as FleetPlan.pools) or a {(region, gpu_type): factor} mapping
    (missing pools: 1). time_limit_s bounds each pool's solve."""
    inst = _instance(profile, pools, max_defer_h, headroom)
    started = time.perf_counter()
    plans = [_solve_pool(_one_pool(inst, i), max_defer_h, time_limit_s) for i in range(len(inst.pools))]
    return _merged(plans, time.perf_counter() - started)


def _one_pool(inst: _Instance, i: int) -> _Instance:
    """The instance of pool i alone (every per-pool array sliced to [i])."""
    return _Instance(**{name: value[i:i + 1] for name, value in vars(inst).items()})


def _solve_pool(inst: _Instance, max_defer_h: int, time_limit_s: float) -> FleetPlan:
    res = _solve(inst, max_defer_h, time_limit_s)
    if res.x is None:
        error = _shortfall(inst) if res.status != 1 else None
        if error is not None:
            raise error
        region, gpu_type = inst.pools[0]
        raise RuntimeError(f"the fleet program of {region}/{gpu_type} stopped without a plan: {res.message}")
    status = "optimal" if res.status == 0 else f"stopped early ({res.message}); MIP gap {res.mip_gap:.2g}"
    return _plan(inst, res.x, status, 0.0)


def _merged(plans: list[FleetPlan], solve_s: float) -> FleetPlan:
    """One plan of the pools' plans, in pool order; status "optimal" unless some pool stopped early."""
    early = [f"{'/'.join(p.pools[0])}: {p.status}" for p in plans if p.status != "optimal"]
    return FleetPlan(
        pools=tuple(pool for p in plans for pool in p.pools),
        reserved_nodes=np.concatenate([p.reserved_nodes for p in plans]),
        on_demand_nodes=np.concatenate([p.on_demand_nodes for p in plans]),
        spot_nodes=np.concatenate([p.spot_nodes for p in plans]),
        served={tier: np.concatenate([p.served[tier] for p in plans]) for tier in TIERS},
        backlog=np.concatenate([p.backlog for p in plans]),
        weekly_cost_usd=float(sum(p.weekly_cost_usd for p in plans)),
        cost_by_pool_tier=pd.concat([p.cost_by_pool_tier for p in plans], ignore_index=True),
        status="; ".join(early) or "optimal", solve_s=solve_s)
