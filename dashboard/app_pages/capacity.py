"""Capacity planning: the cheapest fleet that keeps each workload class's p95 wait under its target."""
import json
import math

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.charts import capacity as charts_capacity
from dashboard.charts.view import plot
from dashboard.data import planning as data_planning
from engine.core.escaping import markdown_text as md
from engine.service.compare import UNPRICED
from engine.service.planning.plan import PlanResult
from engine.service.planning.settings import PlanError
from engine.service.planning.summary import fleet_comparison

DEFAULT_TARGETS = {"inference": 0.5, "development": 2.0, "batch": 6.0, "hpo": 12.0, "training": 24.0}
OTHER_TARGET_H = 24.0
DEFAULT_FLEXIBLE = ("batch", "hpo", "training")
DEFAULT_CHECK = "(FCFS + EASY backfill + cheapest tier)"


def _usd(value: float, sign: bool = False) -> str:
    """$1.23M or $456,789; with sign, a leading + or - (which st.metric reads as the delta's direction)."""
    if not math.isfinite(value):
        return "n/a"
    text = f"${abs(value) / 1e6:,.2f}M" if abs(value) >= 1e6 else f"${abs(value):,.0f}"
    return ("-" if value < 0 else "+" if sign else "") + text


def _classes(dataset: str) -> list[str]:
    classes = data.overview(dataset).mix
    names = list(classes["workload_class"].astype(str)) if "workload_class" in classes else []
    return names or sorted(DEFAULT_TARGETS)


def _form(dataset: str) -> tuple[dict, float] | None:
    """The plan form; (plan-file dict, growth) once submitted (kept in the session), else None."""
    classes = _classes(dataset)
    with st.form("cap_form"):
        top = st.columns(4)
        growth = top[0].slider("Demand growth", 1.0, 2.5, 1.3, 0.05, key="cap_growth",
                               help="jobs next quarter against the planning window: 1.3 = 30 % more (seeded copies "
                                    "of random jobs of the same region, hour of the week, class and team)")
        days = top[1].number_input("Plan on the last N days", 1.0, 60.0, 7.0, 1.0, key="cap_days", format="%g",
                                   help="the demand window: the most recent days of the dataset")
        warmup = top[2].number_input("Warm-up days", 0.0, 14.0, 2.0, 1.0, key="cap_warmup", format="%g",
                                     help="simulated before the window so queues are not empty; not scored")
        rounds = top[3].number_input("Rounds at most", 1, 12, 6, 1, key="cap_rounds",
                                     help="integer program -> simulation -> more headroom where a target is missed")
        st.markdown("**p95 queue-wait target per workload class (hours)**")
        cells = st.columns(len(classes))
        targets = {name: cell.number_input(md(name), 0.0, 1000.0, DEFAULT_TARGETS.get(name, OTHER_TARGET_H), 0.25,
                                           key=f"cap_slo_{name}")
                   for name, cell in zip(classes, cells)}
        with st.expander("Assumptions"):
            left, middle, right = st.columns(3)
            flexible = left.multiselect("Flexible classes", classes, [c for c in DEFAULT_FLEXIBLE if c in classes],
                                        key="cap_flexible", help="may wait and run on spot capacity")
            scenarios = [DEFAULT_CHECK, *data.bundled_scenarios()]
            check = left.selectbox("Policies of the check simulation", scenarios, key="cap_check")
            share = middle.slider("Spot at most (share of a pool)", 0.0, 1.0, 0.25, 0.05, key="cap_spot_share")
            efficiency = middle.slider("Spot efficiency", 0.5, 1.0, 0.9, 0.05, key="cap_spot_eff",
                                       help="share of spot GPU-hours that become work; the rest is lost to interruptions")
            rate = right.number_input("Spot interruptions per node-hour", 0.0, 1.0, 0.01, 0.005, format="%.3f",
                                      key="cap_spot_rate")
            keep = right.checkbox("Keep today's reserved GPUs (commitments)", False, key="cap_keep")
        submitted = st.form_submit_button("Find the cheapest fleet", type="primary")
    if submitted:
        form = {"days": float(days), "warmup_days": float(warmup), "max_iterations": int(rounds), "slo": targets,
                "capacity": {"flexible_classes": list(flexible), "spot_max_share": float(share),
                             "spot_efficiency": float(efficiency), "spot_interruptions_per_node_hour": float(rate),
                             "keep_reserved": bool(keep)}}
        if check != DEFAULT_CHECK:
            form["scenario"] = f"{check}.toml"
        st.session_state["cap_request"] = json.dumps({"form": form, "growth": float(growth)})
    request = st.session_state.get("cap_request")
    if request is None:
        return None
    request = json.loads(request)
    return request["form"], request["growth"]


def _met_count(check) -> str:
    return f"{int(check.slo['met'].sum())} of {len(check.slo)}"


