"""The What-if page's scenario files: the custom scenario downloaded as TOML (it loads with
`meridian simulate --scenario FILE`), and TOML files uploaded as scenarios to compare, checked with the
CLI's rules and messages (engine.scenario.files). Uploaded scenarios live in the session, by label."""
from __future__ import annotations

import re

import streamlit as st

from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text
from engine.scenario.files import scenario_from_upload, scenario_toml

UPLOADED = "wi_uploaded"          # session: label -> scenario dict of every uploaded scenario
UPLOAD_NOTES = "wi_upload_notes"  # session: (ok, message) per file of the last upload
UPLOADER = "wi_upload"
SUFFIX = " (uploaded)"


def uploaded() -> dict[str, dict]:
    """The uploaded scenarios of this session, by label ("<name> (uploaded)")."""
    return dict(st.session_state.get(UPLOADED, {}))


def _take_uploads() -> None:
    """on_change of the uploader: read every chosen file before the page is drawn again, so that its
    scenario is already among the choices above."""
    kept, notes = dict(st.session_state.get(UPLOADED, {})), []
    for file in st.session_state.get(UPLOADER) or []:
        try:
            scenario, spec = scenario_from_upload(file.getvalue(), file.name)
        except ScenarioError as exc:
            notes.append((False, str(exc)))
            continue
        label = scenario.name + SUFFIX
        kept[label] = spec
        notes.append((True, f"{label}: loaded; pick it as the baseline or a candidate above"))
    st.session_state[UPLOADED], st.session_state[UPLOAD_NOTES] = kept, notes


def file_name(name: str) -> str:
    """A safe download file name for scenario `name`: letters, digits, dot, dash and underscore only."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:80]
    return f"{stem or 'custom'}.toml"


def scenario_files(custom: dict) -> None:
    """Download the custom scenario built above; upload scenario files."""
    st.download_button("Download the custom scenario as TOML", key="wi_download", mime="application/toml",
                       on_click="ignore",
                       data=scenario_toml(custom, ("Built on Meridian's What-if page; run it with",
                                                   "meridian simulate --dataset NAME --scenario THIS-FILE")),
                       file_name=file_name(str(custom.get("name", "custom"))),
                       help="the scenario built under Custom scenario, as a file `meridian simulate`, "
                            "`meridian compare` and this page's upload read")
    st.file_uploader("Upload scenario TOML files", type=["toml"], accept_multiple_files=True, key=UPLOADER,
                     on_change=_take_uploads,
                     help="each file is checked as `meridian simulate --scenario FILE` checks it; a valid one "
                          "joins the baseline and candidate choices for this session")
    for ok, message in st.session_state.get(UPLOAD_NOTES, []):
        (st.success if ok else st.error)(markdown_text(message))
