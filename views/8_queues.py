"""Queues: the lead hands the dataset's items to a team, each item to several annotators, and watches
their progress and agreement form, the items they disagree on with their reasons, and the judge
against them."""

import streamlit as st

import geval
from studio import auth, cached, jobs, state
from studio import combos as scored
from studio.text import plain

queues = geval.labeling.queues
st.title("Queues")
store = state.store()
dataset = state.require_dataset()
user = auth.current()
st.caption("A queue hands the items of a dataset to annotators, each item to several of them (the overlap), so that "
           "every annotator's share and every pair's shared items are balanced. Annotators sign in and see their own "
           "queue only: no judge score, no other person's label.")

# --- make a queue ---------------------------------------------------------------------------------
accounts = store.users()
with st.expander("Make a queue", expanded=not store.queues(dataset.name)):
    how = st.selectbox("Which items", list(queues.SELECTIONS), format_func=queues.SELECTIONS.get,
                       key="queue_how")  # outside the form: n is asked only where it is read
    with st.form("queue_new"):
        left, right = st.columns(2)
        name = left.text_input("Name", key="queue_name")
        aspects = left.text_input("Aspects and scales", key="queue_aspects",
                                  value=", ".join(map(str, geval.labeling.dataset_aspects(dataset)[:1])) or "Overall 1-5",
                                  help="Comma-separated, each with its scale: Naturalness 1-3, Overall 1-5.")
        who = left.multiselect("Annotators", sorted(accounts, key=lambda n: accounts[n] != "annotator"),  # leads last
                               key="queue_who", help="Accounts made with geval users add; a lead chosen here labels "
                                                     "a share too.")
        n = 0 if how == "all" else right.number_input("n", 0, 100_000, 20, key="queue_n", help=queues.SELECTIONS[how])
        overlap = right.number_input("Annotators per item (overlap)", 1, 10, 2, key="queue_overlap",
                                     help="2 or more gives agreement.")
        rule = right.selectbox("Reasons", list(queues.REASON_RULES), format_func=queues.REASON_RULES.get,
                               key="queue_reasons")
        seed = right.number_input("Seed", 0, 10**6, 0, key="queue_seed")
        made = st.form_submit_button("Make the queue", type="primary")
    if made:
        try:
            named = geval.labeling.parse_aspects(aspects, store.categories(dataset.name))
            made = queues.create(store, name, dataset.name, named, who, how, int(n), int(overlap), rule, int(seed),
                                 user.name if user else "")
            st.session_state["queue_open"] = made.name
            st.success(f"Queue {plain(made.name)} is made: {geval.reporting.counted(made.selection['items'], 'item')}, "
                       f"each to {made.overlap} of {len(who)} annotators.")
        except geval.GevalError as exc:
            st.error(plain(str(exc)))

names = store.queues(dataset.name)
if not names:
    st.info(f"No queue on {dataset.name} yet: make one above, or with geval queue create.")
    st.stop()
state.keep_valid("queue_open", names, default=names[-1])
st.session_state.setdefault("queue_open", names[-1])  # the newest: its default, set as keep_valid sets one
name = st.selectbox("Queue", names, key="queue_open")
queue = queues.Queue.read(store, name)
st.caption(f"{plain(queue.name)}: {', '.join(map(str, queue.aspects))} · {queues.SELECTIONS[queue.selection['how']]} "
           f"({queue.selection['items']} items) · overlap {queue.overlap} · {queues.REASON_RULES[queue.reasons]}.")

# --- progress -----------------------------------------------------------------------------------------
st.subheader("Progress")
progress = queues.progress(store, queue)
st.dataframe(progress, hide_index=True, column_config={
    "share done": st.column_config.ProgressColumn("share done", format="percent", min_value=0, max_value=1),
    "labels per hour": st.column_config.NumberColumn(format="%.0f")})
if progress["labels per hour"].isna().any():
    st.caption(queues.RATE_NOTE)
late, add = st.columns([3, 1], vertical_alignment="bottom")
joining = late.selectbox("Add an annotator (they take over items nobody has labeled yet first)",
                         [n for n in accounts if n not in set(progress["annotator"])], key="queue_join", index=None)
if add.button("Add", key="queue_join_add", disabled=joining is None):
    taken = queues.add_annotator(store, queue, joining)
    st.success(f"{joining} joins with {geval.reporting.counted(taken, 'item')}.")
    st.rerun()

