"""Which template the Score and Label pages open on: one that renders on the dataset's items. The
editor's when the user opened or edited it, else the one last used on this dataset (its newest
scored template version, else the Label page's), else the editor's, else the first that fits; never
one the items cannot fill (the editor's Topical-Chat template on a file with no fact opened Score
with a red box and Start disabled)."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import geval
from studio import state


def last_used(store: geval.Store, dataset: str) -> list[str]:
    """The labels of the templates used on `dataset`, newest first: its scored template versions
    (not a prompt search's variants, nor judges imported from a file), then the Label page's."""
    combos = store.combos(dataset)
    labels = []
    if len(combos):
        own = combos[(combos["ok"] > 0) & ~combos["searched"].astype(bool)].sort_values("last", ascending=False)
        for version in dict.fromkeys(own["template_version"]):
            try:
                template = store.template(version)
            except geval.GevalError:  # a version the store no longer holds
                continue
            if template.kind != "imported":
                labels.append(template.label)
    return [*labels, *filter(None, [st.session_state.get("label_template")])]


def _touched(editor: geval.Template | None) -> bool:
    """Whether the user put `editor` in the editor: opened a template there (or a link did), or edited it
    (the default there, or the one `editor_follows` put there, is not the user's). None, an edit that does not
    parse, is the user's: replacing it lost the edit that the page's red line asked to mend."""
    if editor is None:
        return True
    if FOLLOWED in st.session_state:
        return editor.label != st.session_state[FOLLOWED][1]
    return "template_name" in st.session_state or editor.label != geval.Template.load(state.DEFAULT_TEMPLATE).label


FOLLOWED = "template_followed"  # (the dataset, the label of the template put in the editor for it)


def put_in_editor(template: geval.Template, followed: str | None = None) -> None:
    """`template` in the editor: the user's (opened on the Prompts page, or a link's), or, with `followed` (a
    dataset's name), the one `editor_follows` holds for that dataset until the user puts one there."""
    st.session_state["template_name"], st.session_state["template_text"] = template.name, template.text
    st.session_state.pop(FOLLOWED, None)
    if followed is not None:
        st.session_state[FOLLOWED] = (followed, template.label)


def editor_follows(store: geval.Store, dataset: geval.Dataset | None) -> None:
    """Until the user puts a template in the editor, it holds one for the dataset: the default where it was
    written for it (Topical-Chat), else the one the Score page would open on, of the prompts/ files and the saved
    versions (the sidebar named topicalchat-naturalness on SummEval, and a generic one on a file scored with a
    template of its own). Once per dataset; before the sidebar and the page are drawn."""
    editor = state.template()
    if dataset is None or st.session_state.get(FOLLOWED, (None,))[0] == dataset.name or _touched(editor):
        return
    default = geval.Template.load(state.DEFAULT_TEMPLATE)
    files = {template.label: template for template in [*geval.Template.known(), *state.saved_templates(store)]}
    st.session_state.pop(FOLLOWED, None)  # the default in the editor, untouched: where Score would open with it
    st.session_state.pop("template_name", None)
    label = default.label if written_for(default, dataset) and default.fits(dataset.items) else \
        opening(store, dataset, files, default) or default.label
    put_in_editor(files[label], followed=dataset.name)


def written_for(template: geval.Template, dataset: geval.Dataset) -> bool:
    """Whether `template` was written for `dataset`: the dataset its header names, else its name's first
    word ("topicalchat" of topicalchat-naturalness), is part of the dataset's name."""
    return (template.dataset or template.name.split("-", 1)[0]).lower() in dataset.name.lower()


def _judged(template: geval.Template) -> set[str]:
    """The human aspects `template`'s scores are compared with, in lower case."""
    return {(aspect.human or aspect.name).lower() for aspect in template.aspects}


def opening(store: geval.Store, dataset: geval.Dataset, offered: Mapping[str, geval.Template],
            editor: geval.Template | None) -> str | None:
    """The label, among `offered`, of the template a menu opens on: the first that renders on
    `dataset`'s items of the editor's when the user put it there, those last used on it, the editor's
    when written for it (`written_for`; the default Topical-Chat one is not, for PersonaChat), those
    written for a dataset of its name (judging the editor's aspects first), the editor's, those
    compared with an aspect its people scored (those judging no other aspect first), those written for no
    dataset in particular (response-naturalness on a user's file), and the others (None when none renders)."""
    people = {aspect.lower() for aspect in dataset.aspects}
    compared = [label for label, template in offered.items() if _judged(template) & people]
    # those judging only what people scored first (summeval-consistency, not summeval-batch's three more), plain forms
    compared.sort(key=lambda label: (len(_judged(offered[label]) - people), offered[label].kind != "form"))
    named = [label for label in compared if offered[label].dataset and offered[label].dataset in dataset.name.lower()]
    generic = [label for label, template in offered.items() if not template.dataset]
    editors = [editor.label] if editor else []
    # of those named for it, first the ones judging what the editor's judges, then G-EVAL's plain forms (not a batch
    # of responses in two orders, nor a checklist: 8 or 16 prompts per item where a form asks one per aspect)
    named.sort(key=lambda label: (editor is not None and _judged(offered[label]) != _judged(editor),
                                  offered[label].kind != "form"))
    ours = editors if editor is not None and written_for(editor, dataset) else []
    for label in dict.fromkeys([*(editors if _touched(editor) else []), *last_used(store, dataset.name), *ours,
                                *named, *editors, *compared, *generic, *offered]):
        if label in offered and offered[label].fits(dataset.items):
            return label
    return None
