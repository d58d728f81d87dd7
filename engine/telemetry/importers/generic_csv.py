"""Generic CSV job importer: any comma-separated jobs table with a header row (plain or gzip).

Column names are matched case-insensitively against the alias table in `columns`
(`ImportOptions.mapping` overrides it); values are validated and normalised by
`jobs_frame.normalise_jobs`. Required columns: job_id, submit (submit_utc) and gpus;
everything else is optional. Timestamps are epoch seconds or ISO-8601; naive ones need
`ImportOptions.tz` unless the header ends in "_utc" (the canonical names do), which
declares them UTC. The file is rejected as a whole, listing every problem found with its
physical line, or imported completely.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.columns import ColumnPlan, resolve_columns
from engine.telemetry.importers.common import ImportOptions, decode_text
from engine.telemetry.importers.csv_records import read_csv_table
from engine.telemetry.importers.jobs_frame import TIME_COLUMNS, normalise_jobs


def parse_csv(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """Parse a generic jobs CSV into an ImportBatch with one table, `jobs`."""
    text = decode_text(data, source)
    plans: list[ColumnPlan] = []

    def wanted_of(header: list[str]) -> list[int]:
        plans.append(resolve_columns(header, options.mapping, source))
        return sorted(plans[-1].sources.values())

    table = read_csv_table(text, source, wanted_of)
    plan = plans[-1]
    errors = options.collector(source)
    width = len(table.header)
    if table.bad_rows:
        lines, found = zip(*table.bad_rows)
        errors.add_many(lines, f"expected {width} field{'s' if width != 1 else ''}, found {{!r}}", found)
    if not len(table.lines) and not table.bad_rows:
        raise ImportRejected.whole_file(source, "no data rows (the file has only a header)")
    raw = pd.DataFrame({column: table.columns[index] for column, index in plan.sources.items()})
    labels = {column: plan.source_name(column) for column in plan.sources}
    naive_utc = [c for c in TIME_COLUMNS if c in plan.sources and plan.declares_utc(c)]
    jobs, notes = normalise_jobs(raw, table.lines, source, options, labels=labels, naive_utc=naive_utc,
                                 errors=errors)
    if errors.total and len(jobs):   # rows set aside: the valid ones again, so that every note counts them only
        keep = errors.valid(table.lines)
        jobs, notes = normalise_jobs(raw[keep], table.lines[keep], source, replace(options, keep_valid=False),
                                     labels=labels, naive_utc=naive_utc)
    return ImportBatch("csv", {"jobs": jobs}, notes=list(plan.notes) + notes, rejects=errors.every())
