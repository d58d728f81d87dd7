"""A serial fraction per workload class, fitted from jobs of the same work that ran at different GPU counts
(issue 27, item 4: "a scaling model per class, fitted where the telemetry allows, Amdahl-style defaults
otherwise"), for `[elastic_scaling] model = "fitted"` (engine.world.elastic).

Model. Jobs of one *group* are taken to do the same work: in a jobs table, the jobs of one project and
workload class (a group with one GPU count says nothing and is dropped); in an SWF log, one user's runs of
one executable. By Amdahl's law a job of group g on n GPUs runs T_g x (s + (1 - s) / n), T_g the group's
one-GPU time and s the class's serial fraction. Equivalently runtime x n = T_g (1 - s) + T_g s n: the
runtime x GPUs of a group is a line in n whose slope over its height at n = 1 is s. The fit is least squares
on log runtime: for a given s each group's log T_g is its mean of log runtime - log(s + (1 - s) / n) (so
groups of any length pool), and s minimises the sum of squared residuals over [0, 1] (a grid of 101 points,
then scipy.optimize.minimize_scalar, bounded, around the best). Its standard error is that of a one-parameter
least-squares fit: sqrt(RSS / (N - G - 1) / sum J^2), J the residuals' derivative in s with the groups'
times profiled out (N jobs, G groups); it is NaN with no residual degrees of freedom.

Minimum-sample rule: a class is fitted when it has at least `MIN_GROUPS` groups at two or more GPU counts
and `MIN_JOBS` jobs in them; otherwise it keeps the configured (Amdahl default) fraction, and `SerialFit`
says why. Only completed jobs with a start and an end, GPUs > 0 and a positive runtime count.

Caveat: a group's jobs may not do the same work (a bigger run often gets a bigger problem: weak scaling),
which biases s upwards; and a sample whose runtimes were drawn independently of size fits s near 1 (no
speed-up), because that is what such data says.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from engine.core.vocabulary import WORKLOAD_CLASSES
from engine.world.elastic import ElasticScaling

MIN_GROUPS = 5   # groups at two or more GPU counts a class needs to be fitted
MIN_JOBS = 30    # jobs in those groups
_GRID = np.linspace(0.0, 1.0, 101)


@dataclass(frozen=True)
class SerialFit:
    """One class's fit: the fraction used (`serial_fraction`), whether it was fitted (else the `default`), the
    fitted value and its standard error (NaN when not fitted), the groups and jobs behind it, the RMS
    residual of log runtime, and a note saying why it fell back."""

    workload_class: str
    serial_fraction: float
    fitted: bool
    estimate: float
    std_error: float
    groups: int
    jobs: int
    rms_log: float
    default: float
    note: str = ""


def fit_serial_fraction(group: np.ndarray, gpus: np.ndarray, runtime_s: np.ndarray) -> dict:
    """{estimate, std_error, groups, jobs, rms_log} of the least-squares fit (module docstring) on the
    jobs given (group labels, GPUs, runtimes); groups at one GPU count and bad rows are dropped first.
    `estimate` is NaN when no group is left."""
    from scipy.optimize import minimize_scalar  # about 0.4 s to import: only a fitted run needs it

    keep = np.isfinite(gpus) & (gpus > 0) & np.isfinite(runtime_s) & (runtime_s > 0)
    codes = pd.factorize(pd.Series(np.asarray(group, dtype=object)[keep]))[0]
    n, y = gpus[keep].astype(np.float64), np.log(runtime_s[keep].astype(np.float64))
    sizes = pd.Series(n).groupby(codes).nunique().to_numpy()
    varied = np.isin(codes, np.flatnonzero(sizes > 1))
    codes, n, y = pd.factorize(codes[varied])[0], n[varied], y[varied]
    groups = int(codes.max()) + 1 if len(codes) else 0
    if not groups:
        return {"estimate": float("nan"), "std_error": float("nan"), "groups": 0, "jobs": 0, "rms_log": float("nan")}
    count = np.bincount(codes, minlength=groups)

    def centred(values: np.ndarray) -> np.ndarray:
        return values - (np.bincount(codes, values, groups) / count)[codes]

    yc = centred(y)

    def rss(s: float) -> float:
        return float(np.square(yc - centred(np.log(s + (1.0 - s) / n))).sum())

    best = _GRID[int(np.argmin([rss(s) for s in _GRID]))]
    low, high = max(0.0, best - 0.01), min(1.0, best + 0.01)
    found = minimize_scalar(rss, bounds=(low, high), method="bounded", options={"xatol": 1e-6})
    s = float(found.x) if found.fun <= rss(best) else float(best)
    slope = centred((1.0 - 1.0 / n) / (s + (1.0 - s) / n))
    freedom = len(n) - groups - 1
    error = float(np.sqrt(rss(s) / freedom / np.square(slope).sum())) if freedom > 0 and slope.any() else float("nan")
    return {"estimate": s, "std_error": error, "groups": groups, "jobs": int(len(n)),
            "rms_log": float(np.sqrt(rss(s) / len(n)))}


def class_fits(jobs: pd.DataFrame, defaults: ElasticScaling = ElasticScaling()) -> list[SerialFit]:
    """Per workload class (every class of the vocabulary), its fit on `jobs` (a jobs table: groups of one
    project and class) or the default of `defaults` when the minimum-sample rule fails."""
    done = (jobs["status"] == "completed").to_numpy() if "status" in jobs else np.ones(len(jobs), bool)
    runtime = (pd.to_datetime(jobs["end_utc"]) - pd.to_datetime(jobs["start_utc"])).dt.total_seconds()
    runtime = runtime.to_numpy(np.float64, na_value=np.nan)
    gpus = pd.to_numeric(jobs["gpus"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    project = jobs["project"].astype(object).where(jobs["project"].notna(), "") if "project" in jobs \
        else pd.Series("", index=jobs.index, dtype=object)
    kind = jobs["workload_class"].astype(object).where(jobs["workload_class"].notna(), "unknown").to_numpy()
    out = []
    for name in WORKLOAD_CLASSES:
        mine = done & (kind == name)
        fit = fit_serial_fraction(project.to_numpy()[mine], gpus[mine], runtime[mine])
        out.append(judged(name, fit, defaults.serial_fraction(name)))
    return out


def judged(workload_class: str, fit: dict, default: float) -> SerialFit:
    """`fit` (fit_serial_fraction's) under the minimum-sample rule: fitted, or the default with a note."""
    enough = fit["groups"] >= MIN_GROUPS and fit["jobs"] >= MIN_JOBS
    note = "" if enough else (f"{fit['groups']} group(s) at two or more GPU counts and {fit['jobs']} job(s) in them; "
                              f"the fit needs {MIN_GROUPS} and {MIN_JOBS}")
    return SerialFit(workload_class, fit["estimate"] if enough else default, enough, fit["estimate"],
                     fit["std_error"], fit["groups"], fit["jobs"], fit["rms_log"], default, note)


def fitted_scaling(settings: ElasticScaling, jobs: pd.DataFrame, cut: pd.Timestamp | None = None) -> ElasticScaling:
    """`settings` (model "fitted") with each class's fitted fraction where the rule allows, learnt from the
    jobs that ended before `cut` (None: every job of `jobs`); the configured fractions elsewhere."""
    if cut is not None and len(jobs):
        jobs = jobs[(pd.to_datetime(jobs["end_utc"]) < cut).to_numpy()]
    fits = class_fits(jobs, settings)
    return replace(settings, fitted=tuple((f.workload_class, f.serial_fraction) for f in fits if f.fitted))
