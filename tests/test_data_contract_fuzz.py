"""Fuzzing the data contract (issue 28 items 2 and 8): hypothesis builds jobs CSVs from the contract's edges, and
SWF logs, openb node and pod lists and utilisation series from valid rows with a few values replaced by edges
of their declared ranges (engine/telemetry/importers/contract.py: each end, just past it, the middle, -1 for
unknown; the longest text, control characters; times at and past 1970 and 2100). Each file is refused cleanly,
every problem naming a line of it, or imported, after which `meridian simulate` runs on its dataset. A few
examples in CI, more under -m slow."""
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.cli.main import main
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.contract import (
    JOB_NUMBERS,
    MAX_TEXT_CHARS,
    OPENB_NODES,
    OPENB_PODS,
    SWF_FIELDS,
    UTILIZATION,
)
from engine.telemetry.ingest import ingest_bytes
from engine.telemetry.store import Store

TEXT = ["a" * MAX_TEXT_CHARS, "a" * (MAX_TEXT_CHARS + 1), "x\x1by", "x\ty", "=cmd|' /C calc'!A0", "x"]
TIMES = ["1970-01-01T00:00:00Z", "2099-12-31T23:00:00Z", "2100-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "1e12"]
JOBS = b"job_id,submit_utc,gpus,region\nj1,2024-05-01T10:00:00Z,1,eu\nj2,2024-05-01T11:00:00Z,2,eu\n"
NODES = b"sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,8,V100M16\nn2,32000,131072,0,\n"
PODS = (b"name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
        b"p1,4000,16384,1,1000,LS,Succeeded,0,600,10\n")


def _edges(limit) -> list[str]:
    step = 1 if limit.whole else 0.5
    values = [limit.low, limit.high, limit.low - step, limit.high + step, (limit.low + limit.high) / 2]
    return [f"{v:g}" for v in values] + ([f"{limit.unknown:g}"] if limit.unknown is not None else [])


def _row(base: dict[str, str], edges: dict[str, list[str]]):
    """A valid row `base` with up to two of its values replaced by edges of their columns."""
    return st.dictionaries(st.sampled_from(sorted(edges)), st.just(None), max_size=2).flatmap(
        lambda chosen: st.fixed_dictionaries({k: st.sampled_from(edges[k]) for k in chosen}).map(
            lambda changed: {**base, **changed}))


JOBS_HEADER = "job_id,user,submit,start,end,gpus,priority,memory_gib,cpus,nodes,requested_runtime_s"
JOB_ROW = st.fixed_dictionaries({
    "job_id": st.sampled_from(TEXT), "user": st.sampled_from(TEXT),
    "submit": st.sampled_from([*TIMES[:4], "2024-05-01T10:00:00Z"]),
    "wait": st.sampled_from(["", "0", "300"]), "run": st.sampled_from(["", "0", "3600"]),
    **{c: st.sampled_from(_edges(JOB_NUMBERS[c])) for c in ("gpus", "priority", "memory_gib", "cpus", "nodes",
                                                             "requested_runtime_s")}})


def _jobs_csv(rows: list[dict]) -> str:
    """The jobs file of `rows`: start = submit + wait, end = start + run, when given; job ids made unique."""
    lines = [JOBS_HEADER]
    for i, row in enumerate(rows):
        submit = pd.Timestamp(row["submit"])
        start = submit + pd.Timedelta(seconds=float(row["wait"])) if row["wait"] else None
        end = start + pd.Timedelta(seconds=float(row["run"])) if start is not None and row["run"] else None
        fields = {**row, "job_id": f"{row['job_id']}{i}", "start": start.isoformat() if start else "",
                  "end": end.isoformat() if end else ""}
        lines.append(",".join(str(fields[c]) for c in JOBS_HEADER.split(",")))
    return "\n".join(lines)


SWF_BASE = dict(zip(SWF_FIELDS, "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1".split()))
POD_BASE = dict(zip(PODS.decode().split("\n")[0].split(","), PODS.decode().split("\n")[1].split(",")))
NODE_BASE = dict(zip(NODES.decode().split("\n")[0].split(","), NODES.decode().split("\n")[1].split(",")))
UTIL_BASE = {"ts": "2024-05-01T10:00:00Z", "busy": "1", "total": "8", "region": "eu"}
FORMATS = {   # format -> (row strategy, file of the rows, the other file its dataset needs to simulate)
    "csv": (JOB_ROW, _jobs_csv, None),
    "swf": (_row(SWF_BASE, {k: _edges(limit) for k, limit in SWF_FIELDS.items()}),
            lambda rows: "; UnixStartTime: 1700000000\n; MaxNodes: 16\n; MaxProcs: 64\n" + "\n".join(
                " ".join([str(i + 1), *list(r.values())[1:]]) if r["job id"] == "1" else " ".join(r.values())
                for i, r in enumerate(rows)), None),
    "openb-nodes": (_row(NODE_BASE, {**{k: _edges(limit) for k, limit in OPENB_NODES.items()}, "sn": TEXT,
                                     "model": TEXT}), lambda rows: _csv(rows, "sn"), ("openb-pods", PODS)),
    "openb-pods": (_row(POD_BASE, {**{k: _edges(limit) for k, limit in OPENB_PODS.items()}, "name": TEXT,
                                   "qos": TEXT}), lambda rows: _csv(rows, "name"), ("openb-nodes", NODES)),
    "utilization": (_row(UTIL_BASE, {**{k: _edges(UTILIZATION[k]) for k in ("busy", "total")}, "ts": TIMES,
                                     "region": TEXT}), lambda rows: _csv(rows, None), ("csv", JOBS)),
}


def _csv(rows: list[dict], key: str | None) -> str:
    """The CSV of `rows`, the `key` column made unique per row (a suffix)."""
    lines = [",".join(rows[0])]
    lines += [",".join(f"{v}{i}" if k == key else v for k, v in row.items()) for i, row in enumerate(rows)]
    return "\n".join(lines)


CASES = st.sampled_from(sorted(FORMATS)).flatmap(
    lambda fmt: st.tuples(st.just(fmt), st.lists(FORMATS[fmt][0], min_size=1, max_size=3)))


def _fuzzed(examples: int):
    return lambda test: settings(max_examples=examples, deadline=None, derandomize=True,
                                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                        HealthCheck.too_slow])(given(CASES)(test))


