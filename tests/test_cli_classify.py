"""`meridian classify` through engine.cli.main: a labelled dataset scored on its held-out labels, an SWF trace
classified by the model trained on the sample, JSON and text agreeing, bad input on one line."""
import json

import pytest
from conftest import TRACES, shared
from test_cli_predict import meridian
from test_predict_registry import database

from engine.predict.classify import CLASSES
from engine.telemetry.sample import read_bundle


@pytest.fixture(scope="module")
def labelled_db(tmp_path_factory):
    """A database holding every eighth job of the sample (labelled, 11,543 jobs) as dataset `part`."""
    db = tmp_path_factory.mktemp("classify") / "m.duckdb"
    database(db, read_bundle().tables["jobs"].iloc[::8].reset_index(drop=True), "part")
    return db


def test_a_labelled_dataset_is_scored_on_its_later_jobs_in_json_and_text(labelled_db, capsys):
    code, out, err = meridian(capsys, "classify", "--dataset", "part", "--split", "time", "--json", "--db", labelled_db)
    assert code == 0, err
    document = json.loads(out)
    assert document["source"] == "part" and document["labelled"] and document["trained_on"].startswith("its own")
    evaluation = document["evaluation"]
    assert evaluation["split"] == "time" and evaluation["accuracy"] >= 0.95
    assert evaluation["jobs_test"] == 11_543 - round(0.7 * 11_543)
    assert [row["workload_class"] for row in document["shares"]] == list(CLASSES)
    assert sum(row["jobs"] for row in document["shares"]) == 11_543   # every sample job carries one of the classes
    code, text, err = meridian(capsys, "classify", "--dataset", "part", "--split", "time", "--db", labelled_db)
    assert code == 0, err
    assert f"accuracy {evaluation['accuracy']:.4f}" in text and "confusion (rows: true class" in text
    hpo = document["shares"][CLASSES.index("hpo")]
    assert f"{'hpo':<12}{hpo['jobs']:>10,}" in text and f"{evaluation['per_class'][0]['recall']:.3f}" in text


def test_bad_input_is_one_line(sample_db, capsys, tmp_path):
    code, _, err = meridian(capsys, "classify", "--dataset", "nope", "--db", sample_db)
    assert code == 2 and "unknown dataset 'nope'" in err and err.count("\n") == 1
    code, _, err = meridian(capsys, "classify", "--trace", tmp_path / "missing.swf")
    assert code == 2 and "cannot read" in err


@pytest.mark.slow
@shared("traces/swf/KTH-SP2-1996-2.2.swf.gz")
def test_an_swf_trace_gets_inferred_shares(capsys):
    code, out, err = meridian(capsys, "classify", "--trace", TRACES / "swf/KTH-SP2-1996-2.2.swf.gz", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert not document["labelled"] and document["evaluation"] is None
    assert document["trained_on"].startswith("the bundled sample")
    assert sum(row["jobs"] for row in document["shares"]) == 28_489
    assert sum(row["gpu_hour_share"] for row in document["shares"]) == pytest.approx(1.0)
