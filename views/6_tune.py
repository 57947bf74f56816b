"""Tune: search for the way of asking the judge that agrees best with people on one aspect,
chosen on some groups and reported on the others."""

import math

import streamlit as st

import geval
from studio import cached, jobs, state
from studio.text import plain

st.title("Tune")
store = state.store()
dataset = state.require_dataset()
st.caption("The groups (dialogues, documents) with human scores are split, seeded, into a tune part and a test part "
           "before any judge call. Variants of the template to beat — other wordings, checklist questions, few-shot "
           "examples from the tune part's human labels, argmax reads, an ensemble of the best two — are scored on a "
           "few tune groups, the better half on twice as many, until the budget is spent. The best on the tune part "
           "is then scored on the test part only: its correlation with a 95% interval and a paired test against the "
           "template to beat. Every judgment is stored, so a stopped search resumes where it was.")

aspects = list(dict.fromkeys(a for item in store.items(dataset.name) for a in item.human))  # the human side's
state.keep_valid("tune_aspect", aspects)
editor = state.template()
compared = [a.human or a.name for a in editor.aspects] if editor is not None else []
if aspects and st.session_state.get("tune_aspect") is None:  # by default: the editor's template's
    st.session_state["tune_aspect"] = next((aspect for aspect in aspects
                                            if aspect.lower() in {c.lower() for c in compared}), aspects[0])
left, right = st.columns(2)
human = left.selectbox("Human aspect", aspects, key="tune_aspect", persist_state="session",
                       help="By default the one the editor's template is compared with.")
budget = right.number_input("Budget (judge calls)", 10, 1_000_000, step=10, key=state.start_at("tune_budget", 400),
                            persist_state="session", help="Every judge call of the search, the test part included: "
                            "what the test part can take is kept aside first, the rounds spend the rest. Counted as "
                            "if nothing were stored, so that a resumed search takes the same path; calls already in "
                            "the store cost nothing.")
share = left.slider("Share of the groups to tune on", 0.2, 0.8, step=0.1, key=state.start_at("tune_share", 0.5),
                    persist_state="session")
seed = right.number_input("Seed (split and search)", 0, 10**6, key=state.start_at("tune_seed", 0),
                          persist_state="session")

try:  # prompts/ has one for this aspect: offered first; else the editor's or a saved version is chosen at once
    default = geval.tune.default_start(dataset.name, str(human))
except geval.GevalError:
    default = None
matches = editor is not None and any((a.human or a.name).lower() == str(human).lower() for a in editor.aspects) \
    and (default is None or editor.version != default.version)  # the editor holding the prompts/ one: offered once
files = {t.version for t in geval.Template.known()}  # scored, a prompts/ file is in the store too: not one you saved
kept = store.template_comments()  # a search's variant is offered once you saved it (as the winner), not as scored
saved = {f"{'In prompts/' if t.version in files else 'Saved'}: {t.label}": t  # one-aspect versions compared with it
         for t in state.saved_templates(store)
         if len(t.aspects) == 1 and t.kind == "form" and not t.needs_generated_steps
         and (not t.made_by_search or t.version in kept)
         and (t.aspects[0].human or t.aspects[0].name).lower() == str(human).lower()
         and (editor is None or t.label != editor.label) and (default is None or t.version != default.version)}
in_prompts = "The one-aspect template for it in prompts/" + (f": {default.label}" if default is not None else "")
offered = {in_prompts: None, **({f"The editor's: {editor.label}": editor} if matches else {}), **saved}
if default is None and len(offered) > 1:  # kept when nothing else is: its error says what to do
    del offered[in_prompts]
state.keep_valid("tune_beat", list(offered))
beat = st.radio("Template to beat", list(offered), horizontal=True, key="tune_beat", persist_state="session",
                help="The editor's template, and each saved version, offered when compared with this human aspect.")
start = offered[beat]
VARIANTS = ["other templates in prompts/ (wordings, checklist, batch, few-shot)", "few-shot examples (k 2 and 4)",
            "an ensemble of the best two after round 1"]
tried = st.multiselect("Variants to try besides the template to beat and its argmax read", VARIANTS, default=VARIANTS,
                       key="tune_variants", persist_state="session",
                       help="Fewer variants need a smaller budget for the first round.")

judge = needed = None  # a search that cannot start says why, and a search already run still shows below
try:
    judge = state.judge()
    needed = cached.tune_budget(store, dataset.name, judge, str(human), start, VARIANTS[0] in tried,
                                VARIANTS[1] in tried, VARIANTS[2] in tried, float(share), int(seed))
