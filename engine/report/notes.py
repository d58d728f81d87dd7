"""The report's appendix text: how each number is computed, and the engine's fidelity footnote."""
from __future__ import annotations

from engine.experiments import fidelity

METHOD = (
    "Every scenario runs through engine.compare.run_scenarios, the code `meridian compare` runs: each KPI "
    "here equals `meridian compare --json` for the same dataset, scenarios and window (at the default "
    "cost assumptions; edited ones change only the dollar and carbon figures).",
    "Window W: from the first submit of the jobs kept to the data's observed end (the last submit, start "
    "or end among them). Per year = value over W x days per year x 86400 / W in seconds.",
    "Utilisation = GPU-hours held by jobs inside W / (installed GPUs x W in hours), allocation-based; by "
    "region the same with the region's GPUs; by local hour h, GPU-hours held while the region's clock "
    "showed h / (GPUs x hours of W at local hour h), daylight saving included.",
    "Spend: reserved GPUs are paid every hour of W (installed GPUs x W x price), on-demand and spot GPUs "
    "only while a job holds them (GPU-hours held x price); prices per region, GPU type and tier from the "
    "dataset, else the default price book. Idle $ = reserved GPU-hours no job held x their price. "
    "Idle $ recovered per year = baseline idle $/yr - candidate idle $/yr.",
    "Effective capacity ratio = served GPU-hours (GPU-hours of jobs that completed, inside W, less work "
    "lost to evictions) / the same under home-only FIFO on the same workload. Equivalent GPUs = "
    "(candidate ratio / baseline ratio - 1) x baseline fleet GPUs. Hardware $ not spent = (equivalent "
    "GPUs - GPUs the candidate adds) x price of one GPU; per year = / amortisation years.",
    "Waits: queue wait = first start - submit of started jobs; p95 by workload class. Max-wait SLA met = "
    "jobs of queue classes with a maximum wait that started within it / all such jobs. Deadlines met = "
    "jobs with a deadline completed by it / jobs with a deadline.",
    "Carbon (kgCO2e) = kW per GPU of its type x GPUs held x hours x PUE x grid intensity (gCO2e/kWh) of "
    "the region at the local hour the work ran / 1000; idle GPUs, CPUs and networking are not counted.",
    "Payback (only for a candidate that adds GPUs through [[fleet]] edits) = GPUs added x price of one "
    "GPU / (baseline spend/yr - candidate spend/yr + hardware $ not spent per year); the spend already "
    "charges the added GPUs per hour at their tier's price.",
)


def fidelity_note() -> str:
    """One sentence from the committed fidelity record (engine/experiments/fidelity_record.json)."""
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
