"""The Label page's session: the item shown, the items seen (for ←), the items skipped, what an
undo puts back, and the clock that times each label. Every label goes to the store the moment
it is given (`Store.save_label`); this only remembers how the user moves, and a reload starts
it again from the store (the items labeled, in the order they were labeled).

Every key names the item it was typed on. The keys are not Streamlit button shortcuts: a
rerun that a newer key overtakes runs the callbacks of the keys it carries in no set order, and a
key pressed while the page still showed an item the user had left (typed ahead of a redraw: on a
loaded machine each key is a rerun of about a second) would press the buttons drawn since. A
small component (`label_keys.js`) draws the item's line, logs each key with the item that line
showed as it was pressed, and sends the log; `take_keys` takes each new key in the order typed:
a key typed on the item shown applies to it, a key typed on an item already left is refused, never
applied to another. Every key not taken (typed on an item left, a digit that saved nothing, Enter on
an item still to label) is counted for the session and said (`refusals`) until the user labels
again, with a key pressed after the page said so, or dismisses it; a visit to another page leaves
it behind. The buttons (for the mouse) have keys of their own
for each item and name it in their callbacks' arguments, so a click too lands on the item it was
drawn for. The callbacks never touch `st.session_state`: each access is a point where Streamlit
stops a callback for the next key's rerun."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

import geval
from studio import state

KEY = "label_session"
KEYS_STATE = "label_keys"  # the keys' component's state: Streamlit drops it when a run on another page did not draw it
#: Why a key was not taken: how the running count says it, and how the latest keys say it.
REFUSED = {"left": ("typed on an item you had already left", "after you had left it"),
           "labeled": ("a digit on an item already labeled (u undoes, a click changes a label)", "labeled already"),
           "scale": ("a digit not on the aspect's scale", "not on its scale"),
           "unlabeled": ("Enter or → on an item not labeled yet (a digit labels it, s skips it)", "not labeled yet")}
LATEST = 12  # the keys not taken shown one by one, the newest


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
    refused: list[tuple[str, str | None, str]] = field(default_factory=list)  # (key, item typed on, why): every
    # key not taken in this session, why a key of REFUSED
    said: int = 0  # how many of `refused` the page had said when it last drew the keys' component
    cleared: int = 0  # how many of `refused` are behind the user (labeled again since the page said them, dismissed)


def session(dataset: str, annotator: str) -> Session:
    """This browser session's labeling of `dataset` as `annotator`: a new one (its history the
    items the annotator labeled, oldest first) when either changed."""
    found, store = st.session_state.get(KEY), state.store()
    if found is None or (found.dataset, found.annotator, found.store) != (dataset, annotator, store):
        labels = store.labels(dataset, annotator)
        found = st.session_state[KEY] = Session(dataset, annotator, store, list(dict.fromkeys(labels["item_id"])))
    if KEYS_STATE not in st.session_state:  # the last run drew no keys (another page): what it said is left behind
        found.cleared = len(found.refused)
    return found


def others_line(store: geval.Store, dataset: str, aspect: str, annotator: str) -> str:
    """When others labeled `aspect` too: the page reads `annotator`'s labels alone, Agreement the mean of
    every annotator's on each item, so that their figures differ ("" when `annotator` is alone)."""
    labels = store.labels(dataset)
    others = sorted(set(labels.loc[labels["aspect"].str.lower() == aspect.lower(), "annotator"]) - {annotator})
    if not others:
        return ""
    whose = "your" if annotator == geval.labeling.DEFAULT_ANNOTATOR else f"{annotator}'s"
    return (f"The figures here read {whose} labels of {aspect} alone; the Agreement page compares the judge "
            f"with the mean of every annotator's labels of each item ({', '.join([annotator, *others])}), so its "
            "agreement differs from these.")


def key(item_id: str, name: str) -> str:
    """The widget key of `item_id`'s button `name` (an aspect's value, "next", "back", ...): its own
    for every item, so that a key typed on an item reaches the callback bound to that item."""
    return f"label_{item_id}_{name}"


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


def _typed_here(s: Session, item_id: str | None, key: str) -> bool:
    """Whether a key typed on `item_id` (None: on the page saying every item is labeled) applies: it is
    the item shown. Else the key is refused and counted, to be said on the page (`refusals`)."""
    if item_id == s.current:
        return True
    s.refused.append((key, item_id, "left"))
    return False


