"""Fidelity: our reproductions of RLScheduler (SC'20), FGD (ATC'23) and the SC'15 backfilling experiment
(`backfill`, relative tolerance 0.5 %) against the published tables.

The published tables are `../shared/expected/*.csv` (see the README there). Each comparison row holds
the published value, ours, difference = ours - published, the tolerance and whether |difference| is
within it. Tolerances, from that README:
- RLScheduler: +-0.01 per sequence, for the average bounded slowdown and the utilization (0-1);
- FGD: the 10-seed mean GPU allocation ratio within +-0.7 points (BestFit, FGD, GpuPacking,
  GpuClustering) or +-1.0 (Random, DotProd). With n < 10 seeds the allowance grows by twice the extra
  sampling error of an n-seed mean against a 10-seed mean, 2 x std x sqrt(1/n - 1/10), std being the
  published seed spread at that level. The fragmentation metrics have no published tolerance: their
  rows carry NaN tolerance and `within` is missing (NA); they are shown for information.
The experiments themselves run in `rlscheduler` and `fgd`; this module only compares.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.service.experiments import backfill as sc15_backfill
from engine.service.experiments import fgd, rlscheduler
from engine.service.experiments.backfill_claim import COLUMNS as PREDICTION_COLUMNS
from engine.service.experiments.public_data import DEFAULT_SHARED

RLS_TOLERANCE = 0.01
RLS_METRICS = ("avg_bounded_slowdown", "utilization")
RLS_BACKFILLS = {"0": "none", "1": "compat"}               # the CSV's `backfilling` column -> our mode
RLS_NAMES = {"UNI": "UNICEP"}                               # the CSV's policy names -> ours
RLS_KEYS = ["policy", "backfill", "start", "metric"]
FGD_NAMES = {"01-Random": "random", "02-DotProd": "dotprod", "03-GpuClustering": "clustering",
             "04-GpuPacking": "packing", "05-BestFit": "bestfit", "06-FGD": "fgd"}
FGD_METRIC_NAMES = {"gpu_frag_amount_pct_of_cluster": "gpu_frag_amount_pct"}   # the CSV's metric names -> ours
FGD_TOLERANCE = {"random": 1.0, "dotprod": 1.0, "clustering": 0.7, "packing": 0.7, "bestfit": 0.7, "fgd": 0.7}
FGD_TOLERATED_METRIC = "gpu_alloc_ratio_pct"
FGD_KEYS = ["policy", "metric", "arrived_pct"]
FGD_ORDER_LEVELS = (100, 110, 120, 130)
FGD_PUBLISHED = ["published", "published_std", "published_min", "published_max"]


@dataclass(frozen=True)
class Inputs:
    """Where the traces and the published tables are; `missing()` lists the absent files."""

    lublin_1: Path
    openb_nodes: Path
    openb_pods: Path
    rlscheduler_published: Path
    fgd_published: Path
    hpc2n: Path

    @classmethod
    def under(cls, shared: str | Path = DEFAULT_SHARED) -> Inputs:
        """The standard layout of a `shared` folder holding `traces/` and `expected/`."""
        shared = Path(shared)
        openb = shared / "traces" / "alibaba-openb"
        return cls(shared / "traces" / "swf" / "lublin_256.swf", openb / "openb_node_list_gpu_node.csv",
                   openb / "openb_pod_list_default.csv", shared / "expected" / "rlscheduler_lublin1_published.csv",
                   shared / "expected" / "fgd_default_published.csv",
                   shared / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz")

    def missing(self, *names: str) -> list[Path]:
        """The files among `names` (all when none given) that do not exist."""
        paths = [getattr(self, n) for n in (names or self.__dataclass_fields__)]
        return [p for p in paths if not p.is_file()]


# --- RLScheduler ---------------------------------------------------------------------------------

def published_rlscheduler(path: str | Path) -> pd.DataFrame:
    """policy, backfill, start, metric, published: the per-sequence rows of the published CSV."""
    frame = pd.read_csv(path, dtype={"backfilling": str, "iteration": str})
    frame = frame[frame["iteration"] != "MEAN"]
    out = pd.DataFrame({
        "policy": frame["policy"].replace(RLS_NAMES), "backfill": frame["backfilling"].map(RLS_BACKFILLS),
        "start": frame["start_index"].astype(int), "metric": frame["metric"], "published": frame["value"]})
    return _sorted(out, RLS_KEYS, {"policy": list(rlscheduler.POLICIES), "backfill": list(RLS_BACKFILLS.values()),
                                   "metric": list(RLS_METRICS)})


def run_rlscheduler(trace: str | Path, runs) -> dict[tuple[str, str], dict]:
    """{(policy, backfill): rlscheduler.run_experiment's JSON} over the published sequences of `trace`."""
    from engine.service.experiments.swf_jobs import load_swf_jobs
    jobs = load_swf_jobs(trace)
    return {(policy, backfill): rlscheduler.run_experiment(jobs, policy, backfill) for policy, backfill in runs}


def compare_rlscheduler(published: pd.DataFrame, results: dict[tuple[str, str], dict]) -> pd.DataFrame:
    """One row per (policy, backfill, sequence start, metric) of the runs in `results`: published, ours,
    difference, tolerance, within. `published` has the columns of `published_rlscheduler`."""
    ours = pd.DataFrame([
        {"policy": policy, "backfill": backfill, "start": s["start"], "metric": m, "ours": s[m]}
        for (policy, backfill), result in results.items() for s in result["sequences"] for m in RLS_METRICS])
    return rlscheduler_rows(published, ours)


def rlscheduler_rows(published: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """The comparison rows of `ours` (RLS_KEYS + ours) against `published` (RLS_KEYS + published)."""
    rows = published[RLS_KEYS + ["published"]].merge(ours[RLS_KEYS + ["ours"]], on=RLS_KEYS, how="inner",
                                                     validate="1:1")
    rows["difference"] = rows["ours"] - rows["published"]
    rows["tolerance"] = RLS_TOLERANCE
    rows["within"] = (rows["difference"].abs() <= rows["tolerance"]).astype("boolean")
    return rows.reset_index(drop=True)


def rlscheduler_runs(rows: pd.DataFrame) -> pd.DataFrame:
    """policy, backfill, start, within: one row per replayed sequence, within when every metric is."""
    return rows.groupby(["policy", "backfill", "start"], sort=False, as_index=False)["within"].all()


# --- FGD -----------------------------------------------------------------------------------------

def published_fgd(path: str | Path) -> pd.DataFrame:
    """policy, metric, arrived_pct, published, published_std, published_min, published_max (10-seed)."""
    frame = pd.read_csv(path)
    out = pd.DataFrame({
        "policy": frame["policy"].map(FGD_NAMES), "metric": frame["metric"].replace(FGD_METRIC_NAMES),
        "arrived_pct": frame["arrived_gpu_request_pct"].astype(int), "published": frame["mean"],
        "published_std": frame["std"], "published_min": frame["min"], "published_max": frame["max"]})
    return _sorted(out, FGD_KEYS, {"policy": list(fgd.POLICIES), "metric": list(fgd.METRICS)})


def run_fgd(nodes: str | Path, pods: str | Path, policies, seeds=fgd.SEEDS, workers: int = 1) -> dict[str, dict]:
    """{policy: fgd.run_experiment's result} on the openb node and pod lists."""
    from engine.service.experiments.openb_inputs import load_nodes, load_pods
    node_frame, pod_list = load_nodes(nodes), load_pods(pods)
    return {p: fgd.run_experiment(node_frame, pod_list, p, tuple(seeds), workers=workers) for p in policies}


def fgd_tolerance(policy: str, std: float, n_seeds: int) -> float:
    """The allowance of an n-seed mean GPU allocation ratio (points) against the published 10-seed mean."""
    return FGD_TOLERANCE[policy] + 2 * std * math.sqrt(max(1 / n_seeds - 1 / 10, 0.0))


def compare_fgd(published: pd.DataFrame, results: dict[str, dict], n_seeds: int) -> pd.DataFrame:
    """One row per (policy, metric, arrived %) of the policies in `results` (seed means over `n_seeds`
    seeds): published, ours, difference, tolerance (NaN where none is published), within (NA there)."""
    ours = pd.DataFrame([
        {"policy": policy, "metric": m, "arrived_pct": int(k), "ours": v}
        for policy, result in results.items() for m in fgd.METRICS for k, v in result[m].items()])
    return fgd_rows(published, ours, n_seeds)


def fgd_rows(published: pd.DataFrame, ours: pd.DataFrame, n_seeds: int) -> pd.DataFrame:
    """The comparison rows of `ours` (FGD_KEYS + ours, means of `n_seeds` seeds) against `published`
    (the columns of `published_fgd`)."""
    rows = published[FGD_KEYS + FGD_PUBLISHED].merge(ours[FGD_KEYS + ["ours"]], on=FGD_KEYS, how="inner",
                                                     validate="1:1")
    rows["difference"] = rows["ours"] - rows["published"]
    rows["tolerance"] = [fgd_tolerance(p, s, n_seeds) if m == FGD_TOLERATED_METRIC else np.nan
                         for p, m, s in zip(rows["policy"], rows["metric"], rows["published_std"])]
    within = rows["difference"].abs() <= rows["tolerance"]
    rows["within"] = within.astype("boolean").mask(rows["tolerance"].isna())
    rows["n_seeds"] = n_seeds
    return rows.reset_index(drop=True)


def fgd_order_holds(rows: pd.DataFrame, column: str = "ours") -> bool:
    """FGD > BestFit >= GpuPacking ~ GpuClustering (within 1 point) > DotProd > Random, in the GPU
    allocation ratio at every level from 100 % arrived on (the published order)."""
    alloc = rows[rows["metric"] == FGD_TOLERATED_METRIC].pivot(index="arrived_pct", columns="policy", values=column)
    if set(fgd.POLICIES) - set(alloc.columns) or alloc.reindex(FGD_ORDER_LEVELS).isna().any().any():
        return False
    for _, a in alloc.loc[list(FGD_ORDER_LEVELS)].iterrows():
        shared = (a["packing"], a["clustering"])
        if not (a["fgd"] > a["bestfit"] >= max(shared) and abs(shared[0] - shared[1]) < 1.0
                and min(shared) > a["dotprod"] > a["random"]):
            return False
    return True


# --- Summary -------------------------------------------------------------------------------------

def summary(rls_rows: pd.DataFrame, fgd_rows: pd.DataFrame) -> pd.DataFrame:
    """Per experiment: runs compared and within tolerance (RLScheduler: sequence replays; FGD: the
    tolerated allocation-ratio points), rows and rows within (rows without a tolerance excluded),
    the largest |difference| over the tolerated rows and over all, and whether the published FGD
    policy order holds (NA for RLScheduler)."""
    runs = rlscheduler_runs(rls_rows)
    tolerated = fgd_rows[fgd_rows["tolerance"].notna()]
    return pd.DataFrame([
        {"experiment": "rlscheduler", "runs": len(runs), "runs_within": int(runs["within"].sum()),
         "rows": len(rls_rows), "rows_within": int(rls_rows["within"].sum()),
         "max_abs_difference": _max_abs(rls_rows), "max_abs_difference_all": _max_abs(rls_rows),
         "order_holds": pd.NA},
        {"experiment": "fgd", "runs": len(tolerated), "runs_within": int(tolerated["within"].sum()),
         "rows": len(tolerated), "rows_within": int(tolerated["within"].sum()),
         "max_abs_difference": _max_abs(tolerated), "max_abs_difference_all": _max_abs(fgd_rows),
         "order_holds": fgd_order_holds(fgd_rows) if len(fgd_rows) else pd.NA},
    ])


# --- The committed record ------------------------------------------------------------------------

RECORD = Path(__file__).with_name("fidelity_record.json")
_RLS_STORED = RLS_KEYS + ["published", "ours"]
_FGD_STORED = FGD_KEYS + FGD_PUBLISHED + ["ours"]


# --- Evolved orders (issue 23's anchors) -----------------------------------------------------------

EVOLVED_ANCHORS = (("lublin_1", "compat", "SJF"), ("hpc2n", "none", "F1"), ("hpc2n", "compat", "F1"))
EVOLVED_COLUMNS = ["log", "backfill", "evolved", "F1", "SJF", "published_F1", "published_SJF", "rival",
                   "beats_rival", "trials", "train", "simulations", "seconds", "weights"]


def run_evolved(inputs: Inputs, trials: int = 200, train: int = 10, seed: int = 0) -> pd.DataFrame:
    """Each anchor: the linear order evolved on training sequences and replayed on the ten test
    sequences, beside F1 and SJF replayed in the same run and the published figures; `rival` is the
    published heuristic it must beat there."""
    from engine.service.experiments.rlscheduler_evolve import evolve, published
    from engine.service.experiments.swf_jobs import load_swf_jobs

    rows = []
    for name, backfill, rival in EVOLVED_ANCHORS:
        jobs = load_swf_jobs(getattr(inputs, name))
        result = evolve(jobs, backfill, trials=trials, train=train, seed=seed)
        figures = published(jobs.source, backfill)
        rows.append({"log": jobs.source, "backfill": backfill, "evolved": result.mean("evolved"),
                     "F1": result.mean("F1"), "SJF": result.mean("SJF"), "published_F1": figures.get("F1"),
                     "published_SJF": figures.get("SJF"), "rival": rival,
                     "beats_rival": bool(result.mean("evolved") < figures[rival]), "trials": trials, "train": train,
                     "simulations": result.simulations, "seconds": round(result.elapsed_s, 1),
                     "weights": json.dumps({k: round(v, 4) for k, v in result.weights.items()})})
    return pd.DataFrame(rows, columns=EVOLVED_COLUMNS)


# --- The committed record ------------------------------------------------------------------------

@dataclass(frozen=True)
class Record:
    """A recorded full comparison: `meta` (created_utc, command, commit, dirty, fgd_seeds, ...), the
    comparison rows of both experiments, as `compare_rlscheduler` and `compare_fgd` return them, and
    the evolved orders' anchors (`run_evolved`; empty in records made before them)."""

    meta: dict
    rlscheduler: pd.DataFrame
    fgd: pd.DataFrame
    evolved: pd.DataFrame | None = None
    backfill: pd.DataFrame | None = None   # the SC'15 experiment (backfill_record); absent in older records
    prediction: pd.DataFrame | None = None  # the runtime-prediction claim per log (backfill_claim); ditto

    def to_json(self) -> dict:
        """Only the stored columns; the differences, tolerances and verdicts are recomputed on load."""
        doc = {**self.meta,
               "rlscheduler": _table(self.rlscheduler[_RLS_STORED]), "fgd": _table(self.fgd[_FGD_STORED])}
        if self.evolved is not None and len(self.evolved):
            doc["evolved"] = _table(self.evolved[EVOLVED_COLUMNS])
        if self.backfill is not None and len(self.backfill):
            doc["backfill"] = _table(self.backfill[sc15_backfill.RECORD_COLUMNS])
        if self.prediction is not None and len(self.prediction):
            doc["prediction"] = _table(self.prediction[PREDICTION_COLUMNS])
        return doc

    @classmethod
    def from_json(cls, doc: dict) -> Record:
        meta = {k: v for k, v in doc.items() if k not in ("rlscheduler", "fgd", "evolved", "backfill", "prediction")}
        rls = pd.DataFrame(doc["rlscheduler"]["data"], columns=doc["rlscheduler"]["columns"])
        fgd_ = pd.DataFrame(doc["fgd"]["data"], columns=doc["fgd"]["columns"])
        evolved = doc.get("evolved", {"data": [], "columns": EVOLVED_COLUMNS})
        bf = doc.get("backfill", {"data": [], "columns": sc15_backfill.RECORD_COLUMNS})
        pred = doc.get("prediction", {"data": [], "columns": PREDICTION_COLUMNS})
        return cls(meta, rlscheduler_rows(rls, rls), fgd_rows(fgd_, fgd_, len(meta["fgd_seeds"])),
                   pd.DataFrame(evolved["data"], columns=evolved["columns"]),
                   sc15_backfill.compare(pd.DataFrame(bf["data"], columns=bf["columns"])),
                   pd.DataFrame(pred["data"], columns=pred["columns"]))


def load_record(path: str | Path = RECORD) -> Record:
    """The record written by benchmarks/fidelity_record.py."""
    return Record.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def _table(frame: pd.DataFrame) -> dict:
    return {"columns": list(frame.columns),
            "data": [[v.item() if isinstance(v, np.generic) else v for v in row]
                     for row in frame.itertuples(index=False)]}


def _max_abs(rows: pd.DataFrame) -> float:
    return float(rows["difference"].abs().max()) if len(rows) else math.nan


def _sorted(frame: pd.DataFrame, keys: list[str], orders: dict[str, list[str]]) -> pd.DataFrame:
    """Rows in the published order of policies and metrics, then by the remaining keys."""
    rank = {c: frame[c].map({v: i for i, v in enumerate(order)}) for c, order in orders.items()}
    ranked = frame.assign(**{f"_{c}": r for c, r in rank.items()})
    by = [f"_{k}" if k in orders else k for k in keys]
    return ranked.sort_values(by, kind="stable").drop(columns=[f"_{c}" for c in orders]).reset_index(drop=True)
