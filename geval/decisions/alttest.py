"""Can the judge replace an annotator? The alternative annotator test (Calderon, Reichart & Dror,
"The Alternative Annotator Test for LLM-as-a-Judge", ACL 2025, arXiv 2501.10970).

Each annotator is left out in turn; on every item they scored, who represents the remaining
annotators better, the judge or the left-out person, is read by an alignment score (`accuracy`:
the share of the others who gave the same label; `neg-rmse`: minus the root mean squared
difference from the others' scores; `rank`: the same on each one's ranks of the items). Per item,
the judge "wins" when its alignment is at least the person's, and the person when theirs is at
least the judge's (a tie counts for both). Per annotator, a one-sided t-test of the paired
indicators asks whether the person's advantage is below `epsilon`, the cost-benefit margin a
judge is granted (the paper's guidance: .2 for experts, .15 for skilled annotators, .1 for crowd
workers); Benjamini-Yekutieli across annotators at q = .05. The **winning rate** is the share of
annotators whose test rejects: the judge passes at .5 or more. The **advantage probability** is
the mean over annotators of how often the judge is at least as good as the person: it compares
judges.

The paper's conditions: items with at least two annotators (the left-out one and one other),
annotators with at least 30 items (fewer: the t-test's normality is not to be trusted; the paper
recommends labeling more, or a Wilcoxon signed-rank test); three or more annotators (with two the
test only asks which of the two the judge is nearer). Where they do not hold, `verdict` says what
is missing instead of deciding.

Items in groups (the responses of one dialogue, the summaries of one document) are not
independent: where some group holds more than one of the items compared, each annotator's t-test
takes its standard error over the annotator's groups (cluster-robust, `alttest_groups`; `BY`), and
an annotator with fewer than MIN_GROUPS groups gets no verdict. The paper's test over items stays
for data without groups, and when asked for (`by="items"`).

A G-EVAL judge's score is a probability-weighted mean, a continuous value, while people give whole
scores and often agree exactly; a tie counts for both sides, so how the judge is read decides the
outcome. The test reads it on the annotators' own scale by default, as its most probable score
(`READINGS`); the others are shown beside it (docs/statistics.md).
"""

from __future__ import annotations

import json
import math
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from threading import Lock

import numpy as np
import pandas as pd
from scipy import stats

from geval.analysis.agreement import human_aspect_for, judge_scores
from geval.analysis.categorical import accuracy_row, as_labels
from geval.analysis.correlation import correlate
from geval.analysis.disagreement import human_ranges
from geval.analysis.pairwise import unit_of
from geval.analysis.scales import read_on_people_scale
from geval.decisions.alttest_groups import FDR, MIN_GROUPS, Grouping, alignment as aligned, rejected
from geval.decisions.alttest_power import (Plan, PlanData, people_of, plan_data_of, plan_of, plan_study,
                                          sorted_group_codes)
from geval.analysis.held_out import held_out, searched_versions
from geval.wording import counted
from geval.data.columns import ItemColumns, at_places
from geval.data.columns import columns as item_columns
from geval.data.items import named
from geval.errors import GevalError, StoreError
from geval.scoring.imports import Imported, JudgeImportError, import_judge
from geval.store import Store

__all__ = ["ALIGNMENTS", "ANNOTATORS_BY_LAYOUT", "BY", "CONSTANT", "EPSILONS", "MIN_GROUPS", "MIN_ITEMS", "MIN_PER_ITEM",
           "Q", "READINGS", "STORED", "AltTest", "Prepared", "prepare",
           "AltTestError", "Annotator", "Imported", "JudgeImportError", "Plan", "alt_test", "benjamini_yekutieli",
           "annotators_of", "caveat", "drawn_pass_rate", "full_verdict", "says_little", "import_judge", "plan",
           "plan_basis", "plan_data", "plan_line",
           "plan_study", "PlanBasis",
           "ranking", "run", "step_up", "summary", "FDR"]

ALIGNMENTS = {"accuracy": "the share of the other annotators who gave the same label",
              "neg-rmse": "minus the root mean squared difference from the other annotators' scores",
              "rank": "minus the root mean squared difference of ranks (each one's ranks of the items, 0-1)"}
#: The paper's cost-benefit margin by who the annotators are.
EPSILONS = {"experts": 0.2, "skilled": 0.15, "crowd": 0.1}
READINGS = {"mode": "its most probable score (on the annotators' scale)",
            "rounded": "its probability-weighted mean rounded to the scale",
            "continuous": "its probability-weighted mean as it is"}
Q = 0.05
MIN_ITEMS = 30
MIN_PER_ITEM = 2
MIN_ANNOTATORS = 3
#: Who annotated a layout's datasets, where its paper says so (SummEval: experts): the default epsilon.
ANNOTATORS_BY_LAYOUT = {"summeval": "experts"}
#: What each annotator's t-test takes as independent (`run`'s and `alt_test`'s `by`; None: groups
#: when some group holds more than one of the items compared, else items).
BY = {"groups": "its groups (dialogues, documents): a cluster-robust standard error over them",
      "items": "its items, taken as independent (the paper's test)"}
#: The baseline of each aspect: a judge that always gives one label, the best of every label of the scale.
CONSTANT = "the best constant in this test (a baseline)"
#: How each annotator's groups are called, by the level of the items.
GROUP_NOUNS = {"turn": "dialogues", "summary": "documents"}


class AltTestError(GevalError):
    """The alternative annotator test cannot be run as asked (an unknown alignment, a numeric
    alignment on categories, no judge or no annotator)."""


@dataclass
class Annotator:
    """One left-out annotator: the items compared, how often the judge and the person won (a tie
    counts for both), the one-sided p-value, and whether Benjamini-Yekutieli rejects it (the judge
    "beats" this annotator). `tested` is False below the items (or groups) the t-test needs:
    `untested` says which."""

    name: str
    items: int
    judge_wins: float
    person_wins: float
    p: float
    rejected: bool = False
    tested: bool = True
    groups: int = 0  # the groups its items fall in, when the test is taken over groups
    untested: str = ""


