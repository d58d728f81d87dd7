"""Read a delimited text table (CSV, sacct's pipes) into string columns, each row tagged with its physical line.

The one reader every importer of delimited text uses. A `Dialect` names the delimiter and
whether double quotes quote fields (RFC 4180) or are ordinary characters (sacct prints job
names as they are).

Line numbers are 1-based physical lines of the file (the header is usually line 1); a row
whose quoted field spans several lines is reported at the line where it starts. Empty lines
and rows holding nothing but delimiters, quotes and whitespace are skipped; the first other
row is the header. A row with the wrong number of fields is listed in `bad_rows` (line,
fields found) and left out of the table; the caller words the message.

Two readers give the same answer:
- fast: numpy finds every record boundary (newlines outside quotes, by quote parity) and its
  field count, and pyarrow parses the values (multi-threaded); used when every quote in the
  file sits where RFC 4180 allows it and lines end in LF or CRLF, and only if pyarrow's row
  counts match the scan exactly;
- exact fallback: Python's csv module with `reader.line_num`, for anything else.
"""
from __future__ import annotations

import csv
import gc
import io
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from engine.telemetry.errors import ImportRejected, RowError
from engine.telemetry.importers.contract import check_header

_QUOTE, _LF, _CR = 34, 10, 13
_DELIMITER_NAMES = {",": "commas", "|": "pipes"}


@dataclass(frozen=True)
class Dialect:
    """delimiter: one ASCII character; quoting: double quotes enclose fields (else they are text)."""

    delimiter: str = ","
    quoting: bool = True

    @property
    def byte(self) -> int:
        return ord(self.delimiter)

    @property
    def blank(self) -> str:
        """Characters a skipped (blank) row may consist of."""
        return " \t\r" + self.delimiter + ('"' if self.quoting else "")

    def csv_reader(self, text: str | io.TextIOBase):
        """A csv reader of `text`, or of a text stream opened with newline="" (lines as io.StringIO splits them)."""
        lines = io.StringIO(text, newline="") if isinstance(text, str) else text
        return csv.reader(lines, delimiter=self.delimiter,
                          quoting=csv.QUOTE_MINIMAL if self.quoting else csv.QUOTE_NONE)

    def no_header(self) -> str:
        filler = _DELIMITER_NAMES.get(self.delimiter, repr(self.delimiter))
        return f"file has no header row (only blank lines, {filler}{' and quotes' if self.quoting else ''})"


CSV = Dialect()


@dataclass
class CsvTable:
    """header: column names as written; columns: header index -> text Series (the requested
    columns only); lines: physical line of each row; bad_rows: (line, fields found) of rows
    with the wrong number of fields; header_line: the header's physical line."""

    header: list[str]
    columns: dict[int, pd.Series]
    lines: np.ndarray
    bad_rows: list[tuple[int, int]]
    header_line: int


@dataclass
class _Records:
    """Where each record of a CSV buffer sits (one entry per record, in file order)."""

    starts: np.ndarray   # byte offset of each record
    ends: np.ndarray     # byte offset just past each record's content (before CR/LF)
    lines: np.ndarray    # 1-based physical line where each record starts
    empty: np.ndarray    # zero-length record (an empty line)
    quotes: np.ndarray   # byte offsets of every quote character
    quoted_newlines: bool

    def field_counts(self, buf: bytes, delimiter: int) -> np.ndarray:
        """Number of fields in each record (delimiters outside quotes, plus one)."""
        delims = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8) == delimiter)
        if len(self.quotes):
            delims = delims[np.searchsorted(self.quotes, delims) % 2 == 0]
        return np.searchsorted(delims, self.ends) - np.searchsorted(delims, self.starts) + 1


def _quotes_are_regular(arr: np.ndarray, quotes: np.ndarray, delimiter: int) -> bool:
    """True when every quote opens at a field start, closes at a field end, or is a doubled quote."""
    if len(quotes) % 2:
        return False
    k = np.arange(len(quotes))
    prev = np.where(quotes > 0, arr[np.maximum(quotes - 1, 0)], delimiter)
    nxt = np.where(quotes < len(arr) - 1, arr[np.minimum(quotes + 1, len(arr) - 1)], delimiter)
    after_quote = np.r_[False, np.diff(quotes) == 1]
    before_quote = np.r_[np.diff(quotes) == 1, False]
    opens_ok = np.isin(prev, (delimiter, _LF, _CR)) | after_quote
    closes_ok = np.isin(nxt, (delimiter, _LF, _CR)) | before_quote
    return bool(opens_ok[k % 2 == 0].all() and closes_ok[k % 2 == 1].all())


