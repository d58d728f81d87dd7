"""render_html: the report as ONE self-contained HTML file (plotly.js inline, no network).

Page 1 (A4 when printed) is the one-pager: title and data range, the headline, the three charts and
the region table; the appendix starts on a new page: the KPI table (exactly `meridian compare`'s
values), other candidates' headlines, assumptions, defaults relied on, method and fidelity.
"""
from __future__ import annotations

import pandas as pd

from engine.analysis.runs import catalogue
from engine.core.escaping import html_text as escape
from engine.core.escaping import plotly_figure, script_json
from engine.core.text import hours
from engine.service.report import fmt
from engine.service.report.assets import plotly_js
from engine.service.report.builder import Report

CSS = """
@page { size: A4; margin: 11mm 12mm; }
* { box-sizing: border-box; }
body { font-family: "Helvetica Neue", Arial, sans-serif; color: #1f2a37; font-size: 11px; line-height: 1.35;
       margin: 0 auto; width: 700px; padding: 12px 0; }
h1 { font-size: 19px; margin: 0 0 2px; } h2 { font-size: 13px; margin: 10px 0 4px; break-after: avoid; }
.sub { color: #5b6675; margin: 0 0 6px; }
ul.headline { margin: 4px 0 6px; padding-left: 16px; } ul.headline li { margin: 2px 0; }
.row { display: flex; justify-content: space-between; }
.chart { break-inside: avoid; }
table { border-collapse: collapse; width: 100%; font-size: 10px; break-inside: auto; }
th, td { padding: 2px 5px; border-bottom: 1px solid #e3e7ec; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
table.ranking th:nth-child(2), table.ranking td:nth-child(2) { text-align: left; }
th { background: #f3f5f8; font-weight: 600; }
.appendix { break-before: page; page-break-before: always; }
.appendix table { font-size: 8.5px; line-height: 1.2; } .appendix th, .appendix td { padding: 1px 4px; }
.appendix th { white-space: normal; }
.appendix p, .appendix li { font-size: 8.5px; } .appendix ul { padding-left: 14px; margin: 2px 0; }
.muted { color: #5b6675; } .fidelity { border-left: 3px solid #1f77b4; padding-left: 6px; }
.cols { display: grid; grid-template-columns: 46% 52%; gap: 2%; align-items: start; }
.cols h2:first-child { margin-top: 0; }
@media print { body { padding: 0; } .modebar-container { display: none !important; } }
"""

