"""Egress: the dollars of moving each started job's input data to the region it ran in, part of
`cost_usd` (engine.analysis.runs.cost adds them to the job's spend and to the totals).

  egress_j = data_size_gb_j x egress_usd_per_gb(data_location_j)   when job j started in a region other
                                                                    than data_location_j, else 0
Each run of a job moves its data once; jobs without a data location or size move nothing; a data
region without `regions.egress_usd_per_gb` is priced at $0/GB and said so in the notes.

A run whose [data] table turned on replicas, prefetch, compression or incremental sync has a
`transfers` table (engine.sim.processes.data_moves): then egress is what it moved for each started job,
moved_gb x the egress price of from_region, the replica copies a job triggered included (a job reading
a replica moves nothing; compression and incremental sync move less than data_size_gb).

A run with chains (engine.sim.processes.chains) also moves each handed-over checkpoint that crossed regions:
checkpoint_gb x the egress price of the predecessor's region, counted to the stage that received it.
"""
from __future__ import annotations

import pandas as pd

from engine.sim.output.result import SimulationResult


def per_job(result: SimulationResult, regions: pd.DataFrame,
            jobs: pd.DataFrame | None) -> tuple[pd.Series, list[str]]:
    """(job_id -> egress USD of every started job that ran away from its data, and of the checkpoints chains
    handed over between regions; notes on unpriced regions); an empty Series when nothing moved."""
    usd, notes = _data(result, regions, jobs)
    if result.chains is None:
        return usd, notes
    moved = result.chains[result.chains["ready_s"].notna() & (result.chains["from_region"] != result.chains["to_region"])
                          & (result.chains["checkpoint_gb"] > 0)]
    if moved.empty:
        return usd, notes
    handed, more = _priced(moved["job_id"].astype(str).to_numpy(object), moved["from_region"].astype("string"),
                           moved["checkpoint_gb"].to_numpy(float), regions)
    both = handed if usd.empty else pd.concat([usd, handed]).groupby(level=0).sum().rename("egress_usd")
    return both, sorted(set(notes) | set(more))


def _data(result: SimulationResult, regions: pd.DataFrame,
          jobs: pd.DataFrame | None) -> tuple[pd.Series, list[str]]:
    """per_job's egress of the jobs' input data."""
    ran = result.jobs.loc[result.jobs["started"], ["job_id", "region"]]
    empty = pd.Series(dtype=float, name="egress_usd")
    if result.transfers is not None:
        return _moved(result.transfers, set(ran["job_id"].astype(str)), regions)
    if jobs is None or "data_location" not in jobs or "data_size_gb" not in jobs or ran.empty:
        return empty, []
    data = jobs.assign(job_id=jobs["job_id"].astype(str)).drop_duplicates("job_id").set_index("job_id")
    key = ran["job_id"].astype(str)
    location = key.map(data["data_location"]).astype("string").str.strip()
    size = pd.to_numeric(key.map(data["data_size_gb"]), errors="coerce").fillna(0.0)
    moved = location.notna().to_numpy(bool) & (location.fillna("").to_numpy(object) != ran["region"].to_numpy(object)) \
        & (size.to_numpy(float) > 0)
    if not moved.any():
        return empty, []
    return _priced(key[moved].to_numpy(object), location[moved], size[moved].to_numpy(float), regions)


def _moved(transfers: pd.DataFrame, started: set[str], regions: pd.DataFrame) -> tuple[pd.Series, list[str]]:
    """Egress of a run's transfers table, for the started jobs."""
    rows = transfers[transfers["job_id"].astype(str).isin(started) & (transfers["moved_gb"] > 0)]
    if rows.empty:
        return pd.Series(dtype=float, name="egress_usd"), []
    return _priced(rows["job_id"].astype(str).to_numpy(object), rows["from_region"].astype("string"),
                   rows["moved_gb"].to_numpy(float), regions)


def per_gb(regions: pd.DataFrame) -> pd.Series:
    """region -> egress USD per GB leaving it (NaN: unknown)."""
    price = (regions.set_index(regions["region"].astype(str))["egress_usd_per_gb"]
             if "egress_usd_per_gb" in regions else pd.Series(dtype=float))
    return pd.to_numeric(price, errors="coerce")


def _priced(job_ids, source: pd.Series, gb, regions: pd.DataFrame) -> tuple[pd.Series, list[str]]:
    """(job_id -> USD of moving `gb` out of each `source` region, summed per job; notes on unpriced regions)."""
    price = source.map(per_gb(regions))
    unpriced = sorted(set(source[price.isna().to_numpy(bool)].astype(str)))
    notes = [f"egress from {', '.join(unpriced)} priced at $0/GB: no egress_usd_per_gb for them"] if unpriced else []
    usd = gb * price.fillna(0.0).to_numpy(float)
    return pd.Series(usd, index=job_ids, name="egress_usd").groupby(level=0).sum(), notes
