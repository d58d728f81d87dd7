"""`meridian predict eta | backtest | rightsize` through engine.cli.main on a real DuckDB file: a
synthetic log on one 16-GPU region whose last 40 jobs are still queued at its end, with measured GPU
use (8-GPU jobs of even users touched 2 GPUs), and a stored model trained with fast settings."""
import contextlib
import io
import json
import shutil

import pandas as pd
import pytest

from engine.analysis.telemetry.rightsize import RightSizeOptions, rightsize
from engine.cli.main import main
from engine.core.reasons import SHORT as WHY_WORDS
from engine.predict.failure import FailureSettings
from engine.predict.registry import ModelRegistry
from engine.predict.runtime import RuntimeSettings
from engine.service.eta import known_at, queue_at
from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store
from tests.predict_helpers import queued_log

FAST = dict(runtime=RuntimeSettings(max_iter=20), failure=FailureSettings(max_iter=20), evaluate=False)
FLEET = pd.DataFrame({"region": ["eu"] * 2, "node": ["n1", "n2"], "gpu_type": ["A"] * 2, "gpus": [8, 8],
                      "tier": ["reserved"] * 2})
REGIONS = pd.DataFrame({"region": ["eu"], "timezone": ["Europe/Stockholm"]})
QUEUED = 40
SAMPLES = ("--samples", 5)  # replays per query: enough to order the intervals, fast
BACKTEST = ("--snapshots", 6, *SAMPLES)
BACKTEST_KEYS = {"dataset", "cutoff_utc", "level", "samples", "seed", "snapshots", "calibration_snapshots",
                 "margin_h", "jobs_calibration", "jobs_scored", "distinct_jobs_scored", "jobs_never_started",
                 "seconds_per_query", "calibration", "raw", "calibrated", "learned", "baseline",
                 "raw_calibration_period"}


