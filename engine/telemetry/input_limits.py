"""The resource limits of every import: which files are read, how large, and how far gzip may expand.

Every path that reads telemetry or a trace (`meridian ingest`, `--trace`, the experiments' readers, the
Data page's upload) goes through here, so that a careless or hostile input ends in one clear line naming
the file instead of a hang or an exhausted memory:

| what                                         | limit                                              |
|----------------------------------------------|----------------------------------------------------|
| kind of file                                 | a regular file (or a symlink to one); no device,   |
|                                              | FIFO, socket, folder or symlink loop               |
| a file as stored or uploaded                 | MAX_FILE_BYTES (512 MiB; the dashboard's upload    |
|                                              | limit, .streamlit/config.toml, is 500 MB)          |
| content after gzip decompression             | MAX_TEXT_BYTES (1 GiB)                             |
| gzip expansion                               | MAX_EXPANSION (100 x the compressed size) once the |
|                                              | content passes EXPANSION_FLOOR (16 MiB)            |

Memory (benchmarks/bench_ingest_memory.py, in benchmarks/RESULTS.md), above the ~160 MiB Python, pandas and
DuckDB take: a jobs CSV is read in pieces of CHUNK_BYTES (8 MiB) of text and appended as it is read
(importers.csv_chunks, generic_csv.CsvJobs), and needs at most STREAMED_PER_TEXT_BYTE (2) bytes per byte
of text (the content once decompressed, held whole) plus STREAMED_FIXED (512 MiB): with MAX_TEXT_BYTES at
most 2.5 GiB, and a machine with M GiB free imports up to (M - 0.5) / 2 GiB of CSV text. An SWF log is read
the same way (importers.swf) and needs SWF_STREAMED_PER_TEXT_BYTE (3) bytes per byte plus STREAMED_FIXED:
about 64 bytes of its text are a job, against about 144 in a CSV, and the appended rows are held until the
transaction commits (measured: SDSC-BLUE, 21.5 MiB of text, peaks 247 MiB over the floor; its 1.95M-job
8-fold copy, 125.1 MiB, 560 MiB: 3.0 MiB more per MiB of text added). The other formats
are read whole and need about MEMORY_PER_TEXT_BYTE (12) bytes per byte of text: M / 12 GiB. Text that
would need more than the memory available now (Linux's MemAvailable) is refused before it is parsed,
instead of exhausting the memory (check_memory; memory_text says it in one sentence).

Real logs expand 5-10 times (the Parallel Workloads Archive's SWF logs, the sample's jobs.csv.gz); a
gzip bomb expands about 1,000 times. Decompression stops at the first byte past a limit, so a bomb costs
at most the limit in memory, never its full expansion.
"""
from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from engine.telemetry.errors import ImportRejected

MIB = 1 << 20
MAX_FILE_BYTES = 512 * MIB
MAX_TEXT_BYTES = 1024 * MIB
MAX_EXPANSION = 100
EXPANSION_FLOOR = 16 * MIB
MEMORY_PER_TEXT_BYTE = 12
CHUNK_BYTES = 8 * MIB    # a jobs CSV is read in pieces of about this much text (importers.csv_chunks)
STREAMED_PER_TEXT_BYTE = 2      # memory per byte of text of an import read in chunks ...
STREAMED_FIXED = 512 * MIB      # ... above the floor, plus this for the chunk being read and DuckDB's buffers
SWF_STREAMED_PER_TEXT_BYTE = 3  # an SWF log read in chunks: more rows per byte of text, held by DuckDB till commit
CSV_ROW_BYTES = 144             # a row of benchmarks/bench_import_csv.py's 18-column jobs CSV, for "how many jobs"
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 4 * MIB
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def limits_text() -> str:
    """The limits in one sentence, for the Data page and the CLI's help."""
    return (f"a regular file of at most {MAX_FILE_BYTES // MIB:,} MiB; gzip content may expand to at most "
            f"{MAX_TEXT_BYTES // MIB:,} MiB and {MAX_EXPANSION} times its compressed size")


