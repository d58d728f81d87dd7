"""Import errors that name the file, the line and the problem.

An importer collects every row problem it can find (not just the first), then raises
`ImportRejected`; the store is never touched for a rejected file.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MAX_REPORTED = 100


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
    """Keeps the first `MAX_REPORTED` errors and counts all of them."""

    file: str
    errors: list[RowError] = field(default_factory=list)
    total: int = 0

    def add(self, line: int, reason: str) -> None:
        self.total += 1
        if len(self.errors) < MAX_REPORTED:
            self.errors.append(RowError(self.file, int(line), reason))

    def add_many(self, lines, reason: str) -> None:
        """Record the same reason for many lines (an iterable of ints), in order."""
        for line in lines:
            self.total += 1
            if len(self.errors) < MAX_REPORTED:
                self.errors.append(RowError(self.file, int(line), reason))

    def raise_if_any(self) -> None:
        if self.total:
            ordered = sorted(self.errors, key=lambda e: (e.line, e.reason))
            raise ImportRejected(ordered, self.total)


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
