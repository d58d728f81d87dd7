"""Scenario-builder widgets drawn from a scenario field's declaration: its dataclass field's metadata
(label, help, and a unit with a range, or the choices offered), the same metadata the scenario parser
checks values against (engine.core.bounds). A number input or a table column cannot leave the range;
`checked` shows the parser's own message for what the widgets cannot prevent."""
from __future__ import annotations

import math
from dataclasses import Field, fields

import pandas as pd
import streamlit as st

from engine.core.bounds import bound_of
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text


def label_of(spec: Field) -> str:
    """A field's label: its metadata's, else its name in words."""
    return spec.metadata.get("label") or spec.name.replace("_", " ").capitalize()


def field_of(model: type, name: str) -> Field:
    """The declared field `name` of dataclass `model`."""
    return next(spec for spec in fields(model) if spec.name == name)


def _whole(spec: Field) -> bool:
    return str(spec.type).startswith("int")


def declared_input(spec: Field, key: str, default):
    """One widget for `spec`: a checkbox for a bool, else a number input bounded by its range and
    labelled with its unit."""
    helped = spec.metadata.get("help")
    if spec.type == "bool":
        return st.checkbox(label_of(spec), value=default, key=key, help=helped)
    whole = _whole(spec)
    cast = int if whole else float
    bound = bound_of(spec.name, cast, spec.metadata)
    return cast(st.number_input(f"{label_of(spec)} ({bound.unit})", min_value=cast(bound.low),
                                max_value=cast(bound.high), value=cast(default), step=1 if whole else None,
                                format="%d" if whole else "%g", key=key, help=helped))


def declared_inputs(model: type, prefix: str) -> dict:
    """One widget per field of the dataclass `model` (keys "{prefix}:{field}"); returns the fields whose
    value differs from the default."""
    defaults, out = model(), {}
    for spec in fields(model):
        default = getattr(defaults, spec.name)
        value = declared_input(spec, f"{prefix}:{spec.name}", default)
        if value != default:
            out[spec.name] = value
    return out


def declared_column(spec: Field, options: list | tuple | None = None, **config):
    """A table column for `spec`: a select box of `options` (else its declared choices), a number column
    bounded by its range with its unit in the heading, else a text column; `config` is passed on."""
    label, helped = label_of(spec), spec.metadata.get("help")
    choices = options if options is not None else spec.metadata.get("choices")
    if choices is not None:
        return st.column_config.SelectboxColumn(label, options=list(choices), help=helped, **config)
    if "unit" in spec.metadata:
        whole = _whole(spec)
        bound = bound_of(spec.name, int if whole else float, spec.metadata)
        return st.column_config.NumberColumn(f"{label} ({bound.unit})", min_value=bound.low, max_value=bound.high,
                                             step=1 if whole else None, format="%d" if whole else "%g", help=helped,
                                             **config)
    return st.column_config.TextColumn(label, help=helped, **config)


def checked(entry, parse, what: str):
    """`entry` when `parse(entry, what)` accepts it, else an empty one of its kind with the parser's
    message shown."""
    try:
        parse(entry, what)
    except ScenarioError as exc:
        st.error(markdown_text(exc))
        return type(entry)()
    return entry


def blank(value) -> bool:
    """An empty table cell: None, NaN or only spaces."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str)
                                                                                 and not value.strip())


def empty_table(columns: tuple[str, ...], numbers: tuple[str, ...]) -> pd.DataFrame:
    """An empty table for an editor to start from: float64 `numbers` columns, the other `columns` text."""
    return pd.DataFrame({name: pd.Series(dtype="float64" if name in numbers else object) for name in columns})
