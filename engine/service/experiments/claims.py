"""The industry's claims, on your own data: each figure reported in industry write-ups about GPU
scheduling, the bundled scenario pair that tests it, the figure measured on the chosen dataset and
window, its method and spread, and a plain verdict.

Nothing is tuned to match a claim: the scenarios are the bundled ones, the baseline the recorded one
(how the data was scheduled) unless a claim names FIFO, and the measures those every page shows
(engine.service.compare, engine.service.headroom). Verdicts, for a claim of a change c (a share, e.g. +0.37) measured
as m: "holds" when m reaches at least 3/4 of c in its direction, "partly" when it goes in c's
direction by at least 1/4 of it, else "does not hold here"; for a claimed level (a share of the
time, a utilisation), "holds" within 5 points of it or beyond it in its favour, "partly" within 20
points, else "does not hold here". A claim about something Meridian cannot exercise yet says so
("cannot be tested yet") and why.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from engine.scenario.runtime import TRAIN_SHARE
from engine.scenario.spec import Scenario
from engine.service.compare import Run, first_days, run_scenarios
from engine.service.experiments.claims_classes import matching_gain
from engine.service.experiments.claims_prediction import best_cut, cut_table, prediction_scenarios
from engine.service.headroom.measure import HeadroomOptions, with_headroom

COLUMNS = ["claim", "reported", "scenarios", "measured", "measured_text", "spread", "method", "verdict", "why"]
HOLDS, PARTLY, NOT_HERE, UNTESTED = "holds", "partly", "does not hold here", "cannot be tested yet"


@dataclass(frozen=True)
class Claim:
    """One reported figure: its words, the value (a share: 0.37 for +37 %), change or level."""

    key: str
    text: str
    reported: float
    kind: str  # "change", "reduction" (reported as a positive share of a reduction) or "level"


CLAIMS = (
    Claim("stranded", "FIFO scheduling leaves GPUs idle 43 % of the time despite a backlog", 0.43, "level"),
    Claim("follow-the-sun", "Follow-the-sun scheduling adds 37 % effective capacity without new hardware", 0.37,
          "change"),
    Claim("classification", "Workload classification improves resource matching by 45 %", 0.45, "change"),
    Claim("priorities", "Priority scheduling cuts production SLA violations by 78 %", 0.78, "reduction"),
    Claim("fair-share", "Fair share keeps utilisation at 89 % without starving anyone", 0.89, "level"),
    Claim("backfilling", "Backfilling raises utilisation from 67 % to 84 %", 0.84 / 0.67 - 1, "change"),
    Claim("packing", "Bin packing cuts wasted (fragmented) GPU capacity by 38 %", 0.38, "reduction"),
    Claim("runtime-prediction", "ML runtime prediction cuts job completion time by 31 %", 0.31, "reduction"),
    Claim("rl", "Reinforcement-learning scheduling raises throughput by 27 %", 0.27, "change"),
    Claim("utilisation-95", "95 % GPU utilisation is reachable", 0.95, "level"),
)


def verdict(claim: Claim, measured: float) -> str:
    """The module docstring's rule."""
    if not np.isfinite(measured):
        return UNTESTED
    if claim.kind == "level":
        gap = claim.reported - measured
        return HOLDS if gap <= 0.05 else PARTLY if gap <= 0.20 else NOT_HERE
    share = measured / claim.reported
    return HOLDS if share >= 0.75 else PARTLY if share >= 0.25 else NOT_HERE


def _pct(share: float, signed: bool = True) -> str:
    value = round(100 * share) + 0   # + 0: no "-0 %"
    return f"{value:+.0f} %" if signed else f"{value:.0f} %"