@dataclass
class AltTest:
    """The test of one judge against the annotators of one aspect: its settings, the winning rate,
    the advantage probability, each annotator's line, and the verdict in words (`passed` is None
    when the conditions above do not hold: `missing` says what is missing)."""

    epsilon: float
    alignment: str
    annotators: list[Annotator]
    items: int
    dropped: int  # items with fewer than MIN_PER_ITEM annotators (or no judge score), left out
    q: float = Q
    judge: str = ""
    aspect: str = ""
    fdr: str = "by"  # the step-up procedure across annotators (FDR): Benjamini-Yekutieli, the paper's
    chance: float = math.nan  # a baseline's: the advantage probability of labels drawn at random from the people's shares
    reading: str = ""
    model: str = ""  # the judge without its template ("embedded: qwen2.5-...", an imported judge's name)
    baseline: bool = False  # a judge that always gives the commonest label, not a judge of the items
    item_ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object),  # the items it was read on
                                 compare=False)  # (`run`), their ids in the items' order, read-only
    scale: str = ""  # how its scores were put on the annotators' scale, when its own differs
    alone: bool = False  # read on its own items, too few to be compared with the other judges' on theirs (`run`)
    missing: list[str] = field(default_factory=list)
    by: str = "items"  # what each annotator's t-test took as independent (BY)
    groups: int = 0  # the groups the items fall in, when some holds more than one of them
    noun: str = "groups"  # what the groups are (dialogues, documents)
    constants: str = ""  # a baseline's: how every constant of the scale fared, in words

    @property
    def how(self) -> str:
        """Which test was used, in words: "groups: 20 dialogues" or "items taken as independent"."""
        groups = counted(self.groups, self.noun.removesuffix("s"), self.noun)  # "1 dialogue", "20 dialogues"
        if self.by == "groups":
            return f"groups: {groups}"
        return "items taken as independent" + (f", as asked, though they fall in {groups} (its "
                                               "p-values are then optimistic)" if self.groups else "")

    @property
    def tested(self) -> list[Annotator]:
        """The annotators with enough items for the t-test."""
        return [a for a in self.annotators if a.tested]

    @property
    def winning_rate(self) -> float:
        """The share of tested annotators the judge beats (NaN when none is tested)."""
        tested = self.tested
        return sum(a.rejected for a in tested) / len(tested) if tested else math.nan

    @property
    def advantage_probability(self) -> float:
        """The mean over tested annotators of the share of items where the judge is at least as good."""
        tested = self.tested
        return float(np.mean([a.judge_wins for a in tested])) if tested else math.nan

    @property
    def passed(self) -> bool | None:
        """Whether the judge passes (winning rate >= .5); None when the test's conditions do not hold."""
        return None if self.missing else bool(self.winning_rate >= 0.5)

    def verdict(self) -> str:
        """One sentence: what was decided, and under which conditions (or what is missing)."""
        counts = f"{sum(a.rejected for a in self.tested)} of {len(self.tested)} annotators"
        if self.missing:
            return f"No verdict for {self.judge or 'the judge'}: " + "; ".join(self.missing) + "."
        outcome = "can replace" if self.passed else "cannot be shown to replace"
        return (f"{self.judge or 'The judge'} {outcome} an annotator here: it beats {counts} "
                f"(winning rate {self.winning_rate:.2f}, "
                f"{'at least' if self.passed else 'below'} .50) at epsilon {self.epsilon:g}, "
                f"{self.alignment} alignment, q = {self.q:g} ({FDR[self.fdr]}), on {self.items} items "
                f"({self.how}); it is at "
                f"least as good as a person on {self.advantage_probability:.0%} of the items (advantage probability)."
                + (f" {self.scale}." if self.scale else "")
                + (f" {self.constants[:1].upper()}{self.constants[1:]}." if self.constants else ""))

    def table(self) -> pd.DataFrame:
        """One row per annotator: items (and groups, when the test is taken over them), judge wins,
        person wins, p, whether BY rejects."""
        columns = ["annotator", "items", *(["groups"] if self.by == "groups" else []), "judge wins", "person wins",
                   "p", "judge beats"]
        return pd.DataFrame([{"annotator": a.name, "items": a.items, "groups": a.groups, "judge wins": a.judge_wins,
                              "person wins": a.person_wins, "p": a.p,
                              "judge beats": ("yes" if a.rejected else "no") if a.tested else
                              f"not tested ({a.untested})"} for a in self.annotators], columns=columns)


def alt_test(people: Mapping[str, Mapping[str, object]], judge: Mapping[str, object], alignment: str = "accuracy",
             epsilon: float = 0.15, q: float = Q, min_items: int = MIN_ITEMS, min_per_item: int = MIN_PER_ITEM,
             groups: Mapping[str, str] | None = None, by: str | None = None, noun: str = "groups",
             fdr: str = "by") -> AltTest:
    """The test of `judge` ({item: label}) against `people` ({annotator: {item: label}}), both on
    the same scale. Items with fewer than `min_per_item` annotators, or without a judge label, are
    left out; annotators with fewer than `min_items` items are not tested (as the paper does).
    `alignment`: ALIGNMENTS (`rank` ranks each one's labels over the items they labeled).
    `groups`: each item's group ({item: group}, called `noun`); `by`: BY, what each annotator's
    t-test takes as independent (None: groups when some group holds more than one of the items).
    `fdr`: the step-up procedure across annotators (FDR; Benjamini-Yekutieli, the paper's, by default)."""
    judged = [item for item, label in judge.items() if _present(label)]
    return _Panel(people, judged, alignment, min_per_item, groups, by, noun).test(judge, epsilon, q, min_items, fdr)


