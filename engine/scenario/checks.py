"""The validators every scenario section uses: a table with only known keys, a number in range.

Each raises ScenarioError with a message that names where the value is (`where`: the file and the
section) and what was expected, so a user can fix the file from the message alone.
"""
from __future__ import annotations

import math
from dataclasses import fields

from engine.core.bounds import bound_of
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


def declared(table: object, model: type, source: str, section: str) -> dict:
    """The values of a [section] table for the dataclass `model`, checked against its fields'
    declarations: a bool where the field is a bool, else a number inside the field's unit and range
    (engine.core.bounds; its metadata), whole for an int field. An unknown key, a bool where a number
    belongs or a value out of range is a ScenarioError naming `section` and the key."""
    specs = {f.name: f for f in fields(model)}
    known_keys(table, set(specs), source, f"{section} key")
    values = {}
    for name, value in table.items():
        spec = specs[name]
        if spec.type == "bool":
            if not isinstance(value, bool):
                raise ScenarioError(f"{source}: {section} {name} must be true or false, got {value!r}")
            values[name] = value
            continue
        whole = spec.type == "int"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError(f"{source}: {section} {name} must be a {'whole number' if whole else 'number'}, "
                                f"got {value!r}")
        problem = bound_of(name, int if whole else float, spec.metadata).check(name, value)
        if problem is None and whole and value != int(value):
            problem = f"{name} must be a whole number, got {value!r}"
        if problem:
            raise ScenarioError(f"{source}: {section} {problem}")
        values[name] = int(value) if whole else float(value)
    return values