def _refused_by_line_or_simulated(tmp_path, case) -> None:
    fmt, rows = case
    _, render, companion = FORMATS[fmt]
    text = render(rows) + "\n"
    db = tmp_path / f"fuzz-{len(list(tmp_path.iterdir()))}.duckdb"   # a new database for each example
    store = Store.open(db)
    try:
        if companion:
            ingest_bytes(store, companion[1], f"companion.{companion[0]}", format=companion[0], dataset="fuzz")
        before = store.content_digest()
        try:
            ingest_bytes(store, text.encode(), f"fuzz.{fmt}", format=fmt, dataset="fuzz", options=ImportOptions())
        except ImportRejected as exc:
            assert exc.errors and all(e.file == f"fuzz.{fmt}" and 1 <= e.line <= text.count("\n")
                                      for e in exc.errors), exc.lines()
            assert store.content_digest() == before
            event(f"{fmt}: refused")
            return
    finally:
        store.close()
    assert main(["simulate", "--dataset", "fuzz", "--scenario", "recorded", "--days", "1", "--db", str(db)]) == 0
    event(f"{fmt}: imported and simulated")


@_fuzzed(15)
def test_what_the_contract_accepts_from_every_format_simulates(tmp_path, case):
    _refused_by_line_or_simulated(tmp_path, case)


@pytest.mark.slow
@_fuzzed(250)
def test_what_the_contract_accepts_from_every_format_simulates_deeper(tmp_path, case):
    _refused_by_line_or_simulated(tmp_path, case)
