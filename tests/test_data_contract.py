"""The data contract (engine/telemetry/importers/contract.py, issue 28 item 2): the hostile files that used to
import and then break `simulate` are refused with their line, and a property-based fuzz test (hypothesis)
builds jobs files from the contract's edges (each range's ends, just past them, the longest text, control
characters) and asserts: a clean refusal whose every problem names a line of the file, or an import after
which `meridian simulate` runs."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli.main import main
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.contract import JOB_NUMBERS, MAX_TEXT_CHARS
from engine.telemetry.ingest import ingest_bytes
from engine.telemetry.store import Store

HEADER = "job_id,user,submit,start,end,gpus,priority,memory_gib,cpus,nodes,requested_runtime_s"
GOOD = {"job_id": "j2", "user": "u", "submit": "2024-05-01T10:00:00Z", "start": "2024-05-01T10:05:00Z",
        "end": "2024-05-01T11:00:00Z", "gpus": "1", "priority": "1", "memory_gib": "4", "cpus": "8", "nodes": "1",
        "requested_runtime_s": "7200"}
FIRST = ",".join({**GOOD, "job_id": "j1"}.values())
# the hostile values -> the problem reported on line 3
HOSTILE = {
    ("gpus", "1e308"): "GPUs '1e308' in column 'gpus' is above 100000",
    ("priority", "1e308"): "value '1e308' in column 'priority' is above 1e+15",
    ("memory_gib", "1e308"): "value '1e308' in column 'memory_gib' is above 10000000",
    ("submit", "9999-05-01T10:00:00Z"): "time '9999-05-01T10:00:00Z' in column 'submit' is outside 1970-2100",
    ("submit", "0001-05-01T10:00:00Z"): "time '0001-05-01T10:00:00Z' in column 'submit' is outside 1970-2100",
    ("job_id", "x" * 10_000): f"'{'x' * 57}...' in column 'job_id' is longer than 256 characters",
    ("user", "\x1b[31mred"): "'\\x1b[31mred' in column 'user' holds a control character (NUL, escape, ...)",
}


def _file(row: dict[str, str]) -> bytes:
    return (HEADER + "\n" + FIRST + "\n" + ",".join(row.values()) + "\n").encode()


def _refused(tmp_path, data: bytes, source: str) -> list[str]:
    """The problems an import of `data` into a new store is refused with; the store stays empty."""
    store = Store.open(tmp_path / "m.duckdb")
    try:
        with pytest.raises(ImportRejected) as caught:
            ingest_bytes(store, data, source)
        assert store.datasets().empty
        return caught.value.lines()
    finally:
        store.close()


@pytest.mark.parametrize(("column", "value"), sorted(HOSTILE))
def test_a_hostile_value_is_refused_with_its_line(tmp_path, column, value):
    problems = _refused(tmp_path, _file({**GOOD, column: value}), "hostile.csv")
    assert problems == [f"hostile.csv:3: {HOSTILE[column, value]}"]


def test_a_nul_byte_after_the_first_8_kb_is_refused_with_its_line(tmp_path):
    rows = [",".join({**GOOD, "job_id": f"p{i}"}.values()) for i in range(200)]
    data = (HEADER + "\n" + "\n".join(rows) + "\n" + ",".join({**GOOD, "user": "a\x00b"}.values()) + "\n").encode()
    assert data.index(b"\x00") > 8192
    assert _refused(tmp_path, data, "nul.csv") == [
        "nul.csv:202: 'a\\x00b' in column 'user' holds a control character (NUL, escape, ...)"]


def test_a_header_of_100000_columns_is_refused_before_its_rows_are_read(tmp_path):
    wide = (HEADER + "," + ",".join(f"c{i}" for i in range(100_000)) + "\n" + FIRST + "," * 100_000 + "\n").encode()
    assert _refused(tmp_path, wide, "wide.csv") == [
        "wide.csv: the header has 100,011 columns, more than the 1,000 a file may have"]


def test_a_file_of_jobs_that_never_started_imports_and_simulates(tmp_path):
    """Found while probing the contract: with no job in the run, the fairness KPIs' team column was float64."""
    db = tmp_path / "m.duckdb"
    store = Store.open(db)
    name = ingest_bytes(store, b"job_id,user,submit,gpus\nj1,u,2024-05-01T10:00:00Z,1\n", "pending.csv").dataset
    store.close()
    assert main(["simulate", "--dataset", name, "--scenario", "recorded", "--db", str(db)]) == 0


def _edges(column: str) -> list[str]:
    limit = JOB_NUMBERS[column]
    step = 1 if limit.whole else 0.5
    return [f"{v:g}" for v in (limit.low, limit.high, limit.low - step, limit.high + step,
                               (limit.low + limit.high) / 2)] + ["1"]


TIMES = ["1970-01-01T00:00:00Z", "2099-12-31T23:00:00Z", "2100-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
         "2024-05-01T10:00:00Z"]
TEXT = ["a" * MAX_TEXT_CHARS, "a" * (MAX_TEXT_CHARS + 1), "x\ty", "x\x1by", "u", "=HYPERLINK(\"x\")"]
ROW = st.fixed_dictionaries({
    "job_id": st.sampled_from(TEXT), "user": st.sampled_from(TEXT), "submit": st.sampled_from(TIMES),
    "wait": st.sampled_from(["", "0", "300"]), "run": st.sampled_from(["", "0", "3600"]),
    **{column: st.sampled_from(_edges(column)) for column in ("gpus", "priority", "memory_gib", "cpus", "nodes",
                                                              "requested_runtime_s")}})


def _csv(rows: list[dict]) -> tuple[bytes, int]:
    """The jobs file of `rows` (start = submit + wait, end = start + run, when given) and its line count."""
    import pandas as pd

    lines = [HEADER]
    for i, row in enumerate(rows):
        submit = pd.Timestamp(row["submit"])
        start = submit + pd.Timedelta(seconds=float(row["wait"])) if row["wait"] else None
        end = start + pd.Timedelta(seconds=float(row["run"])) if start is not None and row["run"] else None
        fields = {**row, "job_id": f"{row['job_id']}{i}", "start": start.isoformat() if start else "",
                  "end": end.isoformat() if end else ""}
        lines.append(",".join(str(fields[c]) for c in HEADER.split(",")))
    return ("\n".join(lines) + "\n").encode(), len(lines)


def _fuzzed(examples: int):
    return lambda test: settings(max_examples=examples, deadline=None, derandomize=True,
                                 suppress_health_check=[HealthCheck.function_scoped_fixture])(
        given(st.lists(ROW, min_size=1, max_size=4))(test))


def _accepted_then_simulated(tmp_path, rows) -> None:
    data, count = _csv(rows)
    db = tmp_path / "fuzz.duckdb"
    store = Store.open(db)
    try:
        result = ingest_bytes(store, data, "fuzz.csv")
    except ImportRejected as exc:
        assert exc.errors and all(1 <= e.line <= count and e.file == "fuzz.csv" for e in exc.errors), exc.lines()
        return
    finally:
        store.close()
    assert main(["simulate", "--dataset", result.dataset, "--scenario", "recorded", "--days", "1",
                 "--db", str(db)]) == 0
    store = Store.open(db)
    store.delete_dataset(result.dataset)
    store.close()


@_fuzzed(12)
def test_what_the_contract_accepts_simulates(tmp_path, rows):
    _accepted_then_simulated(tmp_path, rows)


@pytest.mark.slow
@_fuzzed(200)
def test_what_the_contract_accepts_simulates_deeper(tmp_path, rows):
    _accepted_then_simulated(tmp_path, rows)
