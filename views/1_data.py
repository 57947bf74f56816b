"""Data: pick a bundled or shared dataset, or upload your own; preview it and its human scores."""

from pathlib import Path

import pandas as pd
import streamlit as st

import geval
from studio import imports, pairwise, state, uploads
from studio.text import plain

st.title("Data")
if "data_deleted" in st.session_state:
    st.success(st.session_state.pop("data_deleted"))
st.caption("Pick a dataset to judge: a bundled sample, a full public set (../shared/data, if present), or your own "
           "CSV, JSON or JSONL file. Without human scores in it, your own labels (the Label page) are what the judge "
           "is compared with. A file loaded once stays in the store, listed with the others.")
with st.container(border=True, key="data_howto"):  # the path through the app, for a first visit
    st.markdown("**Does a judge agree with people?** One page a step: Label when your file has no human "
                "scores (or to add yours), and Tune at the end to raise agreement:")
    steps = [
        ("views/1_data.py", "1. Data: pick a dataset", ":material/table:"),
        ("views/7_label.py", "2. Label: your own scores", ":material/label:"),
        ("views/2_prompts.py", "3. Prompts: edit a template", ":material/edit_note:"),
        ("views/3_score.py", "4. Score: run the judge", ":material/play_circle:"),
        ("views/4_inspect.py", "5. Inspect: disagreements", ":material/search:"),
        ("views/5_agreement.py", "6. Agreement: with people", ":material/insights:"),
        ("views/6_tune.py", "7. Tune: raise agreement", ":material/tune:"),
    ]
    for row in (steps[:4], steps[4:]):  # two rows: the labels stay whole
        for column, (page, label, icon) in zip(st.columns(4), row):
            column.page_link(page, label=label, icon=icon)

source = st.radio("Source", ["Bundled or shared dataset", "Upload a file"], horizontal=True, key="data_source",
                  persist_state="session")
refused, again = "", False  # an upload that could not be loaded; whether it was, with the mapping before
waiting = ""  # an upload whose mapping is not loaded yet: the dataset below is still the one before


if source == "Bundled or shared dataset":
    known = geval.Dataset.known()
    sources = geval.Dataset.sources(state.store())  # bundled, shared, then the stored ones (uploads)
    names = list(sources)
    loaded = st.session_state.get("dataset_source") or {}
    current = loaded.get("stored") or loaded.get("name") or Path(loaded.get("path") or state.DEFAULT_DATASET).stem
    # The menu names the dataset loaded, whatever it held when last drawn (e.g. before an upload).
    st.session_state["data_dataset"] = current if current in names else \
        state.DEFAULT_DATASET if state.DEFAULT_DATASET in names else names[0]

    def _load_chosen() -> None:
        name = st.session_state["data_dataset"]
        try:  # a stored dataset (an upload) is opened by its name, from the store
            state.load_dataset(known.get(name, name))
        except geval.GevalError as exc:
            st.session_state["data_error"] = str(exc)

    st.selectbox("Dataset", names, key="data_dataset", on_change=_load_chosen,
                 format_func=lambda n: f"{n}  ({sources[n]})")
    if "data_error" in st.session_state:
        st.error(st.session_state.pop("data_error"))