def refusals(s: Session) -> str:
    """The keys not taken in this session, counted, with why and the latest ones, while some are not
    behind the user yet ("" when all are: labeled again since the page said them, or dismissed)."""
    if len(s.refused) <= s.cleared:
        return ""
    counts: dict[str, int] = {}
    for _, _, why in s.refused:
        counts[why] = counts.get(why, 0) + 1
    reasons = REFUSED[next(iter(counts))][0] if len(counts) == 1 else \
        "; ".join(f"{n} {REFUSED[why][0]}" for why, n in counts.items())
    runs: list[tuple[str | None, str, list[str]]] = []  # the latest keys, a run per item and reason
    for typed, item_id, why in s.refused[max(s.cleared, len(s.refused) - LATEST):]:
        if runs and runs[-1][:2] == (item_id, why):
            runs[-1][2].append(typed)
        else:
            runs.append((item_id, why, [typed]))
    latest = "; ".join(f"{', '.join(keys)} on {f'item {item_id}' if item_id else 'the last page'} "
                       f"({REFUSED[why][1]})" for item_id, why, keys in runs)
    total = len(s.refused)
    return (f"{total} key{'s' if total != 1 else ''} not taken so far in this session: {reasons}. The latest: "
            f"{latest}. A key goes to the item shown as it is pressed" + (": the keys now go to this item."
                                                                          if s.current else "."))


def dismiss(s: Session) -> None:
    """The user has read the keys not taken that the page said: they are left behind."""
    s.cleared = max(s.cleared, s.said)


def rate(s: Session, item_id: str | None, aspect: str, score: int, seen: int | None = None) -> None:
    """Save `item_id`'s label of `aspect` at once, with the seconds since the item was shown (or its
    previous label); refused when the page has gone on to another item since the key or click. The keys
    not taken that the page had said as it was given (`seen`; a click: those it said last) are behind
    the user."""
    if not _typed_here(s, item_id, str(score)) or item_id is None:
        return
    now = time.time()
    previous = s.store.save_label(item_id, aspect, score, s.annotator, seconds=round(now - s.since, 2))
    s.undo.append((item_id, aspect, previous))
    s.since, s.note = now, f"Saved {aspect} = {score}."
    s.cleared = max(s.cleared, s.said if seen is None else min(seen, len(s.refused)))


def go_on(s: Session, item_id: str | None, aspects: tuple[str, ...], key: str = "Next") -> None:
    """Enter / → (`key`; a click: Next) typed on `item_id`: the next item seen after it, else the next
    one not labeled in the page's order, once every one of `aspects` of it has a label. An item still
    to label stays (s skips it), with a note, and the key counts as not taken: a digit lost on its way
    never leaves an item unlabeled unnoticed."""
    if not _typed_here(s, item_id, key) or item_id is None:
        return
    missing = [name for name in aspects if name.lower() not in _labeled(s, item_id)]
    if missing:
        s.note = f"No label of {', '.join(missing)} for this item yet: a digit gives it, s skips the item."
        s.refused.append((key, item_id, "unlabeled"))
        return
    _leave(s)


def _leave(s: Session) -> None:
    """Show the item seen after this one, else the next one not labeled in the page's order."""
    place = s.history.index(s.current) if s.current in s.history else len(s.history) - 1
    following = s.history[place + 1] if place + 1 < len(s.history) else next(
        (i for i in s.upcoming if i != s.current and i not in s.skipped and i not in s.history), None)
    show(s, following)
    s.note = ""


def back(s: Session, item_id: str | None) -> None:
    """← typed on `item_id` (None: on the page that says every item is labeled): the item seen before it."""
    if not _typed_here(s, item_id, "←"):
        return
    if not s.history:
        s.note = "Nothing labeled before this item yet."
        return
    place = s.history.index(s.current) if s.current in s.history else len(s.history)
    if place == 0:
        s.note = "This is the first item you saw."
        return
    show(s, s.history[place - 1])
    s.note = ""


def skip(s: Session, item_id: str | None) -> None:
    """s typed on `item_id`: leave it unlabeled and go on (it is offered again in a new session)."""
    if not _typed_here(s, item_id, "s") or item_id is None:
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
    show(s, item_id)
    s.since = time.time()
    s.note = f"Undone: {aspect} of this item " + (f"is {previous['score']:g} again." if previous else "is unlabeled.")


