"""Annotation queues: a lead hands a team the items of a dataset to label, each item to several of
them, and reads their agreement as it forms (`geval.labeling.queues`).

A queue names a dataset, the aspects with their scales, which items (`SELECTIONS`: all, n at random,
n per system, where a label buys most), how many annotators see each item (`overlap`; 2 or more
gives agreement) and who. `assign` hands the items out so that every annotator's share differs by
at most one item and every pair of annotators shares about as many items as any other (each item
goes to the least loaded annotators, ties to the pair that shares fewest items so far, then drawn
at random). An annotator who joins late (`add_annotator`) takes over the items others have not
labeled yet, the items nobody labeled first, until the shares are level again.

An annotator reads their own queue only (`next_items`, `Store.queue_labels` of their own); what the
lead reads: `progress` (per annotator: done, labels per hour), `agreement` (Krippendorff's alpha and
the pairwise quadratic-weighted kappa with 95% intervals over groups, `geval.analysis.label_errors`),
`disagreements` (the items where people differ most, with their reasons side by side), `people_items`
(the queue's items with its labels as the human side, for the judge against the people), `export`.

A queue may require a reason (`REASON_RULES`) for a score at the scale's ends, or one that differs
by DIFFERS_BY or more from another label of the item (`reason_needed`: said without showing the others;
`reason_asked` reads the item's other labels on the server).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from geval.analysis.agreement import correlations, judge_scores
from geval.analysis.grouped import Estimate
from geval.analysis.label_errors import people_agreement
from geval.analysis.protocols import generic
from geval.data.items import Item
from geval.data.labels import with_labels
from geval.decisions.labeling import LabelAspect, uncertainty
from geval.errors import LabelError
from geval.store import Store

SELECTIONS = {"all": "every item", "random": "n items at random", "per_system": "n items of each system",
              "uncertain": "the n items where a label buys most (where the judge is least sure)"}
REASON_RULES = {"none": "a reason is welcome, never required",
                "ends": "a reason is required for a score at the scale's ends",
                "differs": "a reason is required for a score at the scale's ends, or 2 or more from another "
                           "label of the item"}
#: How far a label must be from another label of the item for the "differs" rule to ask for a reason.
DIFFERS_BY = 2
#: The timed labels an annotator's labels per hour are read from: from fewer, a pause or a quick first key would
#: make the rate (the page shows "–" and says why).
RATE_FROM = 10
RATE_NOTE = f"Labels per hour are read from {RATE_FROM} timed labels on: – until an annotator has given that many."


@dataclass(frozen=True)
class Queue:
    """A queue as stored (`Store.queue`): its aspects, how its items were chosen, its overlap and rule."""

    name: str
    dataset: str
    aspects: tuple[LabelAspect, ...]
    selection: dict
    overlap: int
    reasons: str
    created_by: str

    @classmethod
    def read(cls, store: Store, name: str) -> Queue:
        """The stored queue `name` (StoreError when there is none)."""
        row = store.queue(name)
        return cls(row["name"], row["dataset"], tuple(LabelAspect(*a) for a in row["aspects"]), row["selection"],
                   int(row["overlap"]), row["reasons"] or "none", row["created_by"] or "")

    def annotators(self, store: Store) -> list[str]:
        """Who labels in it, in the order of their names."""
        return sorted(set(store.assignments(self.name)["annotator"]))


def choose_items(items: list[Item], how: str, n: int = 0, seed: int = 0, spread: pd.Series | None = None) -> list[str]:
    """The ids of the items a queue holds, in the order they are labeled: all of them (seeded order),
    `n` at random, `n` of each system, or the `n` with the largest `spread` (the judge's uncertainty,
    `geval.labeling.uncertainty`). LabelError for an unknown way or a missing n."""
    if how not in SELECTIONS:
        raise LabelError(f"item selection {how!r} is unknown; use one of {', '.join(SELECTIONS)}")
    if how != "all" and n < 1:
        raise LabelError(f"'{how}' takes n, the number of items (n >= 1)")
    rng = np.random.default_rng(seed)
    ids = [item.id for item in items]
    shuffled = [ids[i] for i in rng.permutation(len(ids))]
    if how == "all":
        return shuffled
    if how == "random":
        return shuffled[:n]
    if how == "per_system":
        system = {item.id: item.system or "(no system)" for item in items}
        taken: Counter = Counter()
        chosen = []
        for item_id in shuffled:
            if taken[system[item_id]] < n:
                taken[system[item_id]] += 1
                chosen.append(item_id)
        return chosen
    if spread is None or spread.dropna().empty:
        raise LabelError("'uncertain' needs a judge's own uncertainty (a G-EVAL judge's distribution over scores) on "
                         "the queue's first aspect: score the dataset with such a judge first, or choose another way")
    known = spread.reindex(ids).dropna()
    ranked = sorted(known.index, key=lambda i: (-known[i], shuffled.index(i)))
    return ranked[:n]


def assign(item_ids: list[str], annotators: list[str], overlap: int, seed: int = 0) -> list[dict]:
    """Each item to `overlap` of `annotators`, balanced (module docstring): rows of item_id,
    annotator and position (the item's place in that annotator's queue)."""
    annotators = list(dict.fromkeys(annotators))
    if not annotators:
        raise LabelError("a queue needs at least one annotator")
    if not 1 <= overlap <= len(annotators):
        raise LabelError(f"overlap {overlap}: with one annotator named, each item goes to that one (overlap 1)"
                         if len(annotators) == 1 else f"overlap {overlap}: each item can go to 1 to {len(annotators)} "
                         f"of the {len(annotators)} annotators named")
    rng = np.random.default_rng(seed)
    load = Counter({a: 0 for a in annotators})
    shared: Counter = Counter()
    rows = []
    for item_id in item_ids:
        drawn = [annotators[i] for i in rng.permutation(len(annotators))]
        chosen: list[str] = []
        for _ in range(overlap):
            left = [a for a in drawn if a not in chosen]
            best = min(left, key=lambda a: (load[a], sum(shared[frozenset((a, c))] for c in chosen)))
            chosen.append(best)
        for a in chosen:
            rows.append({"item_id": item_id, "annotator": a, "position": load[a]})
            load[a] += 1
        shared.update(frozenset(pair) for pair in combinations(chosen, 2))
    return rows


def create(store: Store, name: str, dataset: str, aspects: list[LabelAspect], annotators: list[str], how: str = "all",
           n: int = 0, overlap: int = 2, reasons: str = "none", seed: int = 0, created_by: str = "",
           combo: tuple[str, str] | None = None) -> Queue:
    """Make and store a queue (module docstring); `combo`: the judge whose uncertainty "uncertain" reads.
    LabelError, before anything is stored, for a bad name, rule, selection or overlap."""
    name = name.strip()
    if not name or not name.isprintable():
        raise LabelError("a queue needs a name: one line of text")
    if reasons not in REASON_RULES:
        raise LabelError(f"reason rule {reasons!r} is unknown; use one of {', '.join(REASON_RULES)}")
    if not aspects:
        raise LabelError("a queue needs at least one aspect with its scale, e.g. Naturalness 1-3")
    items = store.items(dataset)
    if not items:
        raise LabelError(f"dataset {dataset!r} has no items in {store.path}; load it first")
    spread = uncertainty(store, dataset, aspects[0].name, combo) if how == "uncertain" else None
    chosen = choose_items(items, how, n, seed, spread)
    rows = assign(chosen, annotators, overlap, seed)
    store.save_queue({"name": name, "dataset": dataset, "aspects": [[a.name, a.min, a.max] for a in aspects],
                      "selection": {"how": how, "n": n, "seed": seed, "items": len(chosen)}, "overlap": overlap,
                      "reasons": reasons, "created_by": created_by}, rows)
    return Queue.read(store, name)


def _labeled(store: Store, queue: Queue, annotator: str | None = None) -> pd.DataFrame:
    """The queue's labels on its aspects (of one annotator)."""
    labels = store.queue_labels(queue.name, annotator)
    wanted = {a.name.lower() for a in queue.aspects}
    return labels[labels["aspect"].str.lower().isin(wanted)]


