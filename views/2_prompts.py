"""Prompts: edit a template live, preview it on a real item, save versions, diff them, generate steps."""

import pandas as pd
import streamlit as st

import geval
from studio import cached, fitting, state
from studio.text import plain, with_code

st.title("Prompts")
store = state.store()
dataset = state.dataset()
EDITOR = "(editor)"  # how the diff's menus name the editor's text
WHOLE_IN_MENU = 60  # characters of a prompt's name that its menu shows whole at the preview's width

files = {t.name: t for t in geval.Template.known()}
stored = {t.label: t for t in state.saved_templates(store)}
comments = store.template_comments()
file_labels = {t.label for t in files.values()}
choices = [*files, *[label for label in stored if label not in file_labels]]


def _open_template() -> None:
    """The menu's choice: opened at once, unless the editor holds an edit no file or saved version
    has (then the page asks first: `confirm_open`)."""
    choice = st.session_state["prompts_open"]
    if choice is None:
        return
    if _unsaved(st.session_state.get("template_text", "")):
        st.session_state["prompts_pending"] = choice
        return
    _open(choice)


def _unsaved(text: str) -> bool:
    """Whether `text` is an edit that neither a prompts/ file nor a saved version holds (lost if replaced); a draft
    untouched is none (drafted again at a click)."""
    try:
        version = geval.Template.parse(text, source="editor").version
    except geval.GevalError:
        return bool(text.strip())  # an edit that does not parse yet is an edit too
    kept = {t.version for t in (*files.values(), *stored.values())} | {st.session_state.get("prompts_drafted")}
    return version not in kept


def _open(choice: str) -> None:
    """Put the version `choice` in the editor, with an empty comment field (the comment is the next save's)."""
    fitting.put_in_editor(files.get(choice) or stored[choice])
    st.session_state.pop("prompts_comment", None)
    st.session_state.pop("prompts_pending", None)


def _draft() -> None:
    """A draft for the aspect chosen, in the editor: not over an edit no file or saved version holds (the page
    says why instead, as it says why an aspect cannot be drafted)."""
    aspect = st.session_state["prompts_draft_aspect"]
    if _unsaved(st.session_state.get("template_text", "")):
        st.session_state["prompts_draft_said"] = ("The editor holds an edit that is not saved: save it (under Save "
                                                  f"below) or open another template, then draft one for {aspect}.")
        return
    try:
        draft = geval.Template.draft(dataset if aspect in dataset.aspects else labeled, aspect)
    except geval.GevalError as exc:
        st.session_state["prompts_draft_said"] = str(exc)
        return
    fitting.put_in_editor(draft)
    st.session_state["prompts_drafted"] = draft.version
    st.session_state.pop("template_base", None)  # a draft starts from no version: none is its parent or its diff's From
    st.session_state.pop("prompts_comment", None)


def _offer_drafts(unjudged: list[str]) -> None:
    """The aspects people scored that no template judges, and a draft of one for the editor (folded away: the
    samples have such an aspect or more, and the menu above is what most visits want)."""
    named = ", ".join(unjudged[:4]) + (f" and {len(unjudged) - 4} more" if len(unjudged) > 4 else "")
    said = st.session_state.pop("prompts_draft_said", None)
    with st.expander(f"No template here judges {plain(named)}: draft one", expanded=said is not None,
                     icon=":material/edit_note:"):
        st.caption(f"A first template for an aspect people scored or you labeled on {plain(dataset.name)}, on "
                   "their scale (an aspect of pass/fail words asked as 0/1), in the editor: write what they were asked "
                   "in its criteria, then save it.")
        aspect, button = st.columns([3, 1], vertical_alignment="bottom")
        aspect.selectbox("Aspect", unjudged, key="prompts_draft_aspect")
        button.button("Put the draft in the editor", key="prompts_draft", on_click=_draft)
        if said is not None:
            st.warning(said)


def _describe(choice: str) -> str:
    template = files.get(choice) or stored[choice]
    comment = comments.get(template.version)
    return f"{choice}  ({'prompts/ file' if choice in files else 'saved'}{': ' + comment if comment else ''})"


