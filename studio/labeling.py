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
starts the browser's session again from the store: the next item not labeled, ← to the last labeled.

A label may carry a reason (typed after its digit: Tab, the text, Enter), stored with it. My queue
labels a queue through the same unit (`queue_session`): the annotator is the signed-in identity (a
change naming another is refused, as is one on an item not in their queue), and the queue's rule
(`geval.labeling.queues.reason_asked`, decided here on the server from the item's other labels, which
never reach the browser) may ask for a reason: such a label is not stored, and the unit is answered
why ("asked") and holds the item until the reason is given."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

import geval
from studio import state

KEY = "label_session"
QUEUE_KEY = "queue_label_session"  # My queue's: its own, so that the Label page's never carries a queue's rules
POSTS = "label_posts"  # what the server took of the unit's changes (one per browser session, across datasets)
UNIT = "label_unit"  # the component's key; its state {"outbox": [...]}: the changes not answered yet
AHEAD = 20  # the items to label next sent to the browser: more than a fast annotator labels while the server
# answers on a loaded machine
BEHIND = 5  # the items labeled last sent with them (← after a reload)
KEPT = 200  # the changes taken whose replaced label is kept for an undo
RECENT_TURNS = 3  # the last turns shown in full; the earlier ones scroll in a box above them
REASON_CHARS = 500  # a reason's length at most
KEYS_HELP = ("A digit rates, Enter or → goes on once the item is labeled, ← goes back, s skips, u undoes; Tab "
             "after the digit reaches a box for your reason, and Enter there saves it with the label.")
HERE = Path(__file__).parent / "label_unit"
_UNIT = st.components.v2.component("geval_label_unit", js=(HERE / "unit.js").read_text(),
                                   css=(HERE / "unit.css").read_text(), isolate_styles=False)


@dataclass
class Session:
    """One annotator labeling one dataset in this browser session: the items skipped. For a queue (My
    queue), the queue and the items the annotator may label in it (their own): the annotator is then the
    signed-in identity, and the queue's rule says when a label needs a reason."""

    dataset: str
    annotator: str
    store: geval.Store
    skipped: set[str] = field(default_factory=set)
    queue: geval.labeling.queues.Queue | None = None
    mine: frozenset[str] = frozenset()


@dataclass
class Posts:
    """The unit's changes the server took: the last one's seq, the label each label replaced (for its
    undo: seq -> (item, aspect, annotator, label replaced or None), or None for a label not stored), those
    the store refused, and the labels not stored because the queue asks for a reason (with why)."""

    acked: int = 0
    replaced: dict[int, tuple[str, str, str, dict | None] | None] = field(default_factory=dict)
    failed: list[dict] = field(default_factory=list)
    asked: list[dict] = field(default_factory=list)


def session(dataset: str, annotator: str) -> Session:
    """This browser session's labeling of `dataset` as `annotator`: a new one when either changed."""
    found, store = st.session_state.get(KEY), state.store()
    if found is None or (found.dataset, found.annotator, found.store) != (dataset, annotator, store):
        found = st.session_state[KEY] = Session(dataset, annotator, store)
    return found


