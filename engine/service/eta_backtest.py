"""Backtest of the wait-time ETA (engine.service.eta) against the starts the telemetry recorded.

`backtest(jobs, fleet)`: jobs are split by submit time (engine.predict.evaluate.TimeSplit, 70 %
training); the runtime model is fitted once on the training jobs that had ended by the cutoff, and
`snapshots` instants are drawn (seeded, uniform) from [cutoff, last submit - margin], the margin
being the 99th percentile of the training jobs' waits, so that most jobs pending at a snapshot
started before the data ends. At each instant the ETA is computed as a live query would (the queue
as known then; features are computed once over the whole table since each job's features only use
jobs that had ended by its submit, engine.predict.features), and every pending job that did start
in the telemetry is scored on its remaining wait from the instant (jobs that never started, i.e.
cancelled or still pending at the data's end, are counted, not scored).

Calibration is split-conformal and time-ordered: the first `calibration_share` of the snapshots
(by time) fit a `Calibration` (one-sided conformal offsets of each bound at (1 + level) / 2, with
the finite-sample rank ceil((n + 1) q), and the median offset of the point, all on the scale
ln(remaining wait + 60 s)) and a `LearnedCorrection` (quantile gradient boosting from the replay's
interval and the queue's shape to the actual wait, fitted on the first two thirds of the calibration
snapshots, its bounds given conformal offsets on the last third); every figure reported is measured
on the later snapshots only, raw, calibrated and learned alike. A job pending over several snapshots
is scored at each (as a user asking again).

`learn_correction(jobs, fleet, at)` fits the learned correction a live query at `at` uses: the same
snapshots over the history known at `at` (engine.service.eta.known_at; jobs still pending then are
not scored), all of them fitting.

The naive baseline is "the median wait of recent jobs of the same size", given the wait so far: of
the jobs that started in the `RECENT_DAYS` before the instant and had waited longer than this job
has (same GPU power-of-two bucket; all sizes when fewer than `MIN_RECENT`), the median of their
waits less this job's wait so far; its interval from the same quantiles as the ETA's (0 when no
recent job waited that long).

Figures (test snapshots): coverage (share of scored jobs whose actual start lies in the interval),
width_h (median interval width, hours, over jobs the replay starts; an upper bound of +inf counts as
+inf), male (mean absolute
error of ln(remaining wait + 60 s), point vs actual), never_fits (jobs the replay never started), for
raw, calibrated, learned (None below `MIN_LEARNING_ROWS` calibration rows) and baseline; plus seconds
per query. Deterministic for a seed.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.predict.evaluate import TRAIN_SHARE, TimeSplit
from engine.predict.features import features, runtime_s, seconds
from engine.predict.quantile_models import fit_quantiles, predict_quantiles
from engine.predict.runtime import RuntimeModel, RuntimeSettings
from engine.scenario.spec import Scenario
from engine.service.eta import LEVEL, SAMPLES, WAIT_SCALE_S, Calibration, eta_table, known_at, queue_at, replay

SNAPSHOTS = 40
CALIBRATION_SHARE = 0.5
RECENT_DAYS = 7.0
MIN_RECENT = 10


def backtest(jobs: pd.DataFrame, fleet: pd.DataFrame, scenario: Scenario | None = None, samples: int = SAMPLES,
             seed: int = 0, level: float = LEVEL, snapshots: int = SNAPSHOTS, train_share: float = TRAIN_SHARE,
             calibration_share: float = CALIBRATION_SHARE, tz=None,
             settings: RuntimeSettings = RuntimeSettings()) -> dict:
    """The ETA's backtest report (JSON-ready dict; see the module docstring). `settings`: the runtime
    model's, fitted on the training part."""
    rows, elapsed, split, margin = snapshot_rows(jobs, fleet, scenario, samples, seed, level, snapshots,
                                                 train_share, tz, settings)
    n_cal = int(math.ceil(snapshots * calibration_share))
    calibrating = rows["snapshot"].to_numpy() < n_cal
    calibration = fit_calibration(rows[calibrating], level)
    learned = LearnedCorrection.fit(rows[calibrating], level, seed) \
        if calibrating.sum() >= MIN_LEARNING_ROWS else None
    test = rows[~calibrating]
    return {
        "cutoff_utc": split.cutoff_utc, "level": level, "samples": samples, "seed": seed,
        "snapshots": snapshots, "calibration_snapshots": n_cal, "margin_h": margin / 3600.0,
        "jobs_calibration": int(calibrating.sum()), "jobs_scored": int(len(test)),
        "distinct_jobs_scored": int(test["job_id"].nunique()),
        "jobs_never_started": int(rows.attrs["never_started"]),
        "seconds_per_query": float(np.mean(elapsed)) if len(elapsed) else 0.0,
        "calibration": {"lo_shift": calibration.lo_shift, "p50_shift": calibration.p50_shift,
                        "hi_shift": calibration.hi_shift},
        "raw": interval_metrics(test),
        "calibrated": interval_metrics(_moved(test, calibration)),
        "learned": interval_metrics(_moved(test, learned)) if learned is not None else None,
        "baseline": interval_metrics(test.assign(lo_s=test["base_lo_s"], p50_s=test["base_p50_s"],
                                                 hi_s=test["base_hi_s"])),
        "raw_calibration_period": interval_metrics(rows[calibrating]),
    }