class _Panel:
    """The people's labels of the items a test compares (annotators x items, NaN where one gave
    none), each annotator's items and groups, ready to test any judge of those items: the judges of
    an aspect and every constant of its scale are tested on the same panel."""

    def __init__(self, people: Mapping[str, Mapping[str, object]], judged: Sequence[str], alignment: str,
                 min_per_item: int, groups: Mapping[str, str] | None, by: str | None, noun: str):
        _check(alignment, by)
        raters: dict[str, int] = Counter(item for labels in people.values() for item in labels)
        wanted = set(judged)
        kept = [item for item, count in raters.items() if count >= min_per_item and item in wanted]
        people = _ranks(people) if alignment == "rank" else people
        codes: dict[object, float] = {}  # accuracy: each label's code, in the order they are met

        def code(label: object) -> float:
            if not _present(label):
                return math.nan
            return float(label) if alignment != "accuracy" else codes.setdefault(label, float(len(codes)))

        labels = np.array([[code(labels.get(item)) for item in kept] for labels in people.values()],
                          dtype=float).reshape(len(people), len(kept))
        self._setup([str(name) for name in people], kept, len(raters) - len(kept), labels, codes, alignment,
                    [str(groups.get(item, item)) if groups else item for item in kept], by, noun)

    @classmethod
    def of_columns(cls, found: ItemColumns, aspect: str, on: np.ndarray, judged: np.ndarray, alignment: str,
                   min_per_item: int, by: str | None, noun: str) -> _Panel:
        """The panel of the items at positions `on` of `found` (in that order; `judged`: those a judge
        scored), read from the columns: the panel `_Panel(people_of(items, aspect), ...)` makes of them,
        each item's group its own (`Item.group`)."""
        _check(alignment, by)
        names, values = found.ratings_of(aspect, on)
        if named(names):  # named annotators: read as given
            items = [found.items[i] for i in on.tolist()]
            return cls(people_of(items, aspect), found.ids[on[judged]].tolist(), alignment, min_per_item,
                       {item.id: item.group for item in items}, by, noun)
        counts = found.rated(aspect)[on]  # annotators "#1" ... "#count" scored the item
        entries = np.arange(len(names))[:, None] < counts[None, :]
        if alignment == "rank":  # each one's ranks over the items they scored (`_ranked`)
            values = np.vstack([_ranked_row(row, given) for row, given in zip(values, entries)]) if len(names) \
                else values
        kept = np.flatnonzero((counts >= min_per_item) & judged)
        labels, codes = values[:, kept], {}
        if alignment == "accuracy":  # each label's code, in the order they are met row by row
            present = ~np.isnan(labels)
            coded, seen = pd.factorize(labels[present])
            codes = {label: float(code) for code, label in enumerate(seen.tolist())}
            labels = np.full(labels.shape, np.nan)
            labels[present] = coded
        panel, places = cls.__new__(cls), on if len(kept) == len(on) else on[kept]  # all kept: `on` itself, not a copy
        codes_of_groups = sorted_group_codes(found)[places]  # their groups, numbered in sorted order
        if (codes_of_groups < 0).any():  # a group of None: as the lists read it
            panel._setup(names, found.ids[places].tolist(), int((counts > 0).sum()) - len(kept), labels, codes,
                         alignment, found.group_ids[places].tolist(), by, noun)
        else:
            panel._setup(names, found.ids[places].tolist(), int((counts > 0).sum()) - len(kept), labels, codes,
                         alignment, None, by, noun, np.unique(codes_of_groups, return_inverse=True)[1].astype(int))
        panel.places = places
        return panel

    def _setup(self, names: list[str], kept: list[str], dropped: int, labels: np.ndarray, codes: dict,
               alignment: str, group_of: list[str] | None, by: str | None, noun: str,
               units: np.ndarray | None = None) -> None:
        """The panel of the `kept` items from their `labels` (annotators x kept items, NaN where none;
        under accuracy their `codes`) and groups (`group_of`, or their `units`: codes numbered in the
        groups' sorted order)."""
        self.alignment, self.noun, self.names, self.kept, self.dropped = alignment, noun, names, kept, dropped
        self.codes = codes  # accuracy: each label's code (a label no one gave: none)
        self.labels = labels
        self.places: np.ndarray | None = None  # where the kept items are in the columns it was read from, if it was
        if units is None:
            units = pd.factorize(np.asarray(group_of, dtype=object), sort=True)[0].astype(int) if kept \
                else np.zeros(0, dtype=int)
            self.grouped_data = len(set(group_of)) < len(group_of)
        else:
            self.grouped_data = int(units.max(initial=-1)) + 1 < len(units)
        self.units = units
        self.by = "groups" if self.grouped_data and by != "items" else "items"
        self._by_annotator: dict[int, tuple] = {}  # each annotator's Grouping and groups (`_annotator`), made once
        self._constants: dict[float, _Compared] = {}  # `constant_compared`'s, made once

    def test(self, judge: Mapping[str, object], epsilon: float, q: float = Q, min_items: int = MIN_ITEMS,
             fdr: str = "by") -> AltTest:
        """The test of `judge` ({item: label}) on this panel's items."""
        if self.alignment == "rank":
            judge = _ranked(judge)
        return self.test_labels(np.array([self.codes.get(judge[item], -1.0) if self.alignment == "accuracy"
                                          else float(judge[item]) for item in self.kept], dtype=float),
                                epsilon, q, min_items, fdr)

    def constant(self, label: float) -> float:
        """The label a judge that always gives `label` gives each item, as this panel reads it: its code
        under accuracy, the middle rank under rank (every item tied)."""
        return self.codes.get(label, -1.0) if self.alignment == "accuracy" else 0.5 if self.alignment == "rank" \
            else float(label)

    def test_labels(self, machine_labels: np.ndarray, epsilon: float, q: float = Q, min_items: int = MIN_ITEMS,
                    fdr: str = "by") -> AltTest:
        """The test of a judge whose labels of this panel's items are `machine_labels` (in its order; coded
        under accuracy, ranked under rank)."""
        return self.compared(machine_labels).test(epsilon, q, min_items, fdr)

    def compared(self, machine_labels: np.ndarray) -> _Compared:
        """What the test of a judge whose labels are `machine_labels` (as `test_labels` takes them) reads
        that does not depend on epsilon: with each annotator, who wins item by item."""
        return self.compared_all([machine_labels])[0]

    def compared_all(self, judges: Sequence[np.ndarray]) -> list[_Compared]:
        """`compared` of each judge's labels of `judges`, what each annotator's comparison reads of the panel
        (`_annotator`) made once for all of them."""
        lines: list[list[tuple]] = [[] for _ in judges]
        for k in range(len(self.names)):
            annotator = self._annotator(k)
            for line, machine_labels in zip(lines, judges):
                line.append((k, *self._with(annotator, machine_labels)))
        return [_Compared(self, line) for line in lines]

    def _with(self, annotator: tuple, machine_labels: np.ndarray) -> tuple:
        """An annotator (`_annotator`) against a judge labeling as `machine_labels`: its items, the shares of
        them the judge and the person win, and the t-test's sufficient figures (over groups: the mean and CR2
        variance of the person-win minus judge-win differences; over items: those differences)."""
        mask, others, person, grouping = annotator
        machine = aligned(machine_labels[mask], others, self.alignment)
        judge_wins, person_wins = machine >= person, person >= machine
        differences = person_wins.astype(float) - judge_wins.astype(float)
        count = len(person)
        spread = (grouping.spread(differences) if count else None) if self.by == "groups" \
            else differences.astype(np.int8)
        return (count, float(judge_wins.mean()) if count else math.nan,
                float(person_wins.mean()) if count else math.nan, spread)

    def _annotator(self, k: int) -> tuple:
        """What the test of any judge reads of annotator k: where it labeled, the others' labels there and its
        own alignment with them (made again at each `compared_all`, not kept: a million items' held 34 MB per
        panel), and its items' groups (`Grouping`, made once per panel, with how many groups they are)."""
        mask = ~np.isnan(self.labels[k])
        others = np.delete(self.labels, k, axis=0)[:, mask]
        if k not in self._by_annotator:
            units = self.units[mask]
            self._by_annotator[k] = (Grouping(units) if self.by == "groups" else None,
                                     int(np.count_nonzero(np.bincount(units))) if self.by == "groups" else 0)
        return mask, others, aligned(self.labels[k, mask], others, self.alignment), self._by_annotator[k][0]

    def constants_compared(self, labels: Sequence[float]) -> None:
        """`compared` of a judge that always gives each of `labels` (`constant`), those not made yet made
        together, once per panel (`constant_compared` gives them)."""
        missing = [label for label in dict.fromkeys(labels) if label not in self._constants]
        made = self.compared_all([np.full(len(self.kept), self.constant(label)) for label in missing]) \
            if missing else []
        self._constants.update(zip(missing, made))

    def constant_compared(self, label: float) -> _Compared:
        """`compared` of a judge that always gives `label` (`constant`), made once per panel."""
        self.constants_compared([label])
        return self._constants[label]


class _Compared:
    """A judge's comparison with each annotator of a panel, all the test reads but epsilon: `test` gives
    the test at any epsilon, q, min_items and step-up procedure."""

    def __init__(self, panel: _Panel, lines: list[tuple]):
        self.panel, self.lines = panel, lines

    def test(self, epsilon: float, q: float = Q, min_items: int = MIN_ITEMS, fdr: str = "by") -> AltTest:
        """The test at `epsilon` (as `_Panel.test_labels`)."""
        if fdr not in FDR:
            raise AltTestError(f"'{fdr}' is not a step-up procedure; use one of {', '.join(FDR)}")
        panel = self.panel
        annotators, p_values = [], []
        for k, count, judge_wins, person_wins, spread in self.lines:
            grouping, groups = panel._by_annotator[k]
            untested = ("no other annotator to compare with" if len(panel.names) < 2 else
                        f"fewer than {min_items} items" if count < min_items else
                        f"fewer than {MIN_GROUPS} {panel.noun}" if panel.by == "groups" and groups < MIN_GROUPS else "")
            p = math.nan if untested or spread is None else float(grouping.p(*spread, epsilon)[0]) \
                if panel.by == "groups" else _one_sided_p(spread.astype(float), epsilon)
            annotators.append(Annotator(panel.names[k], count, judge_wins, person_wins, p,
                                        tested=not untested, groups=groups, untested=untested))
            if not untested:
                p_values.append(p)
        for index in step_up(p_values, q, fdr):
            [a for a in annotators if a.tested][index].rejected = True
        result = AltTest(epsilon, panel.alignment, annotators, len(panel.kept), panel.dropped, q, by=panel.by,
                         groups=int(np.count_nonzero(np.bincount(panel.units))) if panel.grouped_data else 0,
                         noun=panel.noun, fdr=fdr)
        result.missing = _missing(result, len(panel.names), min_items)
        return result