def _done(labels: pd.DataFrame, queue: Queue) -> set[tuple[str, str]]:
    """(item, annotator) pairs with every aspect of the queue labeled."""
    counts = labels.groupby(["item_id", "annotator"])["aspect"].nunique()
    return set(counts[counts >= len(queue.aspects)].index)


def add_annotator(store: Store, queue: Queue, annotator: str) -> int:
    """Let `annotator` join the queue late: they take over items others have not labeled yet (those
    nobody labeled first, from the most loaded annotators) until their share is level with the others'.
    Returns how many items they now have."""
    held = store.assignments(queue.name)
    if annotator in set(held["annotator"]):
        raise LabelError(f"{annotator} labels in queue {queue.name} already")
    labels = _labeled(store, queue)
    started = set(zip(labels["item_id"], labels["annotator"]))
    labeled_by = labels.groupby("item_id")["annotator"].nunique().to_dict()
    load = Counter(held["annotator"])
    target = len(held) // (len(load) + 1)
    on_item = held.groupby("item_id")["annotator"].apply(set).to_dict()
    free = held[[(i, a) not in started for i, a in zip(held["item_id"], held["annotator"])]]
    free = free.assign(others=[labeled_by.get(i, 0) for i in free["item_id"]])
    offered: dict[str, deque] = {}  # each annotator's items that may move, those nobody labeled first
    for row in free.sort_values(["others", "position", "item_id"]).itertuples():
        offered.setdefault(row.annotator, deque()).append(row.item_id)
    moved, taken = [], []
    while len(taken) < target:  # one item at a time from the most loaded annotator who has one to give
        for items in offered.values():
            while items and annotator in on_item[items[0]]:  # taken, or theirs already
                items.popleft()
        giving = [a for a, items in offered.items() if items and load[a] > target]
        if not giving:
            break
        most = max(giving, key=lambda a: load[a])  # the first of the most loaded, in the items' order
        load[most] -= 1
        moved.append((offered[most][0], most))
        taken.append(offered[most].popleft())
        on_item[taken[-1]].add(annotator)  # not taken twice (an item of two annotators)
    store.reassign(queue.name, moved, [{"item_id": i, "annotator": annotator, "position": p}
                                       for p, i in enumerate(taken)])
    return len(taken)


