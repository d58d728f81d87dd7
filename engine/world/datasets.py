"""Datasets as first-class objects: which dataset each job reads, and the datasets table.

A job names its dataset in a `dataset` column. A log without one (the sample, every importer's output)
gets a derived name: the job's project and the region holding its input data, `project@data_location`
(the job's id stands in for a missing project). On the sample that makes each HPO sweep one dataset
(its 100-400 trials read the same data), each team's nightly ETL pipeline and ad-hoc batch one dataset
per data lake, and each training run its own. A job without a data location or with no data
(`data_size_gb` 0 or missing) reads no dataset.

The datasets table (`table`): dataset, size_gb (the most any of its jobs reads: a job reads its own
`data_size_gb` of it), home_region (where it lives: its jobs' data_location), jobs (how many read it)
and replicas (the regions holding a copy, joined by ";": "" until a run replicates it; a run's result
has them, engine.sim.cycle.data_moves).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["dataset", "size_gb", "home_region", "jobs", "replicas"]


def dataset_ids(jobs: pd.DataFrame) -> np.ndarray:
    """The dataset each job reads (object array; None for a job without input data)."""
    n = len(jobs)
    location = _text(jobs, "data_location")
    size = pd.to_numeric(jobs["data_size_gb"], errors="coerce").fillna(0.0).to_numpy(np.float64) \
        if "data_size_gb" in jobs else np.zeros(n)
    named = _text(jobs, "dataset")
    project = _text(jobs, "project")
    owner = np.where(project != "", project, _text(jobs, "job_id"))
    derived = np.char.add(np.char.add(owner.astype(str), "@"), location.astype(str)).astype(object)
    ids = np.where(named != "", named, derived).astype(object)
    ids[(location == "") | (size <= 0)] = None
    return ids


def of_workload(w) -> tuple[np.ndarray, pd.DataFrame]:
    """(`dataset_ids`, `table`) of a simulator workload's jobs (engine.sim.state.workload)."""
    frame = pd.DataFrame({"job_id": w.job_id, "project": w.project, "data_location": w.data_location,
                          "data_size_gb": w.data_size_gb, **({"dataset": w.dataset} if w.dataset is not None else {})})
    return dataset_ids(frame), table(frame)


def table(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset the jobs read (COLUMNS), sorted by dataset; replicas "" (none yet)."""
    ids = dataset_ids(jobs)
    read = ids != None  # noqa: E711 (elementwise on an object array)
    if not read.any():
        return pd.DataFrame(columns=COLUMNS)
    frame = pd.DataFrame({"dataset": ids[read], "home_region": _text(jobs, "data_location")[read],
                          "size_gb": pd.to_numeric(jobs["data_size_gb"], errors="coerce").to_numpy(np.float64)[read]})
    out = frame.groupby("dataset", sort=True).agg(size_gb=("size_gb", "max"), home_region=("home_region", "first"),
                                                  jobs=("size_gb", "size")).reset_index()
    return out.assign(replicas="")[COLUMNS]


def _text(jobs: pd.DataFrame, name: str) -> np.ndarray:
    """A column as stripped text ("" for missing or absent)."""
    if name not in jobs:
        return np.full(len(jobs), "", object)
    return jobs[name].astype("string").str.strip().fillna("").to_numpy(object)