editor = state.template()  # makes sure the editor holds a text
current_name = st.session_state.get("template_name", state.DEFAULT_TEMPLATE)
in_editor = editor.version if editor is not None else None
st.session_state["prompts_open"] = next(  # the menu names the version in the editor, or none (an unsaved edit)
    (choice for choice in choices if (files.get(choice) or stored[choice]).version == in_editor), None)
st.selectbox("Open a template (files in prompts/, then saved versions)", choices, index=None,
             placeholder=f"{editor.label if editor else current_name}: an edit not saved yet", format_func=_describe,
             key="prompts_open", on_change=_open_template)
# an aspect only your labels give (Label's "Aspects I name") is drafted from them
labeled = (cached.labeled_dataset(store, dataset.name) if dataset is not None
           and dataset.name in store.dataset_names() else None)
if dataset is not None and (unjudged := geval.Template.unjudged(dataset, [*filter(None, [editor]), *files.values(),
                                                                          *stored.values()], labeled)):
    _offer_drafts(unjudged)

left, right = st.columns(2)
with left:
    st.text_area("Template (TOML header between +++ lines, then the prompt)", key="template_text", height=520,
                 persist_state="session")
    st.caption("The checks below and the preview update when you press Ctrl+Enter or click outside the editor "
               "(Streamlit sends a text area's text then, not at each key).")
    try:
        template = geval.Template.parse(st.session_state["template_text"], source=current_name)
        st.success(f"{template.label} parses · placeholders: {', '.join(template.placeholders)} · aspects: "
                   + ", ".join(f"{a.name} {a.min}-{a.max} (human: {a.human or 'same name'})" for a in template.aspects))
    except geval.GevalError as exc:
        template, problem = None, str(exc)
        st.error(problem)
    with st.expander("Placeholders you can use"):
        st.table(pd.DataFrame(
            [{"placeholder": "{{" + k + "}}", "meaning": v} for k, v in geval.Template.PLACEHOLDERS.items()]
        ))

with right:
    if template is None:  # what to fix said here too: below a 520 px editor, the error was out of view
        st.info(f"Fix the template to see the preview: {plain(problem)}", icon=":material/error:")
    elif dataset is None:
        st.info("Load a dataset on the Data page to preview the prompt on a real item.")
    else:
        misfit = template.misfit(dataset.items)
        if misfit:  # previewed anyway on the dataset's first items; Score does not choose it
            st.warning(plain(f"This template does not fit {dataset.name}: {misfit}. Score lists it while it is in "
                             "the editor, but does not choose it for you."))
        else:  # as Score says before a run
            for line in geval.labeling.uncompared(store, dataset.name, template):
                st.warning(f"Its scores on {plain(dataset.name)} would be compared with nobody yet: "
                           f"{with_code(line)}.", icon=":material/person_off:")
        items = [i for i in dataset.items if not template.level or i.level == template.level] or dataset.items
        position = st.number_input(f"Preview on item (1-{len(items)})", 1, len(items), 1, key="prompts_item") - 1
        steps = None
        if template.needs_generated_steps:
            steps = store.steps(template, state.judge_options())
            if st.button("Generate evaluation steps with the judge", key="prompts_generate"):
                try:
                    with st.spinner("The judge is writing the evaluation steps…"):
                        steps = geval.generate_steps(store, template, state.judge(), regenerate=True)
                except geval.GevalError as exc:
                    st.error(str(exc))
            if steps:
                st.caption("Evaluation steps (generated, stored with this template version and judge):")
                st.text(steps)
            else:
                st.warning("This template generates its evaluation steps (steps = \"auto\"): press the button, "
                           "or they are generated when scoring starts.")
        try:  # what the judge is sent: a batch shows the item's group, a checklist asks question by question
            prompts = template.prompts(items[position], steps or "(the generated evaluation steps go here)",
                                       dataset.items)
        except geval.GevalError as exc:
            prompts = {}
            st.error(str(exc))
        if len(prompts) > 1:
            names = list(prompts)
            together = template.judged_together(items[position], dataset.items) - 1
            shown = st.selectbox(f"Prompt: {len(prompts)} prompts judge this item together with the {together} "
                                 "other items of its group (one call serves them all)" if together else
                                 f"Prompt: this template sends {len(prompts)} prompts per item", names,
                                 format_func=lambda name: f"{names.index(name) + 1}. {name}", key="prompts_aspect")
            if len(shown) > WHOLE_IN_MENU:  # a long checklist question: the menu cuts it off
                st.caption(f"{names.index(shown) + 1}. {shown}")
            st.code(prompts[shown], language=None, wrap_lines=True)
        elif prompts:
            st.code(next(iter(prompts.values())), language=None, wrap_lines=True)


