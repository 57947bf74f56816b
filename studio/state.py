"""This browser session's choices: store, dataset, template and judge, and the sidebar that shows them."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection
from pathlib import Path
from urllib.parse import urlsplit

import streamlit as st

import geval
from studio import cached, checking
from studio.text import plain

DEFAULT_TEMPLATE = "topicalchat-naturalness"
DEFAULT_DATASET = "topicalchat_usr_sample"


@st.cache_resource
def _store(path: str) -> geval.Store:
    """One store connection per file, shared by the sessions of this server (thread-safe)."""
    return geval.Store(path)


def store() -> geval.Store:
    """The SQLite store of this session."""
    return _store(str(st.session_state.setdefault("store_path", str(geval.Store.default_path()))))


@st.cache_resource(show_spinner="Loading dataset…", max_entries=8)
def _load(path: str, mtime: float, layout: str | None, mapping: tuple | None, name: str | None,
          store_path: str) -> geval.Dataset:
    """Load a dataset into the store at `store_path`; cached until the file, the mapping or the store
    changes. One object shared by the runs and sessions that ask for it (a dataset is never
    changed once loaded), so that the pages do not copy a large dataset on every run."""
    return geval.load_dataset(path, layout=layout, mapping=list(mapping) if mapping else None, name=name,
                              store=_store(store_path))


def load_dataset(path: str | Path, layout: str | None = None, mapping: list[str] | None = None,
                 name: str | None = None) -> geval.Dataset:
    """Load a dataset file (cached), make it this session's dataset, and return it."""
    path = Path(path)
    mtime = path.stat().st_mtime if path.exists() else 0.0
    dataset = _load(str(path), mtime, layout, tuple(mapping) if mapping else None, name, str(store().path))
    st.session_state["dataset_source"] = {"path": str(path), "layout": layout, "mapping": mapping, "name": name}
    return dataset


@st.cache_resource(show_spinner="Reading the dataset from the store…", max_entries=4)
def _stored(store_path: str, name: str, loaded: float) -> geval.Dataset:
    """A dataset read back from the store (an upload opened by a link); cached while its items stay."""
    return _store(store_path).dataset(name)


def forget_cached() -> None:
    """Drop every cached dataset, table and frame: after a deletion, they still hold what was deleted."""
    st.cache_data.clear()
    cached.forget()
    _load.clear()
    _stored.clear()


def dataset() -> geval.Dataset | None:
    """This session's dataset: the one last loaded (or stored, for an upload opened by a link), else the one the
    store had loaded last (a page opened by its plain address after an upload opens on it), else the bundled
    Topical-Chat sample."""
    source = st.session_state.get("dataset_source")
    if source is None:
        known = geval.Dataset.known()
        newest = max(store().dataset_names(), key=store().dataset_loaded, default=None)
        if newest is not None and newest not in known:
            source = st.session_state["dataset_source"] = {"stored": newest}
        elif newest is not None or DEFAULT_DATASET in known:
            source = {"path": str(known[newest or DEFAULT_DATASET]), "layout": None, "mapping": None, "name": None}
        else:
            return None
    try:
        if "stored" in source:
            return _stored(str(store().path), source["stored"], store().dataset_loaded(source["stored"]))
        return load_dataset(source["path"], source["layout"], source["mapping"], source["name"])
    except geval.GevalError as exc:
        st.session_state.pop("dataset_source", None)
        st.error(str(exc))
        return None


def template() -> geval.Template | None:
    """This session's template: the text in the editor if it parses, else None."""
    text = st.session_state.get("template_text")
    if text is None:
        text = geval.Template.load(st.session_state.get("template_name", DEFAULT_TEMPLATE)).text
        st.session_state["template_text"] = text
    try:
        return geval.Template.parse(text, source=st.session_state.get("template_name", "editor"))
    except geval.GevalError:
        return None


def saved_templates(store: geval.Store, name: str | None = None) -> list[geval.Template]:
    """The saved template versions a user can open, edit and score (`Store.template_versions`),
    without the records of judges imported from a file (kind "imported": never asked)."""
    return [t for t in store.template_versions(name) if t.kind != "imported"]


def editor_started_from(current: geval.Template | None, versions: Collection[str]) -> str | None:
    """The label of the version the editor's text started from: the last of `versions` (the
    labels of the prompts/ files and saved versions) the editor held, opened, saved or linked;
    kept while an edit is not saved."""
    if current is not None and current.label in versions:
        st.session_state["template_base"] = current.label
    return st.session_state.get("template_base")