def _check(alignment: str, by: str | None) -> None:
    """AltTestError for an unknown alignment or way to take the items."""
    if alignment not in ALIGNMENTS:
        raise AltTestError(f"alignment '{alignment}' is unknown; use one of {', '.join(ALIGNMENTS)}")
    if by is not None and by not in BY:
        raise AltTestError(f"'{by}' is not a way to take the items; use one of {', '.join(BY)}")


def step_up(p_values: Sequence[float], q: float = Q, fdr: str = "by") -> list[int]:
    """The indexes of the p-values the step-up procedure `fdr` (FDR: Benjamini-Yekutieli, valid under
    any dependence, the paper's; or Benjamini-Hochberg) rejects at FDR `q`; a NaN p-value never is."""
    p = np.asarray(p_values, dtype=float)
    if not len(p):
        return []
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    return sorted(order[: int(rejected(p[None, :], q, fdr)[0])].tolist())


def benjamini_yekutieli(p_values: Sequence[float], q: float = Q) -> list[int]:
    """The indexes of the p-values the Benjamini-Yekutieli step-up procedure rejects at FDR `q`
    (valid under any dependence); a NaN p-value is never rejected."""
    return step_up(p_values, q, "by")


def _one_sided_p(differences: np.ndarray, epsilon: float) -> float:
    """p of the one-sided t-test that the mean of person-minus-judge indicators is below `epsilon`
    (as scipy gives it: 0 when they do not vary and lie below it, NaN when they all equal it)."""
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_1samp(differences, epsilon, alternative="less").pvalue)


def _present(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _ranks(people: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, float]]:
    """Each annotator's labels replaced by their ranks over the items they labeled (`_ranked`), so
    that annotators of different items compare."""
    return {name: _ranked(labels) for name, labels in people.items()}


def _ranked(labels: Mapping[str, object]) -> dict[str, float]:
    """Labels replaced by their ranks over the items labeled, scaled to 0-1 (ties share their mean rank)."""
    items = [item for item, value in labels.items() if _present(value)]
    if len(items) < 2:
        return {item: 0.5 for item in items}
    order = stats.rankdata([float(labels[item]) for item in items])
    return dict(zip(items, (order - 1) / (len(items) - 1)))


def _ranked_row(values: np.ndarray, given: np.ndarray) -> np.ndarray:
    """`_ranked` of one annotator's row of scores: ranks over the items `given` (NaN elsewhere)."""
    present = given & ~np.isnan(values)
    out = np.full(len(values), np.nan)
    count = int(present.sum())
    if count:
        out[present] = 0.5 if count < 2 else (stats.rankdata(values[present]) - 1) / (count - 1)
    return out


def _missing(result: AltTest, annotators: int, min_items: int) -> list[str]:
    """What the paper's conditions lack, each with what it recommends (empty when they hold)."""
    if annotators < 2:  # no item has a second score: nothing else to count
        return [f"{annotators} annotator{'s' if annotators != 1 else ''}: the test needs at least 2, the paper "
                "recommends 3 or more"]  # no parentheses: the bottom line puts these in its own
    missing = []
    if annotators < MIN_ANNOTATORS:
        missing.append("2 annotators: with 2 the test only asks which of the two the judge is nearer, the paper "
                       "recommends 3 or more for a verdict")
    most = max((a.items for a in result.annotators), default=0)
    if not result.tested and most < min_items:
        missing.append(f"fewer than {min_items} items per annotator (most: {most}): the t-test needs {min_items} or "
                       "more; the paper recommends labeling more items (or a Wilcoxon signed-rank test meanwhile)")
    elif not result.tested:
        groups = max(a.groups for a in result.annotators if a.items >= min_items)
        missing.append(f"fewer than {MIN_GROUPS} {result.noun} per annotator (most: {groups}): the items within "
                       f"each of the {result.noun} are not independent, and the t-test over {result.noun} needs "
                       f"{MIN_GROUPS} or more; label items of more {result.noun}, or take the items as independent "
                       "(by items) knowing its p-values are then optimistic")
    return missing


#: Why a judge with no score read as its most probable score has no verdict (that reading needs a distribution
#: over the scale's scores).
UNREAD = ("none of its scores can be read as its most probable score (a checklist keeps no distribution over the "
          "scale's scores; or its judgments failed): read it rounded or continuous")


def run(store: Store, dataset: str, combos: Sequence[tuple[str, str]] | None = None,
        aspects: Sequence[str] | None = None, epsilon: float = EPSILONS["skilled"], alignment: str | None = None,
        reading: str = "mode", q: float = Q, min_items: int = MIN_ITEMS, baseline: bool = False,
        same_items: bool = True, by: str | None = None,
        on_skipped: Callable[[str], None] | None = None, fdr: str = "by") -> list[AltTest]:
    """The test of each scored combination (template version, signature; default: every one on
    `dataset` but a prompt search's variants) on each human aspect it is compared with (or those of
    `aspects`), against the dataset's annotators as its human side has them (your labels each under
    your annotator's name). A G-EVAL judge is read as `reading` (READINGS); a judge imported from a
    file as it was imported. `alignment` defaults to accuracy for a categorical aspect and neg-rmse
    for scores. Read without the groups a prompt search chose a version on, as every table is.
    `by`: BY, what each annotator's t-test takes as independent (None: the items' groups when some
    holds more than one item). `baseline`: also test, per aspect, a judge that always gives one
    label, for every label of the scale (every category), on the items the first judge scored, and
    add the best of them: what the test grants a judge that knows nothing of the items (ties count
    for both sides, so on a skewed scale, or with neg-rmse in the middle of one, it may grant
    much). `same_items`: every judge of an aspect read on the items all of them scored (judges
    compared on the same items; one of fewer than MIN_ITEMS items, beside one of more, on its own: `alone`); else
    each on its own. A judge with no judgment on the dataset's
    current items (it judged items a file of the same name has since replaced) is left out, and
    said in one line to `on_skipped`; when every judge is, AltTestError says so. `fdr`: the step-up
    procedure across annotators (FDR: Benjamini-Yekutieli, the paper's, by default; Benjamini-Hochberg
    a departure from it, said in every verdict)."""
    return prepare(store, dataset, combos, aspects, alignment, reading, baseline, same_items, by,
                   on_skipped).results(epsilon, q, min_items, fdr)