else:
    limit = st.get_option("server.maxUploadSize")
    upload = st.file_uploader(f"CSV, JSON or JSONL, up to {limit} MB", type=["csv", "json", "jsonl"], key="data_upload",
                              help="A bigger file is refused (the limit is server.maxUploadSize in "
                                   ".streamlit/config.toml); load it from ../shared/data or the CLI instead.")
    if upload is not None:
        path = uploads.received(upload)
        before = st.session_state.get("dataset_source")
        done = st.empty()  # "loaded with the mapping below": taken back when a load with another mapping fails
        try:
            preview = geval.Dataset.table_preview(path)
            if preview is None:
                if st.session_state.get("data_upload_loaded") != upload.file_id:  # loaded, or the stored one kept
                    uploads.load(path, upload.file_id)
            else:
                if st.session_state.get("data_upload_loaded") == upload.file_id:  # the form stays: say it is done
                    done.success(f"{upload.name} is loaded with the mapping below; the dataset is shown under it. "
                                 "Change the mapping and load again to read the file otherwise.")
                else:
                    st.info(f"{upload.name}: your own table, not a known layout: check which column holds what "
                            "below (each menu opens on the column it guessed), then load it.")
                    waiting = upload.name
                every = len(preview.records) <= len(preview.rows)  # a file of five records or fewer: all shown
                st.caption(f"Its {'' if every else 'first '}{geval.reporting.counted(len(preview.rows), 'record')} "
                           "(nested fields as dotted paths, e.g. scores.naturalness):")
                st.dataframe(pd.DataFrame(preview.rows, columns=preview.columns), hide_index=True,
                             key="data_upload_preview")
                with st.container(border=True, key="data_mapping"):  # every pick redraws what it changes
                    columns, guess = preview.columns, preview.suggested
                    optional = ["(none)", *columns]

                    def pick(label: str, role: str, choices: list[str]) -> str | None:
                        index = choices.index(guess[role]) if role in guess else None if role == "response" else 0
                        return st.selectbox(label, choices, index=index, placeholder="Choose the column judged")

                    response = pick("Response or summary (the text judged; for a whole dialogue, the dialogue)",
                                    "response", columns)
                    if preview.unsuggested and response is None:
                        st.warning(f"{preview.unsuggested[0].upper()}{preview.unsuggested[1:]}: choose the column "
                                   "that holds it.")
                    roles = {"context": pick("Context (dialogue so far)", "context", optional),
                             "grounding": pick("Grounding (fact, persona or source document)", "grounding", optional),
                             "system": pick("System", "system", optional),
                             "group": pick("Group (dialogue or document id)", "group", optional),
                             "id": pick("Id (your file's own id of each row: labels and judge scores imported "
                                        "later may name items by it)", "id", optional)}
                    roles = {role: column for role, column in roles.items() if column != "(none)"}
                    scores = st.multiselect("Human score columns (one aspect each; none: you label the items)",
                                            columns, default=preview.scores)
                    together = st.text_input(
                        "One aspect of these columns, an annotator each (empty: an aspect per column)",
                        key="data_one_aspect", placeholder="e.g. quality", disabled=len(scores) < 2,
                        help="For a file with a column per annotator (rater1, rater2, …): the columns become one "
                             "aspect's annotators, named by their columns, which the annotators' agreement and the "
                             "test of whether the judge may replace one need.")
                    for column, (number, value, held) in preview.almost_scores.items():
                        if column in scores:  # chosen by hand: the load names the line it refuses
                            continue
                        where = plain(preview.where(number, upload.name))
                        st.warning(f"Column {plain(column)} holds {held} but {where} reads '{plain(value)}': it is "
                                   "left out of the score columns above. Fix that "
                                   f"{'line' if preview.by_line else 'record'} to read it as a score.")
                    together = together.strip() if len(scores) > 1 else ""
                    joined = uploads.annotator_columns(preview, scores, together) if together else []
                    aspects = {column: together if column in joined else column for column in scores}
                    own = [column for column in scores if column not in joined]  # an aspect each
                    scales = uploads.scale_inputs(preview.scaled([*joined[:1], *own]), aspects)
                    level = uploads.choose_level(preview, response, roles, scores) if response else None
                    submitted = st.button("Load with this mapping", type="primary", disabled=response is None)
                if submitted:
                    uploads.load(path, upload.file_id, preview.mapping(response, scores, level, scales,
                                                                       aspect=together or None, annotators=joined,
                                                                       **roles))
        except geval.GevalError as exc:  # it names the file as uploaded, not where the server keeps it
            done.empty()
            st.error(uploads.error_text(exc, path, upload.name))
            refused = upload.name
            again = st.session_state.get("data_upload_loaded") == upload.file_id  # loaded before, another mapping
        else:
            if st.session_state.get("dataset_source") != before:
                st.rerun()  # so that the sidebar, drawn before this page, names the new dataset
    if "data_pending" in st.session_state:
        uploads.confirm_replace()
    if "data_error" in st.session_state:
        st.error(st.session_state.pop("data_error"))

dataset = state.dataset()
if dataset is None:
    st.stop()

if refused:
    st.info(f"{refused} was not loaded with this mapping: it stays as loaded before, and every page works on "
            f"{dataset.name}, below." if again else
            f"{refused} was not loaded: every page still works on {dataset.name}, below.")
elif waiting:  # what follows, its imports too, is another dataset's: it read as the file's
    st.info(f"{waiting} is not loaded yet: below is {dataset.name}, which every page (and an import of scores made "
            "elsewhere) works on until you load the file with the mapping above.")
st.subheader(dataset.name)
cols = st.columns(5)
cols[0].metric("Items", len(dataset.items))
cols[1].metric("Groups", len(dataset.groups))
models = not dataset.systems and dataset.models  # pairs: the models their two sides compare
cols[2].metric("Models compared" if models else "Systems", len(models or dataset.systems))
cols[3].metric("Levels", ", ".join(dataset.levels))
cols[4].metric("Skipped values", sum(dataset.skipped.values()))
if dataset.skipped:
    st.caption("Skipped: " + "; ".join(f"{n} {why}" for why, n in dataset.skipped.items()))
for note in dataset.notes:  # how a table was read: its level, its items' own ids, its groups, and why
    st.caption(f"Read at {note}." if note.startswith("level") else f"{note[:1].upper()}{note[1:]}.")

own_ids = any(item.source_id for item in dataset.items)  # the file's own ids, which labels and judge files may use
categories = state.store().categories(dataset.name)  # a categorical aspect's labels read in words (pass, not 1)
preview = pd.DataFrame([
    {"id": item.id, **({"file id": item.source_id} if own_ids else {}), "level": item.level, "group": item.group,
     "system": item.system, "last turn": item.context[-1].render() if item.context else "",
     "response": item.response,
     **{aspect: geval.reporting.labels_in_words(scores, categories[aspect]) if aspect in categories
        else item.human_mean(aspect) for aspect, scores in item.human.items()}}
    for item in dataset.items
])
if not any(item.context for item in dataset.items):  # summaries: no conversation, no last turn
    preview = preview.drop(columns="last turn")
