"""The data contract (engine/telemetry/importers/contract.py, issue 28 item 2): the hostile jobs files that used to
import and then break `simulate` are refused with their line (the fuzz tests of every format built from the
contract's edges are in tests/test_data_contract_fuzz.py)."""
import pytest

from engine.cli.main import main
from engine.telemetry.errors import ImportRejected
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
