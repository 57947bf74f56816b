"""Score: choose items, templates and judge; see the estimate; run in the background with progress."""

import pandas as pd
import streamlit as st

import geval
from studio import jobs, state

st.title("Score")
store = state.store()
dataset = state.require_dataset()
current = state.template()
if current is None:
    st.error("The template in the editor does not parse: fix it on the Prompts page.")
    st.stop()

files = {t.label: t for t in geval.Template.known()}
available = {current.label: current, **files}
remembered = st.session_state.get("score_templates")
if remembered is not None:  # an edited template replaces its older version in the choice
    st.session_state["score_templates"] = list(dict.fromkeys(
        current.label if label.split("@")[0] == current.name else label for label in remembered))
state.keep_valid("score_templates", list(available))
labels = st.multiselect("Templates (one per aspect, or a multi-aspect form)", list(available), default=[current.label],
                        key="score_templates", persist_state="session")
templates = [available[label] for label in labels]

left, right = st.columns(2)
with left:
    levels = dataset.levels
    state.keep_valid("score_level", levels)
    level = st.selectbox("Level", levels, key="score_level", persist_state="session") if len(levels) > 1 else None
    how = st.radio("Items", ["All", "Seeded random sample", "By system", "By group"], horizontal=True, key="score_how", persist_state="session")
    sample = seed = systems = groups = None
    if how == "Seeded random sample":
        if st.session_state.get("score_sample", 0) > len(dataset.items):
            del st.session_state["score_sample"]
        sample = st.number_input("Sample size", 1, len(dataset.items), min(20, len(dataset.items)), key="score_sample", persist_state="session")
        seed = st.number_input("Seed", 0, 10**6, 0, key="score_seed", persist_state="session")
    elif how == "By system":
        state.keep_valid("score_systems", dataset.systems)
        systems = st.multiselect("Systems", dataset.systems, key="score_systems", persist_state="session")
    elif how == "By group":
        state.keep_valid("score_groups", dataset.groups)
        groups = st.multiselect("Groups", dataset.groups, key="score_groups", persist_state="session")
    if st.session_state.get("score_limit", 0) > len(dataset.items):
        st.session_state["score_limit"] = 0
    limit = st.number_input("At most (0 = no limit)", 0, len(dataset.items), 0, key="score_limit", persist_state="session")
with right:
    options = state.judge_options()
    st.text(f"Judge: {options['backend']} {options.get('model', 'Qwen2.5-Coder-1.5B-Instruct Q4_K_M')}")
    concurrency, rpm = 1, None
    if options["backend"] == "openai":
        concurrency = st.number_input("Parallel requests", 1, 64, 4, key="score_concurrency",
                                      persist_state="session", help="Calls in flight at once (a server's rate "
                                      "limits are honoured: 429 answers are retried after Retry-After).")
        rpm = st.number_input("Requests per minute (0 = no limit)", 0, 100_000, 0, key="score_rpm",
                              persist_state="session") or None
    try:
        items = dataset.select(level=level, systems=systems, groups=groups,
                                   sample=int(sample) if sample else None, seed=int(seed or 0),
                                   limit=int(limit) or None)
        judge = state.judge()
        for template in templates:
            st.info(f"{template.label}: {geval.plan(store, items, template, judge).line()}")
    except geval.GevalError as exc:
        st.error(str(exc))
        st.stop()

job = jobs.get(st.session_state.get("score_job"))
running = job is not None and not job.done
start_label = "Resume" if job is not None and job.stop.is_set() else "Start scoring"
if st.button(start_label, type="primary", disabled=running or not templates, key="score_start"):
    job = jobs.start(str(store.path), items, templates, judge, dataset.name,
                     {**options, "concurrency": int(concurrency), "rpm": rpm}, concurrency=int(concurrency), rpm=rpm)
    st.session_state["score_job"] = job.id
    st.rerun()


@st.fragment(run_every=1.0)
def show_progress() -> None:
    """Redrawn every second while a job runs: items done, cache hits, tokens, cost, ETA."""
    job = jobs.get(st.session_state.get("score_job"))
    if job is None:
        return
    progress = job.progress
    if progress is not None:
        st.progress(progress.done / max(progress.total, 1), text=f"{job.current}: {progress.line()}")
    elif not job.done:
        st.progress(0.0, text=f"{job.current or 'starting'}: loading the judge or generating evaluation steps…")
    for finished in job.finished:
        st.success(f"Run {finished.run_id}: {finished.done}/{finished.total} items, {finished.cached} cached, "
                   f"{finished.calls} judge calls, {finished.failed} failed, {finished.unscored} unscored"
                   + (" — stopped; press Resume to go on" if finished.stopped else ""))
        for reason in finished.errors[:10]:
            st.warning(reason)
        if finished.failed:
            st.caption("Failed items are not cached: start again to retry only them.")
    if job.error:
        st.error(job.error)
    if not job.done:
        if st.button("Stop", key="score_stop"):
            job.stop_now()
    elif st.session_state.get("score_shown") != job.id:
        st.session_state["score_shown"] = job.id
        st.rerun()


show_progress()

with st.expander("Runs on this dataset"):
    runs = store.runs(dataset.name)  # a run whose process is gone (killed, app stopped) shows as crashed
    if runs.empty:
        st.caption("No runs yet.")
    else:
        shown = runs[["id", "status", "started", "finished", "template", "n_items"]].copy()
        for column in ("started", "finished"):
            shown[column] = pd.to_datetime(shown[column], unit="s", utc=True)
        st.dataframe(shown, hide_index=True)
        if (runs["status"] == "crashed").any():
            st.caption("crashed: the run's process ended before it finished (killed, or the app was stopped). "
                       "Its finished judgments are kept: start the same run again to do the rest.")