def learn_correction(jobs: pd.DataFrame, fleet: pd.DataFrame, at_utc, scenario: Scenario | None = None,
                     samples: int = SAMPLES, seed: int = 0, level: float = LEVEL, snapshots: int = SNAPSHOTS,
                     train_share: float = TRAIN_SHARE, tz=None,
                     settings: RuntimeSettings = RuntimeSettings()) -> LearnedCorrection:
    """A `LearnedCorrection` for live queries at `at_utc`, learned from the history known then
    (engine.service.eta.known_at): the backtest's snapshots over its last 1 - `train_share`, every
    one of them fitting (no test part). ValueError below `MIN_LEARNING_ROWS` scored rows."""
    rows = snapshot_rows(known_at(jobs, at_utc), fleet, scenario, samples, seed, level, snapshots, train_share,
                         tz, settings)[0]
    if len(rows) < MIN_LEARNING_ROWS:
        raise ValueError(f"a learned ETA correction needs at least {MIN_LEARNING_ROWS} pending jobs that started, "
                         f"over {snapshots} past snapshots; found {len(rows)}")
    return LearnedCorrection.fit(rows, level, seed)


def snapshot_rows(jobs: pd.DataFrame, fleet: pd.DataFrame, scenario: Scenario | None, samples: int, seed: int,
                  level: float, snapshots: int, train_share: float, tz, settings: RuntimeSettings) -> tuple:
    """The scored rows of the backtest's snapshots (`score_snapshots`), the query times, the
    TimeSplit and the margin (s): the runtime model fitted on the training part, the instants drawn."""
    split = TimeSplit.of(jobs, train_share)
    X, run = features(jobs, tz), runtime_s(jobs)
    train = split.train & np.isfinite(run)
    end, submit = seconds(jobs["end_utc"]), seconds(jobs["submit_utc"])
    model = RuntimeModel(settings).fit(X[train], run[train], end[train])
    quantiles = model.predict_tracked(X, run, end, submit)   # each job's interval as known at its submit
    waits = seconds(jobs["start_utc"]) - seconds(jobs["submit_utc"])
    margin = float(np.nanquantile(waits[split.train], 0.99)) if np.isfinite(waits[split.train]).any() else 0.0
    last = float(np.nanmax(seconds(jobs["submit_utc"]))) - margin
    rng = np.random.default_rng(seed)
    instants = np.sort(rng.uniform(split.cutoff_s, max(last, split.cutoff_s), snapshots))
    rows, elapsed = score_snapshots(jobs, quantiles, fleet, instants, scenario, samples, seed, level)
    return rows, elapsed, split, margin


def _moved(rows: pd.DataFrame, correction) -> pd.DataFrame:
    """`rows` with lo_s, p50_s, hi_s replaced by the correction's."""
    lo, p50, hi = correction.adjust(rows) if len(rows) else (np.zeros(0),) * 3
    return rows.assign(lo_s=lo, p50_s=p50, hi_s=hi)


