"""Pairwise judging (kind = "pairwise"): which of two responses is better, asked in both orders.

Every pair is asked twice: order 1 shows the pair as it is ({{response_a}} first), order 2 with its
sides swapped (the second response shown as A). The judge answers A, B or tie, read from its
probabilities over those words where it gives them (the embedded judge's logits, OpenAI's
logprobs), else from sampled answers, as for scores. Each order's answer is stored as a part of the
aspect ("preference#order1", "#order2", its distribution over the positions it was asked in); the
aspect's judgment is the mean of the two distributions after order 2's is swapped back, on the
pair's own sides, and its label the most probable of them (A and B equally probable: a tie, as a
judge that flips with the order says nothing about the pair). Its categories are PREFERENCES,
MT-Bench's model_a / model_b / tie, so that it reads against people's preferences as any
categorical judge does (Zheng et al., "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena",
NeurIPS 2023: both orders, a win only when both agree)."""

from __future__ import annotations

from dataclasses import replace as with_fields

import numpy as np

from geval.data.items import Item
from geval.data.pairs import PREFERENCES
from geval.judging.aspects import Aspect
from geval.judging.judgment import AspectScore

KIND = "pairwise"
#: What the judge answers, in the order of PREFERENCES: the response shown first, the second, a tie.
ANSWERS = ("A", "B", "tie")
#: The placeholders that show a pair's sides (a pairwise template needs the A and B of one of the two rows).
SIDES = (("response_a", "response_b"), ("conversation_a", "conversation_b"))
#: The orders every pair is asked in: 1 as given, 2 with its sides swapped.
ORDERS = (1, 2)
#: The labels' indexes: the first side, the second, a tie.
FIRST, SECOND, TIE = range(3)


def aspect(name: str, human: str = "") -> Aspect:
    """A pairwise template's aspect: answered A, B or tie, its categories PREFERENCES (its name and
    human aspect checked as any aspect's: TemplateError)."""
    return with_fields(Aspect(name, 0, len(ANSWERS) - 1, human, labels=ANSWERS), categories=PREFERENCES)


def fill(item: Item, order: int) -> dict[str, str]:
    """The placeholders of `item`'s pair as order `order` shows them: {} for order 1 (the item's own),
    the sides swapped for order 2."""
    if order == 1 or item.pair is None:
        return {}
    fields = with_fields(item, pair=item.pair.swapped()).fields()
    return {name: fields[name] for names in SIDES for name in names}


def swapped(distribution: dict[int, float]) -> dict[int, float]:
    """An order-2 distribution on the pair's own sides: its A is the pair's B and the other way round."""
    return {SECOND if s == FIRST else FIRST if s == SECOND else s: p for s, p in distribution.items()}


def labels_of(probabilities) -> np.ndarray:
    """`label` of many distributions at once: (..., 3) probabilities of A, B and tie -> (...) labels."""
    p = np.asarray(probabilities, dtype=float)
    flip = (np.abs(p[..., FIRST] - p[..., SECOND]) <= 1e-9) & (p[..., FIRST] >= p[..., TIE])
    return np.where(flip, TIE, np.argmax(p, axis=-1))


def label(distribution: dict[int, float]) -> int:
    """The most probable of A, B and tie; A and B equally probable (and above the tie) read as a tie."""
    return int(labels_of([distribution.get(s, 0.0) for s in (FIRST, SECOND, TIE)]))


def combine(orders: list[AspectScore]) -> AspectScore:
    """The pair's judgment from its two orders' answers (order 1, order 2): the mean of their
    distributions after order 2's is swapped back, its score the index of its label."""
    first, second = orders[0].distribution, swapped(orders[1].distribution)
    mean = {s: (first.get(s, 0.0) + second.get(s, 0.0)) / 2 for s in (FIRST, SECOND, TIE)}
    return AspectScore(distribution=mean, score=float(label(mean)))
