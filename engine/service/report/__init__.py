"""The executive ROI report: from a baseline and candidate scenarios on a dataset to one page an
executive acts on, as a self-contained HTML file and a PDF (engine.service.report.builder has the steps).

The engine never imports plotly: figures are plotly JSON, and plotly.js is read as a file.
"""
