"""Resource bombs and files that are no files (issue 28, item 3): /dev/zero, a FIFO, a folder, a symlink loop,
a symlink to a device and a gzip bomb made here (small on disk) are each refused with one line naming the
file, by the CLI, the store's import, the Data page's upload path and the experiments' trace readers, and
the database is left exactly as it was (its tables' content, and the file itself for the CLI)."""
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.service.experiments.openb_inputs import load_pods
from engine.service.experiments.swf_jobs import load_swf_jobs
from engine.telemetry.errors import ImportRejected
from engine.telemetry.ingest import ingest_bytes, ingest_path
from engine.telemetry.input_limits import (
    MIB,
    SWF_STREAMED_PER_TEXT_BYTE,
    check_memory,
    check_size,
    gunzip_bounded,
    memory_needed,
    memory_text,
    read_input,
)
from engine.telemetry.sample import BUNDLE_FILES, SAMPLE_DIR
from engine.telemetry.store import Store

ROOT = Path(__file__).resolve().parents[1]
SWF_LINE = b"1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
BASE_CSV = "job_id,user,submit,gpus\nA,ann,2024-05-01T10:00:00Z,1\nB,bob,2024-05-01T11:00:00Z,2\n"
BOMB_TEXT = 40 * MIB        # expands about 1,000 times: refused at the 16 MiB floor of the ratio limit
NOT_REGULAR = "not a regular file but"
BOMB = "refused as a possible decompression bomb"
# case -> the reason the import gives (the folder is an import's sample bundle; a trace reader refuses it)
EXPECTED = {"zero": f"{NOT_REGULAR} a character device", "fifo": f"{NOT_REGULAR} a FIFO (named pipe)",
            "folder": "a folder must be one written by `meridian sample`", "loop": "Too many levels of symbolic links",
            "to-zero": f"{NOT_REGULAR} a character device", "bomb.swf.gz": BOMB}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    """Each hostile input by case name."""
    folder = tmp_path_factory.mktemp("hostile")
    os.mkfifo(folder / "fifo")
    (folder / "folder").mkdir()
    (folder / "loop").symlink_to(folder / "loop-back")
    (folder / "loop-back").symlink_to(folder / "loop")
    (folder / "to-zero").symlink_to("/dev/zero")
    bomb = folder / "bomb.swf.gz"
    bomb.write_bytes(gzip.compress(SWF_LINE * (BOMB_TEXT // len(SWF_LINE)), compresslevel=9, mtime=0))
    assert bomb.stat().st_size < 200_000
    return {"zero": Path("/dev/zero"), **{name: folder / name for name in EXPECTED if name != "zero"}}


@pytest.fixture
def store(tmp_path):
    """A store holding the dataset 'base' (two jobs)."""
    store = Store.open(tmp_path / "meridian.duckdb")
    (tmp_path / "base.csv").write_text(BASE_CSV)
    assert ingest_path(store, tmp_path / "base.csv").rows == 2
    yield store
    store.close()


def snapshot(store: Store) -> str:
    """A digest of every row of every table."""
    digest = hashlib.sha256()
    for (table,) in store.con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall():
        digest.update(table.encode())
        digest.update(repr(store.con.execute(f'SELECT * FROM "{table}" ORDER BY ALL').fetchall()).encode())
    return digest.hexdigest()


def refusal(call) -> str:
    """The one problem `call` is refused with, as printed ('file: reason')."""
    with pytest.raises(ImportRejected) as caught:
        call()
    assert caught.value.total == 1 and len(caught.value.lines()) == 1
    return caught.value.lines()[0]


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_the_store_refuses_it_and_stays_as_it_was(store, hostile, case):
    before = snapshot(store)
    line = refusal(lambda: ingest_path(store, hostile[case]))
    assert line.startswith(f"{hostile[case]}: ") and EXPECTED[case] in line, line
    assert snapshot(store) == before


@pytest.fixture(scope="module")
def cli_db(tmp_path_factory) -> Path:
    """A database file the console script created, holding the sample and the dataset 'base'."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "base.csv").write_text(BASE_CSV)
    proc = subprocess.run([sys.executable, "-m", "engine.cli", "ingest", str(folder / "base.csv"), "--db",
                           str(folder / "cli.duckdb")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return folder / "cli.duckdb"


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_the_cli_refuses_it_in_one_line_and_leaves_the_database_file_as_it_was(cli_db, hostile, case, capsys):
    before = hashlib.sha256(cli_db.read_bytes()).hexdigest()
    assert main(["ingest", str(hostile[case]), "--db", str(cli_db)]) == 2
    first, summary = capsys.readouterr().err.splitlines()
    assert first.startswith(f"{hostile[case]}: ") and EXPECTED[case] in first, first
    assert summary == "meridian: 1 problem found; nothing was imported"
    assert hashlib.sha256(cli_db.read_bytes()).hexdigest() == before


def test_the_upload_path_refuses_a_bomb_and_stays_as_it_was(store, hostile):
    before = snapshot(store)
    line = refusal(lambda: ingest_bytes(store, hostile["bomb.swf.gz"].read_bytes(), "upload.swf.gz"))
    assert line.startswith("upload.swf.gz: gzip content expands to more than 16 MiB") and BOMB in line, line
    assert snapshot(store) == before


@pytest.mark.parametrize("case", sorted(EXPECTED))
@pytest.mark.parametrize("reader", [load_swf_jobs, load_pods])
def test_the_trace_readers_refuse_it(hostile, case, reader):
    line = refusal(lambda: reader(hostile[case]))
    assert trace_reason(case) in line and hostile[case].name in line, line


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_simulate_on_a_trace_refuses_it_in_one_line(hostile, case, capsys):
    assert main(["simulate", "--trace", str(hostile[case]), "--scenario", "recorded"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"{hostile[case]}: ") and trace_reason(case) in first, first


def trace_reason(case: str) -> str:
    """A trace reader reads no sample bundle: a folder is refused as one."""
    return f"{NOT_REGULAR} a folder" if case == "folder" else EXPECTED[case]


def test_decompression_stops_at_the_absolute_limit():
    data = gzip.compress(os.urandom(3 * MIB))     # incompressible: far below any ratio
    line = refusal(lambda: gunzip_bounded(data, "big.csv.gz", limit=2 * MIB))
    assert line.startswith("big.csv.gz: gzip content expands to more than 2 MiB;"), line
    assert gunzip_bounded(data, "big.csv.gz", limit=3 * MIB) == gzip.decompress(data)


def test_content_larger_than_the_file_limit_is_refused(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(b"x" * (MIB + 1))
    assert "file is 1.0 MiB, more than the 1 MiB an import reads" in refusal(lambda: read_input(path, limit=MIB))
    assert "more than the 1 MiB" in refusal(lambda: check_size(path.read_bytes(), "big.csv", limit=MIB))


def test_gzip_members_and_padding_read_as_gzip_does_and_damage_is_named():
    text = b"".join(SWF_LINE for _ in range(1000))
    two = gzip.compress(text[:20_000]) + gzip.compress(text[20_000:]) + b"\x00" * 8
    assert gunzip_bounded(two, "two.gz") == text
    assert "corrupt gzip file (Compressed file ended before the end-of-stream marker" in refusal(
        lambda: gunzip_bounded(two[:200], "cut.gz"))
    assert "data after its last member is not gzip" in refusal(lambda: gunzip_bounded(two + b"junk", "tail.gz"))


def test_text_that_would_need_more_memory_than_is_available_is_refused_before_parsing():
    line = refusal(lambda: check_memory(100 * MIB, "huge.csv", available=1000 * MIB))
    assert line == ("huge.csv: 100 MiB of text needs about 1,200 MiB of memory to import, and 1,000 MiB are "
                    "available; split the file, or import it on a larger machine")
    check_memory(100 * MIB, "huge.csv", available=1200 * MIB)
    check_memory(MIB, "small.csv")     # what this machine has now: a small file always passes


def test_a_jobs_csv_read_in_chunks_needs_twice_its_text_and_512_mib():
    line = refusal(lambda: check_memory(300 * MIB, "big.csv", streamed=True, available=1000 * MIB))
    assert line.startswith("big.csv: 300 MiB of text needs about 1,112 MiB of memory to import, and 1,000 MiB"), line
    check_memory(300 * MIB, "big.csv", streamed=True, available=1112 * MIB)
    assert memory_needed(300 * MIB, streamed=True) == 1112 * MIB and memory_needed(300 * MIB) == 3600 * MIB
    # an SWF log read in chunks: 3 x 300 + 512 = 1,412 MiB
    assert memory_needed(300 * MIB, streamed=True, per_byte=SWF_STREAMED_PER_TEXT_BYTE) == 1412 * MIB


def test_the_memory_rule_says_what_a_machine_of_a_given_size_takes():
    # 2 GiB free: (2,048 - 512) / 2 = 768 MiB of CSV text, 768 MiB / 144 bytes = 5,592,405 jobs; (2,048 - 512) / 3
    # = 512 MiB of SWF text; 2,048 / 12 = 171 MiB
    assert memory_text(2048 * MIB).endswith("with the 2,048 MiB available now, a jobs CSV of up to 768 MiB of text "
                                            "(about 5,592,405 jobs of 144 bytes), an SWF log of up to 512 MiB and "
                                            "other files of up to 171 MiB")
    # 24 GiB free: the 1 GiB text limit decides, not the memory
    assert "a jobs CSV of up to 1,024 MiB of text (about 7,456,540 jobs" in memory_text(24 * 1024 * MIB)
    assert "a jobs CSV of up to 0 MiB" in memory_text(400 * MIB)


def test_a_sample_bundle_with_a_bomb_for_its_jobs_is_refused_and_the_store_stays_as_it_was(store, tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for name in BUNDLE_FILES.values():
        shutil.copy(SAMPLE_DIR / name, bundle / name)
    row = b"job-1,u,t,p,training,q,2026-08-03 00:00:00,,,1,H100,us-east,pending\n"
    (bundle / "jobs.csv.gz").write_bytes(gzip.compress(row * (BOMB_TEXT // len(row)), compresslevel=9))
    before = snapshot(store)
    line = refusal(lambda: ingest_path(store, bundle))
    assert line.startswith(f"{bundle / 'jobs.csv.gz'}: gzip content expands") and BOMB in line, line
    assert snapshot(store) == before
