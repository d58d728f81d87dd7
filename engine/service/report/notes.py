"""The report's appendix text: how each number is computed, and the engine's fidelity footnote."""
from __future__ import annotations

from engine.analysis.runs.catalogue import MONEY
from engine.service.experiments import fidelity


def _plain(key: str) -> str:
    """The KPI catalogue's one definition of money figure `key`, without its Markdown code marks."""
    return MONEY[key].replace("`", "")


METHOD = (
    "Every scenario runs through the code `meridian compare` runs (engine.service.compare): each KPI here equals "
    "`meridian compare --json` for the same dataset, scenarios and window at the default cost assumptions.",
    "Window W: from the first submit of the jobs kept to the end of the days chosen (to the data's observed "
    "end, its last submit, start or end, when all of it is kept or it ends sooner). Per year = value over W x "
    "days per year x 86400 / W in seconds.",
    "Service level: the baseline's p95 queue wait per workload class on the data as it is (censored: a job "
    "that never starts waits until the run's end; never below 6 minutes) and its guaranteed-inference misses. "
    "Load headroom = the largest demand scale s at which a scenario still holds it: the demand is resampled to "
    "s times as many jobs within each region, UTC hour of the week, workload class and team (copies submitted "
    "in their donor's hour; time is never compressed), by bracketing (x 1.5) then bisection to 2 % of s, over "
    "several resampling seeds. More work served = candidate headroom / baseline headroom - 1.",
    "GPUs needed: the smallest fleet, every (region, GPU type, tier) pool scaled by one factor in whole nodes, "
    "on which a scenario holds the level with the data as it is (bisection to 2 %). GPUs saved = the "
    "baseline's GPUs needed - the candidate's; hardware $ not spent = GPUs saved x price of one GPU, per year "
    "/ amortisation years.",
    "Utilisation = GPU-hours held by jobs inside W / (installed GPUs x W in hours), allocation-based; by "
    "region the same with the region's GPUs; by local hour h, GPU-hours held while the region's clock "
    "showed h / (GPUs x hours of W at local hour h), daylight saving included.",
    f"Spend (cost_usd) = {_plain('cost_usd')}. Idle $ (idle_cost_usd) = {_plain('idle_cost_usd')}. "
    "A spend change is split by tier (the parts add up to the change).",
    "Waits: queue wait = first start - submit of started jobs; p95 by workload class. Max-wait SLA met = "
    "jobs of queue classes with a maximum wait that started within it / all such jobs. Deadlines met = "
    "jobs with a deadline completed by it / jobs with a deadline.",
    "Carbon (kgCO2e) = kW per GPU of its type x GPUs held x hours x PUE x grid intensity (gCO2e/kWh) of "
    "the region at the local hour the work ran / 1000; idle GPUs, CPUs and networking are not counted.",
    "Payback (only for a candidate that adds GPUs through [[fleet]] edits) = GPUs added x price of one "
    "GPU / (baseline spend/yr - candidate spend/yr + hardware $ not spent per year); the spend already "
    "charges the added GPUs per hour at their tier's price.",
)


def method(headroom) -> tuple[str, ...]:
    """METHOD, with the service level this report measured at and the searches' figures."""
    level = headroom.level
    cost = sum(s.evaluations for s in headroom.scenarios)
    monotone = all(s.monotone for s in headroom.scenarios)
    return (*METHOD, f"Measured here: {level.describe()}; seeds {', '.join(map(str, headroom.seeds))}; "
            f"{cost:,} simulations; "
            + ("every search found the level held below its answer and broken above it." if monotone else
               "some search found the level broken below a scale where it held again (not monotone): read "
               "its headroom with care."))


def fidelity_note() -> str:
    """One sentence from the committed fidelity record (engine/service/experiments/fidelity_record.json)."""
    record = fidelity.load_record()
    summary = fidelity.summary(record.rlscheduler, record.fgd).set_index("experiment")
    rls, fgd = summary.loc["rlscheduler"], summary.loc["fgd"]
    meta = record.meta
    commit = (meta.get("commit") or "unknown")[:10] + (" with uncommitted changes" if meta.get("dirty") else "")
    return (f"Engine fidelity: the simulator reproduces RLScheduler (SC'20) on the Lublin-1 log, "
            f"{rls['runs_within']} of {rls['runs']} published runs within ±0.01, and FGD (ATC'23) on the "
            f"Alibaba openb trace, {fgd['runs_within']} of {fgd['runs']} published GPU-allocation points within "
            f"tolerance (recorded {str(meta.get('created_utc', ''))[:10]} at commit {commit}). Both are "
            "replays of published traces; the figures here are simulations of this dataset, not measurements.")