def _scan(buf: bytes, dialect: Dialect = CSV) -> _Records | None:
    """Record boundaries, or None when the fast reader cannot be trusted with this buffer."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    lf = np.flatnonzero(arr == _LF)
    cr = np.flatnonzero(arr == _CR)
    if len(cr) and (cr[-1] == len(arr) - 1 or (arr[cr + 1] != _LF).any()):
        return None  # a carriage return that does not end a line
    if (arr == 0).any():
        return None  # NUL bytes: let the exact reader report them
    quotes = np.flatnonzero(arr == _QUOTE) if dialect.quoting else np.zeros(0, dtype=np.int64)
    record_lf = lf
    if len(quotes):
        if not _quotes_are_regular(arr, quotes, dialect.byte):
            return None
        record_lf = lf[np.searchsorted(quotes, lf) % 2 == 0]
    starts = np.r_[0, record_lf + 1]
    ends = np.r_[record_lf, len(arr)]
    if starts[-1] == len(arr):
        starts, ends = starts[:-1], ends[:-1]
    ends = ends - ((ends > starts) & (arr[np.maximum(ends - 1, 0)] == _CR))
    lines = lf.searchsorted(starts) + 1 if len(record_lf) < len(lf) else np.arange(1, len(starts) + 1)
    return _Records(starts, ends, lines, ends == starts, quotes, len(record_lf) < len(lf))


def _blank(buf: bytes, records: _Records, index: np.ndarray, blank: bytes) -> np.ndarray:
    """Which of the records at `index` hold only `blank` bytes (delimiters, quotes, whitespace)."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    starts, ends = records.starts[index], records.ends[index]
    first = arr[np.minimum(starts, len(arr) - 1)]
    maybe = np.flatnonzero(np.isin(first, np.frombuffer(blank, dtype=np.uint8)) | (starts == ends))
    out = np.zeros(len(index), dtype=bool)
    out[maybe] = [not buf[s:e].strip(blank) for s, e in zip(starts[maybe], ends[maybe])]
    return out


def _header_index(buf: bytes, records: _Records, blank: bytes) -> int | None:
    """Index of the first record with content (the header), or None."""
    for index in np.flatnonzero(~records.empty):
        if buf[records.starts[index]:records.ends[index]].strip(blank):
            return int(index)
    return None