def score_snapshots(jobs: pd.DataFrame, quantiles: pd.DataFrame, fleet: pd.DataFrame, instants: np.ndarray,
                    scenario: Scenario | None, samples: int, seed: int, level: float) -> tuple[pd.DataFrame, list]:
    """One row per (snapshot, pending job that started in `jobs`): snapshot (its rank), the raw ETA
    row (engine.service.eta.eta_table), actual_s, lo_s, p50_s, hi_s (raw ETA) and base_lo_s,
    base_p50_s, base_hi_s (remaining waits, s after the instant); attrs["never_started"] counts the
    pending jobs left out. Also the wall time of each query."""
    start_all = pd.to_datetime(jobs["start_utc"])
    frames, elapsed, never = [], [], 0
    for k, instant in enumerate(instants):
        at = pd.Timestamp(round(float(instant)), unit="s")
        began = time.perf_counter()
        queue = queue_at(jobs, at)
        frame = eta_table(queue, replay(queue, quantiles, fleet, scenario, samples, seed + k), quantiles, level)
        elapsed.append(time.perf_counter() - began)
        pending = queue.pending
        actual = (start_all.loc[pending.index] - at).dt.total_seconds().to_numpy(np.float64)
        base = baseline_waits(jobs, at, pending, frame["waited_s"].to_numpy(), level)
        frame = frame.assign(snapshot=k, actual_s=actual, lo_s=frame["wait_lo_s"], p50_s=frame["wait_p50_s"],
                             hi_s=frame["wait_hi_s"], base_lo_s=base[0], base_p50_s=base[1], base_hi_s=base[2])
        started = np.isfinite(actual)
        never += int((~started).sum())
        frames.append(frame[started])
    rows = pd.concat(frames, ignore_index=True)
    rows.attrs["never_started"] = never
    return rows, elapsed


