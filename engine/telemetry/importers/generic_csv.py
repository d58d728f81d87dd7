"""Generic CSV job importer: any comma-separated jobs table with a header row (plain or gzip).

Column names are matched case-insensitively against the alias table in `columns`
(`ImportOptions.mapping` overrides it); values are validated and normalised by
`jobs_frame.normalise_jobs`. Required columns: job_id, submit (submit_utc) and gpus;
everything else is optional. Timestamps are epoch seconds or ISO-8601; naive ones need
`ImportOptions.tz` unless the header ends in "_utc" (the canonical names do), which
declares them UTC. The file is rejected as a whole, listing every problem found with its
physical line, or imported completely.

The file is read in chunks (`csv_chunks`): `CsvJobs` hands out the typed jobs of each chunk as it is read,
so that an import can append them to the store as they come and hold one chunk at a time; the rules over the
whole file (job ids unique, one problem for naive times without a zone, the notes' counts) are kept across
chunks, and `CsvJobs.finish` says, once the last chunk is read, whether the file passed.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pandas as pd

from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.columns import ColumnPlan, resolve_columns
from engine.telemetry.importers.common import ImportOptions, merge_notes, text_bytes
from engine.telemetry.importers.csv_chunks import csv_chunks
from engine.telemetry.importers.jobs_frame import TIME_COLUMNS, AcrossChunks, normalise_jobs


class CsvJobs:
    """A generic jobs CSV read chunk by chunk: iterate for each chunk's jobs to import, then `finish()`.

    While the file has no problem (or, keeping the valid rows, for every chunk) each chunk's jobs are handed
    out; once a problem rejects the file, the remaining chunks are still read for their problems, but no more
    jobs are handed out (the import is rolled back by `finish`'s ImportRejected).
    """

    format, scheduler = "csv", None

    def __init__(self, data: bytes, source: str, options: ImportOptions):
        self.source, self.options = source, options
        self.text = text_bytes(data, source, streamed=True)
        self.errors = options.collector(source)
        self.across = AcrossChunks()
        self.plan: ColumnPlan | None = None
        self.rows = 0           # data rows read (with or without problems)
        self._notes: list[list[str]] = []

    def __iter__(self) -> Iterator[pd.DataFrame]:
        options, source, errors = self.options, self.source, self.errors

        def wanted_of(header: list[str]) -> list[int]:
            self.plan = resolve_columns(header, options.mapping, source)
            return sorted(self.plan.sources.values())

        for table in csv_chunks(self.text, source, wanted_of):
            plan, before = self.plan, errors.total
            if table.bad_rows:
                lines, found = zip(*table.bad_rows)
                width = len(table.header)
                errors.add_many(lines, f"expected {width} field{'s' if width != 1 else ''}, found {{!r}}", found)
            self.rows += len(table.lines) + len(table.bad_rows)
            if not len(table.lines) and not table.bad_rows:
                continue
            raw = pd.DataFrame({column: table.columns[index] for column, index in plan.sources.items()})
            labels = {column: plan.source_name(column) for column in plan.sources}
            naive_utc = [c for c in TIME_COLUMNS if c in plan.sources and plan.declares_utc(c)]
            jobs, notes = normalise_jobs(raw, table.lines, source, options, labels=labels, naive_utc=naive_utc,
                                         errors=errors, across=self.across)
            if self.rejected:
                continue
            if errors.total > before and len(jobs):   # rows set aside: the valid ones again, so that notes count only them
                keep = errors.valid(table.lines)
                jobs, notes = normalise_jobs(raw[keep], table.lines[keep], source, replace(options, keep_valid=False),
                                             labels=labels, naive_utc=naive_utc)
            self._notes.append(notes)
            yield jobs

    @property
    def rejected(self) -> bool:
        """True once the file is sure to be rejected (a row problem without keep_valid, or naive times)."""
        return bool((self.errors.total and not self.errors.tolerant) or self.across.unzoned)

    def finish(self) -> ImportBatch:
        """After the last chunk: the notes and rows set aside (no tables: the jobs were handed out), or
        ImportRejected listing the file's problems."""
        if not self.rows:
            raise ImportRejected.whole_file(self.source, "no data rows (the file has only a header)")
        labels = {column: self.plan.source_name(column) for column in self.plan.sources}
        self.across.finish(self.errors, labels)
        return ImportBatch("csv", notes=list(self.plan.notes) + merge_notes(self._notes), rejects=self.errors.every())


def parse_csv(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """Parse a generic jobs CSV into an ImportBatch with one table, `jobs` (every chunk at once)."""
    reader = CsvJobs(data, source, options)
    frames = list(reader)
    batch = reader.finish()
    jobs = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return ImportBatch("csv", {"jobs": jobs}, notes=batch.notes, rejects=batch.rejects)
