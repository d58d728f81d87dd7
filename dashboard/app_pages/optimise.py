"""Optimise: evolve a scenario's policy parameters against several objectives on the chosen dataset,
see the trade-off, check it on held-out data, and pick a point as a scenario for the other pages."""
import math

import pandas as pd
import streamlit as st

from dashboard.charts import optimise as charts
from dashboard.charts.view import plot
from dashboard.data import optimise as data_optimise
from engine.analysis.runs.catalogue import CATALOGUE, label, shown
from engine.core.escaping import markdown_code, markdown_text
from engine.core.text import hours
from engine.service.optimise.front import scenario_toml
from engine.service.optimise.space import StudyError
from engine.service.optimise.study import BASELINE, StudyResult, default_population

PICKS = "optimise_picks"  # name -> scenario dict, offered by the What-if page beside the bundled scenarios
RESULT = "opt_result"


def _heading(objective) -> str:
    unit = {"duration": " (h)", "pct": " (%)"}.get(CATALOGUE[objective.key].fmt, "")
    cls = f" · {objective.workload_class}" if objective.workload_class else ""
    return f"{label(objective.key)}{cls}{unit}"


def _display(objective, value: float) -> float:
    """An objective in the charts' units: seconds as hours, shares as percentages."""
    fmt = CATALOGUE[objective.key].fmt
    return value / 3600 if fmt == "duration" else 100 * value if fmt == "pct" else value


def _points(result: StudyResult) -> pd.DataFrame:
    rows = []
    for trial in result.trials:
        if trial.measured.error is not None:
            continue
        kind = "front" if trial.number in result.front else "trial" if trial.measured.feasible else "infeasible"
        rows.append((f"trial-{trial.number}", kind, trial.measured.values))
    rows.append((BASELINE, "baseline", result.baseline.values))
    return pd.DataFrame([{"name": name, "kind": kind, **{_heading(o): _display(o, values.get(o.name, math.nan))
                                                          for o in result.study.objectives}}
                         for name, kind, values in rows])


def _table(result: StudyResult, measured: dict, names: list[str], with_params: bool) -> pd.DataFrame:
    rows = []
    for name in names:
        if name not in measured:
            continue
        row = {"": name, **{_heading(o).removesuffix(" (h)").removesuffix(" (%)"):
                            shown(o.key, measured[name].values.get(o.name)) for o in result.study.objectives}}
        if with_params and name != BASELINE:
            row.update({k: (f"{v:.4g}" if isinstance(v, float) else str(v))
                        for k, v in result.trial(int(name.split("-")[1])).params.items()})
        rows.append(row)
    return pd.DataFrame(rows).fillna("-")


def _inputs(dataset: str):
    studies = data_optimise.bundled_studies()
    if not studies:
        st.info("No study files in sample_data/studies/.")
        st.stop()
    left, right = st.columns([2, 3])
    chosen = left.selectbox("Study", list(studies), key="opt_study",
                            help="A study file from sample_data/studies/; edit it on the right")
    path = studies[chosen]
    text = right.text_area("Study file (TOML)", value=path.read_text(encoding="utf-8"), height=260,
                           key=f"opt_text:{chosen}", help="base scenario, [search], objectives, [constraints], "
                                                          "[windows]: see `meridian optimise` in the README")
    cols = left.columns(3)
    trials = int(cols[0].number_input("Trials", 4, 2000, 40, step=4, key="opt_trials"))
    population = int(cols[1].number_input("Per generation", 2, 200, default_population(40), key="opt_population",
                                          help="trials per generation (NSGA's population)"))
    seed = int(cols[2].number_input("Seed", 0, 2**31 - 1, 0, key="opt_seed"))
    try:
        study = data_optimise.parse(text, path)
    except StudyError as exc:
        st.error(markdown_text(str(exc)))
        st.stop()
    left.caption(f"{len(study.dimensions)} searched choices, {len(study.objectives)} objectives, "
                 f"{len(study.constraints)} hard constraints; {study.windows.train} training and "
                 f"{study.windows.held_out} held-out windows of {study.windows.days:g} days on "
                 f"{markdown_text(dataset)}. Each trial is one simulation per training window.")
    return study, trials, population, seed