def _headline(result: PlanResult) -> None:
    today, best = result.today, result.best.check
    growth = f"{100 * (result.growth - 1):+.0f} % demand" if result.growth != 1 else "today's demand"
    if result.recommended is None:
        st.warning(f"No fleet met every target within {len(result.iterations)} rounds; the last round is shown. "
                   "Allow more rounds, a longer deferral, or looser targets.")
    gpus_today, gpus_plan = int(today.gpus["total"].sum()), int(best.gpus["total"].sum())
    today_text = "meets every target" if today.met else f"meets {_met_count(today)} targets"
    st.markdown(f"With **{growth}**, the cheapest fleet found that keeps every class under its target has "
                f"**{gpus_plan:,} GPUs** and costs **{_usd(best.cost_usd_per_year)} a year**. Today's fleet of "
                f"{gpus_today:,} GPUs costs {_usd(today.cost_usd_per_year)} a year and {today_text} under the same "
                "demand.")
    tiles = st.columns(4)
    tiles[0].metric("GPUs (plan)", f"{gpus_plan:,}", f"{gpus_plan - gpus_today:+,} against today", delta_color="off")
    saving = today.cost_usd_per_year - best.cost_usd_per_year
    tiles[1].metric("Cost per year (plan)", _usd(best.cost_usd_per_year), f"{_usd(-saving, sign=True)} against today",
                    delta_color="inverse")
    tiles[2].metric("Utilisation (plan)", f"{best.kpis['utilization']:.1%}",
                    f"{100 * (best.kpis['utilization'] - today.kpis['utilization']):+.1f} pts against today")
    tiles[3].metric(f"Targets met (today {_met_count(today)})", f"{_met_count(best)} (plan)",
                    help="workload classes whose p95 wait is within its target")


def _slo_table(result: PlanResult) -> None:
    st.subheader("p95 wait against target, by workload class")
    today, best = result.today.slo, result.best.check.slo
    table = today.merge(best, on=["workload_class", "target_p95_h"], suffixes=("_today", "_plan"))
    st.dataframe(table[["workload_class", "target_p95_h", "p95_h_today", "met_today", "p95_h_plan", "margin_h_plan",
                        "met_plan"]], hide_index=True, key="cap_slo_table",
                 column_config={"workload_class": "class",
                                "target_p95_h": st.column_config.NumberColumn("target p95 (h)", format="%.2f"),
                                "p95_h_today": st.column_config.NumberColumn("p95 today (h)", format="%.2f"),
                                "met_today": "met today",
                                "p95_h_plan": st.column_config.NumberColumn("p95 with the plan (h)", format="%.2f"),
                                "margin_h_plan": st.column_config.NumberColumn("SLO margin (h)", format="%+.2f"),
                                "met_plan": "met with the plan"})
    st.caption("p95 of the wait before the first start, over the jobs submitted in the planning window; a job that "
               "never started counts as waiting until the simulation's end. Margin = target - p95.")


def _fleet(result: PlanResult) -> None:
    st.subheader("The recommended fleet against today's")
    change = fleet_comparison(result)
    plot(st, charts_capacity.fleet_bars(change), theme=None, key="cap_fleet_chart")
    with st.expander("GPUs by region, type and tier"):
        number = st.column_config.NumberColumn
        st.dataframe(change, hide_index=True, key="cap_fleet_table", column_config={
            "gpu_type": "GPU type", "change": number(format="%+,d"),
            **{f"{when}_{tier}": number(f"{tier.replace('_', '-')}, {when}", format="%,d")
               for when in ("today", "plan") for tier in ("reserved", "spot", "on_demand", "total")}})


def _curves(dataset: str, form: dict, growth: float, result: PlanResult) -> None:
    st.subheader("As the fleet grows")
    st.caption("Today's fleet scaled pool by pool (0.6x to 2x, whole nodes), replayed on the same window and "
               "demand: where does today's mix meet the targets, and at what cost? Runs on two processes.")
    with st.spinner("Simulating seven fleet sizes..."):
        points, classes = data_planning.curve(dataset, form, growth)
    failed = points[points["error"] != ""]
    for row in failed.itertuples(index=False):
        st.error(md(f"fleet x{row.scale:g}: {row.error}"))
    today, best = result.today, result.best.check
    gpus_today, gpus_plan = int(today.gpus["total"].sum()), int(best.gpus["total"].sum())
    plot(st, charts_capacity.slo_curves(classes, result.settings.slo_h,
                                               {"today": gpus_today, "plan": gpus_plan}),
                    theme=None, key="cap_slo_curves")
    plot(st, charts_capacity.cost_curve(points[points["error"] == ""], {
        "today": (gpus_today, today.cost_usd_per_year), "plan": (gpus_plan, best.cost_usd_per_year)}),
        theme=None, key="cap_cost_curve")
    cheapest = points[points["met"]].sort_values("cost_usd_per_year")
    if len(cheapest):
        row = cheapest.iloc[0]
        st.markdown(f"Scaling today's mix, the smallest fleet that meets every target is **x{row['scale']:g}** "
                    f"({int(row['gpus']):,} GPUs, {_usd(row['cost_usd_per_year'])} a year); the plan "
                    f"reshapes the fleet and costs {_usd(best.cost_usd_per_year)}.")
    else:
        st.markdown("No scale of today's mix up to 2x meets every target.")


