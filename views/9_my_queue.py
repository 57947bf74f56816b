"""My queue: an annotator's own items, in the queue's order, through the labeling unit (all by keyboard,
each label posted with its item's id and stored under the signed-in identity), blind: the text to label
and the scale, never a judge score, the dataset's scores or another person's label. A reason goes after
the digit (Tab, the text, Enter); the queue's rule may require one, decided on the server."""

import streamlit as st

import geval
from studio import auth, state
from studio import labeling as label_unit
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
    if user.lead:  # a lead labels too, in a queue of their own making
        st.info(f"{user.name}, no queue holds items for you yet: make one on the Queues page, with you among its "
                "annotators.")
        st.page_link("views/8_queues.py", label="Queues", icon=":material/groups:")
    else:
        st.info(f"{user.name}, no queue holds items for you yet: the lead makes one on the Queues page.")
    st.stop()
name = st.selectbox("Queue", mine, key="my_queue") if len(mine) > 1 else mine[0]
queue = queues.Queue.read(store, name)
st.caption(f"{label_unit.KEYS_HELP} In this queue {queues.REASON_RULES[queue.reasons]}. Each label goes to the "
           "store as you give it, on the item on screen.")


def text_of(item_id: str):
    """An item of the queue (its text only is sent), read once per session."""
    known = st.session_state.setdefault("my_queue_items", {})
    if item_id not in known:
        known[item_id] = store.item(item_id)
    return known[item_id]


@st.fragment
def labeling() -> None:
    """What the unit posted stored (under the signed-in identity, the queue's rule applied), then the unit
    drawn with the annotator's next items (a label reruns this part of the page only)."""
    lines = st.container()
    s = label_unit.queue_session(queue, user.name)
    label_unit.take(s)
    order = store.assignments(queue.name, user.name)["item_id"].tolist()
    left = queues.next_items(store, queue, user.name)
    labels = store.queue_labels(queue.name, user.name)
    place = {item_id: n for n, item_id in enumerate(order, 1)}
    waiting = [i for i in left if i not in s.skipped][:label_unit.AHEAD]
    unfinished = set(left)  # labeled on some of the queue's aspects only: still to label, not behind the one on screen
    history = [i for i in dict.fromkeys(labels["item_id"]) if i in place and i not in unfinished][-label_unit.BEHIND:]
    own = label_unit.given_labels(labels, queue.aspects)
    label_unit.draw(s, label_unit.token(queue.name, user.name, queue.aspects), list(queue.aspects), True, len(order),
                    len(order) - len(left), waiting, history,
                    [label_unit.payload(text_of(i), place[i], own.get(i, {}), i not in left, {}, blind=True)
                     for i in dict.fromkeys(history + waiting)], store.categories(queue.dataset))
    with lines:
        st.info(f"Queue {plain(queue.name)}: {len(order) - len(left)} of {len(order)} items labeled.",
                icon=":material/label:")
        if not left:
            st.success(f"Every item of your queue is labeled. Thank you, {user.name}.")
        elif not waiting:
            st.success(f"The items left are skipped ({len(s.skipped)}): reload the page to see them again.")


labeling()
