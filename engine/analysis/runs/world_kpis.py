"""A finished simulation's dollars, emissions and residency as flat KPIs (CLI `kpis`, What-if, reports).

Every figure comes from `engine.analysis.runs.cost.cost_report` and `engine.analysis.runs.carbon.carbon_report`
(their docstrings give the formulas); W is the measurement window in seconds, as there:

  cost_usd                     all spend over the window: reserved GPUs paid every hour, on-demand
                               and spot while a job holds them, and egress_usd (USD)
  cost_reserved_usd, cost_on_demand_usd, cost_spot_usd   the same by pricing tier (USD)
  cost_burst_usd               cloud nodes rented by [[burst]] pools, billed from renting to return (USD)
  burst_idle_gpu_hours         GPU-hours billed for rented burst nodes that no job held (GPU-hours)
  idle_cost_usd                dollars of reserved and rented burst GPU-hours no job held (USD)
  cost_usd_per_year            cost_usd x annualisation_days x 86400 / W (USD per year)
  idle_cost_usd_per_year       idle_cost_usd, annualised the same way (USD per year)
  effective_usd_per_gpu_hour   cost_usd / GPU-hours allocated to jobs (USD per GPU-hour)
  productive_usd_per_gpu_hour  cost_usd / GPU-hours of jobs that did not fail (USD per GPU-hour)
  energy_kwh                   GPU power x PUE x held hours (kWh)
  carbon_kg                    energy x grid intensity of the region and local hour the work ran (kgCO2e)
  carbon_kg_per_year           carbon_kg annualised (kgCO2e per year)
  residency_violations         started jobs whose residency tag does not allow the region they ran in
                               (`engine.world.residency.violations`; jobs)
  egress_usd                   dollars of input data moved to where jobs ran: for every started job
                               that ran outside the region holding its data (its data_location),
                               data_size_gb x the egress price of the data's region
                               (regions.egress_usd_per_gb; USD; engine.analysis.runs.egress). Each run
                               of a job moves its data once; jobs without a data location or size move
                               nothing. Part of cost_usd.

With a DataModel (the scenario's [data]) and a run that tracked its data (a `transfers` table), the
data KPIs of engine.analysis.runs.data_kpis follow KPI_KEYS, and the replicas' storage is part of
cost_usd (cost_report's usd_storage).

With [roles] (the result's `roles`, `checkpoints` and `archived_datasets` tables), the roles KPIs of
engine.analysis.runs.roles_kpis follow; archived checkpoints' and datasets' storage is part of cost_usd
(usd_storage) and their egress part of egress_usd, booked to their jobs (a dataset's restore: the job that
asked for it).

A dataset without prices, carbon or regions tables still works: prices come from the default price
book, grid intensity from `CostAssumptions.default_g_co2e_per_kwh`, local hours from UTC; `assumed`
says, one sentence each, which figures rest on such defaults.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from engine.analysis.runs import egress
from engine.analysis.runs.carbon import CarbonReport, carbon_report
from engine.analysis.runs.cost import CostAssumptions, CostReport, annualise, cost_report, fleet_nodes
from engine.analysis.runs.data_kpis import data_kpis, storage_usd
from engine.analysis.runs.roles_kpis import archive_storage_usd, roles_kpis, with_archive_egress
from engine.sim.output.result import SimulationResult
from engine.sim.processes.burst import BURST_TIER
from engine.world import residency
from engine.world.data_model import DataModel

KPI_KEYS = ("cost_usd", "cost_reserved_usd", "cost_on_demand_usd", "cost_spot_usd", "cost_burst_usd",
            "burst_idle_gpu_hours", "idle_cost_usd",
            "cost_usd_per_year", "idle_cost_usd_per_year", "effective_usd_per_gpu_hour",
            "productive_usd_per_gpu_hour", "energy_kwh", "carbon_kg", "carbon_kg_per_year",
            "residency_violations", "egress_usd")
VIOLATION_COLUMNS = ["job_id", "region", "tag", "allowed"]
# The columns each world table needs; a missing or column-less table is read as an empty one.
_WORLD_COLUMNS = {"prices": ["region", "gpu_type", "tier", "usd_per_gpu_hour", "assumed"],
                  "regions": ["region", "timezone", "country", "jurisdiction"],
                  "carbon": ["region", "local_hour", "g_co2e_per_kwh"]}


@dataclass(frozen=True)
class WorldReport:
    """kpis: KPI_KEYS -> float; assumed: one sentence per default relied on; cost, carbon: the full
    reports the KPIs come from (for tables and charts); violations: residency.violations' rows."""

    kpis: dict[str, float]
    assumed: tuple[str, ...]
    cost: CostReport
    carbon: CarbonReport
    violations: pd.DataFrame


