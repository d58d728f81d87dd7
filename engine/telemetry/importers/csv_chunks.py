"""Read a delimited file in pieces of about CHUNK_BYTES, each a table of whole records, so that what an import
holds beside the file's text is bounded by the piece, not by the file (issue 28, item 3).

A piece ends at the last line end outside quotes within CHUNK_BYTES of its start (a record longer than that
makes the piece longer), so no record is split, and line numbers stay the file's physical lines. Each piece is
read by csv_records' fast reader (or its exact one where the fast one declines), after its bytes are checked
to be UTF-8. Counting quotes to find record ends is what the fast reader trusts only when every quote sits
where RFC 4180 allows it and lines end in LF or CRLF: from the first piece where that does not hold (a stray
quote, a lone CR, a NUL byte) to the end of the file, the exact reader (Python's csv module) reads the rest,
decoded as it goes, in tables of EXACT_CHUNK_ROWS rows.
"""
from __future__ import annotations

import codecs
import io
from collections.abc import Iterator

import numpy as np

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import not_utf8
from engine.telemetry.importers.contract import check_header
from engine.telemetry.importers.csv_records import (
    _CR,
    _LF,
    _QUOTE,
    CSV,
    CsvTable,
    Dialect,
    _quotes_are_regular,
    _read_fast,
    _scan,
    read_exact_chunks,
)
from engine.telemetry.input_limits import CHUNK_BYTES

EXACT_CHUNK_ROWS = 100_000


def csv_chunks(text: bytes, source: str, wanted_of, dialect: Dialect = CSV, *,
               chunk_bytes: int | None = None) -> Iterator[CsvTable]:
    """The tables of `text` (a file's bytes once decompressed, from `source`), piece by piece, each with the
    header (`wanted_of(header) -> header indexes to keep`, as read_csv_table) and the rows of its piece;
    ImportRejected for a file without a header, a header outside the data contract, bytes that are not UTF-8
    or a row the csv module cannot read, with the line. `chunk_bytes`: the pieces' size (default CHUNK_BYTES)."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    def checked(header: list[str], line: int) -> list[int]:
        check_header(header, line, source)
        return wanted_of(header)

    pos = len(codecs.BOM_UTF8) if text.startswith(codecs.BOM_UTF8) else 0
    line, known = 0, None          # physical lines before pos; the first table with the header
    while pos < len(text):
        end = _piece_end(text, pos, chunk_bytes, dialect)
        if end is None:            # from here on only the exact reader can be trusted
            tables = read_exact_chunks(_rest(text, pos, line, source, chunk_bytes), source, checked, dialect,
                                       known=known, line=line, rows_per_chunk=EXACT_CHUNK_ROWS)
            for table in tables:
                if table.header:
                    known = known or _header_of(table)
                    yield table
            break
        piece = text[pos:end]
        table = _read_piece(piece, _decoded(text, pos, end, line, source), line, source, checked, dialect, known)
        if table.header:
            known = known or _header_of(table)
            yield table
        line += piece.count(b"\n")
        pos = end
    if known is None:
        raise ImportRejected.whole_file(source, dialect.no_header())


def _header_of(table: CsvTable) -> CsvTable:
    """What later pieces need of the first table: its header and the columns kept, without its rows."""
    return CsvTable(table.header, dict.fromkeys(table.columns), table.lines[:0], [], table.header_line)


def _read_piece(piece: bytes, decoded: str, line: int, source: str, wanted_of, dialect: Dialect,
                known: CsvTable | None) -> CsvTable:
    records = _scan(piece, dialect)
    if records is not None:
        records.lines += line
        table = _read_fast(piece, records, wanted_of, dialect, known)
        if table is not None:
            return table
    return next(read_exact_chunks(decoded, source, wanted_of, dialect, known=known, line=line))


def _rest(text: bytes, pos: int, line: int, source: str, size: int) -> io.TextIOWrapper:
    """The text from `pos` on as a stream for the exact reader (decoded as it is read, never as a whole),
    once its bytes are checked to be UTF-8 piece by piece (ImportRejected naming the line)."""
    start = pos
    while pos < len(text):
        end = text.find(b"\n", pos + size) + 1 or len(text)
        _decoded(text, pos, end, line, source)
        line += text.count(b"\n", pos, end)
        pos = end
    raw = io.BytesIO(text)     # shares the bytes: no copy
    raw.seek(start)
    return io.TextIOWrapper(raw, encoding="utf-8", newline="")


def _decoded(text: bytes, start: int, end: int, line: int, source: str) -> str:
    """text[start:end] as str; ImportRejected naming the line and column of the first byte that is not UTF-8."""
    try:
        return text[start:end].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(text[start:end], exc.start, source, line) from None


def _piece_end(text: bytes, pos: int, size: int, dialect: Dialect) -> int | None:
    """Where the piece starting at `pos` ends: just past the last line end outside quotes within `size` bytes
    (more when one record is longer), or the end of the text; None when the bytes up to that line end are not
    ones whose quotes can be counted (see the module)."""
    while pos + size < len(text):
        arr = np.frombuffer(text, np.uint8, count=size, offset=pos)
        lf = np.flatnonzero(arr == _LF)
        quotes = np.flatnonzero(arr == _QUOTE) if dialect.quoting else lf[:0]
        outside = lf[np.searchsorted(quotes, lf) % 2 == 0] if len(quotes) else lf
        if not len(outside):
            size *= 2
            continue
        cut = int(outside[-1]) + 1
        head, quotes = arr[:cut], quotes[quotes < cut]
        cr = np.flatnonzero(head == _CR)
        if (head == 0).any() or (head[cr + 1] != _LF).any() or (
                len(quotes) and not _quotes_are_regular(head, quotes, dialect.byte)):
            return None
        return pos + cut
    return len(text)
