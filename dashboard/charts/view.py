"""The one way a page draws a chart: `plot(st, figure, ...)` hands Streamlit a copy of the figure whose
data strings (trace values, names, text, category axes) are escaped for plotly's labels
(engine.core.escaping.plotly_figure), so a region, team or job called "<a href=...>" is drawn as
written, and whose words are in the dataset's resource unit (engine.core.units: "processor-hours" for a
CPU log where a GPU fleet reads "GPU-hours"). The figure itself is left as it is: cached figures are
shared between sessions, and so is the escaped copy: it is made once per figure and unit (a figure
cached for every session, such as the Overview's, is escaped once, not once per visitor).

`UNIT` is the unit of the dataset the current script run shows (dashboard/app.py sets it per run; a
context variable, so each session's thread has its own); `say` puts a page's own text into it.
"""
from __future__ import annotations

import threading
import weakref
from contextvars import ContextVar

import plotly.graph_objects as go

from engine.core.escaping import plotly_figure
from engine.core.units import GPU, ResourceUnit

UNIT: ContextVar[ResourceUnit] = ContextVar("meridian_resource_unit", default=GPU)
_WORDS = ("text", "name", "hovertemplate", "title")   # keys whose string values are words, not data
_SPECS: dict[tuple[int, str], go.Figure] = {}   # (id of a live figure, unit) -> its escaped copy
_SPECS_LOCK = threading.Lock()


def say(text: str) -> str:
    """`text` in the resource unit of the dataset this run shows (unchanged for a GPU fleet)."""
    return UNIT.get().say(text)


def plot(container, figure: go.Figure, **kwargs):
    """`container.plotly_chart` (container: st, a column, a tab...) of the escaped copy of `figure`, in the
    dataset's unit."""
    return container.plotly_chart(_escaped(figure), **kwargs)


def _escaped(figure: go.Figure) -> go.Figure:
    """The escaped copy of `figure` in UNIT, made once while the figure lives (figures are not edited
    after they are drawn: charts build a new one for new data). A Figure rather than its dict, so that
    Streamlit takes it as validated instead of validating the dict again on every draw."""
    unit = UNIT.get()
    key = (id(figure), unit.one)
    spec = _SPECS.get(key)
    if spec is None:
        spec = figure.to_dict()
        spec = go.Figure(plotly_figure(spec if unit.is_gpu else _in_unit(spec)))
        with _SPECS_LOCK:
            if key not in _SPECS:
                weakref.finalize(figure, _forget, key)
            _SPECS[key] = spec
    return spec


def _forget(key: tuple[int, str]) -> None:
    with _SPECS_LOCK:
        _SPECS.pop(key, None)


def _in_unit(node):
    """A figure dict's titles, names and hover templates in UNIT's words (data arrays untouched)."""
    if isinstance(node, dict):
        return {key: say(value) if key in _WORDS and isinstance(value, str) else _in_unit(value)
                for key, value in node.items()}
    if isinstance(node, list):
        return [_in_unit(item) if isinstance(item, (dict, list)) else item for item in node]
    return node
