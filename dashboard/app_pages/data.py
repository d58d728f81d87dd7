"""Data: upload telemetry (format, time zone, column mapping, what to do with bad rows and daylight-saving
changes), read the validation report and the rows set aside, manage datasets."""
import hashlib
from zoneinfo import available_timezones

import pandas as pd
import streamlit as st

from dashboard import data
from engine.core.escaping import markdown_text
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import FORMATS
from engine.telemetry.importers.columns import COLUMN_ALIASES, shown_name
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format
from engine.telemetry.input_limits import MAX_EXPANSION, MAX_TEXT_BYTES, MIB, memory_text

NOT_STATED = "not stated (the file's own)"
TIME_ZONES = [NOT_STATED, "UTC"] + sorted(z for z in available_timezones() if "/" in z and not z.startswith("Etc/"))
KEEP_AUTO = "(automatic)"
FILE_TYPES = ["csv", "gz", "swf", "psv", "txt"]
ON_PROBLEMS = {"Reject the whole file (nothing is imported)": False,
               "Import the valid rows and set the rest aside": True}
DST = {"Shift forward / read as the earlier time (with a note)": "shift", "Reject them (a problem each)": "reject"}


def _mapping_editor(name: str, content: bytes) -> dict[str, str]:
    """Preview of a generic CSV with one selectbox per column; returns the user's overrides."""
    preview, matched = data.csv_preview(name, content)
    if preview.empty and not len(preview.columns):
        st.warning("The file has no header row to preview.")
        return {}
    st.markdown("**Column mapping** — which Meridian column each of the file's columns feeds")
    st.dataframe(preview, hide_index=True, height=min(38 + 35 * len(preview), 400))
    file_key = hashlib.sha1(content[:4096] + name.encode()).hexdigest()[:8]
    choices = [KEEP_AUTO] + list(COLUMN_ALIASES)
    overrides = {}
    cols = st.columns(4)
    for i, column in enumerate(preview.columns):
        detected = matched.get(column)
        chosen = cols[i % 4].selectbox(
            markdown_text(column), choices, index=choices.index(detected) if detected else 0, key=f"map_{file_key}_{i}",
            format_func=lambda c: c if c == KEEP_AUTO else shown_name(c),
            help=f"Detected: {shown_name(detected) if detected else 'not used'}. (automatic) keeps Meridian's own "
                 "match.")
        if chosen != KEEP_AUTO and chosen != detected:
            overrides[column] = chosen
    return overrides


def _report(exc: ImportRejected) -> None:
    whole = len(exc.errors) == 1 and not exc.errors[0].line   # the file as a whole: the message says it
    st.error(markdown_text(f"Import rejected: {f'{exc.errors[0]}; nothing was imported' if whole else exc.summary()}."))
    st.dataframe(pd.DataFrame([(e.file, e.line, e.reason) for e in exc.errors], columns=["file", "line", "reason"]),
                 hide_index=True, column_config={"file": st.column_config.TextColumn(width="small"),
                                                 "line": st.column_config.NumberColumn(width="small"),
                                                 "reason": st.column_config.TextColumn(width="large")})


def _upload() -> None:
    st.subheader("Import telemetry")
    st.caption(f"Limits: an upload of at most {st.get_option('server.maxUploadSize'):,} MB; "
               f"gzip content may expand to at most {MAX_TEXT_BYTES // MIB:,} MiB and {MAX_EXPANSION} times its "
               "compressed size (more is refused as a possible decompression bomb); "
               f"{markdown_text(memory_text())}.")
    # A new key after each successful import empties the uploader for the next file.
    uploaded = st.file_uploader("Telemetry file (CSV, SWF, sacct export, openb lists, utilisation series; "
                                "gzip welcome)", type=FILE_TYPES, key=f"upload_{st.session_state.get('uploads', 0)}")
    cols = st.columns(4)
    fmt = cols[0].selectbox("Format", ["auto", *FORMATS], key="format")
    name = cols[1].text_input("Dataset name (optional)", key="new_dataset_name",
                              help="Defaults to the file name; importing into an existing dataset adds to it")
    tz = cols[2].selectbox("Time zone of naive timestamps", TIME_ZONES, key="tz")
    region = cols[3].text_input("Region for rows without one (optional)", key="default_region")
    left, right = st.columns(2)
    keep = ON_PROBLEMS[left.radio("If some rows have problems", list(ON_PROBLEMS), key="on_problems",
                                  help="Set aside: the rows without a problem are imported, the others are kept "
                                       "with their file, line and problem and listed below under Rows set aside")]
    dst = DST[right.radio("Local times a daylight-saving change skipped or repeated", list(DST), key="dst",
                          help="Shift: a time in the skipped hour moves forward by the gap (02:30 reads as 03:30), "
                               "a time in the repeated hour is its first occurrence; either way a note says how "
                               "many. Reject: each is a problem naming the rule")]
    if uploaded is None:
        return
    content = uploaded.getvalue()
    detected = detect_format(uploaded.name, content) if fmt == "auto" else fmt
    st.caption(markdown_text(f"{uploaded.name}: {len(content):,} bytes, format {detected}"
                             + (" (detected)" if fmt == "auto" else "")))
    mapping = _mapping_editor(uploaded.name, content) if detected == "csv" else {}
    if st.button("Import", type="primary", key="import"):
        options = ImportOptions(tz=None if tz == NOT_STATED else tz, mapping=mapping, region=region.strip() or None,
                                keep_valid=keep, dst=dst)
        try:
            with st.spinner(f"Importing {markdown_text(uploaded.name)}..."):
                result = data.import_file(uploaded.name, content, format=fmt, dataset=name.strip(), options=options)
        except ImportRejected as exc:
            _report(exc)
            return
        st.session_state["import_outcome"] = result
        st.session_state["select_dataset"] = result.dataset
        st.session_state["uploads"] = st.session_state.get("uploads", 0) + 1
        st.rerun()


