"""What-if: replay the dataset's workload under other scheduling scenarios and compare the outcomes."""

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.charts import whatif as charts
from dashboard.charts.view import plot, say
from dashboard.data import headroom as data_headroom
from dashboard.data import predict as data_predict
from dashboard.forms.job import open_button
from dashboard.forms.runtimes import AS_SCENARIO, RUNTIME_LABELS, after_training, with_runtimes
from dashboard.forms.scenario import scenario_form
from dashboard.forms.scenario_files import scenario_files, uploaded
from dashboard.sections.clusters import clusters_section
from dashboard.sections.interconnect import interconnect_section
from dashboard.sections.partitions import partitions_section
from dashboard.sections.quiet import quiet_section
from dashboard.sections.relaxations import relaxations_section
from engine.analysis.runs import catalogue
from engine.analysis.runs.sim_series import (
    fleet_series,
    group_comparison,
    kpi_comparison,
    longest_waits,
    region_series,
    wait_ecdf,
    why_waited,
)
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text
from engine.core.text import hours, hours_minutes
from engine.service.headroom.measure import AMORTISATION_YEARS, GPU_CAPEX_USD, HeadroomError
from engine.service.report.headline import capacity_sentences

CUSTOM = "custom (built below)"
PICKS = "optimise_picks"  # scenarios picked on the Optimise page, by name
# KPI tiles: key -> (label, value format, delta format), "duration" for seconds shown in s, min or h;
# a tile is drawn when the baseline has the KPI (fragmentation KPIs exist only for sampled runs).
_FORMATS = {"utilization": (lambda v: f"{100 * v:.1f}%", lambda d: f"{100 * d:+.1f} pts"),
            "wait_p50_s": ("duration", "duration"), "wait_p95_s": ("duration", "duration"),
            "jct_p95_s": ("duration", "duration"),
            "avg_bounded_slowdown": (lambda v: f"{v:,.2f}", lambda d: f"{d:+,.2f}"),
            "idle_gpu_hours": (lambda v: f"{v:,.0f}", lambda d: f"{d:+,.0f}"),
            "frag_gpu_pct_of_idle": (lambda v: f"{v:.1f}%", lambda d: f"{d:+.1f} pts")}
SHOWN = {key: (catalogue.label(key), *formats) for key, formats in _FORMATS.items()}  # labels: the KPI catalogue
HIGHER_IS_BETTER = {key for key in SHOWN if catalogue.higher_is_better(key)}
# Cost and carbon rows (engine.analysis.runs.world_kpis), shown under the KPI table with the same deltas.
WORLD_SHOWN = ("cost_usd", "idle_cost_usd", "cost_usd_per_year", "idle_cost_usd_per_year",
               "effective_usd_per_gpu_hour", "productive_usd_per_gpu_hour", "carbon_kg", "residency_violations")
# Rows the world report adds for a run whose [data] tracks datasets or whose [roles] names edge or archive regions.
MOVES = catalogue.keys("data", "roles")
# The KPI tables' key and label columns, wide enough for the longest ("inference_guarantee_violations",
# "GPU-hours lost to reconfigurations").
KEY_COLUMN = {"_index": st.column_config.Column("kpi", width=240), "what": st.column_config.Column(width=260)}
GROUP_TABS = (("By workload class", "workload_class", "wi_by_class"), ("By team", "team", "wi_by_team"))
# The per-group tables' columns: seconds shown as hours (h), under these headings.
GROUP_HOURS = {"wait_mean_s": "mean wait", "wait_p50_s": "p50 wait", "wait_p95_s": "p95 wait", "wait_p99_s": "p99 wait",
               "jct_mean_s": "mean completion", "jct_p50_s": "p50 completion", "jct_p95_s": "p95 completion",
               "jct_p99_s": "p99 completion"}



def _fmt(key: str, value: float) -> str:
    fmt = SHOWN[key][1]
    return hours(value) if fmt == "duration" else fmt(value)


def _fmt_delta(key: str, diff: float) -> str:
    fmt = SHOWN[key][2]
    return ("+" if diff >= 0 else "-") + hours(abs(diff)) if fmt == "duration" else fmt(diff)


