"""Reading a header-led delimited text (CSV, sacct's pipes) into string columns with line numbers.

Used by the importers of known formats (sacct, openb, utilisation series): they know their column
names, so this reader checks the header, keeps every value as text, remembers the 1-based line
of each row, and reports rows with the wrong number of fields. Numbers are checked column by
column with `numbers`, which names the line, the column and the offending value.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError


@dataclass
class Rows:
    """Data rows as text: `frame` has one column per known header name (lower-case),
    `lines` the 1-based source line of each row."""

    frame: pd.DataFrame
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.lines)

    def has(self, column: str) -> bool:
        return column in self.frame.columns


def read_rows(
    text: str, source: str, sep: str, required: tuple[str, ...], optional: tuple[str, ...],
    errors: ErrorCollector,
) -> Rows:
    """Split `text` into rows of `sep`-separated fields under its first non-blank line (the header).

    Header names match case-insensitively; a missing required column rejects the whole file.
    Columns neither required nor optional are ignored. Blank lines are skipped; a row whose
    field count differs from the header's is reported to `errors` and left out. Values are
    stripped of surrounding blanks. Text without quotes goes through pandas' C reader; quoted
    CSV through the csv module.
    """
    lines = text.split("\n")
    header_at = next(i for i, line in enumerate(lines) if line.strip())
    quoted = sep == "," and '"' in text
    raw_header = next(csv.reader([lines[header_at]], delimiter=sep, quoting=_quoting(quoted)))
    header = [name.strip().lower() for name in raw_header]
    trailing = len(header) > 1 and header[-1] == ""   # `sacct --parsable` ends every line with '|'
    if trailing:
        header = header[:-1]
    missing = [name for name in required if name not in header]
    if missing:
        raise ImportRejected([RowError(
            source, header_at + 1,
            f"missing column(s) {', '.join(missing)}; the header has {', '.join(h for h in header if h) or 'nothing'}",
        )])
    wanted = [name for name in required + optional if name in header]
    positions = [header.index(name) for name in wanted]
    read = _read_quoted if quoted else _read_plain
    frame, line_numbers = read(lines, header_at, len(raw_header), sep, positions, errors, len(header))
    frame.columns = wanted
    return Rows(frame, np.asarray(line_numbers, dtype=np.int64))


def _quoting(quoted: bool) -> int:
    return csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE


def _read_plain(lines, header_at, raw_count, sep, positions, errors, shown_count):
    """Rows of text without quotes: field counts checked per line, values split by pandas."""
    body = [line.rstrip("\r") for line in lines[header_at + 1:]]
    while body and not body[-1].strip():
        body.pop()
    counts = [line.count(sep) + 1 for line in body]
    if all(found == raw_count for found in counts) and (raw_count > 1 or all(map(str.strip, body))):
        good, line_numbers = body, list(range(header_at + 2, header_at + 2 + len(body)))
    else:
        good, line_numbers = [], []
        for number, line, found in zip(range(header_at + 2, header_at + 2 + len(body)), body, counts):
            if not line.strip():
                continue
            if found != raw_count:
                errors.add(number, f"expected {shown_count} fields separated by {sep!r}, found "
                                   f"{found - (raw_count - shown_count)}")
                continue
            good.append(line)
            line_numbers.append(number)
    if not good:
        return pd.DataFrame({p: pd.Series([], dtype="str") for p in positions}), line_numbers
    frame = pd.read_csv(io.StringIO("\n".join(good)), sep=sep, header=None, names=list(range(raw_count)),
                        usecols=positions, dtype=str, na_filter=False, quoting=csv.QUOTE_NONE,
                        engine="c", skip_blank_lines=False)
    frame = frame[positions]
    return pd.DataFrame({p: frame[p].str.strip() for p in positions}), line_numbers


def _read_quoted(lines, header_at, raw_count, sep, positions, errors, shown_count):
    """Rows of CSV with quoted fields, read by the csv module (slower, handles quoted commas)."""
    reader = csv.reader((line.rstrip("\r") + "\n" for line in lines[header_at + 1:]), delimiter=sep)
    values, line_numbers, consumed = [], [], 0
    for fields in reader:
        number = header_at + 2 + consumed          # first line of this record (quoted newlines span more)
        consumed = reader.line_num
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        if len(fields) != raw_count:
            errors.add(number, f"expected {shown_count} fields separated by {sep!r}, found "
                               f"{len(fields) - (raw_count - shown_count)}")
            continue
        values.append([fields[p].strip() for p in positions])
        line_numbers.append(number)
    return pd.DataFrame(values, columns=positions, dtype=object), line_numbers


def numbers(
    rows: Rows, column: str, errors: ErrorCollector, *, allow_empty: bool = False,
    minimum: float | None = None,
) -> np.ndarray:
    """Column `column` as float64 (NaN where empty, if allowed), reporting every bad value."""
    text = rows.frame[column]
    try:
        values = np.asarray(text.to_numpy(dtype=object), dtype=np.float64)
    except ValueError:
        values = pd.to_numeric(text.where(text != "", None), errors="coerce").to_numpy(dtype=np.float64, copy=True)
    empty = (text == "").to_numpy()
    for i in np.flatnonzero(~empty & ~np.isfinite(values)):
        errors.add(rows.lines[i], f"{column} is not a number: {text.iloc[i]!r}")
    if not allow_empty:
        errors.add_many(rows.lines[empty], f"{column} is empty")
    if minimum is not None:
        for i in np.flatnonzero(values < minimum):
            errors.add(rows.lines[i], f"{column} must be >= {minimum:g}, found {_show(values[i])}")
    return values


def _show(value: float) -> str:
    return str(int(value)) if math.isfinite(value) and value == int(value) else f"{value:g}"
