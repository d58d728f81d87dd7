"""The What-if page's notes on scenario sections that changed nothing in a run: a [handoff] that moved no
running work, a [rightsize] that sized no job, [partitions] no job ran on, [experiments] that generated no job,
[[chain]]s none of which could be built. Each KPI exists only in runs with its section (engine.analysis.runs
catalogue), so a zero says the section was on and did nothing; the note says why that happens and what to change,
instead of leaving a row of zeros in the KPI table to be read."""
from __future__ import annotations

import streamlit as st

from dashboard.charts.view import say
from engine.core.escaping import markdown_text

# (the KPIs that are all 0 when the section did nothing, what to say)
QUIET = (
    (("handoff_moves",), "[handoff] moved no running work: a move needs a job borrowed from another region still "
                         "running (for the minimum run, with the smallest request left) when that region's working "
                         "day begins and its own work queues. Simulate more days or more load, or lower the two "
                         "limits."),
    (("rightsized_jobs",), "[rightsize] gave no job fewer GPUs than it asked for: the GPU-need prediction at this "
                           "quantile, plus the safety margin, rounded up to whole GPUs or nodes, reached every "
                           "request. Lower the quantile or the margin."),
    (("mig_instances", "shared_gpu_pieces"), "[partitions]: no job ran on a MIG instance or a shared GPU: the rule "
                                             "takes inference and development jobs asking one GPU at most on one "
                                             "node (MIG: of an A100 or H100)."),
    (("experiments_jobs",), "[experiments] generated no job: the demand forecast leaves the chosen teams' regions "
                            "no idle GPUs while they are off work in this window."),
    (("chains",), "[[chain]]: no chain could be built: each stage needs a job of the class and team asked for, "
                  "in its region, submitted after the stage before."),
)


def quiet_notes(names: list[str], kpis: list[dict[str, float]]) -> list[str]:
    """One note per scenario and section that was on (its KPIs present) and did nothing (all of them 0)."""
    return [f"{name}: {text}" for name, values in zip(names, kpis) for keys, text in QUIET
            if all(key in values for key in keys) and not any(values[key] for key in keys)]


def quiet_section(names: list[str], kpis: list[dict[str, float]]) -> None:
    """Draw the notes, if any."""
    for note in quiet_notes(names, kpis):
        st.info(say(markdown_text(note)))