except geval.GevalError as exc:
    st.error(str(exc))
short = needed is None or budget < needed.least  # before Start: the search would stop at once
if needed is not None:
    # the time of calls like the search's: every candidate's on the first round's groups, at this judge's pace
    st.caption(f"At most {int(budget)} judge calls in all, the winner and the template to beat on the test part "
               f"included: {needed.first_round.time_line(int(budget))}.")
    if short:
        st.error(f"A budget of {int(budget)} judge calls does not cover one round of the {needed.candidates} "
                 f"candidates on one tune group and the test part: give at least {needed.least}, or try fewer "
                 "variants.")
    elif budget < needed.enough:
        st.warning(f"With {int(budget)} judge calls the winner is chosen on fewer than {needed.groups} tune groups, "
                   f"mostly luck: a budget of {needed.enough} lets every candidate see {needed.groups}.")
    if budget < needed.enough:
        st.button(f"Set the budget to {needed.enough}", key="tune_budget_enough",
                  on_click=lambda: st.session_state.update(tune_budget=needed.enough))
    if not short and needed.few_items_line():
        st.warning(needed.few_items_line())

job = jobs.get(st.session_state.get("tune_job"))
if job is None or job.dataset != dataset.name:  # e.g. after a reload: this dataset's running search, if any
    job = jobs.running(str(store.path), dataset.name, kind="tune")
    st.session_state["tune_job"] = job.id if job is not None else None
running = job is not None and not job.done
stopped = job is not None and job.done and job.result is not None and job.result.stopped
go, new = st.columns([1, 4]) if stopped else (st, None)  # a stopped search: resume it, or start another
resume = go.button("Resume" if stopped else "Start the search", type="primary",
                   disabled=running or (short and not stopped), key="tune_start",
                   help="A search is going on: stop it first." if running else
                   "Goes on with the stopped search's own settings." if stopped else
                   "The line above says why the search cannot start." if short else None)
if resume or (new is not None and new.button("Start a new search", key="tune_new", disabled=short,
                                                  help="With the settings above.")):
    job = job.resume() if resume and stopped else jobs.start_tune(
        str(store.path), dataset.name, judge, str(human), int(budget), start, float(share), int(seed),
        other_templates=VARIANTS[0] in tried, few_shot=VARIANTS[1] in tried, ensemble=VARIANTS[2] in tried)
    st.session_state["tune_job"] = job.id
    st.rerun()