def earlier(jobs: pd.DataFrame) -> pd.Timestamp:
    """The first submit after 2026-03-09 08:00: a short queue then, 151 jobs submitted later."""
    submits = pd.to_datetime(jobs["submit_utc"])
    return submits[submits > pd.Timestamp("2026-03-09 08:00")].min()


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Datasets log (model v1), nouse (no GPU use, no model), cut (nouse as known at `earlier`) and
    nofleet (jobs only); fast.toml beside."""
    path = tmp_path_factory.mktemp("cli_queue") / "m.duckdb"
    (path.parent / "fast.toml").write_text("[runtime]\nmax_iter = 20\n")
    store = Store.open(path)
    tables = {"fleet": FLEET, "regions": REGIONS}
    store.add_import("log", ImportBatch("csv", {"jobs": queued_log(QUEUED), **tables}), "log.csv", "sha-log")
    plain = queued_log(QUEUED).drop(columns=["gpus_used_max", "gpu_util_pct"])
    store.add_import("nouse", ImportBatch("csv", {"jobs": plain, **tables}), "nouse.csv", "sha-nouse")
    store.add_import("cut", ImportBatch("csv", {"jobs": known_at(plain, earlier(plain)), **tables}), "cut.csv",
                     "sha-cut")
    store.add_import("nofleet", ImportBatch("csv", {"jobs": plain.head(300)}), "nofleet.csv", "sha-nofleet")
    jobs, regions = store.jobs("log"), store.regions("log")
    store.close()
    ModelRegistry.beside(path).train("log", jobs, regions, **FAST)
    return path


def stored(db, table="jobs", dataset="log") -> pd.DataFrame:
    store = Store.open(db)
    try:
        return getattr(store, table)(dataset)
    finally:
        store.close()


def meridian(capsys, *argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `meridian ARGV`."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def last_instant(jobs: pd.DataFrame) -> pd.Timestamp:
    return pd.to_datetime(jobs[["submit_utc", "start_utc", "end_utc"]].stack()).max()


def check_intervals(records: list[dict], at: pd.Timestamp) -> None:
    """Every interval ordered and none before `at`."""
    for r in records:
        lo, p50, hi = (pd.Timestamp(r[k]).tz_localize(None) for k in ("start_lo_utc", "start_p50_utc", "start_hi_utc"))
        assert at <= lo <= p50 <= hi, r
        assert 0 <= r["wait_lo_s"] <= r["wait_p50_s"] <= r["wait_hi_s"]


def test_eta_gives_the_queue_now_its_intervals_from_the_stored_model(db, capsys):
    jobs = queued_log(QUEUED)
    code, out, err = meridian(capsys, "predict", "eta", "--dataset", "log", *SAMPLES, "--json", "--db", db)
    assert code == 0
    records, now = json.loads(out), last_instant(jobs)
    assert [r["job_id"] for r in records] == list(jobs["job_id"].iloc[-QUEUED:])  # submit order
    assert [r["jobs_ahead"] for r in records] == list(range(QUEUED))
    assert {r["at_utc"] for r in records} == {now.isoformat() + "Z"} and not any(r["calibrated"] for r in records)
    check_intervals(records, now)
    assert err == "runtime model: stored v1 (trained on these jobs, nothing after " \
                  f"{now:%Y-%m-%d %H:%M} UTC)\n"


def test_eta_text_table_lists_the_queue_in_order(db, capsys):
    code, out, _ = meridian(capsys, "predict", "eta", "--dataset", "log", *SAMPLES, "--db", db)
    assert code == 0
    lines = out.splitlines()
    assert f": {QUEUED} jobs pending; start intervals from 5 replays" in lines[0]
    assert lines[1].split()[:9] == ["job", "region", "GPUs", "waited", "ahead", "why", "it", "waits", "expected"]
    rows = [line.split() for line in lines[2:]]
    assert [r[0] for r in rows] == list(queued_log(QUEUED)["job_id"].iloc[-QUEUED:])
    assert [int(r[5]) for r in rows] == list(range(QUEUED))
    why = lines[1].index("why it waits")
    records = json.loads(meridian(capsys, "predict", "eta", "--dataset", "log", *SAMPLES, "--json", "--db", db)[1])
    assert [line[why:].startswith(r["why_text"] + "  ") for line, r in zip(lines[2:], records)] == [True] * QUEUED


def test_an_earlier_instant_refits_on_the_jobs_ended_by_then(db, capsys):
    jobs = stored(db)
    at = pd.Timestamp("2026-03-10 12:00")
    code, out, err = meridian(capsys, "predict", "eta", "--dataset", "log", "--at", "2026-03-10 12:00", *SAMPLES,
                              "--settings", db.parent / "fast.toml", "--json", "--db", db)
    assert code == 0
    assert err.startswith("runtime model: model v1 saw outcomes up to ") and \
        err.endswith("after 2026-03-10 12:00 UTC; fitting one on the jobs ended by 2026-03-10 12:00 UTC\n")
    records = json.loads(out)
    assert [r["job_id"] for r in records] == list(queue_at(jobs, at).pending["job_id"]) and records
    check_intervals(records, at)


def test_a_model_trained_on_other_data_is_not_used_unless_it_is_that_version(db, capsys, tmp_path):
    copy = tmp_path / "m.duckdb"
    shutil.copy(db, copy)
    shutil.copytree(db.parent / "m.models", tmp_path / "m.models")
    jobs, regions = stored(copy), stored(copy, "regions")
    ModelRegistry.beside(copy).train("log", jobs.iloc[:-QUEUED - 1], regions, **FAST)  # v2: fewer jobs
    argv = ("predict", "eta", "--dataset", "log", "--job", "j1170", *SAMPLES, "--settings",
            db.parent / "fast.toml", "--db", copy)
    code, _, err = meridian(capsys, *argv)
    assert code == 0 and err.startswith("runtime model: model v2 was trained on other data (the dataset changed")
    code, _, err = meridian(capsys, *argv, "--version", 1)
    assert code == 0 and err.startswith("runtime model: stored v1 ")


def test_a_dataset_without_a_model_gets_one_fitted(db, capsys):
    code, out, err = meridian(capsys, "predict", "eta", "--dataset", "nouse", *SAMPLES, "--settings",
                              db.parent / "fast.toml", "--json", "--db", db)
    assert code == 0 and len(json.loads(out)) == QUEUED
    assert err.startswith("runtime model: dataset 'nouse' has no stored model; fitting one on the jobs ended by")


def test_one_job_is_the_same_record_as_in_the_whole_queue(db, capsys):
    argv = ("predict", "eta", "--dataset", "log", *SAMPLES, "--json", "--db", db)
    whole = {r["job_id"]: r for r in json.loads(meridian(capsys, *argv)[1])}
    code, out, _ = meridian(capsys, *argv, "--job", "j1172")
    assert code == 0 and json.loads(out) == whole["j1172"]
    code, out, _ = meridian(capsys, *argv[:-3], "--job", "j1172", "--db", db)
    record = whole["j1172"]
    assert code == 0 and out.startswith(f"job j1172 is 13th of {QUEUED} in the queue of region eu; now: "
                                        f"{record['why_text']}; expected to start {record['eta_text']} "
                                        f"({record['start_p50_utc'][:16].replace('T', ' ')} UTC; between ")
    assert record["why"] in WHY_WORDS and record["why_text"] == WHY_WORDS[record["why"]]


def _running_at(jobs: pd.DataFrame) -> tuple[str, str]:
    """(job id, an instant in minutes it was running at)."""
    run = jobs[(jobs["end_utc"] - jobs["start_utc"]) > pd.Timedelta(hours=1)].iloc[0]
    return run["job_id"], f"{run['start_utc'].ceil('min') + pd.Timedelta(minutes=1):%Y-%m-%d %H:%M}"


@pytest.mark.parametrize("case, message", [
    ("completed", "job 'j0005' is not pending at {now}: it is completed (ended "),
    ("failed", "job '{failed}' is not pending at {now}: it is failed (ended "),
    ("running", "job '{running}' is not pending at {running_at} UTC: it is running (started "),
    ("later", "job 'j1172' is not pending at 2026-03-02 01:00 UTC: it was submitted later (2026-03-10 04:02)"),
    ("unknown", "dataset 'log' has no job 'nope'"),
])
def test_a_job_that_is_not_pending_is_an_error_naming_its_status(db, capsys, case, message):
    jobs = queued_log(QUEUED)
    running, running_at = _running_at(jobs)
    failed = jobs.loc[jobs["status"] == "failed", "job_id"].iloc[0]
    job, at = {"completed": ("j0005", None), "failed": (failed, None), "running": (running, running_at),
               "later": ("j1172", "2026-03-02 01:00"), "unknown": ("nope", None)}[case]
    code, out, err = meridian(capsys, "predict", "eta", "--dataset", "log", "--job", job,
                              *(("--at", at) if at else ()), "--db", db)
    expected = message.format(now=f"{last_instant(jobs):%Y-%m-%d %H:%M} UTC", failed=failed, running=running,
                              running_at=running_at)
    assert code == 2 and out == "" and err.startswith(f"meridian: {expected}") and err.count("\n") == 1, err


@pytest.mark.parametrize("argv, message", [
    (["eta", "--dataset", "log", "--at", "2030-01-01"], "--at 2030-01-01 00:00 is after the dataset's last recorded"),
    (["eta", "--dataset", "log", "--at", "soon"], "--at 'soon' is not a time; use \"YYYY-MM-DD HH:MM\" (UTC)"),
    (["eta", "--dataset", "log", "--at", "2026-03-02 06:00", "--settings", "{folder}/fast.toml"],
     "the ETA's runtime model needs at least 200 jobs ended by 2026-03-02 06:00 UTC"),
    (["eta", "--dataset", "log", "--samples", "0"], "--samples must be a whole number >= 1, got 0"),
    (["eta", "--dataset", "log", "--version", "9"], "dataset 'log' has no model v9; versions: v1"),
    (["eta", "--dataset", "nofleet"], "dataset 'nofleet' has no fleet table"),
    (["eta", "--dataset", "nope"], "unknown dataset 'nope'; choose from"),
    (["backtest", "--dataset", "log", "--snapshots", "1"], "--snapshots must be a whole number >= 2, got 1"),
    (["backtest", "--dataset", "log", "--seed", "-1"], "--seed must be a whole number >= 0, got -1"),
    (["rightsize", "--dataset", "log", "--headroom-pct", "-5"], "--headroom-pct must be >= 0, got -5.0"),
    (["rightsize", "--dataset", "log", "--top", "-1"], "--top must be 0 (all rows) or more, got -1"),
    (["rightsize", "--dataset", "log", "--csv", "{folder}/no/such/dir/x.csv"], "cannot write "),
])
def test_bad_input_is_one_line_and_exit_2(db, capsys, argv, message):
    code, out, err = meridian(capsys, "predict", *[a.format(folder=db.parent) for a in argv], "--db", db)
    assert code == 2 and out == ""
    assert err.splitlines()[-1].startswith("meridian: ") and message in err.splitlines()[-1], err


@pytest.fixture(scope="module")
def backtest_report(db):
    """The `backtest --json` document (6 snapshots, 5 draws, fast runtime model)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["predict", "backtest", "--dataset", "log", *map(str, BACKTEST), "--settings",
                     str(db.parent / "fast.toml"), "--json", "--db", str(db)])
    assert code == 0
    return json.loads(out.getvalue())


