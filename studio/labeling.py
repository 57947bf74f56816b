"""The Label page's session: the item shown, the items seen (for ←), the items skipped, what an
undo puts back, and the clock that times each label. Every label goes to the store the moment
it is given (`Store.save_label`); this only remembers how the user moves, and a reload starts
it again from the store (the items labeled, in the order they were labeled)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import streamlit as st

from studio import state

KEY = "label_session"


@dataclass
class Session:
    """Where one annotator is in one dataset."""

    dataset: str
    annotator: str
    history: list[str] = field(default_factory=list)  # the items shown, in order (← walks back through it)
    current: str | None = None
    skipped: set[str] = field(default_factory=set)
    undo: list[tuple[str, str, dict | None]] = field(default_factory=list)  # (item, aspect, label it replaced)
    since: float = 0.0  # when the clock started: the item shown, or its last label
    note: str = ""  # what the last key did, shown once


def session(dataset: str, annotator: str) -> Session:
    """This browser session's labeling of `dataset` as `annotator`: a new one (its history the
    items the annotator labeled, oldest first) when either changed."""
    found = st.session_state.get(KEY)
    if found is None or (found.dataset, found.annotator) != (dataset, annotator):
        labels = state.store().labels(dataset, annotator)
        found = st.session_state[KEY] = Session(dataset, annotator, list(dict.fromkeys(labels["item_id"])))
    return found


def show(s: Session, item_id: str) -> None:
    """Make `item_id` the item shown; its clock starts when it is first shown."""
    if s.current != item_id:
        s.current, s.since = item_id, time.time()
    if item_id not in s.history:
        s.history.append(item_id)


def rate(s: Session, item_id: str, aspect: str, score: int) -> None:
    """Save the label at once, with the seconds since the item was shown (or its previous label)."""
    now = time.time()
    previous = state.store().save_label(item_id, aspect, score, s.annotator, seconds=round(now - s.since, 2))
    s.undo.append((item_id, aspect, previous))
    s.since, s.note = now, f"Saved {aspect} = {score}."


def go_on(s: Session, done: bool) -> None:
    """Enter / →: the next item seen after this one, else the next in the order (`done`: whether
    every aspect of this one is labeled; if not, it counts as skipped)."""
    if s.current is None:
        return
    if not done:
        s.skipped.add(s.current)
    place = s.history.index(s.current) if s.current in s.history else len(s.history) - 1
    s.current = s.history[place + 1] if place + 1 < len(s.history) else None
    s.since, s.note = time.time(), ""


def back(s: Session) -> None:
    """←: the item seen before this one."""
    if not s.history:
        s.note = "Nothing labeled before this item yet."
        return
    place = s.history.index(s.current) if s.current in s.history else len(s.history)
    if place == 0:
        s.note = "This is the first item you saw."
        return
    s.current, s.since, s.note = s.history[place - 1], time.time(), ""


def skip(s: Session) -> None:
    """s: leave this item unlabeled and go on (it is offered again in a new session)."""
    go_on(s, done=False)
    s.note = "Skipped."


def undo(s: Session) -> None:
    """u: take back the last label given in this session (an edit gets its earlier score back)
    and show its item again."""
    if not s.undo:
        s.note = "Nothing to undo in this session."
        return
    item_id, aspect, previous = s.undo.pop()
    store = state.store()
    if previous is None:
        store.delete_label(item_id, aspect, s.annotator)
    else:
        store.save_labels([previous])
    s.current, s.since = item_id, time.time()
    s.note = f"Undone: {aspect} of this item " + (f"is {previous['score']:g} again." if previous else "is unlabeled.")
