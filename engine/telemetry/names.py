"""The dataset name policy, applied wherever a dataset is created (an import of a file, a folder or an
upload; engine.telemetry.store.Store.add_import checks it again as the last gate).

A name is Unicode normalised to NFC and trimmed of surrounding spaces; it then has 1 to
`MAX_LENGTH` characters, every one printable: no control characters (tab, newline, carriage return,
escape sequences), no format characters (zero-width spaces and joiners, right-to-left and other
direction overrides), no line or paragraph separators, and no / or \\ (a name becomes part of file
names, for example the predictors' model folder). A name derived from a file name is made to fit
(`name_from`); one a user typed that breaks a rule is refused with the rule and the position.
"""
from __future__ import annotations

import re
import unicodedata

MAX_LENGTH = 64
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible formatting character",
                       "Zl": "a line separator", "Zp": "a paragraph separator", "Co": "a private-use character",
                       "Cs": "a surrogate", "Cn": "an unassigned character"}
_SLASHES = "/\\"


class BadName(ValueError):
    """A dataset name the policy refuses; the message says which rule and where."""


def _shown(name: str) -> str:
    """The name as a message may print it: escaped, and cut to 40 characters."""
    text = name.encode("unicode_escape").decode("ascii")
    return repr(text if len(text) <= 40 else text[:40] + "...")


def check_name(name: str) -> str:
    """`name` normalised (NFC, trimmed), or BadName."""
    if not isinstance(name, str):
        raise BadName(f"a dataset name must be text, got {type(name).__name__}")
    normal = unicodedata.normalize("NFC", name).strip()
    if not normal:
        raise BadName("a dataset name cannot be blank")
    if len(normal) > MAX_LENGTH:
        raise BadName(f"dataset name {_shown(normal)} has {len(normal):,} characters; at most {MAX_LENGTH}")
    for position, char in enumerate(normal, start=1):
        category = unicodedata.category(char)
        what = _REFUSED_CATEGORIES.get(category) or ("a slash" if char in _SLASHES else None)
        if what is not None:
            raise BadName(f"dataset name {_shown(normal)} has {what} (U+{ord(char):04X}) at position {position}; "
                          f"names are 1-{MAX_LENGTH} printable characters without / or \\")
    return normal


def name_from(stem: str) -> str:
    """A name the policy accepts, made from a file or folder name: runs of characters other than
    letters, digits, _ . - become one -, cut to MAX_LENGTH; "dataset" when nothing is left."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", unicodedata.normalize("NFC", stem)).strip("-.")
    return cleaned[:MAX_LENGTH].rstrip("-.") or "dataset"