def test_backtest_json_is_the_report_with_coverages_in_0_1(backtest_report):
    report = backtest_report
    assert set(report) == BACKTEST_KEYS and report["dataset"] == "log"
    assert (report["snapshots"], report["calibration_snapshots"], report["samples"]) == (6, 3, 5)
    assert report["jobs_scored"] > 0 and report["learned"] is None  # too few waits to learn from
    for key in ("raw", "calibrated", "baseline", "raw_calibration_period"):
        assert 0.0 <= report[key]["coverage"] <= 1.0 and report[key]["width_h"] >= 0, key
    assert set(report["calibration"]) == {"lo_shift", "p50_shift", "hi_shift"}


def test_backtest_text_summary(db, capsys, backtest_report):
    code, out, _ = meridian(capsys, "predict", "backtest", "--dataset", "log", *BACKTEST, "--settings",
                            db.parent / "fast.toml", "--db", db)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("ETA backtest of dataset 'log': the queue replayed at 6 instants after the training "
                               f"cut {backtest_report['cutoff_utc'][:16].replace('T', ' ')} UTC")
    table = {line.split()[0]: line.split()[1:] for line in lines[3:7]}
    assert set(table) == {"raw", "calibrated", "learned", "baseline"}
    for key in ("raw", "calibrated", "baseline"):
        assert table[key][:2] == [f"{100 * backtest_report[key]['coverage']:.1f}", "%"], key
    assert "learned: not fitted" in out and lines[-1].endswith(" s per query")