def next_items(store: Store, queue: Queue, annotator: str) -> list[str]:
    """The items of `annotator`'s queue they have not labeled on every aspect yet, in their order."""
    mine = store.assignments(queue.name, annotator)
    done = {item for item, _ in _done(_labeled(store, queue, annotator), queue)}
    return [item for item in mine["item_id"] if item not in done]


def reason_needed(queue: Queue, aspect: LabelAspect, score: float, others: list[float]) -> str:
    """Why a reason is required for `score` on `aspect` ("" when it is not): at the scale's ends, or
    (rule "differs") DIFFERS_BY or more from one of the item's `others` labels (never said which)."""
    if queue.reasons == "none":
        return ""
    if score in (aspect.min, aspect.max):
        return f"{score:g} is at an end of the scale ({aspect.min}-{aspect.max}): say why in a few words"
    if queue.reasons == "differs" and any(abs(score - other) >= DIFFERS_BY for other in others):
        return f"{score:g} differs from another annotator's label of this item by {DIFFERS_BY} or more: say why"
    return ""


def reason_asked(store: Store, queue: Queue, item_id: str, aspect: str, score: float, annotator: str) -> str:
    """Why `annotator`'s `score` of an item on the queue's `aspect` (by name) needs a reason ("" when it
    does not), the item's other labels read here, on the server (`reason_needed`). LabelError for an
    aspect the queue does not ask for."""
    found = next((a for a in queue.aspects if a.name.lower() == aspect.lower()), None)
    if found is None:
        raise LabelError(f"queue {queue.name} asks for {', '.join(a.name for a in queue.aspects)}, not {aspect!r}")
    if queue.reasons == "none":
        return ""
    return reason_needed(queue, found, score, others_scores(store, queue, item_id, found.name, annotator))


def others_scores(store: Store, queue: Queue, item_id: str, aspect: str, annotator: str) -> list[float]:
    """The other annotators' labels of an item on `aspect` (read on the server for `reason_needed`; never
    sent to an annotator's browser)."""
    labels = _labeled(store, queue)
    mask = (labels["item_id"] == item_id) & (labels["aspect"].str.lower() == aspect.lower()) \
        & (labels["annotator"] != annotator)
    return labels.loc[mask, "score"].astype(float).tolist()


