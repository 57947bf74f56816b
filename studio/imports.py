"""Scores made elsewhere, brought in on the Data page: a judge's (`geval.alttest.import_judge`, the
files `python -m geval judge import` reads) and an annotator's labels (`geval.labeling.read_labels`,
those of `python -m geval labels import`); and, for Inspect, the file an imported judgment came from.
Each import is one transaction: a bad row is one red line naming it, and nothing is stored."""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

import geval
from studio.text import plain

TYPES = ["csv", "json", "jsonl"]
AS_NAMED = "(as the file names them)"
DONE = "imports_done"  # what the last import did, shown after the rerun that updates the page above
NOTED = "imports_noted"  # what to know before reading it (`Imported.notes`), shown below that, in orange
SCALE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*$")
ONLY_KNOWN = "Only this dataset's items"
#: The CLI's options that the engine's messages name, as this form's fields.
FIELDS = {"--aspect NAME --scale LOW-HIGH": "its name typed in the aspect field, and the Scale field",
          "--only-known": f"tick '{ONLY_KNOWN}'", "--scale LOW-HIGH": "the Scale field", "--scale 1-5": "Scale: 1-5",
          "--aspect": "the aspect field"}


def section(store: geval.Store, dataset: geval.Dataset) -> None:
    """The Data page's section: a judge's scores and an annotator's labels, each imported from a file."""
    st.subheader("Scores made elsewhere")
    st.caption(f"For {plain(dataset.name)}'s items: a judge you ran elsewhere (your own pipeline, a promptfoo or "
               "inspect_ai run, a colleague's script) joins the app's judges on Inspect and Agreement; a colleague's "
               "labels join yours as one more annotator. The files `python -m geval judge import` and "
               "`python -m geval labels import` read.")
    for line in st.session_state.pop(DONE, []):
        st.success(line)
    for note in st.session_state.pop(NOTED, []):
        st.warning(plain(note))
    judge, labels = st.columns(2)
    with judge:
        _judge_form(store, dataset)
    with labels:
        _labels_form(store, dataset)


def _judge_form(store: geval.Store, dataset: geval.Dataset) -> None:
    aspects = list(dict.fromkeys([*dataset.aspects, *geval.labeling.counts(store, dataset.name)["aspect"]]))
    with st.form("import_judge_form", enter_to_submit=False):  # Enter in a box is not yet "import"
        st.markdown("**A judge's scores**")
        upload = st.file_uploader(
            "CSV, JSON or JSONL keyed by item id", type=TYPES, key="import_judge_file",
            help="Rows with an id column (item_id, id, instance_id: the item's id, or your own file's id) and a "
                 "column per aspect (or one score column); or {item id: score}; or {judge: {item id: score}}, "
                 "the alternative annotator test's llm_annotations.json, which imports every judge in it.")
        name = st.text_input("Judge name", key="import_judge_name",
                             placeholder="the file's name; in a {judge: ...} file, every judge",
                             help="In a {judge: {item id: score}} file, only the judge of this name is imported.")
        aspect = st.selectbox("Aspect of a single score column (pick one, or type a new one)", [AS_NAMED, *aspects],
                              key="import_judge_aspect",
                              accept_new_options=True,
                              help="The aspect of a file's one score column: one the people scored, or a new one "
                                   "typed here (with its Scale below), e.g. for scores you mean to label later.")
        scale = st.text_input("Scale", key="import_judge_scale",
                              placeholder="the judge's, e.g. 1-10 (default: the people's)",
                              help="The judge's lowest and highest score; left empty, the scale declared for the "
                                   "people's scores, else their range.")
        only_known = st.checkbox(ONLY_KNOWN, key="import_judge_only_known",
                                 help="For a file made for more items than this dataset has (the full SummEval's for "
                                      "its sample): the other items' scores are left out, and counted.")
        submitted = st.form_submit_button("Import the judge's scores", icon=":material/upload:",
                                          key="import_judge_submit")
    blob = _chosen(submitted, upload, "the judge's scores")
    if blob is None:
        return
    path = _uploads(store) / hashlib.sha256(blob).hexdigest()[:12] / _safe(upload.name)  # one folder per content
    new = not path.exists()
    try:
        bounds = _scale(scale)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
        done = geval.alttest.import_judge(store, dataset.name, path, name.strip() or None,
                                          None if aspect == AS_NAMED else aspect, bounds, only_known)
    except geval.GevalError as exc:
        if new:  # nothing of a refused file is kept
            path.unlink(missing_ok=True)
        message = str(exc).replace(str(path), upload.name)
        for option, field in FIELDS.items():
            message = message.replace(option, field)
        st.error(plain(message))
        return
    st.session_state[DONE] = [_judge_line(one, upload.name) for one in done]
    st.session_state[NOTED] = list(dict.fromkeys(note for one in done for note in one.notes))
    st.rerun()


