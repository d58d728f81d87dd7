"""Import errors that name the file, the line and the problem.

An importer collects every row problem it can find (not just the first), then raises
`ImportRejected`; the store is never touched for a rejected file.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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
    """

    file: str
    total: int = 0
    _single: list[tuple[int, str]] = field(default_factory=list, repr=False)
    _groups: list[tuple[np.ndarray, str, object]] = field(default_factory=list, repr=False)

    def add(self, line: int, reason: str) -> None:
        self.total += 1
        self._single.append((int(line), reason))
        if len(self._single) >= _TRIM_AT:
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
        if self.total:
            raise ImportRejected(self.reported(), self.total)


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
