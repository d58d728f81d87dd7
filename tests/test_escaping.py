"""Data-derived text at every exit (engine.core.escaping): HTML, JSON in a script block, plotly labels,
Markdown, and the places that use them: the HTML report and `meridian simulate --out` CSVs, on a
dataset whose every name is an attack (tests/hostile.py)."""
import csv
import io
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, shown
from hostile import DATASET, REGIONS, TEAMS, hostile_batch

from engine.core.escaping import (
    WORD_JOINER,
    html_text,
    markdown_code,
    markdown_text,
    plotly_figure,
    plotly_text,
    script_json,
)
from engine.scenario.spec import Scenario
from engine.service.compare import WORLD_TABLES
from engine.service.report.builder import build_report
from engine.service.report.html import render_html
from engine.telemetry.store import Store

SCENARIOS = REPO / "sample_data" / "scenarios"


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("hostile") / "m.duckdb"
    store = Store.open(db)
    store.add_import(DATASET, hostile_batch(), "hostile.csv", "sha-hostile")
    store.close()
    return db


def test_script_json_cannot_close_the_block_and_means_the_same():
    value = {"name": "</script><script>alert(1)</script><!-- & \u2028", "n": [1, 2.5]}
    text = script_json(value)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == value


def test_plotly_text_escapes_its_html_subset_and_nothing_else():
    assert plotly_text("<b>R&D</b> · x") == "&lt;b&gt;R&amp;D&lt;/b&gt; · x"
    assert plotly_text(3) == "3"


def test_plotly_figure_escapes_trace_data_and_category_axes_but_not_numbers_or_templates():
    figure = {"data": [{"type": "bar", "name": "<i>a</i>", "x": ["<b>r</b>", "s"], "y": [1, 2],
                        "customdata": [["<u>c</u>", 1.5]], "hovertemplate": "%{x}<extra>mine</extra>",
                        "text": np.array(["<a href='x'>t</a>"], dtype=object)},
                       {"type": "heatmap", "z": [[1.0, None]], "x": np.array(["<x>"]), "y": [0, 1]}],
              "layout": {"xaxis": {"categoryarray": ["<b>r</b>", "s"]}, "yaxis2": {"ticktext": ["<t>"]},
                         "title": {"text": "<b>ours</b>"}}}
    out = plotly_figure(figure)
    bar, heat = out["data"]
    assert bar["name"] == "&lt;i&gt;a&lt;/i&gt;" and bar["x"] == ["&lt;b&gt;r&lt;/b&gt;", "s"] and bar["y"] == [1, 2]
    assert bar["customdata"] == [["&lt;u&gt;c&lt;/u&gt;", 1.5]] and list(bar["text"]) == ["&lt;a href='x'&gt;t&lt;/a&gt;"]
    assert bar["hovertemplate"] == "%{x}<extra>mine</extra>"      # the builder's own markup is kept
    assert heat["z"] == [[1.0, None]] and list(heat["x"]) == ["&lt;x&gt;"] and heat["y"] == [0, 1]
    assert out["layout"]["xaxis"]["categoryarray"] == bar["x"] and out["layout"]["yaxis2"]["ticktext"] == ["&lt;t&gt;"]
    assert out["layout"]["title"] == {"text": "<b>ours</b>"}
    assert figure["data"][0]["name"] == "<i>a</i>"                  # the input is not changed


@pytest.mark.parametrize("value", [
    "![t](http://203.0.113.7/x.png)", "[a](javascript:alert(1))", "<img src=x onerror=alert(1)>", "$x^2$",
    ":red[boom] :material/home: :smile:", "**b** _i_ ~~s~~ `c`", "# h", "1. item", "- item", "> quote",
    "http://203.0.113.7/auto www.evil.example a@b.example", "| a | b |", "&lt; \\ back",
])
def test_markdown_text_leaves_no_markdown_and_reads_back_the_same(value):
    escaped = markdown_text(value)
    assert shown(escaped) == value
    assert re.fullmatch(r"(?:\\[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~])*", escaped)   # every punctuation escaped


