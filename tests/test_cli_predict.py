"""`meridian predict`: train, models, show, job and forget through engine.cli.main, on a real DuckDB file."""
import contextlib
import io
import json
import shutil

import pytest
from test_predict_registry import database, regional

from engine.cli.main import main
from engine.predict.registry import ModelRegistry

FAST = "[runtime]\nmax_iter = 20\n[failure]\nmax_iter = 20\n"


def meridian(capsys, *argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `meridian ARGV`."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(db, settings file, the first `train --json` document, its stderr): dataset `syn` trained once."""
    folder = tmp_path_factory.mktemp("cli_predict")
    db, settings = folder / "m.duckdb", folder / "fast.toml"
    database(db, regional())
    settings.write_text(FAST)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["predict", "train", "--dataset", "syn", "--settings", str(settings), "--json", "--db", str(db)])
    assert code == 0, err.getvalue()
    return db, settings, json.loads(out.getvalue()), err.getvalue()


def test_train_prints_meta_as_json_and_progress_on_stderr(trained):
    db, _, document, progress = trained
    assert document["dataset"] == "syn" and document["version"] == 1
    assert document["path"] == str(db.parent / "m.models" / "syn" / "v1")
    assert document["settings"]["runtime"]["max_iter"] == 20 and document["data"]["jobs"] == 1500
    assert document["data"]["zones"] == {"ap-northeast": "Asia/Tokyo", "eu-west": "Europe/Dublin"}
    assert document["evaluation"]["runtime"]["model"]["male"] > 0
    lines = progress.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "features", "runtime model (P10/P50/P90)", "failure model", "evaluation on the time split",
        "permutation importance"]
    assert lines[-1].startswith("saved in ") and lines[-1].endswith(" s")


def test_train_text_summary_and_no_eval(trained, capsys):
    db, settings, _, _ = trained
    code, out, _ = meridian(capsys, "predict", "train", "--dataset", "syn", "--settings", settings, "--no-eval",
                            "--db", db)
    assert code == 0
    assert "dataset 'syn', model v2" in out and "1,500 jobs submitted" in out
    assert "not evaluated (trained with --no-eval)" in out
    assert f"stored in {db.parent / 'm.models' / 'syn' / 'v2'}" in out
    code, out, _ = meridian(capsys, "predict", "show", "--dataset", "syn", "--version", 1, "--db", db)
    assert code == 0
    for expected in ("model v1", "model P50", "user request", "last-two mean", "base rate", "user's recent",
                     "calibration on the test part", "runtime feature importance", "failure feature importance",
                     "runtime settings: max_iter=20"):
        assert expected in out, expected


def test_models_lists_versions_with_range_figures_and_whether_the_data_changed(trained, capsys):
    db, _, first, _ = trained
    code, out, _ = meridian(capsys, "predict", "models", "--dataset", "syn", "--json", "--db", db)
    assert code == 0
    records = json.loads(out)
    assert [r["version"] for r in records][:1] == [1] and all(r["current"] for r in records)
    head = records[0]
    assert head["runtime_male"] == first["evaluation"]["runtime"]["model"]["male"]
    assert head["failure_roc_auc"] == first["evaluation"]["failure"]["model"]["roc_auc"]
    assert (head["first_submit_utc"], head["last_submit_utc"]) == (
        first["data"]["first_submit_utc"], first["data"]["last_submit_utc"])
    code, out, _ = meridian(capsys, "predict", "models", "--dataset", "syn", "--db", db)
    assert code == 0 and "v1" in out and "current" in out


def test_show_json_is_the_stored_meta(trained, capsys):
    db, _, first, _ = trained
    code, out, _ = meridian(capsys, "predict", "show", "--dataset", "syn", "--version", 1, "--json", "--db", db)
    assert code == 0 and json.loads(out) == first


def test_job_predicts_one_job_with_its_interval_and_failure_probability(trained, capsys):
    db, _, _, _ = trained
    jobs = regional()
    code, out, _ = meridian(capsys, "predict", "job", "--dataset", "syn", "--job", "j1234", "--version", 1,
                            "--json", "--db", db)
    assert code == 0
    record = json.loads(out)
    expected = ModelRegistry.beside(db).load("syn", 1).predict(jobs, rows=[1234]).iloc[0]
    assert record["job_id"] == "j1234" and record["version"] == 1
    assert [record[k] for k in ("p10_s", "p50_s", "p90_s", "sched_s", "fail_prob")] == pytest.approx(list(expected))
    assert record["requested_s"] == jobs.loc[1234, "requested_runtime_s"]
    assert record["actual_s"] == (jobs.loc[1234, "end_utc"] - jobs.loc[1234, "start_utc"]).total_seconds()
    code, out, _ = meridian(capsys, "predict", "job", "--dataset", "syn", "--job", "j1234", "--db", db)
    assert code == 0 and "job j1234 of dataset 'syn'" in out and "P50" in out and "probability of failing" in out