def test_calibrate_applies_the_offsets_only_when_they_bring_coverage_closer(db, capsys, backtest_report):
    code, out, err = meridian(capsys, "predict", "eta", "--dataset", "log", "--calibrate", *BACKTEST, "--settings",
                              db.parent / "fast.toml", "--json", "--db", db)
    assert code == 0
    raw, calibrated = backtest_report["raw"]["coverage"], backtest_report["calibrated"]["coverage"]
    applies = abs(calibrated - 0.8) < abs(raw - 0.8)
    decision = "applying the calibration" if applies else "keeping the raw interval"
    assert f"the raw 80 % interval held {100 * raw:.1f} % of the starts, the calibrated one {100 * calibrated:.1f} " \
           f"%: {decision}\n" in err
    records = json.loads(out)
    assert len(records) == QUEUED and {r["calibrated"] for r in records} == {applies}
    check_intervals(records, last_instant(queued_log(QUEUED)))


@pytest.mark.parametrize("by, table, options", [
    ("job", "jobs", RightSizeOptions()),
    ("team", "by_team", RightSizeOptions()),
    ("user", "by_user", RightSizeOptions(headroom_pct=10.0, tier="spot")),
])
def test_rightsize_totals_and_rows_are_rightsize_and_the_csv_round_trips(db, capsys, tmp_path, by, table, options):
    expected = rightsize(stored(db), stored(db, "prices"), options)
    rows = getattr(expected, table)
    csv = tmp_path / f"{by}.csv"
    code, out, err = meridian(capsys, "predict", "rightsize", "--dataset", "log", "--by", by, "--top", 3,
                              "--headroom-pct", options.headroom_pct, "--tier", options.tier, "--csv", csv,
                              "--json", "--db", db)
    assert code == 0 and err == f"wrote {len(rows):,} rows to {csv}\n"
    document = json.loads(out)
    assert document["totals"] == pytest.approx(expected.totals)
    assert (document["by"], document["tier"], document["rows_total"]) == (by, options.tier, len(rows))
    pd.testing.assert_frame_equal(pd.DataFrame(document["rows"]), rows.head(3), check_dtype=False)
    back = pd.read_csv(csv, encoding="utf-8-sig", dtype={"job_id": str})
    pd.testing.assert_frame_equal(back, rows, check_dtype=False)


