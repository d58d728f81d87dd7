"""What a candidate changes against the baseline, in numbers and in plain words.

The headline leads with capacity at the baseline's service level (engine.service.headroom: the level is the
baseline's p95 wait per workload class and its guaranteed-inference misses on the data as it is):

  more work served         = (load headroom ratio - 1) x 100 %   (the candidate's load headroom, the
                             largest demand scale at which it holds the level, over the baseline's;
                             seed by seed, then the mean; the spread is the seeds' min and max)
  GPUs saved               = GPUs the baseline needs - GPUs the candidate needs to serve the data
                             as it is at the level (the smallest fleet, every pool scaled alike in
                             whole nodes: compaction)
  hardware $ not spent     = GPUs saved x P (price of one GPU)
  hardware $ / yr          = hardware $ not spent / Y (amortisation years)

and then, from the two runs' `meridian compare` KPIs (K_b baseline, K_c candidate), A = the
candidate's GPUs - the baseline's (GPUs its [[fleet]] edits add):

  idle $ recovered / yr    = K_b.idle_cost_usd_per_year - K_c.idle_cost_usd_per_year
  spend change / yr        = K_c.cost_usd_per_year - K_b.cost_usd_per_year
  carbon change / yr       = K_c.carbon_kg_per_year - K_b.carbon_kg_per_year
  payback (years)          = A x P / (K_b.cost_usd_per_year - K_c.cost_usd_per_year + hardware $ / yr)
                             only when A > 0; none when the denominator is not positive
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from engine.analysis.runs.cost_change import explained, spend_change
from engine.core.text import hours
from engine.service.compare import Run
from engine.service.report import fmt
from engine.service.report.assumptions import ReportAssumptions


@dataclass(frozen=True)
class Savings:
    """The figures behind one candidate's headline (units in the names; see the module docstring)."""

    candidate: str
    more_work_pct: float
    more_work_pct_min: float
    more_work_pct_max: float
    load_headroom_baseline: float
    load_headroom_candidate: float
    gpus_needed_baseline: float
    gpus_needed_candidate: float
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
    seeds: int


def savings(baseline: Run, candidate: Run, assumptions: ReportAssumptions) -> Savings:
    b, c = baseline.kpis, candidate.kpis
    hb, hc = baseline.headroom, candidate.headroom
    fleet = float(sum(baseline.result.capacity_gpus.values()))
    added = float(sum(candidate.result.capacity_gpus.values())) - fleet
    saved = hb.needed_gpus - hc.needed_gpus
    hardware = saved * assumptions.gpu_capex_usd
    per_year = hardware / assumptions.amortisation_years
    change = c["cost_usd_per_year"] - b["cost_usd_per_year"]
    investment = max(added, 0.0) * assumptions.gpu_capex_usd
    yearly = -change + per_year
    ratios = hc.ratio_by_seed
    return Savings(candidate.scenario.name, 100.0 * (hc.load_headroom_ratio - 1.0), 100.0 * (min(ratios) - 1.0),
                   100.0 * (max(ratios) - 1.0), hb.load_headroom, hc.load_headroom, hb.needed_gpus, hc.needed_gpus,
                   b["utilization"], c["utilization"], b["idle_cost_usd_per_year"],
                   b["idle_cost_usd_per_year"] - c["idle_cost_usd_per_year"], fleet, added, saved, hardware,
                   per_year, b["cost_usd_per_year"], change, b["carbon_kg_per_year"],
                   c["carbon_kg_per_year"] - b["carbon_kg_per_year"], investment,
                   investment / yearly if investment > 0 and yearly > 0 else None, len(ratios))


def _from_to(before: str, after: str) -> str:
    return f"stays at {before}" if before == after else f"goes from {before} to {after}"


