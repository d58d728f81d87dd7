"""Data-derived text made safe at every exit: HTML, JSON inside a script block, plotly's labels,
Markdown rendered by Streamlit, and CSV cells opened in a spreadsheet.

Imported text is stored exactly as written, so a region called "</script><script>alert(1)</script>"
or a job id such as "=HYPERLINK(...)" is plain data in Meridian. It only becomes dangerous where it is
written into another language, so each exit escapes it for that language, and only there:

- `html_text`: HTML element text and attribute values.
- `script_json`: JSON embedded in a `<script>` block. Every `<`, `>` and `&` is written as a \\u
  escape, so no data can close the block (`</script>`) or open a comment (`<!--`); the JSON means the
  same to a parser.
- `plotly_text`: a string plotly.js draws as a label (trace names, tick labels, hover text, titles).
  plotly parses a subset of HTML in labels (`<b>`, `<a href>`, `<span style>`); escaping `<`, `>` and
  `&` as entities makes data show literally. `plotly_figure` applies it to the data a figure carries
  (trace values, names, text and the category arrays of its axes); a chart builder escapes only the
  data it writes into its own markup (titles, annotations, hover templates) with `plotly_text`.
- `markdown_text`: text inside Markdown that Streamlit renders (st.markdown, st.caption, st.info ...
  and widget labels). Every ASCII punctuation character gets a backslash, which CommonMark renders as
  the character itself, so data never becomes a link, an image (a request leaving the page), HTML,
  emphasis, a heading, a LaTeX formula ($), a colour or icon directive (:red[...]) or an autolink;
  line breaks and other control characters become spaces. Escapes do not stop GitHub-flavoured
  Markdown's literal autolinks (Streamlit's renderer finds "www.", "http://" and "name@host" in the
  text after reading the escapes), so a word joiner (U+2060, invisible, not a word character) goes
  between "www", "http" or "https" and what follows, and before an "@": no URL or address in data
  becomes a link. `markdown_code` is the same for a code span.
- `neutralise_text` and `to_spreadsheet_csv`: CSV cells. Spreadsheets evaluate any cell starting
  with =, +, -, @ (and tab, carriage return, line feed or NUL, plus their full-width forms) as a
  formula. Following OWASP's CSV-injection guidance, every such text cell is prefixed with a single
  quote, which spreadsheets read as "this is text", and every text cell is enclosed in double quotes.
  Leading spaces do not help an attacker either: the test looks past them. Numeric columns are
  written as numbers (-1.5 stays -1.5), and a text cell that is just a number ("-1.5") is left
  alone: spreadsheets read it as that number, never as a formula.
"""
from __future__ import annotations

import csv
import html
import json
import re
import string

import numpy as np
import pandas as pd

# First characters that make a spreadsheet cell a formula (OWASP, plus full-width variants).
FORMULA_TRIGGERS = "=+-@\t\r\n\x00\uff1d\uff0b\uff0d\uff20"
_TRIGGER = "^ *[=+\\-@\\t\\r\\n\\x00\uff1d\uff0b\uff0d\uff20]"  # the same, as a regex class
_PLAIN_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

_MARKDOWN_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# where GitHub-flavoured Markdown's literal autolinks start (mdast-util-gfm-autolink-literal): a word joiner
# there keeps the text as written and the link out
_AUTOLINK_START = re.compile(r"(?i)(?<=www)(?=\.)|(?<=http)(?=:)|(?<=https)(?=:)|(?=@)")
WORD_JOINER = "\u2060"
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}

# Trace attributes whose strings plotly.js draws (as labels, legend entries, hover or cell text).
PLOTLY_TRACE_TEXT = ("x", "y", "z", "text", "hovertext", "name", "labels", "parents", "ids", "customdata",
                     "header", "cells", "dimensions", "legendgrouptitle", "theta", "r", "lat", "lon", "locations")
_PLOTLY_AXIS = re.compile(r"^(x|y|z)axis\d*$|^polar\d*$")
_PLOTLY_AXIS_TEXT = ("categoryarray", "ticktext")


