"""Standard Workload Format (Parallel Workloads Archive) -> jobs, fleet and regions tables.

SWF logs come from CPU clusters; how a job line becomes a job is importers.swf_rows. The log is read in
pieces of about CHUNK_BYTES of text, each ending at a line end (SWF has no quotes), so that what an import
holds beside the log's text is bounded by the piece (issue 28, item 3): `SwfJobs` hands out each piece's
jobs as it is read, and `finish` gives the rest once the last piece is read. What concerns the whole log is
kept across pieces: the `; Key: value` header (every comment line of the log, read in one pass before the
jobs), the problems (one ErrorCollector, lines numbered in the whole log), the notes that count jobs (summed)
and the fleet's size when the header gives none (the largest job of every piece).
"""
from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

import numpy as np
import pandas as pd

from engine.core.vocabulary import DEFAULT_REGION
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ImportRejected, RowError, kept
from engine.telemetry.importers.common import CountedNote, ImportOptions, merge_notes, not_utf8, text_bytes
from engine.telemetry.importers.contract import MAX_SLOTS
from engine.telemetry.importers.swf_header import SwfHeader, fleet_table
from engine.telemetry.importers.swf_rows import (
    ALLOC,
    LAST_S,
    REQ_PROCS,
    _check,
    _jobs,
    _read_fast,
    _read_slow,
    _split,
    team_counts,
    team_note,
)
from engine.telemetry.importers.timestamps import checked_zone
from engine.telemetry.input_limits import CHUNK_BYTES, SWF_STREAMED_PER_TEXT_BYTE

CPU_NOTE = ("SWF logs describe CPU clusters: each processor is treated as one slot "
            "(gpus = cpus = processors, gpu type 'cpu')")
_JOB_LINE = re.compile(r"^[^\S\n]*[^\s;]", re.MULTILINE)   # a line that is neither blank nor a comment


def comment_lines(text: str) -> list[str]:
    """The comment lines of `text` (";" first once the line is stripped), stripped, in order. Found from
    each ";" (job lines have none, so a log's few comments are found without a pass over every line): a
    ";" with only whitespace before it on its line starts one."""
    found, at = [], text.find(";")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at) + 1 or len(text)
        if text[start:at].isspace() or start == at:
            found.append(text[start:end].strip())
        at = text.find(";", end)
    return found