# --- agreement among people ---------------------------------------------------------------------------
st.subheader("How much the annotators agree")
items = queues.people_items(store, queue)
for aspect in queue.aspects:
    found = queues.agreement(store, queue, aspect, items)
    st.markdown(f"**{plain(aspect.name)}**, on {geval.reporting.counted(found.items, 'item')} labeled by two or more")
    alpha, kappa = st.columns(2)
    alpha.metric("Krippendorff's alpha (ordinal)", found.alpha.reads() if found.items else "n/a")
    kappa.metric("Mean pairwise weighted kappa", found.kappa.reads() if found.items else "n/a")
    if len(found.pairs):
        st.dataframe(found.pairs.assign(kappa=[k.reads() for k in found.pairs["kappa"]]), hide_index=True)
    split = queues.disagreements(store, queue, aspect)
    if len(split):
        st.caption("Where they disagree most, with their reasons side by side:")
        st.dataframe(split, hide_index=True)
    elif found.items:
        st.caption("They gave the same label to every item two or more of them labeled.")

# --- the judge against these people -----------------------------------------------------------------
st.subheader("The judge against these people")
combos = store.combos(dataset.name)
combos = combos[combos["ok"] > 0] if len(combos) else combos
if not len(combos):
    st.caption("No judge has scored this dataset yet: score it on the Score page to compare it with the queue's labels.")
else:
    mine = scored.comparing(store, combos, [aspect.name for aspect in queue.aspects])  # judges of its aspects
    offered = mine if len(mine) else combos
    scored.choose("queue_judge", offered)
    label = st.selectbox("Judge", scored.menu(offered, st.session_state.get("queue_judge")), key="queue_judge")
    try:
        table = queues.judge_against_people(store, queue, cached.pair(combos.set_index("label").loc[label]), items)
        st.dataframe(geval.reporting.display_table(table), hide_index=True)
    except geval.GevalError as exc:
        st.caption(plain(str(exc)))

# --- reasons into the judge ---------------------------------------------------------------------------------
st.subheader("Reasons into the judge")
st.caption("Where people corrected the judge with a reason, those items become candidate prompts: a few corrected "
           "items shown with their reasons, and (with an OpenAI-compatible judge) rubric sentences it drafts from the "
           "reasons. Each is tried by the prompt search on groups it was not made from, against the template the "
           "judge uses now, and adopted only if it beats it on held-out groups.")
if len(combos):
    aspect = queue.aspects[0]
    compared = cached.pair(combos.set_index("label").loc[label])  # the judge chosen above
    try:
        found = geval.labeling.reasons.corrections(store, dataset.name, aspect.name, aspect.min, aspect.max,
                                                   compared, queue.name)
        st.dataframe(geval.labeling.reasons.reasons_table(found), hide_index=True)
    except geval.GevalError as exc:
        found = []
        st.caption(plain(str(exc)))
    job = jobs.get(st.session_state.get("queue_reasons_job"))
    budget_column, button_column = st.columns([3, 1], vertical_alignment="bottom")
    budget = budget_column.number_input("Judge calls at most (the sidebar's judge asks; the corrections are read "
                                        "against the judge chosen above)", 10, 100_000, 400,
                                        key="queue_reasons_budget")
    if button_column.button("Measure", key="queue_reasons_go", disabled=len(found) < 2 or bool(job and not job.done)):
        st.session_state["queue_reasons_job"] = jobs.start_reasons(str(store.path), dataset.name, state.judge(),
                                                                   aspect.name, int(budget), queue.name, 2,
                                                                   compared).id
        st.rerun()
    if job is not None and not job.done:
        @st.fragment(run_every=2.0)
        def measuring() -> None:
            """Redrawn every 2 s while the search runs; the whole page once it ends."""
            if job.done:
                st.rerun()
            st.caption(job.progress.line() if job.progress else "starting…")

        measuring()
        st.button("Stop", key="queue_reasons_stop", on_click=job.stop.set)
    elif job is not None and job.error:
        st.error(plain(job.error))
    elif job is not None and job.result is not None:
        result = job.result
        shown = geval.reporting.number(result.gain, 3)
        interval = (f" [{geval.reporting.number(result.low, 3)}, {geval.reporting.number(result.high, 3)}]"
                    if result.low == result.low else f" ({result.reading.get('note') or 'no interval'})")
        (st.success if result.adopted else st.info)(f"Gain on {len(result.search.test_groups)} held-out groups: "
                                                   f"{shown}{interval}. {result.verdict.capitalize()}.")
        if result.rubric_note:
            st.caption(plain(result.rubric_note))

# --- export ---------------------------------------------------------------------------------------------
labels = queues.export(store, queue)
st.download_button(f"Download the queue's {geval.reporting.counted(len(labels), 'label')} (CSV: annotator, time, "
                   "reason)", labels.to_csv(index=False), f"{queue.name}-labels.csv", "text/csv", key="queue_export",
                   disabled=labels.empty)
