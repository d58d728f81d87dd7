"""Cost & carbon: dollars and emissions of the recorded history (replayed by the recorded baseline) and of
chosen scenarios, with the trade-off between cost, waits and carbon, under editable assumptions."""
import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.charts import cost as charts_cost
from dashboard.charts.view import plot, say
from dashboard.data import headroom as data_headroom
from engine.analysis.runs.catalogue import CATALOGUE, methods, shown_comparison
from engine.analysis.runs.cost import CostAssumptions
from engine.analysis.runs.cost_change import explained, spend_change
from engine.analysis.runs.sim_series import kpi_comparison
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text
from engine.service.compare import UNPRICED
from engine.service.report.fmt import signed_usd

BASELINE = data_headroom.RECORDED  # the policies that reproduce how the dataset was scheduled
DEFAULTS = CostAssumptions()
METHODS = methods("cost_usd", "cost_reserved_usd", "cost_on_demand_usd", "cost_spot_usd", "cost_burst_usd",
                  "idle_cost_usd", "cost_usd_per_year", "idle_cost_usd_per_year", "effective_usd_per_gpu_hour",
                  "productive_usd_per_gpu_hour") + """
- The window W is the simulated one: the jobs' first submit to the end of the days chosen (or the data's
  observed end); prices per region, GPU type and tier come from the dataset's prices table, else the default
  price book (marked assumed). The gap between the price list and the $/GPU-hour figures is what idle and
  failed work cost per useful hour.
- **Carbon** (kgCO2e) = GPU power (kW per GPU of its type) x GPUs held x hours x PUE x grid intensity
  (gCO2e/kWh) of the region at the local hour the work ran / 1000. Only GPUs held by jobs draw power here;
  idle GPUs, CPUs and networking are not counted.
- **Residency violations**: started jobs whose residency tag does not allow the region they ran in.
""" + methods("egress_usd")


def _usd(value: float) -> str:
    return f"${value:,.0f}" if abs(value) >= 1000 else f"${value:,.2f}"


def _kg(value: float) -> str:
    return f"{value / 1000:,.1f} t" if abs(value) >= 1000 else f"{value:,.2f} kg"


def _assumptions(gpu_types: list[str]) -> CostAssumptions:
    """The editable assumptions (PUE, kW per GPU type of the fleet, annualisation days)."""
    with st.expander("Edit assumptions: PUE, power per GPU, annualisation"):
        left, right = st.columns(2)
        pue = left.number_input("PUE (facility kW / IT kW)", min_value=1.0, max_value=3.0, step=0.05,
                                value=DEFAULTS.pue, key="cc_pue")
        days = right.number_input("Days per year for annualising", min_value=1.0, max_value=366.0, step=1.0,
                                  value=DEFAULTS.annualisation_days, key="cc_year_days")
        st.caption("Power drawn per GPU while a job holds it (kW; board power by default):")
        kw = {}
        for i, col in enumerate(st.columns(max(1, min(6, len(gpu_types))))):
            for gpu_type in gpu_types[i::6]:
                kw[gpu_type] = col.number_input(markdown_text(gpu_type), min_value=0.0, max_value=5.0, step=0.05,
                                                value=DEFAULTS.kw_for(gpu_type), key=f"cc_kw:{gpu_type}")
    return CostAssumptions(pue=pue, kw_per_gpu={**DEFAULTS.kw_per_gpu, **kw}, annualisation_days=days)


def _run(dataset: str, chosen: list[tuple[str, dict]], days: float, assumptions: CostAssumptions):
    """[(label, WhatIfRun, WorldReport)] per scenario, or None after an error message."""
    progress = st.progress(0.0, text="Simulating...")
    out = []
    for i, (label, spec) in enumerate(chosen):
        progress.progress(i / len(chosen), text=f"Simulating {markdown_text(label)} ({i + 1} of {len(chosen)})...")
        try:
            run = data.whatif_run(dataset, spec, days)
            if not run.jobs:
                progress.empty()
                st.info(markdown_text(f"Nothing to price for {dataset}: it has no job records to replay."))
                return None
            out.append((label, run, data.whatif_world(dataset, spec, days, assumptions)))
        except (ScenarioError, ValueError) as exc:
            progress.empty()
            st.error(markdown_text(f"{label}: {exc}"))
            return None
    progress.empty()
    return out