def html_text(value) -> str:
    """`value` as text for an HTML element or a quoted attribute."""
    return html.escape(str(value), quote=True)


def script_json(value) -> str:
    """`value` as JSON that is safe inside a <script> block (see the module docstring)."""
    text = json.dumps(value, allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _SCRIPT_UNSAFE[m.group()], text)


def plotly_text(value) -> str:
    """`value` as a label plotly.js draws literally (its HTML subset escaped as entities)."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escaped(value):
    """Strings anywhere inside `value` (lists, tuples, arrays, dicts) passed through plotly_text."""
    if isinstance(value, str):
        return plotly_text(value)
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_escaped(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype == object:
        out = np.empty(value.shape, dtype=object)
        out.flat[:] = [_escaped(v) for v in value.flat]
        return out
    if isinstance(value, np.ndarray) and value.dtype.kind == "U":
        return np.vectorize(plotly_text, otypes=[object])(value) if value.size else value
    return value


def plotly_trace(trace: dict) -> dict:
    """The attributes of one plotly trace (as JSON) whose data strings need escaping, escaped."""
    return {key: _escaped(trace[key]) for key in PLOTLY_TRACE_TEXT if key in trace and trace[key] is not None}


def plotly_axis(layout: dict) -> dict:
    """{axis name: {attribute: escaped}} for the category arrays and tick texts of a layout's axes."""
    out = {}
    for name, axis in layout.items():
        if _PLOTLY_AXIS.match(name) and isinstance(axis, dict):
            parts = {key: _escaped(axis[key]) for key in _PLOTLY_AXIS_TEXT if axis.get(key) is not None}
            if parts:
                out[name] = parts
    return out


def plotly_figure(figure: dict) -> dict:
    """A plotly JSON figure ({"data": [...], "layout": {...}}) with every data string escaped."""
    layout = dict(figure.get("layout", {}))
    for name, parts in plotly_axis(layout).items():
        layout[name] = {**layout[name], **parts}
    return {**figure, "data": [{**trace, **plotly_trace(trace)} for trace in figure.get("data", [])],
            "layout": layout}


def markdown_text(value) -> str:
    """`value` as literal text inside Markdown (see the module docstring)."""
    text = _AUTOLINK_START.sub(WORD_JOINER, _CONTROL.sub(" ", str(value)))
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def markdown_code(value) -> str:
    """`value` as an inline code span: a fence longer than any run of backticks inside it."""
    text = _CONTROL.sub(" ", str(value))
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest or text.startswith(" ") else f"{fence}{text}{fence}"


def neutralise_text(values: pd.Series) -> pd.Series:
    """Text cells that a spreadsheet would evaluate, prefixed with a single quote; others unchanged."""
    text = values.astype("str")
    risky = text.str.contains(_TRIGGER).fillna(False) & ~text.str.fullmatch(_PLAIN_NUMBER).fillna(False)
    return text.where(~risky, "'" + text)


def _is_textual(series: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_datetime64_any_dtype(series))


def spreadsheet_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its text cells and column names neutralised (numbers and times as they are)."""
    out = pd.DataFrame(index=frame.index)
    for position, column in enumerate(frame.columns):
        series = frame.iloc[:, position]
        out[position] = neutralise_text(series) if _is_textual(series) else series
    out.columns = list(neutralise_text(pd.Series([str(c) for c in frame.columns], dtype="str")))
    return out


def to_spreadsheet_csv(frame: pd.DataFrame) -> bytes:
    """`frame` as CSV bytes safe to open in Excel, LibreOffice or Google Sheets.

    UTF-8 with a byte-order mark (so Excel detects the encoding), CRLF line ends, no index,
    text cells quoted and neutralised, numbers unquoted, missing values as empty cells.
    Column names are neutralised like any other text.
    """
    text = spreadsheet_frame(frame).to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\r\n")
    return text.encode("utf-8-sig")