def _choose(dataset: str) -> tuple[list[tuple[str, dict]], float, int] | None:
    recorded, meaning = data_headroom.recorded(dataset)
    bundled = {data_headroom.RECORDED: recorded, **data.bundled_scenarios(), **st.session_state.get(PICKS, {}),
               **uploaded()}
    names = list(bundled) + [CUSTOM]
    left, right = st.columns(2)
    baseline = left.selectbox("Baseline", names, index=0, key="wi_baseline",
                              help=f"recorded: {markdown_text(meaning)}. Every candidate is measured at the "
                                   "baseline's service level")
    others = [n for n in names if n != baseline]
    default = ["easy-backfill"] if "easy-backfill" in others else [n for n in others if n != CUSTOM][:1]
    candidates = right.multiselect("Candidates", others, default=default, key="wi_candidates")
    with st.expander("Custom scenario", expanded=CUSTOM in [baseline, *candidates]):
        custom = scenario_form("custom")
    with st.expander("Scenario files: download the custom scenario, upload TOML"):
        scenario_files(custom)
    days = st.number_input("Simulate the jobs submitted in the first N days of the dataset (0 = all)",
                           min_value=0.0, value=7.0, step=1.0, key="wi_days", format="%g",
                           help="The whole sample takes tens of seconds to simulate; a week takes a few. With "
                                "predictions the N days start where the models' training data ends; with predictive "
                                "scaling, after the weeks its forecast learns from.")
    left, right = st.columns(2)
    runtime = left.selectbox("Runtime the scheduler sees", [AS_SCENARIO, *RUNTIME_LABELS], key="wi_runtime",
                             help="Override every scenario's [runtime] source: the users' requests or the runtime "
                                  "model's prediction (jobs still run for their recorded runtimes)")
    twins = right.checkbox("Compare with predictions", key="wi_twins",  # a longer label is cut at a laptop's width
                           help="run every scenario again, its scheduler seeing predicted P50 runtimes")
    seeds = left.number_input("Demand resamplings for the headroom (seeds)", min_value=1, max_value=9, value=3,
                              step=1, key="wi_seeds", help="each candidate's load headroom is measured over this "
                                                            "many resamplings of the demand; the spread is shown")
    if not st.button("Run", type="primary", key="wi_run"):
        return None
    if not candidates:
        st.warning("Pick at least one candidate scenario.")
        return None
    chosen = [(custom["name"], custom) if n == CUSTOM else (n, bundled[n]) for n in [baseline, *candidates]]
    return with_runtimes(chosen, runtime, twins), days, int(seeds)


def _run(dataset: str, chosen: list[tuple[str, dict]], days: float) -> list[data.WhatIfRun] | None:
    progress = st.progress(0.0, text="Simulating...")
    runs = []
    for i, (label, spec) in enumerate(chosen):
        text = f"Simulating {markdown_text(label)} ({i + 1} of {len(chosen)})"
        progress.progress(i / len(chosen), text=text + "...")

        def waiting(place, i=i, text=text) -> None:
            progress.progress(i / len(chosen), text=f"{text}. {place.describe()}")
        try:
            runs.append(data.whatif_run(dataset, spec, days, waiting))
        except ScenarioError as exc:
            progress.empty()
            st.error(markdown_text(exc if str(exc).startswith(f"{label}: ") else f"{label}: {exc}"))
            return None
    progress.progress(1.0, text=f"Simulated {len(chosen)} scenarios")
    return runs