def queue_session(queue: geval.labeling.queues.Queue, annotator: str) -> Session:
    """This browser session's labeling of `queue` as `annotator`, the signed-in identity (a new one when
    either changed), with the items the queue holds for them now (a late joiner may have taken some)."""
    found, store = st.session_state.get(QUEUE_KEY), state.store()
    if found is None or (found.queue, found.annotator, found.store) != (queue, annotator, store):
        found = st.session_state[QUEUE_KEY] = Session(queue.dataset, annotator, store, queue=queue)
    found.mine = frozenset(store.assignments(queue.name, annotator)["item_id"])
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
    """One change: a label saved at once (with the seconds it took and its reason; in a queue, not
    stored when its rule asks for a reason it lacks, and said why), an undo putting back what its label
    replaced, a skip remembered for the session of its dataset and annotator."""
    kind, item = op["op"], str(op["item"])
    annotator = _annotator(s, op, item)
    if kind == "label":
        score, aspect, reason = float(op["score"]), str(op["aspect"]), op.get("reason")
        if not math.isfinite(score):
            raise ValueError(f"score {op['score']!r} is not a number")
        reason = None if reason is None else str(reason).strip()[:REASON_CHARS]
        why = geval.labeling.queues.reason_asked(s.store, s.queue, item, aspect, score, annotator) \
            if s.queue is not None else ""  # (an aspect the queue does not ask for: refused, with why)
        if why and not reason:
            posts.asked = [*posts.asked, {"seq": _seq(op), "item": item, "aspect": aspect, "score": _number(score),
                                          "why": why}][-20:]
            posts.replaced[_seq(op)] = None  # not stored: its undo has nothing to put back
            return
        seconds = op.get("seconds")
        previous = s.store.save_label(item, aspect, score, annotator, reason=reason,
                                      seconds=None if seconds is None else round(max(float(seconds), 0.0), 2))
        posts.replaced[_seq(op)] = (item, aspect, annotator, previous)
        for old in list(posts.replaced)[:-KEPT]:
            del posts.replaced[old]
    elif kind == "undo":
        if posts.replaced.get(int(op["of"]), ()) is None:  # a label not stored (its queue asked for a reason)
            del posts.replaced[int(op["of"])]
            return
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


def _annotator(s: Session, op: dict, item: str) -> str:
    """Whose change `op` is: the annotator it names (the Label page's, as the unit was given it); in a
    queue the signed-in identity, a change naming another or an item not in their queue refused."""
    named = str(op.get("annotator") or s.annotator)
    if s.queue is None:
        return named
    if named != s.annotator:
        raise ValueError(f"the change names annotator {named}, but you are signed in as {s.annotator}: not stored")
    if item not in s.mine:
        raise ValueError(f"item {item} is not in your queue {s.queue.name}: not stored")
    return s.annotator


# --- what the unit is sent ------------------------------------------------------------------------


def shown_once_labeled(item, aspect: str, judged: geval.labeling.Features, people: list[str],
                       chosen: str | None = None, words: Sequence[str] = ()) -> str:
    """What the page shows of `item` on `aspect` once labeled (or when not blind): the judge's score
    and the people's mean ("" when neither); on a categorical aspect (its `words`), the judge's nearest
    label and the people's labels in words, never a mean of their codes. The judge's template named where it
    is not the one `chosen` in the menu (that one scores another aspect)."""
    parts = []
    score = judged.table[judged.judge].get(item.id) if judged.judge else None
    if score is not None and not pd.isna(score):
        whose = judged.sources[judged.judge][0] if judged.judge in judged.sources else chosen
        named = f", {whose.split('@')[0]}" if whose != chosen else ""
        if words:
            nearest = geval.labeling.as_labels(pd.Series([float(score)]), judged.scale, len(words)).iloc[0]
            parts.append(f"judge {geval.reporting.category_word(nearest, words)}{f' ({named[2:]})' if named else ''}")
        else:
            parts.append(f"judge {geval.reporting.number(score, 2)} ({judged.scale[0]}-{judged.scale[1]}{named})")
    own = next((h for h in people if h.lower() == aspect.lower()), None)
    if own and item.human.get(own):
        parts.append(f"people {geval.reporting.labels_in_words(item.human[own], words)}" if words else
                     f"people {geval.reporting.number(item.human_mean(own), 2)}")
    return " · ".join(parts)