def prepare(store: Store, dataset: str, combos: Sequence[tuple[str, str]] | None = None,
            aspects: Sequence[str] | None = None, alignment: str | None = None, reading: str = "mode",
            baseline: bool = False, same_items: bool = True, by: str | None = None,
            on_skipped: Callable[[str], None] | None = None) -> Prepared:
    """`run` but its epsilon, q, min_items and step-up procedure: what the test reads of the store and
    compares item by item, once; `Prepared.results` gives the test at any of them."""
    if reading not in READINGS:
        raise AltTestError(f"reading '{reading}' is unknown; use one of {', '.join(READINGS)}")
    found = store.combos(dataset)
    if combos is None:
        found = found[~found["searched"]]
    else:
        wanted = set(map(tuple, combos))
        found = found[[(v, s) in wanted for v, s in zip(found["template_version"], found["signature"])]]
    if found.empty:
        raise AltTestError(f"no judge is scored or imported on '{dataset}': score one, or import one "
                           "(python -m geval judge import FILE --dataset ...)")
    categories, searched, every = store.categories(dataset), searched_versions(store, dataset), store.items(dataset)
    ranges, declared, columns = human_ranges(every), store.scales(dataset), item_columns(every)
    read: list[tuple] = []  # (combo, human aspect, alignment, the judge's values, where the items it is read on are, ...)
    stale: list[str] = []  # the judges with no judgment on the current items
    unread: set[int] = set()  # the entries of `read` whose judge has no score as read (e.g. no most probable one)
    for combo in found.itertuples():
        imported = as_stored(store, combo.template_version, combo.signature_json)
        items, _ = held_out(every, [combo.template_version], searched)
        try:
            scored = judge_scores(store, dataset, (combo.template_version, combo.signature),
                                  _variant(reading, imported), items=items)
        except StoreError:  # none of the items it judged is one of the dataset's now
            stale.append(combo.label)
            continue
        human_aspects = item_columns(items).human_aspects
        among = np.zeros(len(every), bool)  # the items it is read on, as places in `every` (in their order)
        among[columns.positions([item.id for item in items]) if len(items) < len(every) else slice(None)] = True
        for key in scored.scores.columns:
            human = human_aspect_for(scored.template, key, human_aspects)
            if human is None or (aspects and human not in aspects):
                continue
            chosen = alignment or ("accuracy" if human in categories else "neg-rmse")
            if human in categories and chosen != "accuracy":
                raise AltTestError(f"{human} is categorical ({', '.join(categories[human])}): only accuracy "
                                   "alignment reads categories")
            values, scale = _on_their_scale(scored, key, human, categories.get(human), declared, ranges,
                                            _whole(reading, imported), dataset)
            values = _given(values)
            judged = np.zeros(len(every), bool)
            judged[columns.positions(values.index)] = True
            read.append((combo, human, chosen, values, among, imported, scale, judged & among))
            if values.empty:  # read on no item: not counted among the judges of the aspect (it would leave them none)
                unread.add(len(read) - 1)
    if stale:
        _say_stale(dataset, stale, len(found), on_skipped)
    common = _common_items([entry for n, entry in enumerate(read) if n not in unread])
    prepared = Prepared()
    for n, (combo, human, chosen, values, among, imported, scale, judged) in enumerate(read):
        alone = same_items and human in common and judged.sum() < MIN_ITEMS <= common[human][1]
        on = np.flatnonzero(among if not same_items else judged if alone or human not in common else
                            common[human][0])
        panel, ids = _panel(columns, human, on, judged[on], chosen, by)
        labels = values.to_numpy(dtype=float)
        if chosen == "rank":  # its ranks over every item it scored
            labels = (stats.rankdata(labels) - 1) / (len(labels) - 1) if len(labels) > 1 else np.full(len(labels), 0.5)
        machine = _labels_of(panel, columns, values.index, labels)
        if chosen == "accuracy":
            machine = np.array([panel.codes.get(label, -1.0) for label in machine.tolist()], dtype=float)
        prepared.judges.append((panel.compared(machine), {"judge": combo.label, "aspect": human, "model": combo.model,
                                                          "reading": imported or reading, "item_ids": ids,
                                                          "scale": scale, "alone": bool(alone),
                                                          **({"missing": [UNREAD]} if n in unread and not imported
                                                             and reading == "mode" else {})}))
    for human in dict.fromkeys(h for n, (_, h, *_) in enumerate(read) if n not in unread) if baseline else ():
        combo, _, chosen, values, among, *_, judged = next(entry for n, entry in enumerate(read)
                                                           if entry[1] == human and n not in unread)
        on = np.flatnonzero(common[human][0] if same_items else judged)
        if columns.rated(human)[on].any():  # else no person scored these items: nothing for a constant to copy
            panel, ids = _panel(columns, human, on, np.ones(len(on), bool), chosen, by)
            points = _points_of(columns, human, on, categories.get(human), declared.get(human))
            panel.constants_compared(list(points))  # each constant's comparison, made now (once per panel)
            prepared.baselines.append((panel, points, {"aspect": human, "item_ids": ids}))
    return prepared


def _common_items(read: list) -> dict[str, tuple[np.ndarray, int]]:
    """Each aspect's items every judge of it scored (places in the items), and the most any of them scored: over the
    judges of MIN_ITEMS items or more when one is (a judge of 4 items cut a judge of 60 down to its 4, and took
    their verdict; it has none of its own, read on its own items), else over all of them."""
    by_aspect: dict[str, list[np.ndarray]] = {}
    for _, human, *_, judged in read:
        by_aspect.setdefault(human, []).append(judged)
    common = {}
    for human, judged in by_aspect.items():
        most = max(int(one.sum()) for one in judged)
        kept = [one for one in judged if one.sum() >= MIN_ITEMS] if most >= MIN_ITEMS else judged
        common[human] = (np.logical_and.reduce(kept), most)
    return common


def _labels_of(panel: _Panel, columns: ItemColumns, ids: pd.Index, labels: np.ndarray) -> np.ndarray:
    """A judge's `labels` of the items `ids` on the panel's items, in its order (NaN where it gave none)."""
    if panel.places is None:
        return pd.Series(labels, index=ids).reindex(panel.kept).to_numpy(dtype=float)
    return _scores_by_place(columns, pd.Series(labels, index=ids))[panel.places]


class Prepared:
    """`prepare`'s: every judge's comparison with the annotators of its aspect and each aspect's constants,
    all the test reads but its epsilon, q, min_items and step-up procedure: `results` gives the test at
    any of them at little cost (the page's epsilon)."""

    def __init__(self):
        self.judges: list[tuple[_Compared, dict]] = []
        self.baselines: list[tuple[_Panel, dict[float, str], dict]] = []

    def results(self, epsilon: float = EPSILONS["skilled"], q: float = Q, min_items: int = MIN_ITEMS,
                fdr: str = "by") -> list[AltTest]:
        """`run`'s results at `epsilon`, `q`, `min_items` and `fdr`."""
        results = []
        for compared, said in self.judges:
            results.append(compared.test(epsilon, q, min_items, fdr))
            vars(results[-1]).update(said)
        for panel, points, said in self.baselines:
            results.append(_best_constant(panel, points, epsilon, q, min_items, fdr))
            vars(results[-1]).update(said)
        return results


#: `run`'s panels kept (each with the columns and items it was read from): the judges of an aspect, its
#: constants and the readings of one page share one.
PANELS_KEPT = 8
_panels: OrderedDict[tuple, tuple] = OrderedDict()
_panels_lock = Lock()