def _headroom(dataset: str, runs: list[data.WhatIfRun], chosen: list[tuple[str, dict]], days: float,
              seeds: int) -> None:
    """The headline: each candidate's extra work at the baseline's service level, and the GPUs it saves."""
    if len(runs) < 2:
        return
    st.subheader("Capacity at the same service level")
    bar = st.progress(0.0, text="Measuring each scenario's load headroom and the GPUs it needs...")

    def progress(done: int, total: int, outcome) -> None:
        bar.progress(done / total, text=markdown_text(f"Headroom: {done} of {total} searches done "
                                                      f"({outcome.scenario})"))

    def waiting(place) -> None:
        bar.progress(0.0, text=f"Measuring the load headroom. {place.describe()}")
    labels = _labels(runs)
    try:
        report = data_headroom.headroom(dataset, list(zip(labels, (spec for _, spec in chosen))), days, seeds,
                                        progress, waiting)
    except (ScenarioError, HeadroomError, ValueError) as exc:
        bar.empty()
        st.warning(markdown_text(f"The headroom could not be measured: {exc}"))
        return
    bar.empty()
    base = report.baseline
    for name in labels[1:]:
        work, fleet = capacity_sentences(labels[0], base, report.of(name), GPU_CAPEX_USD, AMORTISATION_YEARS)
        st.markdown(f"- **{markdown_text(say(work))}** {markdown_text(say(fleet))}")
    tiles = st.columns(len(report.scenarios))
    for tile, s in zip(tiles, report.scenarios):
        tile.metric(f"{s.name}: load headroom", f"x{s.load_headroom:.2f}",
                    None if s is base else f"{100 * (s.load_headroom_ratio - 1):+.0f} % work", help=(
                        f"largest demand scale at the service level; seeds {s.load_headroom_min:.2f}-"
                        f"{s.load_headroom_max:.2f}" + (f"; beyond it {s.limited_by} breaks first" if s.limited_by
                                                        else "")))
        tile.metric(say(f"{s.name}: GPUs needed"), f"{s.needed_gpus:,.0f}",
                    None if s is base else say(f"{-s.saved_gpus:+,.0f} GPUs"), delta_color="inverse",
                    help=f"smallest fleet holding the service level with today's demand; today {s.fleet_gpus:,.0f}")
    st.caption(say(markdown_text(
        f"Service level: {report.level.describe()}. Load headroom: the largest scale of the demand (resampled "
        "within each region, hour of the week, class and team; never compressed in time) at which a scenario "
        "holds that level, by bracketing and bisection to 2 %. GPUs needed: the smallest fleet, every pool "
        "scaled alike in whole nodes, on which it holds the level with the demand as it is. Dollars at "
        f"${GPU_CAPEX_USD:,.0f} per GPU over {AMORTISATION_YEARS:g} years. "
        f"{sum(s.evaluations for s in report.scenarios):,} simulations in {report.elapsed_s:,.0f} s."
        + ("" if all(s.monotone for s in report.scenarios) else
           " Some search was not monotone (the level broke below a scale where it held again): read its "
           "figures with care."))))


def _window(run: data.WhatIfRun) -> str:
    if run.start_utc is None and run.end_utc is None:
        return f"the whole dataset ({run.jobs:,} jobs)"
    start = "the start" if run.start_utc is None else f"{run.start_utc:%Y-%m-%d %H:%M}"
    end = "the end" if run.end_utc is None else f"{run.end_utc:%Y-%m-%d %H:%M}"
    return f"jobs submitted from {start} to {end} UTC ({run.jobs:,} jobs)"


def _kpis(runs: list[data.WhatIfRun]) -> None:
    names = _labels(runs)
    table = kpi_comparison([(n, r.kpis) for n, r in zip(names, runs)])
    shown = [key for key in SHOWN if key in runs[0].kpis]
    per_row = 4 if len(shown) > 5 else len(shown)   # wide enough for every label ("Avg bounded slowdown")
    for name, run in zip(names, runs):
        st.markdown(f"**{markdown_text(name)}**")
        columns = [col for start in range(0, len(shown), per_row) for col in st.columns(per_row)]
        for col, key in zip(columns, shown):
            delta, colour = None, "normal" if key in HIGHER_IS_BETTER else "inverse"
            if run is not runs[0] and key in run.kpis:
                diff = run.kpis[key] - runs[0].kpis[key]
                delta, colour = _fmt_delta(key, diff), "off" if diff == 0 else colour
            value = _fmt(key, run.kpis[key]) if key in run.kpis else "n/a"
            col.metric(say(SHOWN[key][0]), value, delta, delta_color=colour)
    st.dataframe(_described(table), height=35 * (len(table) + 1) + 3, key="wi_kpis", column_config=KEY_COLUMN)


def _described(table):
    """The KPI table as text: each key's label from the KPI catalogue in front, every value in its key's format
    (catalogue.shown_comparison; the key stays the index: the name `meridian compare --json` and the README
    use)."""
    out = catalogue.shown_comparison(table)
    return out.assign(what=out["what"].map(say))


