"""Importers: one module per source format, each exposing `parse(data, source, options)`.

`parse` takes the raw bytes of one file, its display name and `ImportOptions`, and returns an
`ImportBatch` or raises `ImportRejected` listing every problem found.
"""
from __future__ import annotations

from importlib import import_module
from typing import Callable

from engine.telemetry.batch import ImportBatch
from engine.telemetry.importers.common import ImportOptions

# format name -> module under engine.telemetry.importers
FORMATS = {
    "csv": "generic_csv",
    "swf": "swf",
    "sacct": "sacct",
    "openb-nodes": "openb",
    "openb-pods": "openb",
    "utilization": "utilization",
}

Parser = Callable[[bytes, str, ImportOptions], ImportBatch]


def parser_for(fmt: str) -> Parser:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from auto, {', '.join(FORMATS)}")
    module = import_module(f"engine.telemetry.importers.{FORMATS[fmt]}")
    return getattr(module, "parse_" + fmt.replace("-", "_"))