def _panel(columns: ItemColumns, human: str, on: np.ndarray, judged: np.ndarray, alignment: str,
           by: str | None) -> tuple[_Panel, np.ndarray]:
    """`run`'s panel of the items at places `on` of `columns` (`judged`: those the judge scored) and
    their ids, made once for the same items (the last PANELS_KEPT are kept; never changed once made).
    A kept panel is given back only for these very columns (it holds them: no other object takes their
    id meanwhile) and the same `on` and `judged`, compared in full."""
    key = (id(columns), human, alignment, by, len(on), hash(on.tobytes()), hash(judged.tobytes()))
    with _panels_lock:
        found = _panels.get(key)
        if found is not None:
            _panels.move_to_end(key)
    if found is None or not (np.array_equal(found[1], on) and np.array_equal(found[2], judged)):
        noun = _noun_of(columns, on)
        found = (columns, on, judged, _Panel.of_columns(columns, human, on, judged, alignment, MIN_PER_ITEM, by, noun),
                 at_places(columns.ids, on))  # every item's (as a rule): the ids themselves, not a set of them
        with _panels_lock:
            _panels[key] = found
            _panels.move_to_end(key)
            while len(_panels) > PANELS_KEPT:
                _panels.popitem(last=False)
    return found[3], found[4]


#: How a judge read as stored reads: a judge's file, a pairwise judge's labels (`geval.judging.pairwise`).
STORED = ("as imported", "as judged in both orders")


def as_stored(store: Store, version: str, signature_json: str | None) -> str:
    """How a judge whose scores are read as stored reads (STORED), "" for one read as `reading` says."""
    if json.loads(signature_json or "{}").get("backend") == "imported":
        return STORED[0]
    return STORED[1] if store.template(version).kind == "pairwise" else ""


def _say_stale(dataset: str, stale: list[str], judges: int, on_skipped: Callable[[str], None] | None) -> None:
    """Say the judges left out for having no judgment on the dataset's current items; AltTestError when all are."""
    line = (f"{len(stale)} of the {judges} judges on '{dataset}' have no judgment on its current items (they judged "
            "items a file of the same name has since replaced; score or import them again), left out: "
            + "; ".join(stale))
    if len(stale) == judges:
        raise AltTestError(line.replace(", left out: ", ": "))
    if on_skipped is not None:
        on_skipped(line)


def _points_of(columns: ItemColumns, aspect: str, on: np.ndarray, categories: Sequence[str] | None,
               declared: tuple[float, float] | None) -> dict[float, str]:
    """Every label a constant judge of an aspect may give, and how it is shown: each category, else
    each whole number of the declared scale and of the range of the people's scores of the items at
    places `on`."""
    if categories:
        return {float(k): category for k, category in enumerate(categories)}
    seen = columns.ratings_of(aspect, on)[1]
    seen = seen[~np.isnan(seen)]
    low, high = math.floor(float(seen.min())), math.ceil(float(seen.max()))
    if declared is not None:
        low, high = min(low, math.floor(declared[0])), max(high, math.ceil(declared[1]))
    return {float(point): f"{point:g}" for point in range(low, high + 1)}


def _best_constant(panel: _Panel, points: dict[float, str], epsilon: float, q: float,
                   min_items: int, fdr: str = "by") -> AltTest:
    """Every constant of `points` tested on `panel`, and the best of them (passed first, then the
    highest winning rate, then the highest advantage probability) as the baseline's result, with how
    every constant fared in words (`AltTest.constants`) and the advantage probability of labels drawn
    at random from the people's shares (`AltTest.chance`: each constant's, weighed by its share)."""
    tested = [(shown, panel.constant_compared(point).test(epsilon, q, min_items, fdr))
              for point, shown in points.items()]
    given = panel.labels[~np.isnan(panel.labels)] if panel.alignment != "rank" else np.array([])  # ranks: no shares
    shares = [float(np.mean(given == panel.codes.get(point, point))) if panel.alignment == "accuracy"
              else float(np.mean(given == point)) for point in points] if len(given) else []
    shown, best = max(tested, key=lambda entry: (entry[1].passed is True, _defined(entry[1].winning_rate),
                                                 _defined(entry[1].advantage_probability)))
    passing = [f"always {name}" for name, result in tested if result.passed]
    verb = "passes" if len(passing) == 1 else "pass"
    best.constants = (f"{len(passing)} of the {len(tested)} constants of the scale {verb} ({', '.join(passing)})"
                      if passing else f"none of the {len(tested)} constants of the scale passes")
    best.judge, best.model = f"always {shown} (the best constant in this test: a baseline)", CONSTANT
    best.reading, best.baseline = "a constant", True
    best.chance = float(sum(share * result.advantage_probability for share, (_, result) in zip(shares, tested)
                            if share)) if shares else math.nan
    return best


def _defined(value: float) -> float:
    """A figure to rank by, -1 when it is not defined."""
    return value if math.isfinite(value) else -1.0


def _noun_of(columns: ItemColumns, on: np.ndarray) -> str:
    """What the groups of the items at places `on` are, in words: questions for pairs that name theirs (as the
    pairwise section says: `geval.analysis.pairwise.unit_of`), dialogues for turns, documents for summaries, else
    groups."""
    if len(on) and columns.items[on[0]].pair is not None and unit_of([columns.items[i] for i in on]) == "questions":
        return "questions"
    every = columns.first_seen("levels")
    found = set(every if len(every) == 1 and len(on) else pd.unique(columns.levels[on]).tolist())
    return GROUP_NOUNS.get(found.pop(), "groups") if len(found) == 1 else "groups"


def annotators_of(store: Store, dataset: str) -> str | None:
    """Who the annotators of a stored dataset are (a key of EPSILONS), where its layout's paper says
    so; None when the data does not say (then the paper's middle, skilled annotators, is the default)."""
    return ANNOTATORS_BY_LAYOUT.get(store.dataset_layout(dataset))


def caveat(result: AltTest, results: Sequence[AltTest]) -> str:
    """What the constant baseline of the same aspect (the best of every constant of its scale) says
    of `result` ("" when it says nothing): ties count for both sides, so on a scale where most
    people give one label a judge that always gives it may pass, and with neg-rmse so may one that
    always gives the middle of the scale. The aspect is named as a noun, never as an adjective (the
    annotations layout's pooled aspect is called "label": "the label items" read oddly)."""
    constant = next((r for r in results if r.baseline and r.aspect == result.aspect), None)
    if constant is None or result.baseline or result.passed is None:
        return ""
    answer = constant.judge.split(" (")[0].removeprefix("always ")
    figures = f"winning rate {constant.winning_rate:.2f}, advantage probability {constant.advantage_probability:.2f}" \
        + (f"; {constant.constants}" if constant.constants else "")
    if constant.passed and result.passed:
        return (f"A judge that always answers {answer} passes the test on {result.aspect} too ({figures}): here the test cannot "
                "tell a judge from a constant, so this pass says little.")
    if result.passed and constant.chance >= result.advantage_probability:
        return (f"Labels drawn at random from the people's own label shares would be at least as good as a person on "
                f"{constant.chance:.0%} of the items of {result.aspect} (their advantage probability), as often as "
                f"this judge ({result.advantage_probability:.0%}) or more: here the test cannot tell this judge from "
                "chance, so this pass says little.")
    if constant.passed:
        return (f"A judge that always answers {answer} passes the test on {result.aspect} ({figures}) where this one does not: "
                "on this aspect the test rewards giving one label more than telling items apart.")
    if constant.advantage_probability >= result.advantage_probability:
        return (f"A judge that always answers {answer} is at least as good as a person on "
                f"{constant.advantage_probability:.0%} of the items of {result.aspect} (its advantage probability), as "
                f"often as this judge ({result.advantage_probability:.0%}) or more: on this aspect the advantage "
                "probability rewards giving the commonest label.")
    return ""


