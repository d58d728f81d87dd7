"""The dataset name policy, applied wherever a dataset is created (an import of a file, a folder or an
upload; engine.telemetry.store.Store.add_import checks it again as the last gate).

A name is Unicode normalised to NFC and trimmed of surrounding spaces; it then has 1 to
`MAX_LENGTH` characters and at most `MAX_BYTES` bytes in UTF-8 (a name becomes a file name, the
predictors' model folder, percent-encoded: this keeps it under the 255 bytes file systems allow),
every character printable: no control characters (tab, newline, carriage return, escape
sequences), no format characters (zero-width spaces and joiners, right-to-left and other direction
overrides), no line or paragraph separators. A name derived from a file name is made to fit
(`name_from`); one a user typed that breaks a rule is refused with the rule and the position.
"""
from __future__ import annotations

import re
import unicodedata

MAX_LENGTH = 64
MAX_BYTES = 80  # x3 when percent-encoded: 240 of a file name's 255 bytes
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible formatting character",
                       "Zl": "a line separator", "Zp": "a paragraph separator", "Co": "a private-use character",
                       "Cs": "a surrogate", "Cn": "an unassigned character"}


class BadName(ValueError):
    """A dataset name the policy refuses; the message says which rule and where."""


def _shown(name: str) -> str:
    """The name as a message may print it: characters that are not printable escaped (\\n, \\u202e),
    cut to 40 characters."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in name)
    return f"'{text}'" if len(text) <= 40 else f"'{text[:40]}...'"


def check_name(name: str) -> str:
    """`name` normalised (NFC, trimmed), or BadName."""
    if not isinstance(name, str):
        raise BadName(f"a dataset name must be text, got {type(name).__name__}")
    normal = unicodedata.normalize("NFC", name).strip()
    if not normal:
        raise BadName("a dataset name cannot be blank")
    if len(normal) > MAX_LENGTH:
        raise BadName(f"dataset name {_shown(normal)} has {len(normal):,} characters; at most {MAX_LENGTH}")
    size = len(normal.encode("utf-8"))
    if size > MAX_BYTES:
        raise BadName(f"dataset name {_shown(normal)} takes {size} bytes in UTF-8; at most {MAX_BYTES}")
    for position, char in enumerate(normal, start=1):
        what = _REFUSED_CATEGORIES.get(unicodedata.category(char))
        if what is not None:
            raise BadName(f"dataset name {_shown(normal)} has {what} (U+{ord(char):04X}) at position {position}; "
                          f"names are 1-{MAX_LENGTH} printable characters")
    return normal


def name_from(stem: str) -> str:
    """A name the policy accepts, made from a file or folder name: runs of characters other than
    letters, digits, _ . - become one -, cut to MAX_LENGTH; "dataset" when nothing is left."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", unicodedata.normalize("NFC", stem)).strip("-.")
    return cleaned[:MAX_LENGTH].rstrip("-.") or "dataset"
