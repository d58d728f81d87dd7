"""The validators every scenario section uses: a table with only known keys, a number in range.

Each raises ScenarioError with a message that names where the value is (`where`: the file and the
section) and what was expected, so a user can fix the file from the message alone.
"""
from __future__ import annotations

import math

from engine.core.errors import ScenarioError


def known_keys(table: object, valid: set, where: str, what: str) -> dict:
    """`table` when it is a table (dict) whose keys are all in `valid`; `what` names a key ("[[quota]]
    key", "top-level key") in the message."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: expected a table for the {what}s")
    extra = sorted(set(table) - valid)
    if extra:
        raise ScenarioError(f"{where}: unknown {what} {', '.join(extra)}; valid: {', '.join(sorted(valid))}")
    return table


def number(value: object, label: str, minimum: float = 0.0, inclusive: bool = True, finite: bool = True) -> float:
    """`value` as a float when it is a number (not a bool) >= `minimum` (> with `inclusive` False) and,
    with `finite`, less than infinity; `label` ("file: [spot] rate") starts the message."""
    low = isinstance(value, (int, float)) and not isinstance(value, bool) and (
        value >= minimum if inclusive else value > minimum)
    if not low or (finite and not value < math.inf):
        raise ScenarioError(f"{label} must be a number {'>=' if inclusive else '>'} {minimum:g}, got {value!r}")
    return float(value)
