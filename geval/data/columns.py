"""A list of items as columns (numpy arrays, one value per item, in the list's order), made once
per list and kept: what the analyses read instead of walking a million Item objects each time.

`columns(items)` gives the same `ItemColumns` for any list of the same Item objects in the same
order (a store's `items()` gives a new list of the same objects on every call): the columns of the
KEPT lists asked for last are kept. Every column is what the Item's own accessors give, in the same
arithmetic (a human mean is `Item.human_mean`'s sum over the count), so that a figure read from the
columns is the figure read item by item.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import chain
from threading import Lock, RLock

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from geval.data.items import Item, named, positional

#: Lists of items whose columns are kept (the dataset's items, the items a table reads, ...).
KEPT = 6
#: Indexes whose positions in the items are kept (`ItemColumns.positions`).
PLACED = 8


class ItemColumns:
    """The columns of one list of items (see the module's docstring). Each per-aspect column is made
    the first time it is asked for."""

    def __init__(self, items: Sequence[Item]):
        self.items = list(items)  # held: the columns are the columns of these very objects
        self.ids = np.array([item.id for item in self.items], dtype=object)
        self.index = pd.Index(self.ids, dtype=object)
        self.group_ids = np.array([item.group for item in self.items], dtype=object)  # "" where there is none
        self.groups = np.array([item.group or item.id for item in self.items], dtype=object)  # else the item's own
        self.systems = np.array([item.system for item in self.items], dtype=object)
        self.levels = np.array([item.level for item in self.items], dtype=object)
        self._made: dict[tuple, object] = {}
        self._placed: list[tuple[object, np.ndarray]] = []  # (an index's values, their positions), newest first
        self._lock = RLock()  # a column may be made of another

    def __len__(self) -> int:
        return len(self.items)

    def _memo(self, key: tuple, make: Callable[[], object]):
        with self._lock:
            if key not in self._made:
                self._made[key] = make()
            return self._made[key]

    def positions(self, ids) -> np.ndarray:
        """Where each of `ids` is in the list (-1 for an id that is no item of it; the last of an id the
        list holds twice, as a dict by id keeps it). For an Index, kept for the next call with an index of
        the same values (a table's shallow copies share them), read-only."""
        held = ids.array if isinstance(ids, pd.Index) else None
        with self._lock:
            found = next((where for values, where in self._placed if values is held), None) if held is not None \
                else None
        if found is not None:
            return found
        if len(ids) == len(self.index) and self.unique and self.index.equals(pd.Index(ids)):
            found = np.arange(len(ids))  # the items' own ids in their order (as a rule): compared at once
        elif self.unique:
            found = self.index.get_indexer(ids)
        else:
            last = self._memo(("last",), lambda: {item_id: i for i, item_id in enumerate(self.ids.tolist())})
            found = np.fromiter((last.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
        if held is not None:
            found.flags.writeable = False
            with self._lock:
                self._placed = [(held, found), *self._placed[:PLACED - 1]]
        return found

    def placed(self, scores: pd.Series) -> np.ndarray:
        """`scores` (by item id) at the items' places, in their order, NaN for an item without one: read by
        place (`positions`: a table of the items' own ids in their order is compared at once, with no lookup
        table of the ids built)."""
        at = self.positions(scores.index)
        values = np.full(len(self), math.nan)
        values[at[at >= 0]] = scores.to_numpy(float)[at >= 0]
        return values

    @property
    def unique(self) -> bool:
        """Whether no id is held twice: found once, without the lookup table of the index (`positions` makes it
        only for ids in another order: a million ids' is 32 MB, kept as long as the index)."""
        return self._memo(("unique",), lambda: len(pd.unique(self.ids)) == len(self.ids))

    def first_seen(self, column: str) -> list:
        """The distinct values of a column ("levels", "group_ids", "systems", ...), in first-seen order."""
        return self._memo(("first seen", column), lambda: pd.unique(self.counted(column)).tolist())

    def counted(self, column: str):
        """A column of strings held here to count, code or sort: `strings(column)` when none is missing (Arrow
        finds the same distinct values in the same first-seen order, and sorts by code point as Python does,
        without a million Python strings hashed or compared), else the objects themselves (a None kept as it is)."""
        strings = self.strings(column)
        return getattr(self, column) if strings.isna().any() else strings

    def _distinct(self) -> tuple[ItemColumns, np.ndarray] | None:
        """The first item of each distinct pair of human scores and annotators (by object: the items a store reads
        together share equal ones, `Item.from_rows`) as columns of their own, and which of them each item's pair is;
        None when fewer than half the items share theirs. A human column is then made over the distinct ones and
        spread to every item: the same values in the same first-seen orders (a score's or an annotator's first
        sight is an item's whose pair is seen there first), not a million items' dicts walked."""
        def make() -> tuple[ItemColumns, np.ndarray] | None:
            humans, _ = pd.factorize(np.fromiter((id(item.human) for item in self.items), np.uint64, len(self.items)))
            named, _ = pd.factorize(np.fromiter((id(item.annotators) for item in self.items), np.uint64,
                                                len(self.items)))
            codes, _ = pd.factorize(humans * (int(named.max(initial=0)) + 1) + named)
            firsts = np.unique(codes, return_index=True)[1]  # by code: in first-seen order
            if not len(self.items) or len(firsts) > len(self.items) // 2:
                return None
            return ItemColumns([self.items[i] for i in firsts.tolist()]), codes
        return self._memo(("distinct",), make)

    def _spread(self, make: Callable[[ItemColumns], object], spread: Callable[[object, np.ndarray], object]):
        """`make(self)`, or `spread(make(distinct), codes)` when the items share their human scores (`_distinct`)."""
        distinct = self._distinct()
        return make(self) if distinct is None else spread(make(distinct[0]), distinct[1])

    @property
    def human_aspects(self) -> list[str]:
        """Every human aspect of the items, in first-seen order."""
        return self._memo(("aspects",), lambda: self._spread(
            lambda of: list(dict.fromkeys(a for item in of.items for a in item.human)), lambda found, _: found))

    @property
    def annotators(self) -> list[str]:
        """Every annotator who scored an item, by id, in first-seen order (items in order, each item's
        aspects and `Item.ratings` in theirs)."""
        def make(of: ItemColumns) -> list[str]:
            if not any(item.annotators for item in of.items):  # "#1" ... "#k": the k-th score of an item
                return list(positional(max((len(s) for item in of.items for s in item.human.values()), default=0)))
            return list(dict.fromkeys(who for item in of.items for aspect in item.human
                                      for who in item.ratings(aspect)))
        return self._memo(("annotators",), lambda: self._spread(make, lambda found, _: found))

    def mean(self, aspect: str) -> np.ndarray:
        """Each item's `Item.human_mean` of `aspect` (NaN where it has no score): its scores added in
        their order, over their count."""
        def make() -> np.ndarray:
            counts, by_position = self._by_position(aspect)
            total = np.zeros(len(self.items))
            for k, scores in enumerate(by_position):
                total = np.where(counts > k, total + scores, total)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(counts > 0, total / counts, math.nan)
        return self._memo(("mean", aspect), make)

    def _scores(self, aspect: str) -> list:
        """Every score of `aspect`, item by item, each item's in its order (as given: int, float or None)."""
        return self._memo(("scores", aspect),
                          lambda: list(chain.from_iterable(item.human.get(aspect, ()) for item in self.items)))

    def _by_position(self, aspect: str) -> tuple[np.ndarray, np.ndarray]:
        """How many scores of `aspect` each item has, and its k-th score in row k (positions x items; NaN
        where it has none, None read as NaN)."""
        def make(of: ItemColumns) -> tuple[np.ndarray, np.ndarray]:
            counts = of.rated(aspect)
            flat = np.array(of._scores(aspect), dtype=float)
            starts = np.cumsum(counts) - counts
            matrix = np.full((int(counts.max(initial=0)), len(of.items)), np.nan)
            for k in range(len(matrix)):
                given = np.flatnonzero(counts > k)
                matrix[k, given] = flat[starts[given] + k]
            return counts, matrix

        def spread(found: tuple[np.ndarray, np.ndarray], codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return found[0][codes], found[1][:, codes]
        counts, matrix = self._memo(("by position", aspect), lambda: self._spread(make, spread))
        matrix.flags.writeable = False
        return counts, matrix

    def scored(self, aspect: str) -> np.ndarray:
        """Whether each item has a score of `aspect` (`item.human.get(aspect)` is not empty)."""
        return self._memo(("scored", aspect), lambda: self.rated(aspect) > 0)

    def range(self, aspect: str) -> tuple[float, float] | None:
        """The lowest and highest finite score any annotator gave `aspect` (None when there is none)."""
        def make(of: ItemColumns) -> tuple[float, float] | None:
            every = of._scores(aspect)
            finite = np.isfinite(np.array(every, dtype=float))  # None read as NaN
            seen = every if finite.all() else [s for s, keep in zip(every, finite.tolist()) if keep]
            return (min(seen), max(seen)) if seen else None  # the scores as given (an int stays one)
        return self._memo(("range", aspect), lambda: self._spread(make, lambda found, _: found))

    def matched(self, scores: pd.Series, aspect: str) -> tuple[pd.Index, np.ndarray, np.ndarray]:
        """Of `scores` (by item id, in their order), those given (not NaN) whose item people scored on
        `aspect`: their ids, their items' positions here, and the scores (read, never changed: `scores`' own
        index and values when every one is kept)."""
        values = scores.to_numpy(float)
        where = self.positions(scores.index)  # of the whole index: kept for the next call with the same one
        keep = ~np.isnan(values) & (where >= 0)
        keep[keep] = self.scored(aspect)[where[keep]]
        if keep.all():  # every one (as a rule): the index and arrays themselves, not copies of them
            return scores.index, where, values
        return scores.index[keep], where[keep], values[keep]

    def rated(self, aspect: str) -> np.ndarray:
        """How many scores of `aspect` each item has."""
        return self._memo(("rated", aspect), lambda: self._spread(
            lambda of: np.fromiter((len(item.human.get(aspect, ())) for item in of.items), dtype=np.int64,
                                   count=len(of.items)),
            lambda found, codes: found[codes]))

    def named(self, aspect: str) -> bool:
        """Whether an item names the annotators of `aspect` (else each item's are "#1", "#2", ...: by position)."""
        return self._memo(("named", aspect), lambda: self._spread(
            lambda of: any(aspect in item.annotators for item in of.items), lambda found, _: found))

    def ratings(self, aspect: str) -> tuple[list[str], np.ndarray]:
        """The annotators of `aspect` by id in first-seen order (`Item.ratings`), and their scores as an
        annotators x items array (NaN where one did not score an item)."""
        def make(of: ItemColumns) -> tuple[list[str], np.ndarray]:
            if not of.named(aspect):  # "#1", "#2", ...: by position
                matrix = of._by_position(aspect)[1]
                return list(positional(len(matrix))), matrix
            rated = [item.ratings(aspect) for item in of.items]
            who = list(dict.fromkeys(name for ratings in rated for name in ratings))
            matrix = np.full((len(who), len(of.items)), np.nan)
            row = {name: index for index, name in enumerate(who)}
            for column, ratings in enumerate(rated):
                for name, score in ratings.items():
                    matrix[row[name], column] = score
            return who, matrix
        who, matrix = self._memo(("ratings", aspect), lambda: self._spread(
            make, lambda found, codes: (found[0], found[1][:, codes])))
        matrix.flags.writeable = False
        return who, matrix

    def ratings_of(self, aspect: str, chosen: np.ndarray) -> tuple[list[str], np.ndarray]:
        """`ratings` of the items at the positions `chosen` (in that order) as if they were the list: the
        annotators who scored one of them, in first-seen order among them, and their scores."""
        names, matrix = self.ratings(aspect)
        if named(names):  # named annotators: their first-seen order depends on these items
            return ItemColumns([self.items[i] for i in chosen.tolist()]).ratings(aspect)
        count = int(self.rated(aspect)[chosen].max(initial=0))  # "#1" ... "#count" scored one of them
        return names[:count], matrix[:count, chosen]

    def table_column(self, name: str, values: Callable[[], Sequence]) -> ExtensionArray:
        """A column of the items (`values()`, one per item, e.g. their systems or responses) as a table's
        column holds it (strings as pandas' str), made once under `name`: a table's rows take from it by
        their items' places instead of converting a million strings again."""
        return self._memo(("table column", name), lambda: pd.Series(values()).array)

    def strings(self, column: str) -> ExtensionArray:
        """One of the columns of strings held here ("systems", "groups", "group_ids", "levels") as a table's
        column holds it (`table_column`): a table of every item takes it without converting a million strings."""
        return self.table_column(column, lambda: getattr(self, column))

    def table_column_at(self, name: str, values: Callable[[], Sequence], places: np.ndarray) -> ExtensionArray:
        """`table_column(name, values)` at the items' `places`: the column itself, not a copy, when they are
        every item in order (a table of one judgment per item)."""
        return at_places(self.table_column(name, values), places)

    def memo(self, key: tuple, make: Callable[[], object]):
        """`make()`, made once for these items under `key` (a column another module reads, e.g. the
        responses' lengths)."""
        return self._memo(("other", *key), make)


def at_places(column: np.ndarray | ExtensionArray, places: np.ndarray) -> np.ndarray | ExtensionArray:
    """A column of the items (read, never changed) at the items' `places`: the column itself, not a copy, when they
    are every item in order (as a rule: a million items' column is 8 MB and more), an array read-only then (a
    table made of it without a copy cannot change the items' own column)."""
    every = len(places) == len(column) and bool((places == np.arange(len(column))).all())
    if not every:
        return column.take(places)
    if isinstance(column, np.ndarray) and column.flags.writeable:
        column = column.view()
        column.flags.writeable = False
    return column


_kept: OrderedDict[tuple, ItemColumns] = OrderedDict()  # (length, first object's id, last's) -> columns
_kept_lock = Lock()


def columns(items: Sequence[Item]) -> ItemColumns:
    """The columns of `items` (made once for a list of the same objects in the same order: the kept
    columns hold their items, so that no other object takes one of their ids meanwhile)."""
    shared = getattr(items, "shared", None)
    found = shared.get("columns") if shared is not None else None
    if found is not None and len(found.items) == len(items) and (not items or (
            found.items[0] is items[0] and found.items[-1] is items[-1])):
        return found
    made = _kept_columns(items)  # a plain list of the same objects (a filter that kept them all) shares them too
    if shared is not None:
        shared["columns"] = made
    return made


def _kept_columns(items: Sequence[Item]) -> ItemColumns:
    """The columns kept for a list of these very objects in this order, else made and kept (the last KEPT): found
    by the list's length and its first and last objects, then checked object by object (a million items' in
    tens of milliseconds, where an array of their ids took a tenth of a second at each call)."""
    key = (len(items), id(items[0]), id(items[-1])) if len(items) else (0,)
    with _kept_lock:
        found = _kept.get(key)
        if found is not None and all(map(operator.is_, found.items, items)):
            _kept.move_to_end(key)
            return found
    made = ItemColumns(items)
    with _kept_lock:
        _kept[key] = made
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return made
