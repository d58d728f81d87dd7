"""Why a candidate's spend differs from the baseline's: the change in spend a year split by pricing tier,
each part with its reason in plain words, the parts adding up to the change.

Per tier t (reserved, on-demand, spot, burst), from the two runs' cost reports (engine.analysis.runs.cost),
each annualised over its own window W as `cost_usd_per_year` is:

  part_t        = usd_t(candidate) x Y_c - usd_t(baseline) x Y_b          Y = days a year x 86400 / W
  sum of part_t = cost_usd_per_year(candidate) - cost_usd_per_year(baseline)   (the decomposition is exact)

with two more parts beside the tiers when either run pays them, "egress" (usd_egress: input data moved
between regions) and "storage" (usd_storage: the replicas stored), annualised the same way.

and the GPU-hours behind each part, annualised the same way: reserved GPUs are paid every hour, so
their part moves only with the GPUs installed (a scenario's [[fleet]] edits) or the window; on-demand
and spot GPUs are paid only while a job holds them, so their part moves with the GPU-hours jobs held
there (a policy that starts more work inside the window, or places it on on-demand or spot nodes
rather than on reserved ones, pays more); burst GPUs are paid from renting to return. The reserved
GPU-hours jobs used tell where work moved: fewer used reserved hours and more on-demand hours is work
that left the paid-for reserved fleet.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.runs.cost import CostReport, annualise

TIER_ORDER = ("reserved", "on-demand", "spot", "burst")


@dataclass(frozen=True)
class Part:
    """One tier's share of the change: USD a year, paid and used GPU-hours a year (candidate - baseline),
    installed GPUs (candidate - baseline), and the reason in words."""

    tier: str
    usd_per_year: float
    paid_gpu_hours_per_year: float
    used_gpu_hours_per_year: float
    installed_gpus: float
    reason: str


def _per_tier(report: CostReport, days: float) -> dict[str, dict[str, float]]:
    window = report.totals["window_s"]
    spend = report.spend.groupby("tier")[["usd", "gpu_hours_paid", "gpu_hours_used", "installed_gpus"]].sum()
    out = {}
    for tier, row in spend.iterrows():
        year = (lambda v: annualise(float(v), window, days)) if window > 0 else (lambda v: 0.0)
        out[str(tier)] = {"usd": year(row["usd"]), "paid": year(row["gpu_hours_paid"]),
                          "used": year(row["gpu_hours_used"]), "installed": float(row["installed_gpus"])}
    return out


def _reason(tier: str, usd: float, paid: float, used: float, installed: float, same_window: bool = True) -> str:
    """Why one tier's part moved, in a few words."""
    more = "more" if paid >= 0 else "fewer"
    if tier == "reserved":
        if abs(installed) >= 0.5:
            return f"{'+' if installed > 0 else '-'}{abs(installed):,.0f} reserved GPUs installed"
        if abs(usd) >= 0.5:
            return "the same GPUs " + ("at the scenario's region prices" if same_window
                                       else "over a different measurement window")
        return f"the same GPUs, {abs(used):,.0f} {'more' if used >= 0 else 'fewer'} of their GPU-hours used"
    if tier == "burst":
        return f"{abs(paid):,.0f} {more} cloud GPU-hours billed"
    mix = ""
    if paid > 0 > usd:
        mix = ", at lower prices"
    elif paid < 0 < usd:
        mix = ", at higher prices"
    return f"{abs(paid):,.0f} {more} GPU-hours held by jobs{mix}"


def spend_change(baseline: CostReport, candidate: CostReport, days: float) -> list[Part]:
    """The parts of `candidate`'s spend a year minus `baseline`'s, one per tier either run pays for, in
    TIER_ORDER."""
    b, c = _per_tier(baseline, days), _per_tier(candidate, days)
    same_window = baseline.totals["window_s"] == candidate.totals["window_s"]
    zero = {"usd": 0.0, "paid": 0.0, "used": 0.0, "installed": 0.0}
    tiers = [t for t in TIER_ORDER if t in b or t in c] + sorted((set(b) | set(c)) - set(TIER_ORDER))
    parts = []
    for tier in tiers:
        before, after = b.get(tier, zero), c.get(tier, zero)
        delta = {k: after[k] - before[k] for k in zero}
        parts.append(Part(tier, delta["usd"], delta["paid"], delta["used"], delta["installed"],
                          _reason(tier, delta["usd"], delta["paid"], delta["used"], delta["installed"],
                                  same_window)))
    for key, name, reason in (("usd_egress", "egress", "input data moved between regions"),
                              ("usd_storage", "storage", "dataset replicas stored")):
        before, after = (_annual(report, key, days) for report in (baseline, candidate))
        if before or after:
            more = "more" if after >= before else "less"
            parts.append(Part(name, after - before, 0.0, 0.0, 0.0, f"{more} {reason}"))
    return parts


def _annual(report: CostReport, key: str, days: float) -> float:
    window = report.totals["window_s"]
    return annualise(report.totals.get(key, 0.0), window, days) if window > 0 else 0.0


def explained(parts: list[Part], total: float, fmt_usd, least_usd: float = 500.0, most: int | None = None) -> str:
    """The change `total` in words with the tiers that move it by at least `least_usd` a year, largest
    first: "+$129K a year: on-demand +$100K (1,234 more GPU-hours held by jobs), spot +$29K (...)"; the
    reserved GPUs' use is added when on-demand or spot moved (work that left or joined them). With `most`,
    only that many of the largest parts are named (and nothing is added), for a one-line bullet."""
    moving = sorted((p for p in parts if abs(p.usd_per_year) >= least_usd), key=lambda p: -abs(p.usd_per_year))
    if not moving:
        return f"{fmt_usd(total)} a year: no tier's spend moves by {fmt_usd(least_usd).lstrip('+')} or more"
    said = [f"{p.tier} {fmt_usd(p.usd_per_year)} ({p.reason})" for p in moving[:most]]
    if most is None and any(p.tier in ("on-demand", "spot") for p in moving):
        said += [f"reserved unchanged ({p.reason})" for p in parts
                 if p.tier == "reserved" and p not in moving and abs(p.used_gpu_hours_per_year) >= 1]
    return f"{fmt_usd(total)} a year: " + ", ".join(said)
