"""What a candidate changes against the baseline, in numbers and in plain words.

From the two runs' `meridian compare` KPIs (K_b baseline, K_c candidate), F = the baseline fleet's
GPUs, A = the candidate's GPUs - F (GPUs its [[fleet]] edits add), the assumptions' GPU price P,
amortisation years Y:

  idle $ recovered / yr    = K_b.idle_cost_usd_per_year - K_c.idle_cost_usd_per_year
  equivalent GPUs          = (K_c.effective_capacity_ratio / K_b.effective_capacity_ratio - 1) x F
                             (both ratios are served GPU-hours over home-only FIFO on the same
                             workload, so their quotient is the candidate's served GPU-hours over the
                             baseline's: the fleet serves as much as F x that quotient GPUs would)
  hardware $ not spent     = (equivalent GPUs - A) x P        (capacity gained beyond GPUs added)
  hardware $ / yr          = hardware $ not spent / Y
  spend change / yr        = K_c.cost_usd_per_year - K_b.cost_usd_per_year
  carbon change / yr       = K_c.carbon_kg_per_year - K_b.carbon_kg_per_year
  payback (years)          = A x P / (K_b.cost_usd_per_year - K_c.cost_usd_per_year + hardware $ / yr)
                             only when A > 0; none when the denominator is not positive
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from engine.compare import Run
from engine.report import fmt
from engine.report.assumptions import ReportAssumptions


@dataclass(frozen=True)
class Savings:
    """The figures behind one candidate's headline (units in the names; see the module docstring)."""

    candidate: str
    util_baseline: float
    util_candidate: float
    idle_usd_per_year_baseline: float
    idle_usd_per_year_recovered: float
    fleet_gpus: float
    added_gpus: float
    equivalent_gpus: float
    hardware_usd_not_spent: float
    hardware_usd_per_year: float
    spend_usd_per_year_baseline: float
    spend_usd_per_year_change: float
    carbon_kg_per_year_baseline: float
    carbon_kg_per_year_change: float
    investment_usd: float
    payback_years: float | None


def savings(baseline: Run, candidate: Run, assumptions: ReportAssumptions) -> Savings:
    b, c = baseline.kpis, candidate.kpis
    fleet = float(sum(baseline.result.capacity_gpus.values()))
    added = float(sum(candidate.result.capacity_gpus.values())) - fleet
    ratio = c["effective_capacity_ratio"] / b["effective_capacity_ratio"] if b["effective_capacity_ratio"] else 1.0
    equivalent = (ratio - 1.0) * fleet
    hardware = (equivalent - added) * assumptions.gpu_capex_usd
    per_year = hardware / assumptions.amortisation_years
    change = c["cost_usd_per_year"] - b["cost_usd_per_year"]
    investment = max(added, 0.0) * assumptions.gpu_capex_usd
    yearly = -change + per_year
    return Savings(candidate.scenario.name, b["utilization"], c["utilization"], b["idle_cost_usd_per_year"],
                   b["idle_cost_usd_per_year"] - c["idle_cost_usd_per_year"], fleet, added, equivalent, hardware,
                   per_year, b["cost_usd_per_year"], change, b["carbon_kg_per_year"],
                   c["carbon_kg_per_year"] - b["carbon_kg_per_year"], investment,
                   investment / yearly if investment > 0 and yearly > 0 else None)


def _from_to(before: str, after: str) -> str:
    return f"stays at {before}" if before == after else f"goes from {before} to {after}"


def sentences(s: Savings, baseline: Run, candidate: Run, waits: pd.DataFrame,
              assumptions: ReportAssumptions) -> tuple[str, ...]:
    """The headline of one candidate, in plain words; every number printed with engine.report.fmt."""
    b, c, name, base = baseline.kpis, candidate.kpis, candidate.scenario.name, baseline.scenario.name
    same = fmt.pct(s.util_baseline) == fmt.pct(s.util_candidate)
    out = [f"GPU utilisation {_from_to(fmt.pct(s.util_baseline), fmt.pct(s.util_candidate))} "
           f"({base} to {name}, GPU-hours held by jobs / GPU-hours installed"
           + ("; the same work runs inside the window under both, the candidate runs it sooner)." if same else ").")]
    if s.idle_usd_per_year_recovered >= 0:
        out.append(f"Idle reserved GPUs cost {fmt.usd(s.idle_usd_per_year_baseline)} a year under {base}; "
                   f"{name} recovers {fmt.usd(s.idle_usd_per_year_recovered)} a year of it.")
    else:
        out.append(f"Idle reserved GPUs cost {fmt.usd(s.idle_usd_per_year_baseline)} a year under {base}; "
                   f"{name} leaves {fmt.usd(-s.idle_usd_per_year_recovered)} a year more idle.")
    added = f", of which {fmt.gpus(s.added_gpus)} it adds" if s.added_gpus > 0 else ""
    money = (f"hardware not bought: {fmt.usd(s.hardware_usd_not_spent)} ({fmt.usd(s.hardware_usd_per_year)} a year "
             f"over {assumptions.amortisation_years:g} years at {fmt.usd(assumptions.gpu_capex_usd)} per GPU)")
    if round(s.equivalent_gpus, 1) == 0:
        out.append(f"Effective capacity: {name} serves the same GPU-hours as {base} in this window (0.0 equivalent "
                   f"GPUs on the {s.fleet_gpus:,.0f}-GPU fleet{added}: all the work completes under both), so "
                   f"{money} on this measure.")
    else:
        gain = fmt.gpus(abs(s.equivalent_gpus)) + (" more" if s.equivalent_gpus > 0 else " fewer")
        out.append(f"Effective capacity: {name} serves as much work as {gain} on the {s.fleet_gpus:,.0f}-GPU "
                   f"fleet{added} would under {base}; {money}.")
    classes = waits.pivot(index="workload_class", columns="scenario", values="wait_p95_s")
    per_class = "; ".join(f"{cls} {fmt.hours(row[base])} to {fmt.hours(row[name])}"
                          for cls, row in classes.iterrows())
    out.append(f"Service levels: p95 queue wait {fmt.hours(b['wait_p95_s'])} to {fmt.hours(c['wait_p95_s'])} "
               f"({per_class}); max-wait SLA met {fmt.pct(b['max_wait_sla_attainment'])} to "
               f"{fmt.pct(c['max_wait_sla_attainment'])}; deadlines met {fmt.pct(b['deadline_hit_rate'])} to "
               f"{fmt.pct(c['deadline_hit_rate'])}.")
    out.append(f"Spend {fmt.usd(b['cost_usd_per_year'])} to {fmt.usd(c['cost_usd_per_year'])} a year "
               f"({fmt.signed_usd(s.spend_usd_per_year_change)}); carbon {fmt.tonnes(b['carbon_kg_per_year'])} to "
               f"{fmt.tonnes(c['carbon_kg_per_year'])} CO2e a year "
               f"({'+' if s.carbon_kg_per_year_change >= 0 else '-'}{fmt.tonnes(abs(s.carbon_kg_per_year_change))}).")
    if s.investment_usd > 0:
        out.append(f"Investment: {fmt.gpus(s.added_gpus)} at {fmt.usd(assumptions.gpu_capex_usd)} = "
                   f"{fmt.usd(s.investment_usd)}; " + (f"pays back in {s.payback_years:.1f} years."
                                                       if s.payback_years is not None else
                                                       "it does not pay back: the yearly savings are not positive."))
    return tuple(out)