def says_little(result: AltTest, results: Sequence[AltTest]) -> bool:
    """Whether `result` passes where the constant baseline of its aspect (`results`) passes too."""
    return bool(result.passed) and any(r.baseline and r.aspect == result.aspect and r.passed for r in results)


def full_verdict(result: AltTest, results: Sequence[AltTest]) -> str:
    """`result`'s verdict with what the constant baseline of its aspect says of it (`caveat`), that first where a
    constant passes too (`says_little`): after the pass, it read as a footnote to a judge that may agree with no one."""
    said = [result.verdict(), caveat(result, results)]
    if says_little(result, results):
        said.reverse()
    return " ".join(filter(None, said))


def plan_line(result: AltTest, results: Sequence[AltTest], planned: Plan | None) -> str:
    """What to say of `planned` (the plan of `result`'s judge and aspect) beside its verdict: the plan's
    sentence, but never a refusal beneath a pass. Where the judge passes while it is no better than the
    best constant or labels drawn at random from the people's shares (its advantage probability at
    most theirs), the verdict's warning is the message (`caveat`); where it passes and the plan, read
    on other items (all the judge scored), would refuse it, that is said as such ("" before two
    annotators share an item)."""
    if planned is None:
        return ""
    constant = next((r for r in results if r.baseline and r.aspect == result.aspect), None)
    chance_like = constant is not None and result.advantage_probability <= max(_defined(constant.chance),
                                                                              constant.advantage_probability)
    if result.passed and chance_like and caveat(result, results):  # a judge no better than a constant or chance
        return caveat(result, results)
    if result.passed and planned.reason:
        return (f"It passes on these {result.items} items already; a plan for more is not made, as on all the items "
                f"it scored it does not: {planned.reason[:1].lower()}{planned.reason[1:]}")
    return planned.sentence()


def plan(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None,
         epsilon: float = EPSILONS["skilled"], alignment: str | None = None, runs: int = 200,
         by: str | None = None, reading: str = "mode", fdr: str = "by") -> Plan | None:
    """How many items a study like `dataset`'s needs for the test to pass with an 80% chance
    (`alttest_power`): its items drawn with who labeled them, the people's labels of `aspect` and
    the judge's (`combo`, read as the test reads it: `reading`, READINGS; without the groups a prompt
    search chose it on); with no judge, one as good as an annotator. `by`: BY, `fdr`: FDR, as the test
    takes them. None when no two annotators labeled the same item yet; a Plan with its `reason` when
    there is no plan."""
    return plan_basis(store, dataset, aspect, combo, reading).plan(epsilon, alignment, runs, by, fdr)


@dataclass
class PlanBasis:
    """What `plan` reads of the store for one aspect and judge, whatever the epsilon, alignment and test
    (`plan_basis`): the people's labels and the judge's scores (`alttest_power.PlanData`; None before two
    annotators share an item) and whether the aspect is categorical."""

    data: PlanData | None
    categorical: bool

    def plan(self, epsilon: float = EPSILONS["skilled"], alignment: str | None = None, runs: int = 200,
             by: str | None = None, fdr: str = "by") -> Plan | None:
        """`plan` at these settings."""
        chosen = alignment if alignment in ("accuracy", "neg-rmse") else \
            "accuracy" if self.categorical else "neg-rmse"  # ranks are not simulated: the scores'
        return plan_of(self.data, epsilon, chosen, by, runs=runs, min_items=MIN_ITEMS, q=Q, fdr=fdr)


def plan_basis(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None,
               reading: str = "mode") -> PlanBasis:
    """`plan`'s reading of the store, made once for every epsilon, alignment and test (`PlanBasis.plan`)."""
    items, judge = _plan_inputs(store, dataset, aspect, combo, reading)
    found = item_columns(items)
    judged = None if judge is None else _scores_by_place(found, judge)
    return PlanBasis(plan_data_of(found, aspect, judged), aspect in store.categories(dataset))


def _given(values: pd.Series) -> pd.Series:
    """`values.dropna()`, without the hash of the index's values pandas keeps with the index (`scales._clipped`)."""
    return values[values.notna().to_numpy()]


def _unique(index: pd.Index, where: np.ndarray) -> bool:
    """`index.is_unique`, `where` the places of its ids among items with unique ids (`ItemColumns.positions`):
    counted on the places when every id is an item's (an id twice is one place twice), else on the ids; without
    the hash of its values pandas keeps with the index (`scales._clipped`)."""
    if (where >= 0).all():
        return len(where) == 0 or int(np.bincount(where).max()) == 1
    return len(pd.unique(index.array)) == len(index)


def _scores_by_place(found: ItemColumns, scores: pd.Series) -> np.ndarray:
    """`scores` (by item id) on the items of `found`, in their order (NaN where none)."""
    where = found.positions(scores.index) if found.unique else None
    if where is None or not _unique(scores.index, where):
        return scores.reindex(found.ids).to_numpy(dtype=float)
    by_place = np.full(len(found), np.nan)
    by_place[where[where >= 0]] = scores.to_numpy(dtype=float)[where >= 0]
    return by_place


def plan_data(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None = None, reading: str = "mode"
              ) -> tuple[dict[str, dict[str, float]], dict[str, float] | None, dict[str, str]]:
    """What `plan` reads: the people's labels of `aspect` ({annotator: {item: label}}), the judge's
    scores on their scale ({item: score}, None without `combo`; read as `run` reads it in `reading`,
    on the items it reads it on) and each item's group."""
    items, judge = _plan_inputs(store, dataset, aspect, combo, reading)
    return people_of(items, aspect), None if judge is None else judge.to_dict(), {item.id: item.group for item in items}


def _plan_inputs(store: Store, dataset: str, aspect: str, combo: tuple[str, str] | None,
                 reading: str) -> tuple[list, pd.Series | None]:
    """`plan_data`'s items and the judge's scores on them (by item id, NaN left out; None without `combo`)."""
    if reading not in READINGS:
        raise AltTestError(f"reading '{reading}' is unknown; use one of {', '.join(READINGS)}")
    every, categories = store.items(dataset), store.categories(dataset).get(aspect)
    items, judge = every, None
    if combo is not None:
        items, _ = held_out(every, [combo[0]], searched_versions(store, dataset))
        imported = bool(as_stored(store, combo[0], store.combos(dataset).set_index(["template_version", "signature"])
                                  .loc[tuple(combo), "signature_json"]))  # imported, or judged in both orders
        scored = judge_scores(store, dataset, combo, _variant(reading, imported), items=items)
        key = next((k for k in scored.scores.columns if human_aspect_for(scored.template, k, [aspect])), None)
        if key:  # on the annotators' scale, as the test reads it
            values, _ = _on_their_scale(scored, key, aspect, categories, store.scales(dataset),
                                        human_ranges(every, [aspect]), _whole(reading, imported), dataset)
            judge = _given(values)
    return items, judge


