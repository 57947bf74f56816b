"""Pairs: two responses to one context and which of them people prefer. A pair is an `Item` with its
two sides in `Item.pair`; people's preferences are a categorical aspect whose categories are
PREFERENCES, MT-Bench's names (the first side, the second, a tie), each annotator's label stored as
its index. A pair is checked as it is made: two sides, two different responses, a known label
(`pair_item`, one line naming where); and pairs are made from a dataset of scored responses, each
pair of responses to one context (`pairs_from`), each annotator's preference read from their two
scores."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

from geval.data.items import Item, Pair, Turn, make_item
from geval.errors import DatasetError, shown

#: A preference's categories, in the order of their indexes: the first side, the second, a tie.
PREFERENCES = ("model_a", "model_b", "tie")
#: The human aspect of a file of pairs (MT-Bench's is the annotations layout's "label").
ASPECT = "preference"
#: The words a file may write each preference with (any case, spaces or dashes as underscores).
SPELLINGS = {
    "model_a": ("a", "model_a", "response_a", "first"),
    "model_b": ("b", "model_b", "response_b", "second"),
    "tie": ("tie", "draw", "equal", "tie_(bothbad)", "both_bad", "bothbad"),
}
_READS = {spelling: index for index, category in enumerate(PREFERENCES) for spelling in SPELLINGS[category]}


def preference_index(label: object, where: str) -> float:
    """The index in PREFERENCES of a preference written as A / B / tie (or a spelling of SPELLINGS);
    DatasetError naming `where` for any other."""
    key = str(label).strip().lower().replace(" ", "_").replace("-", "_") if label is not None else ""
    if key not in _READS:
        known = ", ".join(s for spellings in SPELLINGS.values() for s in spellings[:3])
        raise DatasetError(f"{where}: preference {shown(repr(label), 40)} is not A, B or tie (also read: {known})")
    return float(_READS[key])


def pair_text(pair: Pair, named: bool = True) -> str:
    """Both sides as people read them, one after the other ("Response A (gpt-4):\\n..."); not `named`: without
    the models' names, for a person labeling blind ("Response A:\\n...")."""
    def side(letter: str, system: str, response: str) -> str:
        return f"Response {letter}{f' ({system})' if system and named else ''}:\n{response}"
    return side("A", pair.system_a, pair.response_a) + "\n\n" + side("B", pair.system_b, pair.response_b)


def check_pair(pair: Pair, where: str) -> None:
    """DatasetError naming `where` for a pair with a side missing, or the same response on both sides."""
    for letter, response in (("A", pair.response_a), ("B", pair.response_b)):
        if not response.strip():
            raise DatasetError(f"{where}: response {letter} is missing; a pair needs both responses")
    if pair.response_a.strip() == pair.response_b.strip() and pair.turns_a == pair.turns_b:
        raise DatasetError(f"{where}: response A and response B are the same text; a pair compares two different "
                           "responses")


def pair_item(dataset: str, where: str, pair: Pair, context: Sequence[Turn] = (), grounding: str = "",
              group: str = "", preferences: dict[str, object] | None = None, aspect: str = ASPECT,
              source_id: str = "", response: str = "") -> Item:
    """One pair as an item, checked (`check_pair`, `preference_index`): `preferences` {annotator:
    label}, its human aspect `aspect`; `response` the text people read (default: `pair_text`)."""
    check_pair(pair, where)
    labels = {str(who): preference_index(label, where) for who, label in (preferences or {}).items()
              if label is not None and str(label).strip()}
    return make_item(dataset=dataset, level="turn", context=tuple(context), response=response or pair_text(pair),
                     grounding=grounding, group=group, human={aspect: tuple(labels.values())} if labels else {},
                     annotators={aspect: tuple(labels)} if labels else {}, source_id=source_id, pair=pair)


def preference_of(score_a: float, score_b: float) -> float:
    """One annotator's preference from their scores of the two sides: the higher one, a tie when equal."""
    return 2.0 if score_a == score_b else 0.0 if score_a > score_b else 1.0


def pairs_from(items: Sequence[Item], dataset: str, aspect: str, per_context: int | None = None,
               seed: int = 0) -> list[Item]:
    """Pairs of the responses to one context (items of one group with the same context and grounding):
    all of them, or `per_context` drawn (seeded) from each; each annotator who scored both sides on
    `aspect` prefers the one they scored higher (a tie when equal). The pair's systems are the
    responses' and its group theirs. DatasetError when no context has two responses."""
    if per_context is not None and per_context < 1:
        raise DatasetError(f"{dataset}: {per_context} pairs per context; ask for 1 or more (or every pair)")
    by_context: dict[tuple, list[Item]] = {}
    for item in items:
        if item.response and item.pair is None:
            by_context.setdefault((item.group, item.context, item.grounding), []).append(item)
    draw = random.Random(seed)
    made = []
    for (group, context, grounding), members in by_context.items():
        combos = list(itertools.combinations(members, 2))
        if per_context is not None and len(combos) > per_context:
            combos = draw.sample(combos, per_context)
        for a, b in combos:
            if a.response.strip() == b.response.strip():
                continue  # two systems gave the same text: nothing to prefer
            ratings_a, ratings_b = a.ratings(aspect), b.ratings(aspect)
            preferences = {who: PREFERENCES[int(preference_of(ratings_a[who], ratings_b[who]))]
                           for who in ratings_a if who in ratings_b
                           and math.isfinite(ratings_a[who]) and math.isfinite(ratings_b[who])}
            pair = Pair(a.response, b.response, a.system, b.system)  # grouped by their dialogue, the item's group
            made.append(pair_item(dataset, f"{dataset}: items {a.id} and {b.id}", pair, context, grounding, group,
                                  preferences))
    if not made:
        raise DatasetError(f"{dataset}: no context has two different responses to pair")
    return made
