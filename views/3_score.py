"""Score: choose items, templates and judge; see the estimate; run in the background with progress."""

import pandas as pd
import streamlit as st

import geval
from studio import fitting, jobs, judge_build, state
from studio.text import plain, with_code

#: Seconds without a first answer from a server after which the page says it may be being retried.
WAITING_HINT_AFTER = 3
#: An estimate longer than this (seconds) is pointed out before the run starts.
LONG_RUN = 3600

st.title("Score")
store = state.store()
dataset = state.require_dataset()
current = state.template()
if current is None:  # the files in prompts/ and the saved versions are still offered
    st.warning("The template in the editor does not parse, so it is not offered here: mend it on the Prompts page.")

files = {t.label: geval.Template.parse(t.text, source=f"prompts/{t.name}") for t in geval.Template.known()}
saved = {t.label: t for t in state.saved_templates(store)}
editor = {current.label: current} if current is not None else {}
available = dict(editor)  # any version: the editor's, a file's, a saved one (written for these items)
chosen_before = st.session_state.get("score_templates") or []
# another dataset than the one the templates were chosen on: those that cannot render on it are dropped (and said)
# (a session's first run counts as another dataset: a link's or a reload's templates were chosen before it)
chosen_on = f"{dataset.name}:{dataset.items[0].id}"
moved = st.session_state.get("score_chosen_on") != chosen_on
st.session_state["score_chosen_on"] = chosen_on
known = {**files, **saved, **editor}
unfit = 0
for label, template in known.items():
    if label in available:
        continue
    if template.fits(dataset.items) or (label in chosen_before and not moved):
        available[label] = template
    else:
        unfit += 1
if moved:  # a link's or a reload's version this store never saved (another store's) is said too, not dropped unsaid
    dropped = {label: "never saved in this store, nor a prompts/ file" if label not in known
               else f"it cannot render on {dataset.name}'s items: {known[label].misfit(dataset.items)}"
               for label in chosen_before if label not in known or not known[label].fits(dataset.items)}
    st.session_state["score_templates"] = [label for label in chosen_before if label not in dropped]
    st.session_state["score_dropped"] = (chosen_on, dropped)
comments = store.template_comments()
state.follow_editor(current)
state.keep_valid("score_templates", list(available))
if "score_templates" not in st.session_state or (moved and not st.session_state["score_templates"]):  # none chosen yet,
    # or none left of those chosen before: the one last used here, else the editor's, else the first that renders
    st.session_state["score_templates"] = [*filter(None, [fitting.opening(store, dataset, available, current)])]


def _describe(label: str) -> str:
    template = available[label]
    where = "the editor" if label in editor else "prompts/" if label in files else "saved"
    comment = comments.get(template.version)
    return f"{label} ({where}{': ' + comment if comment else ''})"


editor_misfit = current.misfit(dataset.items) if current is not None else None  # chosen first only if it fits
labels = st.multiselect("Templates (one per aspect, or a multi-aspect form; two versions of one template are "
                        "scored one after the other)", list(available), format_func=_describe, key="score_templates",
                        persist_state="session")
templates = [available[label] for label in labels]
if editor_misfit and current.label not in labels:
    st.caption(plain(f"The editor's {current.label} is not chosen: {editor_misfit}."))
dropped_on, dropped = st.session_state.get("score_dropped", ("", {}))
if dropped and dropped_on == chosen_on:
    st.warning("Dropped from the templates chosen before (on another dataset, or in a link):\n"
               + "\n".join(f"- {plain(label)}: {plain(why)}" for label, why in dropped.items()))
if unfit:
    st.caption(f"{unfit} other template versions (prompts/ files, saved ones) are not offered: they ask for what "
               f"these items do not have (a persona, a document, items of another level). Open one on the Prompts "
               "page to score it anyway.")

job = jobs.get(st.session_state.get("score_job"))
if job is None or job.dataset != dataset.name:  # e.g. after a reload: this dataset's running job, if any
    job = jobs.running(str(store.path), dataset.name)
    st.session_state["score_job"] = job.id if job is not None else None
running = job is not None and not job.done

