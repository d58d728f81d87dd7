"""Fidelity: the engine re-runs three published scheduling experiments and agrees with their tables."""
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.charts import fidelity as charts_fidelity
from dashboard.charts.fidelity import BACKFILLS, FGD_LABELS, FGD_METRICS, RLS_METRICS
from dashboard.charts.view import plot
from dashboard.data import fidelity as data_fidelity
from dashboard.data import headroom as data_headroom
from dashboard.sections.backfill_fidelity import backfill_section
from dashboard.sections.rl_fidelity import rl_section
from engine.core.escaping import markdown_code, markdown_text
from engine.service.experiments import fgd, fidelity, rlscheduler
from engine.service.experiments.public_data import ENVIRONMENT, source_of
from engine.service.experiments.rlscheduler import ExperimentError
from engine.telemetry.errors import ImportRejected

RLS_NOTES = """
- **Published method** (Zhang et al., *RLScheduler*, SC'20): ten sequences of 1,024 consecutive jobs of the
  Lublin-1 log (`lublin_256.swf`, 256 single-processor nodes), starting at jobs 1981, 2756, 4299, 8850, 3316,
  2714, 5228, 7762, 4022 and 7085, each on an empty cluster, under five queue orders (FCFS, SJF, WFP3, UNICEP,
  F1), without backfilling and with the authors' own backfilling.
- **Scores**: average bounded slowdown = mean of max(1, (wait + run) / max(run, 10 s)); utilization =
  processor-seconds used / ((start of the last job - submit of the first) x processors).
- **Our replay** (`meridian experiment rlscheduler`) follows the authors' code step by step: one arrival or one
  completion per step, a picked job stays picked until it fits, their backfilling scans the queue in FCFS order
  against a shadow time computed once, and WFP3/UNICEP age jobs with the code's wait of -1 - submit (the
  product's own policies use the true wait).
- **Tolerance**: +-0.01 per sequence for both scores (`../shared/expected/README.md`). The replay is in fact
  exact: the published figures have 6 decimals and agree to rounding.
"""
FGD_NOTES = """
- **Published method** (Weng et al., *FGD*, USENIX ATC'23): the pods of `openb_pod_list_default` (8,152 pods)
  arrive one by one on the 1,213 GPU nodes (6,212 GPUs) of `openb_node_list_gpu_node.csv` and never leave; a pod
  that fits nowhere fails. Per seed the pods are sorted by name, shuffled, and inflated with random copies to 130 %
  of GPU capacity; six placement policies score the nodes (Random, DotProd, GpuClustering, GpuPacking, BestFit,
  FGD). The figures are 10-seed means of the allocation ratio at 50-130 % of capacity arrived.
- **Our replay** (`meridian experiment fgd`) uses the product's placement policies and fleet model with the
  paper's fit rules, node order and fragmentation measure. The authors shuffled with Go's random generator and
  we use numpy's, so single seeds differ and only 10-seed means are comparable.
- **Tolerance** (`../shared/expected/README.md`): the 10-seed mean GPU allocation ratio within +-0.7 points for
  BestFit, FGD, GpuPacking and GpuClustering and +-1.0 for Random and DotProd, with the published order
  FGD > BestFit >= GpuPacking ~ GpuClustering > DotProd > Random. One seed re-run live is allowed
  2 x std x sqrt(1 - 1/10) more (std = the published seed spread). The fragmentation metrics have no published
  tolerance; their rows are shown for information.
"""


def _tiny(value: float) -> str:
    return "0" if value == 0 else (f"{value:.2g}" if abs(value) < 0.01 else f"{value:.2f}")


def _headlines(record: fidelity.Record) -> None:
    s = fidelity.summary(record.rlscheduler, record.fgd).set_index("experiment")
    rls, fg = s.loc["rlscheduler"], s.loc["fgd"]
    order = "the published policy order holds" if fg["order_holds"] is True else "the published order does NOT hold"
    left, right = st.columns(2)
    with left.container(border=True):
        st.metric("RLScheduler · Lublin-1 · runs within ±0.01", f"{rls['runs_within']} of {rls['runs']}")
        st.markdown(f"**RLScheduler, Lublin-1: {rls['runs_within']} of {rls['runs']} published runs reproduced "
                    f"within ±0.01** (largest difference {_tiny(rls['max_abs_difference'])}).")
    with right.container(border=True):
        st.metric("FGD · openb default · points within tolerance", f"{fg['runs_within']} of {fg['runs']}")
        n = len(record.meta["fgd_seeds"])
        st.markdown(f"**FGD, openb default: {fg['runs_within']} of {fg['runs']} published GPU-allocation points "
                    f"within ±0.7 (±1.0 Random, DotProd)** over {n} seeds (largest difference "
                    f"{fg['max_abs_difference']:.2f} points); {order}.")
    meta = record.meta
    commit = (meta.get("commit") or "unknown")[:10] + (" with uncommitted changes" if meta.get("dirty") else "")
    st.caption(f"Recorded {meta['created_utc']} by `{meta['command']}` at engine commit {commit}, on the public "
               f"files {', '.join(f'`{Path(v).name}`' for v in meta['inputs'].values())}.")