def judge_from_store() -> None:
    """Start a session opened without a context on the judge that scored its dataset last, where the sidebar can run
    it: an OpenAI-compatible server (its model, base URL and sampling), so that the Score page finds its answers
    cached (scored from the command line, they were "0 cached" for the embedded judge); a judge the sidebar cannot
    run (scripted, imported from a file) is passed over. The embedded judge otherwise, as before."""
    current = dataset()
    combos = store().combos(current.name) if current is not None else []
    for fields in (json.loads(text) for text in (combos["signature_json"] if len(combos) else [])):
        if fields.get("backend") == "embedded":
            return
        if fields.get("backend") == "openai":
            base_url = fields.get("base_url") or geval.OPTIONS.openai_url
            st.session_state.update({"judge_backend": "openai", "judge_model": fields.get("model", ""),
                                     "judge_base_url": "" if base_url == geval.OPTIONS.openai_url else base_url})
            if fields.get("n") is not None:  # scored by samples: the same number and temperature
                st.session_state.update({"judge_n": int(fields["n"]), "judge_temperature": float(fields["temp"])})
            return


def judge_options() -> dict:
    """The judge chosen in the sidebar, without the API key (which stays in the session)."""
    return dict(st.session_state.get("judge_options", {"backend": "embedded"}))


@st.cache_resource(show_spinner="Loading the judge…")
def _judge(options: tuple, api_key: str | None):
    backend = dict(options).pop("backend")
    extra = {k: v for k, v in options if k != "backend"}
    if backend == "openai":
        extra["api_key"] = api_key
    return geval.make_judge(backend, **extra)


def judge():
    """The judge object for the sidebar's choice (created once per choice)."""
    options = judge_options()
    api_key = st.session_state.get("api_key") or os.environ.get("OPENAI_API_KEY")
    return _judge(tuple(sorted(options.items())), api_key if options.get("backend") == "openai" else None)


def sidebar() -> None:
    """The shared sidebar: judge settings, then the current dataset, template version and judge.

    It is drawn before the page, so a page that changes one of them in its own body (rather
    than in a widget callback) reruns the app to show the change here.
    """
    with st.sidebar:
        with st.expander("Judge settings", expanded=False):
            _judge_settings()
        sidebar_status()


def sidebar_status() -> None:
    """The current dataset, template version and judge, as text."""
    current = dataset()
    tpl = template()
    options = judge_options()
    st.caption("Dataset")
    st.text(current.summary() if current else "none loaded")
    st.caption("Template in the editor")
    st.text(tpl.label if tpl else "the editor's text does not parse")
    st.caption("Judge for new scores")  # "Judge" read as the one whose scores Inspect and Agreement show
    st.text(judge_text(options))
    judge_check(options)


def judge_check(options: dict) -> None:
    """'Check the judge': versions, CPU and llama.cpp build, the model file, a test judgment and the
    speed measured (what `python -m geval doctor` prints), for the judge chosen, in the background
    with a bar of its steps (the page stays live while the model loads; it stays loaded for the
    runs after); its result stays shown for that judge."""
    key = judge_text(options)
    going = checking.get(st.session_state.pop("judge_check_id", None))
    if going is not None and going.done:  # its result is this session's to show
        st.session_state["judge_checked"], going = (going.key, *going.result), None
    elif going is not None:
        st.session_state["judge_check_id"] = going.id
    if st.button("Check the judge", key="judge_check", disabled=going is not None,
                 help="Run a test judgment as a run would (in a worker process for the embedded judge, which "
                      "loads its model first) and say what does not work, with the command that fixes it."):
        try:
            going = checking.start(key, judge())
            st.session_state["judge_check_id"] = going.id
        except geval.GevalError as exc:
            st.session_state["judge_checked"] = (key, False, str(exc), [])
    if going is not None:
        _check_progress(going.id)
    checked = st.session_state.get("judge_checked")
    if not checked or checked[0] != key:
        return
    _, works, verdict, findings = checked
    (st.success if works else st.error)(verdict, icon=":material/check_circle:" if works else ":material/error:")
    with st.expander("What was checked", expanded=not works):
        for ok, text, fix in findings:
            mark = {True: ":green[ok]", False: ":red[problem]", None: "·"}[ok]
            st.markdown(f"{mark} {plain(text)}" + (f"  \n:red[fix:] `{fix}`" if fix else ""))


@st.fragment(run_every=1.0)
def _check_progress(check_id: str) -> None:
    """Redrawn every second while the check goes on: the step it is on, with its own progress; once
    it ends, the whole app runs again to show its result."""
    check = checking.get(check_id)
    if check is not None and check.done:
        st.rerun()
    if check is not None:
        st.progress(check.share(), text=check.line())


def judge_text(options: dict) -> str:
    """The judge as the sidebar and the Score page name it: backend, model and, for an
    OpenAI-compatible server other than api.openai.com, where it runs."""
    host = urlsplit(options.get("base_url") or "").netloc
    model = options.get("model") or (Path(options["model_path"]).name if options.get("model_path") else
                                     "Qwen2.5-Coder-1.5B, bundled")  # "embedded: ... (embedded)" said it twice
    return f"{options['backend']}: {model}" + (f" at {host}" if options["backend"] == "openai" and host else "")


