"""What a finished simulation's fleet costs: spend by region, tier and GPU type, idle dollars.

Notation. The measurement window is [0, W] seconds from the run's time 0 (`origin_utc`):
W = `SimulationResult.window_s`, or the last job end when that is 0 (as `sim_metrics.kpis`
measures utilisation); H = W / 3600 hours. Prices p(region, gpu_type, tier) are USD per GPU-hour.

  held GPUs of job j on node n:   g_jn = gpus_allocated_j x G_n / sum over j's nodes of G_n
                                  (G_n = the node's GPUs: a job's GPUs split over its nodes in
                                  proportion to their GPU counts; exact for gang jobs, which hold
                                  whole nodes, and for single-node jobs)
  held seconds of piece j:        t_j = max(min(end_j, W) - max(start_j, 0), 0)
                                  (j runs over the pieces of `SimulationResult.held()`: one per job,
                                  or one per segment of a job preempted and requeued, with that
                                  segment's nodes and GPUs; a piece still running at the end holds
                                  to W)
  used GPU-hours U of a group:    sum over (j, n) with n in the group of g_jn x t_j / 3600
  paid GPU-hours P of a group:    reserved:  N x H  (N = the group's installed GPUs; a commitment
                                             is paid every hour of the window, used or not)
                                  on-demand, spot:  P = U  (billed only while a job holds the GPU;
                                             each at its own price)
                                  burst (cloud nodes a [[burst]] pool rented, engine.analysis.runs.burst):
                                             P = the GPU-hours billed, from renting to return,
                                             at the rental's price; installed GPUs 0
  usd = P x p                     idle_usd = (P - U) x p   (non-zero only for reserved and burst GPUs); on-demand
                                  and spot GPU-hours held in their region's local off-peak hours cost
                                  p x (1 - discount) (engine.analysis.telemetry.offpeak; none by default)
  job usd = sum over j's nodes of g_jn x t_j / 3600 x p(node's region, type, tier) + egress_j
            (egress_j: the dollars of moving its input data to where it ran, engine.analysis.runs.egress,
            when the caller passes them; 0 otherwise)
  total usd = spend's usd + sum of egress_j + usd_storage   (usd_egress: the second term; usd_storage:
            the replicas' storage, engine.analysis.runs.data_kpis, when the caller passes it)
            so that  sum of job usd + idle_usd + usd_storage = total usd  (the reconciliation)
  effective $/GPU-hour  = total usd / total U
  productive $/GPU-hour = total usd / (U of jobs that completed (not failed), less the work their
                          preempted pieces lost: g_jn x the lost_s seconds before the eviction,
                          inside the window)
  annualise(x, W)       = x x annualisation_days x 86400 / W     (default 365 days)

Pieces are counted as `sim_metrics` counts utilisation; pieces run wholly or partly outside the
window count only inside it. Work is booked to the region, GPU type and tier of the node it ran on.
Prices: a matching `CostAssumptions.price_overrides` entry, else the dataset's prices table, else the
default price book (`engine.world.pricebook`); `price_assumed` marks dollars that rest on an assumed
price (flagged so in the table, an override, or the price book). The fleet passed in must be the
one the scenario ran on (`Scenario.apply`); a mismatch with the run's capacity is an error.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.analysis.runs import burst
from engine.analysis.runs.held import holding as held_pieces
from engine.analysis.telemetry.activity import normalise_keys
from engine.analysis.telemetry.idle import price_table
from engine.analysis.telemetry.offpeak import off_peak_share
from engine.core.vocabulary import TIERS
from engine.sim.output.result import SimulationResult
from engine.sim.processes.burst import BURST_TIER
from engine.world.grid import DEFAULT_G_CO2E_PER_KWH

HOUR_S = 3600.0
DAY_S = 86_400.0
# Board power (TDP) per GPU in kW, matched by the longest prefix of the GPU type, case-insensitive.
DEFAULT_KW_PER_GPU = {"B200": 1.0, "H200": 0.7, "H100": 0.7, "A100": 0.4, "A10": 0.15, "L40S": 0.35,
                      "L4": 0.072, "V100": 0.3, "T4": 0.07, "P100": 0.25}
DEFAULT_KW_OTHER = 0.4
DEFAULT_PUE = 1.2
SPEND_COLUMNS = ["region", "tier", "gpu_type", "installed_gpus", "gpu_hours_used", "gpu_hours_paid",
                 "idle_gpu_hours_paid", "usd_per_gpu_hour", "usd", "idle_usd", "price_assumed"]
_SUMS = ["installed_gpus", "gpu_hours_used", "gpu_hours_paid", "idle_gpu_hours_paid", "usd", "idle_usd"]


@dataclass(frozen=True)
class CostAssumptions:
    """The editable assumptions behind the dollars and emissions.

    pue: data-centre power usage effectiveness (facility kW / IT kW, >= 1).
    kw_per_gpu: kW drawn per GPU while a job holds it, by GPU-type prefix; kw_other for the rest.
    annualisation_days: days in the year `annualise` scales to.
    price_overrides: (region, gpu_type, tier) -> USD per GPU-hour; "*" in a key matches anything,
    and an exact key wins over a wildcard one.
    default_g_co2e_per_kwh: grid intensity for regions the carbon table lacks."""

    pue: float = DEFAULT_PUE
    kw_per_gpu: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_KW_PER_GPU))
    kw_other: float = DEFAULT_KW_OTHER
    annualisation_days: float = 365.0
    price_overrides: Mapping[tuple[str, str, str], float] = field(default_factory=dict)
    default_g_co2e_per_kwh: float = DEFAULT_G_CO2E_PER_KWH

    def __post_init__(self) -> None:
        if not self.pue >= 1.0:
            raise ValueError(f"PUE must be at least 1, got {self.pue!r}")
        if not self.annualisation_days > 0:
            raise ValueError(f"annualisation_days must be positive, got {self.annualisation_days!r}")
        if min([self.kw_other, self.default_g_co2e_per_kwh, *self.kw_per_gpu.values()]) < 0:
            raise ValueError("power per GPU and grid intensity must be non-negative")
        for key, usd in self.price_overrides.items():
            if len(key) != 3 or key[2] not in (*TIERS, "*") or not usd >= 0:
                raise ValueError(f"price override {key!r} = {usd!r}: want (region, gpu_type, tier in "
                                 f"{', '.join(TIERS)} or *) -> non-negative USD per GPU-hour")

    def kw_for(self, gpu_type: str | None) -> float:
        """kW per GPU of `gpu_type`: the longest matching prefix in kw_per_gpu, else kw_other."""
        key = str(gpu_type or "").upper()
        matches = [name for name in self.kw_per_gpu if key.startswith(name.upper())]
        return float(self.kw_per_gpu[max(matches, key=len)]) if matches else float(self.kw_other)

    def rows(self) -> pd.DataFrame:
        """The assumptions as a table to show: assumption, value, unit."""
        rows = [("PUE", self.pue, "facility kW / IT kW"),
                *((f"power per {name} GPU", kw, "kW") for name, kw in sorted(self.kw_per_gpu.items())),
                ("power per other GPU", self.kw_other, "kW"),
                ("annualisation", self.annualisation_days, "days per year"),
                ("grid intensity without a profile", self.default_g_co2e_per_kwh, "gCO2e/kWh"),
                *((f"price {' / '.join(key)}", usd, "USD per GPU-hour")
                  for key, usd in sorted(self.price_overrides.items()))]
        return pd.DataFrame(rows, columns=["assumption", "value", "unit"])


@dataclass(frozen=True)
class CostReport:
    """spend: one row per (region, tier, gpu_type) with SPEND_COLUMNS; by_region, by_tier: the
    same sums per region or tier (GPU spend: egress is not in them); jobs: job_id, region, team,
    workload_class, gpu_hours, usd (egress included), egress_usd;
    by_team: team, gpu_hours, usd (job spend; idle dollars belong to no team); prices: region,
    gpu_type, tier, usd_per_gpu_hour, price_assumed, source (dataset, override, price book);
    totals: see `cost_report`."""

    spend: pd.DataFrame
    by_region: pd.DataFrame
    by_tier: pd.DataFrame
    jobs: pd.DataFrame
    by_team: pd.DataFrame
    prices: pd.DataFrame
    totals: dict[str, float]


def window_s(result: SimulationResult) -> float:
    """W, the end of the measurement window in seconds: window_s, or the last job end without one."""
    if result.window_s > 0:
        return float(result.window_s)
    ends = result.jobs.loc[result.jobs["started"], "end_s"].to_numpy(np.float64)
    ends = ends[np.isfinite(ends)]
    return float(ends.max()) if len(ends) else 0.0


def annualise(value: float, window_seconds: float, days: float = 365.0) -> float:
    """value x days x 86400 / window_seconds: a figure measured over the window, per year."""
    if not window_seconds > 0:
        raise ValueError(f"cannot annualise over a window of {window_seconds!r} s")
    return float(value) * days * DAY_S / float(window_seconds)


def fleet_nodes(fleet: pd.DataFrame, result: SimulationResult) -> pd.DataFrame:
    """region, node, gpu_type, tier, gpus of the fleet's GPU nodes, checked against the run's
    capacity per region (ValueError when the fleet is not the one simulated)."""
    missing = sorted({"region", "node", "gpu_type", "gpus", "tier"} - set(fleet.columns))
    if missing:
        raise ValueError(f"fleet table lacks column(s) {', '.join(missing)}")
    nodes = normalise_keys(fleet[["region", "node", "gpu_type", "gpus", "tier"]])
    nodes = nodes[nodes["gpus"].fillna(0) > 0].assign(gpus=lambda f: f["gpus"].astype(np.float64))
    twice = nodes.duplicated(["region", "node"])
    if twice.any():
        raise ValueError(f"fleet lists node {nodes.loc[twice, 'node'].iloc[0]!r} twice in one region")
    installed = nodes.groupby("region")["gpus"].sum()
    for region, capacity in sorted(result.capacity_gpus.items()):
        if float(installed.get(region, 0.0)) != float(capacity):
            raise ValueError(f"fleet has {float(installed.get(region, 0.0)):g} GPUs in region {region!r} but the "
                             f"run had {float(capacity):g}: pass the fleet the scenario ran on (Scenario.apply)")
    return nodes.sort_values(["region", "node"], kind="stable").reset_index(drop=True)


def run_nodes(fleet: pd.DataFrame, result: SimulationResult, installed: pd.DataFrame | None = None) -> pd.DataFrame:
    """`fleet_nodes` (or `installed`, when already computed) and the cloud nodes the run rented (tier
    "burst", engine.analysis.runs.burst): every node a job of the run can have held."""
    installed = fleet_nodes(fleet, result) if installed is None else installed
    rented = burst.nodes(result)
    return pd.concat([installed, rented], ignore_index=True) if len(rented) else installed


def holdings(result: SimulationResult, nodes: pd.DataFrame) -> pd.DataFrame:
    """One row per (piece of running, node) inside the window: job_id, region (the node's: where the
    work ran), team, workload_class, failed, node, gpu_type, tier, gpus (g_jn), start_s and end_s
    (clipped to [0, W]), gpu_hours, productive_gpu_hours (for jobs that completed: gpu_hours less the
    work lost when the piece was preempted, inside the window; 0 for other jobs). The pieces are
    `SimulationResult.held()`'s: a job preempted and requeued holds nothing while it waits again and
    is booked, piece by piece, to the nodes it ran on. Nodes are found by name, or by region and
    name when names repeat across regions."""
    horizon = window_s(result)
    held = held_pieces(result, horizon)
    held = held[(held["gpus_allocated"] > 0) & (held["nodes"] != "")]
    end_s = held["end_s"].fillna(horizon).to_numpy(np.float64)
    start = np.clip(held["start_s"].to_numpy(np.float64), 0.0, horizon)
    end = np.clip(end_s, 0.0, horizon)
    lost = end - np.clip(end_s - held["lost_s"].fillna(0.0).to_numpy(np.float64), 0.0, horizon)
    completed = held["completed"].to_numpy(bool)
    keep = end > start
    pieces = held.loc[keep, ["job_id", "region", "team", "workload_class", "failed", "gpus_allocated", "nodes"]]
    pieces = pieces.assign(row=np.arange(int(keep.sum())), start_s=start[keep], end_s=end[keep],
                           productive_s=np.where(completed, end - start - lost, 0.0)[keep],
                           node=pieces["nodes"].str.split(";"))
    pieces = pieces.drop(columns="nodes").explode("node", ignore_index=True)
    on = ["node"] if not nodes["node"].duplicated().any() else ["region", "node"]
    if on == ["node"]:
        pieces = pieces.drop(columns="region")
    merged = pieces.merge(nodes.rename(columns={"gpus": "node_gpus"}), on=on, how="left")
    if merged["tier"].isna().any():
        row = merged[merged["tier"].isna()].iloc[0]
        raise ValueError(f"job {row['job_id']} ran on node {row['node']!r}, which the fleet lacks: "
                         "pass the fleet the scenario ran on (Scenario.apply)")
    job_gpus = merged.groupby("row")["node_gpus"].transform("sum")
    merged["gpus"] = merged["gpus_allocated"] * merged["node_gpus"] / job_gpus
    merged["gpu_hours"] = merged["gpus"] * (merged["end_s"] - merged["start_s"]) / HOUR_S
    merged["productive_gpu_hours"] = merged["gpus"] * merged["productive_s"] / HOUR_S
    return merged[["job_id", "region", "team", "workload_class", "failed", "node", "gpu_type", "tier", "gpus",
                   "start_s", "end_s", "gpu_hours", "productive_gpu_hours"]]


def resolved_prices(prices: pd.DataFrame, nodes: pd.DataFrame, assumptions: CostAssumptions) -> pd.DataFrame:
    """The price of every (region, gpu_type, tier) the fleet has: region, gpu_type, tier,
    usd_per_gpu_hour, price_assumed, source."""
    groups = nodes[["region", "gpu_type", "tier"]].drop_duplicates()
    book = price_table(prices, groups)
    keys = normalise_keys(prices) if len(prices) else pd.DataFrame(columns=["region", "gpu_type", "tier"])
    given = set(zip(keys["region"], keys["gpu_type"], keys["tier"]))
    table = groups.merge(book, on=["region", "gpu_type", "tier"], how="left")
    in_table = [key in given for key in zip(table["region"], table["gpu_type"], table["tier"])]
    table["source"] = np.where(in_table, "dataset", "price book")
    for region, gpu_type, tier, usd in _overrides_by_specificity(assumptions.price_overrides):
        match = _matches(table, "region", region) & _matches(table, "gpu_type", gpu_type) \
            & _matches(table, "tier", tier)
        table.loc[match, ["usd_per_gpu_hour", "price_assumed", "source"]] = [float(usd), True, "override"]
    table["price_assumed"] = table["price_assumed"].astype(bool)
    return table.sort_values(["region", "gpu_type", "tier"]).reset_index(drop=True)


def _matches(table: pd.DataFrame, column: str, value: str) -> pd.Series:
    """Rows whose `column` equals `value`; every row for "*"."""
    return table[column] == value if value != "*" else pd.Series(True, index=table.index)


def _overrides_by_specificity(overrides: Mapping[tuple[str, str, str], float]) -> list[tuple]:
    """Overrides from the most general (most "*") to the most specific, so specific ones win."""
    return sorted(((*key, usd) for key, usd in overrides.items()),
                  key=lambda row: (-sum(part == "*" for part in row[:3]), row[:3]))


def _summed(spend: pd.DataFrame, key: str) -> pd.DataFrame:
    out = spend.groupby(key, as_index=False)[_SUMS].sum()
    return out.assign(price_assumed=spend.groupby(key)["price_assumed"].any().to_numpy())


def cost_report(result: SimulationResult, fleet: pd.DataFrame, prices: pd.DataFrame,
                assumptions: CostAssumptions | None = None, regions: pd.DataFrame | None = None,
                egress: pd.Series | None = None, storage_usd: float = 0.0) -> CostReport:
    """Spend of `result` on `fleet` at `prices` (the schema's tables; see the module docstring).
    `regions` (the regions table) gives off-peak windows and discounts (engine.analysis.telemetry.offpeak):
    on-demand and spot GPU-hours held in them cost price x (1 - discount). `egress` (job_id -> USD,
    engine.analysis.runs.egress.per_job) adds each job's data movement to its spend and to the total;
    `storage_usd` (the replicas' storage) adds to the total.

    totals: usd (GPU spend + usd_egress + usd_storage), usd_egress, usd_storage, usd_reserved, usd_on_demand, usd_spot, usd_burst, idle_usd, gpu_hours_used, gpu_hours_paid,
    idle_gpu_hours_paid, installed_gpus, effective_usd_per_gpu_hour, productive_usd_per_gpu_hour,
    window_s, window_days, usd_per_year, idle_usd_per_year, price_assumed (1.0 when any dollar
    rests on an assumed price, else 0.0)."""
    assumptions = assumptions or CostAssumptions()
    nodes = fleet_nodes(fleet, result)
    horizon = window_s(result)
    rented = burst.billed(result, horizon)
    held = holdings(result, run_nodes(fleet, result, nodes))
    price = pd.concat([resolved_prices(prices, nodes, assumptions),
                       rented[["region", "gpu_type", "tier", "usd_per_gpu_hour"]].assign(
                           price_assumed=False, source="[[burst]]")], ignore_index=True)
    keys = ["region", "tier", "gpu_type"]
    spend = pd.concat([nodes.groupby(keys, as_index=False).agg(installed_gpus=("gpus", "sum")),
                       rented[keys].assign(installed_gpus=0.0)], ignore_index=True)
    spend = spend.merge(held.groupby(keys, as_index=False)["gpu_hours"].sum(), on=keys, how="left")
    spend = spend.rename(columns={"gpu_hours": "gpu_hours_used"}).fillna({"gpu_hours_used": 0.0})
    reserved = (spend["tier"] == "reserved").to_numpy()
    paid = spend[keys].merge(rented, on=keys, how="left")["gpu_hours_paid"].to_numpy(np.float64)
    spend["gpu_hours_paid"] = np.where(reserved, spend["installed_gpus"] * horizon / HOUR_S,
                                       np.where(np.isnan(paid), spend["gpu_hours_used"], paid))
    spend["idle_gpu_hours_paid"] = spend["gpu_hours_paid"] - spend["gpu_hours_used"]
    spend = spend.merge(price, on=["region", "gpu_type", "tier"], how="left")
    held = held.merge(price[["region", "gpu_type", "tier", "usd_per_gpu_hour"]],
                      on=["region", "gpu_type", "tier"], how="left")
    share, discount = off_peak_share(held["region"].to_numpy(object), held["start_s"].to_numpy(np.float64),
                                     held["end_s"].to_numpy(np.float64), result.origin_utc, horizon, regions)
    by_use = held["tier"].isin(["on-demand", "spot"]).to_numpy()
    held["usd"] = held["gpu_hours"] * held["usd_per_gpu_hour"] * np.where(by_use, 1.0 - discount * share, 1.0)
    spend["usd"] = spend["gpu_hours_paid"] * spend["usd_per_gpu_hour"]
    if (by_use & (discount > 0)).any():  # on-demand and spot: what their held hours cost, discounts included
        used_usd = held.groupby(keys)["usd"].sum()
        billed = spend["tier"].isin(["on-demand", "spot"]).to_numpy()
        spend.loc[billed, "usd"] = [float(used_usd.get(key, 0.0)) for key in
                                    zip(spend.loc[billed, "region"], spend.loc[billed, "tier"], spend.loc[billed, "gpu_type"])]
    spend["idle_usd"] = spend["idle_gpu_hours_paid"] * spend["usd_per_gpu_hour"]
    spend = spend[SPEND_COLUMNS].sort_values(keys, kind="stable").reset_index(drop=True)

    per_job = held.groupby("job_id", as_index=False, sort=True).agg(
        region=("region", "first"), team=("team", "first"), workload_class=("workload_class", "first"),
        gpu_hours=("gpu_hours", "sum"), productive_gpu_hours=("productive_gpu_hours", "sum"), usd=("usd", "sum"))
    moved = egress if egress is not None else pd.Series(dtype=float)
    per_job["egress_usd"] = per_job["job_id"].astype(str).map(moved).fillna(0.0).to_numpy(np.float64)
    per_job["usd"] = per_job["usd"] + per_job["egress_usd"]
    by_team = per_job.groupby("team", as_index=False, sort=True)[["gpu_hours", "usd"]].sum()

    usd_egress = float(moved.sum())
    usd, used = float(spend["usd"].sum()) + usd_egress + storage_usd, float(spend["gpu_hours_used"].sum())
    productive = float(per_job["productive_gpu_hours"].sum())
    tier_usd = spend.groupby("tier")["usd"].sum()
    totals = {
        "usd": usd, "usd_egress": usd_egress, "usd_storage": float(storage_usd),
        **{f"usd_{tier.replace('-', '_')}": float(tier_usd.get(tier, 0.0)) for tier in (*TIERS, BURST_TIER)},
        "idle_usd": float(spend["idle_usd"].sum()), "gpu_hours_used": used,
        "gpu_hours_paid": float(spend["gpu_hours_paid"].sum()),
        "idle_gpu_hours_paid": float(spend["idle_gpu_hours_paid"].sum()),
        "installed_gpus": float(spend["installed_gpus"].sum()),
        "effective_usd_per_gpu_hour": usd / used if used > 0 else 0.0,
        "productive_usd_per_gpu_hour": usd / productive if productive > 0 else 0.0,
        "window_s": horizon, "window_days": horizon / DAY_S,
        "usd_per_year": annualise(usd, horizon, assumptions.annualisation_days) if horizon > 0 else 0.0,
        "idle_usd_per_year": annualise(float(spend["idle_usd"].sum()), horizon, assumptions.annualisation_days)
        if horizon > 0 else 0.0,
        "price_assumed": float(spend["price_assumed"].any()),
    }
    return CostReport(spend=spend, by_region=_summed(spend, "region"), by_tier=_summed(spend, "tier"),
                      jobs=per_job.drop(columns="productive_gpu_hours"), by_team=by_team, prices=price, totals=totals)
