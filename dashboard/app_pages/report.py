"""Executive report: candidate scenarios against a baseline as the one-page ROI report (engine.service.report), previewed
here and downloaded as a self-contained HTML file or a PDF.

Building simulates every scenario (seconds for a week of the sample, about a minute for all of it), so it runs
only on "Build the report"; the built report stays in the session, keyed by the inputs it was built from.
"""
import json
import math
import re

import streamlit as st

from dashboard import data
from dashboard.data import headroom as data_headroom
from dashboard.data import report as data_report
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_code
from engine.core.escaping import markdown_text as md
from engine.service.compare import UNPRICED, Unusable
from engine.service.report.assumptions import ReportAssumptions
from engine.service.report.html import render_html
from engine.service.report.pdf import ChromiumMissing, chromium_path

BASELINE = "recorded"  # the policies that reproduce how the dataset was scheduled (engine.scenario.recorded)
CANDIDATES = ("follow-the-sun", "data-local")  # the default candidate: the first of these bundled
DEFAULT_DAYS = 7.0
PREVIEW_HEIGHT = 1400
BUILT = "rp_built"   # session: {"inputs": the inputs' key (with the store fingerprint), "report": Report, "html"}
PDF = "rp_pdf_bytes"  # session: {"inputs": the inputs' key, "pdf": bytes}


def _step(default: float) -> float:
    """A number input's step: a tenth of the default's order of magnitude (1 for zero)."""
    return 10.0 ** (math.floor(math.log10(default)) - 1) if default > 0 else 1.0


def _choose(names: list[str]) -> tuple[str, list[str], float]:
    default_candidate = next((n for n in CANDIDATES if n in names), None) or next(n for n in names if n != BASELINE)
    st.session_state.setdefault("rp_baseline", BASELINE if BASELINE in names else names[0])
    st.session_state.setdefault("rp_candidates", [default_candidate])
    st.session_state.setdefault("rp_days", DEFAULT_DAYS)
    left, middle, right = st.columns([1, 2, 1])
    baseline = left.selectbox("Baseline", names, key="rp_baseline",
                              help="what the fleet does today; recorded reproduces how the dataset was scheduled "
                                   "(see the Fidelity page); every candidate is measured at its service level")
    candidates = middle.multiselect("Candidates", names, key="rp_candidates",
                                    help="the policies proposed instead; the first one gets the region table and "
                                         "the heat maps")
    days = right.number_input("First N days of the dataset (0 = all)", min_value=0.0, step=1.0, format="%g",
                              key="rp_days",
                              help="a week of the sample takes about half a minute per scenario (the headroom "
                                   "searches); all of it several minutes")
    return baseline, candidates, days


def _assumptions() -> ReportAssumptions | None:
    """The editable assumptions (ReportAssumptions.fields(): numbers as inputs, mappings as text), or None
    after an error message."""
    values = {}
    with st.expander("Assumptions"):
        numbers = [f for f in ReportAssumptions.fields() if f["kind"] == "number"]
        for i, column in enumerate(st.columns(3)):
            for f in numbers[i::3]:
                st.session_state.setdefault(f"rp_{f['name']}", float(f["default"]))
                values[f["name"]] = column.number_input(f"{f['label']} ({f['unit']})", min_value=0.0,
                                                        step=_step(f["default"]), key=f"rp_{f['name']}",
                                                        help=f["help"])
        for f in ReportAssumptions.fields():
            if f["kind"] == "mapping":
                shown = ", ".join(f"{' / '.join(k) if isinstance(k, tuple) else k}: {v:g}"
                                  for k, v in sorted(f["default"].items())) or "none"
                st.caption(f"{f['label']} ({f['unit']}), as `meridian report` uses them: {shown}.")
    try:
        return ReportAssumptions(**values)
    except ValueError as exc:
        st.error(md(f"Assumptions: {exc}"))
        return None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "report"


def _bullets(sentences) -> str:
    """Markdown bullets of plain sentences (their names and dollar signs never read as Markdown or LaTeX)."""
    return "\n".join(f"- {md(s)}" for s in sentences)


def _build(inputs: str, dataset: str, bundled: dict, baseline: str, candidates: list[str], days: float,
           assumptions: ReportAssumptions) -> None:
    with st.spinner(md(f"Simulating {', '.join([baseline, *candidates])} on {dataset} and measuring their "
                       "headroom...")):
        try:
            report = data_report.report(dataset, bundled[baseline], [bundled[c] for c in candidates], days, assumptions)
        except (ScenarioError, Unusable, ValueError) as exc:
            st.error(md(f"The report could not be built: {exc}"))
            return
    st.session_state[BUILT] = {"inputs": inputs, "report": report, "html": render_html(report)}