def measure_claims(jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict, scenarios: dict[str, Scenario],
                recorded: Scenario, days: float | None, seeds: int = 3, workers: int | None = None,
                progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per claim (COLUMNS) on the dataset's first `days` days (None: all). `scenarios`: the
    bundled ones by name (fifo, easy-backfill, follow-the-sun, priority-fairshare are needed);
    `recorded`: the dataset's recorded baseline."""
    say = progress or (lambda message: None)
    names = ("fifo", "easy-backfill", "follow-the-sun", "priority-fairshare")
    packed = replace(scenarios["fifo"], name="fifo-best-fit",
                     policies={**scenarios["fifo"].policies, "placement": ("best-fit", {})})
    chosen = first_days([recorded, *(scenarios[n] for n in names), packed], jobs, days)
    say("replaying " + ", ".join(s.name for s in chosen))
    runs, _ = run_scenarios(chosen, jobs, fleet, world_tables)
    by = {run.scenario.name: run for run in runs}
    say("measuring the load headroom of fifo, easy-backfill and follow-the-sun at fifo's service level")
    measured, _ = with_headroom([by["fifo"], by["easy-backfill"], by["follow-the-sun"]], jobs, fleet, world_tables,
                                HeadroomOptions(seeds=seeds, workers=workers))
    head = {run.scenario.name: run for run in measured}
    sun = head["follow-the-sun"]
    say("replaying follow-the-sun at its load headroom")
    scaled = replace(sun.scenario, growth=sun.scenario.growth * sun.headroom.load_headroom_by_seed[0])
    (loaded,), _ = run_scenarios([scaled], jobs, fleet, world_tables, strand=False)
    say("replaying easy-backfill and easy-sjbf after the runtime model's training cut, seeing requests, "
        "then predictions")
    cut = pd.to_datetime(jobs["submit_utc"]).quantile(TRAIN_SHARE)
    after = replace(scenarios["easy-backfill"], start_utc=cut, end_utc=cut + pd.Timedelta(days=days) if days else None)
    try:
        guess, _ = run_scenarios(prediction_scenarios(after), jobs, fleet, world_tables, world=False, strand=False)
    except ValueError as exc:  # too little history to train on
        guess = exc
    say("scheduling fifo without workload classes, then with the classes the classifier infers")
    try:
        matching = matching_gain(by["fifo"].scenario, jobs, fleet, world_tables)
    except ValueError as exc:  # no labels to judge by, or too few users to hold any out
        matching = exc
    rows = [_stranded(by["recorded"]), _sun(head), _classification(matching),
            _priorities(by["fifo"], by["priority-fairshare"]), _fair(by["priority-fairshare"]),
            _backfill(head), _packing(by["fifo"], by["fifo-best-fit"]), _prediction(guess),
            _untested(CLAIMS[8], "Meridian's learned schedulers (issue 24) order one processor "
                      "pool of an SWF log; none is trained on a GPU fleet's regions, gangs and classes yet"),
            _reachable(sun, loaded)]
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(claim: Claim, scenarios: str, measured: float, text: str, spread: str, method: str, why: str) -> dict:
    return {"claim": claim.text, "reported": claim.reported, "scenarios": scenarios, "measured": measured,
            "measured_text": text, "spread": spread, "method": method, "verdict": verdict(claim, measured), "why": why}


def _untested(claim: Claim, why: str) -> dict:
    return _row(claim, "", np.nan, "not measured", "", "", why)


def _stranded(recorded: Run) -> dict:
    k = recorded.kpis
    gpu_hours = k["idle_gpu_hours"] / max(1e-9, 1 - k["utilization"])
    share = k["stranded_gpu_hours"] / gpu_hours if gpu_hours > 0 else np.nan
    return _row(CLAIMS[0], "recorded", share, f"{_pct(share, False)} of GPU-hours",
                "", "stranded GPU-hours (idle while a waiting job could have used them: in its region, in "
                    "another its data may go to, or in fragments) / installed GPU-hours, under the recorded "
                    "baseline", f"idle {_pct(1 - k['utilization'], False)} of the time in all; the rest of the "
                                 "idle time had no waiting job that could use it")


def _ratio_row(claim: Claim, run: Run, base: str, why: str) -> dict:
    h = run.headroom
    more = h.load_headroom_ratio - 1
    seeds = len(h.ratio_by_seed)
    spread = (f"{_pct(min(h.ratio_by_seed) - 1)} to {_pct(max(h.ratio_by_seed) - 1)} over {seeds} seeds" if seeds > 1
              else "one demand resampling")
    if h.limited_by:
        why += f"; beyond its headroom the first to break is {h.limited_by}" + (
            "" if h.limited_by.endswith("misses") else "'s p95 wait")
    return _row(claim, f"{run.scenario.name} vs {base}", more, f"{_pct(more)} work at {base}'s service level",
                spread, "load headroom ratio: the largest demand scale each holds at fifo's service level (p95 "
                        "wait per class, guaranteed misses), resampled within region, hour, class and team", why)


def _sun(head: dict) -> dict:
    run = head["follow-the-sun"]
    saved = run.headroom.saved_gpus
    fleet = (f"or the same work on {saved:,.0f} fewer GPUs than fifo needs" if saved > 0 else
             f"it needs {-saved:,.0f} more GPUs than fifo for the same work" if saved < 0 else
             "it needs as many GPUs as fifo for the same work")
    return _ratio_row(CLAIMS[1], run, "fifo", fleet)


def _backfill(head: dict) -> dict:
    base, easy = head["fifo"].kpis["utilization"], head["easy-backfill"].kpis["utilization"]
    return _ratio_row(CLAIMS[5], head["easy-backfill"], "fifo",
                      f"utilisation {_pct(base, False)} to {_pct(easy, False)}: when all the work completes "
                      "either way, utilisation is set by the demand; the capacity gained shows as headroom")


def _priorities(fifo: Run, fair: Run) -> dict:
    before, after = fifo.kpis["max_wait_sla_misses"], fair.kpis["max_wait_sla_misses"]
    cut = 1 - after / before if before else np.nan
    return _row(CLAIMS[3], "priority-fairshare vs fifo", cut, f"{_pct(-cut)} ({before:,.0f} to {after:,.0f} jobs)",
                "", "production SLA violations: jobs of queues with a maximum wait (express: 15 min; the guaranteed "
                    "inference queue: 60 s) that waited past it",
                "the guaranteed queue's replicas start at once under every policy here; the misses are express jobs")


def _fair(fair: Run) -> dict:
    k = fair.kpis
    return _row(CLAIMS[4], "priority-fairshare", k["utilization"], f"{_pct(k['utilization'], False)} utilisation, "
                f"{k['starved_jobs']:,.0f} starved jobs", "", "allocation-based utilisation over the window; starved: "
                "jobs that waited longer than their queue allows",
                "utilisation is set by the demand of the window, not by the policy; fair share starves "
                f"{k['starved_jobs']:,.0f} jobs (Jain's index {k['jain_index']:.3f})")


def _packing(first: Run, best: Run) -> dict:
    before, after = (r.kpis["stranded_fragmented_gpu_hours"] + r.kpis["partial_node_idle_gpu_hours"]
                     for r in (first, best))
    cut = 1 - after / before if before else np.nan
    return _row(CLAIMS[6], "fifo best-fit vs first-fit", cut, f"{_pct(-cut)} ({before:,.0f} to {after:,.0f} "
                "GPU-hours)", "", "waste: GPU-hours stranded in fragments plus idle GPU-hours on partly used nodes, "
                                  "FIFO with best-fit placement against first-fit", "")


def _classification(matching) -> dict:
    if isinstance(matching, Exception):
        return _untested(CLAIMS[2], f"resource matching cannot be judged here: {matching}")
    return _row(CLAIMS[2], "fifo with inferred classes vs fifo without classes", matching.gain,
                f"{_pct(matching.gain)} resource matching ({_pct(matching.without, False)} to "
                f"{_pct(matching.inferred, False)} of GPU-hours)", f"classifier accuracy {_pct(matching.accuracy, False)}",
                "resource matching (share of GPU-hours on a GPU type and in a queue fit for the job's recorded "
                "class), FIFO with every job in the standard queue against FIFO with the classes the classifier "
                "infers, each job classified by a model that never saw its user",
                "each job runs on its recorded GPU type here, so only the queue part of matching can change")


def _prediction(guess) -> dict:
    if isinstance(guess, Exception):
        return _untested(CLAIMS[7], f"the runtime model cannot be trained here: {guess}")
    best = best_cut(guess)
    others = "; ".join(f"{row.scenario} {_pct(-row.jct_cut)}" for row in cut_table(guess).itertuples())
    return _row(CLAIMS[7], f"{best.predicted} vs {best.requests} seeing requests", best.cut,
                f"{_pct(-best.cut)} mean JCT ({best.jct_before_s / 3600:,.1f} h to {best.jct_after_s / 3600:,.1f} h), "
                f"{_pct(-best.slowdown_cut)} bounded slowdown ({best.slowdown_before:,.2f} to "
                f"{best.slowdown_after:,.2f})",
                f"{_pct(-best.high)} to {_pct(-best.low)} mean JCT, 95 % paired bootstrap over the jobs"
                if np.isfinite(best.low) else "",
                "mean job completion time (end - submit) of finished jobs and average bounded slowdown (tau 10 s), "
                "the best of EASY and EASY-SJBF seeing the runtime model's P50 or its scheduling prediction "
                "against the same policies seeing the users' requests, on the days after its training cut "
                "(70 % of submits)",
                f"the best of four predicted runs, chosen after seeing them (favours the claim): {others}")


def _reachable(sun: Run, loaded: Run) -> dict:
    h, util = sun.headroom, loaded.kpis["utilization"]
    return _row(CLAIMS[9], "follow-the-sun at its load headroom", util, f"{_pct(util, False)} utilisation",
                f"at demand x{h.load_headroom_by_seed[0]:.2f}" + (
                    f" (seeds x{h.load_headroom_min:.2f}-x{h.load_headroom_max:.2f})"
                    if len(h.load_headroom_by_seed) > 1 else ""),
                "utilisation of follow-the-sun replaying the demand resampled to its load headroom (the first seed's): "
                "the busiest the fleet runs while it still holds fifo's service level", "")