def _diff_defaults(labels: list[str], started_from: str | None) -> None:
    """Whenever the editor holds another version (an edit applied, a version opened), the diff
    compares the editor with the version the edit started from, else with another version of
    the same name, the older of the two as From (an unsaved edit is the newest; a prompts/ file
    is older than what was saved from it), so that what the later version changed reads "+";
    a pair chosen by hand stays until then."""
    shown = template.label if template is not None else None
    chosen = (st.session_state.get("prompts_diff_old"), st.session_state.get("prompts_diff_new"))
    if st.session_state.get("prompts_diff_for") == shown and set(chosen) <= set(labels):
        return
    st.session_state["prompts_diff_for"] = shown
    same_name = next((t.label for t in (files.get(current_name), *state.saved_templates(store, current_name))
                      if t is not None and t.label != shown), None)
    start = started_from if started_from != shown else same_name
    start = start if start in labels else labels[0]
    older_first = [start, EDITOR] if shown not in labels or _age(start) >= _age(shown) else [EDITOR, start]
    st.session_state["prompts_diff_old"], st.session_state["prompts_diff_new"] = older_first


def _save() -> None:
    """Save as a new version, run before the page draws again: the menu above then names the saved
    version, and the comment field is emptied for the next one."""
    try:
        template = geval.Template.parse(st.session_state["template_text"], source=current_name)
    except geval.GevalError:
        return  # the button is disabled then, and the page says why
    comment = " ".join(st.session_state.get("prompts_comment", "").split())
    known = {t.version: t for t in (*stored.values(), *files.values())}.get(template.version)  # a file's wins
    base = {t.label: t for t in (*files.values(), *stored.values())}.get(st.session_state.get("template_base"))
    store.save_template(template, comment=comment, parent=base.version if base is not None else "")  # its lineage
    if known is None:
        said = f"Saved {template.label}{f' ({comment})' if comment else ''}. Its version is the hash of its text."
    else:  # the same text: no new version, only its comment
        held = "a prompts/ file's text" if known.label in file_labels else "saved already"
        said = (f"No new version: the editor holds {template.label} unchanged ({held}); "
                + (f"its comment is now '{comment}'." if comment else "edit it to save a new one."))
    st.session_state["prompts_saved"] = said
    st.session_state["prompts_comment"] = ""


def _age(label: str) -> int:
    """How old a version is, by when it was saved (0: the newest); a prompts/ file, the origin of
    its edits, is older than every saved version, also when a run stored it after them."""
    saved = [version for version in stored if version not in file_labels]  # read at the top, newest first
    return saved.index(label) if label in saved else len(saved)


st.divider()
save, diff = st.columns(2)
with save:
    st.subheader("Save")
    if "prompts_deleted" in st.session_state:
        st.success(st.session_state.pop("prompts_deleted"))
    saved_versions = {t.version for t in state.saved_templates(store)}
    st.text_input("Comment (what this version changes; shown beside its hash in menus and legends)",
                            key="prompts_comment", max_chars=80,
                            placeholder=comments.get(template.version, "") if template is not None else "")
    if "prompts_saved" in st.session_state:
        st.success(st.session_state.pop("prompts_saved"))
    st.button("Save as a new version", disabled=template is None, key="prompts_save", on_click=_save)
    if template is not None and template.version not in saved_versions and template.label not in file_labels:
        st.caption("Not saved yet: a reload or a link opens this version only once it is saved (or scored).")
    if template is None:
        started = st.session_state.get("template_base")
        st.caption(f"Not saved, and it does not parse: a reload or a link opens {started or 'the default template'} "
                   "without this edit. Mend it (the red line above says where) and save it to keep it.")
    if template is not None and template.version in saved_versions:
        st.button("Delete this saved version", key="prompts_delete_open",
                  on_click=lambda: st.session_state.update(prompts_delete=template.version))
