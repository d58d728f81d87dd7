"""Overview: where and when the fleet's GPUs sit idle, what the fleet costs, and who waits."""
import math
from concurrent.futures import Future

import streamlit as st

from dashboard import data
from dashboard.charts.view import plot, say
from dashboard.data import priced
from engine.analysis.runs.catalogue import MONEY, label, methods, shown
from engine.analysis.runs.cost import CostAssumptions
from engine.core.escaping import markdown_text
from engine.core.text import hours

MONEY_TILES = ("cost_usd_per_year", "idle_cost_usd_per_year")
METHODS = """
- **Busy GPU-hours** of an hour = the integral over that hour of the GPUs allocated to running jobs: a job
  holds its `gpus` from its start to its end (a still-running job until the data's last instant; fractional
  GPUs count as fractions).
- **Capacity** = the GPUs in the fleet table per region and GPU type; where the data has no fleet, the peak
  number of GPUs ever allocated at once (rounded up), which can only understate the real fleet.
- **Utilisation** = busy GPU-hours / (capacity x hours), over every region, GPU type and whole UTC hour of
  the time range.
- **Idle GPU-hours** = the sum over hours of max(capacity - busy, 0) per region and GPU type.
- **Queue wait** = start - submit per started job; **p95** is the 95th percentile over all of them.
- **Heat map**: utilisation per weekday and hour of each region's local clock (daylight saving
  included), from the same busy and capacity hours.
"""
MONEY_NOTE = """
**Dollars.** The telemetry says how many GPUs of a type each job held, not which pricing tier's, so the
dollars are those of the recorded history as the recorded baseline replays it (every job placed on a node,
starting as recorded: the Fidelity page shows how closely), over the whole dataset. They are the figures the
What-if, Cost & carbon and Report pages and `meridian simulate --scenario recorded` give for the same window,
defined once (the KPI catalogue):
"""


def _kpis(k, money) -> None:
    unit = say("GPU") if k.unit == "gpus" else k.unit.rstrip("s")
    cols = st.columns(5)
    cols[0].metric("Utilisation", "n/a" if math.isnan(k.utilisation_pct) else f"{k.utilisation_pct:.1f}%",
                   help=say("Busy GPU-hours / capacity GPU-hours over the whole time range"))
    cols[1].metric(f"Idle {unit}-hours", f"{k.idle_unit_hours:,.0f}", help="Capacity not allocated to any job")
    for col, key in zip(cols[2:4], MONEY_TILES):
        value = "..." if money is False else "n/a" if money.world is None else shown(key, money.world.kpis[key])
        col.metric(label(key), value, help=markdown_text(MONEY[key]))
    cols[4].metric("p95 queue wait", hours(k.p95_wait_h * 3600), help="95% of started jobs waited at most this long")
    source = {"fleet": "from the fleet table", "inferred": "inferred from peak allocation",
              "mixed": "fleet table, partly inferred", "samples": "time-averaged from samples"}[k.capacity_source]
    jobs = f"{k.jobs:,} jobs · " if k.jobs else ""
    st.caption(markdown_text(f"{jobs}{k.capacity_units:,.0f} {unit}s ({source}) · {k.start_utc:%Y-%m-%d} to "
                             f"{k.end_utc:%Y-%m-%d} UTC ({k.window_days:.1f} days)"))


def _money_caption(money, future: Future) -> None:
    if money is False:
        _pricing(future)
    elif money.world is None:
        st.caption(markdown_text(f"No dollars for this dataset: {money.reason}."))
    else:
        days = money.world.cost.totals["window_days"]
        assumed = "; prices partly assumed (see *How these numbers are computed*)" if money.world.assumed else ""
        st.caption(markdown_text(
            f"Dollars: the recorded history of {money.jobs:,} jobs as the recorded baseline replays it, "
            f"{money.start_utc:%Y-%m-%d %H:%M} to {money.end_utc:%Y-%m-%d %H:%M} UTC ({days:,.1f} days; a year = "
            f"x 365 / {days:,.1f}): the figures What-if, Cost & carbon and Report give over the whole "
            f"dataset{assumed}."))