def _outcome() -> None:
    result = st.session_state.pop("import_outcome", None)
    if result is None:
        return
    if result.import_id is None:
        st.info(markdown_text(f"Nothing imported: this file's content is already in dataset {result.dataset}."))
    else:
        st.success(markdown_text(f"Imported {result.rows:,} rows ({result.format}) into dataset {result.dataset}; "
                                 "it is now selected in the sidebar."))
    if result.rejected:
        st.warning(markdown_text(f"{result.rejected:,} row(s) with {result.problems:,} problem(s) were set aside; they "
                                 "are listed under Rows set aside below."))
    if result.notes:
        st.caption("Assumptions made while importing:\n"
                   + "\n".join(f"- {markdown_text(note)}" for note in result.notes))


def _datasets() -> None:
    st.subheader("Datasets")
    table = data.datasets()
    if table.empty:
        st.info("No datasets.")
        return
    st.dataframe(table[["name", "format", "rows", "rejected", "start", "end", "files", "scheduler"]], hide_index=True,
                 column_config={"rows": st.column_config.NumberColumn(format="localized"),
                                "rejected": st.column_config.NumberColumn(
                                    "rows set aside", format="localized", help="rows with problems an import set "
                                                                               "aside (listed below)"),
                                "scheduler": st.column_config.TextColumn(
                                    "recorded scheduler", help="how the telemetry was scheduled, when its "
                                                               "source said so: the recorded baseline replays it"),
                                "start": st.column_config.DatetimeColumn("start (UTC)"),
                                "end": st.column_config.DatetimeColumn("end (UTC)")})
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    victim = left.selectbox("Dataset to delete", list(table["name"]), key="delete_choice")
    if right.button("Delete...", key="delete"):
        st.session_state["confirm_delete"] = victim
    pending = st.session_state.get("confirm_delete")
    if pending:
        st.warning(markdown_text(f"Delete dataset {pending} and everything imported into it? This cannot be undone."))
        yes, no = st.columns(2)
        if yes.button(f"Yes, delete {markdown_text(pending)}", type="primary", key="confirm"):
            data.delete_dataset(pending)
            del st.session_state["confirm_delete"]
            st.rerun()
        if no.button("Cancel", key="cancel"):
            del st.session_state["confirm_delete"]
            st.rerun()


def _rejects() -> None:
    """The rows imports set aside, per dataset: file, line, problem."""
    table = data.datasets()
    held = list(table.loc[table["rejected"] > 0, "name"]) if not table.empty else []
    if not held:
        return
    st.subheader("Rows set aside")
    current = st.session_state.get("dataset")
    name = st.selectbox("Dataset", held, index=held.index(current) if current in held else 0, key="rejects_of")
    rows = data.rejects(name)
    st.caption(markdown_text(f"{rows['line'].nunique():,} row(s) of {name} had problems and were not imported "
                             f"({len(rows):,} problem(s)); fix them in the file and import it again into a new "
                             "dataset, or keep the dataset as it is."))
    st.dataframe(rows, hide_index=True, key="rejects_table", column_config={
        "file": st.column_config.TextColumn(width="small"), "line": st.column_config.NumberColumn(width="small"),
        "problem": st.column_config.TextColumn(width="large")})


st.title("Data")
_outcome()
_upload()
_datasets()
_rejects()
