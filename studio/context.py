"""The working context in the URL, so that a reload, a bookmark or a link opens the same view.

Session state holds the truth. On a session's first run (a reload or an opened link is a new
session) `restore` copies the URL's parameters into it, before the sidebar and the page draw
their widgets; `publish` writes the context back to the URL whenever it changed (navigating
between pages drops the parameters; the next run puts them back). The API key is never part of it.

What a link holds: the dataset (a bundled or shared name, or an upload's name in the store),
the template version in the editor (a file's or a saved one), the judge, the Score page's
item selection and templates, the Inspect combination, aspect, filters, order and item, the Agreement
combinations, the alternative annotator test's judge and aspect, annotators and epsilon, the systems'
aspect, judge and labels per system, the Tune page's search, the Label page's aspects, annotator, order
and judge, and the pages' jobs, running or done (known to this server only).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

import geval
from studio import fitting, jobs, state


def _flag(text: str) -> bool:
    """A checkbox's value in the URL: "True" or "False"."""
    if str(text).lower() not in ("true", "false"):
        raise ValueError(text)
    return str(text).lower() == "true"


def _pair(text: str) -> tuple[float, float]:
    """A range slider's value in the URL: "(1.0, 2.5)"."""
    low, high = (float(part) for part in str(text).strip("()[] ").split(","))
    return low, high


#: What a value of a type other than int, float or str looks like, for a link that holds another.
LOOKS = {_flag: "True or False", _pair: "a range like (1.0, 2.5)"}

#: URL parameter -> (session key, type, default). The default is left out of the URL.
FIELDS: dict[str, tuple[str, Callable, object]] = {
    "backend": ("judge_backend", str, "embedded"),
    "gguf": ("judge_model_path", str, ""),
    "model": ("judge_model", str, "gpt-4o-mini"),
    "base_url": ("judge_base_url", str, ""),
    "mode": ("judge_mode", str, "auto"),
    "n": ("judge_n", int, 20),
    "temperature": ("judge_temperature", float, 1.0),
    "level": ("score_level", str, None),
    "how": ("score_how", str, "All"),
    "sample": ("score_sample", int, None),
    "seed": ("score_seed", int, 0),
    "limit": ("score_limit", int, 0),
    "parallel": ("score_concurrency", int, 4),
    "rpm": ("score_rpm", int, 0),
    "aspect": ("inspect_aspect", str, None),
    "item": ("inspect_place", str, None),
    "range": ("inspect_range", _pair, None),
    "order": ("inspect_order", str, "Largest disagreement first"),
    "unscored": ("inspect_unscored", _flag, True),
    "flagged": ("inspect_flagged", _flag, False),
    "human": ("tune_aspect", str, None),
    "budget": ("tune_budget", int, 400),
    "share": ("tune_share", float, 0.5),
    "tune_seed": ("tune_seed", int, 0),
    "label_from": ("label_from", str, "A template's aspects"),
    "label_template": ("label_template", str, None),
    "label_aspects": ("label_aspects", str, None),  # always in a link: the Label page's default is the dataset's
    "annotator": ("label_annotator", str, "you"),
    "next": ("label_order", str, "random"),
    "label_seed": ("label_seed", int, 0),
    "blind": ("label_blind", _flag, True),
    "alttest": ("alttest_pick", str, None),  # "<judge> · <aspect>"
    "annotators_are": ("alttest_who", str, None),
    "epsilon": ("alttest_epsilon", float, None),
    "systems_aspect": ("systems_aspect", str, None),
    "systems_judge": ("systems_judge", str, None),
    "per_system": ("systems_labels", int, None),
}
#: URL parameters that repeat (one value each), and their session keys.
LISTS = {"templates": "score_templates", "systems": "score_systems", "groups": "score_groups",
         "inspect_systems": "inspect_systems"}
