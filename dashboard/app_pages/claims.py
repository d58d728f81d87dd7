"""Claims: the figures industry write-ups report about GPU scheduling, each tested on this dataset with the
bundled scenarios, its method, spread and a plain verdict (engine.service.experiments.claims)."""
import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.data import fidelity as data_fidelity
from dashboard.data import headroom as data_headroom
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text as md
from engine.service.experiments.claims import HOLDS, NOT_HERE, PARTLY, UNTESTED
from engine.service.experiments.claims_logs import CLAIM as PREDICTION_CLAIM
from engine.service.experiments.claims_logs import log_rows
from engine.service.headroom.measure import HeadroomError

RESULT = "cl_result"   # session: (dataset, store fingerprint, days, seeds, table)
METHOD = """
- **Reported**: the figure as industry write-ups state it; none of them is tuned into the sample, and the
  scenarios are the bundled ones.
- **Baselines**: the recorded baseline (how the data was scheduled) for the idle-despite-a-backlog claim;
  FIFO (`fifo.toml`) where the claim compares a policy with FIFO.
- **More work**: the load headroom ratio, the largest demand scale each policy holds at FIFO's service level
  (p95 wait per workload class and the guaranteed-inference misses), over the seeds shown; the demand is
  resampled within each region, hour of the week, class and team, never compressed in time.
- **Verdict**: for a claimed change c measured as m, *holds* when m reaches 3/4 of c, *partly* from 1/4 of
  it, else *does not hold here*; for a claimed level, *holds* within 5 points (or beyond it), *partly* within
  20. *Cannot be tested yet*: Meridian does not exercise it (the reason says why).
"""


# verdict -> (badge icon, badge colour)
BADGES = {HOLDS: (":material/check_circle:", "green"), PARTLY: (":material/contrast:", "orange"),
          NOT_HERE: (":material/cancel:", "red"), UNTESTED: (":material/schedule:", "gray")}


def _claim_card(row) -> None:
    """One claim: what is reported, what this data shows and with what, the verdict and why."""
    with st.container(border=True):
        claim, measured, verdict = st.columns([5, 4, 2], vertical_alignment="center")
        claim.markdown(f"**{md(row.claim)}**")
        claim.caption(md(f"tested with {row.scenarios}") if row.scenarios else "no bundled scenario tests it")
        measured.markdown(f"Measured here: **{md(row.measured_text)}**")
        if row.spread:
            measured.caption(md(row.spread))
        icon, colour = BADGES[row.verdict]
        with verdict:
            st.badge(row.verdict, icon=icon, color=colour)
        if row.why:
            st.caption(md(row.why))


def _logs_section() -> None:
    """The runtime-prediction claim on the public logs, from the committed fidelity record."""
    try:
        record = data_fidelity.fidelity_record()
    except (OSError, ValueError, KeyError) as exc:
        st.info(md(f"The fidelity record cannot be read ({type(exc).__name__}), so the public logs' rows are not shown."))
        return
    rows = log_rows(record.prediction)
    st.subheader("On public cluster logs: " + PREDICTION_CLAIM.text)
    if rows.empty:
        st.info("This fidelity record has no runtime-prediction rows; recreate it with "
                "`python benchmarks/fidelity_record.py`.")
        return
    st.caption(md(f"From the committed fidelity record ({str(record.meta.get('created_utc', ''))[:10]}): each whole "
                  "log filtered as in the SC'15 experiment and replayed on one processor pool, shortest-first EASY "
                  "seeing Meridian's walk-forward runtime predictions (easy++-learned) against the same order and "
                  "backfilling seeing the users' requested times (EASY-SJBF). Mean job completion time is wait + "
                  "run; bounded slowdown uses tau 10 s. The runs are deterministic, so the intervals are a 95 % "
                  "paired bootstrap over the jobs (1,000 resamples, seed 0), not over seeds. The predictor's "
                  "settings were chosen on KTH-SP2, so its row is not a blind test. The verdict uses the rule "
                  "of the cards above."))
    st.dataframe(rows, hide_index=True, key="cl_logs")


st.title("Claims")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No dataset yet: import one on the Data page.")
    st.stop()
st.caption(f"Figures reported in industry write-ups about GPU scheduling, tested on **{md(dataset)}** with the "
           "bundled scenarios: what each claims, what this data shows, how it was measured, and whether the "
           "claim holds here.")
left, right = st.columns(2)
days = left.number_input("Test on the first N days of the dataset (0 = all)", min_value=0.0, value=7.0, step=1.0,
                         key="cl_days", format="%g", help="a week of the sample takes about a minute and a half")
seeds = right.number_input("Demand resamplings (seeds)", min_value=1, max_value=9, value=3, step=1, key="cl_seeds")
key = (dataset, data.store().fingerprint(), float(days), int(seeds))
if st.button("Test the claims", type="primary", key="cl_run"):
    bar = st.progress(0.0, text="Replaying the scenarios...")
    steps = []

    def progress(message: str) -> None:
        steps.append(message)
        bar.progress(min(len(steps) / 5, 1.0), text=md(message))

    def waiting(place) -> None:
        bar.progress(0.0, text=f"Testing the claims. {place.describe()}")
    try:
        table = data_headroom.claims(dataset, float(days), int(seeds), progress, waiting)
    except (ScenarioError, HeadroomError, ValueError, KeyError) as exc:
        bar.empty()
        st.error(md(f"The claims could not be tested: {exc}"))
        st.stop()
    bar.empty()
    st.session_state[RESULT] = (*key, table)
stored = st.session_state.get(RESULT)
if stored is None or tuple(stored[:4]) != key:
    st.info("Press **Test the claims**: every bundled scenario the claims need is replayed on the chosen days, and "
            "the load headroom of FIFO, EASY backfilling and follow-the-sun is measured.")
    _logs_section()
    st.stop()
table = stored[4]
counts = table["verdict"].value_counts()
st.markdown(md(f"On {dataset}: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in (HOLDS, PARTLY, NOT_HERE, UNTESTED))))
for claim_row in table.itertuples(index=False):
    _claim_card(claim_row)
_logs_section()
with st.expander("All of it as a table (sortable, downloadable)"):
    shown = pd.DataFrame({"claim (as reported)": table["claim"], "tested with": table["scenarios"],
                          "measured here": table["measured_text"], "spread": table["spread"],
                          "verdict": table["verdict"], "why": table["why"], "method": table["method"]})
    st.dataframe(shown, hide_index=True, key="cl_table")
with st.expander("How each figure is measured"):
    st.markdown(METHOD)
    for row in table.itertuples(index=False):
        if row.method:
            st.markdown(f"- **{md(row.claim)}**: {md(row.method)}.")