def _table(rows: pd.DataFrame, key: str) -> None:
    st.dataframe(rows, hide_index=True, key=key, column_config={
        "published": st.column_config.NumberColumn(format="%.6g"),
        "ours": st.column_config.NumberColumn(format="%.6g"),
        "difference": st.column_config.NumberColumn(format="%.2g"),
        "tolerance": st.column_config.NumberColumn(format="%.3g"),
        "within": st.column_config.CheckboxColumn("within tolerance")})


def _rls_section(record: fidelity.Record, inputs: fidelity.Inputs) -> None:
    st.header("RLScheduler (SC'20) · Lublin-1")
    rows = record.rlscheduler
    plot(st, charts_fidelity.rls_figure(rows, "Recorded: ours against published, every sequence (dotted: equal)"),
                    theme=None, key="fid_rls_chart")
    policies = st.multiselect("Policies", list(rlscheduler.POLICIES), default=list(rlscheduler.POLICIES),
                              key="fid_rls_policies")
    _table(rows[rows["policy"].isin(policies)], "fid_rls_table")
    with st.expander("Method and tolerance"):
        st.markdown(RLS_NOTES)
    st.subheader("Run again now")
    if _missing(inputs, "lublin_1"):
        return
    left, middle, right = st.columns([2, 2, 1], vertical_alignment="bottom")
    policy = left.selectbox("Queue order", list(rlscheduler.POLICIES), key="fid_rls_policy")
    backfill = middle.selectbox("Backfilling", list(BACKFILLS), format_func=BACKFILLS.get, key="fid_rls_backfill")
    if right.button("Run again", key="fid_rls_run"):
        try:
            with st.spinner(f"Replaying ten 1,024-job sequences under {policy}..."):
                st.session_state["fid_rls_live"] = fidelity.compare_rlscheduler(
                    rows, data_fidelity.rlscheduler_rerun(inputs.lublin_1, policy, backfill))
        except (ImportRejected, ExperimentError, OSError) as exc:
            st.error(markdown_text(f"The re-run failed: {exc}"))
    live = st.session_state.get("fid_rls_live")
    if live is not None:
        _rls_live(live, rows)


def _rls_live(live: pd.DataFrame, recorded: pd.DataFrame) -> None:
    policy, backfill = live["policy"].iloc[0], live["backfill"].iloc[0]
    runs = fidelity.rlscheduler_runs(live)
    same = recorded.merge(live, on=fidelity.RLS_KEYS, suffixes=("_rec", ""))
    identical = bool((same["ours_rec"] == same["ours"]).all())
    box = st.success if runs["within"].all() else st.warning
    box(f"{policy}, {BACKFILLS[backfill]}: {int(runs['within'].sum())} of {len(runs)} sequences within ±0.01 just now "
        f"(largest difference {_tiny(float(live['difference'].abs().max()))})"
        + ("; identical to the record." if identical else "; differs from the record."))
    wide = live.pivot_table(index="start", columns="metric", values=["published", "ours", "difference"])
    columns = [(v, m) for m in fidelity.RLS_METRICS for v in ("published", "ours", "difference")]
    wide = wide[columns].set_axis([f"{RLS_METRICS[m]}: {v}" for v, m in columns], axis=1)
    st.dataframe(wide.reset_index(), hide_index=True, key="fid_rls_live_table")


EVOLVE_NOTES = """
- **What is searched**: the five weights of the `linear` queue order, w_runtime_size x log10(requested) x size
  + w_runtime x log10(requested) + w_size x log10(size) + w_submit x log10(submit) - w_wait x hours waited,
  lowest first. F1 is the point (1, 0, 0, 870, 0) of that space.
- **How**: Optuna's TPE sampler (seed 0), 200 weight vectors, F1 and shortest-requested-first tried first, each
  scored by the mean average bounded slowdown over 10 sequences of 1,024 jobs drawn from the log such that none
  shares a job with the ten test sequences, with RLScheduler's replay (`meridian experiment evolve`).
- **Test**: the best weights on the training sequences, replayed on the ten published test sequences beside F1
  and SJF replayed there in the same run. On Lublin-1 only the first 957 start positions leave the test
  sequences untouched, so its training sequences all come from the log's first 2,000 jobs.
"""