def _variant(reading: str, imported: bool) -> str:
    """The score variant a judge is read in: its most probable score for "mode", else (and always for
    a judge imported from a file) its probability-weighted mean."""
    return "argmax" if reading == "mode" and not imported else "wmean"


def _whole(reading: str, imported: bool) -> bool:
    """Whether a judge's scores are rounded to the people's scale: read as its most probable score or
    rounded; never a judge imported from a file (read as imported)."""
    return reading != "continuous" and not imported


def _on_their_scale(scored, key: str, human: str, categories: tuple[str, ...] | None,
                    declared: Mapping[str, tuple[float, float]], ranges: Mapping[str, tuple[float, float]], whole: bool,
                    dataset: str) -> tuple[pd.Series, str]:
    """A judge aspect's scores read on the people's scale of `human` (`geval.analysis.scales`; on a categorical
    aspect, its `categories`, as the nearest one's index: `as_labels`), and that reading in words."""
    values = scored.scores[key].astype(float)
    if categories is not None:
        return as_labels(values, scored.scales.get(key), len(categories)), ""
    values, _, said, _ = read_on_people_scale(values, scored.scales[key], human, declared.get(human),
                                              ranges.get(human), whole, dataset)
    return values, said


def drawn_pass_rate(people: Mapping[str, Mapping[str, float]], judge: Mapping[str, float], size: int, draws: int,
                    epsilon: float, alignment: str, groups: Mapping[str, str] | None = None, by: str | None = None,
                    seed: int = 0, fdr: str = "by") -> float:
    """The check of a plan: the share of `draws` studies of `size` real items (two annotators or more
    and the judge's score), drawn without replacement, that the test (`by`, as `alt_test` takes it)
    passes; whole `groups` ({item: group}) of about `size` items in all where a group holds several."""
    kept = [item for item, score in judge.items() if math.isfinite(score)
            and sum(item in labels for labels in people.values()) >= MIN_PER_ITEM]
    rng = np.random.default_rng(seed)
    by_group: dict[str, list[str]] = {}
    for item in kept:
        by_group.setdefault((groups or {}).get(item) or item, []).append(item)
    units = list(by_group.values())
    count = max(1, min(len(units), round(size * len(units) / len(kept))))
    passed = 0
    for _ in range(draws):
        chosen = {item for k in rng.choice(len(units), count, replace=False) for item in units[k]}
        drawn = {name: {i: v for i, v in labels.items() if i in chosen} for name, labels in people.items()}
        result = alt_test({name: labels for name, labels in drawn.items() if labels},
                          {item: judge[item] for item in chosen}, alignment, epsilon, groups=groups, by=by, fdr=fdr)
        passed += result.passed is True
    return passed / draws


def ranking(store: Store, dataset: str, results: Sequence[AltTest]) -> pd.DataFrame:
    """Judges ranked by advantage probability, beside their correlation: one row per template
    version and judge, as every other table (a constant baseline: one row per constant), with the
    aspects it was tested on, its advantage probability and winning rate averaged over them, on how
    many it passed, the mean of its item-level correlations with the people on the items the test
    read (Pearson; accuracy on a categorical aspect), and which test was used."""
    combos = store.combos(dataset).set_index("label")
    categories, items = store.categories(dataset), store.items(dataset)
    by_judge: dict[str, list[AltTest]] = {}
    for result in results:
        by_judge.setdefault(result.judge, []).append(result)
    rows = []
    for label, tested in by_judge.items():
        agreement = []
        if not tested[0].baseline:  # a constant correlates with nothing
            scored = judge_scores(store, dataset, tuple(combos.loc[label, ["template_version", "signature"]]),
                                  items=items)
            for key in scored.scores.columns:
                human = human_aspect_for(scored.template, key, [r.aspect for r in tested])
                if human is not None:  # on the items the test read it on
                    on = next(r.item_ids for r in tested if r.aspect == human)
                    values = scored.scores[key][_among(scored.scores.index, on)] if len(on) else scored.scores[key]
                    if human in categories:  # its labels: the nearest category's
                        values = as_labels(values, scored.scales.get(key), len(categories[human]))
                    agreement.append(_agreement(values, items, human, human in categories))
        passed = [r.passed for r in tested]
        rows.append({"judge": label, "aspects": ", ".join(r.aspect for r in tested),
                     "advantage probability": _mean([r.advantage_probability for r in tested]),
                     "winning rate": _mean([r.winning_rate for r in tested]),
                     "passed": f"{sum(p is True for p in passed)} of {len(passed)}"
                               + (f" ({sum(p is None for p in passed)} without a verdict)" if None in passed else ""),
                     "agreement": _mean(agreement),
                     "reading": ", ".join(dict.fromkeys(r.reading for r in tested)),
                     "test": ", ".join(dict.fromkeys(r.how for r in tested))})
    table = pd.DataFrame(rows)
    return table.sort_values("advantage probability", ascending=False, ignore_index=True) if rows else table


def _mean(values: Sequence[float]) -> float:
    """The mean of the defined values, NaN when none is."""
    defined = [v for v in values if math.isfinite(v)]
    return sum(defined) / len(defined) if defined else math.nan


def _among(index: pd.Index, ids: np.ndarray) -> np.ndarray:
    """Whether each of `index` is one of `ids`: the same ids in the same order (as a rule) compared at once, else a
    million items' ids looked up in a set of them made for it (`Index.isin` of text made an Arrow scalar of each of
    the ids first: six times as long)."""
    values = index.to_numpy(dtype=object)
    if len(values) == len(ids) and bool((values == ids).all()):
        return np.ones(len(values), dtype=bool)
    return np.fromiter(map(set(ids.tolist()).__contains__, values), dtype=bool, count=len(values))


def _agreement(judge: pd.Series, items: list, human: str, categorical: bool) -> float:
    """The judge's item-level Pearson with the people's mean (accuracy against their majority on
    a categorical aspect), without an interval: the ranking's column beside the test."""
    if categorical:
        return accuracy_row(judge, items, human, human)["value"]
    found = item_columns(items)
    where = found.positions(judge.index)  # the judge's items in its order (the last of an id listed twice)
    x, y = judge.to_numpy(dtype=float)[where >= 0], found.mean(human)[where[where >= 0]]
    both = ~(np.isnan(x) | np.isnan(y))
    return correlate("pearson", x[both], y[both]) if both.sum() > 2 else math.nan


def summary(results: Sequence[AltTest]) -> pd.DataFrame:
    """One row per judge and aspect, ranked by advantage probability: the judge, aspect, reading,
    items, which test (over groups, or items taken as independent), annotators, those tested (with
    enough items), winning rate, passed ("yes, as a constant does" where the constant of its aspect passes too:
    `says_little`), advantage probability, verdict."""
    rows = [{"judge": r.judge, "aspect": r.aspect, "reading": r.reading, "alignment": r.alignment,
             "epsilon": r.epsilon, "items": r.items, "test": r.how, "annotators": len(r.annotators),
             "tested": len(r.tested),
             "winning rate": r.winning_rate,
             "passed": "yes, as a constant does" if says_little(r, results) and not r.baseline else  # a bare "yes"
                       {True: "yes", False: "no", None: "no verdict"}[r.passed],                    # read as a pass
             "advantage probability": r.advantage_probability, "verdict": r.verdict()} for r in results]
    table = pd.DataFrame(rows)
    return table.sort_values("advantage probability", ascending=False, ignore_index=True) if rows else table
