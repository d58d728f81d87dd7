"""The Report page's data: the executive report (engine.service.report) and its PDF, cached per (dataset,
scenario contents, window, assumptions, store fingerprint). dashboard.data holds the connection
and the other caches."""
from __future__ import annotations

import json
import tempfile
from dataclasses import fields
from pathlib import Path

import streamlit as st

from dashboard.data import _connection, db_path, scenario_of, store
from engine.scenario.spec import Scenario
from engine.service.compare import WORLD_TABLES as COMPARE_WORLD_TABLES
from engine.service.report.assumptions import ReportAssumptions
from engine.service.report.builder import Report, build_report
from engine.service.report.pdf import write_pdf


def report_assumptions_text(assumptions: ReportAssumptions) -> str:
    """`assumptions` as canonical JSON: the cache key of the reports."""
    spec = {f.name: getattr(assumptions, f.name) for f in fields(assumptions)}
    spec["kw_per_gpu"] = dict(sorted(assumptions.kw_per_gpu.items()))
    spec["price_overrides"] = sorted([*key, usd] for key, usd in assumptions.price_overrides.items())
    return json.dumps(spec, sort_keys=True)


def report_assumptions_from_text(text: str) -> ReportAssumptions:
    """The inverse of report_assumptions_text."""
    spec = json.loads(text)
    overrides = {tuple(row[:3]): float(row[3]) for row in spec.pop("price_overrides")}
    return ReportAssumptions(**spec, price_overrides=overrides)


@st.cache_data(show_spinner=False, max_entries=8)
def _report(path: str, dataset: str, baseline: str, candidates: str, days: float, assumptions: str,
            fingerprint: str) -> Report:
    def scenario(spec: dict) -> Scenario:
        return scenario_of(spec, path)

    s = _connection(path)[0].cursor()
    world = {name: s.table(name, dataset) for name in COMPARE_WORLD_TABLES}
    return build_report(s.jobs(dataset), s.fleet(dataset), world, scenario(json.loads(baseline)),
                        [scenario(spec) for spec in json.loads(candidates)],
                        report_assumptions_from_text(assumptions), dataset=dataset, days=days or None)


@st.cache_data(show_spinner=False, max_entries=4)
def _report_pdf(path: str, dataset: str, baseline: str, candidates: str, days: float, assumptions: str,
                fingerprint: str) -> bytes:
    report = _report(path, dataset, baseline, candidates, days, assumptions, fingerprint)
    with tempfile.TemporaryDirectory(prefix="meridian-report-pdf-") as folder:
        return write_pdf(report, Path(folder) / "report.pdf").read_bytes()


def _report_key(dataset: str, baseline: dict, candidates: list[dict], days: float,
                assumptions: ReportAssumptions) -> tuple:
    return (str(db_path()), dataset, json.dumps(baseline, sort_keys=True, default=str),
            json.dumps(candidates, sort_keys=True, default=str), float(days),
            report_assumptions_text(assumptions), store().fingerprint())


def report(dataset: str, baseline: dict, candidates: list[dict], days: float,
           assumptions: ReportAssumptions) -> Report:
    """The executive report (engine.service.report.builder.build_report) of `candidates` against `baseline` (Scenario.from_dict
    dicts) on `dataset`'s jobs submitted in its first `days` days (0 = all), with its world tables as
    `meridian report` reads them; cached per (dataset, scenario contents, window, assumptions, store
    fingerprint). Raises Unusable (no candidate, no jobs), ScenarioError, ValueError."""
    return _report(*_report_key(dataset, baseline, candidates, days, assumptions))


def report_pdf(dataset: str, baseline: dict, candidates: list[dict], days: float,
               assumptions: ReportAssumptions) -> bytes:
    """`report(...)` printed to PDF by headless Chromium (engine.service.report.pdf.write_pdf), cached with it.
    Raises ChromiumMissing without Chromium, RuntimeError when Chromium fails."""
    return _report_pdf(*_report_key(dataset, baseline, candidates, days, assumptions))
