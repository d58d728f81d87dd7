"""Spreadsheet-safe CSV export: telemetry values can never run as formulas when opened.

Imported text is stored exactly as written, so a job id such as "=HYPERLINK(...)" is plain
data in Meridian. Spreadsheets, however, evaluate any cell starting with =, +, -, @ (and tab,
carriage return, line feed or NUL, plus their full-width forms) as a formula. Following
OWASP's CSV-injection guidance, every such text cell is prefixed with a single quote, which
spreadsheets read as "this is text", and every text cell is enclosed in double quotes.
Leading spaces do not help an attacker either: the test looks past them.

Numeric columns are written as numbers (-1.5 stays -1.5), and a text cell that is just a
number ("-1.5") is left alone: spreadsheets read it as that number, never as a formula.
"""
from __future__ import annotations

import csv

import pandas as pd

# First characters that make a spreadsheet cell a formula (OWASP, plus full-width variants).
FORMULA_TRIGGERS = "=+-@\t\r\n\x00\uff1d\uff0b\uff0d\uff20"
_TRIGGER = "^ *[=+\\-@\\t\\r\\n\\x00\uff1d\uff0b\uff0d\uff20]"  # the same, as a regex class
_PLAIN_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def neutralise_text(values: pd.Series) -> pd.Series:
    """Text cells that a spreadsheet would evaluate, prefixed with a single quote; others unchanged."""
    text = values.astype("str")
    risky = text.str.contains(_TRIGGER).fillna(False) & ~text.str.fullmatch(_PLAIN_NUMBER).fillna(False)
    return text.where(~risky, "'" + text)


def _is_textual(series: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_datetime64_any_dtype(series))


def to_spreadsheet_csv(frame: pd.DataFrame) -> bytes:
    """`frame` as CSV bytes safe to open in Excel, LibreOffice or Google Sheets.

    UTF-8 with a byte-order mark (so Excel detects the encoding), CRLF line ends, no index,
    text cells quoted and neutralised, numbers unquoted, missing values as empty cells.
    Column names are neutralised like any other text.
    """
    out = pd.DataFrame(index=frame.index)
    for position, column in enumerate(frame.columns):
        series = frame.iloc[:, position]
        out[position] = neutralise_text(series) if _is_textual(series) else series
    out.columns = list(neutralise_text(pd.Series([str(c) for c in frame.columns], dtype="str")))
    text = out.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\r\n")
    return text.encode("utf-8-sig")