def capacity_sentences(base: str, baseline, candidate, gpu_capex_usd: float, amortisation_years: float
                       ) -> tuple[str, str]:
    """The two headline sentences from two scenarios' headroom (engine.service.headroom.measure.ScenarioHeadroom):
    more work at the baseline's service level, and the same work on fewer GPUs."""
    ratios = candidate.ratio_by_seed
    more, low, high = (100.0 * (candidate.load_headroom_ratio - 1.0), 100.0 * (min(ratios) - 1.0),
                       100.0 * (max(ratios) - 1.0))
    spread = (f"{len(ratios)} demand resamplings: {low:+.0f} % to {high:+.0f} %" if len(ratios) > 1
              else "one demand resampling")
    limit = candidate.limited_by
    if limit:
        spread += "; beyond it, the first to break: " + (limit if limit.endswith("misses") else f"{limit}'s p95 wait")
    name = candidate.name
    if round(more) == 0:
        work = f"{name} serves as much work as {base} at {base}'s service level ({spread})."
    else:
        word = "more" if more > 0 else "less"
        work = f"{name} serves {abs(more):.0f} % {word} work than {base} at {base}'s service level ({spread})."
    saved = baseline.needed_gpus - candidate.needed_gpus
    money = (f"{fmt.usd(abs(saved) * gpu_capex_usd / amortisation_years)} a year of hardware at "
             f"{fmt.usd(gpu_capex_usd)} per GPU over {amortisation_years:g} years")
    needs = (f"it needs {candidate.needed_gpus:,.0f} GPUs to serve this window's work at that level, "
             f"{base} {baseline.needed_gpus:,.0f}")
    if saved > 0:
        fleet = f"Or the same work on {saved:,.0f} fewer GPUs: {money} ({needs})."
    elif saved < 0:
        fleet = f"It needs {-saved:,.0f} more GPUs for the same work: {money} more ({needs})."
    else:
        fleet = f"It needs as many GPUs as {base} for the same work ({needs})."
    return work, fleet


def sentences(s: Savings, baseline: Run, candidate: Run, waits: pd.DataFrame,
              assumptions: ReportAssumptions) -> tuple[str, ...]:
    """The headline of one candidate, in plain words; every number printed with engine.service.report.fmt."""
    b, c, name, base = baseline.kpis, candidate.kpis, candidate.scenario.name, baseline.scenario.name
    out = list(capacity_sentences(base, baseline.headroom, candidate.headroom, assumptions.gpu_capex_usd,
                                  assumptions.amortisation_years))
    classes = waits.pivot(index="workload_class", columns="scenario", values="wait_p95_s")
    per_class = "; ".join(f"{cls} {hours(row[base])} to {hours(row[name])}"
                          for cls, row in classes.iterrows())
    out.append(f"Service levels on the data as it is, over the jobs that started: p95 queue wait "
               f"{hours(b['wait_p95_s'])} to "
               f"{hours(c['wait_p95_s'])} ({per_class}); max-wait SLA met {fmt.pct(b['max_wait_sla_attainment'])} "
               f"to {fmt.pct(c['max_wait_sla_attainment'])}; deadlines met {fmt.pct(b['deadline_hit_rate'])} to "
               f"{fmt.pct(c['deadline_hit_rate'])}.")
    same = fmt.pct(s.util_baseline) == fmt.pct(s.util_candidate)
    out.append(f"GPU utilisation {_from_to(fmt.pct(s.util_baseline), fmt.pct(s.util_candidate))} (GPU-hours held by "
               "jobs / GPU-hours installed"
               + ("; when the same work completes under both, utilisation cannot show the difference: the "
                  "capacity figures above do)." if same else ")."))
    if s.idle_usd_per_year_recovered >= 0:
        out.append(f"Idle reserved GPUs cost {fmt.usd(s.idle_usd_per_year_baseline)} a year under {base}; "
                   f"{name} recovers {fmt.usd(s.idle_usd_per_year_recovered)} a year of it.")
    else:
        out.append(f"Idle reserved GPUs cost {fmt.usd(s.idle_usd_per_year_baseline)} a year under {base}; "
                   f"{name} leaves {fmt.usd(-s.idle_usd_per_year_recovered)} a year more idle.")
    parts = spend_change(baseline.world.cost, candidate.world.cost, assumptions.annualisation_days)
    out.append(f"Spend {fmt.usd(b['cost_usd_per_year'])} to {fmt.usd(c['cost_usd_per_year'])} a year "
               f"({explained(parts, s.spend_usd_per_year_change, fmt.signed_usd, most=2)}); carbon "
               f"{fmt.tonnes(b['carbon_kg_per_year'])} to "
               f"{fmt.tonnes(c['carbon_kg_per_year'])} CO2e a year "
               f"({'+' if s.carbon_kg_per_year_change >= 0 else '-'}{fmt.tonnes(abs(s.carbon_kg_per_year_change))}).")
    if s.investment_usd > 0:
        out.append(f"Investment: {fmt.gpus(s.added_gpus)} at {fmt.usd(assumptions.gpu_capex_usd)} = "
                   f"{fmt.usd(s.investment_usd)}; " + (f"pays back in {s.payback_years:.1f} years."
                                                       if s.payback_years is not None else
                                                       "it does not pay back: the yearly savings are not positive."))
    return tuple(out)