def _judge_line(done, file: str) -> str:
    """What importing one judge did, in one line."""
    if done.already:
        return f"{done.name}: already imported from {file}: nothing changed."
    unscored = f", {done.unscored} without a score" if done.unscored else ""
    left_out = f", {done.left_out} scores of other items left out" if done.left_out else ""
    return (f"{done.name}: {done.items} items imported ({', '.join(done.aspects)}{unscored}{left_out}); it is listed as "
            f"\"{done.name} (imported from {file})\" on Inspect and Agreement.")


def _labels_form(store: geval.Store, dataset: geval.Dataset) -> None:
    with st.form("import_labels_form", enter_to_submit=False):
        st.markdown("**An annotator's labels**")
        upload = st.file_uploader("CSV, JSON or JSONL: item_id, aspect, score", type=TYPES, key="import_labels_file",
                                  help="One label a row: item_id (the item's id, or your own file's id), aspect, "
                                       "score; annotator, seconds and created optional (as `python -m geval labels "
                                       "export` writes them).")
        annotator = st.text_input("Annotator", key="import_labels_annotator",
                                  placeholder="the file's annotator column, else 'you'",
                                  help="Given, every label of the file is this annotator's.")
        submitted = st.form_submit_button("Import the labels", icon=":material/upload:", key="import_labels_submit")
    blob = _chosen(submitted, upload, "labels")
    if blob is None:
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / _safe(upload.name)
        path.write_bytes(blob)
        try:
            labels = geval.labeling.read_labels(path)
            for label in labels:
                label["annotator"] = annotator.strip() or label["annotator"]
            written = sum(store.save_labels(labels, dataset.name, on_scale=True).values())
        except geval.GevalError as exc:  # the file's row, or the item the store does not have
            message = str(exc).replace(str(path), upload.name)
            st.error(plain(message if message.startswith(upload.name) else f"{upload.name}: {message}"))
            return
    read = pd.DataFrame(labels)
    st.session_state[DONE] = [f"{upload.name}: {written} labels imported ({', '.join(read['aspect'].unique())}; "
                              f"annotators {', '.join(read['annotator'].unique())})."]
    st.rerun()


def _chosen(submitted: bool, upload, what: str) -> bytes | None:
    """The uploaded file's bytes once its form is submitted; None before, or with an error when no file is chosen."""
    if not submitted:
        return None
    if upload is None:
        st.error(f"Choose a file of {what} first.")
        return None
    return upload.getvalue()


def _uploads(store: geval.Store) -> Path:
    """Where the judges' files are kept, beside the store (their path is in each judgment's record)."""
    beside = Path(store.path).parent if str(store.path) != ":memory:" else Path(tempfile.gettempdir())
    return beside / "uploads" / "judges"


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


def _scale(text: str) -> tuple[float, float] | None:
    """'1-5' as (1.0, 5.0); None for nothing given."""
    if not text.strip():
        return None
    found = SCALE.match(text)
    if not found or float(found.group(1)) >= float(found.group(2)):
        raise geval.GevalError(f"scale {text.strip()!r}: give the lowest and highest score, e.g. 1-5")
    return float(found.group(1)), float(found.group(2))


def provenance(store: geval.Store, dataset: str, combo: pd.Series, item_id: str, aspect: str) -> str | None:
    """For a judgment of a judge imported from a file, where it came from: the file, its row, its SHA-256
    and when it was imported (None for a judge the app asked)."""
    fields = json.loads(combo["signature_json"] or "{}")
    if fields.get("backend") != "imported":
        return None
    rows = store.judgments(dataset, combo["template_version"], combo["signature"],
                           columns=("item_id", "aspect", "detail"))
    found = rows[(rows["item_id"] == item_id) & (rows["aspect"] == aspect)]
    detail = json.loads(found["detail"].iloc[0] or "{}") if len(found) else {}
    row = str(detail.get("row", ""))
    if row.startswith(f"{detail.get('file')}:"):  # a table's line, after the file's path
        row = f"line {row[len(detail['file']) + 1:]}"
    return (f"Imported from {fields.get('file')}" + (f" ({row})" if row else "")
            + f", SHA-256 {detail.get('sha256', fields.get('sha256'))}, on {fields.get('imported')} (UTC). "
            "G-Eval Studio did not ask this judge: there is no prompt and no raw answer.")