def baseline_waits(jobs: pd.DataFrame, at: pd.Timestamp, pending: pd.DataFrame, waited: np.ndarray,
                   level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The naive baseline's remaining waits (lo, p50, hi; s) for `pending` at `at` (module docstring)."""
    start = pd.to_datetime(jobs["start_utc"])
    recent = ((start <= at) & (start > at - pd.Timedelta(days=RECENT_DAYS))).to_numpy()
    wait = (start[recent] - pd.to_datetime(jobs["submit_utc"])[recent]).dt.total_seconds().to_numpy(np.float64)
    bucket, mine = _size_bucket(jobs["gpus"][recent]), _size_bucket(pending["gpus"])
    probs = [(1 - level) / 2, 0.5, (1 + level) / 2]
    out = np.zeros((3, len(pending)))
    for i, (b, done) in enumerate(zip(mine, waited)):
        longer = wait > done
        same = wait[longer & (bucket == b)]
        pool = same if len(same) >= MIN_RECENT else wait[longer]
        if len(pool):
            out[:, i] = np.quantile(pool, probs) - done
    return out[0], out[1], out[2]


def _size_bucket(gpus: pd.Series) -> np.ndarray:
    """ceil(log2(GPUs)), 0 for one GPU or less."""
    value = pd.to_numeric(gpus, errors="coerce").fillna(1.0).to_numpy(np.float64)
    return np.ceil(np.log2(np.maximum(value, 1.0))).astype(np.int64)


def log_wait(wait_s) -> np.ndarray:
    """ln(remaining wait + 60 s), +inf for +inf."""
    return np.log(np.asarray(wait_s, np.float64) + WAIT_SCALE_S)


def fit_calibration(rows: pd.DataFrame, level: float = LEVEL) -> Calibration:
    """Split-conformal offsets from scored rows (actual_s, lo_s, p50_s, hi_s); rows whose point is
    +inf (never fits) are left out; no rows: no offsets."""
    rows = rows[np.isfinite(rows["p50_s"].to_numpy(np.float64))]
    if not len(rows):
        return Calibration()
    y = log_wait(rows["actual_s"])
    q = (1 + level) / 2
    rank = min(math.ceil((len(rows) + 1) * q) / len(rows), 1.0)
    low = np.quantile(log_wait(rows["lo_s"]) - y, rank, method="inverted_cdf")
    high = np.quantile(y - log_wait(rows["hi_s"]), rank, method="inverted_cdf")
    high = high if np.isfinite(high) else 0.0
    return Calibration(float(low), float(np.median(y - log_wait(rows["p50_s"]))), float(high))


CORRECTION_FEATURES = ("log_lo", "log_p50", "log_hi", "log_waited", "log_gpus", "log_request", "log_runtime",
                       "jobs_ahead", "gpus_ahead", "queue_length", "user_jobs_ahead", "user_running")
FIT_SHARE = 2 / 3
MIN_LEARNING_ROWS = 100  # calibration rows the learned correction needs (fewer: none is fitted)


def correction_features(table: pd.DataFrame) -> pd.DataFrame:
    """The learned correction's inputs from raw `eta_table` rows: the replay's interval and point
    (ln(wait + 60 s)), ln of the wait so far (+ 60 s), of 1 + GPUs, request and median runtime, the
    queue ahead and its length, and the user's own jobs ahead and running (per-user limits)."""
    return pd.DataFrame({
        "log_lo": log_wait(table["wait_lo_s"]), "log_p50": log_wait(table["wait_p50_s"]),
        "log_hi": log_wait(table["wait_hi_s"]), "log_waited": log_wait(table["waited_s"]),
        "log_gpus": np.log1p(table["gpus"].to_numpy(np.float64)),
        "log_request": np.log1p(table["requested_s"].to_numpy(np.float64)),
        "log_runtime": np.log1p(table["runtime_p50_s"].to_numpy(np.float64)),
        "jobs_ahead": table["jobs_ahead"].to_numpy(np.float64), "gpus_ahead": table["gpus_ahead"].to_numpy(np.float64),
        "queue_length": table["queue_length"].to_numpy(np.float64),
        "user_jobs_ahead": table["user_jobs_ahead"].to_numpy(np.float64),
        "user_running": table["user_running"].to_numpy(np.float64),
    }, index=table.index)[list(CORRECTION_FEATURES)]


@dataclass(frozen=True)
class LearnedCorrection:
    """Quantile gradient boosting of ln(actual remaining wait + 60 s) at (1 - level)/2, 0.5 and
    (1 + level)/2 from `correction_features`, fitted on the first `FIT_SHARE` of the calibration
    snapshots (by time); its bounds then get split-conformal offsets from the later ones. A job
    the replay says never fits keeps +inf."""

    models: tuple
    conformal: Calibration

    @classmethod
    def fit(cls, rows: pd.DataFrame, level: float = LEVEL, seed: int = 0) -> "LearnedCorrection":
        rows = rows[np.isfinite(rows["wait_p50_s"].to_numpy(np.float64))]
        snapshot = rows["snapshot"].to_numpy()
        first = np.unique(snapshot)[:max(1, int(len(np.unique(snapshot)) * FIT_SHARE))] if len(rows) else []
        fitting = np.isin(snapshot, first)
        X, y = correction_features(rows[fitting]), log_wait(rows["actual_s"][fitting])
        models = fit_quantiles(X, y, ((1 - level) / 2, 0.5, (1 + level) / 2), seed)
        learned = cls(models, Calibration())
        later = rows[~fitting]
        lo, p50, hi = learned.adjust(later)
        offsets = fit_calibration(later.assign(lo_s=lo, p50_s=p50, hi_s=hi), level)
        return cls(tuple(models), Calibration(offsets.lo_shift, 0.0, offsets.hi_shift))

    def adjust(self, table: pd.DataFrame) -> tuple[np.ndarray, ...]:
        """The corrected remaining waits (lo, p50, hi; s) of raw `eta_table` rows."""
        logs = predict_quantiles(self.models, correction_features(table))
        waits = np.maximum(np.exp(logs) - WAIT_SCALE_S, 0.0)
        never = ~np.isfinite(table["wait_p50_s"].to_numpy(np.float64))
        waits[never] = np.inf
        return self.conformal.apply(waits[:, 0], waits[:, 1], waits[:, 2])


def interval_metrics(rows: pd.DataFrame) -> dict:
    """coverage, width_h (median), male and jobs of the lo_s/p50_s/hi_s columns against actual_s."""
    if not len(rows):
        return {"jobs": 0, "coverage": float("nan"), "width_h": float("nan"), "male": float("nan"), "never_fits": 0}
    actual, lo, p50, hi = (rows[c].to_numpy(np.float64) for c in ("actual_s", "lo_s", "p50_s", "hi_s"))
    finite = np.isfinite(p50)
    return {
        "jobs": int(len(rows)),
        "coverage": float(np.mean((lo <= actual) & (actual <= hi))),
        "width_h": float(np.median(hi[finite] - lo[finite]) / 3600.0) if finite.any() else float("nan"),
        "male": float(np.mean(np.abs(log_wait(p50[finite]) - log_wait(actual[finite]))))
        if finite.any() else float("nan"),
        "never_fits": int((~finite).sum()),
    }