class SwfJobs:
    """An SWF log read piece by piece: iterate for each piece's jobs to import, then `finish()`.

    Constructing it reads what the whole log decides before any job: its bytes are UTF-8, it has a job line,
    and its header's MaxNodes / MaxProcs / UnixStartTime are within bounds (ImportRejected otherwise). While
    the log has no problem (or, keeping the valid rows, for every piece) each piece's jobs are handed out;
    once a problem rejects the log, the remaining pieces are still read for their problems, but no more jobs
    are handed out (the import is rolled back by `finish`'s ImportRejected).
    """

    format = "swf"

    def __init__(self, data: bytes, source: str, options: ImportOptions, *, chunk_bytes: int | None = None):
        self.source, self.options = source, options
        self.chunk_bytes = chunk_bytes or CHUNK_BYTES
        text = text_bytes(data, source, streamed=True, per_byte=SWF_STREAMED_PER_TEXT_BYTE)
        self.start = len(codecs.BOM_UTF8) if text.startswith(codecs.BOM_UTF8) else 0
        self.text = text
        comments, has_jobs = [], False
        for line, piece in self._pieces():
            comments += comment_lines(piece)
            has_jobs = has_jobs or _JOB_LINE.search(piece) is not None
        if not has_jobs:
            raise ImportRejected.whole_file(source, "no job lines after the header")
        self.header = header = SwfHeader.parse(comments)
        self.scheduler = header.scheduler
        if max(header.max_procs or 0, header.max_nodes or 0) > MAX_SLOTS:
            raise self._header_problem("MaxNodes|MaxProcs", f"the header's MaxNodes / MaxProcs ({header.max_nodes} "
                                                            f"/ {header.max_procs}) exceed the {MAX_SLOTS:,} a fleet may have")
        if not 0 <= (header.unix_start_s or 0) < LAST_S:
            raise self._header_problem("UnixStartTime", f"the header's UnixStartTime ({header.unix_start_s}) "
                                                        "is outside 1970-2100")
        self.errors = options.collector(source)
        self.region = options.region or DEFAULT_REGION
        self.jobs = 0                   # jobs kept
        self.largest = 1                # processors of the largest job kept
        self.teams = np.zeros(2, dtype=np.int64)
        self._notes: list[list[str]] = []

    def __iter__(self) -> Iterator[pd.DataFrame]:
        header, errors = self.header, self.errors
        procs_per_node = max(1.0, header.max_procs / header.max_nodes) if header.max_procs else 1.0
        for line, piece in self._pieces():
            _, body, lines = _split(piece)
            if not body:
                continue
            lines += line
            values = _read_fast(body, len(lines))
            if values is None:
                values = _read_slow(body, lines, errors)
            _check(values, lines, header.unix_start_s or 0, errors)
            if errors.total and not errors.tolerant:
                continue
            if errors.total:  # rows with problems set aside (a copy: none when the log has none)
                values, lines = kept(errors.valid(lines), values, lines)
            if not len(lines):
                continue
            procs = np.where(values[:, ALLOC] >= 0, values[:, ALLOC], values[:, REQ_PROCS])
            self.jobs += len(lines)
            self.largest = max(self.largest, int(procs.max()))
            self.teams += team_counts(values)
            notes: list[str] = []
            jobs = _jobs(values, lines, procs, procs_per_node, header, self.region, notes)
            self._notes.append(notes)
            yield jobs

    def finish(self) -> ImportBatch:
        """After the last piece: the log's fleet and region tables, notes and rows set aside (no jobs: they were
        handed out), or ImportRejected listing the log's problems."""
        header, errors, options = self.header, self.errors, self.options
        errors.raise_if_any()
        if not self.jobs:
            raise ImportRejected(errors.reported(), errors.total)
        notes = [CPU_NOTE]
        max_procs, max_nodes = header.max_procs, header.max_nodes
        if max_procs is None:
            max_procs = max_nodes = self.largest
            notes.append(f"no MaxNodes/MaxProcs header: fleet sized to the largest job ({max_procs} processors)")
        notes += [note for note in merge_notes(self._notes) if not isinstance(note, CountedNote) or note.count]
        notes += [note for note in [team_note(self.teams)] if note]
        tables = {"fleet": fleet_table(max_nodes, max_procs, self.region)}
        notes.append(f"fleet: {max_nodes} nodes with {max_procs} processors in all, tier 'reserved' "
                     "(on-premise hardware is paid for whether used or not)")
        tz = checked_zone(options.tz, self.source) if options.tz else header.timezone
        if options.tz and header.timezone and options.tz != header.timezone:
            notes.append(f"time zone {options.tz} given for the import overrides the log's {header.timezone}")
        elif not options.tz and header.timezone_note:
            notes.append(header.timezone_note)
        if tz:
            tables["regions"] = pd.DataFrame({"region": [self.region], "timezone": [tz]})
        return ImportBatch("swf", tables, notes, scheduler=self.scheduler, rejects=errors.every())

    def _pieces(self) -> Iterator[tuple[int, str]]:
        """(lines before it, its text) of each piece: up to the last line end within chunk_bytes of its start
        (further when one line is longer), decoded; ImportRejected naming the line of a byte that is not UTF-8."""
        text, pos, line = self.text, self.start, 0
        while pos < len(text):
            end = len(text) if pos + self.chunk_bytes >= len(text) else (
                text.rfind(b"\n", pos, pos + self.chunk_bytes) + 1 or text.find(b"\n", pos + self.chunk_bytes) + 1
                or len(text))
            try:
                piece = text[pos:end].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise not_utf8(text[pos:end], exc.start, self.source, line) from None
            yield line, piece
            line += piece.count("\n")
            pos = end

    def _header_problem(self, keys: str, reason: str) -> ImportRejected:
        """The refusal of a header value, on the line of the first `; Key:` comment naming one of `keys` (a|b)."""
        match = re.search(rf"^[ \t]*;[ \t]*(?:{keys})[ \t]*:".encode(), self.text, re.IGNORECASE | re.MULTILINE)
        line = self.text.count(b"\n", self.start, match.start()) + 1 if match else 0
        return ImportRejected([RowError(self.source, line, reason)])


def parse_swf(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """Parse an SWF log (plain or gzip) into jobs, a fleet of processor slots and the region's zone (every
    piece at once)."""
    reader = SwfJobs(data, source, options)
    frames = list(reader)
    batch = reader.finish()
    jobs = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return ImportBatch("swf", {"jobs": jobs, **batch.tables}, batch.notes, scheduler=batch.scheduler,
                       rejects=batch.rejects)