first = ["id", *(["file id"] if own_ids else []), "response", *(["last turn"] if "last turn" in preview else [])]
st.dataframe(preview[first + [c for c in preview.columns if c not in first]], hide_index=True,
             height=min(280, 35 * (len(preview) + 1) + 3),
             column_config={"response": st.column_config.TextColumn(width="large"),
                            "last turn": st.column_config.TextColumn(width="medium")})

side = state.store().human_side(dataset.name)  # the scores the CSV holds: the judge is compared with them
whose = {"people": "people's scores", "you": "your labels", "both": "people's scores and your labels"}[side]
labeled = len(state.store().labels(dataset.name)) > 0
st.download_button(f"Items and {whose} as CSV" if dataset.aspects or labeled else "Items as CSV",
                   lambda: geval.reporting.items_csv(state.store().items(dataset.name), categories),  # made when clicked
                   file_name=f"{dataset.name}-items.csv", mime="text/csv", key="data_items_csv",
                   icon=":material/download:",
                   help="One row per item: its id (and your file's own), group, system, level, texts, and the human "
                        "scores the judge is compared with: each aspect's mean and each annotator's score.")

st.subheader("Human scores")
labeled = geval.labeling.counts(state.store(), dataset.name)
side = state.store().human_side(dataset.name)
if not dataset.aspects:
    st.info(f"{dataset.name} has no human score of its own: label its items on the Label page (or import labels "
            "below), and the judge is compared with your labels.")
    st.page_link("views/7_label.py", label="Label items yourself", icon=":material/label:")
for row in labeled.itertuples():
    took = f"; a label took {row.seconds:.0f} s (median)" if pd.notna(row.seconds) else ""  # imported: not timed
    st.text(f"{row.aspect}: {row.items} of {len(dataset.items)} items labeled ({row.annotators}{took})")
if len(labeled):
    st.caption(f"The judge is compared with {geval.labeling.HUMAN_SIDES[side]} (chosen on the Agreement page)."
               + (" The plots below are the file's own scores, without your labels." if side != "people" and dataset.aspects
                  else ""))
uploads.scales_section(state.store(), dataset)
aspects = dataset.aspects
scales = state.store().scales(dataset.name)  # as people were asked, where declared: each plot's axis spans it
columns = st.columns(min(3, len(aspects)) or 1)
for index, aspect in enumerate(aspects):
    figure = geval.reporting.majority_figure(dataset.items, aspect, categories[aspect]) if aspect in categories \
        else geval.reporting.human_scores_figure(dataset.items, aspect, scales.get(aspect))  # labels: per category
    figure.update_layout(height=220, margin=dict(l=10, r=10, t=40, b=10), showlegend=False)
    columns[index % len(columns)].plotly_chart(figure, key=f"data_hist_{aspect}")

imports.section(state.store(), dataset)
pairwise.make_pairs(state.store(), dataset)  # pairs of its responses to one context, to judge which is better

st.divider()


def _forget_delete() -> None:
    st.session_state.pop("data_delete", None)


def _delete(name: str) -> None:
    """The confirmed deletion, run as a callback: before the page draws its widgets again."""
    done = state.store().delete_dataset(name)
    _forget_delete()
    st.session_state.pop("dataset_source", None)
    st.session_state["data_source"] = "Bundled or shared dataset"  # an upload still in the widget is not re-imported
    state.forget_cached()
    st.session_state["data_deleted"] = (f"Deleted {name} from the store: {done['items']} items, "
                                        f"{done['judgments']} judgments, {done['notes']} notes, "
                                        f"{done['labels']} labels.")


@st.dialog("Delete this dataset from the store?", on_dismiss=_forget_delete)
def confirm_delete(name: str) -> None:
    """Say what goes (counted by the store itself), and delete only when confirmed."""
    store = state.store()
    try:
        counts = store.delete_dataset(name, dry_run=True)
    except geval.GevalError as exc:
        st.error(str(exc))
        return
    st.text(f"Dataset: {name}\nStore: {store.path}")
    st.warning(f"This deletes {counts['items']} items, {counts['judgments']} judgments (of every template and "
               f"judge), {counts['notes']} notes and {counts['labels']} of your labels. Other datasets, saved "
               "templates and cached judge answers stay; the file on disk is not touched.")
    delete, cancel = st.columns(2)
    if delete.button("Delete", type="primary", key="data_delete_confirm", on_click=_delete, args=(name,)):
        st.rerun()
    if cancel.button("Cancel", key="data_delete_cancel"):
        _forget_delete()
        st.rerun()


st.button("Delete this dataset from the store", key="data_delete_open",
          on_click=lambda: st.session_state.update(data_delete=dataset.name))
if st.session_state.get("data_delete") == dataset.name:
    confirm_delete(dataset.name)
