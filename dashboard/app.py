"""Meridian's Streamlit entry point: page config, navigation and the shared sidebar.

Run from the repository root: `streamlit run dashboard/app.py -- --db FILE`.
"""
import logging
from pathlib import Path

import streamlit as st

from dashboard import data
from dashboard.charts.view import UNIT, say
from engine.core.escaping import markdown_code, markdown_text
from engine.core.units import GPU
from engine.telemetry.store import StoreLocked

DEFAULT_DATASET = "sample"
PAGES = Path(__file__).parent / "app_pages"
FAVICON = Path(__file__).parent / "assets" / "favicon.png"  # a file: a :material/...: page icon is fetched from Google
log = logging.getLogger("meridian.dashboard")


def _pick_dataset(names: list[str]) -> None:
    """Sidebar dataset picker; its choice lives in st.session_state['dataset']."""
    requested = st.session_state.pop("select_dataset", None)
    if requested in names:
        st.session_state["dataset"] = requested
    if st.session_state.get("dataset") not in names:
        st.session_state["dataset"] = DEFAULT_DATASET if DEFAULT_DATASET in names else (names[0] if names else None)
    if names:
        st.selectbox("Dataset", names, key="dataset", help="The telemetry every page shows")
    else:
        st.info("No datasets yet: import one on the Data page.")


def _unit() -> None:
    """What the chosen dataset's fleet counts (GPUs, a CPU log's processors), for this run's words."""
    dataset = st.session_state.get("dataset")
    UNIT.set(data.unit(dataset) if dataset else GPU)


def main() -> None:
    """One script run: page config, navigation, the sidebar, then the chosen page."""
    st.set_page_config(page_title="Meridian", page_icon=str(FAVICON), layout="wide")
    page = st.navigation([
        st.Page(PAGES / "overview.py", title="Overview", icon=":material/monitoring:", default=True),
        st.Page(PAGES / "data.py", title="Data", icon=":material/database:", url_path="data"),
        st.Page(PAGES / "whatif.py", title="What-if", icon=":material/science:", url_path="whatif"),
        st.Page(PAGES / "claims.py", title="Claims", icon=":material/fact_check:", url_path="claims"),
        st.Page(PAGES / "fidelity.py", title="Fidelity", icon=":material/verified:", url_path="fidelity"),
        st.Page(PAGES / "timezones.py", title="Time zones", icon=":material/schedule:", url_path="timezones"),
        st.Page(PAGES / "costcarbon.py", title="Cost & carbon", icon=":material/payments:", url_path="cost"),
        st.Page(PAGES / "fairness.py", title="Teams & fairness", icon=":material/balance:", url_path="fairness"),
        st.Page(PAGES / "capacity.py", title="Capacity planning", icon=":material/query_stats:", url_path="capacity"),
        st.Page(PAGES / "optimise.py", title="Optimise", icon=":material/tune:", url_path="optimise"),
        st.Page(PAGES / "predictors.py", title="Predictors", icon=":material/model_training:", url_path="predictors"),
        st.Page(PAGES / "agents.py", title="Agents", icon=":material/smart_toy:", url_path="agents"),
        st.Page(PAGES / "job.py", title="Job", icon=":material/work_history:", url_path="job"),
        st.Page(PAGES / "report.py", title="Report", icon=":material/summarize:", url_path="report"),
    ])
    with st.sidebar:
        title = st.empty()
        try:
            _pick_dataset(list(data.datasets()["name"]))
            _unit()
            title.markdown(say("**Meridian** · GPU fleet idle time"))
        except StoreLocked as exc:
            st.error(markdown_text(exc))
            st.stop()
        except Exception as exc:  # e.g. not a DuckDB file: say so instead of a traceback
            log.exception("cannot open %s", data.db_path())
            st.error(markdown_text(f"Cannot open the database {data.db_path()}: {str(exc)[:300]}"))
            st.stop()
        if data.sample_problem():
            st.warning(markdown_text(f"The sample data could not be loaded: {data.sample_problem()}"))
        st.caption(f"Database: {markdown_code(data.db_path())}")
    try:
        page.run()
    except Exception as exc:  # a page must never show a traceback; the log keeps it for developers
        log.exception("page %s failed", page.title)
        st.error(markdown_text(f"This page could not be shown: {type(exc).__name__}: {str(exc)[:300]}"))


# Streamlit runs this file as __main__; the sweep runner's worker processes import it as __mp_main__
# (multiprocessing re-imports the main module) and must not run the app.
if __name__ == "__main__":
    main()