def _evolved_section(record: fidelity.Record, inputs: fidelity.Inputs) -> None:
    st.header("An evolved queue order against the published heuristics")
    rows = record.evolved
    if rows is None or not len(rows):
        st.info("This record has no evolved-order runs; recreate it with `python benchmarks/fidelity_record.py`.")
        return
    beaten = int(rows["beats_rival"].sum())
    st.markdown(f"**The evolved order beats the published heuristic it must beat in {beaten} of {len(rows)} "
                "anchors**, on RLScheduler's ten test sequences (average bounded slowdown, lower is better; "
                f"{int(rows['simulations'].sum()):,} simulations, {rows['seconds'].sum() / 60:.1f} min in all).")
    published = {c: rows[c].map(lambda v: "not published" if pd.isna(v) else f"{v:.2f}")
                 for c in ("published_F1", "published_SJF")}
    shown = rows.assign(backfill=rows["backfill"].map(BACKFILLS), **published).rename(columns={
        "evolved": "evolved (ours)", "F1": "F1 (ours)", "SJF": "SJF (ours)", "published_F1": "F1 published",
        "published_SJF": "SJF published", "rival": "must beat"})
    st.dataframe(shown, hide_index=True, key="fid_evolved_table", column_config={
        **{c: st.column_config.NumberColumn(format="%.2f") for c in ("evolved (ours)", "F1 (ours)", "SJF (ours)")},
        "beats_rival": st.column_config.CheckboxColumn("beats it (published)"),
        "seconds": st.column_config.NumberColumn(format="%.0f s")})
    with st.expander("Method"):
        st.markdown(EVOLVE_NOTES)
    st.subheader("Search again now")
    choices = {f"{Path(r['log']).name} · {BACKFILLS[r['backfill']]}": r for _, r in rows.iterrows()}
    left, middle, right = st.columns([3, 1, 1], vertical_alignment="bottom")
    picked = left.selectbox("Anchor", list(choices), key="fid_evolve_anchor")
    trials = int(middle.number_input("Trials", 10, 2000, 200, step=10, key="fid_evolve_trials"))
    anchor = choices[picked]
    trace = inputs.lublin_1 if "lublin" in str(anchor["log"]).lower() else inputs.hpc2n
    if _missing(inputs, "lublin_1" if trace == inputs.lublin_1 else "hpc2n"):
        return
    if right.button("Search", key="fid_evolve_run"):
        try:
            with st.spinner(f"Searching {trials} weight vectors (about a minute for 200)..."):
                st.session_state["fid_evolve_live"] = data_fidelity.evolve_rerun(trace, anchor["backfill"], trials)
        except (ImportRejected, ExperimentError, OSError) as exc:
            st.error(markdown_text(f"The search failed: {exc}"))
    live = st.session_state.get("fid_evolve_live")
    if live is not None:
        test = live["test"]
        cols = st.columns(3)
        for col, name in zip(cols, ("evolved", "F1", "SJF")):
            col.metric(f"{name} · test sequences", f"{test[name]['mean']:.2f}")
        st.caption(f"{markdown_text(Path(live['trace']).name)}, {markdown_text(live['backfill'])}: "
                   f"{live['trials']} trials, {live['simulations']:,} simulations in {live['elapsed_s']:.0f} s; "
                   "weights " + ", ".join(f"{k} {v:.4g}" for k, v in live["weights"].items()) + ".")


def _fgd_section(record: fidelity.Record, inputs: fidelity.Inputs) -> None:
    st.header("FGD (ATC'23) · Alibaba openb, default pod list")
    rows = record.fgd
    metric = st.radio("Metric", list(FGD_METRICS), format_func=FGD_METRICS.get, horizontal=True, key="fid_fgd_metric")
    n = len(record.meta["fgd_seeds"])
    plot(st, charts_fidelity.fgd_figure(rows, metric, f"Recorded: {n}-seed means, ours (markers) against published (dashed)"),
                    theme=None, key="fid_fgd_chart")
    policies = st.multiselect("Policies", list(fgd.POLICIES), default=list(fgd.POLICIES), format_func=FGD_LABELS.get,
                              key="fid_fgd_policies")
    _table(rows[rows["policy"].isin(policies)].drop(columns=["n_seeds"]), "fid_fgd_table")
    with st.expander("Method and tolerance"):
        st.markdown(FGD_NOTES)
    st.subheader("Run again now")
    if _missing(inputs, "openb_nodes", "openb_pods"):
        return
    left, middle, right = st.columns([2, 2, 1], vertical_alignment="bottom")
    policy = left.selectbox("Placement policy", list(fgd.POLICIES), index=len(fgd.POLICIES) - 1,
                            format_func=FGD_LABELS.get, key="fid_fgd_policy")
    seed = middle.selectbox("Seed", list(fgd.SEEDS), key="fid_fgd_seed")
    if right.button("Run again", key="fid_fgd_run"):
        try:
            with st.spinner(f"Packing the openb pods with {FGD_LABELS[policy]}, seed {seed} (a few seconds)..."):
                result = data_fidelity.fgd_rerun(inputs.openb_nodes, inputs.openb_pods, policy, seed)
            st.session_state["fid_fgd_live"] = (seed, fidelity.compare_fgd(rows, result, 1))
        except (ImportRejected, ValueError, OSError) as exc:
            st.error(markdown_text(f"The re-run failed: {exc}"))
    live = st.session_state.get("fid_fgd_live")
    if live is not None:
        _fgd_live(*live)