#: Combinations are named in the URL by their stable id (`Store.combos`: version and signature
#: hash), in session state by their label; the pages translate once they know the combinations.
COMBOS = {"combo": "inspect_combo", "a": "agree_a", "b": "agree_b", "plot": "agree_plot_combo", "judge": "label_judge"}
COMBO_LISTS = {"agree": "agree_combos"}
#: Which judge and selection fields apply (the others stay out of the URL).
ONLY_WHEN = {"gguf": ("backend", "embedded"), "model": ("backend", "openai"), "base_url": ("backend", "openai"),
             "mode": ("backend", "openai"), "n": ("backend", "openai"), "temperature": ("backend", "openai"),
             "parallel": ("backend", "openai"), "rpm": ("backend", "openai"),
             "sample": ("how", "Seeded random sample"), "seed": ("how", "Seeded random sample"),
             "systems": ("how", "By system"), "groups": ("how", "By group"),
             "label_template": ("label_from", "A template's aspects"), "label_aspects": ("label_from", "Aspects I name")}
HOW = {"all": "All", "sample": "Seeded random sample", "system": "By system", "group": "By group"}
#: The background jobs of the pages, by kind: URL parameter and session key. A job stays in the
#: URL once done, so that a reload shows how it ended (while this server knows it).
JOBS = {"score": ("job", "score_job"), "tune": ("search", "tune_job")}


def restore() -> None:
    """On the session's first run, put the URL's context into session state (once)."""
    if st.session_state.get("context_restored"):
        return
    st.session_state["context_restored"] = True
    params = st.query_params
    notes = []
    if "dataset" in params:
        notes += _restore_dataset(params["dataset"])
    if "template" in params:
        notes += _restore_template(params["template"])
    for name, (key, kind, _) in FIELDS.items():
        if name in params:
            value = HOW.get(params[name], params[name]) if name == "how" else params[name]
            try:
                st.session_state[key] = kind(value)
            except ValueError:
                notes.append(f"The link's {name}={value!r} is not {LOOKS.get(kind, 'a ' + kind.__name__)}; it was left out.")
    for name, key in LISTS.items():
        if name in params:
            st.session_state[key] = params.get_all(name)
    pending = {name: params[name] for name in COMBOS if name in params}
    pending.update({name: params.get_all(name) for name in COMBO_LISTS if name in params})
    if pending:
        st.session_state["context_pending"] = pending
    for kind, (name, key) in JOBS.items():
        job = jobs.get(params.get(name))
        if job is not None and job.kind == kind:
            st.session_state[key] = job.id
    if not params:  # a plain address: the judge that scored the dataset it opens on, where the sidebar can run it
        state.judge_from_store()
    st.session_state["context_notes"] = notes  # on top of the first page shown (`show_notes`)


def show_notes() -> None:
    """What the link's context could not restore (`restore`), once, on the page about to run: not in a run that
    switches to another page at once (the app's root, which opens Data), whose elements are not shown."""
    for note in st.session_state.pop("context_notes", []):
        st.warning(note, icon=":material/link_off:")


def _restore_dataset(name: str) -> list[str]:
    """The link's dataset: a bundled or shared one by name, else one stored (an upload)."""
    known = geval.Dataset.known()
    if name in known:
        st.session_state["dataset_source"] = {"path": str(known[name]), "layout": None, "mapping": None, "name": None}
    elif name in state.store().dataset_names():
        st.session_state["dataset_source"] = {"stored": name}
    else:
        return [f"The link's dataset {name!r} is neither bundled, shared nor in this store: load it on the Data page."]
    return []


def _restore_template(label: str) -> list[str]:
    """The link's template version: a file's in prompts/, else one saved in the store."""
    name, _, version = label.rpartition("@")
    found = next((t for t in geval.Template.known() if t.version == version), None)
    if found is None:
        try:
            found = state.store().template(version)
        except geval.GevalError:
            fallback = next((t for t in geval.Template.known() if t.name == name), None)
            if fallback is not None:
                fitting.put_in_editor(fallback)
            return [f"The link's template version {label} was never saved in this store"
                    + (f"; the editor holds {fallback.label} from prompts/." if fallback else ".")]
    fitting.put_in_editor(found)
    return []


