"""Plotly's browser bundle and its `plotly_white` template, read as files from the installed plotly
package: the report embeds plotly.js inline and builds figures as plotly JSON, so the engine never
imports plotly (the layering rule) and the HTML needs no network."""
from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path


@cache
def _package_data() -> Path:
    spec = importlib.util.find_spec("plotly")   # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the report needs the plotly package (its bundled plotly.min.js)")
    return Path(list(spec.submodule_search_locations)[0]) / "package_data"


@cache
def plotly_js() -> str:
    """plotly.min.js, the version the installed plotly package ships."""
    return (_package_data() / "plotly.min.js").read_text(encoding="utf-8")


@cache
def _white() -> str:
    return (_package_data() / "templates" / "plotly_white.json").read_text(encoding="utf-8")


def plotly_white() -> dict:
    """The `plotly_white` template as plotly JSON (a fresh copy: callers may edit it)."""
    return json.loads(_white())