def _fgd_live(seed: int, live: pd.DataFrame) -> None:
    policy = live["policy"].iloc[0]
    alloc = live[live["metric"] == fidelity.FGD_TOLERATED_METRIC]
    box = st.success if alloc["within"].all() else st.warning
    box(f"{FGD_LABELS[policy]}, seed {seed}: {int(alloc['within'].sum())} of {len(alloc)} GPU-allocation points within "
        f"the one-seed allowance of the published 10-seed mean (largest difference "
        f"{alloc['difference'].abs().max():.2f} points).")
    plot(st, charts_fidelity.fgd_seed_figure(alloc, seed), theme=None, key="fid_fgd_live_chart")
    _table(alloc.drop(columns=["policy", "metric", "n_seeds", "published_std"]), "fid_fgd_live_table")


def _recorded_section(dataset: str | None) -> None:
    """The recorded baseline against the dataset's own history: per class, recorded and replayed waits."""
    if dataset is None:
        return
    st.subheader("The baseline reproduces this dataset's history")
    meaning = data_headroom.recorded(dataset)[1]
    st.caption(markdown_text(
        f"Every improvement is measured against the recorded baseline of {dataset}: {meaning}. Replayed over the "
        "whole dataset, the waits of the jobs that started in both the telemetry and the replay must be within "
        "10 % (or 6 minutes) of the recorded ones at p50 and p95, class by class."))
    if not st.button("Replay the recorded baseline", key="fid_recorded_run", help="the whole dataset: about 15 s "
                                                                                   "for the sample"):
        return
    with st.spinner(markdown_text(f"Replaying {dataset} as it was scheduled...")):
        table, _, jobs = data_headroom.recorded_reproduction(dataset)
    within = int(table["within"].sum())
    box = st.success if table["within"].all() else st.warning
    box(markdown_text(f"{within} of {len(table)} rows within the tolerance ({jobs:,} jobs replayed; the largest "
                      f"p95 deviation {table['p95_deviation_pct'].abs().max():.1f} %)."))
    _table(table, "fid_recorded_table")


def _missing(inputs: fidelity.Inputs, *names: str) -> bool:
    absent = inputs.missing(*names)
    if absent:
        shared = data_fidelity.shared_path()
        files = "; ".join(f"{markdown_code(p)} ({markdown_text(_source(p, shared))})" for p in absent)
        st.info(f"Live re-runs need the trace files, which are not on this machine: {files}. They are public, not "
                "part of the repository: put them in a folder holding `traces/` and `expected/` (by default "
                "`shared/` beside the repository), then start the dashboard with `meridian dashboard --shared DIR` "
                f"or set `{ENVIRONMENT}=DIR`. The recorded results above do not need them.")
    return bool(absent)


def _source(path, shared) -> str:
    try:
        return source_of(str(path.relative_to(shared)))
    except ValueError:
        return "a public data file"


st.title("Fidelity")
st.caption("Can you trust the engine's numbers? It re-runs three published scheduling experiments on the same public "
           "traces and lands on the published figures: exactly where the published method is exact (RLScheduler, "
           "SC'15 backfilling), and within the published seed spread where it is random (FGD).")
try:
    fidelity_record = data_fidelity.fidelity_record()
except (OSError, ValueError, KeyError) as exc:
    st.error(markdown_text(f"The fidelity record cannot be read ({type(exc).__name__}: {str(exc)[:200]}); ")
             + "recreate it with `python benchmarks/fidelity_record.py`.")
    st.stop()
fidelity_inputs = data_fidelity.fidelity_inputs()
_headlines(fidelity_record)
_recorded_section(st.session_state.get("dataset"))
_rls_section(fidelity_record, fidelity_inputs)
_evolved_section(fidelity_record, fidelity_inputs)
_fgd_section(fidelity_record, fidelity_inputs)
backfill_section(fidelity_record)
rl_section()