def _world(dataset: str, runs: list[data.WhatIfRun], chosen: list[tuple[str, dict]], days: float) -> None:
    """Cost, idle cost and carbon side by side with deltas, under the Cost & carbon page's assumptions, and the
    data-movement and region-roles rows of a run whose [data] or [roles] adds them (catalogue groups "data", "roles")."""
    edited = st.session_state.get("cost_assumptions")
    assumptions = data.assumptions_from_text(edited) if edited else None
    try:
        reports = [data.whatif_world(dataset, spec, days, assumptions) for _, spec in chosen]
    except ValueError as exc:
        st.warning(markdown_text(f"Cost and carbon could not be computed: {exc}"))
        return
    shown = [*WORLD_SHOWN[:2], "cost_burst_usd", *WORLD_SHOWN[2:]] \
        if any(report.kpis["cost_burst_usd"] for report in reports) else list(WORLD_SHOWN)
    shown += [key for key in catalogue.CATALOGUE if key in MOVES and any(key in report.kpis for report in reports)]
    table = kpi_comparison([(name, {key: report.kpis[key] for key in shown if key in report.kpis})
                            for name, report in zip(_labels(runs), reports)])
    st.dataframe(_described(table), height=35 * (len(table) + 1) + 3, key="wi_world_kpis", column_config=KEY_COLUMN)
    notes = list(dict.fromkeys(note for report in reports for note in report.assumed))
    st.caption(say("Cost in USD over the measured window W; carbon in kgCO2e = kW per GPU x GPU-hours x PUE x the "
                   "region's grid intensity at the local hour / 1000. Assumptions: as set on the Cost & carbon page.")
               + (" Assumed for lack of data: " + markdown_text("; ".join(notes)) + "." if notes else ""))
    with st.expander("How the dollars are computed"):
        st.markdown(say(catalogue.methods(*(key for key in shown if key in catalogue.MONEY)) + "\n- W: the jobs' "
                        "first submit to the end of the days chosen (or the data's observed end). With the "
                        "recorded baseline over all of the dataset (0 days) these are the Overview's figures."))


def _groups(runs: list[data.WhatIfRun]) -> None:
    st.subheader("By workload class and team")
    st.caption(say("Waits count started jobs, completion time (submit to end) and bounded slowdown finished "
                   "jobs; GPU-hours are those held inside the measured window. Times in hours."))
    labelled = list(zip(_labels(runs), (r.result for r in runs)))
    number = st.column_config.NumberColumn
    formats = {column: number(f"{words} (h)", format="%,.2f") for column, words in GROUP_HOURS.items()} | {
        "workload_class": "class", "avg_bounded_slowdown": number("bounded slowdown", format="%.2f"),
        "gpu_hours": number(say("GPU-hours"), format="%,.1f")}
    for tab, (_, column, key) in zip(st.tabs([t[0] for t in GROUP_TABS]), GROUP_TABS):
        table = group_comparison(labelled, column)
        table = table.assign(**{column: table[column].replace("", "(none)")},
                             **{c: table[c] / 3600 for c in GROUP_HOURS})
        tab.dataframe(table, hide_index=True, key=key, column_config=formats)


def _labels(runs: list[data.WhatIfRun]) -> list[str]:
    seen: dict[str, int] = {}
    labels = []
    for run in runs:
        seen[run.name] = seen.get(run.name, 0) + 1
        labels.append(run.name if seen[run.name] == 1 else f"{run.name} ({seen[run.name]})")
    return labels


def _charts(runs: list[data.WhatIfRun]) -> None:
    names = _labels(runs)
    series = {n: fleet_series(r.result) for n, r in zip(names, runs)}
    plot(st, charts.scenario_lines(series, "utilization", "GPU utilisation over time", "utilisation (%)",
                                          percent=True), theme=None)
    plot(st, charts.scenario_region_gpus({n: region_series(r.result) for n, r in zip(names, runs)}),
                    theme=None)
    plot(st, charts.scenario_wait_ecdfs({n: wait_ecdf(r.result) for n, r in zip(names, runs)}), theme=None)
    plot(st, charts.scenario_lines(series, "queue_length", "Queue length over time", "queued jobs"), theme=None)
    _stranded(names, runs)