left, right = st.columns(2)
with left:
    levels = dataset.levels
    state.keep_valid("score_level", levels)
    level = st.selectbox("Level", levels, key="score_level", persist_state="session") if len(levels) > 1 else None
    how = st.radio("Items", ["All", "Seeded random sample", "By system", "By group"], horizontal=True, key="score_how",
                   persist_state="session")
    sample = seed = systems = groups = None
    if how == "Seeded random sample":
        sample = st.number_input("Sample size", 1, len(dataset.items), persist_state="session",
                                 key=state.start_at("score_sample", min(20, len(dataset.items)),
                                                    lambda held: held <= len(dataset.items)))
        seed = st.number_input("Seed", 0, 10**6, key=state.start_at("score_seed", 0), persist_state="session")
        if len(dataset.groups) > 1:
            st.caption("A random sample spreads its items over the groups, a few in each: Agreement's group level "
                       "(correlations within each dialogue or document) then reads n/a. To read it, score whole "
                       f"groups, {geval.reporting.MIN_GROUPS} or more with at least {geval.reporting.MIN_GROUP_ITEMS} "
                       "items each: Items, By group.")
    elif how == "By system":
        state.keep_valid("score_systems", dataset.systems)
        systems = st.multiselect("Systems", dataset.systems, key="score_systems", persist_state="session",
                                 placeholder="None chosen: every system")
    elif how == "By group":
        state.keep_valid("score_groups", dataset.groups)
        groups = st.multiselect("Groups", dataset.groups, key="score_groups", persist_state="session",
                                placeholder="None chosen: every group")
    limit = st.number_input("At most (0 = no limit)", 0, len(dataset.items), persist_state="session",
                            key=state.start_at("score_limit", 0, lambda held: held <= len(dataset.items)))
with right:
    options = state.judge_options()
    st.text(f"Judge: {state.judge_text(options)}")
    unbuilt = options["backend"] == "embedded" and not judge_build.embedded_ready(state.judge())
    concurrency, rpm = 1, None
    if options["backend"] == "openai":
        concurrency = st.number_input("Parallel requests", 1, 64, key=state.start_at("score_concurrency", 4),
                                      persist_state="session", help="Calls in flight at once (a server's rate "
                                      "limits are honoured: 429 answers are retried after Retry-After).")
        rpm = st.number_input("Requests per minute (0 = no limit)", 0, 100_000, key=state.start_at("score_rpm", 0),
                              persist_state="session") or None
    try:
        items = dataset.select(level=level, systems=systems, groups=groups,
                               sample=int(sample) if sample else None, seed=int(seed or 0),
                               limit=int(limit) or None)
        judge = state.judge()
        plans = {template.label: geval.plan(store, items, template, judge, concurrency=int(concurrency))
                 for template in templates}
    except geval.GevalError as exc:
        st.error(str(exc))
        st.stop()
    spread = len({item.group for item in items})  # the first items of a file: a dialogue or two
    if limit and how in ("All", "By system") and spread < geval.reporting.MIN_GROUPS <= len(dataset.groups):
        left.caption(f"At most {int(limit)} takes the first items: {spread} of the dataset's {len(dataset.groups)} "
                     f"groups. Agreement gives no interval from fewer than {geval.reporting.MIN_GROUPS} groups: for a "
                     "quick look across groups, choose Items: Seeded random sample.")
    elif limit and sample and limit < sample:
        left.caption(f"At most {int(limit)} of the sample of {int(sample)}: its first {int(limit)} items, in the "
                     "file's order (set At most to 0 to score the whole sample).")
    if spread < geval.reporting.MIN_GROUPS <= len(dataset.groups) and how in ("Seeded random sample", "By group"):
        more = ("a larger sample, or another seed, spans more" if sample else  # 20 of 80 summaries: 9 documents
                f"choose {geval.reporting.MIN_GROUPS} groups or more")
        left.caption(f"These {geval.reporting.counted(len(items), 'item')} span {spread} of the dataset's "
                     f"{len(dataset.groups)} groups: Agreement gives no interval from fewer than "
                     f"{geval.reporting.MIN_GROUPS} groups ({more}).")
    shown = plans
    if running:  # a reload mid-run too: the estimate of the run going on, not of what the menus now hold
        on = f" on {geval.reporting.counted(len(job.selection[0]), 'item')}" if job.selection else ""
        st.caption(f"A run is going on (below): {', '.join(map(plain, job.labels))}{on}. Its estimate when it "
                   "started:")
        shown = dict(zip(job.labels, job.plans)) if len(job.plans) == len(job.labels) else {}
    for label, plan in shown.items():
        st.info(f"{plain(label)}: {plan.line()}")
        st.caption(f"Time: {plan.time_line()}")
        problems = "\n".join(f"- {line}" for line in plan.problems())
        if not plan.renderable:
            st.error(f"{plain(label)} cannot be rendered on any item still to score:\n{problems}")
        elif problems:
            st.warning(f"{plain(label)}: some items cannot be rendered and will fail:\n{problems}")
    for template in templates if not running else ():  # before calls are spent on scores nobody is compared with
        for line in geval.labeling.uncompared(store, dataset.name, template):
            st.warning(f"{plain(template.label)}: its scores would be compared with nobody yet: {with_code(line)}.",
                       icon=":material/person_off:")
        for line in geval.labeling.beyond_scale(store.items(dataset.name), store.scales(dataset.name), template,
                                                dataset.name, list(store.categories(dataset.name))):
            st.warning(f"{plain(template.label)}: {with_code(line)}.", icon=":material/straighten:")
    if shown:
        whole = sum(list(shown.values())[1:], start=next(iter(shown.values())))
        if len(shown) > 1:
            calls = f"{geval.reporting.counted(whole.calls, 'judge call')}, {whole.duration()}" if whole.calls else \
                "every item cached: no judge call"
            st.markdown(f"**In all: {geval.reporting.counted(len(shown), 'template')}, {calls}**")
        if whole.seconds > LONG_RUN and not running:
            cpu = (" (on the embedded judge: this machine's CPU, all that time)" if options["backend"] == "embedded"
                   else "")
            st.warning(f"This run would take {whole.duration()} of the judge's time{cpu}. Fewer templates, or a "
                       "seeded sample under Items, make it shorter; a stopped run keeps what it scored.",
                       icon=":material/schedule:")