def show_result(result, key: str = "tune") -> None:
    """The split, every candidate's rounds, the winner on the test groups, and saving it (its widgets' keys start
    with `key`: a kept search's result may show beside this session's)."""
    st.subheader("Result")
    st.write(f"Split (seeded, by group): {len(result.tune_groups)} groups to tune on, {len(result.test_groups)} to "
             f"test on; {result.tried} variants tried, {result.calls} judge calls, {result.cost_text}.")
    if result.stopped:
        st.warning(result.summary() if not result.winner else
                   "Stopped before the test part was scored: press Resume to go on (what was scored is stored).")
    elif not result.winner:
        st.error(result.summary())
    if not result.table.empty:
        rounds = result.table["round"].nunique()
        st.caption(f"On the tune groups ({result.metric}, {result.level} level; "
                   + ("each round on more groups, with the better half of the one before):" if rounds > 1 else
                      "one round):"))
        st.dataframe(result.table.assign(value=result.table["value"].map(geval.reporting.number))
                     .rename(columns={"value": result.metric}), hide_index=True)
    for note in result.notes:  # how the search ended; a winner chosen on too few groups
        st.info(plain(note))
    t = result.test
    if not t:
        return
    st.markdown(f"**Winner on the tune groups:** {plain(result.winner)}"
                + (" (the template to beat)" if result.winner == result.start else ""))
    held_out = st.columns(3)
    interval = (f"95% CI [{t['low']:.3f}, {t['high']:.3f}]" if math.isfinite(t["low"]) else
                f"no value: the {result.level} level needs more test groups with a correlation"
                if not math.isfinite(t["winner"]) else "no 95% interval (below)")
    held_out[0].metric(f"Winner on the {len(result.test_groups)} test groups", geval.reporting.number(t["winner"]),
                       help=f"{result.metric}, {result.level} level, n = {t['n']}; 95% interval over groups")
    held_out[0].caption(f"{interval}, n = {t['n']}")
    held_out[1].metric("Template to beat, same groups", geval.reporting.number(t["start"]))
    held_out[2].metric("Winner − template to beat", geval.reporting.number(t["difference"]),
                       help="Paired: the jackknife over the test groups, with Student's t.")
    if math.isfinite(t["diff_low"]):
        held_out[2].caption(f"95% CI [{t['diff_low']:+.3f}, {t['diff_high']:+.3f}], "
                            f"p = {geval.reporting.format_p(t['p'])}")
    if t.get("note"):
        st.caption(t["note"])
    if result.winner == result.start:
        st.info("The template to beat won on the tune groups: there is no difference to test on the test groups.")
    elif math.isfinite(t["diff_low"]) and t["diff_low"] > 0:
        st.success("The winner agrees better with people than the template to beat on groups it never saw.")
    elif math.isfinite(t["diff_high"]) and t["diff_high"] < 0:
        st.error("The winner agrees worse than the template to beat on the test groups: it was luck on the tune part.")
    elif math.isfinite(t["diff_low"]):
        st.info("On the test groups the winner cannot be told apart from the template to beat (the interval of the "
                "difference holds 0).")
    else:
        st.warning(f"Not decided: {geval.reporting.counted(len(result.test_groups), 'test group')} give no interval "
                   f"of the difference (it needs {geval.reporting.MIN_GROUPS}), so the figures above, either way, are "
                   "too few to rely on. A larger dataset, or a smaller tune share, gives the test part more groups.")
    winner = result.winner_template
    if winner is None:
        st.caption("The winner is an ensemble (the mean of two variants' scores): there is no one template to save.")
        return
    if result.winner.endswith("[argmax read]"):
        st.caption("The winner reads the judge's most probable score instead of the weighted mean (the 'argmax' "
                   "score variant in Agreement).")
    if result.winner in (result.start, f"{result.start} [argmax read]"):  # saving it renamed the user's version
        st.caption(plain(f"The winner asks as the template to beat does, {winner.label}: there is no new wording to "
                         "save; pick that version on the Score page."))
        return
    with st.expander(f"The winner's template: {winner.label}"):
        st.code(winner.text, language=None)
    if st.button("Save the winner as a template version", key=f"{key}_save", icon=":material/save:"):
        kept = store.template_comments().get(winner.version)  # a version already saved keeps the user's comment
        store.save_template(winner, comment="" if kept else f"tune winner on {result.human} ({result.dataset}, "
                                                            f"{len(result.test_groups)} test groups: "
                                                            f"{geval.reporting.number(t['winner'])})")
        st.session_state[f"{key}_saved"] = winner.label
    if st.session_state.get(f"{key}_saved") == winner.label:
        st.success(f"Saved as {winner.label}: pick it on the Score page, or open it on Prompts.")


@st.fragment(run_every=1.0)
def show_progress() -> None:
    """Redrawn every second while a search runs: round, candidate, budget spent, calls, cost, ETA."""
    job = jobs.get(st.session_state.get("tune_job"))
    if job is None:
        return
    progress = job.progress
    if not job.done:
        if progress is None or not progress.round:
            st.status(progress.message if progress is not None else "Starting…", state="running")
        else:
            st.progress(progress.share, text=progress.line())
            if progress.run is not None:
                st.caption(f"{progress.candidate}: {progress.run.line()}")
        if job.stop.is_set():  # asked: the search stops after the call it is on
            st.button("Stopping…", key="tune_stop", disabled=True)
        else:
            st.button("Stop", key="tune_stop", on_click=job.stop_now)
    elif st.session_state.get("tune_shown") != job.id:  # asked each second until a whole run has drawn the end:
        st.rerun()  # a rerun asked from a fragment may be dropped on a busy machine (the result never came)
    if job.error:
        st.error(job.error)


if job is not None and not running:  # this run found the search ended, so it draws the end below
    st.session_state["tune_shown"] = job.id
show_progress()
if job is not None and job.done and job.result is not None:
    show_result(job.result)

kept = geval.tune.kept(store, dataset.name)  # finished here, in another session or by `geval tune`
if kept:
    st.subheader("Searches kept for this dataset")
    st.caption(plain(f"Every finished search on {dataset.name}, from this page or python -m geval tune, oldest "
                     "first, each read on its test groups only."))
    st.dataframe(geval.reporting.searches_table(store, dataset.name), hide_index=True)
    shown = st.selectbox("Show a kept search's result", range(len(kept)), index=None, key="tune_kept",
                         placeholder="Choose a search",
                         format_func=lambda k: f"{k + 1}: {kept[k].human}, {kept[k].judge}, "
                                               f"{len(kept[k].test_groups)} test groups, winner {kept[k].winner}")
    if shown is not None and shown < len(kept):
        show_result(kept[shown], key="tune_kept")
