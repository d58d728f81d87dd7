"""Overview: where and when the fleet's GPUs sit idle, what it costs, and who waits."""
import math

import streamlit as st

from dashboard import data
from dashboard.charts.view import plot
from engine.core.escaping import markdown_text
from engine.core.text import hours

METHODS = """
- **Busy GPU-hours** of an hour = the integral over that hour of the GPUs allocated to running jobs: a job
  holds its `gpus` from its start to its end (a still-running job until the data's last instant; fractional
  GPUs count as fractions).
- **Capacity** = the GPUs in the fleet table per region and GPU type; where the data has no fleet, the peak
  number of GPUs ever allocated at once (rounded up), which can only understate the real fleet.
- **Utilisation** = busy GPU-hours / (capacity x hours), over every region, GPU type and whole UTC hour of
  the time range.
- **Idle GPU-hours** = the sum over hours of max(capacity - busy, 0) per region and GPU type.
- **Idle $** = idle GPU-hours x the price of the tier the capacity is bought at (reserved, on-demand, spot;
  idle hours split over tiers in proportion to their GPUs). **Idle $ / month** = idle $ / days x 30.4375.
- **Queue wait** = start - submit per started job; **p95** is the 95th percentile over all of them.
- **Heat map**: utilisation per weekday and hour of each region's own local clock (daylight saving
  included), from the same busy and capacity hours.
"""



def _usd(value: float) -> str:
    return "n/a" if math.isnan(value) else f"${value:,.0f}"


def _kpis(k) -> None:
    unit = "GPU" if k.unit == "gpus" else k.unit.rstrip("s")
    cols = st.columns(4)
    cols[0].metric("Utilisation", "n/a" if math.isnan(k.utilisation_pct) else f"{k.utilisation_pct:.1f}%",
                   help="Busy GPU-hours / capacity GPU-hours over the whole time range")
    cols[1].metric(f"Idle {unit}-hours", f"{k.idle_unit_hours:,.0f}", help="Capacity not allocated to any job")
    cols[2].metric("Idle $ / month", _usd(k.idle_usd_per_month),
                   help=f"Idle dollars scaled to a 30.44-day month; prices: {markdown_text(k.price_source)}")
    cols[3].metric("p95 queue wait", hours(k.p95_wait_h * 3600), help="95% of started jobs waited at most this long")
    source = {"fleet": "from the fleet table", "inferred": "inferred from peak allocation",
              "mixed": "fleet table, partly inferred", "samples": "time-averaged from samples"}[k.capacity_source]
    jobs = f"{k.jobs:,} jobs · " if k.jobs else ""
    st.caption(markdown_text(f"{jobs}{k.capacity_units:,.0f} {unit}s ({source}) · {k.start_utc:%Y-%m-%d} to "
                             f"{k.end_utc:%Y-%m-%d} UTC ({k.window_days:.1f} days) · prices: {k.price_source}"))


def _charts(dataset: str, ov, figures) -> None:
    freq = st.radio("Resolution", ["Daily", "Hourly"], horizontal=True, key=f"timeline_freq:{dataset}",
                    index=1 if ov.kpis.window_days < 3 else 0, label_visibility="collapsed")
    plot(st, figures["timeline_hourly" if freq == "Hourly" else "timeline_daily"], theme=None)
    plot(st, figures["heatmap"], theme=None)
    left, right = st.columns(2)
    plot(left, figures["idle_hours"], theme=None)
    if "idle_usd" in figures:
        plot(right, figures["idle_usd"], theme=None)
    else:
        right.info("No idle dollars: this data counts capacity in nodes, not priced GPUs.")
    if "waits" in figures:
        left, right = st.columns(2)
        plot(left, figures["waits"], theme=None)
        plot(right, figures["mix"], theme=None)
    else:
        st.info("This dataset holds utilisation samples only: no queue waits or job mix.")


def _methods(ov) -> None:
    with st.expander("How these numbers are computed"):
        st.markdown(METHODS)
        st.markdown("**Assumptions for this dataset**\n" + "\n".join(f"- {markdown_text(a)}" for a in ov.assumptions))
        if not ov.idle_by_tier.empty:
            st.markdown("**Idle capacity by region, GPU type and tier**")
            st.dataframe(ov.idle_by_tier, hide_index=True, column_config={
                "capacity_gpus": st.column_config.NumberColumn("GPUs", format="%.0f"),
                "idle_gpu_hours": st.column_config.NumberColumn("idle GPU-hours", format="%.0f"),
                "usd_per_gpu_hour": st.column_config.NumberColumn("$ per GPU-hour", format="$%.2f"),
                "price_assumed": st.column_config.CheckboxColumn("price assumed"),
                "idle_usd": st.column_config.NumberColumn("idle $", format="$%.0f"),
            })


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
_kpis(result.kpis)
_charts(dataset, result, figures)
_methods(result)