def _run(dataset: str, study, trials: int, population: int, seed: int) -> None:
    with st.status(f"Running {trials} trials...", expanded=True) as status:
        try:
            result = data_optimise.run(dataset, study, trials, population, seed, progress=status.write)
        except StudyError as exc:
            status.update(label="The study could not run", state="error")
            st.error(markdown_text(str(exc)))
            return
        status.update(label=f"Done: {len(result.trials)} trials, {result.simulations:,} simulations in "
                            f"{hours(result.elapsed_s)}", state="complete", expanded=False)
    st.session_state[RESULT] = (dataset, result)


def _front_charts(result: StudyResult) -> None:
    points = _points(result)
    names = [_heading(o) for o in result.study.objectives]
    left, right = st.columns(2)
    x = left.selectbox("x axis", names, index=0, key="opt_x")
    y = right.selectbox("y axis", names, index=1, key="opt_y")
    plot(st, charts.front_2d(points, x, y), theme=None)
    if len(names) == 3:
        plot(st, charts.front_3d(points, names), theme=None)
    elif len(names) > 3:
        plot(st, charts.parallel(points, names), theme=None)
    st.caption("Each point is a trial: the mean of its objectives over the training windows. Front: the trials "
               "no other feasible trial beats in every objective. Baseline: the base scenario as written.")


def _pick(result: StudyResult) -> None:
    st.subheader("Pick a point")
    left, right = st.columns([2, 3])
    number = left.selectbox("Front trial", result.front, format_func=lambda n: f"trial-{n}", key="opt_pick")
    name = left.text_input("Scenario name", value=f"{result.study.name}-trial-{number}", key="opt_pick_name")
    text = scenario_toml(result.study, result.trial(number).params, name)
    right.code(text, language="toml")
    left.download_button("Download scenario TOML", text.encode("utf-8"), file_name=f"{name}.toml",
                         mime="application/toml", key="opt_download", on_click="ignore")
    if left.button("Use it on the What-if page", key="opt_use"):
        st.session_state.setdefault(PICKS, {})[name] = result.study.scenario(result.trial(number).params, name)
        left.success(markdown_text(f"{name} is now a choice on the What-if page."))
    left.caption("The file works everywhere a scenario does: `meridian simulate`, `compare`, `report`, `headroom`.")


def _show(result: StudyResult) -> None:
    study = result.study
    cols = st.columns(5)
    cols[0].metric("Trials", f"{len(result.trials):,}")
    cols[1].metric("Feasible", f"{sum(t.measured.feasible for t in result.trials):,}")
    cols[2].metric("On the front", f"{len(result.front):,}")
    cols[3].metric("Simulations", f"{result.simulations:,}")
    cols[4].metric("Took", hours(result.elapsed_s))
    st.caption(f"{result.sampler}, {result.population} per generation, seed {result.seed}; objectives: "
               + ", ".join(f"{markdown_code(o.name)} ({'higher' if o.higher else 'lower'} is better)"
                           for o in study.objectives))
    if not result.front:
        st.warning("No trial met the hard constraints; loosen them or widen the search.")
        return
    _front_charts(result)
    plot(st, charts.hypervolume(result.hypervolume), theme=None)
    front = [f"trial-{n}" for n in result.front]
    on_train = {f"trial-{t.number}": t.measured for t in result.trials} | {BASELINE: result.baseline}
    st.subheader("The front on the training windows")
    st.dataframe(_table(result, on_train, front + [BASELINE], True), hide_index=True, key="opt_front")
    if result.held_out:
        st.subheader("Held out")
        st.caption(f"The {study.windows.held_out} window(s) of {study.windows.days:g} days after the training "
                   "windows, which no trial saw: does the trade-off hold on new data?")
        st.dataframe(_table(result, result.held_out, front + [BASELINE], False), hide_index=True, key="opt_held")
    _pick(result)


dataset = st.session_state.get("dataset")
st.title("Optimise")
if not dataset:
    st.info("Pick a dataset in the sidebar.")
    st.stop()
st.caption("Evolve the policy parameters of a scenario against several objectives at once (NSGA-II for 2-3, "
           "NSGA-III for more), each trial simulated on the training windows; then check the front on held-out "
           "windows and pick a point. `meridian optimise` runs the same study from the command line.")
study, trials, population, seed = _inputs(dataset)
if st.button("Run study", type="primary", key="opt_run"):
    _run(dataset, study, trials, population, seed)
kept = st.session_state.get(RESULT)
if kept is not None and kept[0] == dataset:
    _show(kept[1])
