"""How many items does the alternative annotator test need? A study like the data's, drawn many
times at each size; the chance to pass is the share of drawn studies in which the test passes
(`alttest.alt_test`'s rule, vectorized here: the same alignments, each annotator's t-test over its
items or, where the items come in groups, over its groups (`alttest_groups`), Benjamini-Yekutieli
and winning rate; annotators with fewer than 30 items of a study, or 10 groups, not tested).

- **A judge scored on the data** (and three annotators or more): its items, or its groups where a
  group holds several of them (a document's summaries, a dialogue's responses), are drawn with
  replacement, each with who labeled it, the people's labels and the judge's own score: the
  design (how many items each annotator labels, who overlaps with whom) and the judge's real
  behaviour (its offset from the people, label by label) are the data's, not a model's.
- **No judge yet, or fewer than three annotators**: the paper's appendix C model (Calderon,
  Reichart & Dror, ACL 2025): each item has a true label drawn from the labels' frequencies; an
  annotator gives it with probability 1 - eta, else a label drawn from the same frequencies,
  eta chosen so that two annotators agree exactly as often as the data's do. The items' designs
  (who labels each) are drawn from the data's; with fewer than three annotators a third one like
  them is assumed and all three label every item; where the data's items come in groups, the
  drawn items are put in groups of the data's mean size for the test (without a group's shared
  offset). The judge is an annotator like the others, or, when one is scored, gives a label drawn
  from its own labels where a person gave that label.

No plan is made from fewer than `MIN_SHARED` items two annotators share, nor for a judge the test
cannot pass however many items it is given, read on the test's own quantity: each annotator's
advantage over the judge on the data (the share of items the person wins less the share the judge
wins, a tie counting for both), which the test passes an annotator for only where it is below
epsilon, and the judge only for half of them or more. The plan's chance, checked on documents it
was not made from, errs by about SPLIT_HALF_ERROR (docs/statistics.md, "Checked on data it was not
made from"): the sentence says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import isotonic_regression

from geval.data.columns import ItemColumns
from geval.data.items import Item, named
from geval.decisions.alttest_groups import FDR, MIN_GROUPS, cr2_p, rejected

#: The chance a planned study should give the test.
TARGET = 0.8
#: The study sizes tried, in items.
SIZES = (*range(30, 301, 10), *range(350, 1001, 50))
#: No plan from fewer items two annotators share (and the judge scored); a rough one when an annotator
#: the planned study tests has fewer than `FIRM` items in the data, or the data has fewer than
#: `MIN_GROUPS` groups to draw.
MIN_SHARED, FIRM = 10, 30
#: At most this many numbers in one drawn block (runs x items x annotators), to bound memory.
BLOCK = 2_000_000
#: How far the plan's chance was from the real pass rate on documents it was not made from: the mean
#: absolute difference over the plans made for SummEval's judges and aspects, each from half the
#: documents and checked on the other half, 10 splits (bench/alttest_plan.py --split-half; docs/statistics.md).
SPLIT_HALF_ERROR = 0.20


@dataclass
class Plan:
    """The chance to pass by number of items, for a study of `annotators` annotators whose labels
    agree exactly `agreement` of the time (the judge with an annotator: `judge_agreement`), at
    `epsilon` and `alignment`, each annotator's t-test taken `by` its items or its groups; `runs`
    drawn studies per size. `resampled`: the data's items (or its `groups`) drawn with their labels
    and the judge's scores; else the appendix C model (`crossed`: a third annotator assumed, every
    annotator labeling every item). `reason`: why there is no plan (then no sizes)."""

    annotators: int
    agreement: float
    judge_agreement: float
    judge_known: bool
    epsilon: float
    alignment: str
    sizes: list[int] = field(default_factory=list)
    chances: list[float] = field(default_factory=list)
    runs: int = 0
    items: int = 0  # the items it rests on: two annotators or more (and the judge's score, with a judge)
    advantage: float = math.nan  # the judge's advantage probability on them
    chance_advantage: float = math.nan  # that of labels drawn at random from the people's label shares
    per_item: float = 0.0  # annotators per item, on those items
    resampled: bool = False
    groups: int = 0  # the data's groups, drawn whole (0: its items are drawn one by one)
    crossed: bool = False
    thinnest: int = FIRM  # the fewest items in the data of an annotator the planned study tests
    by: str = "items"  # what each annotator's t-test takes as independent: items, or groups
    reason: str = ""
    fdr: str = "by"  # the step-up procedure across annotators (alttest_groups.FDR)
    ahead: list[float] = field(default_factory=list)  # each tested annotator's advantage over the judge on the data

    def items_for(self, chance: float = TARGET) -> int | None:
        """The fewest items (of `sizes`) with at least `chance` to pass, None when no size reaches it."""
        return next((n for n, c in zip(self.sizes, self.chances) if c >= chance), None)

    def chance_at(self, items: int) -> float:
        """The chance to pass at the size nearest `items`."""
        return self.chances[int(np.argmin([abs(n - items) for n in self.sizes]))]

    def sentence(self, chance: float = TARGET) -> str:
        """What the plan says, in one sentence (or two, when it rests on few items)."""
        if self.reason:
            return self.reason
        needed = self.items_for(chance)
        how = (f"{self.epsilon:g}, {self.alignment}, over {self.by}"
               + (f", {FDR[self.fdr]}" if self.fdr != "by" else "") + f"; {self.runs} "
               + ("resampled studies per size)" if self.resampled else "simulated studies per size, as in the "
                                                                       "paper's appendix C)"))
        if needed is None:
            outcome = (f"even {self.sizes[-1]:,} items give {self._judge()} only {_a(max(self.chances, default=0.0))} "
                       f"chance to pass (epsilon {how}: the judge, or the annotators' agreement, is too far from "
                       "passing for more items to help much.")
        else:
            groups = f" ({round(needed * self.groups / self.items)} groups)" if self.resampled and self.groups else ""
            outcome = f"about {needed:,} items{groups} give {self._judge()} {_a(chance)} chance to pass (epsilon {how}."
        return f"{self._assuming()}, {outcome}{self._rough() or self._guide()}"

    def _guide(self) -> str:
        """How far to trust a plan drawn from the data, from its check on data it was not made from."""
        if not self.resampled:
            return ""
        return (f" On data it was not made from, such a chance was within about {SPLIT_HALF_ERROR * 100:.0f} points of "
                "the real pass rate on average (docs/statistics.md).")

    def _rough(self) -> str:
        """What makes the plan a rough guide, in a sentence ("" when nothing does)."""
        if self.crossed and self.items < FIRM:
            return f" It rests on only {self.items} items two annotators share: a rough guide until there are {FIRM}."
        if not self.crossed and self.thinnest < FIRM:
            return (f" It rests on as few as {self.thinnest} items of an annotator the planned study tests (each item "
                    f"drawn again and again): a rough guide until each has {FIRM}.")
        if self.resampled and 0 < self.groups < MIN_GROUPS:
            return (f" Its items come from only {self.groups} groups, each drawn again and again: a rough guide until "
                    f"there are {MIN_GROUPS}.")
        return ""

    def _judge(self) -> str:
        if self.resampled:
            return "it"
        return "a judge like this one" if self.judge_known else "a judge as good as one of the annotators"

    def _assuming(self) -> str:
        """What the plan takes from the data and what it assumes, in words."""
        agree = f"{self.agreement:.0%} exact agreement"
        if self.resampled:
            drawn = f"in {self.groups} groups drawn whole" if self.groups else "drawn one by one"
            return (f"Drawing studies from your {self.items:,} items ({drawn}, as your {self.annotators} annotators "
                    f"labeled them, {self.per_item:.1f} per item, {agree}) with this judge's own scores")
        if self.crossed:
            return (f"If a third annotator labeled like your two ({agree}) and all three labeled every item")
        return (f"With annotators agreeing as yours do ({agree}) and labeling as yours did ({self.annotators} "
                f"annotators, {self.per_item:.1f} per item)")


def _a(share: float) -> str:
    """A percentage with its article: "an 18%", "a 25%"."""
    shown = f"{share:.0%}"
    return f"{'an' if shown.startswith(('8', '11', '18')) else 'a'} {shown}"


def people_of(items: Sequence[Item], aspect: str) -> dict[str, dict[str, float]]:
    """{annotator: {item id: score}} of `aspect` on `items`."""
    people: dict[str, dict[str, float]] = {}
    for item in items:
        for name, score in item.ratings(aspect).items():
            people.setdefault(name, {})[item.id] = score
    return people


def plan_study(people: Mapping[str, Mapping[str, float]], judge: Mapping[str, float] | None = None,
               epsilon: float = 0.15, alignment: str = "accuracy", groups: Mapping[str, str] | None = None,
               by: str | None = None, runs: int = 200, seed: int = 0, min_items: int = 30,
               q: float = 0.05, fdr: str = "by") -> Plan | None:
    """The plan for a study like the data's ({annotator: {item: label}}; the judge's {item: label},
    read on the annotators' scale; `groups`: {item: group}; `by`: what each annotator's t-test
    takes as independent, as `alt_test` has it: None, the groups where some holds several items;
    `fdr`: the step-up procedure across annotators, `alttest_groups.FDR`). None when no two
    annotators labeled the same item (their agreement is unknown); a Plan with its `reason` when
    there is no plan."""
    return plan_of(PlanData.read(people, judge, groups or {}), epsilon, alignment, by, runs, seed, min_items, q, fdr)


def plan_columns(found: ItemColumns, aspect: str, judge: np.ndarray | None = None, epsilon: float = 0.15,
                 alignment: str = "accuracy", by: str | None = None, runs: int = 200, seed: int = 0,
                 min_items: int = 30, q: float = 0.05, fdr: str = "by") -> Plan | None:
    """`plan_study` of the people's labels of `aspect` on the items of `found` (their columns, each item's
    group its own) and the judge's score of each (`judge`, NaN where none; None: no judge): the same plan,
    read from arrays."""
    return plan_of(plan_data_of(found, aspect, judge), epsilon, alignment, by, runs, seed, min_items, q, fdr)


def plan_data_of(found: ItemColumns, aspect: str, judge: np.ndarray | None = None) -> PlanData | None:
    """What `plan_columns` reads of the columns, whatever the epsilon and test: `plan_of` makes the plan of it."""
    return PlanData.of_columns(found, aspect, judge)


def plan_of(data: PlanData | None, epsilon: float = 0.15, alignment: str = "accuracy", by: str | None = None,
            runs: int = 200, seed: int = 0, min_items: int = 30, q: float = 0.05, fdr: str = "by") -> Plan | None:
    """`plan_study` of the data as `PlanData` reads it (None: no two annotators labeled the same item)."""
    if data is None:
        return None
    items = len(data.present)
    plan = Plan(len(data.names), data.agreement, data.judge_agreement, data.judge is not None, epsilon, alignment,
                runs=runs, items=items, per_item=float(data.present.sum(axis=1).mean()) if items else 0.0,
                groups=data.groups, by="groups" if data.groups and by != "items" else "items", fdr=fdr)
    plan.reason = _why_not(plan, data, min_items)
    if plan.reason:
        return plan
    rng = np.random.default_rng(seed)
    settings = {"epsilon": epsilon, "alignment": alignment, "min_items": min_items, "q": q, "by": plan.by,
                "fdr": fdr}
    if data.judge is not None and len(data.names) >= 3:
        plan.resampled = True
        plan.sizes, plan.chances = _resampled(rng, data, runs, settings)
    else:
        plan.crossed = len(data.names) < 3
        if plan.crossed:
            plan.annotators, plan.per_item = 3, 3.0
        plan.sizes, plan.chances = _until_reached(SIZES, lambda size: float(np.mean(_modelled(rng, data, size, runs,
                                                                                               settings))))
    labeled = data.present.sum(axis=0)  # the planned study tests an annotator expected to have min_items of it
    tested = labeled * (plan.items_for() or plan.sizes[-1]) / items >= min_items
    plan.thinnest = int(labeled[tested].min()) if tested.any() else FIRM
    return plan


@dataclass
class PlanData:
    """What a plan reads of the data: the people's values and their shares, how often two of them
    agree exactly (the judge with one of them), and the items two annotators or more labeled (and
    the judge scored, with a judge): who labeled each (`present`, items x annotators), their
    labels (`scores`, 0 where none), the judge's scores, each item's group (`units`) and how many
    groups there are where some holds several of the items (0: none does)."""

    values: np.ndarray
    frequencies: np.ndarray
    agreement: float
    judge_agreement: float
    names: list[str]
    present: np.ndarray
    scores: np.ndarray
    judge: np.ndarray | None
    judge_given: list[np.ndarray]  # for each value, the judge's scores where a person gave it (`_judge_by_label`)
    units: np.ndarray
    groups: int
    made: dict = field(default_factory=dict, repr=False, compare=False)  # what is read of it once (`advantages_of`)

    def advantages_of(self, alignment: str, min_items: int) -> tuple[float, float, list[float]]:
        """`_advantages` of this data, made once for every epsilon and test."""
        if ("advantages", alignment, min_items) not in self.made:
            self.made["advantages", alignment, min_items] = _advantages(self, alignment, min_items)
        advantage, chance, ahead = self.made["advantages", alignment, min_items]
        return advantage, chance, list(ahead)

    @classmethod
    def read(cls, people: Mapping[str, Mapping[str, float]], judge: Mapping[str, float] | None,
             groups: Mapping[str, str]) -> PlanData | None:
        labels = [float(v) for scores in people.values() for v in scores.values()]
        pairs = _pairs(people)
        if not pairs or len(set(labels)) < 2:
            return None
        values, counts = np.unique(np.round(labels, 6), return_counts=True)
        judged = {item: float(score) for item, score in (judge or {}).items() if np.isfinite(score)}
        with_judge = [(judged[item], float(score)) for scores in people.values() for item, score in scores.items()
                      if item in judged]
        agreement = float(np.mean([a == b for a, b in pairs]))
        judge_agreement = float(np.mean([round(j) == s for j, s in with_judge])) if with_judge else agreement
        raters: dict[str, list[str]] = {}
        for name, scores in people.items():
            for item in scores:
                raters.setdefault(item, []).append(name)
        labeled = [item for item, names in raters.items() if len(names) >= 2 and (not with_judge or item in judged)]
        names = list(dict.fromkeys(name for item in labeled for name in raters[item]))
        column = {name: k for k, name in enumerate(names)}
        present, scores = np.zeros((len(labeled), len(names)), bool), np.zeros((len(labeled), len(names)))
        for row, item in enumerate(labeled):
            for name in raters[item]:
                present[row, column[name]], scores[row, column[name]] = True, float(people[name][item])
        index: dict[str, int] = {}  # each item's group (an item without one is a group of its own)
        units = np.array([index.setdefault(groups.get(item) or f"item {item}", len(index)) for item in labeled], int)
        sizes = np.bincount(units)
        return cls(values, counts / counts.sum(), agreement, judge_agreement, names, present, scores,
                   np.array([judged[item] for item in labeled]) if with_judge else None,
                   _judge_by_label(values, *(np.array(side, dtype=float) for side in zip(*with_judge)))
                   if with_judge else [], units,
                   len(sizes) if sizes.max(initial=0) > 1 else 0)

    @classmethod
    def of_columns(cls, found: ItemColumns, aspect: str, judge: np.ndarray | None) -> PlanData | None:
        """`read` of the people's labels of `aspect` on the items of `found`, the judge's score of each
        (`judge`, NaN where none; None: no judge) and their groups, read from the columns: the same
        data, in the same order, as `read(people_of(items, aspect), judge, groups)` gives."""
        names, matrix = found.ratings(aspect)
        if named(names) or not found.unique:  # named annotators, or an id twice:
            judged = None if judge is None else dict(zip(found.ids.tolist(), judge.tolist()))  # as `read` takes them
            return cls.read(people_of(found.items, aspect), judged, dict(zip(found.ids.tolist(),
                                                                               found.group_ids.tolist())))
        counts = found.rated(aspect)
        entries = np.arange(len(names))[:, None] < counts[None, :]  # annotator "#k+1" scored the item
        labels = matrix[entries]  # every label (in another order than `read`'s: what it makes of them is not)
        shared = counts >= 2
        if not shared.any() or not (labels != labels[:1]).any():  # one value only (NaN: a value each, as a set has it)
            return None
        values, frequency = np.unique(np.round(labels, 6), return_counts=True)
        judged = np.isfinite(judge) if judge is not None else np.zeros(len(counts), bool)
        scoring = range(len(names)) if judge is not None else range(0)  # (the judge's, a person's) as `read` pairs them
        paired = (np.concatenate([judge[entries[k] & judged] for k in scoring] or [np.zeros(0)]),
                  np.concatenate([matrix[k, entries[k] & judged] for k in scoring] or [np.zeros(0)]))
        agreement = float(np.mean(np.concatenate([matrix[a, shared & (counts > b)] == matrix[b, shared & (counts > b)]
                                                  for a in range(len(names)) for b in range(a + 1, len(names))])))
        with_judge = len(paired[0]) > 0
        judge_agreement = float(np.mean(np.round(paired[0]) == paired[1])) if with_judge \
            else agreement  # round half to even, as Python's round
        by_label = _judge_by_label(values, *paired) if with_judge else []
        del paired  # read: let go before the plan's own arrays are made (a million items: 32 MB)
        labeled = np.flatnonzero(shared & (judged if with_judge else True))
        width = int(counts[labeled].max(initial=0))
        present = (np.arange(width)[None, :] < counts[labeled][:, None])
        scores = np.where(present, matrix[:width, labeled].T, 0.0)
        keys = sorted_group_codes(found)[labeled]  # a code per group
        if (keys < 0).any() or (found.group_ids[labeled] == "").any():  # an item without a group: one of its own
            keys = found.group_ids[labeled].copy()
            alone = np.array([not group for group in keys.tolist()], bool)
            keys[alone] = "item " + found.ids[labeled][alone].astype(object)
        units = pd.factorize(keys)[0].astype(int)  # in the order first met
        sizes = np.bincount(units)
        return cls(values, frequency / frequency.sum(), agreement, judge_agreement, names[:width], present, scores,
                   judge[labeled].astype(float) if with_judge else None, by_label, units,
                   len(sizes) if sizes.max(initial=0) > 1 else 0)


def sorted_group_codes(found: ItemColumns) -> np.ndarray:
    """Each item's group (`ItemColumns.group_ids`, "" where none) as a number, the groups numbered in their
    sorted order as `pd.factorize(..., sort=True)` numbers them (-1 for None), made once per list of items."""
    return found.memo(("sorted group codes",),
                      lambda: pd.factorize(found.counted("group_ids"), sort=True)[0].astype(int))


def _why_not(plan: Plan, data: PlanData, min_items: int) -> str:
    """Why there is no plan ("" when there is one): too few items two annotators share, or a judge the
    test cannot pass however many items it is given: on the test's own quantity, each annotator's
    advantage over it (person wins less judge wins), at or above epsilon for more than half the
    annotators (its advantage probabilities and the annotators' advantages set)."""
    if plan.items < MIN_SHARED:
        return (f"No plan yet: it would rest on {plan.items} item{'s' if plan.items != 1 else ''} two annotators "
                f"share{' and the judge scored' if plan.judge_known else ''}; it needs {MIN_SHARED} or more.")
    if data.judge is None:
        return ""
    plan.advantage, plan.chance_advantage, plan.ahead = data.advantages_of(plan.alignment, min_items)
    below = sum(ahead < plan.epsilon for ahead in plan.ahead)
    if 2 * below >= len(plan.ahead):
        return ""
    shown = ", ".join(f"{ahead:+.2f}" for ahead in sorted(plan.ahead, reverse=True))
    return (f"No plan for this judge: the test passes it for an annotator only where the person's advantage over it "
            f"(the share of items the person wins less the share it wins) is below epsilon {plan.epsilon:g}, and "
            f"passes it for half the annotators or more; on the items scored so far that advantage is {shown} for the "
            f"{len(plan.ahead)} annotators, below {plan.epsilon:g} for {below}, and more items only make the test "
            "surer of it: improve the judge first (the paper's advice to label more, where a verdict is missing, "
            "serves a judge that can pass).")


def _resampled(rng: np.random.Generator, data: PlanData, runs: int, settings: dict) -> tuple[list[int], list[float]]:
    """The chance to pass of studies drawn from the data's items (or its groups), at each size."""
    differences = _differences(data.scores, data.present, data.judge, settings["alignment"])
    units = data.units if data.groups else np.arange(len(data.present))
    count = int(units.max()) + 1
    sums = [np.zeros((count, data.present.shape[1])) for _ in range(3)]
    for total, part in zip(sums, (data.present, differences, differences ** 2)):
        np.add.at(total, units, part)
    per_unit = len(data.present) / count
    if not data.groups:
        drawn = list(SIZES)
    else:
        low, high = max(2, math.ceil(SIZES[0] / per_unit)), max(3, math.ceil(SIZES[-1] / per_unit))
        drawn = sorted(set(np.round(np.geomspace(low, high, 30)).astype(int).tolist()))

    def chance(size: int) -> float:
        if settings["by"] == "items":  # how often each unit is drawn is all the test over items needs
            picks = rng.integers(0, count, size=(runs, size)) + count * np.arange(runs)[:, None]
            times = np.bincount(picks.ravel(), minlength=runs * count).reshape(runs, count).astype(float)
            return float(np.mean(_passes(*((times @ total)[:, None, :] for total in sums), settings)))
        block, passed = max(1, BLOCK // (size * len(data.names))), []  # over groups: each drawn group apart
        for start in range(0, runs, block):
            picks = rng.integers(0, count, size=(min(block, runs - start), size))
            passed.append(_passes(*(total[picks] for total in sums), settings))
        return float(np.mean(np.concatenate(passed)))

    sizes, chances = _until_reached(drawn, chance)
    return [round(size * per_unit) for size in sizes], chances


def _until_reached(sizes: Sequence[int], chance_at: Callable[[int], float]) -> tuple[list[int], list[float]]:
    """The chance at each size, smallest first, until three sizes in a row reach `TARGET` (the sizes
    beyond change nothing the plan says), smoothed to rise with the size (isotonic regression): the
    first size said to reach it is then not a lucky draw on a plateau just below it."""
    done: tuple[list[int], list[float]] = ([], [])
    for size in sizes:
        done[0].append(size)
        done[1].append(chance_at(size))
        if len(done[1]) >= 3 and min(done[1][-3:]) >= TARGET:
            break
    return done[0], isotonic_regression(done[1]).x.tolist()


def _modelled(rng: np.random.Generator, data: PlanData, items: int, runs: int, settings: dict) -> np.ndarray:
    """Whether the test passes in each of `runs` studies of `items` items under the appendix C model:
    each item's design (who labels it) drawn from the data's (with fewer than three annotators:
    three on every item), the judge like an annotator, or (with one scored) drawn from its own
    scores where a person gave the item's true label."""
    crossed = len(data.names) < 3
    annotators = 3 if crossed else len(data.names)
    eta = _eta(data.frequencies, data.agreement)
    judge_given = data.judge_given if data.judge is not None else None
    group = max(1, round(len(data.present) / data.groups)) if data.groups else 1  # the data's mean group size
    pairs = annotators if settings["alignment"] == "accuracy" else 1  # accuracy compares every two annotators
    block = max(1, BLOCK // (items * (annotators + 1) * pairs))
    passed = []
    for start in range(0, runs, block):
        size = min(block, runs - start)
        present = (np.ones((size, items, annotators), bool) if crossed
                   else data.present[rng.integers(0, len(data.present), size=(size, items))])
        gold, drawn = _drawn(rng, data.frequencies, np.full(annotators + 1, eta), size, items)
        labels = data.values[drawn.transpose(0, 2, 1)]  # runs x items x raters, the judge last
        scores, judge = labels[..., :annotators], labels[..., annotators]
        if judge_given is not None:
            judge = _judge_labels(rng, judge_given, gold[:, 0])
        differences = _differences(scores, present, judge, settings["alignment"])
        starts = np.arange(0, items, group if settings["by"] == "groups" else items)  # the groups of the test
        passed.append(_passes(*(np.add.reduceat(part, starts, axis=1) for part in
                                (present.astype(float), differences, differences ** 2)), settings))
    return np.concatenate(passed)


def _drawn(rng: np.random.Generator, frequencies: np.ndarray, etas: np.ndarray, runs: int, items: int):
    """Each item's true label (an index into the values: runs x 1 x items) and each rater's (runs x
    raters x items): the true one with probability 1 - its eta, else one drawn from the frequencies."""
    gold = rng.choice(len(frequencies), size=(runs, 1, items), p=frequencies)
    noise = rng.choice(len(frequencies), size=(runs, len(etas), items), p=frequencies)
    keep = rng.random((runs, len(etas), items)) >= etas[None, :, None]
    return gold, np.where(keep, gold, noise)


def _judge_by_label(values: np.ndarray, judge: np.ndarray, person: np.ndarray) -> list[np.ndarray]:
    """For each of the people's values, the judge's scores where a person gave it (all of them where
    no person's label of that value has a judge score), of the pairs (the judge's, a person's) as two
    arrays: what the plan keeps of them, not the pairs themselves."""
    return [judge[near] if near.any() else judge for near in (np.isclose(person, value) for value in values)]


def _judge_labels(rng: np.random.Generator, judge_given: list[np.ndarray], gold: np.ndarray) -> np.ndarray:
    """The judge's score of each item: one of its own scores given the item's true label."""
    judge = np.empty(gold.shape)
    for value, scores in enumerate(judge_given):
        where = gold == value
        judge[where] = rng.choice(scores, size=int(where.sum()))
    return judge


def simulate(rng: np.random.Generator, values: np.ndarray, frequencies: np.ndarray, eta: float, eta_f: float,
             annotators: int, items: int, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """`runs` studies of the appendix C model, every annotator labeling every item: labels (runs x
    annotators x items) and the judge's (runs x items), the judge with its own noise `eta_f`."""
    _, drawn = _drawn(rng, frequencies, np.r_[np.full(annotators, eta), eta_f], runs, items)
    labels = values[drawn]
    return labels[:, :annotators], labels[:, annotators]


def winning_rates(people: np.ndarray, judge: np.ndarray, epsilon: float, alignment: str = "accuracy",
                  q: float = 0.05, min_items: int = 0, groups: np.ndarray | None = None) -> np.ndarray:
    """The alternative annotator test of every simulated study at once (people: runs x annotators x
    items, NaN where an annotator did not label an item; judge: runs x items): its winning rate per
    run (NaN when no annotator is tested), each annotator's t-test over its items, or with `groups`
    (a code per item) over its groups (MIN_GROUPS of them to be tested), from `min_items` items."""
    scores = people.transpose(0, 2, 1)
    present = ~np.isnan(scores)
    differences = _differences(scores, present, judge, alignment)
    compared = (present & (present.sum(axis=-1, keepdims=True) >= 2)).astype(float)
    order = np.argsort(groups, kind="stable") if groups is not None else np.arange(scores.shape[1])
    codes = groups[order] if groups is not None else np.zeros(len(order))
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])  # where each group begins, in that order
    parts = (np.add.reduceat(part[:, order], starts, axis=1) for part in (compared, differences, differences ** 2))
    rate, _, _ = _winning(*parts, {"epsilon": epsilon, "min_items": min_items, "q": q,
                                   "by": "groups" if groups is not None else "items"})
    return rate


def _differences(scores: np.ndarray, present: np.ndarray, judge: np.ndarray, alignment: str) -> np.ndarray:
    """Each annotator's win indicator minus the judge's on each item (scores, present: ... x items x
    annotators; judge: ... x items); 0 where the annotator did not label the item or nobody else did."""
    person, machine, compared = _wins(scores, present, judge, alignment)
    return np.where(compared, person.astype(float) - machine, 0.0)


def _wins(scores: np.ndarray, present: np.ndarray, judge: np.ndarray, alignment: str,
          person: np.ndarray | None = None):
    """Whether each annotator, and whether the judge, represents the item's other annotators at
    least as well as the other does (a tie counting for both), and where that is compared (the
    annotator labeled the item, and someone else did). `person`: `_person_score`, when made already."""
    others = present.sum(axis=-1, keepdims=True) - 1
    person = _person_score(scores, present, alignment) if person is None else person
    scores, away = np.where(present, scores, 0.0), judge[..., None]
    if alignment == "accuracy":  # how many of the others gave each one's label
        machine = ((scores == away) & present).sum(axis=-1, keepdims=True) - (scores == away)
        person_wins, machine_wins = person >= machine, machine >= person
    else:  # neg-rmse: the sum of squared differences from the others (the same count of others for both)
        machine = (np.where(present, scores - away, 0.0) ** 2).sum(axis=-1, keepdims=True) - (scores - away) ** 2
        person_wins, machine_wins = person <= machine, machine <= person
    return person_wins, machine_wins, present & (others > 0)


def _person_score(scores: np.ndarray, present: np.ndarray, alignment: str) -> np.ndarray:
    """How well each annotator represents the item's other annotators (`_wins`): under accuracy how many
    of them gave its label, else the sum of its squared differences from them."""
    others = present.sum(axis=-1, keepdims=True) - 1
    scores = np.where(present, scores, 0.0)
    if alignment == "accuracy":
        same = (scores[..., :, None] == scores[..., None, :]) & present[..., :, None] & present[..., None, :]
        return same.sum(axis=-1) - 1
    total, squares = scores.sum(axis=-1, keepdims=True), (scores ** 2).sum(axis=-1, keepdims=True)
    return squares - scores ** 2 - 2 * scores * (total - scores) + others * scores ** 2


def _advantages(data: PlanData, alignment: str, min_items: int) -> tuple[float, float, list[float]]:
    """The judge's advantage probability on the data's items (the mean over annotators with
    `min_items` items, or over all where none has, of the share of their items where it is at
    least as good as they are), that of labels drawn at random from the people's shares, and each
    of those annotators' advantage over the judge (the share of items the person wins less the share
    the judge wins: the mean the test's t-test is of)."""
    score = _person_score(data.scores, data.present, alignment)
    person, machine, compared = _wins(data.scores, data.present, data.judge, alignment, score)
    by_chance = sum(share * _wins(data.scores, data.present, np.full(len(data.judge), value), alignment, score)[1]
                    for value, share in zip(data.values, data.frequencies))
    counted = compared.sum(axis=0)
    annotators = counted >= min_items if (counted >= min_items).any() else counted > 0
    share = [(np.where(compared, wins, 0.0).sum(axis=0) / np.maximum(counted, 1))[annotators]
             for wins in (machine, by_chance, person)]
    return float(np.mean(share[0])), float(np.mean(share[1])), (share[2] - share[0]).tolist()


def _passes(counts: np.ndarray, sums: np.ndarray, squares: np.ndarray, settings: dict) -> np.ndarray:
    """Whether the test passes in each run (`_winning`): three annotators or more, one of them
    tested, a winning rate of .5 or more."""
    rate, count, annotators = _winning(counts, sums, squares, settings)
    return (annotators >= 3) & (count > 0) & (np.nan_to_num(rate) >= 0.5)


def _winning(counts: np.ndarray, sums: np.ndarray, squares: np.ndarray,
             settings: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run's winning rate, annotators tested and annotators with an item, from each annotator's
    items, sum and sum of squares of its differences in each group of the run (runs x groups x
    annotators; a single group: over items): each annotator's t-test over its items or
    (settings["by"]) its groups, tested from `min_items` items (and MIN_GROUPS groups),
    Benjamini-Yekutieli at `q`."""
    n, s = counts.sum(axis=1), sums.sum(axis=1)
    if settings["by"] == "groups":
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = s / n
        p = cr2_p(counts.transpose(0, 2, 1), (sums - counts * mean[:, None, :]).transpose(0, 2, 1), mean,
                  settings["epsilon"])
        tested = (n >= settings["min_items"]) & ((counts > 0).sum(axis=1) >= MIN_GROUPS)
    else:
        p, tested = _item_p(n, s, squares.sum(axis=1), settings["epsilon"]), n >= max(settings["min_items"], 1)
    rate, count = _rates(p, tested, settings["q"], settings.get("fdr", "by"))
    return rate, count, (n > 0).sum(axis=1)


def _item_p(n: np.ndarray, s: np.ndarray, ss: np.ndarray, epsilon: float) -> np.ndarray:
    """Each annotator's one-sided t-test p over its items (as scipy gives it), from its items n, the
    sum s and the sum of squares ss of its differences (runs x annotators)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s / n
        spread = ss * n - s * s  # n (n - 1) times the variance: exact, the differences being -1, 0, 1
        p = stats.t.cdf((mean - epsilon) / np.sqrt(spread / (n * n * (n - 1))), n - 1)
    p = np.where(spread == 0, np.where(mean < epsilon, 0.0, np.where(mean > epsilon, 1.0, np.nan)), p)
    return np.where(n >= 2, p, np.nan)  # one item: no t-test (scipy's NaN)


def _rates(p: np.ndarray, tested: np.ndarray, q: float, fdr: str = "by") -> tuple[np.ndarray, np.ndarray]:
    """Each run's winning rate (NaN when no annotator is tested) and how many annotators it tested,
    from their p-values (runs x annotators): the step-up procedure `fdr` (Benjamini-Yekutieli by
    default) at `q` over those tested (a NaN p counted, never rejected)."""
    count = tested.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, rejected(p, q, fdr, tested) / count, np.nan), count


def _pairs(people: Mapping[str, Mapping[str, float]]) -> list[tuple[float, float]]:
    """Every pair of two annotators' labels of the same item."""
    names = list(people)
    return [(float(people[a][item]), float(people[b][item])) for i, a in enumerate(names) for b in names[i + 1:]
            for item in people[a] if item in people[b]]


def _agreement(frequencies: np.ndarray, eta: float) -> float:
    """How often two annotators of noise eta agree exactly, in the model above."""
    confusion = eta * frequencies[None, :] + (1 - eta) * np.eye(len(frequencies))
    return float(np.sum(frequencies[:, None] * confusion * confusion))


def _eta(frequencies: np.ndarray, agreement: float) -> float:
    """The annotators' noise that makes two of them agree `agreement` of the time (bisection over
    [0, 1], where their agreement falls; clipped to its range)."""
    low, high = 0.0, 1.0
    if agreement >= _agreement(frequencies, low):
        return low
    if agreement <= _agreement(frequencies, high):
        return high
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if _agreement(frequencies, middle) > agreement else (low, middle)
    return (low + high) / 2