def world_report(result: SimulationResult, fleet: pd.DataFrame, prices: pd.DataFrame, regions: pd.DataFrame,
                 carbon: pd.DataFrame, assumptions: CostAssumptions | None = None,
                 jobs: pd.DataFrame | None = None, data: DataModel | None = None) -> WorldReport:
    """Cost, carbon and residency of `result` on `fleet` (the one it ran on: `Scenario.apply`), with the
    dataset's prices, regions and carbon tables (empty tables allowed). Residency tags come from
    result.jobs' `residency` column, else from `jobs` (the table the run was built from) by job_id.
    Raises ValueError for a fleet that is not the run's, or a malformed residency tag."""
    assumptions = assumptions or CostAssumptions()
    prices, regions, carbon = (_table(frame, name) for frame, name in
                               ((prices, "prices"), (regions, "regions"), (carbon, "carbon")))
    moved, egress_notes = egress.per_job(result, regions, jobs)
    moved = with_archive_egress(moved, result)
    tracked = data is not None and result.transfers is not None
    cost = cost_report(result, fleet, prices, assumptions, regions, egress=moved,
                       storage_usd=(storage_usd(result, data) if tracked else 0.0) + archive_storage_usd(result))
    emissions = carbon_report(result, fleet, regions, carbon, assumptions)
    violations, residency_notes = _residency(result, regions, jobs)
    totals = cost.totals
    horizon = totals["window_s"]
    kpis = {
        "cost_usd": totals["usd"], "cost_reserved_usd": totals["usd_reserved"],
        "cost_on_demand_usd": totals["usd_on_demand"], "cost_spot_usd": totals["usd_spot"],
        "cost_burst_usd": totals["usd_burst"],
        "burst_idle_gpu_hours": float(cost.spend.loc[cost.spend["tier"] == BURST_TIER, "idle_gpu_hours_paid"].sum()),
        "idle_cost_usd": totals["idle_usd"], "cost_usd_per_year": totals["usd_per_year"],
        "idle_cost_usd_per_year": totals["idle_usd_per_year"],
        "effective_usd_per_gpu_hour": totals["effective_usd_per_gpu_hour"],
        "productive_usd_per_gpu_hour": totals["productive_usd_per_gpu_hour"],
        "energy_kwh": emissions.totals["kwh"], "carbon_kg": emissions.totals["kg_co2e"],
        "carbon_kg_per_year": annualise(emissions.totals["kg_co2e"], horizon, assumptions.annualisation_days)
        if horizon > 0 else 0.0,
        "residency_violations": float(len(violations)), "egress_usd": totals["usd_egress"]}
    assumed = (*_price_notes(cost.prices), *_power_notes(fleet, result, assumptions), *emissions.assumed,
               *residency_notes, *egress_notes)
    moves = {**(data_kpis(result, regions, data) if tracked else {}), **roles_kpis(result, cost)}
    return WorldReport(kpis={**{key: float(kpis[key]) for key in KPI_KEYS}, **moves}, assumed=tuple(assumed), cost=cost,
                       carbon=emissions, violations=violations)


def world_kpis(result: SimulationResult, fleet: pd.DataFrame, prices: pd.DataFrame, regions: pd.DataFrame,
               carbon: pd.DataFrame, assumptions: CostAssumptions | None = None,
               jobs: pd.DataFrame | None = None) -> dict:
    """`world_report`'s KPIs (KPI_KEYS, floats) plus "assumed": the list of defaults relied on."""
    report = world_report(result, fleet, prices, regions, carbon, assumptions, jobs)
    return {**report.kpis, "assumed": list(report.assumed)}


def _table(frame: pd.DataFrame | None, name: str) -> pd.DataFrame:
    """`frame`, or an empty table with the columns the reports read when it is None or lacks them."""
    columns = _WORLD_COLUMNS[name]
    if frame is None or "region" not in frame.columns:
        return pd.DataFrame(columns=columns)
    return frame


def _price_notes(prices: pd.DataFrame) -> list[str]:
    """One sentence per price source of the assumed prices (price book, dataset flag, override)."""
    notes = []
    assumed = prices[prices["price_assumed"]]
    for source, rows in assumed.groupby("source", sort=True):
        names = ", ".join(f"{r} {g} {t}" for r, g, t in zip(rows["region"], rows["gpu_type"], rows["tier"]))
        where = {"price book": "the default price book", "override": "an edited assumption",
                 "dataset": "the dataset, which marks them assumed"}[source]
        notes.append(f"{len(rows)} of {len(prices)} prices (region, GPU type, tier) come from {where}: {names}")
    return notes


def _power_notes(fleet: pd.DataFrame, result: SimulationResult, assumptions: CostAssumptions) -> list[str]:
    """GPU types whose power is not in kw_per_gpu (they draw kw_other)."""
    types = sorted(set(fleet_nodes(fleet, result)["gpu_type"].astype(str)))
    unknown = [t for t in types if not any(t.upper().startswith(name.upper()) for name in assumptions.kw_per_gpu)]
    if not unknown:
        return []
    return [f"power of {', '.join(unknown)} GPUs unknown; {assumptions.kw_other:g} kW per GPU assumed"]


def _residency(result: SimulationResult, regions: pd.DataFrame,
               jobs: pd.DataFrame | None) -> tuple[pd.DataFrame, list[str]]:
    """(violations among started jobs in the region they ran, notes)."""
    ran = result.jobs.loc[result.jobs["started"], ["job_id", "region", *(["residency"] if "residency" in
                                                                          result.jobs else [])]]
    if "residency" not in ran and jobs is not None and "residency" in jobs:
        tags = jobs.assign(job_id=jobs["job_id"].astype(str)).drop_duplicates("job_id").set_index("job_id")
        ran = ran.assign(residency=ran["job_id"].astype(str).map(tags["residency"]))
    if "residency" not in ran:
        return pd.DataFrame(columns=VIOLATION_COLUMNS), []
    tagged = ran["residency"].astype("string").str.strip().fillna("").ne("")
    if tagged.any() and regions.empty:
        rows = ran[tagged.to_numpy()].rename(columns={"residency": "tag"}).assign(allowed="")
        rows = rows.assign(tag=rows["tag"].astype(str).str.strip()).sort_values("job_id", kind="stable")
        return (rows[VIOLATION_COLUMNS].reset_index(drop=True),
                [f"no regions table: the {int(tagged.sum()):,} residency-tagged jobs that ran are counted as "
                 "violations, since no region is known to lie in any jurisdiction"])
    return residency.violations(ran, regions), []