with diff:
    st.subheader("Diff two versions")
    versions = {EDITOR: template, **{t.label: t for t in state.saved_templates(store)},
                **{t.label: t for t in files.values()}}
    labels = list(versions)
    _diff_defaults(labels, state.editor_started_from(template, labels))

    def named(label: str) -> str:  # a saved version's comment beside it, as in the other menus
        version = versions[label].version if versions[label] is not None else ""
        return f"{label} ({comments[version]})" if version in comments else label

    old = st.selectbox("From", labels, key="prompts_diff_old", format_func=named)
    new = st.selectbox("To", labels, key="prompts_diff_new", format_func=named)
    if versions[old] is None or versions[new] is None:
        st.info("Fix the template in the editor to diff it.")
    elif versions[old].version == versions[new].version:  # the editor holding a file untouched, on a first visit
        st.info("From and To are the same version: edit the template, or choose another version to compare with.")
    else:
        st.code(versions[old].diff(versions[new]) or "(identical)", language="diff", wrap_lines=True)


def _forget_delete() -> None:
    st.session_state.pop("prompts_delete", None)


def _delete(version: str, label: str) -> None:
    """The confirmed deletion, run as a callback: before the page draws its widgets again."""
    done = store.delete_template_version(version)
    _forget_delete()
    if st.session_state.get("prompts_open", "").endswith(f"@{version}"):
        st.session_state.pop("prompts_open")  # that saved version is no longer a choice
    state.forget_cached()
    st.session_state["prompts_deleted"] = (f"Deleted {label}: {done['templates']} saved version, "
                                           f"{done['judgments']} judgments.")


@st.dialog("Delete this saved version?", on_dismiss=_forget_delete)
def confirm_delete(version: str) -> None:
    """Say what goes (counted by the store itself), and delete only when confirmed."""
    try:
        counts = store.delete_template_version(version, dry_run=True)
    except geval.GevalError as exc:
        st.error(str(exc))
        return
    label = template.label if template is not None and template.version == version else version
    st.text(f"Template version: {label}\nStore: {store.path}")
    st.warning(f"This deletes the saved version and its {counts['judgments']} judgments (on every dataset, with "
               "every judge). Other versions, the cached judge answers and any file in prompts/ stay; the text "
               "stays in the editor, so it can be saved again.")
    delete, cancel = st.columns(2)
    if delete.button("Delete", type="primary", key="prompts_delete_confirm", on_click=_delete, args=(version, label)):
        st.rerun()
    if cancel.button("Cancel", key="prompts_delete_cancel"):
        _forget_delete()
        st.rerun()


if st.session_state.get("prompts_delete"):
    confirm_delete(st.session_state["prompts_delete"])


def _keep_editing() -> None:
    st.session_state.pop("prompts_pending", None)


def _save_then_open(choice: str) -> None:
    _save()
    _open(choice)


@st.dialog("Your edit is not saved", on_dismiss=_keep_editing)
def confirm_open(choice: str) -> None:
    """Opening another version would replace an edit no file or saved version holds: save it, drop
    it, or keep editing."""
    st.warning(f"The editor holds an edit of {current_name} that is not saved. Opening {choice} replaces it.")
    save_it, drop_it, keep = st.columns(3)
    if save_it.button("Save it, then open", key="prompts_pending_save", disabled=template is None,
                      on_click=_save_then_open, args=(choice,),
                      help="Saved as a new version, with the comment typed under Save (if any)." if template is not None
                      else "An edit that does not parse cannot be saved: keep editing to mend it, or open without it."):
        st.rerun()
    if drop_it.button("Drop it and open", key="prompts_pending_drop", on_click=_open, args=(choice,)):
        st.rerun()
    if keep.button("Keep editing", key="prompts_pending_keep", on_click=_keep_editing):
        st.rerun()


if st.session_state.get("prompts_pending") in choices:
    confirm_open(st.session_state["prompts_pending"])
