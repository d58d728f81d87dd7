"""The executive ROI report: from a baseline and candidate scenarios on a dataset to one page an
executive acts on, as a self-contained HTML file and a PDF (engine.report.builder has the steps).

The engine never imports plotly: figures are plotly JSON, and plotly.js is read as a file.
"""
from engine.report.assumptions import ReportAssumptions
from engine.report.builder import Report, build_report
from engine.report.html import render_html
from engine.report.pdf import ChromiumMissing, write_pdf

__all__ = ["ChromiumMissing", "Report", "ReportAssumptions", "build_report", "render_html", "write_pdf"]