def read_input(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file `path` (symlinks followed); ImportRejected naming the file when it is
    no regular file, cannot be read or is larger than `limit` bytes.

    The file is opened without blocking (a FIFO would otherwise wait for a writer) and checked on the
    opened descriptor, so what is checked is what is read.
    """
    source = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ImportRejected.whole_file(source, f"cannot read file ({exc.strerror or exc})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "a special file")
        raise ImportRejected.whole_file(source, f"not a regular file but {kind}; give a file that holds the data")
    if info.st_size > limit:
        os.close(fd)
        raise ImportRejected.whole_file(source, _too_large(info.st_size, limit))
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(limit + 1)      # a file that grows while it is read stops at the limit too
        except OSError as exc:
            raise ImportRejected.whole_file(source, f"cannot read file ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise ImportRejected.whole_file(source, _too_large(len(data), limit))
    return data


def check_size(data: bytes, source: str, *, limit: int = MAX_FILE_BYTES) -> None:
    """ImportRejected naming `source` when content handed over in memory (an upload) exceeds `limit`."""
    if len(data) > limit:
        raise ImportRejected.whole_file(source, _too_large(len(data), limit))


def gunzip_bounded(data: bytes, source: str, *, limit: int = MAX_TEXT_BYTES, ratio: int = MAX_EXPANSION,
                   floor: int = EXPANSION_FLOOR) -> bytes:
    """Decompress gzip `data` (every member of a multi-member file) chunk by chunk, stopping with
    ImportRejected naming `source` as soon as the output passes `limit` bytes, or passes both `floor`
    bytes and `ratio` times the compressed size."""
    cap = min(limit, max(floor, ratio * len(data)))
    parts, size, rest = [], 0, data
    while rest[:2] == GZIP_MAGIC:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = rest
        while not inflater.eof:
            try:
                chunk = inflater.decompress(pending, min(_CHUNK, cap + 1 - size))
            except zlib.error as exc:
                raise ImportRejected.whole_file(source, f"corrupt gzip file ({exc})") from None
            size += len(chunk)
            if size > cap:
                raise ImportRejected.whole_file(source, _bomb(len(data), cap, limit))
            parts.append(chunk)
            pending = inflater.unconsumed_tail
            if not chunk and not pending:     # input used up before the member's end
                break
        if not inflater.eof:
            raise ImportRejected.whole_file(source, "corrupt gzip file (Compressed file ended before the "
                                                    "end-of-stream marker was reached)")
        rest = inflater.unused_data
    if rest.strip(b"\x00"):
        raise ImportRejected.whole_file(source, "corrupt gzip file (data after its last member is not gzip)")
    return b"".join(parts)


def memory_needed(text_bytes: int, *, streamed: bool = False, per_byte: int = STREAMED_PER_TEXT_BYTE) -> int:
    """Bytes of memory above the floor (Python, pandas, DuckDB loaded) that importing `text_bytes` of text
    needs: read whole, MEMORY_PER_TEXT_BYTE per byte; read in chunks, `per_byte` per byte (a jobs CSV:
    STREAMED_PER_TEXT_BYTE; an SWF log: SWF_STREAMED_PER_TEXT_BYTE) plus STREAMED_FIXED."""
    if streamed:
        return per_byte * text_bytes + STREAMED_FIXED
    return MEMORY_PER_TEXT_BYTE * text_bytes


def memory_text(available: int | None = None) -> str:
    """The memory an import needs, and how much a file may hold on this machine now (`available` bytes;
    default: MemAvailable), in one sentence for the Data page and the CLI."""
    available = _available() if available is None else available
    rule = (f"an import needs about {STREAMED_PER_TEXT_BYTE} MiB of memory per MiB of text (the content once "
            f"decompressed) plus {STREAMED_FIXED // MIB:,} MiB for a jobs CSV, read in chunks, "
            f"{SWF_STREAMED_PER_TEXT_BYTE} MiB per MiB plus {STREAMED_FIXED // MIB:,} MiB for an SWF log, read in "
            f"chunks too, and about {MEMORY_PER_TEXT_BYTE} MiB per MiB for the other formats")
    if available is None:
        return rule
    csv = min(MAX_TEXT_BYTES, max(0, available - STREAMED_FIXED) // STREAMED_PER_TEXT_BYTE)
    swf = min(MAX_TEXT_BYTES, max(0, available - STREAMED_FIXED) // SWF_STREAMED_PER_TEXT_BYTE)
    other = min(MAX_TEXT_BYTES, available // MEMORY_PER_TEXT_BYTE)
    return (f"{rule}: with the {available / MIB:,.0f} MiB available now, a jobs CSV of up to {csv / MIB:,.0f} MiB "
            f"of text (about {csv // CSV_ROW_BYTES:,} jobs of {CSV_ROW_BYTES} bytes), an SWF log of up to "
            f"{swf / MIB:,.0f} MiB and other files of up to "
            f"{other / MIB:,.0f} MiB")


def check_memory(text_bytes: int, source: str, *, streamed: bool = False, per_byte: int = STREAMED_PER_TEXT_BYTE,
                 available: int | None = None) -> None:
    """ImportRejected naming `source` when importing `text_bytes` of text (read whole, or `streamed` in
    chunks, `per_byte` per byte: memory_needed) would need more memory than is `available` (default: MemAvailable now; nothing is checked where
    the system does not say)."""
    available = _available() if available is None else available
    needed = memory_needed(text_bytes, streamed=streamed, per_byte=per_byte)
    if available is not None and needed > available:
        raise ImportRejected.whole_file(source, f"{text_bytes / MIB:,.0f} MiB of text needs about {needed / MIB:,.0f} "
                                                f"MiB of memory to import, and {available / MIB:,.0f} MiB are "
                                                "available; split the file, or import it on a larger machine")


def _available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            return next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def _too_large(size: int, limit: int) -> str:
    return (f"file is {size / MIB:,.1f} MiB, more than the {limit / MIB:,.0f} MiB an import reads; split it "
            "into smaller files and import them into one dataset")


def _bomb(compressed: int, cap: int, limit: int) -> str:
    what = (f"more than {limit / MIB:,.0f} MiB" if cap == limit
            else f"more than {cap / MIB:,.0f} MiB, over {cap // max(compressed, 1):,} times its compressed size")
    return f"gzip content expands to {what}; refused as a possible decompression bomb (limits: {limits_text()})"