def _stranded(names: list[str], runs: list[data.WhatIfRun]) -> None:
    st.subheader("Stranded capacity")
    left, right = st.columns(2)
    plot(left, charts.stranded_parts({n: r.kpis for n, r in zip(names, runs)}), theme=None)
    plot(right, charts.stranded_timeline({n: r.stranded.table for n, r in zip(names, runs)},
                                         {n: r.result.origin_utc for n, r in zip(names, runs)}), theme=None)
    st.caption(say("Stranded: GPU-hours idle while a waiting job could have used them, sampled every 15 minutes (or "
                   "more, at most 2,000 samples): free GPUs a job waiting in the same region fits (held back by the "
                   "order or the lack of backfilling), then free GPUs in another region its data may go to (held "
                   "back by staying home), then free GPUs in pieces no waiting job fits although they add up to "
                   "its request (fragmented). GPUs only, greedy packing, each waiting job counted once."))
    with st.expander("By region"):
        table = pd.concat([r.stranded.by_region().assign(scenario=n) for n, r in zip(names, runs)], ignore_index=True)
        st.dataframe(table[["scenario", *table.columns[:-1]]], hide_index=True, key="wi_stranded_regions",
                     column_config={c: st.column_config.NumberColumn(
                         say(catalogue.heading(c)), format="%,.1f" if catalogue.CATALOGUE[c].fmt == "one" else "%,.0f")
                         for c in table.columns if c in catalogue.CATALOGUE})


def _lookup(runs: list[data.WhatIfRun], chosen: list[tuple[str, dict]], days: float) -> None:
    st.subheader("Why did this job wait?")
    names = _labels(runs)
    left, right = st.columns([1, 2])
    which = left.selectbox("Scenario", names, index=len(names) - 1, key="wi_lookup_scenario")
    run = runs[names.index(which)]
    job_id = right.selectbox("Job (longest waits first)", longest_waits(run.result), key="wi_lookup_job")
    info = why_waited(run.result, job_id) if job_id is not None else None
    if info is None:
        st.info("No jobs in this run.")
        return
    st.markdown(markdown_text(say(f"Job {info['job_id']} ({info['workload_class']}, {info['gpus']:g} GPUs, {info['region']}) "
                       f"waited {hours_minutes(info['wait_s'])} in {which}: {info['reason']}.")))
    scenario = chosen[names.index(which)][0]
    if scenario in data.bundled_scenarios() or scenario == data_headroom.RECORDED:
        open_button(st, str(info["job_id"]), scenario, days, key="wi_open_job", page="What-if")
    else:
        st.caption("The job view offers the bundled scenarios and the recorded baseline; this one was built here.")


st.title("What-if")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No dataset yet: import one on the Data page.")
    st.stop()
st.caption(f"Replay the jobs of **{markdown_text(dataset)}** under other scheduling policies and compare. "
           "Runtimes come from the telemetry; policies see only what is known at submit time.")
picked = _choose(dataset)
if picked is not None:
    seeds = picked[2]
    picked = (after_training(picked[0], picked[1], data_predict.training_cut(dataset)), picked[1])
    runs = _run(dataset, *picked)
    st.session_state["wi_runs"] = (dataset, runs) if runs else None
    st.session_state["wi_chosen"] = picked
    st.session_state["wi_headroom_seeds"] = seeds
stored = st.session_state.get("wi_runs")
if stored and stored[0] == dataset:
    runs = stored[1]
    headline = st.container()
    st.info(markdown_text(f"Simulated {_window(runs[0])}."))
    if runs[0].result.notes:
        st.caption(markdown_text("Workload notes: " + "; ".join(runs[0].result.notes)))
    _kpis(runs)
    quiet_section(_labels(runs), [r.kpis for r in runs])
    _world(dataset, runs, *st.session_state["wi_chosen"])
    _groups(runs)
    relaxations_section(_labels(runs), [r.result for r in runs])
    interconnect_section(_labels(runs), [r.result for r in runs])
    partitions_section(_labels(runs), [r.result for r in runs])
    clusters_section(_labels(runs), [r.result for r in runs])
    _charts(runs)
    _lookup(runs, *st.session_state["wi_chosen"])
    with headline:
        _headroom(dataset, runs, *st.session_state["wi_chosen"], st.session_state.get("wi_headroom_seeds", 3))