def _metrics(runs, detail: str, days_per_year: float) -> None:
    base, base_world = runs[0][2].kpis, runs[0][2]
    label, run, world = next(r for r in runs if r[0] == detail)
    rate = lambda v: f"${v:,.2f}"  # noqa: E731
    shown = (("cost_usd", _usd), ("idle_cost_usd", _usd), ("effective_usd_per_gpu_hour", rate),
             ("productive_usd_per_gpu_hour", rate), ("carbon_kg", _kg))
    for col, (key, fmt) in zip(st.columns(len(shown)), shown):
        kpi, diff = CATALOGUE[key], world.kpis[key] - base[key]  # the tile's label and direction: the catalogue's
        delta = None if label == BASELINE else ("+" if diff >= 0 else "-") + fmt(abs(diff)).lstrip("-")
        colour = ("inverse" if kpi.better == "lower" else "normal") if diff else "off"
        col.metric(kpi.label + (" (CO2e)" if key == "carbon_kg" else ""), fmt(world.kpis[key]), delta,
                   delta_color=colour)
    window_days = world.cost.totals["window_days"]
    st.caption(f"**{markdown_text(label)}**, over the simulated window of {window_days:,.1f} days: "
               f"{_usd(world.kpis['cost_usd'])} "
               f"spent, {_usd(world.kpis['cost_usd_per_year'])} a year at this rate; idle reserved GPUs "
               f"{_usd(world.kpis['idle_cost_usd'])} ({_usd(world.kpis['idle_cost_usd_per_year'])} a year). "
               f"{world.cost.totals['gpu_hours_used']:,.0f} GPU-hours allocated, "
               f"{world.carbon.totals['kwh']:,.0f} kWh at {world.carbon.totals['g_co2e_per_kwh']:,.0f} gCO2e/kWh "
               "on average.")
    if label != BASELINE:
        parts = spend_change(base_world.cost, world.cost, days_per_year)
        total = world.kpis["cost_usd_per_year"] - base["cost_usd_per_year"]
        st.caption(markdown_text(f"Spend a year against {BASELINE}, by pricing tier: "
                                 f"{explained(parts, total, signed_usd)}. On-demand and spot GPUs are paid only "
                                 "while jobs hold them, reserved GPUs every hour."))


# The comparison table's rows (KPI keys), each printed in its KPI catalogue format with the catalogue's label, as
# the tiles, the What-if page and the report name and format a figure.
_TABLE = ("cost_usd", "idle_cost_usd", "cost_usd_per_year", "idle_cost_usd_per_year", "effective_usd_per_gpu_hour",
          "productive_usd_per_gpu_hour", "carbon_kg", "wait_p95_s", "utilization", "residency_violations")


def _table(runs) -> None:
    values = [(label, {key: (w if CATALOGUE[key].group == "world" else run).kpis[key] for key in _TABLE})
              for label, run, w in runs]
    table = shown_comparison(kpi_comparison(values))
    st.dataframe(table.assign(what=table["what"].map(say)), height=35 * (len(table) + 1) + 3, key="cc_table")


def _charts(runs, detail: str) -> None:
    _, _, world = next(r for r in runs if r[0] == detail)
    left, right = st.columns(2)
    plot(left, charts_cost.spend_by_region(world.cost.spend, detail), theme=None)
    left.caption("Per region: reserved dollars split into the part jobs used and the idle part; on-demand and "
                 "spot are billed only while used. Bar total = the region's spend over the window.")
    plot(right, charts_cost.spend_by_scenario({label: w.cost.spend for label, _, w in runs}), theme=None)
    right.caption("The same parts for each scenario: a better policy on the same fleet moves dollars from "
                  "'reserved, idle' to 'reserved, used' (and may need less on-demand and spot).")
    left, right = st.columns(2)
    plot(left, charts_cost.carbon_by_region(world.carbon.by_region, detail), theme=None)
    left.caption("kgCO2e = kW per GPU x GPUs held x hours x PUE x the region's grid intensity at the local hour, "
                 "/ 1000. Colour: the region's energy-weighted mean intensity over the work it ran.")
    plot(right, charts_cost.carbon_by_local_hour(world.carbon.by_local_hour, detail), theme=None)
    right.caption("The same emissions by the hour of day on each region's own clock: work shifted to the hours "
                  "of a cleaner grid lowers the bars.")


def _most_at_once(rented: pd.DataFrame) -> int:
    """The most rentals open at the same time (a rental holds from renting to return)."""
    ends = rented["returned_s"].fillna(float("inf"))
    steps = pd.concat([pd.Series(1, index=rented["rented_s"]), pd.Series(-1, index=ends)]).sort_index(kind="stable")
    return int(steps.groupby(level=0).sum().cumsum().max())


