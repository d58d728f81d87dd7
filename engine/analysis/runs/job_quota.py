"""The quota behind a job's wait: its quota holder's limits in the region where it waits or runs
(the result's `quotas` table, engine.sim.output.result), to answer "why is my job waiting" when the
reason is its quota ("blocked-by-quota", "blocked-by-team-limit", "exceeds-quota")."""
from __future__ import annotations

import math

from engine.sim.output.result import SimulationResult

QUOTA_REASONS = ("blocked-by-quota", "blocked-by-team-limit", "exceeds-quota")


def job_quota(result: SimulationResult, row: int) -> dict | None:
    """The `quotas` row (as a dict) of the holder of the job at position `row` of `result.jobs` in
    its region; None when the run had no quota policy."""
    quotas = result.quotas
    if quotas is None or quotas.empty:
        return None
    jobs = result.jobs
    by = str(quotas["by"].iat[0])
    holder, region = str(jobs["team" if by == "team" else "queue"].iat[row]), str(jobs["region"].iat[row])
    hit = quotas[(quotas["region"] == region) & (quotas["holder"] == holder)]
    return hit.iloc[0].to_dict() if len(hit) else None


def quota_text(quota: dict) -> str:
    """'Team a may hold at most 6 GPUs at once in us-east (nominal quota 4, borrowing limit 2).'"""
    limits = []
    most, nominal, borrow = quota["most_gpus"], quota["nominal_gpus"], quota["borrowing_limit_gpus"]
    if math.isfinite(nominal):
        limits.append(f"nominal quota {_gpus(nominal)}")
        if most < min(nominal + borrow, quota["cap_gpus"]) - 1e-9:  # what its cohort lends is the bound
            limits.append(f"up to {_gpus(most - nominal)} more borrowed from its cohort")
        else:
            limits.append(f"borrowing limit {_gpus(borrow)}" if math.isfinite(borrow) else "no borrowing limit")
    if math.isfinite(quota["cap_gpus"]):
        limits.append(f"cap {_gpus(quota['cap_gpus'])}")
    whole = f"at most {_gpus(most)} GPUs" if math.isfinite(most) else "any number of GPUs"
    detail = f" ({', '.join(limits)})" if limits else ""
    return f"{quota['by'].capitalize()} {quota['holder']} may hold {whole} at once in {quota['region']}{detail}."


def _gpus(value: float) -> str:
    """GPUs to one decimal, without a trailing .0 (nominal quotas split by weight are fractional)."""
    return f"{value:,.1f}".removesuffix(".0")
