"""Helpers every importer shares: options, reading bytes as text, clear whole-file errors."""
from __future__ import annotations

import codecs
from dataclasses import dataclass, field

from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError
from engine.telemetry.input_limits import GZIP_MAGIC, check_memory, gunzip_bounded

BINARY_SNIFF_BYTES = 8192
# Byte-order marks of encodings other than UTF-8, longest first (UTF-32 LE starts like UTF-16 LE).
_OTHER_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
               (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


DST_RULES = ("shift", "reject")


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
    data = maybe_gunzip(data, source)
    check_memory(len(data), source)
    if not data or data.isspace():   # not data.strip(): that would copy the whole file
        raise ImportRejected.whole_file(source, "file is empty")
    encoding = next((name for bom, name in _OTHER_BOMS if data.startswith(bom)), None)
    if encoding:
        raise ImportRejected.whole_file(source, f"file is {encoding} encoded; save it as UTF-8")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ImportRejected.whole_file(source, "file is binary (contains NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ImportRejected([RowError(
            source, line,
            f"byte 0x{data[exc.start]:02x} at column {column} is not valid UTF-8; save the file as UTF-8",
        )]) from exc