def _bursts(runs) -> None:
    """The cloud nodes each scenario rented, per region and GPU type, when any did."""
    rows = []
    for label, run, world in runs:
        burst = run.result.burst
        if burst is None or not len(burst):
            continue
        spend = world.cost.spend[world.cost.spend["tier"] == "burst"]
        for row in spend.itertuples():
            rented = burst[(burst["region"] == row.region) & (burst["gpu_type"] == row.gpu_type)]
            rows.append({"scenario": label, "region": row.region, "GPU type": row.gpu_type, "rentals": len(rented),
                         "GPU-hours billed": row.gpu_hours_paid, "GPU-hours used": row.gpu_hours_used,
                         "spend (USD)": row.usd, "idle spend (USD)": row.idle_usd,
                         "most nodes at once": _most_at_once(rented)})
    if not rows:
        return
    st.subheader("Cloud burst")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="cc_burst", column_config={
        "GPU-hours billed": st.column_config.NumberColumn(format="%,.1f"),
        "GPU-hours used": st.column_config.NumberColumn(format="%,.1f"),
        "spend (USD)": st.column_config.NumberColumn(format="$%,.0f"),
        "idle spend (USD)": st.column_config.NumberColumn(format="$%,.0f")})
    st.caption("Cloud nodes rented when a region's queue head had waited the pool's trigger time; billed from "
               "renting to return (idle spend: billed hours no job used, boot time included). Each rental is in "
               "the What-if result's burst table.")


def _tradeoff(runs) -> None:
    st.subheader("Trade-off across scenarios")
    points = [{"scenario": label, "cost_usd": w.kpis["cost_usd"], "wait_p95_h": run.kpis["wait_p95_s"] / 3600,
               "carbon_kg": w.kpis["carbon_kg"]} for label, run, w in runs]
    plot(st, charts_cost.tradeoff(pd.DataFrame(points)), theme=None)
    st.caption("x: spend over the window; y: the 95th percentile of queue waits (start - submit) of started jobs; "
               "dot size and colour: kgCO2e. A scenario left of and below another is cheaper and faster.")


def _assumption_tables(runs, detail: str, assumptions: CostAssumptions) -> None:
    st.subheader("Assumptions and price sources")
    _, _, world = next(r for r in runs if r[0] == detail)
    left, right = st.columns([2, 3])
    rows = assumptions.rows()
    power = rows["assumption"].str.extract(r"^power per (.+) GPU$")[0]
    shown = power.isna() | power.isin([*world.cost.spend["gpu_type"].astype(str), "other"])
    left.dataframe(rows[shown.to_numpy()], hide_index=True, key="cc_assumptions")
    prices = world.cost.prices.rename(columns={"usd_per_gpu_hour": "USD per GPU-hour", "price_assumed": "assumed"})
    right.dataframe(prices, hide_index=True, key="cc_prices",
                    column_config={"gpu_type": "GPU type", "USD per GPU-hour": st.column_config.NumberColumn(format="$%.3f")})
    notes = list(dict.fromkeys(note for _, _, w in runs for note in w.assumed))
    if notes:
        st.warning("Assumed for lack of data:\n" + "\n".join(f"- {markdown_text(note)}" for note in notes))
    else:
        st.success("Every price, grid intensity and time zone comes from the dataset; none was assumed.")
    with st.expander("How these numbers are computed", expanded=False):
        st.markdown(METHODS)


st.title("Cost & carbon")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No dataset yet: import one on the Data page.")
    st.stop()
world_tables = data.world_tables(dataset)
if world_tables["gpu_types"].empty:
    st.info(f"Nothing to price for {markdown_text(dataset)}: it has no fleet table (nodes with GPU types and pricing tiers). "
            "Import one on the Data page.")
    st.stop()
if not data.has_prices(dataset):
    st.info(markdown_text(f"Nothing to price for {dataset}: {UNPRICED}."))
    st.stop()
recorded, meaning = data_headroom.recorded(dataset)
bundled = {BASELINE: recorded, **data.bundled_scenarios()}
others = [name for name in bundled if name != BASELINE]
st.caption(markdown_text(f"What the fleet of {dataset} costs and emits when its recorded jobs are replayed as they "
                         f"were scheduled (the recorded baseline: {meaning}) and under the scenarios picked here, "
                         "on the same fleet and prices. Runtimes come from the telemetry. Over all of the dataset "
                         "(0 days) the recorded figures are the Overview's."))
left, right = st.columns([3, 1])
picked = left.multiselect("Scenarios to compare with the recorded baseline", others, key="cc_scenarios",
                          default=["easy-backfill"] if "easy-backfill" in others else others[:1])
days = right.number_input("Simulate the first N days (0 = all)", min_value=0.0, value=7.0, step=1.0,
                          format="%g", key="cc_days",
                          help="The whole sample takes tens of seconds to simulate; a week a few")
assumptions = _assumptions(list(world_tables["gpu_types"]["gpu_type"]))
st.session_state["cost_assumptions"] = data.assumptions_text(assumptions)
runs = _run(dataset, [(name, bundled[name]) for name in [BASELINE, *picked]], days, assumptions)
if runs:
    labels = [label for label, _, _ in runs]
    detail = st.radio("Breakdown of", labels, horizontal=True, key="cc_detail", format_func=markdown_text) \
        if len(runs) > 1 else labels[0]
    _metrics(runs, detail, assumptions.annualisation_days)
    _table(runs)
    _charts(runs, detail)
    _bursts(runs)
    _tradeoff(runs)
    _assumption_tables(runs, detail, assumptions)
