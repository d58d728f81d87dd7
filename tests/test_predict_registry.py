"""Model lifecycle: versions stored beside the database, meta.json, atomic saves, version checks, determinism."""
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from predict_helpers import synthetic

from engine.predict import registry as registry_module
from engine.predict.failure import FailureModel, FailureSettings
from engine.predict.features import COLUMNS, failed, features, zones_of
from engine.predict.importance import failure_importance
from engine.predict.registry import (
    MIN_TRAIN_JOBS,
    ModelIncompatible,
    ModelRegistry,
    NoModel,
    NotEnoughJobs,
    fit_predictors,
    jobs_digest,
)
from engine.predict.runtime import RuntimeSettings
from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store

FAST = {"runtime": RuntimeSettings(max_iter=20), "failure": FailureSettings(max_iter=20)}
REGIONS = pd.DataFrame({"region": ["eu-west", "ap-northeast"], "timezone": ["Europe/Dublin", "Asia/Tokyo"]})


def regional(n=1500, users=20, seed=0) -> pd.DataFrame:
    """The synthetic log with job ids and two regions (users alternate between them)."""
    jobs = synthetic(n=n, users=users, seed=seed)
    jobs.insert(0, "job_id", [f"j{i}" for i in range(len(jobs))])
    jobs["region"] = np.where(jobs["user_name"].str[1:].astype(int) % 2 == 0, "eu-west", "ap-northeast")
    return jobs


def database(path, jobs: pd.DataFrame, dataset="syn") -> None:
    """A real DuckDB file holding `jobs` and REGIONS as `dataset`."""
    store = Store.open(path)
    try:
        store.add_import(dataset, ImportBatch("csv", {"jobs": jobs, "regions": REGIONS}), f"{dataset}.csv",
                         f"sha-{dataset}")
    finally:
        store.close()


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """(db path, jobs read back from it, registry, v1 evaluated, v2 not) on a real DuckDB file."""
    db = tmp_path_factory.mktemp("registry") / "m.duckdb"
    database(db, regional())
    store = Store.open(db)
    jobs, regions = store.jobs("syn"), store.regions("syn")
    store.close()
    registry = ModelRegistry.beside(db)
    first = registry.train("syn", jobs, regions, **FAST)
    second = registry.train("syn", jobs, regions, evaluate=False, **FAST)
    return db, jobs, registry, first, second


def test_versions_are_numbered_folders_beside_the_database(stored):
    db, _, registry, first, second = stored
    assert registry.root == db.parent / "m.models"
    assert [v.number for v in registry.versions("syn")] == [1, 2] and registry.latest("syn").number == 2
    for version in (first, second):
        assert version.path == db.parent / "m.models" / "syn" / f"v{version.number}"
        assert sorted(p.name for p in version.path.iterdir()) == ["failure.joblib", "meta.json", "runtime.joblib"]
        assert json.loads((version.path / "meta.json").read_text()) == version.meta == registry.version(
            "syn", version.number).meta
    assert registry.datasets() == ["syn"]
    assert [p.name for p in (db.parent / "m.models" / "syn").iterdir() if p.name.startswith(".")] == []


def test_loaded_models_predict_exactly_what_the_fitted_ones_did(stored, tmp_path):
    _, jobs, _, _, _ = stored
    predictors, meta = fit_predictors(jobs, REGIONS, evaluate=False, **FAST)
    registry = ModelRegistry(tmp_path / "models")
    loaded = registry.save("syn", predictors, meta).load()
    expected = predictors.predict(jobs)
    pd.testing.assert_frame_equal(loaded.predict(jobs), expected)
    assert list(expected.columns) == ["p10_s", "p50_s", "p90_s", "sched_s", "fail_prob"] and expected.index.equals(
        jobs.index)
    assert (expected["p10_s"] <= expected["p50_s"]).all() and (expected["p50_s"] <= expected["p90_s"]).all()
    assert expected["fail_prob"].between(0, 1).all()
    some = jobs.index[jobs["status"] == "failed"][:5]
    pd.testing.assert_frame_equal(loaded.predict(jobs, rows=some), expected.loc[some])


def test_predictions_use_the_zones_stored_at_training(stored):
    _, jobs, registry, first, _ = stored
    predictors = first.load()
    assert predictors.zones == zones_of(REGIONS) == first.meta["data"]["zones"]
    pd.testing.assert_frame_equal(predictors.predict(jobs), predictors.predict(jobs, REGIONS))


