"""The Label page's session: the item shown, the items seen (for ←), the items skipped, what an
undo puts back, and the clock that times each label. Every label goes to the store the moment
it is given (`Store.save_label`); this only remembers how the user moves, and a reload starts
it again from the store (the items labeled, in the order they were labeled).

Keys are read against the session, not against the page they were pressed on: a digit rates the
item the session shows now and Enter goes on from it, so a key pressed while the page still
draws the item before (typed ahead) lands where the user is, never on the item left. The
callbacks never touch `st.session_state`: each access is a point where Streamlit stops a callback
for the next key's rerun, and a digit then Enter would lose the label."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import streamlit as st

import geval
from studio import state

KEY = "label_session"


@dataclass
class Session:
    """Where one annotator is in one dataset."""

    dataset: str
    annotator: str
    store: geval.Store
    history: list[str] = field(default_factory=list)  # the items shown, in order (← walks back through it)
    current: str | None = None
    upcoming: list[str] = field(default_factory=list)  # the items not labeled yet, in the page's order
    skipped: set[str] = field(default_factory=set)
    undo: list[tuple[str, str, dict | None]] = field(default_factory=list)  # (item, aspect, label it replaced)
    since: float = 0.0  # when the clock started: the item shown, or its last label
    note: str = ""  # what the last key did, shown once


def session(dataset: str, annotator: str) -> Session:
    """This browser session's labeling of `dataset` as `annotator`: a new one (its history the
    items the annotator labeled, oldest first) when either changed."""
    found, store = st.session_state.get(KEY), state.store()
    if found is None or (found.dataset, found.annotator, found.store) != (dataset, annotator, store):
        labels = store.labels(dataset, annotator)
        found = st.session_state[KEY] = Session(dataset, annotator, store, list(dict.fromkeys(labels["item_id"])))
    return found


def show(s: Session, item_id: str | None) -> None:
    """Make `item_id` the item shown (None: none is left); its clock starts when it is first shown."""
    if s.current != item_id:
        s.current, s.since = item_id, time.time()
    if item_id is not None and item_id not in s.history:
        s.history.append(item_id)


def _labeled(s: Session, item_id: str) -> set[str]:
    """The aspects of `item_id` the annotator has labeled (lower case), as the store has them."""
    labels = s.store.labels(s.dataset, s.annotator)
    return set(labels.loc[labels["item_id"] == item_id, "aspect"].str.lower())


def rate(s: Session, aspect: str, score: int, keyed: tuple[str, ...] = ()) -> None:
    """Save the label of the item shown at once, with the seconds since it was shown (or its previous
    label). `keyed`: the aspects in order, for the buttons the digits press: they rate the first of
    them the item has no label of yet (the button's own `aspect` once all have one)."""
    if s.current is None:
        s.note = "No item is shown: nothing was labeled."
        return
    if keyed:
        labeled = _labeled(s, s.current)
        aspect = next((name for name in keyed if name.lower() not in labeled), aspect)
    now = time.time()
    previous = s.store.save_label(s.current, aspect, score, s.annotator, seconds=round(now - s.since, 2))
    s.undo.append((s.current, aspect, previous))
    s.since, s.note = now, f"Saved {aspect} = {score}."


def go_on(s: Session, aspects: tuple[str, ...]) -> None:
    """Enter / →: the next item seen after this one, else the next one not labeled in the page's
    order, once every one of `aspects` of this item has a label. An item still to label stays
    (s skips it), with a note: a digit lost on its way (Streamlit drops a key's click when the next
    key's rerun overtakes it) never leaves an item unlabeled unnoticed."""
    if s.current is None:
        return
    missing = [name for name in aspects if name.lower() not in _labeled(s, s.current)]
    if missing:
        s.note = f"No label of {', '.join(missing)} for this item yet: a digit gives it, s skips the item."
        return
    _leave(s)


def _leave(s: Session) -> None:
    """Show the item seen after this one, else the next one not labeled in the page's order."""
    place = s.history.index(s.current) if s.current in s.history else len(s.history) - 1
    following = s.history[place + 1] if place + 1 < len(s.history) else next(
        (i for i in s.upcoming if i != s.current and i not in s.skipped and i not in s.history), None)
    show(s, following)
    s.note = ""


def back(s: Session) -> None:
    """←: the item seen before this one."""
    if not s.history:
        s.note = "Nothing labeled before this item yet."
        return
    place = s.history.index(s.current) if s.current in s.history else len(s.history)
    if place == 0:
        s.note = "This is the first item you saw."
        return
    show(s, s.history[place - 1])
    s.note = ""


def skip(s: Session) -> None:
    """s: leave this item unlabeled and go on (it is offered again in a new session)."""
    if s.current is None:
        return
    s.skipped.add(s.current)
    _leave(s)
    s.note = "Skipped."


def undo(s: Session) -> None:
    """u: take back the last label given in this session (an edit gets its earlier score back)
    and show its item again."""
    if not s.undo:
        s.note = "Nothing to undo in this session."
        return
    item_id, aspect, previous = s.undo.pop()
    if previous is None:
        s.store.delete_label(item_id, aspect, s.annotator)
    else:
        s.store.save_labels([previous])
    s.current, s.since = item_id, time.time()
    s.note = f"Undone: {aspect} of this item " + (f"is {previous['score']:g} again." if previous else "is unlabeled.")