blocked = [label for label, plan in plans.items() if not plan.renderable]

given = {**options, "concurrency": int(concurrency), "rpm": rpm}
# "Resume" only for the selection the stopped job was scoring (then its line below has no button of its own);
# another selection starts anew, and the stopped job keeps its "Resume this run" beside its line below
same = job is not None and job.resumable and job.selection == jobs.selection(items, templates, given)
st.session_state["score_resume_above"] = job.id if same else None
if st.button("Resume this run" if same else "Start scoring", type="primary",
             disabled=running or not templates or bool(blocked) or unbuilt,
             key="score_start", help="A run is going on: stop it first." if running else
             "The embedded judge's llama.cpp is not built yet (the line above)." if unbuilt else
             f"{', '.join(blocked)} cannot be rendered on these items: fix the template or pick another dataset."
             if blocked else None):
    planned = [plans[template.label] for template in templates]  # made by this run of the page, of the store now
    job = job.resume(planned) if same else jobs.start(
        str(store.path), items, templates, judge, dataset.name, given, concurrency=int(concurrency), rpm=rpm,
        plans=planned)
    st.session_state["score_job"] = job.id
    st.rerun()


def show_result(result) -> None:
    """How one template's run ended, named by its template: red when nothing was judged, orange
    when some items failed or some answers had no score (each problem on a line of its own)."""
    run = f"Run {result.run_id}" + (f" ({plain(result.template)})" if result.template else "")
    counted = geval.reporting.counted
    counts = (f"{run}: {result.done}/{result.total} items, {result.cached} cached, "
              f"{counted(result.calls, 'judge call')}, {result.failed} failed, {result.unscored} unscored, "
              f"in {result.elapsed:.0f} s" + (f" ({result.load_took:.0f} s of it loading the model)"
                                              if result.load_took else ""))
    if result.status == "failed":
        how = (f"all {counted(result.failed, 'item')} failed" if result.failed == result.done else
               f"{counted(result.failed, 'item')} failed, {counted(result.unscored, 'answer')} had no score")
        why = f"  \nThe answers' most common reason: {plain(result.top_unread)}" if result.top_unread else ""
        st.error(f"{run} failed: {result.cause} — {how}, nothing was scored.{why}", icon=":material/error:")
        return
    if result.stopped:
        counts += " — stopped; press Resume this run to go on"
    problems = [f"{result.failed} of {result.total} items failed: {result.cause}" if result.failed else "",
                plain(result.unread_line())]
    lines = [counts, *(problem for problem in problems if problem)]
    (st.warning if len(lines) > 1 else st.info if result.stopped else st.success)("  \n".join(lines))
    reasons = sorted(result.reasons.items(), key=lambda pair: -pair[1])
    if len(reasons) > 1:
        st.caption("Failed: " + "; ".join(f"{n} × {reason}" for reason, n in reasons[:5]))
    if result.failed:
        st.caption("Failed items are not cached: start again to retry only them.")


def resume_button(job, key: str) -> None:
    """"Resume this run": the stopped job goes on with its own items, templates and judge."""
    if st.button("Resume this run", key=key, icon=":material/replay:",
                 help="Go on with the stopped run's own items, templates and judge, whatever is chosen above."):
        st.session_state["score_job"] = job.resume().id
        st.rerun(scope="app")


