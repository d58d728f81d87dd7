"""Model lifecycle: trained predictors versioned per dataset, stored as files beside the database.

Training (`fit_predictors`) fits the production models on *every* job of the dataset whose
outcome is known: the runtime model (engine/predict/runtime.py) on jobs in a final state with a
start and an end, the failure model (engine/predict/failure.py) on jobs in a final state with an
end, both in submit order, so the newest jobs inform the predictions. With `evaluate` it then
scores the models separately on the time-ordered split (engine/predict/evaluate.py: fitted on the
first 70 % of submits, tested on the rest, against the baselines) and measures permutation
importance on that split's models (engine/predict/importance.py); those figures describe how well
this kind of model, trained on the past, predicts the future, and are stored with the version.
Features use the per-region time zones of the dataset's regions table (`zones_of`); the zones are
stored too, so predictions without a regions table use the zones the model was trained with.

Storage (`ModelRegistry`): for the database file `X.duckdb`, the folder `X.models/` holds one folder
per dataset and in it one folder per version, `v1`, `v2`, ... (immutable, numbered from 1 per
dataset). A version folder holds `runtime.joblib` and `failure.joblib` (the fitted models, written
with joblib, scikit-learn's documented persistence) and `meta.json` (below). A version is written to
a hidden temporary folder and renamed into place, so a process that dies while saving leaves no
half version (a leftover `.incoming-*` folder is never listed). Dataset names become folder names
with every character other than letters, digits, "-", "_" and a non-leading "." percent-encoded.
The files are pickles: load only models this installation wrote. A model saved by another
scikit-learn version is refused with `ModelIncompatible` (retrain it): scikit-learn does not
promise that models load across versions.

meta.json (JSON; NaN figures, such as an AUC with a single class, are null):
- format (1), dataset, version, created_utc (ISO 8601, "Z")
- software: scikit_learn, numpy, python versions
- data: jobs (rows in the table), first_submit_utc, last_submit_utc, last_end_utc (the newest
  outcome the models saw), runtime_rows and failure_rows (training rows of each model),
  failure_rate (of the failure rows), digest (`jobs_digest` of the table), zones (region -> zone)
- settings: runtime and failure (the RuntimeSettings and FailureSettings fields)
- seconds: features, runtime_fit, failure_fit, evaluation, importance, save, total (wall time)
- evaluation: null when trained without, else runtime and failure (the evaluate_runtime and
  evaluate_failure reports: cutoff_utc, jobs_train, jobs_test, the model and each baseline's
  metrics, the calibration table) and importance (runtime and failure, engine/predict/importance.py)
"""
from __future__ import annotations

import hashlib
import json
import math
import platform
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote

import joblib
import numpy as np
import pandas as pd
import sklearn

from engine.predict.evaluate import TimeSplit, failure_evaluation, in_submit_order, runtime_evaluation
from engine.predict.failure import FailureModel, FailureSettings
from engine.predict.features import failed, features, has_outcome, runtime_s, seconds, zones_of
from engine.predict.importance import failure_importance, runtime_importance
from engine.predict.runtime import RuntimeModel, RuntimeSettings

FORMAT = 2   # 2: calibrated interval and sched_s (engine/predict/runtime.py); format 1 models are refused
META_FILE, RUNTIME_FILE, FAILURE_FILE = "meta.json", "runtime.joblib", "failure.joblib"
MIN_TRAIN_JOBS = 200
MIN_EVAL_JOBS = 50
PREDICTION_COLUMNS = ("p10_s", "p50_s", "p90_s", "sched_s", "fail_prob")
# The jobs columns the models read (features and labels); the digest covers exactly these.
DIGEST_TIMES = ("submit_utc", "start_utc", "end_utc")
DIGEST_NUMBERS = ("gpus", "nodes", "requested_runtime_s")
DIGEST_TEXTS = ("user_name", "team", "workload_class", "queue", "region", "status")
_VERSION_DIR = re.compile(r"v([1-9][0-9]*)")
_SAFE = re.compile(r"[A-Za-z0-9_\-.]")


class ModelError(ValueError):
    """A model cannot be trained, found or loaded; the message says what to do."""


class NoModel(ModelError):
    """The dataset has no model (or not the version asked for)."""


class ModelIncompatible(ModelError):
    """A stored model cannot be loaded by this installation (another scikit-learn version, damaged files)."""


class NotEnoughJobs(ModelError):
    """Too few jobs with a known runtime to train on."""