def _pyarrow_rows(body, names: list[str], keep: list[str], quoted_newlines: bool,
                  dialect: Dialect) -> pa.Table | None:
    """pyarrow's reading of `body` (data records, no header) as text columns `keep`, or None
    when it refuses the buffer (e.g. a row with the wrong number of fields)."""
    if not len(body):
        return pa.table({n: pa.array([], pa.large_string()) for n in keep})
    try:
        return pacsv.read_csv(
            pa.BufferReader(body), read_options=pacsv.ReadOptions(column_names=names),
            parse_options=pacsv.ParseOptions(delimiter=dialect.delimiter, quote_char='"' if dialect.quoting else False,
                                             newlines_in_values=quoted_newlines),
            convert_options=pacsv.ConvertOptions(
                include_columns=keep, column_types={n: pa.large_string() for n in names},
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except pa.ArrowInvalid:
        return None


def _only(buf: bytes, records: _Records, index: np.ndarray) -> bytes:
    """The bytes of the records at `index` (each with its line end), in file order."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    following = np.r_[records.starts[1:], len(arr)]
    edges = np.zeros(len(arr) + 1, dtype=np.int8)
    edges[records.starts[index]] += 1
    edges[following[index]] -= 1
    return arr[np.cumsum(edges[:-1], dtype=np.int8) > 0].tobytes()


def _read_fast(buf: bytes, records: _Records, wanted_of, dialect: Dialect = CSV,
               known: CsvTable | None = None) -> CsvTable | None:
    """The fast reader; None when pyarrow's view of the rows differs from the scan. `known`: a table
    read from the same file before this buffer (whose header this buffer's rows follow)."""
    blank = dialect.blank.encode()
    head = -1 if known is not None else _header_index(buf, records, blank)
    if head is None:
        return CsvTable([], {}, np.zeros(0, np.int64), [], 0)
    if known is not None:
        header, wanted, header_line = known.header, list(known.columns), known.header_line
    else:
        header = next(dialect.csv_reader(buf[records.starts[head]:records.ends[head]].decode("utf-8")))
        wanted, header_line = wanted_of(header, int(records.lines[head])), int(records.lines[head])
    names = [f"c{i}" for i in range(len(header))]
    keep = [names[i] for i in wanted]
    rest = np.flatnonzero(~records.empty)
    rest = rest[rest > head]
    good, bad, bad_fields = rest, rest[:0], rest[:0]
    body_start = records.starts[rest[0]] if len(rest) else len(buf)
    table = _pyarrow_rows(memoryview(buf)[body_start:], names, keep, records.quoted_newlines, dialect)
    if table is None:  # some rows do not fit the header: set them aside, read the others
        fields = records.field_counts(buf, dialect.byte)[rest]
        fits = fields == len(header)
        good, bad, bad_fields = rest[fits], rest[~fits], fields[~fits]
        table = _pyarrow_rows(_only(buf, records, good), names, keep, records.quoted_newlines, dialect)
    if table is None or table.num_rows != len(good):
        return None
    shown = ~_blank(buf, records, bad, blank)
    bad_rows = list(zip(records.lines[bad][shown].tolist(), bad_fields[shown].tolist()))
    kept = ~_blank(buf, records, good, blank)
    columns = {i: table.column(names[i]).to_pandas()[kept].reset_index(drop=True) for i in wanted}
    return CsvTable(header, columns, records.lines[good][kept], bad_rows, header_line)


def _picker(indexes: list[int]):
    """row -> tuple of the fields at `indexes`."""
    if len(indexes) == 1:
        return lambda row, i=indexes[0]: (row[i],)
    return itemgetter(*indexes) if indexes else (lambda row: ())


def _read_exact(text: str, source: str, wanted_of, dialect: Dialect = CSV) -> CsvTable:
    """The exact reader: Python's csv module, each row starting one line after the previous ended."""
    return next(read_exact_chunks(text, source, wanted_of, dialect))


def read_exact_chunks(text: str | io.TextIOBase, source: str, wanted_of, dialect: Dialect = CSV, *, known: CsvTable | None = None,
                      line: int = 0, rows_per_chunk: int | None = None) -> Iterator[CsvTable]:
    """The exact reader as tables of at most `rows_per_chunk` rows each (None: one table); `text` (a str, or
    a text stream as Dialect.csv_reader takes) starts after physical line `line` of the file, and `known` is
    a table read before it (its header applies)."""
    collecting = gc.isenabled()
    gc.disable()  # millions of short-lived row lists would trigger needless collections
    try:
        yield from _read_rows(dialect.csv_reader(text), source, wanted_of, dialect.blank, known, line, rows_per_chunk)
    finally:
        if collecting:
            gc.enable()


def _read_rows(reader, source: str, wanted_of, blank: str, known: CsvTable | None, previous_end: int,
               rows_per_chunk: int | None) -> Iterator[CsvTable]:
    header, header_line, wanted = (known.header, known.header_line, list(known.columns)) if known else (None, 0, [])
    width, pick = len(header or ()), _picker(wanted)
    rows, lines, bad_rows = [], [], []
    offset, yielded = previous_end, False
    while True:
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise ImportRejected([RowError(source, previous_end + 1, f"cannot read this row: {exc}")]) from exc
        if row is None:
            break
        start, previous_end = previous_end + 1, offset + reader.line_num
        if not "".join(row).strip(blank):
            continue
        if header is None:
            header, header_line, width = row, start, len(row)
            wanted = wanted_of(header, start)
            pick = _picker(wanted)
        elif len(row) != width:
            bad_rows.append((start, len(row)))
        else:
            rows.append(pick(row))
            lines.append(start)
            if rows_per_chunk and len(rows) == rows_per_chunk:
                yield _table(header, header_line, wanted, rows, lines, bad_rows)
                rows, lines, bad_rows, yielded = [], [], [], True
    if header is None:
        yield CsvTable([], {}, np.zeros(0, np.int64), [], 0)
    elif rows or bad_rows or not yielded:
        yield _table(header, header_line, wanted, rows, lines, bad_rows)


def _table(header: list[str], header_line: int, wanted: list[int], rows: list, lines: list, bad_rows: list) -> CsvTable:
    values = list(zip(*rows)) if rows else [()] * len(wanted)
    columns = {i: pd.Series(v, dtype="str") for i, v in zip(wanted, values)}
    return CsvTable(header, columns, np.asarray(lines, dtype=np.int64), bad_rows, header_line)


def read_csv_table(text: str, source: str, wanted_of, dialect: Dialect = CSV) -> CsvTable:
    """Read decoded delimited `text` (from file `source`).

    `wanted_of(header) -> list of header indexes` picks the columns to keep; it may raise
    (e.g. ImportRejected for a header that does not fit). A file without a header row, a header
    outside the data contract (too many columns, a name twice: `contract.check_header`), or a
    row the csv module cannot read, raises ImportRejected (the latter two with their line).
    """
    def checked(header: list[str], line: int) -> list[int]:
        check_header(header, line, source)
        return wanted_of(header)

    buf = text.encode("utf-8")
    records = _scan(buf, dialect)
    fast = _read_fast(buf, records, checked, dialect) if records is not None else None
    table = fast if fast is not None else _read_exact(text, source, checked, dialect)
    if not table.header:
        raise ImportRejected.whole_file(source, dialect.no_header())
    return table
