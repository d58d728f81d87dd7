"""Import errors that name the file, the line and the problem.

An importer collects every row problem it can find (not just the first), then raises
`ImportRejected`; the store is never touched for a rejected file. An import that keeps the valid
rows (`ImportOptions.keep_valid`) uses a tolerant collector instead: it raises nothing for row
problems, the importer leaves out every row with a problem (`valid`), and `every()` lists them all
to be kept in the store as the import's rejects. Problems with the file as a whole still reject it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

MAX_REPORTED = 100
SHOWN_VALUE_CHARS = 60          # longer text values are cut in messages
_TRIM_AT = 20 * MAX_REPORTED    # single problems kept before the ones that can never be shown are dropped


@dataclass(frozen=True)
class RowError:
    """One problem in an input file. `line` is 1-based; 0 means the file as a whole."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.reason}"


@dataclass
class ErrorCollector:
    """Counts every problem of one file and reports the `MAX_REPORTED` lowest by (line, reason).

    Problems may arrive in any order (e.g. column by column); what is reported does not depend
    on it. Problems added with `add_many` keep only their line numbers and a message template
    until `raise_if_any`, so a file with a million bad rows costs no million messages.
    `tolerant`: row problems set their rows aside instead of rejecting the file (see the module).
    """

    file: str
    tolerant: bool = False
    total: int = 0
    _single: list[tuple[int, str]] = field(default_factory=list, repr=False)
    _groups: list[tuple[np.ndarray, str, object]] = field(default_factory=list, repr=False)

    def add(self, line: int, reason: str) -> None:
        self.total += 1
        self._single.append((int(line), reason))
        if len(self._single) >= _TRIM_AT and not self.tolerant:   # a tolerant collector keeps every one
            self._single = sorted(self._single)[:MAX_REPORTED]

    def add_many(self, lines, reason: str, values=None) -> None:
        """Record one reason for many lines (any integer sequence or array).

        With `values` (one value, or one tuple of values, per line), `reason` is a template
        whose `{!r}` slots are filled from them; long text values are cut to
        `SHOWN_VALUE_CHARS` characters.
        """
        lines = np.asarray(lines, dtype=np.int64).reshape(-1)
        if len(lines):
            self.total += len(lines)
            self._groups.append((lines, reason, values))

    def reported(self) -> list[RowError]:
        """The `MAX_REPORTED` lowest problems by (line, reason), in that order."""
        kept = list(self._single)
        if self._groups:
            every = np.concatenate([g[0] for g in self._groups] + [np.array([line for line, _ in kept], np.int64)])
            # The MAX_REPORTED-th lowest line: problems on later lines cannot be among those reported.
            cutoff = np.partition(every, MAX_REPORTED - 1)[MAX_REPORTED - 1] if len(every) > MAX_REPORTED \
                else every.max()
            for lines, reason, values in self._groups:
                kept += [(int(lines[i]), reason if values is None else _fill(reason, values[i]))
                         for i in np.flatnonzero(lines <= cutoff)]
        return [RowError(self.file, line, reason) for line, reason in sorted(kept)[:MAX_REPORTED]]

    def raise_if_any(self) -> None:
        """Reject the file when it has a problem, unless the collector is tolerant."""
        if self.total and not self.tolerant:
            raise ImportRejected(self.reported(), self.total)

    def bad_lines(self) -> np.ndarray:
        """Every line with a problem, sorted, once each."""
        parts = [g[0] for g in self._groups] + [np.array([line for line, _ in self._single], np.int64)]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def valid(self, lines) -> np.ndarray:
        """A mask over `lines` (the source line of each row): True where the row had no problem."""
        return ~np.isin(np.asarray(lines, dtype=np.int64), self.bad_lines())

    def every(self) -> list[RowError]:
        """Every problem, by (line, reason): the rejects a tolerant import keeps."""
        kept = list(self._single)
        for lines, reason, values in self._groups:
            kept += [(int(line), reason if values is None else _fill(reason, values[i])) for i, line in enumerate(lines)]
        return [RowError(self.file, line, reason) for line, reason in sorted(kept)]


def kept(keep: np.ndarray, *columns) -> list:
    """Each of `columns` (an array, Series or list aligned with the rows; None stays None) at the rows where
    the boolean mask `keep` is true: the valid rows of a tolerant import."""
    out = []
    for column in columns:
        if column is None:
            out.append(None)
        elif isinstance(column, list):
            out.append([value for value, ok in zip(column, keep) if ok])
        elif isinstance(column, pd.Series):
            out.append(column[keep].reset_index(drop=True))
        else:
            out.append(np.asarray(column)[keep])
    return out


def _fill(template: str, value) -> str:
    """`template` with its `{!r}` slots filled from `value` (one value, or a tuple of them)."""
    shown = value if isinstance(value, tuple) else (value,)
    return template.format(*map(_shorten, shown))


def _shorten(value):
    """Long text cut to SHOWN_VALUE_CHARS characters (ending in '...') so messages stay readable."""
    if isinstance(value, str) and len(value) > SHOWN_VALUE_CHARS:
        return value[: SHOWN_VALUE_CHARS - 3] + "..."
    return value


class ImportRejected(Exception):
    """The file was not imported. `errors` holds up to 100 problems, `total` counts all."""

    def __init__(self, errors: list[RowError], total: int | None = None):
        self.errors = list(errors)
        self.total = len(self.errors) if total is None else total
        super().__init__(self.summary())

    @classmethod
    def whole_file(cls, file: str, reason: str) -> "ImportRejected":
        return cls([RowError(file, 0, reason)])

    def summary(self) -> str:
        shown = len(self.errors)
        head = f"{self.total} problem{'s' if self.total != 1 else ''} found"
        if shown < self.total:
            head += f" (first {shown} shown)"
        return head + "; nothing was imported"

    def lines(self) -> list[str]:
        return [str(e) for e in self.errors]