def _rounds(result: PlanResult) -> None:
    with st.expander("How this plan was found (rounds and method)"):
        rows = [{"round": it.number, "integer program $/week": it.plan.weekly_cost_usd,
                 "compacted (pools x)": it.compacted,
                 "simulated $/year": it.check.cost_usd_per_year, "GPUs": int(it.check.gpus["total"].sum()),
                 "all targets met": it.check.met,
                 "pools over a target": ", ".join("/".join(p) for p in it.missed_pools)} for it in result.iterations]
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="cap_rounds_table",
                     column_config={"integer program $/week": st.column_config.NumberColumn(format="$%,.0f"),
                                    "compacted (pools x)": st.column_config.NumberColumn(format="x%.3f"),
                                    "simulated $/year": st.column_config.NumberColumn(format="$%,.0f")})
        s = result.settings
        st.markdown(
            f"1. **Demand**: jobs submitted {result.start_utc:%Y-%m-%d %H:%M} - {result.end_utc:%Y-%m-%d %H:%M} UTC "
            f"x {result.growth:g}, as GPUs busy per region, GPU type and hour of the week if every job started when "
            f"submitted; {md(', '.join(s.flexible_classes) or 'no class')} may wait up to {s.defer_hours} h.\n"
            "2. **Integer program** (HiGHS via scipy): reserved nodes (paid every hour), spot and on-demand "
            "(paid while used; spot at most "
            f"{s.spot_max_share:.0%} of a pool, {s.spot_efficiency:.0%} of its hours useful) at the least weekly cost "
            "that serves that demand x each pool's headroom; every pool keeps room for its widest gang job.\n"
            f"3. **Check**: the window replayed on that fleet ({s.warmup_days:g} days of warm-up first) under "
            f"*{md(s.scenario.name)}*, spot nodes interrupted {s.spot_interruptions_per_node_hour:g} times per "
            "node-hour; costs are what the simulation paid, annualised.\n"
            f"4. **Refine**: pools where some class misses its target get {s.headroom_step:.0%} more headroom; once "
            "a fleet meets every target, up to two more rounds bisect each pool's headroom between the last failing "
            "and the cheapest passing round.\n"
            "5. **Compact**: that fleet, every pool scaled down alike in whole nodes, to the smallest that still "
            "meets every target under the check's policies (bisection to 2 %): the integer program knows nothing "
            "of routing or backfilling, the simulation does. The plan is the cheapest fleet that met every target "
            "(the integer program is optimal for its demand model; the plan is not proven the cheapest fleet the "
            "simulation would accept).")
        for note in result.notes:
            st.caption(md(note))


def _sweeps() -> None:
    with st.expander("Saved sweeps (`meridian sweep`)"):
        sweeps = data_planning.saved_sweeps()
        if sweeps.empty:
            st.caption("No sweeps stored yet: `meridian sweep --dataset NAME --grid FILE.toml` stores its results "
                       "in this database.")
            return
        st.dataframe(sweeps, hide_index=True, key="cap_sweeps")
        chosen = st.selectbox("Show sweep", sweeps["sweep_id"].tolist()[::-1], key="cap_sweep_id",
                              format_func=lambda i: f"#{i} {sweeps.set_index('sweep_id').loc[i, 'name']}")
        loaded = data_planning.saved_sweep(int(chosen))
        if loaded is None:
            st.info("That sweep is gone.")
            return
        _, outcomes = loaded
        rows = [{"point": o["name"], **o["params"], "status": o["status"], "error": o["error"] or "",
                 "utilization": (o["kpis"] or {}).get("utilization"),
                 "wait_p95_h": ((o["kpis"] or {}).get("wait_p95_s") or 0) / 3600,
                 "cost_usd": (o["kpis"] or {}).get("cost_usd")} for o in outcomes]
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="cap_sweep_rows")


st.title("Capacity planning")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No datasets yet: import one on the Data page.")
    st.stop()
st.caption(f"How many GPUs of which type, where and on which pricing tier does **{md(dataset)}** need to keep each "
           "workload class's p95 wait under its target, at the least cost, if demand grows?")
if not data.has_prices(dataset):
    st.info(md(f"No capacity plan for {dataset}: the plan finds the cheapest fleet, and {UNPRICED}."))
    st.stop()
request = _form(dataset)
if request is None:
    st.info("Set the growth and the targets, then **Find the cheapest fleet** (about half a minute for a week).")
    _sweeps()
    st.stop()
form, growth = request
try:
    data_planning.settings(form)
    with st.spinner("Planning: integer program, then simulation, round by round..."):
        result = data_planning.plan(dataset, form, growth)
except PlanError as exc:
    st.error(md(exc))
    st.stop()
_headline(result)
_slo_table(result)
_fleet(result)
_curves(dataset, form, growth, result)
_rounds(result)
_sweeps()