def _pdf(inputs: str, dataset: str, bundled: dict, baseline: str, candidates: list[str], days: float,
         assumptions: ReportAssumptions, column, file_name: str) -> None:
    """The PDF download, printed on demand ("Prepare PDF") since Chromium takes a few seconds."""
    try:
        chromium_path()
    except ChromiumMissing as exc:
        column.warning(md(f"No PDF: {exc}"))
        return
    kept = st.session_state.get(PDF)
    if kept is None or kept["inputs"] != inputs:
        if not column.button("Prepare PDF", key="rp_prepare_pdf", icon=":material/picture_as_pdf:"):
            return
        with st.spinner("Printing the report with headless Chromium..."):
            try:
                pdf = data_report.report_pdf(dataset, bundled[baseline], [bundled[c] for c in candidates], days,
                                             assumptions)
            except ChromiumMissing as exc:
                column.warning(md(f"No PDF: {exc}"))
                return
            except RuntimeError as exc:
                column.error(md(f"The PDF could not be printed: {str(exc)[:300]}"))
                return
        kept = st.session_state[PDF] = {"inputs": inputs, "pdf": pdf}
    column.download_button("Download PDF", kept["pdf"], file_name=f"{file_name}.pdf", mime="application/pdf",
                           key="rp_download_pdf", icon=":material/download:", on_click="ignore")


def _show(built: dict, pdf_args: tuple) -> None:
    report = built["report"]
    st.caption(f"**{md(report.dataset)}**: {md(report.range_note)}.")
    if len(report.candidates) > 1:
        st.markdown(md(f"Best of {len(report.candidates)} candidates by the work each serves at {report.baseline}'s "
                       f"service level: {report.candidate}. Ranked: {', '.join(report.candidates)}."))
    for name, sentences in report.headlines.items():
        st.subheader(md(f"{name} against {report.baseline}"))
        st.markdown(_bullets(sentences))
    for note in report.assumed:
        st.caption(md(f"Assumed for lack of data: {note}"))
    more = len(report.candidates) - 1
    file_name = f"meridian-report-{_slug(report.dataset)}-{_slug(report.candidate)}"
    file_name += f"-and-{more}-more" if more else ""
    left, right, _ = st.columns([1, 1, 3])
    left.download_button("Download HTML", built["html"], file_name=f"{file_name}.html", mime="text/html",
                         key="rp_download_html", icon=":material/download:", on_click="ignore")
    _pdf(*pdf_args, right, file_name)
    st.subheader("Preview")
    st.iframe(built["html"], height=PREVIEW_HEIGHT, alt=f"Executive report: {report.candidate} against "
                                                        f"{report.baseline} on {report.dataset}")


st.title("Executive report")
dataset = st.session_state.get("dataset")
if dataset is None:
    st.info("No datasets yet: import one on the Data page.")
    st.stop()
bundled = {data_headroom.RECORDED: data_headroom.recorded(dataset)[0], **data.bundled_scenarios()}
if len(bundled) < 2:
    st.error(f"The report needs a baseline and a candidate among the bundled scenarios in "
             f"{markdown_code(data.SCENARIO_DIR)}.")
    st.stop()
if data.world_tables(dataset)["gpu_types"].empty:
    st.info(f"Nothing to report for {md(dataset)}: it has no fleet table (nodes with GPU types and pricing tiers). "
            "Import one on the Data page.")
    st.stop()
if not data.has_prices(dataset):
    st.info(md(f"No report for {dataset}: the report prices its figures, and {UNPRICED}."))
    st.stop()
st.caption(f"What a better policy is worth on **{md(dataset)}**: how much more work the same fleet serves at the "
           "baseline's service level, how many fewer GPUs the same work needs, service levels, idle dollars, cost "
           "and carbon of each candidate scenario against the baseline, on one page to share as HTML or PDF (the "
           "numbers `meridian compare` prints). Building measures each scenario's load headroom: about half a "
           "minute per scenario for a week of the sample.")
baseline, candidates, days = _choose(list(bundled))
assumptions = _assumptions()
if not candidates:
    st.warning("Pick at least one candidate scenario to compare with the baseline.")
    st.stop()
if baseline in candidates:
    st.warning(md(f"The baseline {baseline} is also a candidate: pick candidates other than the baseline."))
    st.stop()
if assumptions is None:
    st.stop()
inputs = json.dumps([dataset, data.store().fingerprint(), baseline, candidates, days,
                     data_report.report_assumptions_text(assumptions)])
if st.button("Build the report", key="rp_build", type="primary", icon=":material/summarize:"):
    _build(inputs, dataset, bundled, baseline, candidates, days, assumptions)
built = st.session_state.get(BUILT)
if built is None:
    st.info("Choose the scenarios and press **Build the report** (a week of the sample: about half a minute per "
            "scenario).")
elif built["inputs"] != inputs:
    st.info("The choices changed since the report was built: press **Build the report** again.")
else:
    _show(built, (inputs, dataset, bundled, baseline, candidates, days, assumptions))