def scale_buttons(s: Session, item_id: str, aspect: geval.labeling.LabelAspect, given: float | None = None) -> None:
    """One button per value of `aspect`'s scale, for `item_id` (the mouse's way to rate; the digits are
    heard by `keyboard`), the value given primary."""
    for column, value in zip(st.columns(len(aspect.scale)), aspect.scale):
        column.button(str(value), key=key(item_id, f"{aspect.name}_{value}"), on_click=rate,
                      args=(s, item_id, aspect.name, value), type="primary" if given == value else "secondary",
                      width="stretch")


def nav_buttons(s: Session, item_id: str, names: tuple[str, ...], labeled: bool) -> None:
    """Back, Skip, Undo and Next for `item_id`, each named with its key."""
    st.button("Back ←", key=key(item_id, "back"), on_click=back, args=(s, item_id))
    st.button("Skip (s)", key=key(item_id, "skip"), on_click=skip, args=(s, item_id))
    st.button("Undo (u)", key="label_undo", on_click=undo, args=(s,))
    st.button("Next (Enter or →)", key=key(item_id, "next"), on_click=go_on, args=(s, item_id, names),
              type="primary" if labeled else "secondary")


_KEYS = st.components.v2.component("geval_label_keys", js=(Path(__file__).parent / "label_keys.js").read_text(),
                                   isolate_styles=False)
TAKEN = "label_keys_taken"  # the session key of the last key taken ({"seq": n}: changed in place, never set)


def keyboard(s: Session, line: str) -> None:
    """The item's line (`line`), drawn by the component that hears the keys: each key is sent with the
    item this line shows as it is pressed and the count of keys not taken the page says meanwhile
    (`take_keys` takes them on the next run). Drawn after that count (`refusals`)."""
    s.said = len(s.refused)
    _KEYS(key=KEYS_STATE, data={"item": s.current, "line": line, "done": _taken()["seq"], "seen": s.said},
          default={"log": []}, on_log_change=lambda: None)


def _taken() -> dict:
    return st.session_state.setdefault(TAKEN, {"seq": 0})


def take_keys(s: Session, aspects: list) -> bool:
    """Apply the keys typed since the last run, in the order typed, each to the item it was typed on
    (or refused when the session has left that item since): a digit rates the first aspect of the
    item still to label, Enter and → go on, ← goes back, s skips, u undoes. Whether any was taken."""
    log = (st.session_state.get(KEYS_STATE) or {}).get("log") or []
    taken = _taken()
    new = [entry for entry in log if entry["seq"] > taken["seq"]]
    if not new:
        return False
    taken["seq"] = max(entry["seq"] for entry in new)  # first: a rerun stopping this one takes none twice
    names = tuple(a.name for a in aspects)
    for entry in sorted(new, key=lambda entry: entry["seq"]):
        typed, item_id = entry["key"], entry["item"]
        if typed.isdigit():
            _rate_by_key(s, item_id, aspects, int(typed), entry.get("seen", 0))
        elif typed in ("Enter", "→"):
            go_on(s, item_id, names, typed)
        elif typed == "←":
            back(s, item_id)
        elif typed == "s":
            skip(s, item_id)
        elif typed == "u":
            undo(s)
    return True


def _rate_by_key(s: Session, item_id: str | None, aspects: list, value: int, seen: int) -> None:
    """A digit (pressed while the page said `seen` keys not taken): the first aspect of the item still
    to label gets it, when it is on that aspect's scale; else it counts as not taken."""
    if not _typed_here(s, item_id, str(value)) or item_id is None:
        return
    labeled = _labeled(s, item_id)
    aspect = next((a for a in aspects if a.name.lower() not in labeled), None)
    if aspect is None:
        s.note = f"This item is labeled: {value} changed nothing (u undoes the last label, a click changes one)."
        s.refused.append((str(value), item_id, "labeled"))
    elif value not in aspect.scale:
        s.note = f"{value} is not on the scale of {aspect.name} ({aspect.min}-{aspect.max}): nothing was saved."
        s.refused.append((str(value), item_id, "scale"))
    else:
        rate(s, item_id, aspect.name, value, seen)