def _no_answer(waited: float) -> str:
    """What a long wait for a server's first answer may mean."""
    return (f"No answer from the judge for {waited:.0f} s: a server that cannot be reached is retried, with "
            "backoff, before the run fails.")


@st.fragment(run_every=1.0)
def show_progress() -> None:
    """Redrawn every second while a job runs: the template it is on (which of how many), the step
    (loading the model: a bar of its own), items done, cache hits, tokens, cost, ETA (of the whole
    job); then how each template's run ended."""
    job = jobs.get(st.session_state.get("score_job"))  # this dataset's (another dataset's run is not shown)
    if job is None:
        return
    progress = job.progress
    if not job.done:
        if progress is None:
            st.status(f"{job.heading() or 'Starting'}: starting…", state="running")
        elif progress.loading and progress.load_left() is None:  # late, or of unknown length: a bar would sit full
            st.status(job.line(), state="running")
        elif progress.loading:
            st.progress(progress.load_share(), text=job.line())
        elif progress.phase:
            st.status(f"{job.heading()}: {progress.phase[0].upper()}{progress.phase[1:]}…", state="running",
                      expanded=False)
        else:
            st.progress(progress.done / max(progress.total, 1), text=job.line())
            waited = progress.unanswered_for()
            if progress.remote and not progress.called and waited >= WAITING_HINT_AFTER:  # retried?
                st.caption(_no_answer(waited))
    for result in job.finished:
        show_result(result)
    if job.error:
        kept = job.progress.done - job.progress.failed if job.progress is not None else 0
        kept_line = (f"  \nThe {geval.reporting.counted(kept, 'item')} judged before it "
                     f"{'is' if kept == 1 else 'are'} stored: press Start to go on." if kept else "")
        left = f"  \n{', '.join(map(plain, job.not_started))} not started." if job.not_started else ""
        st.error((f"{plain(job.current)}: {job.error}" if job.current else job.error) + kept_line + left,
                 icon=":material/error:")
    if job.resumable and st.session_state.get("score_resume_above") != job.id:  # one Resume button, never two
        resume_button(job, "score_resume")
    if not job.done and job.stop.is_set():  # asked to stop: it does after the item (or the model load) it is on
        st.button("Stopping…", key="score_stop", disabled=True)
        st.caption("Stopping after the item it is on (a model that is loading finishes loading first); every "
                   "judgment finished stays stored, and the run can be resumed.")
    elif not job.done:  # asked before the run the click makes, which then says "Stopping…" (not a second later)
        st.button("Stop", key="score_stop", on_click=job.stop_now)
    elif st.session_state.get("score_shown") != job.id:  # asked each second until a whole run has drawn the end:
        st.rerun()  # a rerun asked from a fragment may be dropped on a busy machine


if job is not None and not running:  # this run found the job ended: the page above is drawn for its end
    st.session_state["score_shown"] = job.id
show_progress()
for other in jobs.stopped(str(store.path), dataset.name):  # stopped runs of another selection keep their Resume
    if other.id != st.session_state.get("score_job"):
        done = sum(p.done for p in other.finished)
        st.info(f"Stopped: {', '.join(map(plain, other.labels))} on "
                f"{geval.reporting.counted(len(other.selection[0]), 'item')} "
                f"({done} scored before the stop).")
        resume_button(other, f"score_resume_{other.id}")

with st.expander("Runs on this dataset"):
    runs = store.runs(dataset.name)  # a run whose process is gone (killed, app stopped) shows as crashed
    if runs.empty:
        st.caption("No runs yet.")
    else:
        why = ["cause"] if runs["cause"].any() else []  # the commonest reason its items failed, where some did
        shown = runs[["id", "status", "n_items", "started", "finished", "template", "judge", *why]].copy()
        shown["status"] = list(map(geval.reporting.run_status, runs["status"], runs["went_on"]))  # a Resume: a run
        when = {}  # to the second, in UTC, said once in the column's name
        for column in ("started", "finished"):
            shown[column] = pd.to_datetime(shown[column], unit="s", utc=True)
            when[column] = st.column_config.DatetimeColumn(f"{column} (UTC)", format="YYYY-MM-DD HH:mm:ss")
        st.dataframe(shown, hide_index=True, column_config={**when, "n_items": "items"})
        if (runs["status"] == "crashed").any():
            st.caption("crashed: the run's process ended before it finished (killed, or the app was stopped). "
                       "Its finished judgments are kept: start the same run again to do the rest.")
        if (runs["status"] == "failed").any():
            st.caption("failed: not one item was scored (e.g. the server could not be reached, or no answer had a "
                       "score); the cause column says the commonest reason, and Inspect each item's.")