def remember_combos(dataset: str, combos) -> None:
    """What the Inspect and Agreement pages know about the dataset's combinations: their ids
    for the URL, and the link's combinations turned into the labels their widgets hold."""
    ids = dict(zip(combos["label"], combos["id"]))
    before = st.session_state.get("context_combos") or {}
    if before.get("dataset") == dataset:  # a label can change (a new combination reads alike): follow the id
        _relabel(before["ids"], {combo_id: label for label, combo_id in ids.items()})
    st.session_state["context_combos"] = {"dataset": dataset, "ids": ids}
    pending = st.session_state.pop("context_pending", None)
    if not pending:
        return
    labels = {combo_id: label for label, combo_id in ids.items()}
    for name, key in COMBOS.items():
        if pending.get(name) in labels:
            st.session_state[key] = labels[pending[name]]
    for name, key in COMBO_LISTS.items():
        if name in pending:
            st.session_state[key] = [labels[i] for i in pending[name] if i in labels]


def _relabel(old_ids: dict[str, str], labels: dict[str, str]) -> None:
    """The pages' chosen combinations under their labels of now (`old_ids`: label -> id before,
    `labels`: id -> label now)."""
    def now(label):
        return labels.get(old_ids.get(label), label)

    for key in COMBOS.values():
        if st.session_state.get(key) is not None:
            st.session_state[key] = now(st.session_state[key])
    for key in COMBO_LISTS.values():
        if st.session_state.get(key):
            st.session_state[key] = [now(label) for label in st.session_state[key]]


def wanted() -> dict[str, str | list[str]]:
    """The context as URL parameters (defaults and empty values left out)."""
    session = st.session_state
    params: dict[str, str | list[str]] = {}
    current = state.dataset()
    if current is not None:
        params["dataset"] = current.name
    template = state.template()  # an edit that does not parse: the version it started from (a reload opens that)
    label = template.label if template is not None else session.get("template_base")
    if label:
        params["template"] = label
    for name, (key, kind, default) in FIELDS.items():
        value = session.get(key)
        if value is not None and value != "" and value != default:
            params[name] = {v: k for k, v in HOW.items()}.get(value, str(value)) if name == "how" else str(value)
    for name, key in LISTS.items():
        if session.get(key):
            params[name] = [str(v) for v in session[key]]
    params.update(_combo_params(current.name if current is not None else None))
    for name, key in JOBS.values():
        job = jobs.get(session.get(key))
        if job is not None and current is not None and job.dataset == current.name:
            params[name] = job.id
    for name, (field, value) in ONLY_WHEN.items():
        if name in params and _shown(params, field) != value:
            del params[name]
    return params


def _shown(params: dict, name: str) -> str:
    """A parameter as the page holds it (its default when it is left out of the URL)."""
    if name == "how":
        return HOW.get(params.get("how", "all"), "All")
    return params.get(name, FIELDS[name][2])


def _combo_params(dataset: str | None) -> dict[str, str | list[str]]:
    """The combinations of the pages, by id: those of a link not yet opened as they came."""
    pending = dict(st.session_state.get("context_pending") or {})
    known = st.session_state.get("context_combos") or {}
    ids = known.get("ids", {}) if known.get("dataset") == dataset else {}
    for name, key in COMBOS.items():
        if name not in pending and st.session_state.get(key) in ids:
            pending[name] = ids[st.session_state[key]]
    for name, key in COMBO_LISTS.items():
        if name not in pending and st.session_state.get(key):
            pending[name] = [ids[label] for label in st.session_state[key] if label in ids]
    return {name: value for name, value in pending.items() if value}


def publish() -> None:
    """Write the context to the URL when it differs from what the URL holds."""
    state.follow_editor()
    params = wanted()
    current = {name: st.query_params.get_all(name) for name in st.query_params}
    if current != {name: value if isinstance(value, list) else [value] for name, value in params.items()}:
        st.query_params.from_dict(params)
