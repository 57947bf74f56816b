"""My queue: an annotator's items, one at a time, blind: the text to label and the scale, never a judge
score or another person's label. Each label is saved with its reason the moment the form is sent."""

import time

import streamlit as st

import geval
from studio import auth, state
from studio.text import plain

queues = geval.labeling.queues
store = state.store()
user = auth.current()
st.title("My queue")
if user is None:
    st.info("Queues are for a team: once the store has accounts (geval users add), each annotator signs in and "
            "labels their own queue here.")
    st.stop()
mine = store.queues_of(user.name)
if not mine:
    st.info(f"{user.name}, no queue holds items for you yet: the lead makes one on the Queues page.")
    st.stop()
name = st.selectbox("Queue", mine, key="my_queue") if len(mine) > 1 else mine[0]
queue = queues.Queue.read(store, name)
left = queues.next_items(store, queue, user.name)
skipped = st.session_state.setdefault(f"my_queue_skipped_{name}", [])
waiting = [i for i in left if i not in skipped] or left
total = len(store.assignments(name, user.name))
st.caption(f"Queue {plain(name)}: {total - len(left)} of {total} items labeled. "
           + queues.REASON_RULES[queue.reasons].capitalize() + ". Pick a score for each aspect, type a reason if you "
           "have one (Tab reaches it), and press Enter or Save.")
if said := st.session_state.pop("my_queue_said", None):
    st.success(said)
if not waiting:
    st.success(f"Every item of your queue is labeled. Thank you, {user.name}.")
    st.stop()
item_id = waiting[0]
item = store.item(item_id)
shown = st.session_state.get("my_queue_shown")
if not shown or shown[0] != item_id:
    st.session_state["my_queue_shown"] = shown = (item_id, time.time())

text, form_column = st.columns([3, 2], gap="large")
with text:
    for turn in item.context:
        st.markdown(f"**{plain(turn.speaker or 'turn')}**: {plain(turn.text)}")
    if item.response:
        st.caption({"summary": "The summary:"}.get(item.level, "The response:"))
        with st.container(border=True):
            st.markdown(f"**{plain(item.response)}**")
    if item.grounding:
        st.caption({"summary": "The document:"}.get(item.level, "The grounding (fact or persona):"))
        with st.container(height=160 if len(item.grounding) > 400 else "content", border=True):
            st.text(item.grounding)

with form_column, st.form(f"my_queue_{item_id}", border=True):  # its key names the item: a label lands on it only
    scores = {a.name: st.radio(f"{a.name} ({a.min}-{a.max})", a.scale, index=None, horizontal=True,
                               key=f"my_queue_{item_id}_{a.name}") for a in queue.aspects}
    reason = st.text_input("Reason (optional unless asked for)", key=f"my_queue_{item_id}_reason", max_chars=500)
    sent = st.form_submit_button("Save", type="primary")
if st.button("Skip for now", key=f"my_queue_{item_id}_skip"):
    skipped.append(item_id)
    st.rerun()
if sent:
    missing = [a.name for a in queue.aspects if scores[a.name] is None]
    if missing:
        st.error(f"Give a score for {', '.join(map(plain, missing))} first.")
        st.stop()
    needed = [why for a in queue.aspects if (why := queues.reason_needed(
        queue, a, scores[a.name], queues.others_scores(store, queue, item_id, a.name, user.name)))]
    if needed and not reason.strip():
        st.error(plain(needed[0]))
        st.stop()
    seconds = time.time() - shown[1]
    for aspect in queue.aspects:
        store.save_label(item_id, aspect.name, scores[aspect.name], user.name, seconds, reason.strip())
    st.session_state["my_queue_said"] = (f"Saved: " + ", ".join(f"{a.name} {scores[a.name]}" for a in queue.aspects)
                                         + (" with your reason." if reason.strip() else "."))
    st.rerun()