def test_meta_holds_range_digest_settings_evaluation_and_importance(stored):
    _, jobs, _, first, second = stored
    meta, data = first.meta, first.meta["data"]
    assert set(meta) == {"format", "dataset", "version", "created_utc", "software", "data", "settings", "seconds",
                         "evaluation"}
    assert (meta["dataset"], meta["version"], meta["format"]) == ("syn", 1, 2)
    assert data["first_submit_utc"] == jobs["submit_utc"].min().isoformat() + "Z"
    assert data["last_submit_utc"] == jobs["submit_utc"].max().isoformat() + "Z"
    assert data["last_end_utc"] == jobs["end_utc"].max().isoformat() + "Z"
    assert data["jobs"] == data["runtime_rows"] == data["failure_rows"] == len(jobs)
    assert data["failure_rate"] == pytest.approx((jobs["status"] == "failed").mean())
    assert data["digest"] == jobs_digest(jobs) and first.trained_on(jobs)
    assert meta["settings"]["runtime"]["max_iter"] == 20 and meta["settings"]["failure"]["method"] == "sigmoid"
    assert set(meta["seconds"]) == {"features", "runtime_fit", "failure_fit", "evaluation", "importance", "save",
                                    "total"}
    assert meta["seconds"]["total"] == pytest.approx(sum(v for k, v in meta["seconds"].items() if k != "total"))
    runtime, failure = meta["evaluation"]["runtime"], meta["evaluation"]["failure"]
    assert runtime["model"]["male"] < runtime["request"]["male"] and 0 < runtime["model"]["coverage"] < 1
    assert failure["model"]["roc_auc"] > 0.6 and failure["calibration"]
    assert set(second.meta["seconds"]) == {"features", "runtime_fit", "failure_fit", "save", "total"}
    assert second.meta["evaluation"] is None


@pytest.mark.parametrize("model, score, features", [
    ("runtime", "male", COLUMNS),
    ("failure", "roc_auc", tuple(c for c in COLUMNS if c != "user")),   # the failure model drops the user code
])
def test_importance_ranks_the_features_the_model_sees(stored, model, score, features):
    part = stored[3].meta["evaluation"]["importance"][model]
    assert part["score"] == score and part["repeats"] == 5
    assert part["rows"] == stored[3].meta["evaluation"][model]["jobs_test"]   # below the 5,000-row cap
    assert sorted(f["feature"] for f in part["features"]) == sorted(features)
    means = [f["mean"] for f in part["features"]]
    assert means == sorted(means, reverse=True) and means[0] > 0


def test_failure_importance_is_undefined_without_failures():
    jobs = regional(n=400).assign(status="completed")
    X, label = features(jobs), failed(jobs)
    model = FailureModel(FAST["failure"]).fit(X.iloc[:300], label[:300])
    part = failure_importance(model, X.iloc[300:], label[300:])
    assert part == {"score": "roc_auc", "rows": 100, "repeats": 5, "baseline": None, "features": [],
                    "note": "the training part holds a single class: the model is a constant"}


def test_meta_json_is_strict_json(stored):
    text = (stored[3].path / "meta.json").read_text()
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in meta.json"))


def test_a_failing_save_leaves_no_version(stored, tmp_path, monkeypatch):
    _, jobs, _, first, _ = stored
    registry = ModelRegistry(tmp_path / "models")
    predictors = first.load()
    registry.save("syn", predictors, first.meta)
    real_dump = registry_module.joblib.dump

    def dump_then_fail(value, path):
        real_dump(value, path)
        if str(path).endswith("failure.joblib"):
            raise OSError("disk full")

    monkeypatch.setattr(registry_module.joblib, "dump", dump_then_fail)
    with pytest.raises(OSError, match="disk full"):
        registry.save("syn", predictors, first.meta)
    assert [v.number for v in registry.versions("syn")] == [1]
    assert sorted(p.name for p in (tmp_path / "models" / "syn").iterdir()) == ["v1"]


def test_a_taken_version_number_moves_to_the_next(stored, tmp_path):
    """The number a save picked is taken by the time it renames (as when another process saved in between;
    simulated by a v1 folder the listing skips, having no meta.json)."""
    _, _, _, first, _ = stored
    registry = ModelRegistry(tmp_path / "models")
    taken = tmp_path / "models" / "syn" / "v1"
    taken.mkdir(parents=True)
    (taken / "runtime.joblib").write_bytes(b"another process is still writing")
    version = registry.save("syn", first.load(), first.meta)
    assert version.number == 2 and version.meta["version"] == 2
    assert json.loads((tmp_path / "models" / "syn" / "v2" / "meta.json").read_text())["version"] == 2


@pytest.mark.parametrize("damage, message", [
    (lambda path: _edit_meta(path, lambda m: m["software"].update(scikit_learn="0.0.1")),
     "saved with scikit-learn 0.0.1"),
    (lambda path: _edit_meta(path, lambda m: m.update(format=99)), "model format 99"),
    (lambda path: (path / "runtime.joblib").write_bytes(b"not a pickle"), "cannot load model v1"),
])
def test_a_model_this_installation_cannot_load_is_refused_with_a_hint(stored, tmp_path, damage, message):
    source = stored[3].path
    copy = tmp_path / "models" / "syn" / "v1"
    shutil.copytree(source, copy)
    damage(copy)
    with pytest.raises(ModelIncompatible, match=message) as error:
        ModelRegistry(tmp_path / "models").load("syn")
    assert "retrain it with `meridian predict train --dataset syn`" in str(error.value)


