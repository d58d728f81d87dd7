"""The data contract beyond jobs CSVs (issue 28 item 2): SWF logs, openb node and pod lists, utilisation series and
the sample bundle's fleet and prices are checked against the ranges declared once in
engine/telemetry/importers/contract.py, each problem named with the file, its line and the limit."""
import shutil

import pytest

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import parser_for
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.contract import BUNDLE_NUMBERS, SWF_FIELDS
from engine.telemetry.sample import _TYPES, SAMPLE_DIR, read_bundle

SWF_JOB = "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1"


def _swf_line(**fields) -> str:
    """SWF_JOB with fields (by 1-based number, f<k>=value) replaced."""
    parts = SWF_JOB.split()
    for key, value in fields.items():
        parts[int(key[1:]) - 1] = value
    return " ".join(parts)


def _problems(fmt: str, text: str, source: str = "in.txt") -> list[str]:
    with pytest.raises(ImportRejected) as caught:
        parser_for(fmt)(text.encode(), source, ImportOptions())
    return caught.value.lines()


SWF_CASES = {   # fields of line 3 -> the problem reported
    (("f7", "-2"),): "negative value '-2' in field 7 (used memory), where only -1 (unknown) may be below 0",
    (("f11", "2.5"),): "'2.5' in field 11 (status) is not a whole number",
    (("f5", "3.5"),): "'3.5' in field 5 (allocated processors) is not a whole number",
    (("f18", "-9"),): "negative value '-9' in field 18 (think time), where only -1 (unknown) may be below 0",
    (("f12", "1e16"),): "value '1e+16' in field 12 (user id) is above 9007199254740991",
    (("f9", "4e9"),): "value '4e+09' in field 9 (requested time) is above 3153600000",
}


@pytest.mark.parametrize("fields", sorted(SWF_CASES))
def test_an_swf_field_outside_the_standard_is_refused_with_its_line(fields):
    text = "; UnixStartTime: 1700000000\n" + SWF_JOB + "\n" + _swf_line(**dict(fields)) + "\n"
    assert _problems("swf", text, "log.swf") == [f"log.swf:3: {SWF_CASES[fields]}"]


def test_an_swf_header_starting_outside_1970_2100_is_refused():
    assert _problems("swf", f"; Computer: x\n;  unixstarttime : -5\n{SWF_JOB}\n", "log.swf") == [
        "log.swf:2: the header's UnixStartTime (-5) is outside 1970-2100"]


def test_every_swf_field_is_declared_once():
    assert len(SWF_FIELDS) == 18
    assert [name for name, limit in SWF_FIELDS.items() if limit.unknown is None] == ["job id", "submit time"]


NODES = "sn,cpu_milli,memory_mib,gpu,model\n"
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
OTHER_CASES = [
    ("openb-nodes", NODES + "n1,1000,10,2,T4\nn2,1e12,10,2,T4\n",
     "in.txt:3: value '1e12' in column 'cpu_milli' is above 10000000000"),
    ("openb-nodes", NODES + "n1,1000,10,2,T4\nn2,1000,10,2,T\x1b4\n",
     "in.txt:3: 'T\\x1b4' in column 'model' holds a control character (NUL, escape, ...)"),
    ("openb-nodes", NODES + "n1,1000,10,2,T4\nn2,1000,10.5,2,T4\n",
     "in.txt:3: '10.5' in column 'memory_mib' is not a whole number"),
    ("openb-pods", PODS + "p1,1000,10,1,1000,LS,Running,0,,0\n" + "p" * 300 + ",1000,10,1,1000,LS,Running,0,,0\n",
     f"in.txt:3: '{'p' * 57}...' in column 'name' is longer than 256 characters"),
    ("openb-pods", PODS + "p1,1000,10,1,1000,LS,Running,0,,0\np2,1000,10,1,1000,LS,Running,3e9,,\n",
     "in.txt:3: value '3e9' in column 'creation_time' is above 2.42991e+09"),
    ("utilization", "ts,busy,total\n2024-01-01T00:00:00Z,1,2\n9999-01-01T00:00:00Z,1,2\n",
     "in.txt:3: time '9999-01-01T00:00:00Z' in column 'ts' is outside 1970-2100"),
    ("utilization", "ts,busy,total\n2024-01-01T00:00:00Z,1,2\n2024-01-01T00:01:00Z,1,1e308\n",
     "in.txt:3: value '1e308' in column 'total' is above 10000000"),
    ("utilization", "ts,util_pct,region\n2024-01-01T00:00:00Z,10,eu\n2024-01-01T00:01:00Z,150,eu\n",
     "in.txt:3: value '150' in column 'util_pct' is above 100"),
    ("utilization", "ts,util_pct,region\n2024-01-01T00:00:00Z,10,eu\n2024-01-01T00:01:00Z,10,e\x07u\n",
     "in.txt:3: 'e\\x07u' in column 'region' holds a control character (NUL, escape, ...)"),
]


@pytest.mark.parametrize(("fmt", "text", "problem"), OTHER_CASES)
def test_openb_and_utilisation_values_outside_the_contract_are_refused_with_their_line(fmt, text, problem):
    assert _problems(fmt, text) == [problem]


@pytest.mark.parametrize(("file", "column", "value", "problem"), [
    ("fleet.csv", "gpus", "1000000000", "value 1000000000.0 in column 'gpus' is above 1048576"),
    ("prices.csv", "usd_per_gpu_hour", "-2", "negative value -2.0 in column 'usd_per_gpu_hour'"),
    ("prices.csv", "usd_per_gpu_hour", "1e308", "value 1e+308 in column 'usd_per_gpu_hour' is above 10000"),
])
def test_a_bundle_value_outside_the_contract_is_refused_with_its_line(tmp_path, file, column, value, problem):
    folder = tmp_path / "bundle"
    shutil.copytree(SAMPLE_DIR, folder)
    lines = (folder / file).read_text().splitlines()
    header = lines[0].split(",")
    row = lines[2].split(",")
    row[header.index(column)] = value
    lines[2] = ",".join(row)
    (folder / file).write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportRejected) as caught:
        read_bundle(folder)
    assert caught.value.lines() == [f"{folder / file}:3: {problem}"]


def test_every_number_of_the_bundle_has_a_declared_range():
    for table, types in _TYPES.items():
        assert {c for c, kind in types.items() if str(kind) in ("double", "int32")} <= set(BUNDLE_NUMBERS[table])