@st.fragment(run_every=2.0)
def _pricing(future: Future) -> None:
    """While the recorded history is priced in the background: say so, and rerun the page once it is ready.
    The check is the page run's own Future (no query, no cache lookup): many sessions waiting for the same
    pricing each poll it at almost no cost to the replay they wait for."""
    if future.done():
        st.rerun()
    st.caption("Pricing the recorded history: replaying the whole dataset under its recorded baseline "
               "(about ten seconds for the sample's 92,000 jobs; once per dataset)...")


def _assumptions() -> str:
    """The Cost & carbon page's assumptions when they were edited there, else the defaults."""
    return st.session_state.get("cost_assumptions") or data.assumptions_text(CostAssumptions())


def _charts(dataset: str, ov, figures, money) -> None:
    freq = st.radio("Resolution", ["Daily", "Hourly"], horizontal=True, key=f"timeline_freq:{dataset}",
                    index=1 if ov.kpis.window_days < 3 else 0, label_visibility="collapsed")
    plot(st, figures["timeline_hourly" if freq == "Hourly" else "timeline_daily"], theme=None)
    plot(st, figures["heatmap"], theme=None)
    left, right = st.columns(2)
    plot(left, figures["idle_hours"], theme=None)
    if money is False:
        right.info("Spend by region and tier: pricing the recorded history...")
    elif money.world is None:
        right.info("No spend by region and tier: this dataset has no dollars (see above).")
    else:
        plot(right, priced.spend_figure(dataset, _assumptions()), theme=None)
    if "waits" in figures:
        left, right = st.columns(2)
        plot(left, figures["waits"], theme=None)
        plot(right, figures["mix"], theme=None)
    else:
        st.info("This dataset holds utilisation samples only: no queue waits or job mix.")


def _spend_columns() -> dict:
    """How the spend table's columns are named and formatted (in the dataset's unit)."""
    number = st.column_config.NumberColumn
    return {"gpu_type": say("GPU type"), "installed_gpus": number(say("GPUs installed"), format="%,.0f"),
            "gpu_hours_used": number(say("GPU-hours held"), format="%,.0f"),
            "gpu_hours_paid": number(say("GPU-hours paid"), format="%,.0f"),
            "idle_gpu_hours_paid": number(say("idle GPU-hours paid"), format="%,.0f"),
            "usd_per_gpu_hour": number(say("$ per GPU-hour"), format="$%.2f"),
            "usd": number("spend", format="$%,.0f"), "idle_usd": number("idle cost", format="$%,.0f"),
            "price_assumed": st.column_config.CheckboxColumn("price assumed")}


def _methods(ov, money) -> None:
    with st.expander("How these numbers are computed"):
        st.markdown(say(METHODS))
        st.markdown(say(MONEY_NOTE + methods("cost_usd", "idle_cost_usd", *MONEY_TILES)))
        if money and money.world is not None:
            st.markdown(markdown_text(f"The recorded baseline of this dataset: {money.recorded}."))
        st.markdown("**Assumptions for this dataset**\n" + "\n".join(f"- {markdown_text(say(a))}" for a in ov.assumptions))
        if money and money.world is not None:
            notes = "\n".join(f"- {markdown_text(note)}" for note in money.world.assumed)
            if notes:
                st.markdown("**Assumed for the dollars**\n" + notes)
            st.markdown(say("**Spend by region, pricing tier and GPU type over the window**"))
            st.dataframe(money.world.cost.spend, hide_index=True, key="ov_spend", column_config=_spend_columns())


dataset = st.session_state.get("dataset")
st.title("Overview" + (f" · {markdown_text(dataset)}" if dataset else ""))
if dataset is None:
    st.info("No data yet. Import a file on the Data page.")
    st.stop()
with st.spinner(f"Analysing {markdown_text(dataset)}..."):
    result = data.overview(dataset)
    figures = data.overview_figures(dataset) if result.kind != "empty" else {}
if result.kind == "empty":
    st.info(markdown_text(f"Nothing to show for {dataset}: {result.assumptions[0]}"))
    st.stop()
future = priced.history(dataset, _assumptions())
money = future.result() if future.done() else False
_kpis(result.kpis, money)
_money_caption(money, future)
_charts(dataset, result, figures, money)
_methods(result, money)
