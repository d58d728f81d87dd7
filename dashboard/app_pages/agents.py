"""Agents: reinforcement-learning schedulers (RLScheduler's protocol), their learning curves and how they
compare with the heuristics on the test sequences; live evaluation on a public log or the dataset."""
import pandas as pd
import streamlit as st

from dashboard.charts import agents as charts_agents
from dashboard.charts.view import plot
from dashboard.data import agents as data_agents
from engine.core.escaping import markdown_code, markdown_text
from engine.policies.rl_agent import AgentError
from engine.predict.registry import ModelError
from engine.service.experiments.rlscheduler import ExperimentError
from engine.telemetry.errors import ImportRejected

BACKFILLS = {"none": "no backfilling", "compat": "RLScheduler's backfilling"}
NOTES = """
- **Environment** (`engine/service/rl/env.py`, a Gymnasium environment): a window of consecutive jobs of a log on
  an empty cluster, replayed by the same code that reproduces RLScheduler's published heuristics exactly; each
  step the agent picks the next job among the waiting ones (up to 128 shown, each as RLScheduler's 8 features),
  and the window's average bounded slowdown, negated, is the reward at its end.
- **Agent**: RLScheduler's kernel policy (the same 8 -> 32 -> 16 -> 8 -> 1 layers score every waiting job, a
  softmax over the scores picks; 961 parameters, fed the logarithm of the features) and a critic, trained with
  PPO written in numpy (hand-written gradients, Adam), after first learning to copy F1's picks.
- **Training**: 256-job windows that share no job with the ten test sequences; each epoch's windows are played
  several times and each episode is scored against the better of SJF and F1 on its window.
- **Test**: the ten 1,024-job sequences RLScheduler published (jobs 1981, 2756, ...), played greedily (the
  highest-scoring job each time), beside the heuristics replayed on the same sequences.
"""


def _label(choice: tuple[str, int | None]) -> str:
    name, version = choice
    return f"{name} (packaged)" if version is None else f"{name} v{version} (trained here)"


def _evaluation_table(result: dict) -> pd.DataFrame:
    published = result.get("published", {})
    return pd.DataFrame([{"order": name, "avg bounded slowdown": row["mean"]["avg_bounded_slowdown"],
                          "utilization": row["mean"]["utilization"],
                          "published": published.get("RL" if name == "agent" else name)}
                         for name, row in result["orders"].items()])


def _show_evaluation(result: dict, key: str) -> None:
    orders = result["orders"]
    best = min(orders["SJF"]["mean"]["avg_bounded_slowdown"], orders["F1"]["mean"]["avg_bounded_slowdown"])
    agent = orders["agent"]["mean"]["avg_bounded_slowdown"]
    verdict = "beats" if agent < best else "does not beat"
    st.markdown(markdown_text(
        f"On {len(result['starts'])} sequences of {result['length']:,} jobs of {result['trace']} "
        f"({BACKFILLS.get(result['backfill'], result['backfill'])}), the agent's mean average bounded slowdown is "
        f"{agent:.2f}: it {verdict} the better of SJF and F1 ({best:.2f}). Lower is better; utilization is "
        "RLScheduler's (work / (start of the last job - first submit) x processors)."))
    st.dataframe(_evaluation_table(result), hide_index=True, key=f"{key}_table", column_config={
        "avg bounded slowdown": st.column_config.NumberColumn(format="%.2f"),
        "utilization": st.column_config.NumberColumn(format="%.3f"),
        "published": st.column_config.NumberColumn("published (RLScheduler)", format="%.2f")})
    frame = pd.DataFrame({"start": result["starts"], **{name: [s["avg_bounded_slowdown"] for s in row["sequences"]]
                                                         for name, row in orders.items()
                                                         if name in ("agent", "SJF", "F1")}})
    plot(st, charts_agents.sequences(frame, "Each test sequence: the agent beside SJF and F1"), theme=None,
         key=f"{key}_chart")


def _live(choice: tuple[str, int | None], trained_with: str) -> None:
    st.subheader("Evaluate now")
    dataset = st.session_state.get("dataset")
    logs = data_agents.logs()
    sources = [*logs, *([f"dataset {dataset}"] if dataset else [])]
    left, middle, right = st.columns([2, 2, 1], vertical_alignment="bottom")
    source = left.selectbox("Log", sources, key="agents_log")
    modes = list(BACKFILLS)
    backfill = middle.selectbox("Backfilling", modes, index=modes.index(trained_with) if trained_with in modes else 0,
                                format_func=BACKFILLS.get, key="agents_backfill")
    if not right.button("Evaluate", key="agents_run"):
        result = st.session_state.get("agents_live")
        if result is not None:
            _show_evaluation(result, "agents_live")
        return
    try:
        with st.spinner("Playing the ten test sequences and replaying the heuristics (seconds to a minute)..."):
            if source in logs:
                if not logs[source].is_file():
                    st.info(f"{markdown_code(logs[source])} is not on this machine: the public logs live in the shared "
                            "folder (`meridian dashboard --shared DIR`).")
                    return
                result = data_agents.evaluate_on_trace(*choice, logs[source], backfill)
            else:
                result = data_agents.evaluate_on_dataset(*choice, dataset, backfill)
    except (ExperimentError, ImportRejected, AgentError, ModelError, OSError) as exc:
        st.error(markdown_text(f"The evaluation failed: {exc}"))
        return
    st.session_state["agents_live"] = result
    _show_evaluation(result, "agents_live")


def _record(record: dict) -> None:
    """The agent's training: where and how long, the learning curve, the test sequences at the end."""
    settings, training, data = record.get("settings", {}), record.get("training", {}), record.get("data", {})
    cols = st.columns(4)
    cols[0].metric("Trained on", markdown_text(str(data.get("source", "?"))))
    cols[1].metric("Backfilling", BACKFILLS.get(settings.get("backfill"), "?"))
    cols[2].metric("Decisions played", f"{training.get('decisions', 0):,}")
    cols[3].metric("Training time", f"{training.get('minutes', 0):.1f} min")
    st.caption(markdown_text(
        f"{training.get('epochs', '?')} epochs of {settings.get('trajectories', '?')} episodes "
        f"({settings.get('group', '?')} per window) of {settings.get('length', '?')} jobs, after copying "
        f"{str(settings.get('imitate', 'none')).upper()}'s picks; reward {settings.get('reward', {}).get('kind', '?')}; "
        f"seed {settings.get('seed', '?')}; {training.get('workers', 1)} worker process(es) on a "
        f"{training.get('cpus', '?')}-core machine; {training.get('parameters', {}).get('policy', '?')} policy and "
        f"{training.get('parameters', {}).get('critic', '?')} critic parameters."))
    plot(st, charts_agents.learning_curve(record.get("curve", [])), theme=None, key="agents_curve")
    evaluation = record.get("evaluation")
    if evaluation:
        st.subheader("The test sequences, at the end of training")
        _show_evaluation(evaluation, "agents_recorded")


st.title("Agents")
st.caption("Schedulers learnt by reinforcement (RLScheduler, SC'20): an agent picks the next job from the queue. "
           "Train one with `meridian rl train`; use it in any scenario as `order = { key = \"rl\", model = NAME }` "
           "(the What-if page's order choice `rl`).")
choices = data_agents.agents()
choice = st.selectbox("Agent", choices, format_func=_label, key="agents_choice")
record = data_agents.meta(*choice)
if record:
    _record(record)
else:
    st.info("This agent has no training record.")
with st.expander("Method"):
    st.markdown(NOTES)
_live(choice, record.get("settings", {}).get("backfill", "none"))