@dataclass(frozen=True)
class Predictors:
    """The fitted runtime and failure models and the time zones their features use."""

    runtime: RuntimeModel
    failure: FailureModel
    zones: dict[str, str] = field(default_factory=dict)

    def predict(self, jobs: pd.DataFrame, regions: pd.DataFrame | None = None, rows=None) -> pd.DataFrame:
        """p10_s, p50_s, p90_s (runtime quantiles, seconds) and fail_prob (0-1), index of `jobs`.

        Features come from the whole of `jobs` (a job's features are its user's history in that
        table), so pass the full table and choose the jobs to predict with `rows` (index labels or
        a boolean mask; default all). `regions`: local times in its zones; None uses the zones
        stored at training.
        """
        X = features(jobs, self.zones if regions is None else zones_of(regions))
        positions = np.arange(len(X)) if rows is None else X.index.get_indexer(X.loc[rows].index)
        out = self.runtime.predict_tracked(X, runtime_s(jobs), seconds(jobs["end_utc"]), seconds(jobs["submit_utc"]),
                                           positions)
        out["fail_prob"] = self.failure.predict(X.iloc[positions])
        return out[list(PREDICTION_COLUMNS)]


def fit_predictors(jobs: pd.DataFrame, regions: pd.DataFrame | None = None, evaluate: bool = True,
                   runtime: RuntimeSettings = RuntimeSettings(), failure: FailureSettings = FailureSettings(),
                   progress: Callable[[str], None] | None = None) -> tuple[Predictors, dict]:
    """Production models fitted on every job with a known outcome, and their meta (all of meta.json
    but format, dataset, version, created_utc, seconds.save and seconds.total, which `ModelRegistry.save`
    adds). `progress` gets one line per step; the features step includes `jobs_digest`.
    Raises NotEnoughJobs with fewer than MIN_TRAIN_JOBS jobs with a known runtime, or with `evaluate`
    when either side of the time-ordered split has fewer than MIN_EVAL_JOBS (checked before fitting)."""
    clock = _Clock(progress)
    zones = zones_of(regions)
    with clock("features"):
        X = features(jobs, zones)
        run, known, label = runtime_s(jobs), has_outcome(jobs), failed(jobs)
        runtime_rows, failure_rows = in_submit_order(jobs, known & np.isfinite(run)), in_submit_order(jobs, known)
        digest = jobs_digest(jobs)
    if len(runtime_rows) < MIN_TRAIN_JOBS:
        raise NotEnoughJobs(f"training needs at least {MIN_TRAIN_JOBS} finished jobs with a start and an end; "
                            f"found {len(runtime_rows)}")
    if evaluate:
        _check_split(jobs, run)
    with clock("runtime_fit", "runtime model (P10/P50/P90)"):
        runtime_model = RuntimeModel(runtime).fit(X.iloc[runtime_rows], run[runtime_rows],
                                                  seconds(jobs["end_utc"])[runtime_rows])
    with clock("failure_fit", "failure model"):
        failure_model = FailureModel(failure).fit(X.iloc[failure_rows], label[failure_rows])
    evaluation = _evaluation(jobs, X, zones, runtime, failure, clock) if evaluate else None
    submit, end = pd.to_datetime(jobs["submit_utc"]), pd.to_datetime(jobs["end_utc"])
    meta = {
        "software": {"scikit_learn": sklearn.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
        "data": {"jobs": int(len(jobs)), "first_submit_utc": _iso(submit.min()), "last_submit_utc": _iso(submit.max()),
                 "last_end_utc": _iso(end.iloc[failure_rows].max()), "runtime_rows": int(len(runtime_rows)),
                 "failure_rows": int(len(failure_rows)),
                 "failure_rate": float(label[failure_rows].mean()) if len(failure_rows) else 0.0,
                 "digest": digest, "zones": dict(sorted(zones.items()))},
        "settings": {"runtime": asdict(runtime), "failure": asdict(failure)},
        "seconds": clock.seconds,
        "evaluation": evaluation,
    }
    return Predictors(runtime_model, failure_model, zones), _json_ready(meta)


def _evaluation(jobs: pd.DataFrame, X: pd.DataFrame, zones: dict[str, str], runtime: RuntimeSettings,
                failure: FailureSettings, clock: "_Clock") -> dict:
    with clock("evaluation", "evaluation on the time split"):
        scored = {"runtime": runtime_evaluation(jobs, zones, settings=runtime, X=X),
                  "failure": failure_evaluation(jobs, zones, settings=failure, X=X)}
    with clock("importance", "permutation importance"):
        importance = {"runtime": runtime_importance(*_fitted(scored["runtime"])),
                      "failure": failure_importance(*_fitted(scored["failure"]))}
    return {**{name: evaluated.report for name, evaluated in scored.items()}, "importance": importance}


def _fitted(evaluated) -> tuple:
    return evaluated.model, evaluated.X_test, evaluated.y_test


def _check_split(jobs: pd.DataFrame, run: np.ndarray) -> None:
    """NotEnoughJobs unless the time-ordered split has MIN_EVAL_JOBS jobs with a runtime on each side."""
    split, ran = TimeSplit.of(jobs), np.isfinite(run)
    train, test = int((split.train & ran).sum()), int((split.test & ran).sum())
    if min(train, test) < MIN_EVAL_JOBS:
        raise NotEnoughJobs(f"the time-ordered evaluation needs {MIN_EVAL_JOBS} jobs with a runtime in each part; "
                            f"found {train} ended before {split.cutoff_utc or 'the cutoff'} and {test} submitted "
                            "after; train without the evaluation (--no-eval)")


def jobs_digest(jobs: pd.DataFrame) -> str:
    """sha256 (hex) of the jobs columns the models read, independent of row order and dtypes:
    equal digests mean a model trained on one table would be trained on the same data from the other."""
    columns = {name: seconds(jobs[name]) if name in jobs else np.full(len(jobs), np.nan) for name in DIGEST_TIMES}
    columns.update({name: pd.to_numeric(jobs[name], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
                    if name in jobs else np.full(len(jobs), np.nan) for name in DIGEST_NUMBERS})
    columns.update({name: jobs[name].astype(object).where(jobs[name].notna(), "").astype(str).to_numpy(dtype=object)
                    if name in jobs else np.full(len(jobs), "", dtype=object) for name in DIGEST_TEXTS})
    rows = pd.util.hash_pandas_object(pd.DataFrame(columns), index=False).to_numpy()
    return hashlib.sha256(np.sort(rows).tobytes()).hexdigest()


@dataclass(frozen=True)
class ModelVersion:
    """One stored version: its dataset, number, folder and meta.json contents."""

    dataset: str
    number: int
    path: Path
    meta: dict

    def load(self) -> Predictors:
        """The fitted models; ModelIncompatible when this installation cannot load them."""
        retrain = f"retrain it with `meridian predict train --dataset {self.dataset}`"
        saved = self.meta.get("software", {}).get("scikit_learn")
        if self.meta.get("format") != FORMAT or saved != sklearn.__version__:
            raise ModelIncompatible(
                f"model v{self.number} of dataset {self.dataset!r} was saved with scikit-learn {saved} "
                f"(model format {self.meta.get('format')}); this is scikit-learn {sklearn.__version__} "
                f"(format {FORMAT}): {retrain}")
        try:
            runtime, failure = joblib.load(self.path / RUNTIME_FILE), joblib.load(self.path / FAILURE_FILE)
        except Exception as exc:  # noqa: BLE001 - any unpickling failure means the same thing to the user
            raise ModelIncompatible(f"cannot load model v{self.number} of dataset {self.dataset!r} "
                                    f"({type(exc).__name__}: {exc}); {retrain}") from exc
        if not isinstance(runtime, RuntimeModel) or not isinstance(failure, FailureModel):
            raise ModelIncompatible(
                f"model v{self.number} of dataset {self.dataset!r} holds unexpected objects; {retrain}")
        return Predictors(runtime, failure, dict(self.meta["data"]["zones"]))

    def trained_on(self, jobs: pd.DataFrame) -> bool:
        """Whether `jobs` holds exactly the data this version was trained on (`jobs_digest`)."""
        return self.meta["data"]["digest"] == jobs_digest(jobs)


class ModelRegistry:
    """Versioned predictors of every dataset under one folder (`ModelRegistry.beside(db_path)`)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    @classmethod
    def beside(cls, db_path: str | Path) -> "ModelRegistry":
        """The registry of database file `X.duckdb` (or any `X.ext`): folder `X.models` next to it."""
        db = Path(db_path).expanduser()
        return cls(db.with_name(db.stem + ".models"))

    def datasets(self) -> list[str]:
        """Datasets with at least one stored version, sorted."""
        if not self.root.is_dir():
            return []
        names = [_dataset_of(entry.name) for entry in self.root.iterdir() if entry.is_dir()]
        return sorted(name for name in names if name is not None and self.versions(name))

    def versions(self, dataset: str) -> list[ModelVersion]:
        """The dataset's stored versions, oldest first (empty when none)."""
        folder = self._folder(dataset)
        if not folder.is_dir():
            return []
        found = []
        for entry in folder.iterdir():
            match = _VERSION_DIR.fullmatch(entry.name)
            if match and (entry / META_FILE).is_file():
                found.append(ModelVersion(dataset, int(match.group(1)), entry, _read_meta(entry / META_FILE)))
        return sorted(found, key=lambda v: v.number)

    def latest(self, dataset: str) -> ModelVersion | None:
        versions = self.versions(dataset)
        return versions[-1] if versions else None

    def version(self, dataset: str, number: int | None = None) -> ModelVersion:
        """Version `number` (default the latest); NoModel when there is no such version."""
        versions = self.versions(dataset)
        if not versions:
            raise NoModel(f"no model for dataset {dataset!r} yet; train one with "
                          f"`meridian predict train --dataset {dataset}`")
        if number is None:
            return versions[-1]
        for version in versions:
            if version.number == number:
                return version
        raise NoModel(f"dataset {dataset!r} has no model v{number}; versions: "
                      + ", ".join(f"v{v.number}" for v in versions))

    def load(self, dataset: str, number: int | None = None) -> Predictors:
        return self.version(dataset, number).load()

    def train(self, dataset: str, jobs: pd.DataFrame, regions: pd.DataFrame | None = None, evaluate: bool = True,
              runtime: RuntimeSettings = RuntimeSettings(), failure: FailureSettings = FailureSettings(),
              progress: Callable[[str], None] | None = None) -> ModelVersion:
        """Fit (`fit_predictors`) and store the dataset's next version."""
        predictors, meta = fit_predictors(jobs, regions, evaluate, runtime, failure, progress)
        return self.save(dataset, predictors, meta, progress)

    def save(self, dataset: str, predictors: Predictors, meta: dict,
             progress: Callable[[str], None] | None = None) -> ModelVersion:
        """Store `predictors` with `meta` (from `fit_predictors`) as the dataset's next version, atomically."""
        folder = self._folder(dataset)
        folder.mkdir(parents=True, exist_ok=True)
        incoming = Path(tempfile.mkdtemp(prefix=".incoming-", dir=folder))
        try:
            began = time.perf_counter()
            joblib.dump(predictors.runtime, incoming / RUNTIME_FILE)
            joblib.dump(predictors.failure, incoming / FAILURE_FILE)
            spent = dict(meta["seconds"], save=time.perf_counter() - began)
            spent["total"] = sum(v for k, v in spent.items() if k != "total")
            if progress:
                progress(f"saved in {spent['save']:.1f} s")
            identity = {"format": FORMAT, "dataset": dataset, "version": 0,
                        "created_utc": _iso(pd.Timestamp.now(tz="UTC").tz_localize(None).floor("s"))}
            meta = {**identity, **{k: v for k, v in meta.items() if k not in identity and k != "seconds"},
                    "seconds": spent}
            return self._publish(dataset, incoming, meta)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)

    def forget(self, dataset: str) -> int:
        """Delete every stored version of the dataset; returns how many there were."""
        count = len(self.versions(dataset))
        shutil.rmtree(self._folder(dataset), ignore_errors=True)
        return count

    def _publish(self, dataset: str, incoming: Path, meta: dict) -> ModelVersion:
        """Rename `incoming` to the next free `v<N>`, writing N into meta.json first (another process
        may take a number between the listing and the rename: then the next one is tried)."""
        folder = incoming.parent
        number = max((v.number for v in self.versions(dataset)), default=0) + 1
        while True:
            meta["version"] = number
            (incoming / META_FILE).write_text(json.dumps(meta, indent=2, allow_nan=False), encoding="utf-8")
            target = folder / f"v{number}"
            try:
                incoming.rename(target)
            except OSError:
                if not target.exists():
                    raise
                number += 1
                continue
            return ModelVersion(dataset, number, target, meta)

    def _folder(self, dataset: str) -> Path:
        if not dataset:
            raise ModelError("a dataset name is required")
        encoded = "".join(c if _SAFE.fullmatch(c) else "".join(f"%{b:02X}" for b in c.encode()) for c in dataset)
        return self.root / ("%2E" + encoded[1:] if encoded.startswith(".") else encoded)


def _dataset_of(folder_name: str) -> str | None:
    """The dataset name of a registry folder; None for hidden folders."""
    return None if folder_name.startswith(".") else unquote(folder_name)


def _read_meta(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelIncompatible(f"cannot read {path}: {exc}") from exc


def _iso(stamp) -> str | None:
    return None if pd.isna(stamp) else pd.Timestamp(stamp).isoformat() + "Z"


def _json_ready(value):
    """`value` with tuples as lists, numpy scalars as Python numbers and NaN/infinities as None."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


class _Clock:
    """Wall seconds per named step, reported through `progress`."""

    def __init__(self, progress: Callable[[str], None] | None):
        self.progress = progress
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, key: str, label: str | None = None) -> Iterator[None]:
        began = time.perf_counter()
        yield
        self.seconds[key] = time.perf_counter() - began
        if self.progress:
            self.progress(f"{label or key}: {self.seconds[key]:.1f} s")
