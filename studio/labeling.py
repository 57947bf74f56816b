"""The Label page's labeling unit: the display and the keys are one component (studio/label_unit/)
that holds the next items in the browser, shows one, takes its keys, shows the next one at once and
sends every label with its item's id in the background; this module is its server side.

Each run of the page (a fragment: a label reruns the unit's part of the page, not the choices above
it) first stores what the unit posted since the last run (`take`), in the order given, each change on
the item it names: a label always lands on the item whose text was on screen as its key was pressed,
whatever the server chose since. It then draws the unit (`draw`) with its answer: the highest change
taken ("acked"), those the store refused ("failed"), and the next items the engine's order chooses
now (`AHEAD` of them, not labeled and not skipped: an adaptive order is followed label by label), with
the items labeled last (`BEHIND`, for ← after a reload). The protocol (the component's state and data)
is described at the top of studio/label_unit/unit.js.

What the server keeps of the browser's session: the items skipped (offered again in a new session),
the changes taken (their seq, and the label each replaced, for an undo) and those refused. A reload
starts the browser's session again from the store: the next item not labeled, ← to the last labeled."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

import geval
from studio import state

KEY = "label_session"
POSTS = "label_posts"  # what the server took of the unit's changes (one per browser session, across datasets)
UNIT = "label_unit"  # the component's key; its state {"outbox": [...]}: the changes not answered yet
AHEAD = 20  # the items to label next sent to the browser: more than a fast annotator labels while the server
# answers on a loaded machine
BEHIND = 5  # the items labeled last sent with them (← after a reload)
KEPT = 200  # the changes taken whose replaced label is kept for an undo
RECENT_TURNS = 3  # the last turns shown in full; the earlier ones scroll in a box above them
HERE = Path(__file__).parent / "label_unit"
_UNIT = st.components.v2.component("geval_label_unit", js=(HERE / "unit.js").read_text(),
                                   css=(HERE / "unit.css").read_text(), isolate_styles=False)


@dataclass
class Session:
    """One annotator labeling one dataset in this browser session: the items skipped."""

    dataset: str
    annotator: str
    store: geval.Store
    skipped: set[str] = field(default_factory=set)


@dataclass
class Posts:
    """The unit's changes the server took: the last one's seq, the label each label replaced (for its
    undo: seq -> (item, aspect, annotator, label replaced or None)) and those the store refused."""

    acked: int = 0
    replaced: dict[int, tuple[str, str, str, dict | None]] = field(default_factory=dict)
    failed: list[dict] = field(default_factory=list)


def session(dataset: str, annotator: str) -> Session:
    """This browser session's labeling of `dataset` as `annotator`: a new one when either changed."""
    found, store = st.session_state.get(KEY), state.store()
    if found is None or (found.dataset, found.annotator, found.store) != (dataset, annotator, store):
        found = st.session_state[KEY] = Session(dataset, annotator, store)
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


# --- what the unit posted -------------------------------------------------------------------------


def take(s: Session) -> bool:
    """Store the changes the unit posted since the last run, in the order made, each on the item it
    names (a label, an undo, a skip); a change the store refuses is kept with why, for the unit to
    say. Whether any was new."""
    posts = st.session_state.setdefault(POSTS, Posts())
    outbox = (st.session_state.get(UNIT) or {}).get("outbox") or []
    new = sorted((op for op in outbox if isinstance(op, dict) and _seq(op) > posts.acked), key=_seq)
    for op in new:
        posts.acked = _seq(op)
        try:
            _apply(s, posts, op)
        except (geval.GevalError, KeyError, TypeError, ValueError) as exc:
            posts.failed = [*posts.failed, {"seq": _seq(op), "item": str(op.get("item")), "why": str(exc)}][-20:]
    return bool(new)


def _seq(op: dict) -> int:
    try:
        return int(op.get("seq", 0))
    except (TypeError, ValueError):
        return 0


