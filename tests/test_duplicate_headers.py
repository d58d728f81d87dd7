"""A header naming a column twice is refused by every CSV importer (issue 28 item 2), with the file, the header's
line and the name: which of the two copies is meant cannot be guessed."""
import shutil

import pytest

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import parser_for
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.sample import SAMPLE_DIR, read_bundle

FILES = {   # format -> (content with a column named twice, the name reported)
    "csv": ("job_id,submit_utc,gpus,GPUS\nj,2024-01-01T00:00:00Z,1,2\n", "gpus"),
    "utilization": ("ts,busy,total,busy\n0,1,2,3\n", "busy"),
    "openb-nodes": ("sn,cpu_milli,memory_mib,gpu,model,sn\na,1,1,1,x,b\n", "sn"),
    "openb-pods": ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,qos\na,1,1,1,1,LS,BE\n", "qos"),
    "sacct": ("JobID|Submit|Start|End|State|AllocTRES|User| user |\n1|2024-01-01T00:00:00|||PENDING||a|b|\n", "User"),
}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_a_column_named_twice_is_refused_with_the_header_line(fmt):
    text, name = FILES[fmt]
    with pytest.raises(ImportRejected) as caught:
        parser_for(fmt)(("\n" + text).encode(), "twice.txt", ImportOptions(tz="UTC"))
    assert caught.value.lines() == [f"twice.txt:2: column {name!r} appears more than once in the header; rename "
                                    "or remove the copies"]


def test_empty_names_are_not_duplicates():
    """A spreadsheet's trailing empty columns, sacct's trailing '|': nothing to choose between."""
    batch = parser_for("csv")(b"job_id,submit_utc,gpus,,\nj,2024-01-01T00:00:00Z,1,,\n", "blank.csv", ImportOptions())
    assert len(batch.tables["jobs"]) == 1


@pytest.mark.parametrize(("table", "file"), [("fleet", "fleet.csv"), ("prices", "prices.csv")])
def test_a_bundle_file_naming_a_column_twice_is_refused(tmp_path, table, file):
    folder = tmp_path / "bundle"
    shutil.copytree(SAMPLE_DIR, folder)
    header, rest = (folder / file).read_text().split("\n", 1)
    last = header.split(",")[-1]
    (folder / file).write_text(header + "," + last.upper() + "\n" + "\n".join(r + ",x" for r in rest.splitlines()))
    with pytest.raises(ImportRejected) as caught:
        read_bundle(folder)
    assert caught.value.lines() == [f"{folder / file}:1: column {last!r} appears more than once in the header; "
                                    "rename or remove the copies"]
