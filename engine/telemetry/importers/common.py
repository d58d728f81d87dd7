"""Helpers every importer shares: options, reading bytes as text, clear whole-file errors."""
from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from typing import Self

from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError
from engine.telemetry.input_limits import GZIP_MAGIC, STREAMED_PER_TEXT_BYTE, check_memory, gunzip_bounded

BINARY_SNIFF_BYTES = 8192
# Byte-order marks of encodings other than UTF-8, longest first (UTF-32 LE starts like UTF-16 LE).
_OTHER_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
               (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


DST_RULES = ("shift", "reject")


class CountedNote(str):
    """A note that counts rows, `template` with its `{count}` slot filled: the notes of a file read in chunks
    add up (merge_notes)."""

    template: str
    count: int

    def __new__(cls, template: str, count: int) -> Self:
        note = super().__new__(cls, template.format(count=count))
        note.template, note.count = template, count
        return note


def merge_notes(parts: list[list[str]]) -> list[str]:
    """The notes of a file's chunks as the whole file's: counted notes of one template add up, any other note
    is kept once; in the order each first appeared."""
    totals: dict[str, int] = {}
    for note in (note for part in parts for note in part):
        key = note.template if isinstance(note, CountedNote) else note
        totals[key] = totals.get(key, 0) + (note.count if isinstance(note, CountedNote) else 0)
    firsts = {}
    for note in (note for part in parts for note in part):
        firsts.setdefault(note.template if isinstance(note, CountedNote) else note, note)
    return [CountedNote(key, totals[key]) if isinstance(note, CountedNote) else note for key, note in firsts.items()]


@dataclass(frozen=True)
class ImportOptions:
    """Knobs a user can set on an import.

    tz: IANA time zone for naive timestamps (and the default region's zone).
    mapping: source column -> Meridian column, overriding the alias table (generic CSV).
    region: region name for rows that carry none.
    keep_valid: import the rows without problems and set the others aside (kept in the store as the
    import's rejects), instead of rejecting the whole file (the default).
    dst: local times a clock change skipped or repeated: "shift" (the default) reads a skipped one with
    the offset in force before the change (shifted forward by the gap) and a repeated one as its first
    occurrence, each with a note; "reject" makes them row problems that name the rule.
    """

    tz: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)
    region: str | None = None
    keep_valid: bool = False
    dst: str = "shift"

    def __post_init__(self) -> None:
        if self.dst not in DST_RULES:
            raise ValueError(f"unknown daylight-saving rule {self.dst!r}; choose from {', '.join(DST_RULES)}")

    def collector(self, source: str) -> ErrorCollector:
        """The problem collector of one file under these options (tolerant when keeping the valid rows)."""
        return ErrorCollector(source, tolerant=self.keep_valid)


def maybe_gunzip(data: bytes, source: str) -> bytes:
    """Decompress gzip content (recognised by its magic bytes, whatever the file name), within the
    limits of engine.telemetry.input_limits."""
    return gunzip_bounded(data, source) if data[:2] == GZIP_MAGIC else data


def decode_text(data: bytes, source: str) -> str:
    """Bytes -> str, rejecting empty, binary, UTF-16/32 and non-UTF-8 content with a located reason."""
    data = text_bytes(data, source)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(data, exc.start, source) from exc


def text_bytes(data: bytes, source: str, *, streamed: bool = False, per_byte: int = STREAMED_PER_TEXT_BYTE) -> bytes:
    """The content of a text file, decompressed, refusing empty, binary and UTF-16/32 content and content that
    would need more memory than is available (read whole, or `streamed` in chunks: input_limits.check_memory);
    whether it is valid UTF-8 is left to the caller (not_utf8 words the refusal)."""
    data = maybe_gunzip(data, source)
    check_memory(len(data), source, streamed=streamed, per_byte=per_byte)
    if not data or data.isspace():   # not data.strip(): that would copy the whole file
        raise ImportRejected.whole_file(source, "file is empty")
    encoding = next((name for bom, name in _OTHER_BOMS if data.startswith(bom)), None)
    if encoding:
        raise ImportRejected.whole_file(source, f"file is {encoding} encoded; save it as UTF-8")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ImportRejected.whole_file(source, "file is binary (contains NUL bytes), not text")
    return data


def not_utf8(data: bytes, at: int, source: str, line: int = 0) -> ImportRejected:
    """The refusal of `data` (from `source`, after physical line `line` of it) whose byte `at` is not UTF-8."""
    column = at - (data.rfind(b"\n", 0, at) + 1) + 1
    return ImportRejected([RowError(source, line + data.count(b"\n", 0, at) + 1,
                                    f"byte 0x{data[at]:02x} at column {column} is not valid UTF-8; save the file as "
                                    "UTF-8")])