def _apply(s: Session, posts: Posts, op: dict) -> None:
    """One change: a label saved at once (with the seconds it took), an undo putting back what its label
    replaced, a skip remembered for the session of its dataset and annotator."""
    kind, item = op["op"], str(op["item"])
    annotator = str(op.get("annotator") or s.annotator)
    if kind == "label":
        score = float(op["score"])
        if not math.isfinite(score):
            raise ValueError(f"score {op['score']!r} is not a number")
        seconds = op.get("seconds")
        previous = s.store.save_label(item, str(op["aspect"]), score, annotator,
                                      seconds=None if seconds is None else round(max(float(seconds), 0.0), 2))
        posts.replaced[_seq(op)] = (item, str(op["aspect"]), annotator, previous)
        for old in list(posts.replaced)[:-KEPT]:
            del posts.replaced[old]
    elif kind == "undo":
        item, aspect, annotator, previous = posts.replaced.pop(int(op["of"]), None) or (
            item, str(op["aspect"]), annotator, None if op.get("previous") is None else
            {"item_id": item, "aspect": str(op["aspect"]), "score": float(op["previous"]), "annotator": annotator})
        if previous is None:
            s.store.delete_label(item, aspect, annotator)
        else:
            s.store.save_labels([previous])
    elif kind == "skip":
        if (op.get("dataset"), annotator) == (s.dataset, s.annotator):
            s.skipped.add(item)
    else:
        raise ValueError(f"unknown change {kind!r}")


# --- what the unit is sent ------------------------------------------------------------------------


def shown_once_labeled(item, aspect: str, judged: geval.labeling.Features, people: list[str]) -> str:
    """What the page shows of `item` on `aspect` once labeled (or when not blind): the judge's score
    and the people's mean ("" when neither)."""
    parts = []
    score = judged.table[judged.judge].get(item.id) if judged.judge else None
    if score is not None and not pd.isna(score):
        parts.append(f"judge {geval.reporting.number(score, 2)} ({judged.scale[0]}-{judged.scale[1]})")
    own = next((h for h in people if h.lower() == aspect.lower()), None)
    if own and item.human.get(own):
        parts.append(f"people {geval.reporting.number(item.human_mean(own), 2)}")
    return " · ".join(parts)


def payload(item, place: int, aspects: list, mine: dict[str, pd.Series], done: set[str],
            judged_by: dict[str, geval.labeling.Features], people: list[str], system: str) -> dict:
    """One item as the unit shows it: its text, its place in the order, the annotator's labels of it
    (`mine`: by aspect, by item id) and whether it has all, what is shown once each aspect is labeled
    (`shown_once_labeled`), and its system's line."""
    earlier, recent = item.context[:-RECENT_TURNS], item.context[-RECENT_TURNS:]
    summary = item.level == "summary"
    return {"id": item.id, "place": place, "group": item.group or "", "earlier": [t.render() for t in earlier],
            "recent": [[t.speaker, t.text] for t in recent], "response": item.response, "grounding": item.grounding,
            "captions": {"response": "The summary:" if summary else "The response:",
                         "grounding": "The document:" if summary else "The grounding (fact or persona):"},
            "labels": {a.name: _number(mine[a.name][item.id]) for a in aspects if item.id in mine[a.name].index},
            "complete": item.id in done, "system": system,
            "shown": {a.name: shown_once_labeled(item, a.name, judged_by[a.name], people) for a in aspects}}


def _number(score: float) -> int | float:
    return int(score) if float(score).is_integer() else float(score)


def token(*choices: object) -> str:
    """The unit's session: a new one (the browser starts afresh) when any of `choices` changes."""
    return hashlib.sha1(json.dumps([str(c) for c in choices]).encode()).hexdigest()[:16]


def draw(s: Session, session_token: str, aspects: list, blind: bool, total: int, done: int, queue: list[str],
         history: list[str], items: list[dict]) -> None:
    """Draw the labeling unit with the server's answer: the changes taken and refused, the next items
    to label (`queue`, in order), the last labeled (`history`, oldest first) and their `items`."""
    posts = st.session_state.setdefault(POSTS, Posts())
    _UNIT(key=UNIT, default={"outbox": []}, on_outbox_change=lambda: None,
          data={"session": session_token, "dataset": s.dataset, "annotator": s.annotator,
                "aspects": [{"name": a.name, "min": a.min, "max": a.max} for a in aspects], "blind": bool(blind),
                "total": total, "done": done, "queue": queue, "history": history, "items": items,
                "acked": posts.acked, "failed": posts.failed})