@pytest.mark.parametrize("value", ["http://203.0.113.7/a", "HTTPS://203.0.113.7", "www.evil.example", "WWW.evil.example",
                                   "mail a@b.example", "mailto:a@b.example", '=HYPERLINK("http://203.0.113.7","x")'])
def test_markdown_text_keeps_urls_and_addresses_from_becoming_literal_autolinks(value):
    """GitHub-flavoured Markdown links "www.", "http://" and "name@host" in text even when escaped: a word
    joiner breaks each start (the patterns of mdast-util-gfm-autolink-literal), and the text reads the same."""
    escaped = markdown_text(value)
    assert WORD_JOINER in escaped and shown(escaped) == value
    plain = re.sub(r"\\(.)", r"\1", escaped)   # what the autolink finder sees: escapes read
    assert not re.search(r"(?i)(https?://|www(?=\.))[-.\w]+", plain), plain
    assert not re.search(r"[-.+\w]+@[-\w]+(?:\.[-\w]+)+", plain), plain


def test_markdown_text_turns_line_breaks_and_control_characters_into_spaces():
    assert markdown_text("a\nb\r\tc\x00d\u2028e") == "a b c d e"


def test_markdown_code_fences_past_any_backticks():
    assert markdown_code("/tmp/x.db") == "`/tmp/x.db`"
    assert markdown_code("a `b` c") == "`` a `b` c ``" and markdown_code("```") == "```` ``` ````"


def test_html_text_escapes_quotes_too():
    assert html_text('<a title="x">\'') == "&lt;a title=&quot;x&quot;&gt;&#x27;"


def _report(db):
    store = Store.open(db)
    try:
        jobs, fleet = store.jobs(DATASET), store.fleet(DATASET)
        world = {name: store.table(name, DATASET) for name in WORLD_TABLES}
    finally:
        store.close()
    scenarios = [Scenario.load(SCENARIOS / f"{n}.toml") for n in ("fifo", "easy-backfill", "follow-the-sun")]
    return build_report(jobs, fleet, world, scenarios[0], scenarios[1:], dataset=DATASET)


def test_the_report_keeps_every_hostile_name_out_of_its_markup(hostile_db):
    html = render_html(_report(hostile_db))
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert len(scripts) == 2 and html.count("<script") == 2      # plotly.js and the figures, nothing else
    figures = scripts[1]
    assert not re.search("[<>&]", figures[figures.index("{"):])   # no data can end the block or add markup
    outside = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    assert not re.search(r"<(img|span|a|i|u)\b|<b on", outside)
    assert all(html_text(name) in outside for name in (*REGIONS, DATASET))
    specs = json.loads(figures[figures.index("{"):figures.index(";\nfor")])
    heat = specs["utilisation_by_local_hour"]["data"]
    assert {y for trace in heat for y in trace["y"]} == {plotly_text(r) for r in REGIONS}
    assert all(trace["name"] in {"fifo", "easy-backfill"} for trace in heat)


def test_simulate_out_writes_spreadsheet_safe_csvs_and_exact_parquet(hostile_db, tmp_path):
    done = subprocess.run([sys.executable, "-m", "engine.cli", "simulate", "--dataset", DATASET, "--db",
                           str(hostile_db), "--scenario", str(SCENARIOS / "fifo.toml"), "--out", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    raw = (tmp_path / "jobs.csv").read_bytes()
    rows = list(csv.DictReader(io.StringIO(raw[3:].decode("utf-8"), newline="")))
    exact = pd.read_parquet(tmp_path / "jobs.parquet")
    assert [r["job_id"] for r in rows] == [("'" if v[0] in "+-\t=@" else "") + v for v in exact["job_id"]]
    assert {r["team"] for r in rows} == {"'" + t if t[0] in "=+-@" else t for t in TEAMS}
    assert all(not cell.startswith(("=", "+", "-", "@", "\t")) or cell.lstrip("-").replace(".", "").isdigit()
               for row in rows for cell in row.values() if cell)
    assert set(exact["team"]) == set(TEAMS)   # Parquet keeps every value exact
    regions = {r["region"] for r in rows} | {r["home_region"] for r in rows}
    assert regions == set(REGIONS)            # text that is no formula is written as it is