@pytest.mark.parametrize("argv, message", [
    (["train", "--dataset", "nope"], "unknown dataset 'nope'; choose from sample, syn"),
    (["models", "--dataset", "sample"], "no model for dataset 'sample' yet; train one with"),
    (["show", "--dataset", "syn", "--version", "9"], "dataset 'syn' has no model v9; versions: v1"),
    (["job", "--dataset", "syn", "--job", "nope"], "dataset 'syn' has no job 'nope'"),
    (["job", "--dataset", "sample", "--job", "1"], "no model for dataset 'sample' yet"),
    (["forget", "--dataset", "sample"], "no model for dataset 'sample' yet"),
    (["train", "--dataset", "syn", "--settings", "{folder}/missing.toml"], "cannot read the settings file"),
    (["train", "--dataset", "syn", "--settings", "{folder}/bad.toml"],
     "[runtime] max_iter must be a whole number >= 1"),
    (["train", "--dataset", "syn", "--settings", "{folder}/unknown.toml"],
     "[failure]: unknown setting trees; valid:"),
    (["train", "--dataset", "syn", "--settings", "{folder}/table.toml"],
     "unknown table gpu; valid: [runtime], [failure]"),
])
def test_bad_input_is_one_line_and_exit_2(trained, capsys, argv, message):
    db = trained[0]
    (db.parent / "bad.toml").write_text("[runtime]\nmax_iter = 0\n")
    (db.parent / "unknown.toml").write_text("[failure]\ntrees = 3\n")
    (db.parent / "table.toml").write_text("[gpu]\nx = 1\n")
    code, out, err = meridian(capsys, "predict", *[a.format(folder=db.parent) for a in argv], "--db", db)
    assert code == 2 and out == ""
    assert err.startswith("meridian: ") and err.count("\n") == 1 and message in err, err


def test_a_model_saved_by_another_scikit_learn_is_refused(trained, capsys, tmp_path):
    db = trained[0]
    copy = tmp_path / "m.duckdb"
    shutil.copy(db, copy)
    shutil.copytree(db.parent / "m.models" / "syn" / "v1", tmp_path / "m.models" / "syn" / "v1")
    meta_path = tmp_path / "m.models" / "syn" / "v1" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["software"]["scikit_learn"] = "1.0.2"
    meta_path.write_text(json.dumps(meta))
    code, _, err = meridian(capsys, "predict", "job", "--dataset", "syn", "--job", "j1", "--db", copy)
    assert code == 2 and "saved with scikit-learn 1.0.2" in err and "meridian predict train --dataset syn" in err


def test_forget_deletes_every_version_and_models_then_has_none(trained, capsys, tmp_path):
    db = trained[0]
    copy = tmp_path / "m.duckdb"
    shutil.copy(db, copy)
    shutil.copytree(db.parent / "m.models", tmp_path / "m.models")
    count = len(ModelRegistry.beside(copy).versions("syn"))
    code, out, _ = meridian(capsys, "predict", "forget", "--dataset", "syn", "--db", copy)
    assert code == 0 and out == f"deleted {count} model version{'s' * (count > 1)} of dataset 'syn'\n"
    code, _, err = meridian(capsys, "predict", "models", "--dataset", "syn", "--db", copy)
    assert code == 2 and "no model for dataset 'syn' yet" in err
    assert ModelRegistry.beside(db).versions("syn")   # the original is untouched


def test_deleting_a_dataset_deletes_its_models(trained, capsys, tmp_path):
    db = trained[0]
    copy = tmp_path / "m.duckdb"
    shutil.copy(db, copy)
    shutil.copytree(db.parent / "m.models", tmp_path / "m.models")
    count = len(ModelRegistry.beside(copy).versions("syn"))
    code, out, _ = meridian(capsys, "delete", "syn", "--db", copy)
    assert code == 0 and out == f"deleted dataset 'syn' and its {count} model version(s)\n"
    assert ModelRegistry.beside(copy).versions("syn") == []
