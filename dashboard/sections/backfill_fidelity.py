"""The Fidelity page's SC'15 backfilling section: the EASY family on CTC-SP2, KTH-SP2 and SDSC-BLUE in the
pyss-compatible and textbook modes against the published figures (engine/service/experiments/backfill.py)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.data import fidelity as data_fidelity
from engine.core.escaping import markdown_code, markdown_text
from engine.service.experiments import backfill
from engine.telemetry.errors import ImportRejected

MODES = {"pyss": "pyss-compatible", "textbook": "textbook"}
NOTES = """
- **Published method** (Gaussier, Glesser, Reis and Trystram, *Improving backfilling by using machine learning to
  predict running times*, SC'15): the authors' Python simulator (pyss) replays whole Parallel Workloads Archive
  logs on one pool of MaxProcs processors. The logs are filtered in this order: allocated and requested processors
  at most MaxProcs; a missing one copied from the other (neither: dropped); run time > 0; requested time > 0; run
  time cut to the requested time; submit time >= 0. That keeps 77,199 jobs of CTC-SP2 and 28,481 of KTH-SP2.
- **Schedulers**: EASY with the users' requested times (candidates in arrival order); EASY-SJBF (shortest
  requested time first); EASY++ (Tsafrir, Etsion and Feitelson, TPDS 2007: the mean of the user's last two run
  times as the prediction, SJBF, the request once a job outlives its prediction); EASY++ with twice the request as
  the prediction; clairvoyant (the actual run times).
