"""Job: the one view of a job, "why is my job waiting, and when will it start?" (dashboard.forms.job), opened
from What-if, Teams & fairness and Predictors, or on any job ID typed here."""
import streamlit as st

from dashboard import data
from dashboard.data import headroom as data_headroom
from dashboard.data import job as data_job
from dashboard.forms.job import VIEW, predicted_section, recorded_facts, story_section
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text as md

st.title("Job")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No datasets yet: import one on the Data page.")
    st.stop()
st.caption("Why a job waited and when it starts: its story in a scenario, over a window that holds it, and its "
           "start predicted from the queue as recorded, with how wide the interval is and why.")
view = st.session_state.setdefault(VIEW, {})
recorded_spec, meaning = data_headroom.recorded(dataset)
scenarios = {data_headroom.RECORDED: recorded_spec, **data.bundled_scenarios()}
left, middle, right = st.columns([2, 2, 1])
job_id = left.text_input("Job ID", value=view.get("job_id", ""), key="job_id_in",
                         help="as the dataset records it (the job_id column)").strip()
names = list(scenarios)
scenario = middle.selectbox("Scenario", names, key="job_scenario_in",
                            index=names.index(view["scenario"]) if view.get("scenario") in names else 0,
                            help=f"recorded: {md(meaning)}")
days = right.number_input("First N days (0 = all)", min_value=0.0, step=1.0, format="%g", key="job_days_in",
                          value=float(view.get("days", 7.0)),
                          help="widened when the job was submitted after them")
if (job_id, scenario, days) != (view.get("job_id"), view.get("scenario"), view.get("days")):
    view.update(job_id=job_id, scenario=scenario, days=days, at=None, page="")  # typed here: predicted at submit
if not job_id:
    st.info("Type a job ID, or open a job from the What-if, Teams & fairness or Predictors page.")
    st.stop()
job = data_job.recorded(dataset, job_id)
if job is None:
    st.warning(md(f"No job {job_id} in dataset {dataset}."))
    st.stop()
st.markdown(md(recorded_facts(job)))
window = data_job.window(dataset, job_id, days, view.get("page", ""))
if window.note:
    st.info(md(window.note))
st.subheader(md(f"In the scenario {scenario}"))
try:
    with st.spinner(md(f"Simulating {scenario}...")):
        found = data_job.story(dataset, scenarios[scenario], window.days, job_id)
except (ScenarioError, ValueError) as exc:
    st.error(md(f"{scenario}: {exc}"))
    st.stop()
if found is None:
    st.warning(md(f"Job {job_id} is not among the jobs {scenario} simulates (its [workload] window leaves it out)."))
else:
    story, run = found
    span = "all of the dataset" if not window.days else f"the first {data_job.days_text(window.days)}"
    st.caption(md(f"Simulated over {span} ({run.jobs:,} jobs), as What-if and Teams & fairness run it."))
    story_section(story, run)
predicted_section(dataset, job, view.get("at"))