def _table(header: list[str], rows: list[list[str]], css: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    kind = f' class="{css}"' if css else ""
    return f"<table{kind}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _arrow(before: str, after: str) -> str:
    return before if before == after else f"{before} → {after}"


def region_rows(regions: pd.DataFrame) -> list[list[str]]:
    """The region table's cells as printed (baseline → candidate where they differ)."""
    rows = []
    for r in regions.itertuples(index=False):
        rows.append([r.region, _arrow(f"{r.gpus_baseline:,.0f}", f"{r.gpus_candidate:,.0f}"),
                     _arrow(fmt.pct(r.util_baseline), fmt.pct(r.util_candidate)),
                     _arrow(fmt.usd(r.idle_usd_per_year_baseline), fmt.usd(r.idle_usd_per_year_candidate)),
                     _arrow(fmt.usd(r.spend_usd_per_year_baseline), fmt.usd(r.spend_usd_per_year_candidate)),
                     _arrow(f"{r.carbon_t_per_year_baseline:,.1f}", f"{r.carbon_t_per_year_candidate:,.1f}")])
    return rows


KPI_COLUMNS_PER_TABLE = 7  # scenarios per KPI table across the A4 appendix; more go to a table below


def ranking_rows(report: Report) -> list[list[str]]:
    """One row per candidate, best first: the headline measure, GPUs saved, what they are worth, the
    change in spend and the p95 wait."""
    k = report.kpis.set_index("kpi")
    rows = []
    for number, name in enumerate(report.candidates, start=1):
        s = report.savings[name]
        spread = f" ({s.more_work_pct_min:+.0f} to {s.more_work_pct_max:+.0f})" if s.seeds > 1 else ""
        rows.append([str(number), name, f"{s.more_work_pct:+.0f} %{spread}", f"{s.equivalent_gpus:,.0f}",
                     fmt.usd(s.hardware_usd_per_year), fmt.signed_usd(s.spend_usd_per_year_change),
                     hours(k.loc["wait_p95_s", name])])
    return rows


def _ranking(report: Report) -> str:
    if len(report.candidates) < 2:
        return ""
    return (f"<h2>{len(report.candidates)} candidates ranked by the work each serves at {escape(report.baseline)}'s "
            "service level</h2>" + _table(["#", "Candidate", "More work", "GPUs saved", "GPUs saved, $/yr",
                                            "Spend change, $/yr", "p95 wait"], ranking_rows(report), "ranking"))


def _kpi_tables(report: Report) -> str:
    """The KPI appendix, at most KPI_COLUMNS_PER_TABLE scenarios a table (the baseline in each)."""
    others = report.scenarios[1:]
    out = []
    for first in range(0, len(others), KPI_COLUMNS_PER_TABLE - 1):
        shown = [report.baseline, *others[first:first + KPI_COLUMNS_PER_TABLE - 1]]
        rows = [[catalogue.heading(row.kpi), *(catalogue.shown(row.kpi, row[n]) for n in shown)]
                for _, row in report.kpis.iterrows()]
        out.append(_table(["KPI", *shown], rows))
    return "\n".join(out)


NARROW_KPI_SCENARIOS = 3  # up to this many scenarios the KPI table fits the appendix's left column


def _appendix(report: Report, extra: str, assumed: str) -> str:
    """The KPI table(s), the other candidates' headlines, the assumptions, method and fidelity: two
    columns, the KPI table the left one when it is narrow enough, else across the page above them."""
    kpis = ("<h2>KPIs per scenario (as <code>meridian compare</code> computes them, named and rounded as the "
            f"KPI catalogue says)</h2>\n{_kpi_tables(report)}")
    notes = (f"<h2>Assumptions (editable)</h2>\n"
             f"{_table(['Assumption', 'Value', 'Unit'], [list(r) for r in report.assumptions.rows()])}\n"
             f"<h2>Defaults relied on for lack of data</h2>\n{assumed}\n")
    method = (f"<h2>Method</h2>\n<ul>{''.join(f'<li>{escape(m)}</li>' for m in report.method)}</ul>\n"
              f"<p class=\"fidelity\">{escape(report.fidelity)}</p>\n<p class=\"muted\">Made by Meridian from the "
              "dataset's telemetry replayed in its discrete-event simulator.</p>")
    if len(report.scenarios) <= NARROW_KPI_SCENARIOS:
        return f'<div class="cols"><div>\n{kpis}\n</div><div>\n{extra}{notes}{method}\n</div></div>'
    return f'{kpis}\n<div class="cols"><div>\n{notes}{extra}\n</div><div>\n{method}\n</div></div>'


def _title(report: Report) -> str:
    many = len(report.candidates)
    best = report.candidate if many == 1 else f"{report.candidate}, the best of {many} candidates,"
    return f"{best} vs {report.baseline}"


def _figure(name: str) -> str:
    return f'<div class="chart" id="fig-{name}"></div>'


def _scripts(report: Report) -> str:
    specs = script_json({name: plotly_figure(figure) for name, figure in report.figures.items()})
    return ("<script>" + plotly_js().replace("</script", "<\\/script") + "</script>\n<script>\n"
            f"const FIGURES = {specs};\n"
            "for (const [name, fig] of Object.entries(FIGURES)) {\n"
            "  Plotly.newPlot('fig-' + name, fig.data, fig.layout, {displaylogo: false, responsive: false});\n"
            "}\n</script>")


def render_html(report: Report) -> str:
    """The report as one HTML document (about 5 MB: plotly.js is embedded)."""
    start, end = report.range_utc
    base, cand = report.baseline, report.candidate
    others = report.scenarios[2:]
    extra = "".join(f"<h2>{escape(n)} against {escape(base)}</h2><ul class='headline'>"
                    + "".join(f"<li>{escape(s)}</li>" for s in report.headlines[n]) + "</ul>" for n in others)
    assumed = ("<ul>" + "".join(f"<li>{escape(a)}</li>" for a in report.assumed) + "</ul>") if report.assumed \
        else "<p>Every price, grid intensity and time zone came from the dataset; nothing was assumed.</p>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Meridian report: {escape(_title(report))} on {escape(report.dataset)}</title>
<style>{CSS}</style></head>
<body>
<h1>{escape(_title(report))}: what the better schedule is worth</h1>
<p class="sub">Dataset <b>{escape(report.dataset)}</b> · {escape(report.range_note)} · measured
{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC · scenarios: {escape(", ".join(report.scenarios))}</p>
<ul class="headline">{"".join(f"<li>{escape(s)}</li>" for s in report.headline)}</ul>
{_ranking(report)}
<h2>Utilisation by local hour of day per region: {escape(base)} (left) and {escape(cand)} (right)</h2>
{_figure("utilisation_by_local_hour")}
<div class="row">{_figure("spend_by_tier")}{_figure("waits_by_class")}</div>
<h2>By region ({escape(base)} → {escape(cand)}, per year)</h2>
{_table(["Region", "GPUs", "Utilisation", "Idle $/yr", "Spend $/yr", "Carbon t CO2e/yr"],
        region_rows(report.regions))}
<section class="appendix">
<h2>Appendix</h2>
{_appendix(report, extra, assumed)}
</section>
{_scripts(report)}
</body></html>
"""