def progress(store: Store, queue: Queue) -> pd.DataFrame:
    """A row per annotator: items assigned, done (every aspect labeled), labels given, labels per hour
    (over the seconds their labels took; NaN below `RATE_FROM` timed labels), with reasons, when they last labeled."""
    held = store.assignments(queue.name)
    labels = _labeled(store, queue)
    done = Counter(a for _, a in _done(labels, queue))
    rows = []
    for annotator, count in held["annotator"].value_counts().sort_index().items():
        mine = labels[labels["annotator"] == annotator]
        seconds = pd.to_numeric(mine["seconds"], errors="coerce").dropna()
        rate = 3600 * len(seconds) / seconds.sum() if len(seconds) >= RATE_FROM and seconds.sum() > 0 else math.nan
        rows.append({"annotator": annotator, "items": int(count), "done": int(done[annotator]),
                     "share done": done[annotator] / count, "labels": len(mine),
                     "labels per hour": rate, "with a reason": int((mine["reason"].fillna("") != "").sum()),
                     "last label": pd.to_datetime(mine["updated"].max(), unit="s") if len(mine) else pd.NaT})
    return pd.DataFrame(rows, columns=["annotator", "items", "done", "share done", "labels", "labels per hour",
                                       "with a reason", "last label"])


def people_items(store: Store, queue: Queue) -> list[Item]:
    """The queue's items, each with the queue's labels as its human side (annotators by name): what
    the agreement among people and the judge against the people read."""
    ids = set(store.assignments(queue.name)["item_id"])
    own = [item for item in store.items(queue.dataset) if item.id in ids]
    labels = _labeled(store, queue)
    return with_labels(own, labels.to_dict("records"), "you")


@dataclass
class Agreement:
    """How much a queue's annotators agree on one aspect: each pair's quadratic-weighted kappa, their
    mean, Krippendorff's alpha (ordinal), on the items two or more of them labeled."""

    aspect: str
    items: int
    pairs: pd.DataFrame
    kappa: Estimate
    alpha: Estimate


def agreement(store: Store, queue: Queue, aspect: LabelAspect, items: list[Item] | None = None) -> Agreement:
    """The queue's agreement on `aspect` (`people_items` read again unless given)."""
    items = people_items(store, queue) if items is None else items
    twice = [item for item in items if len(item.human.get(aspect.name, ())) >= 2]
    pairs, kappa, alpha = people_agreement(twice, aspect.name, aspect.min, aspect.max - aspect.min + 1)
    return Agreement(aspect.name, len(twice), pairs, kappa, alpha)


def disagreements(store: Store, queue: Queue, aspect: LabelAspect, top: int = 10) -> pd.DataFrame:
    """The `top` items where the annotators' labels of `aspect` differ most (largest range, then
    standard deviation; items where they all agree are not listed), each annotator's label with their
    reason side by side."""
    labels = _labeled(store, queue)
    labels = labels[labels["aspect"].str.lower() == aspect.name.lower()]
    rows = []
    for item_id, given in labels.groupby("item_id"):
        scores = given["score"].astype(float)
        if len(given) < 2 or scores.max() == scores.min():
            continue
        said = {a: f"{s:g}" + (f": {r}" if r else "") for a, s, r in
                zip(given["annotator"], scores, given["reason"].fillna(""))}
        rows.append({"item_id": item_id, "range": scores.max() - scores.min(), "spread": scores.std(ddof=0),
                     "labels": len(given), **said})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values(["range", "spread", "item_id"], ascending=[False, False, True]).head(top)


def export(store: Store, queue: Queue) -> pd.DataFrame:
    """The queue's labels: item, aspect, annotator, score, reason, when first and last given (ISO time),
    the seconds each took."""
    labels = _labeled(store, queue)
    frame = labels[["item_id", "aspect", "annotator", "score", "reason", "seconds"]].copy()
    for column in ("created", "updated"):
        frame[column] = pd.to_datetime(labels[column], unit="s").dt.strftime("%Y-%m-%dT%H:%M:%S")
    frame["reason"] = frame["reason"].fillna("")
    return frame


def judge_against_people(store: Store, queue: Queue, combo: tuple[str, str] | None = None,
                         items: list[Item] | None = None) -> pd.DataFrame:
    """A judge's agreement with the queue's people (the mean of their labels of each item), as the
    Agreement page's table reads it (`geval.agree`'s columns; item and group levels, 95% intervals
    over groups), on the queue's items labeled so far."""
    items = [i for i in (people_items(store, queue) if items is None else items)
             if any(i.human.get(a.name) for a in queue.aspects)]
    if not items:
        raise LabelError(f"nobody has labeled an item of queue {queue.name} yet")
    scored = judge_scores(store, queue.dataset, combo, items=items)
    return correlations(scored.scores, items, generic(("item", "group")), scored.humans)
