"""Tables of a known format (sacct, openb, utilisation series): named text columns with line numbers.

The importers of known formats know their column names: `read_rows` reads the file with the
shared reader (`csv_records`), checks the header, keeps the wanted columns as stripped text
under their lower-case names and reports rows with the wrong number of fields. `numbers` (against
the data contract's `Limit`) and `report_empty` check columns, naming the line, the column and the offending value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError
from engine.telemetry.importers.contract import Limit, check_numbers, check_text
from engine.telemetry.importers.csv_records import Dialect, read_csv_table
from engine.telemetry.importers.timestamps import text_to_float


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

    def where(self, keep: np.ndarray) -> "Rows":
        """The rows where the boolean mask `keep` is true."""
        return Rows(self.frame[keep].reset_index(drop=True), self.lines[keep])

    def text(self, column: str, default: str | None = None) -> list:
        """An optional text column with empty values as `default` (all `default` when absent)."""
        if not self.has(column):
            return [default] * len(self)
        return [value or default for value in self.frame[column]]


def read_rows(
    text: str, source: str, dialect: Dialect, required: tuple[str, ...], optional: tuple[str, ...],
    errors: ErrorCollector,
) -> Rows:
    """The columns `required` + `optional` of delimited `text`, under its first non-blank row (the header).

    Header names match case-insensitively; a missing required column rejects the whole file.
    Other columns are ignored. Values are stripped of surrounding blanks; a row whose field
    count differs from the header's is reported to `errors` and left out.
    """
    names: list[str] = []

    def wanted_of(header: list[str]) -> list[int]:
        names[:] = [name.strip().lower() for name in header]
        if any(name not in names for name in required):
            return []   # rejected below, once the header's line is known
        return [names.index(name) for name in required + optional if name in names]

    table = read_csv_table(text, source, wanted_of, dialect)
    shown = names[:-1] if len(names) > 1 and names[-1] == "" else names   # `sacct --parsable` ends lines with '|'
    missing = [name for name in required if name not in shown]
    if missing:
        raise ImportRejected([RowError(
            source, table.header_line,
            f"missing column(s) {', '.join(missing)}; the header has {', '.join(h for h in shown if h) or 'nothing'}",
        )])
    if table.bad_rows:
        lines, found = zip(*table.bad_rows)
        errors.add_many(lines, f"expected {len(shown)} fields separated by {dialect.delimiter!r}, found {{}}",
                        [count - (len(names) - len(shown)) for count in found])
    frame = pd.DataFrame({names[i]: table.columns[i].str.strip() for i in table.columns})
    return Rows(frame, table.lines)


def numbers(rows: Rows, column: str, errors: ErrorCollector, *, allow_empty: bool = False,
            limit: Limit | None = None) -> np.ndarray:
    """Column `column` as float64 (NaN where empty, if allowed, or outside `limit`), reporting every bad value."""
    text = rows.frame[column]
    values = text_to_float(text) + 0.0   # a writable copy
    empty = (text == "").to_numpy()
    bad = ~empty & ~np.isfinite(values)
    errors.add_many(rows.lines[bad], f"{column} is not a number: {{!r}}", text[bad].to_numpy())
    if not allow_empty:
        report_empty(rows, column, errors)
    if limit is not None:
        check_numbers(values, limit, f"column {column!r}", rows.lines, errors, text.to_numpy())
    return values


def check_texts(rows: Rows, columns: tuple[str, ...], errors: ErrorCollector) -> None:
    """The data contract's text rules (length, control characters) on each of `columns` the file has."""
    for column in columns:
        if rows.has(column):
            check_text(rows.frame[column], f"column {column!r}", rows.lines, errors)


def report_empty(rows: Rows, column: str, errors: ErrorCollector, label: str | None = None) -> None:
    """Report every row whose `column` is empty ('<label> is empty'; label defaults to the column)."""
    errors.add_many(rows.lines[(rows.frame[column] == "").to_numpy()], f"{label or column} is empty")
