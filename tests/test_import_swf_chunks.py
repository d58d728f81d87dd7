"""An SWF log read in pieces (issue 28, item 3): the same jobs, fleet, notes, problems and lines as the log read
in one piece, the header read from the whole log, counted notes added up, and one transaction: a bad line in
the last piece leaves the database file byte for byte as it was."""
import hashlib
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cli.main import main
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import swf
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf

WHOLE = 1 << 30


def job(k: int, procs: int = 4, status: int = 1, group: int = -1, run: int = 10) -> str:
    return f"{k} {k} 1 {run} {procs} -1 -1 {procs} 20 -1 {status} {k % 3} {group} -1 1 -1 -1 -1"


def outcome(text: bytes, chunk_bytes: int, options: ImportOptions | None = None):
    """What parse_swf makes of `text` read in pieces of `chunk_bytes`: every table and the notes, or the problems."""
    with mock.patch.object(swf, "CHUNK_BYTES", chunk_bytes):
        try:
            batch = parse_swf(text, "s.swf", options or ImportOptions())
        except ImportRejected as exc:
            return ("rejected", exc.total, [str(e) for e in exc.errors])
    tables = {name: frame.to_csv(index=False) for name, frame in batch.tables.items()}
    return ("imported", tables, batch.notes, batch.scheduler, [str(e) for e in batch.rejects])


_LINES = st.sampled_from([
    job(1), job(2, procs=16, group=3), job(3, status=-1), job(4, status=5, run=-1), job(5, status=-1, run=-1),
    job(6, status=3), job(1, procs=2), job(7, procs=-1), "1 2 3", "1 0 1 x 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1",
    "9 0 1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 1e999", job(8, run=10**12), "", "   ", "; a comment",
    "; MaxProcs: 32", "; UnixStartTime: 1000", "; TimeZoneString: Europe/Stockholm", "; Note: uses the EASY scheduler",
    "\t" + job(9) + " ", job(10) + "\r"])


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_LINES, max_size=14), keep=st.booleans(), size=st.integers(1, 160))
def test_pieces_of_any_size_give_what_one_piece_gives(lines, keep, size):
    text = ("\n".join(lines) + "\n").encode()
    options = ImportOptions(keep_valid=keep)
    assert outcome(text, size, options) == outcome(text, WHOLE, options)


def test_notes_and_the_fleet_add_up_over_pieces_by_hand():
    # Three one-line pieces: the largest job (6 processors) is in the last; one status -1 with a run time in the
    # second; groups only in the third, so the two jobs of the first two pieces take their user as their team.
    text = "\n".join([job(1, procs=4), job(2, procs=2, status=-1), job(3, procs=6, group=7)]).encode()
    kind, tables, notes, scheduler, rejects = outcome(text, 1)
    assert outcome(text, WHOLE) == (kind, tables, notes, scheduler, rejects)
    assert notes == [
        "SWF logs describe CPU clusters: each processor is treated as one slot (gpus = cpus = processors, gpu type "
        "'cpu')",
        "no MaxNodes/MaxProcs header: fleet sized to the largest job (6 processors)",
        "no UnixStartTime header: submit times are counted from 1970-01-01 00:00 UTC",
        "status unknown (-1) for 1 job(s) with a run time: stored as completed",
        "2 job(s) without a group (-1) take their user as their team",
        "fleet: 6 nodes with 6 processors in all, tier 'reserved' (on-premise hardware is paid for whether used or "
        "not)"]
    teams = [row.split(",")[3] for row in tables["jobs"].splitlines()[1:]]
    assert teams == ["u1", "u2", "g7"]


def test_a_header_comment_among_late_jobs_counts_as_in_one_piece():
    text = ("\n".join(job(k) for k in range(1, 200)) + "\n; MaxProcs: 64\n" + job(200) + "\n").encode()
    whole = outcome(text, WHOLE)
    assert outcome(text, 256) == whole
    assert "fleet: 64 nodes with 64 processors in all" in whole[2][-1]


def test_a_bad_line_in_a_late_piece_names_its_line():
    text = ("; UnixStartTime: 0\n" + "\n".join(job(k) for k in range(1, 3000)) + "\n1 2 3\n").encode()
    assert outcome(text, 2048) == outcome(text, WHOLE) == (
        "rejected", 1, ["s.swf:3001: expected 18 numeric fields, found 3"])
    bad_utf8 = text.replace(b"\n2500 2500 ", b"\n2500 25\xe900 ")
    assert outcome(bad_utf8, 2048) == outcome(bad_utf8, WHOLE) == (
        "rejected", 1, ["s.swf:2501: byte 0xe9 at column 8 is not valid UTF-8; save the file as UTF-8"])


def test_a_bad_last_line_leaves_the_database_file_byte_for_byte_as_it_was(tmp_path, capsys):
    db = tmp_path / "m.duckdb"
    (tmp_path / "base.swf").write_text("\n".join(job(k) for k in range(1, 6)) + "\n")
    assert main(["ingest", str(tmp_path / "base.swf"), "--db", str(db)]) == 0
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    bad = tmp_path / "big.swf"
    bad.write_text("\n".join(job(k) for k in range(1, 5000)) + "\n" + job(5000, procs=-1) + "\n")
    capsys.readouterr()
    with mock.patch.object(swf, "CHUNK_BYTES", 4096):   # about 60 pieces, the bad line in the last
        assert main(["ingest", str(bad), "--db", str(db)]) == 2
    assert f"{bad}:5000: fields 5 and 8 (allocated and requested processors) are both unknown (-1)" in \
        capsys.readouterr().err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