def words_of(aspect, categories: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """A labeled aspect's categories in words, one per digit of its scale ((): scored with numbers)."""
    found = geval.reporting.aspect_words(categories, aspect.name)
    return found if len(found) == aspect.max - aspect.min + 1 else ()


def given_labels(labels: pd.DataFrame, aspects: list) -> dict[str, dict[str, tuple[float, str]]]:
    """An annotator's `labels` (`Store.labels`' columns) of `aspects` (matched in any case), by item id and
    aspect name: (score, reason)."""
    names = {a.name.lower(): a.name for a in aspects}
    given: dict[str, dict[str, tuple[float, str]]] = {}
    for item_id, aspect, score, reason in zip(labels["item_id"], labels["aspect"], labels["score"],
                                              labels["reason"].fillna("")):
        if aspect.lower() in names:
            given.setdefault(item_id, {})[names[aspect.lower()]] = (float(score), str(reason))
    return given


def payload(item, place: int, given: dict[str, tuple[float, str]], complete: bool, shown: dict[str, str],
            system: str = "", blind: bool = False) -> dict:
    """One item as the unit shows it: its text, its place in the order, the annotator's labels of it and
    their reasons (`given`: by aspect, (score, reason)) and whether it has all, what is shown once each
    aspect is labeled (`shown`: by aspect; `shown_once_labeled`, nothing for a blind queue), and its
    system's line. `blind`: a pair's two responses without the names of the models that wrote them."""
    earlier, recent = item.context[:-RECENT_TURNS], item.context[-RECENT_TURNS:]
    response = geval.labeling.blind_text(item) if blind else item.response
    summary = item.level == "summary"
    return {"id": item.id, "place": place, "group": item.group or "", "earlier": [t.render() for t in earlier],
            "recent": [[t.speaker, t.text] for t in recent], "response": response, "grounding": item.grounding,
            "captions": {"response": "The summary:" if summary else "The response:",
                         "grounding": "The document:" if summary else "The grounding (fact or persona):"},
            "labels": {name: _number(score) for name, (score, _) in given.items()},
            "reasons": {name: reason for name, (_, reason) in given.items() if reason},
            "complete": complete, "system": system, "shown": shown}


def _number(score: float) -> int | float:
    return int(score) if float(score).is_integer() else float(score)


def token(*choices: object) -> str:
    """The unit's session: a new one (the browser starts afresh) when any of `choices` changes."""
    return hashlib.sha1(json.dumps([str(c) for c in choices]).encode()).hexdigest()[:16]


def draw(s: Session, session_token: str, aspects: list, blind: bool, total: int, done: int, queue: list[str],
         history: list[str], items: list[dict], categories: dict[str, tuple[str, ...]] | None = None) -> None:
    """Draw the labeling unit with the server's answer: the changes taken, refused and asked for a reason,
    the next items to label (`queue`, in order), the last labeled (`history`, oldest first) and their
    `items`. In a queue, each aspect carries the scores its rule asks a reason for on any item (the
    scale's ends: the unit holds such a label at once), and "verdict" says the server decides others
    from the item's other labels (the unit waits for its answer before going on from a label without a
    reason). `categories`: the dataset's categorical aspects, whose digits the unit shows with their words."""
    posts = st.session_state.setdefault(POSTS, Posts())
    rule = s.queue.reasons if s.queue is not None else "none"
    _UNIT(key=UNIT, default={"outbox": []}, on_outbox_change=lambda: None,
          data={"session": session_token, "dataset": s.dataset, "annotator": s.annotator,
                "aspects": [{"name": a.name, "min": a.min, "max": a.max, **_words(a, categories or {}),
                             **_asked_at_ends(s, a)} for a in aspects],
                "blind": bool(blind), "verdict": rule == "differs", "reasonChars": REASON_CHARS,
                "total": total, "done": done, "queue": queue, "history": history, "items": items,
                "acked": posts.acked, "failed": posts.failed, "asked": posts.asked})


def _words(aspect, categories: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """A categorical aspect's "words" for the unit (nothing for one scored with numbers)."""
    words = words_of(aspect, categories)
    return {"words": list(words)} if words else {}


def _asked_at_ends(s: Session, aspect) -> dict[str, dict[str, str]]:
    """In a queue, "ask": the scores of `aspect` its rule asks a reason for whatever the item's other labels
    (its scale's ends), with why; nothing on the Label page."""
    if s.queue is None:
        return {}
    return {"ask": {str(v): why for v in aspect.scale
                    if (why := geval.labeling.queues.reason_needed(s.queue, aspect, v, []))}}
