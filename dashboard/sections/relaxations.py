"""The What-if page's constraint relaxation section: for each compared scenario whose routing relaxes soft
constraints (engine.policies.constraints), how many jobs had each constraint relaxed and what it cost, the
same per team, and each job's relaxations (engine.analysis.runs.relaxation)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.charts import relaxations as charts
from dashboard.charts.view import plot, say
from engine.analysis.runs.relaxation import by_constraint, by_team
from engine.core.escaping import markdown_text
from engine.core.reasons import SOFT_CONSTRAINTS

MOST_ROWS = 2000  # the per-job list shows the first relaxations, in time order
EXPLAINED = (
    "Hard constraints (data residency, the GPU model, deadlines, the capacity each region keeps for its own "
    "guaranteed work) are never broken. Soft ones (the job's input data, its users' latency SLO, a low-carbon grid, "
    "a low GPU price, its team's region) carry weights; a job that could start nowhere under all of them had them "
    "relaxed one at a time in the scenario's order until a region could take it. Cost of a relaxation: egress "
    "dollars (data locality), milliseconds over the SLO (latency), g CO2e/kWh over the cleanest feasible region "
    "(carbon), dollars over the cheapest (cost), GPU-hours run away from the team (team affinity). A latency "
    "between regions without a known round trip, and the dollars and GPU-hours of a service without a runtime "
    "request, are unknown (counted apart).")


def relaxations_section(names: list[str], results: list) -> None:
    """Draw the section for the scenarios (names, SimulationResults) that relax soft constraints; nothing when
    none does."""
    relaxing = [(name, result) for name, result in zip(names, results) if result.relaxations is not None]
    if not relaxing:
        return
    st.subheader("Constraint relaxations")
    st.caption(say(EXPLAINED))
    tables = {name: by_constraint(result) for name, result in relaxing}
    plot(st, charts.relaxed_jobs(tables), theme=None)
    number = st.column_config.NumberColumn
    by_constraint_tab, by_team_tab, jobs_tab = st.tabs(["Per constraint", "Per team", "Per job"])
    for name, result in relaxing:
        by_constraint_tab.markdown(f"**{markdown_text(name)}**")
        by_constraint_tab.dataframe(
            tables[name].assign(share=100 * tables[name]["share"]), hide_index=True, key=f"wi_relaxed_{name}",
            column_config={"jobs": number("jobs relaxed", format="%,d"), "share": number("% of jobs", format="%.1f"),
                           "cost": number("total cost", format="%,.1f"), "cost_unit": "cost in",
                           "mean_cost": number("cost per job", format="%,.2f"),
                           "unknown": number("cost unknown", format="%,d")})
        by_team_tab.markdown(f"**{markdown_text(name)}**")
        team = by_team(result)
        by_team_tab.dataframe(
            team.assign(team=team["team"].replace("", "(none)"), share_relaxed=100 * team["share_relaxed"]),
            hide_index=True, key=f"wi_relaxed_team_{name}",
            column_config={"jobs_relaxed": number("jobs relaxed", format="%,d"),
                           "share_relaxed": number("% relaxed", format="%.1f"),
                           "jobs_moved_region": number("moved region", format="%,d"),
                           **{c: number(c, format="%,d") for c in SOFT_CONSTRAINTS}})
        jobs_tab.markdown(f"**{markdown_text(name)}**")
        jobs_tab.dataframe(_each_job(result), hide_index=True, key=f"wi_relaxed_jobs_{name}",
                           column_config={"cost": number("cost", format="%,.2f"), "cost_unit": "cost in"})
        if len(result.relaxations) > MOST_ROWS:
            jobs_tab.caption(f"The first {MOST_ROWS:,} of {len(result.relaxations):,} relaxations.")


def _each_job(result) -> pd.DataFrame:
    """The first MOST_ROWS relaxations: job, team, when (UTC), home and the region it went to, constraint, cost."""
    table = result.relaxations.head(MOST_ROWS)
    when = result.origin_utc + pd.to_timedelta(table["time_s"], unit="s")
    return pd.DataFrame({"job_id": table["job_id"], "team": table["team"], "routed (UTC)": when.dt.strftime("%Y-%m-%d %H:%M"),
                         "home": table["home_region"], "sent to": table["region"], "constraint": table["constraint"],
                         "cost": table["cost"], "cost_unit": table["cost_unit"]})
