"""build_report: from a baseline and candidate scenarios on a dataset to the executive report's content.

1. Keep the jobs submitted in the first `days` days (engine.service.compare.first_days; None: all).
2. Run baseline and candidates through engine.service.compare.run_scenarios (what `meridian compare` runs),
   with the report's cost assumptions, and measure each one's load headroom and fleet compaction at
   the baseline's service level (engine.service.compare.with_headroom).
3. Per candidate: the savings against the baseline and the headline (engine.service.report.headline).
   Candidates are ranked by the headline measure: more work served at the baseline's service level
   (the load headroom ratio), then GPUs saved; the best leads the report.
4. Tables (engine.service.report.tables) and figures (engine.service.report.figures): the one-pager
   sets the best candidate against the baseline (heat maps, spend by tier, waits by class, the region
   table), the ranking lists every candidate, and the appendix has every scenario's KPIs.
5. The assumptions, method notes, fidelity footnote and the defaults relied on.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from engine.scenario.spec import Scenario
from engine.service.compare import UNPRICED, Run, Unusable, first_days, priced, run_scenarios
from engine.service.headroom.measure import HeadroomOptions, with_headroom
from engine.service.report import figures, headline, tables
from engine.service.report.assumptions import ReportAssumptions
from engine.service.report.notes import fidelity_note, method


@dataclass
class Report:
    """The report's content (no formatting beyond the headline sentences).

    range_utc: (window start, window end) of the baseline run, UTC; range_note says which jobs were kept.
    headline: sentences for the first candidate; headlines: the same per candidate name.
    savings: headline.Savings per candidate name. kpis: kpi + one column per scenario (compare's values).
    waits: scenario, workload_class, jobs, wait_p95_s. regions: tables.REGION_COLUMNS (baseline vs the
    first candidate). figures: name -> plotly JSON figure (figures module). assumptions: the ones used;
    method: formulas; fidelity: footnote; assumed: defaults the data lacked (prices, zones, ...).
    headroom: the load headroom and compaction of every scenario (engine.service.headroom.measure.HeadroomReport).
    runs: the engine's runs (results, cost and carbon reports) for anything further. `scenarios` is
    the baseline, then the candidates best first (see `rank`)."""

    dataset: str
    range_utc: tuple[pd.Timestamp, pd.Timestamp]
    range_note: str
    scenarios: list[str]
    headline: tuple[str, ...]
    headlines: dict[str, tuple[str, ...]]
    savings: dict[str, headline.Savings]
    kpis: pd.DataFrame
    waits: pd.DataFrame
    regions: pd.DataFrame
    figures: dict[str, dict]
    assumptions: ReportAssumptions
    method: tuple[str, ...]
    fidelity: str
    assumed: tuple[str, ...]
    headroom: object = field(repr=False)
    runs: list[Run] = field(repr=False)

    @property
    def baseline(self) -> str:
        return self.scenarios[0]

    @property
    def candidate(self) -> str:
        """The best candidate by the headline measure: the one the title, region table and heat maps show."""
        return self.scenarios[1]

    @property
    def candidates(self) -> list[str]:
        """Every candidate, best first."""
        return self.scenarios[1:]


def rank(savings: dict[str, headline.Savings]) -> list[str]:
    """Candidate names best first: most work served at the baseline's service level, then most GPUs
    saved, then the smaller change in spend a year; the given order among exact equals."""
    order = list(savings)
    return sorted(order, key=lambda n: (-savings[n].more_work_pct, -savings[n].equivalent_gpus,
                                        savings[n].spend_usd_per_year_change, order.index(n)))


def build_report(jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict[str, pd.DataFrame],
                 baseline: Scenario, candidates: list[Scenario], assumptions: ReportAssumptions = ReportAssumptions(),
                 *, dataset: str = "sample", days: float | None = None,
                 headroom: HeadroomOptions | None = None) -> Report:
    """The report of `candidates` against `baseline` on the dataset's tables (world_tables: {prices,
    regions, carbon, teams}, empty tables allowed); `headroom`: how the searches run (default: 3 seeds
    on every core, the assumptions' GPU price and amortisation). Raises Unusable without a candidate or
    jobs or for a fleet without prices (a CPU log's processors without the dataset's own), ScenarioError
    for a scenario that cannot run."""
    if not candidates:
        raise Unusable("a report needs at least one candidate scenario")
    names = [baseline.name, *(c.name for c in candidates)]
    if len(set(names)) != len(names):
        raise Unusable(f"scenario names must differ, got {', '.join(names)}")
    if not priced(fleet, world_tables.get("prices")):
        raise Unusable(UNPRICED)
    scenarios = first_days([baseline, *candidates], jobs, days)
    runs, assumed = run_scenarios(scenarios, jobs, fleet, world_tables, assumptions.cost(), world=True)
    if not len(runs[0].result.jobs):
        raise Unusable("no jobs in the chosen window")
    options = replace(headroom or HeadroomOptions(), gpu_capex_usd=assumptions.gpu_capex_usd,
                      amortisation_years=assumptions.amortisation_years)
    runs, measured = with_headroom(runs, jobs, fleet, world_tables, options)
    base = runs[0]
    saved = {run.scenario.name: headline.savings(base, run, assumptions) for run in runs[1:]}
    ranked = rank(saved)
    saved = {name: saved[name] for name in ranked}
    runs = [base, *sorted(runs[1:], key=lambda run: ranked.index(run.scenario.name))]
    names, first = [run.scenario.name for run in runs], runs[1]
    waits = tables.class_waits(runs)
    sentences = {run.scenario.name: headline.sentences(saved[run.scenario.name], base, run,
                                                       waits[waits["scenario"].isin([base.scenario.name,
                                                                                     run.scenario.name])],
                                                       assumptions) for run in runs[1:]}
    start = pd.Timestamp(base.result.origin_utc)
    end = start + pd.Timedelta(seconds=base.world.cost.totals["window_s"])
    return Report(
        dataset=dataset, range_utc=(start, end), range_note=_range_note(scenarios[0], base, days),
        scenarios=names, headline=sentences[first.scenario.name], headlines=sentences, savings=saved,
        kpis=tables.kpi_table(runs), waits=waits,
        regions=tables.region_table(base, first, assumptions.annualisation_days),
        figures=_figures(base, first, waits[waits["scenario"].isin(names[:2])], assumptions, len(runs) > 2),
        assumptions=assumptions, method=method(measured), fidelity=fidelity_note(), assumed=tuple(assumed),
        headroom=measured, runs=runs)


def _figures(base: Run, best: Run, waits: pd.DataFrame, assumptions: ReportAssumptions, ranked: bool) -> dict:
    """The one-pager's charts of the baseline and the best candidate; a little shorter when the ranking
    table of several candidates shares page 1 with them."""
    heat, bars = (195, 175) if ranked else (240, 230)
    return {"utilisation_by_local_hour": figures.utilisation_by_local_hour(base, best, heat),
            "spend_by_tier": figures.spend_by_tier([base, best], assumptions.annualisation_days, bars),
            "waits_by_class": figures.waits_by_class(waits, bars)}


def _range_note(scenario: Scenario, run: Run, days: float | None) -> str:
    """Which jobs the report covers, in words."""
    jobs = len(run.result.jobs)
    if scenario.start_utc is None and scenario.end_utc is None:
        return f"all {jobs:,} jobs of the dataset"
    start = "the start" if scenario.start_utc is None else f"{scenario.start_utc:%Y-%m-%d %H:%M}"
    end = "the end" if scenario.end_utc is None else f"{scenario.end_utc:%Y-%m-%d %H:%M}"
    first = f"the first {days:g} day{'' if days == 1 else 's'}: " if days else ""
    return f"{jobs:,} jobs submitted in {first}{start} to {end} UTC"