- **Meridian's own, beside them** (not the paper's, held to no published figure): EASY++ with Meridian's runtime
  model (`easy++-learned`): shortest-prediction-first EASY whose predictions come from the runtime model
  refitted every 30 days of submits on the jobs that had ended in the log by then (the first month falls back
  to the user's last-two mean), at its 0.3 quantile of log run time, never above the request; a job that
  outlives its prediction is expected at twice it. Read its figures with their history: a first setting (the
  0.7 quantile, Tsafrir's corrector) gave 53.40 on CTC-SP2; the quantile and corrector were then chosen again
  on KTH-SP2 alone (`benchmarks/backfill_learned_selection.py`), so KTH-SP2 is where they were tuned.
- **Score**: average bounded slowdown, the mean over all jobs of max(1, (wait + run) / max(run, 10 s)).
- **Ours** (`meridian experiment backfill`): one scheduling pass (start the queue's head while it fits, reserve
  its earliest start from the running jobs' expected ends, backfill any job that fits now and ends by the
  reservation or uses only the processors it leaves free). The **textbook** mode runs one pass per event time
  after all its events. The **pyss-compatible** mode follows the authors' simulator: one pass per completion
  (simultaneous completions give several passes), per submission (pyss's EASY only when the new job fits now),
  none when a prediction expires; at equal times expiries, then submissions, then completions.
- **Tolerance**: the pyss-compatible figures within 0.5 % of the published CTC-SP2 figures. The textbook mode is
  shown beside them for information. The paper's figures for KTH-SP2 and SDSC-BLUE are not among the published
  results this project holds (`../shared/expected/README.md`), so those logs show ours only.
"""


def backfill_section(record) -> None:
    """Draw the section from the committed record, with a live re-run of one scheduler."""
    st.header("Backfilling variants (SC'15) · CTC-SP2, KTH-SP2, SDSC-BLUE")
    rows = record.backfill
    if rows is None or not len(rows):
        st.info("This record has no SC'15 backfilling runs; recreate it with `python benchmarks/fidelity_record.py`.")
        return
    held = rows[rows["within"].notna()]
    worst = float(held["relative_difference"].abs().max()) if len(held) else float("nan")
    st.metric("SC'15 backfilling · CTC-SP2 · figures within 0.5 %", f"{int(held['within'].sum())} of {len(held)}")
    st.markdown(f"**SC'15 backfilling, CTC-SP2: {int(held['within'].sum())} of {len(held)} published figures "
                f"reproduced within 0.5 %** by the pyss-compatible mode (largest difference {worst:.3%}).")
    _learned_line(rows)
    table = wide(rows)
    cells = table.assign(jobs=table["jobs"].map("{:,}".format),
                         published=table["published"].map(lambda v: "not held here" if pd.isna(v) else f"{v:.2f}"))
    st.dataframe(cells, hide_index=True, key="fid_bf_table", height=36 * (len(cells) + 1), column_config={
        **{c: st.column_config.NumberColumn(format="%.2f") for c in ("pyss-compatible", "textbook")},
        "pyss vs published": st.column_config.NumberColumn(format="%+.3f %%"),
        "within": st.column_config.CheckboxColumn("within 0.5 %")})
    with st.expander("Method and tolerance"):
        st.markdown(NOTES)
    _rerun(rows)


def _learned_line(rows: pd.DataFrame) -> None:
    """Meridian's runtime model in the paper's scheduler, per log, against EASY++ and clairvoyant (pyss mode)."""
    pyss = rows[rows["mode"] == "pyss"].set_index(["log", "scheduler"])["ours"]
    logs = [log for log in dict.fromkeys(rows["log"]) if (log, "easy++-learned") in pyss.index]
    if not logs:
        return
    parts = [f"{log} {pyss[(log, 'easy++-learned')]:.2f} (EASY++ {pyss[(log, 'easy++')]:.2f}, clairvoyant "
             f"{pyss[(log, 'clairvoyant')]:.2f})" for log in logs]
    st.markdown("**EASY++ with Meridian's runtime model** (pyss-compatible mode, average bounded slowdown): "
                + "; ".join(parts) + ". Lower is better; its settings were chosen on KTH-SP2 (see *Method*).")


def wide(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (log, scheduler): both modes' figures, the published one, the pyss mode's relative
    difference (%) and whether it is within the tolerance."""
    pyss = rows[rows["mode"] == "pyss"].set_index(["log", "scheduler"])
    text = rows[rows["mode"] == "textbook"].set_index(["log", "scheduler"])
    out = pd.DataFrame({"jobs": pyss["jobs"], "pyss-compatible": pyss["ours"], "textbook": text["ours"],
                        "published": pyss["published"], "pyss vs published": 100 * pyss["relative_difference"],
                        "within": pyss["within"]}).reset_index()
    out["scheduler"] = out["scheduler"].map(backfill.LABELS)
    return out


def _rerun(rows: pd.DataFrame) -> None:
    st.subheader("Run again now")
    shared = data_fidelity.shared_path()
    present = {log: shared / rel for log, rel in backfill.TRACES.items() if (shared / rel).is_file()}
    if not present:
        files = "; ".join(markdown_code(shared / rel) for rel in backfill.TRACES.values())
        st.info(f"Live re-runs need the trace files, which are not on this machine: {files} (real cluster logs of "
                "the Parallel Workloads Archive). Put them under `traces/swf/` of a folder holding `traces/` and "
                "`expected/`, then start the dashboard with `meridian dashboard --shared DIR`. The recorded results "
                "above do not need them.")
        return
    log_col, sched_col, mode_col, button_col = st.columns([2, 2, 2, 1], vertical_alignment="bottom")
    log = log_col.selectbox("Log", list(present), key="fid_bf_log")
    name = sched_col.selectbox("Scheduler", [n for n in backfill.RECORDED_SCHEDULERS if n in set(rows["scheduler"])],
                               format_func=backfill.LABELS.get, key="fid_bf_scheduler")
    mode = mode_col.selectbox("Mode", list(MODES), format_func=MODES.get, key="fid_bf_mode")
    if button_col.button("Run again", key="fid_bf_run"):
        try:
            wait = ("up to a minute: the runtime model is refitted every 30 days of the log" if name == "easy++-learned"
                    else "a few seconds")
            with st.spinner(f"Replaying {log} under {backfill.LABELS[name]} ({wait})..."):
                st.session_state["fid_bf_live"] = (log, data_fidelity.backfill_rerun(present[log], name, mode))
        except (ImportRejected, OSError) as exc:
            st.error(markdown_text(f"The re-run failed: {exc}"))
    live = st.session_state.get("fid_bf_live")
    if live is not None:
        _live(*live, rows)


def _live(log: str, row: dict, recorded: pd.DataFrame) -> None:
    ours, published = row["avg_bounded_slowdown"], row["published"]
    same = recorded[(recorded["log"] == log) & (recorded["scheduler"] == row["scheduler"])
                    & (recorded["mode"] == row["mode"])]
    identical = len(same) == 1 and same["ours"].iloc[0] == ours
    head = (f"{log}, {backfill.LABELS[row['scheduler']]}, {MODES[row['mode']]}: average bounded slowdown {ours:.2f} "
            "just now")
    tail = "; identical to the record." if identical else "; differs from the record."
    if published is None:
        st.info(head + " (no published figure for this log)" + tail)
    elif row["mode"] == "pyss":
        ok = backfill.within(ours, published)
        (st.success if ok else st.warning)(f"{head}, published {published:.2f}: "
                                           f"{'within' if ok else 'NOT within'} 0.5 %{tail}")
    else:
        st.info(f"{head}, published {published:.2f} (the textbook mode is not held to it){tail}")
