"""An upload on the Data page: the level its columns suggest, with which templates each level lets
fit (what the choice changes), and the question asked before a file replaces the items of a
stored dataset of its name ("data_pending" in the session while it is open)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import streamlit as st

import geval
from studio import state

SAFE = re.compile(r"[^\w.-]")  # what a file or dataset name keeps of an upload's name; the rest becomes _
REPLACING = "data_replacing"  # the name the user chose to replace: `load` asks no more


def choose_level(preview, response: str, roles: dict[str, str], scores: list[str]) -> str | None:
    """The Level menu of a table's preview (`geval.Dataset.table_preview`), on the level the columns
    suggest, with why and which templates in prompts/ each level lets fit these rows (what the
    choice changes). Returns the level chosen, or None when it is the one suggested (the loader
    infers it again, and says why)."""
    inferred, why = preview.level_for(response, roles.get("context"), roles.get("grounding"))
    levels = list(geval.OPTIONS.item_levels)
    level = st.selectbox("Level", levels, index=levels.index(inferred),
                         help="turn: a response to the dialogue so far; dialogue: a whole dialogue, judged as one; "
                              "summary: a summary of a document (the grounding is then its {{document}}). The "
                              "level decides which templates fit the items.")
    st.caption(f"The columns suggest {inferred}: {why}." if level == inferred else
               f"Chosen by you; the columns suggest {inferred}: {why}.")
    try:
        fitting = {lv: geval.Template.fitting(preview.items(preview.mapping(response, scores, lv, **roles)))
                   for lv in levels}
    except geval.GevalError:  # a row the mapping cannot read: loading says which
        fitting = None
    if fitting is not None:
        names = [t.name for t in fitting[level]]
        others = ", ".join(f"{lv}: {len(fitting[lv])}" for lv in levels if lv != level)
        st.caption(f"At the {level} level, {len(names)} templates in prompts/ fit these rows: "
                   f"{', '.join(names) or 'none'} (at {others}). For an aspect none of them judges, the Prompts page "
                   "drafts one.")
    return None if level == inferred else level


def annotator_columns(preview, scores: list[str], aspect: str) -> list[str]:
    """Of a mapping's score columns (`scores`), those the user makes `aspect`'s annotators, a column each: at first
    its columns of numbers (a column of pass/fail words beside them stays an aspect of its own), all when fewer than
    two are."""
    numbers = preview.scaled(scores)
    return st.multiselect(f"{aspect}'s annotators, a column each (the others: an aspect each)", scores,
                          default=numbers if len(numbers) > 1 else scores,
                          help="A column of pass/fail words beside your annotators' numbers is an aspect of its own.")


def scale_inputs(columns: list[str], aspects: dict[str, str] | None = None) -> dict[str, str]:
    """A field per human score column of a mapping: the scale people were asked on ("1-5"; empty: not
    declared), {column: text}; named by the column's aspect in `aspects` (one field for an aspect's annotators)."""
    if not columns:
        return {}
    st.caption("The scale people were asked on, per score column (e.g. 1-5): a judge on another scale is mapped onto "
               "it. Leave it empty when you do not know it: then each verdict says which reading it took. A column of "
               "pass/fail words has none: it is read as two categories.")
    fields = st.columns(min(4, len(columns)))
    return {column: fields[k % len(fields)].text_input(f"Scale of {(aspects or {}).get(column, column)}",
                                                       key=f"data_scale_{column}", placeholder="e.g. 1-5")
            for k, column in enumerate(columns)}


def scales_section(store: geval.Store, dataset: geval.Dataset) -> None:
    """The people's scale of each aspect as declared with the stored dataset (by its paper, or by you), and a
    field to declare one ("coherence=1-5"): judges on another scale are mapped onto it."""
    if dataset.name not in store.dataset_names():
        return
    declared = store.scales(dataset.name)
    categories = store.categories(dataset.name)
    scored = [a for a in dataset.aspects if a not in categories]
    named = [f"{a} {lo:g}-{hi:g}" for a, (lo, hi) in declared.items()] + [f"{a} {'/'.join(c)}"
                                                                          for a, c in categories.items()]
    with st.expander("The people's scales: " + (", ".join(named) or "none declared")):  # labels: their categories
        st.caption("The scale each aspect was asked on. A judge on another scale (a 1-10 judge, a 0-1 one) is mapped "
                   "linearly onto it wherever it is compared score for score (the alternative annotator test, how the "
                   "judge errs). With none declared, a judge's own scale is taken to be the people's unless their "
                   "scores fall outside it, and every verdict says so. "
                   + (f"Categorical, without a scale: {', '.join(categories)}." if categories else ""))
        if not scored:  # pass/fail words, a preference: nothing is read on a scale
            st.caption("Every aspect here is labeled with categories: there is no scale to declare.")
            return
        left, right = st.columns([3, 1])
        text = left.text_input("Declare a scale", key="data_declare_scale", placeholder=f"{scored[0]}=1-5",
                               help="ASPECT=LOW-HIGH, several separated by commas; a bare LOW-HIGH declares every "
                                    "aspect scored with numbers. The CLI: python -m geval datasets load "
                                    f"{dataset.name} --scale ASPECT=LOW-HIGH.")
        if right.button("Declare", key="data_declare", disabled=not text.strip()):
            try:
                kept = store.declare_scales(dataset.name, [part.strip() for part in text.split(",") if part.strip()])
            except geval.GevalError as exc:
                st.error(str(exc))
            else:  # every cache keys on the human side's stamp, which the scales are part of
                st.success("The people's scales: " + ", ".join(f"{a} {lo:g}-{hi:g}" for a, (lo, hi) in kept.items()))


def received(upload) -> Path:
    """Where an upload (`st.file_uploader`'s file) is written to be read: uploads/.incoming/ beside the
    store. A loaded dataset reads its own copy (`load`), which a new upload of that name never
    overwrites unasked."""
    store_path = state.store().path
    folder = (Path(store_path).parent if store_path != ":memory:" else Path()) / "uploads" / ".incoming"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SAFE.sub("_", upload.name)
    path.write_bytes(upload.getvalue())
    return path


def load(incoming: Path, file_id: str, mapping: list[str] | None = None, name: str | None = None) -> None:
    """Load an upload (`received`) as `name` (default its file name): copied to uploads/<name>, which
    the dataset reads. When a stored dataset of that name has items the file does not, ask first:
    the session's "data_pending" holds the question, which `confirm_replace` draws."""
    store, name = state.store(), SAFE.sub("_", name or incoming.stem)
    if name in store.dataset_names() and st.session_state.get(REPLACING) != name:
        left = store.replaced_by(geval.load_dataset(incoming, mapping=mapping, name=name))
        if left["items"]:
            st.session_state["data_pending"] = {"path": str(incoming), "file_id": file_id, "mapping": mapping,
                                                "name": name, "left": left}
            return
    st.session_state.pop("data_pending", None)
    kept = incoming.parent.parent / f"{name}{incoming.suffix}"
    shutil.copyfile(incoming, kept)
    state.load_dataset(kept, mapping=mapping)
    st.session_state["data_upload_loaded"] = file_id


def error_text(exc: Exception, incoming: Path, as_uploaded: str) -> str:
    """An error about an upload, naming the file as uploaded, not where the server keeps it."""
    return str(exc).replace(str(incoming), as_uploaded).replace(f"{incoming.parent.parent}{os.sep}", "")


def _keep_stored() -> None:
    """The stored dataset stays; the upload is not loaded again while it is in the uploader."""
    pending = st.session_state.pop("data_pending", None)
    if pending is not None:
        st.session_state["data_upload_loaded"] = pending["file_id"]


def _load_pending(new_name: str | None) -> None:
    """The question's answer, run as a callback: replace the stored dataset (`new_name` None), or load
    the file under `new_name` (asked again if that one is stored too)."""
    pending = st.session_state.pop("data_pending")
    incoming = Path(pending["path"])
    try:
        if new_name is None:
            st.session_state[REPLACING] = pending["name"]
        load(incoming, pending["file_id"], pending["mapping"], new_name or pending["name"])
    except geval.GevalError as exc:
        st.session_state["data_error"] = error_text(exc, incoming, incoming.name)
    finally:
        st.session_state.pop(REPLACING, None)


@st.dialog("A dataset of this name is stored", on_dismiss=_keep_stored, width="large")
def confirm_replace() -> None:
    """Ask before a file replaces a stored dataset's items: replace it, load the file under another
    name, or keep the stored one."""
    pending = st.session_state["data_pending"]
    name, left = pending["name"], pending["left"]
    st.warning(f"The store holds a dataset named {name} with items this file does not have ({left['items']}). "
               f"Loading the file as {name} leaves them out, with the {left['judgments']} judgments and "
               f"{left['labels']} labels made on them (kept in the store, shown nowhere).")
    other = st.text_input("Or load the file under another name", f"{name}-2", key="data_other_name",
                          help="Letters, digits, '.', '-' and '_'; anything else becomes '_'.")
    replace, rename, keep = st.columns(3)
    replace.button(f"Replace {name}", type="primary", key="data_replace", on_click=_load_pending, args=(None,))
    rename.button("Load under the other name", key="data_rename", on_click=_load_pending, args=(other,),
                  disabled=not other.strip() or other.strip() == name)
    keep.button("Keep the stored one", key="data_keep", on_click=_keep_stored)