def _edit_meta(path, change) -> None:
    meta = json.loads((path / "meta.json").read_text())
    change(meta)
    (path / "meta.json").write_text(json.dumps(meta))


def test_training_twice_on_the_same_data_gives_the_same_models_and_figures(stored):
    _, jobs, _, first, _ = stored
    again, meta = fit_predictors(jobs.sample(frac=1.0, random_state=3), REGIONS, **FAST)  # any row order
    pd.testing.assert_frame_equal(again.predict(jobs), first.load().predict(jobs))
    assert meta["evaluation"] == first.meta["evaluation"] and meta["data"] == first.meta["data"]


def test_jobs_digest_ignores_row_order_and_dtypes_but_not_data():
    jobs = regional(n=300)
    digest = jobs_digest(jobs)
    retyped = jobs.assign(submit_utc=jobs["submit_utc"].astype("datetime64[ns]"), gpus=jobs["gpus"].astype(float))
    assert jobs_digest(jobs.iloc[::-1]) == jobs_digest(retyped) == jobs_digest(jobs.assign(project="p")) == digest
    changed = [jobs.assign(status=jobs["status"].where(jobs.index != 7, "cancelled")),
               jobs.assign(end_utc=jobs["end_utc"] + pd.to_timedelta((jobs.index == 3).astype(int), unit="s")),
               jobs.iloc[1:], jobs.drop(columns="region")]
    assert len({jobs_digest(j) for j in changed} | {digest}) == len(changed) + 1


@pytest.mark.parametrize("name, folder", [
    ("HPC2N-2002-2.2-cln", "HPC2N-2002-2.2-cln"),
    ("a/b", "a%2Fb"),
    ("..", "%2E."),
    (".hidden", "%2Ehidden"),
    ("züri team", "z%C3%BCri%20team"),
])
def test_dataset_names_become_safe_folder_names(stored, tmp_path, name, folder):
    registry = ModelRegistry(tmp_path / "models")
    version = registry.save(name, stored[3].load(), stored[3].meta)
    assert version.path == tmp_path / "models" / folder / "v1"
    assert registry.datasets() == [name] and registry.latest(name).meta["dataset"] == name


def test_unknown_versions_and_forgetting(stored, tmp_path):
    registry = ModelRegistry(tmp_path / "models")
    with pytest.raises(NoModel, match="no model for dataset 'syn' yet; train one with"):
        registry.load("syn")
    assert registry.latest("syn") is None and registry.versions("syn") == []
    for _ in range(2):
        registry.save("syn", stored[3].load(), stored[3].meta)
    with pytest.raises(NoModel, match="dataset 'syn' has no model v7; versions: v1, v2"):
        registry.version("syn", 7)
    assert registry.forget("syn") == 2 and registry.versions("syn") == [] and registry.datasets() == []


def test_too_few_jobs_with_a_runtime_are_refused():
    jobs = regional(n=MIN_TRAIN_JOBS + 50)
    jobs.loc[jobs.index[:60], "end_utc"] = pd.NaT
    with pytest.raises(NotEnoughJobs, match=f"at least {MIN_TRAIN_JOBS} finished jobs .* found {MIN_TRAIN_JOBS - 10}"):
        fit_predictors(jobs, evaluate=False, **FAST)


def test_evaluation_needs_finished_jobs_on_both_sides_of_the_split():
    jobs = regional(n=600)
    late = jobs["submit_utc"] >= jobs["submit_utc"].quantile(0.72)
    jobs.loc[late, ["end_utc", "status"]] = [pd.NaT, "running"]
    expected = r"needs 50 jobs with a runtime in each part; found 40\d ended before .* and 12 submitted after"
    with pytest.raises(NotEnoughJobs, match=expected):
        fit_predictors(jobs, **FAST)
    predictors, meta = fit_predictors(jobs, evaluate=False, **FAST)
    assert meta["evaluation"] is None and meta["data"]["runtime_rows"] == (~late).sum()
    assert predictors.predict(jobs, rows=late)["p50_s"].gt(0).all()


def test_a_log_without_any_runtime_request_trains_and_predicts():
    """A feature with no value in any training row (no requested runtimes: log_request_s all missing)
    becomes 0 instead of failing scikit-learn's binning."""
    jobs = regional(n=600).assign(requested_runtime_s=np.nan)
    predictors, meta = fit_predictors(jobs, REGIONS, **FAST)
    predicted = predictors.predict(jobs, REGIONS)
    assert predicted[["p10_s", "p50_s", "p90_s", "fail_prob"]].notna().all().all()
    assert meta["evaluation"]["runtime"]["model"]["male"] > 0