def test_rightsize_finds_exactly_the_jobs_that_touched_2_of_8_gpus(db, capsys):
    jobs = queued_log(QUEUED)
    wasteful = jobs[(jobs["gpus"] == 8) & (jobs["gpus_used_max"] == 2)]
    freed = 6 * ((wasteful["end_utc"] - wasteful["start_utc"]).dt.total_seconds() / 3600).sum()
    code, out, _ = meridian(capsys, "predict", "rightsize", "--dataset", "log", "--top", 5, "--db", db)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("right-sizing of dataset 'log' (headroom 0 %, on-demand prices): 1,160 of 1,160 jobs")
    assert lines[1].startswith(f"  {len(wasteful)} jobs over-asked") and f"{freed:,.1f} of " in lines[1]
    assert lines[2] == "top 5 of 1,160 jobs by freed GPU-hours:"
    rows = [line.split() for line in lines[4:]]
    assert len(rows) == 5 and all(r[0] in set(wasteful["job_id"]) and r[3:7] == ["8", "2", "20", "2"] for r in rows)


def test_a_dataset_without_gpu_use_gets_a_one_line_note(db, capsys):
    code, out, err = meridian(capsys, "predict", "rightsize", "--dataset", "nouse", "--db", db)
    assert code == 0 and err == "" and out.count("\n") == 1
    assert out.startswith("dataset 'nouse' has no per-job GPU use") and "gpus_used_max" in out and "gpu_util_pct" in out
    code, out, _ = meridian(capsys, "predict", "rightsize", "--dataset", "nouse", "--json", "--db", db)
    document = json.loads(out)
    assert code == 0 and document["rows"] == [] and document["totals"]["measured"] == 0
    assert "gpus_used_max" in document["note"]


def test_a_calibrated_earlier_queue_is_the_answer_of_the_data_cut_there(db, capsys):
    """The refitted model, the backtest that calibrates and the replay all see only the history known
    at --at: the dataset cut at that instant gives the same queue, intervals and backtest."""
    jobs = queued_log(QUEUED)
    at = earlier(jobs)
    outputs = []
    for dataset in ("nouse", "cut"):
        code, out, err = meridian(capsys, "predict", "eta", "--dataset", dataset, "--at", at, "--calibrate",
                                  *BACKTEST, "--settings", db.parent / "fast.toml", "--json", "--db", db)
        assert code == 0
        outputs.append((json.loads(out), err.splitlines()[-1]))
    assert outputs[0] == outputs[1]
    assert [r["job_id"] for r in outputs[0][0]] == list(queue_at(jobs, at).pending["job_id"]) == ["j1046", "j1048"]
    assert outputs[0][1].startswith("backtest: ")
    check_intervals(outputs[0][0], at)