def _judge_settings() -> None:
    backend = st.radio("Backend", ["embedded", "openai"], key="judge_backend", persist_state="session",
                       horizontal=True,
                       help="embedded: a local 1.5B model, free. openai: OpenAI or any compatible server.")
    if backend == "embedded":
        path = st.text_input("GGUF file (empty: the bundled Qwen2.5-Coder-1.5B)", key="judge_model_path",
                             persist_state="session")
        options = {"backend": "embedded", **({"model_path": path} if path else {})}
    else:
        model = st.text_input("Model", key=start_at("judge_model", "gpt-4o-mini"), persist_state="session")
        base_url = st.text_input("Base URL (empty: api.openai.com)", key="judge_base_url", persist_state="session",
                                 help="vLLM: http://HOST:8000/v1 · Ollama: http://127.0.0.1:11434/v1")
        key = st.text_input("API key (kept for this session only)", type="password", key="api_key",
                            persist_state="session")
        if not key and not base_url and not os.environ.get("OPENAI_API_KEY"):
            st.caption(":orange[No API key: api.openai.com will refuse the calls. Type it above (a reload forgets "
                       "it) or set OPENAI_API_KEY before starting the app.]")
        mode = st.selectbox("Score distribution from", list(geval.OPTIONS.modes), key="judge_mode",
                            persist_state="session")
        n = st.number_input("Samples (samples mode)", 1, 50, key=start_at("judge_n", 20), persist_state="session")
        temperature = st.number_input("Temperature (samples mode)", 0.0, 2.0, step=0.1,
                                      key=start_at("judge_temperature", 1.0), persist_state="session")
        options = {"backend": "openai", "model": model, "mode": mode, "n": int(n), "temperature": float(temperature),
                   **({"base_url": base_url} if base_url else {})}
    st.session_state["judge_options"] = options


def follow_editor(current: geval.Template | None = None) -> None:
    """The Score page's chosen templates follow the editor: its previous version becomes the current one,
    unless the current one is chosen already (a version opened that was chosen beside the edit: both
    stay). Run on every page (before the URL is published), so that the URL never pairs a new editor
    version with the previous one in `templates`."""
    current = current or template()
    if current is None:
        return
    previous = st.session_state.get("score_editor")
    remembered = st.session_state.get("score_templates")
    if remembered is not None and previous not in (None, current.label) and current.label not in remembered:
        st.session_state["score_templates"] = list(dict.fromkeys(
            current.label if label == previous else label for label in remembered))
    st.session_state["score_editor"] = current.label


def follow(key: str, preferred: str | None, options: Collection[str]) -> None:
    """The menu `key` opens on `preferred`, the choice the page makes for it (the judge worth most labels), and
    follows it whenever that changes (an import makes another judge worth most: the sections stayed on the old
    one), or when the menu holds nothing offered; a value picked by hand, or given by a link, stays until then."""
    marker = f"{key}_follows"
    before = st.session_state.get(marker, preferred)  # a first run: a link's value stays
    st.session_state[marker] = preferred
    if preferred is not None and (st.session_state.get(key) not in options or before != preferred):
        st.session_state[key] = preferred


def keep_valid(key: str, options: list, default: object = None) -> None:
    """Replace a remembered widget value that is no longer offered (another dataset, a new version) by `default`
    (the first option when None; the widget's own default, which it is then drawn without): set, not forgotten,
    so that the browser shows it too (a selectbox whose value was deleted kept showing the old one)."""
    value = st.session_state.get(key)
    if value is None:
        return
    if isinstance(value, list):
        kept = [v for v in value if v in options]
        if kept != value:
            st.session_state[key] = kept
    elif value not in options:
        if options:
            st.session_state[key] = options[0] if default is None else default
        else:
            del st.session_state[key]


def start_at(key: str, value: object, valid: Callable[[object], bool] | None = None) -> str:
    """The key of a widget a link may set (`studio.context`), holding `value` until it is set: the widget is then
    drawn with its key alone (Streamlit warns of a value given beside a state set by a link). A value held that
    `valid` refuses (another dataset's, beyond this one's range) is set back to `value`: set, not deleted, so that
    the browser shows it too."""
    if valid is not None and key in st.session_state and not valid(st.session_state[key]):
        st.session_state[key] = value
    st.session_state.setdefault(key, value)
    return key


def require_dataset() -> geval.Dataset:
    """The current dataset, or stop the page with a pointer to the Data page."""
    current = dataset()
    if current is None:
        st.info("Load a dataset on the Data page first.")
        st.stop()
    return current
