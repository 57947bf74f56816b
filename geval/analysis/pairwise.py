"""A pairwise judge (`geval.judging.pairwise`) read against itself and against people, as Zheng et al.
("Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", NeurIPS 2023) read theirs:

- position: consistency (the share of pairs with the same winner in both orders), the first-position
  preference (of the judge's answers naming a side, the share naming the one shown first: 50% is
  none), the pairs whose both answers name the first (second) position, and the tie rate (pairs
  judged a tie);
- agreement with each annotator and with the people's majority: accuracy with ties, accuracy
  without them (the pairs where neither side said tie), Cohen's kappa (`geval.analysis.kappa`),
  beside the people's own (each pair of annotators, and their mean);
- each model's win rate (its pairs won, a tie half) from the judge and from the people (each
  annotator's vote, averaged per pair), on the same pairs; and the share of the people's labels that
  are ties, beside the judge's tie rate.

Pairs are grouped by what they answer (`question_of`: MT-Bench's question, both its turns and every
pair of models; else the item's group), and every 95% interval is the delete-one-group jackknife
over those groups (`geval.analysis.grouped`), none below 10 of them."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from geval.analysis.agreement import SCORE_COLUMNS, human_aspect_for, of_items, resolve
from geval.analysis.grouped import SHARE, SIGNED, Estimate, estimate, group_codes, share_parts
from geval.analysis.held_out import held_out, searched_versions
from geval.analysis.kappa import accuracy_of, confusions, disagreement_weights, kappa_of, with_each_left_out
from geval.analysis.label_errors import MIN_PAIR_ITEMS, majority_of
from geval.data.columns import columns as item_columns
from geval.data.items import Item
from geval.data.labels import MAJORITY_OF, SCORERS
from geval.data.pairs import PREFERENCES
from geval.errors import StoreError
from geval.judging.aspects import PART
from geval.judging.pairwise import FIRST, KIND, SECOND, TIE, label, labels_of, swapped
from geval.store import Store

#: How a share's interval is made (`geval.analysis.grouped.TRANSFORMS`), chosen by the coverage
#: simulation (tests/test_pairwise_stats.py, docs/statistics.md): on the logit, a rare share (a pair
#: with the second position both times, about 6%) is covered; as it is, it was missed up to 19% of the
#: time at 10 questions. Withheld at a share of 0 or 1.
SHARE_TRANSFORM = "logit"
#: Kappa's, likewise (as `geval.analysis.label_errors`).
KAPPA_TRANSFORM = "none"
#: An accuracy's: Wilson's on the pairs' effective number (given at 0 and 1, where the logit's is not).
ACCURACY_TRANSFORM = "wilson"
#: What a pair scores for a side: its win, a tie, its loss (people's votes and the judge's label alike).
WIN = {FIRST: 1.0, TIE: 0.5, SECOND: 0.0}
#: The columns of the agreement tables: who is compared with whom, and the figures.
AGREEMENT_COLUMNS = ["who", "with", "pairs", "accuracy", "pairs without ties", "accuracy without ties", "kappa"]


@dataclass
class Positions:
    """How a pairwise judge answers as the order of a pair changes (see the module's docstring)."""

    pairs: int
    questions: int
    consistency: Estimate
    first: Estimate
    both_first: Estimate
    both_second: Estimate
    ties: Estimate


@dataclass
class Pairwise:
    """One pairwise judge (template version and judge) on a dataset of pairs: `positions`; and when
    people's preferences are there, `agreement` (the judge against each annotator, their mean and the
    majority), `people` (each pair of annotators and their mean) and `wins` (a row per model: its
    pairs, the judge's win rate, the people's)."""

    judge: str
    aspect: str
    human: str
    positions: Positions
    agreement: pd.DataFrame = field(default_factory=pd.DataFrame)
    people: pd.DataFrame = field(default_factory=pd.DataFrame)
    wins: pd.DataFrame = field(default_factory=pd.DataFrame)
    people_ties: Estimate | None = None  # the share of the annotators' labels that are ties
    unit: str = "questions"  # what the groups are, in words (`unit_of`)
    side: str = "people"  # whose labels it is read against (`labeling.HUMAN_SIDES`): the people's, yours or both
    annotators: list[str] = field(default_factory=list)  # who labeled the pairs, as `agreement` names them

    @property
    def against(self) -> str:
        """The majority the judge is read against: "the people's majority", "your labels", ..."""
        return MAJORITY_OF[self.side]

    @property
    def who(self) -> str:
        """Who gave the labels it is read against: "people", "you", "people and you"."""
        return SCORERS[self.side][0]
    notes: list[str] = field(default_factory=list)


def unit_of(pairs: list[Item]) -> str:
    """What the pairs' groups are, in words: questions (pairs that name theirs, MT-Bench's), dialogues
    (pairs of next turns, grouped by their dialogue), else groups."""
    if pairs and all(item.pair is not None and item.pair.question for item in pairs):
        return "questions"
    return "dialogues" if pairs and all(item.context for item in pairs) else "groups"


def question_of(item: Item) -> str:
    """What a pair answers, its unit of grouping: its pair's question (MT-Bench's question number), else
    its group, else itself."""
    return (item.pair.question if item.pair is not None else "") or item.group or item.id


def read(store: Store, dataset: str, combo: tuple[str | None, str | None] | None = None) -> Pairwise:
    """The pairwise judge `combo` (default: the most recently scored) on `dataset`, each aspect's first:
    see `Pairwise`. StoreError when it is not a pairwise judge, or has no pair judged in both orders."""
    return _read(store, dataset, resolve(store, dataset, combo))


def read_all(store: Store, dataset: str) -> list[Pairwise]:
    """Every pairwise judge scored on `dataset` (a prompt search's variants left out), most recent first."""
    combos = store.combos(dataset)
    found = []
    for row in combos.itertuples():
        if not row.searched and store.template(row.template_version).kind == KIND:
            try:
                found.append(_read(store, dataset, (row.template_version, row.signature), row.label))
            except StoreError:  # nothing judged in both orders yet
                continue
    return found


def _read(store: Store, dataset: str, combo: tuple[str, str], name: str | None = None) -> Pairwise:
    version, signature = combo
    template = store.template(version)
    if template.kind != KIND:
        raise StoreError(f"{template.label} is not a pairwise template (kind = \"{template.kind}\"): position "
                         "consistency and win rates are read of a judge that compares two responses")
    if name is None:
        combos = store.combos(dataset)
        match = combos[(combos["template_version"] == version) & (combos["signature"] == signature)]
        name = str(match["label"].iloc[0]) if len(match) else template.label
    items, said = held_out(store.items(dataset), [version], searched_versions(store, dataset))
    by_id = {item.id: item for item in items if item.pair is not None}
    frame = of_items(store.judgments(dataset, version, signature, columns=SCORE_COLUMNS),
                     item_columns(list(by_id.values())))
    aspect = template.aspects[0]
    rows = frame[frame["status"] == "ok"]
    orders = {key: {i: _distribution(d) for i, d in zip(part["item_id"], part["distribution"])}
              for key, part in rows.groupby("aspect")}
    first, second = orders.get(f"{aspect.key}{PART}order1", {}), orders.get(f"{aspect.key}{PART}order2", {})
    ids = [i for i in by_id if i in first and i in second]
    if not ids:
        raise StoreError(f"{name}: no pair of '{dataset}' is judged in both orders yet; score it first")
    pairs = [by_id[i] for i in ids]
    codes, n_groups = group_codes([question_of(item) for item in pairs])
    asked = np.array([[first[i].get(s, 0.0) for s in (FIRST, SECOND, TIE)] for i in ids])
    again = np.array([[second[i].get(s, 0.0) for s in (FIRST, SECOND, TIE)] for i in ids])
    judged = np.array([float(label(_mean(first[i], second[i]))) for i in ids])
    found = Pairwise(name, aspect.name, "", positions(asked, again, codes, n_groups), unit=unit_of(pairs),
                     notes=[said] if said else [])
    human_aspects = list(dict.fromkeys(a for item in items for a in item.human))
    human = human_aspect_for(template, aspect.key, human_aspects)
    categories = store.categories(dataset).get(human or "", ())
    if human is None:
        found.notes.append(f"no human preference to compare with ({aspect.human or aspect.name} is not among the "
                           f"dataset's aspects: {', '.join(human_aspects) or 'none'})")
        return found
    if set(categories) != set(PREFERENCES):
        found.notes.append(f"{human} is not a preference between two responses (its categories are "
                           f"{', '.join(categories) or 'none: it is a score'}; a pair's are {', '.join(PREFERENCES)})")
        return found
    found.human = human
    people, names = _people(pairs, human, categories)
    found.side, found.annotators = store.human_side(dataset), names
    found.agreement = agreement(judged, people, names, codes, n_groups, found.against)
    found.people = among_people(people, names, codes, n_groups)
    found.wins = win_rates(pairs, judged, people, codes, n_groups)
    found.people_ties = share((people == TIE).sum(axis=0).astype(float), np.isfinite(people).sum(axis=0).astype(float),
                              codes, n_groups, "undefined: no annotator labeled these pairs")
    return found


def _distribution(text: str | None) -> dict[int, float]:
    return {int(s): float(p) for s, p in json.loads(text or "{}").items()}


def _mean(first: dict[int, float], second: dict[int, float]) -> dict[int, float]:
    """The pair's judgment: both orders' distributions on its own sides, averaged."""
    back = swapped(second)
    return {s: (first.get(s, 0.0) + back.get(s, 0.0)) / 2 for s in (FIRST, SECOND, TIE)}


def _people(pairs: list[Item], human: str, categories: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
    """An annotators x pairs array of preferences as indexes of PREFERENCES (NaN: not labeled), and the names."""
    names = list(dict.fromkeys(name for item in pairs for name in item.ratings(human)))
    to_ours = {float(k): float(PREFERENCES.index(c)) for k, c in enumerate(categories)}
    people = np.full((len(names), len(pairs)), np.nan)
    for column, item in enumerate(pairs):
        for name, value in item.ratings(human).items():
            people[names.index(name), column] = to_ours.get(float(value), np.nan)
    return people, names


def share(hits: np.ndarray, counted: np.ndarray, codes: np.ndarray, n_groups: int, undefined: str = "undefined",
          transform: str = SHARE_TRANSFORM) -> Estimate:
    """sum(hits) / sum(counted) with its 95% interval over the groups (`codes`) that count a row."""
    value, loo, present = share_parts(hits, counted, codes, n_groups)
    return estimate(float(value), loo, present, transform, undefined, SHARE)


def position_counts(shown_first: np.ndarray, shown_second: np.ndarray, judged: np.ndarray) -> dict[str, tuple]:
    """Each position figure's (hits, counted) per pair, from the position each order's answer names
    (`shown_first`: order 1's, `shown_second`: order 2's, FIRST, SECOND or TIE) and the pair's judgment
    (`judged`, on its own sides); any leading axes are datasets."""
    back = np.where(shown_second == FIRST, SECOND, np.where(shown_second == SECOND, FIRST, TIE))
    everyone = np.ones(np.shape(judged))
    decisive = (shown_first != TIE).astype(float) + (shown_second != TIE)
    return {"consistency": ((shown_first == back).astype(float), everyone),
            "first": ((shown_first == FIRST).astype(float) + (shown_second == FIRST), decisive),
            "both_first": (((shown_first == FIRST) & (shown_second == FIRST)).astype(float), everyone),
            "both_second": (((shown_first == SECOND) & (shown_second == SECOND)).astype(float), everyone),
            "ties": ((judged == TIE).astype(float), everyone)}


def positions(asked: np.ndarray, again: np.ndarray, codes: np.ndarray, n_groups: int) -> Positions:
    """The position figures from each pair's answers in order 1 (`asked`) and order 2 (`again`), both
    (pairs, 3) distributions over the positions asked (first, second, tie)."""
    back = again[:, [SECOND, FIRST, TIE]]  # order 2 on the pair's own sides
    counts = position_counts(labels_of(asked), labels_of(again), labels_of((asked + back) / 2))
    found = {name: share(hits, counted, codes, n_groups,
                         "undefined: every answer is a tie" if name == "first" else "undefined")
             for name, (hits, counted) in counts.items()}
    return Positions(pairs=len(asked), questions=len(set(codes.tolist())), **found)


#: The figures of an agreement row, each a function of a confusion matrix (..., groups, k, k), how its interval is
#: made, its bounds and the pairs it counts (an accuracy's interval is Wilson's on them, as the agreement table's
#: and how the judge errs': `geval.analysis.grouped.wilson_interval`; None: a kappa's, a t-interval).
FIGURES = {"accuracy": (accuracy_of, ACCURACY_TRANSFORM, SHARE, lambda c: c.sum(axis=(-3, -2, -1))),
           "accuracy without ties": (lambda c: accuracy_of(c[..., :TIE, :TIE]), ACCURACY_TRANSFORM, SHARE,
                                     lambda c: c[..., :TIE, :TIE].sum(axis=(-3, -2, -1))),
           "kappa": (lambda c: kappa_of(c, disagreement_weights(len(PREFERENCES))), KAPPA_TRANSFORM, SIGNED, None)}


def _agreement_row(who: str, other: str, truth: np.ndarray, judged: np.ndarray, codes: np.ndarray,
                   n_groups: int) -> tuple[dict, dict[str, tuple]]:
    """Accuracy with and without ties (the pairs where neither side said tie) and Cohen's kappa of
    `judged` against `truth` (indexes of PREFERENCES, NaN where missing); and each figure's (value,
    leave-one-out, present, pairs counted: an accuracy's), for means."""
    keep = np.isfinite(truth) & np.isfinite(judged)
    confusion = confusions(truth, judged, keep, codes, n_groups, len(PREFERENCES))
    parts = {name: (*with_each_left_out(confusion, statistic), counted(confusion) if counted else None)
             for name, (statistic, _, _, counted) in FIGURES.items()}
    row = {"who": who, "with": other, "pairs": int(keep.sum()),
           "pairs without ties": int(confusion[..., :TIE, :TIE].sum()),
           **{name: _estimate(parts[name], name) for name in FIGURES}}
    return row, parts


def _estimate(parts: tuple, name: str) -> Estimate:
    """A figure of FIGURES from its (value, leave-one-out, present, pairs counted), with its interval; a mean of
    accuracies (no pairs counted: `_mean_row`) on the logit, as a share's (it is no one accuracy of its pairs)."""
    value, loo, present, counted = parts
    _, transform, bounds, _ = FIGURES[name]
    transform = SHARE_TRANSFORM if transform == ACCURACY_TRANSFORM and counted is None else transform
    return estimate(float(value), loo, present, transform, "undefined: too few pairs, or one label throughout",
                    bounds, counted)


def _mean_row(who: str, other: str, rows: list[dict], parts: list[dict[str, tuple]]) -> dict:
    """The mean of several rows' figures over the rows with MIN_PAIR_ITEMS pairs, each interval from the
    mean of their leave-one-group-out values (as `geval.analysis.label_errors` averages kappas)."""
    kept = [(row, part) for row, part in zip(rows, parts) if row["pairs"] >= MIN_PAIR_ITEMS]
    row = {"who": who, "with": other, "pairs": sum(r["pairs"] for r, _ in kept),
           "pairs without ties": sum(r["pairs without ties"] for r, _ in kept)}
    if len(kept) == 1:  # the mean of one row is that row, its intervals too (an accuracy's Wilson's, not the logit's)
        return {**row, **{name: kept[0][0][name] for name in FIGURES}}
    for name in FIGURES:
        found = [part[name] for _, part in kept if math.isfinite(part[name][0])]
        if not found:
            row[name] = Estimate(math.nan, note=f"undefined: no row with {MIN_PAIR_ITEMS} pairs and a value")
            continue
        row[name] = _estimate((float(np.mean([f[0] for f in found])), np.mean([f[1] for f in found], axis=0),
                               np.any([f[2] for f in found], axis=0), None), name)
    return row


def agreement(judged: np.ndarray, people: np.ndarray, names: list[str], codes: np.ndarray,
              n_groups: int, majority: str = MAJORITY_OF["people"]) -> pd.DataFrame:
    """The judge's labels against each annotator, their mean (kappa's interval from the mean of the
    leave-one-out kappas) and the annotators' majority, named `majority` (pairs whose majority is tied left out)."""
    rows, parts = [], []
    for name, labels in zip(names, people):
        row, part = _agreement_row("judge", name, labels, judged, codes, n_groups)
        rows.append(row)
        parts.append(part)
    mean = _mean_row("judge", "each annotator, mean", rows, parts)
    read = _agreement_row("judge", majority, majority_of(people, len(PREFERENCES)), judged, codes, n_groups)[0]
    return pd.DataFrame([*rows, mean, read], columns=AGREEMENT_COLUMNS)


def among_people(people: np.ndarray, names: list[str], codes: np.ndarray, n_groups: int) -> pd.DataFrame:
    """Each pair of annotators' agreement (as `agreement`), and their mean: the ceiling beside the judge's."""
    rows, parts = [], []
    for a, b in itertools.combinations(range(len(names)), 2):
        row, part = _agreement_row(names[a], names[b], people[a], people[b], codes, n_groups)
        rows.append(row)
        parts.append(part)
    if not rows:
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    return pd.DataFrame([*rows, _mean_row("people", "each other, mean", rows, parts)],
                        columns=AGREEMENT_COLUMNS)


def win_rates(pairs: list[Item], judged: np.ndarray, people: np.ndarray, codes: np.ndarray,
              n_groups: int) -> pd.DataFrame:
    """Each model's win rate (a tie half) from the judge's labels and from the people's votes (each
    pair's mean over its annotators), on the pairs both judged; a row per model, most pairs first."""
    theirs, ours = _votes(people), _votes(judged[None, :])
    side_a = np.array([item.pair.system_a for item in pairs])
    side_b = np.array([item.pair.system_b for item in pairs])
    both = np.isfinite(theirs) & np.isfinite(ours)
    rows = []
    for model in sorted(set(side_a.tolist()) | set(side_b.tolist()) - {""}):
        as_a, as_b = side_a == model, side_b == model
        keep = (as_a | as_b) & both
        if not keep.any():
            continue
        for_model = {name: np.where(as_a, score, 1.0 - score) * keep
                     for name, score in (("judge", np.nan_to_num(ours)), ("people", np.nan_to_num(theirs)))}
        rows.append({"model": model, "pairs": int(keep.sum()), "questions": len(set(codes[keep].tolist())),
                     "judge": share(for_model["judge"], keep.astype(float), codes, n_groups),
                     "people": share(for_model["people"], keep.astype(float), codes, n_groups)})
    frame = pd.DataFrame(rows, columns=["model", "pairs", "questions", "judge", "people"])
    return frame.sort_values(["pairs", "model"], ascending=[False, True], ignore_index=True)


def _votes(labels: np.ndarray) -> np.ndarray:
    """Each pair's score for its first side (WIN: 1 won, .5 a tie, 0 lost), the mean over the rows
    (annotators) that labeled it; NaN where none did."""
    scores = np.select([labels == s for s in WIN], list(WIN.values()), np.nan)
    counted = np.isfinite(scores).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted > 0, np.nansum(scores, axis=0) / counted, np.nan)


def same_order(wins: pd.DataFrame) -> tuple[bool, list[str]]:
    """Whether the judge's win rates order the models as the people's do, and where they differ: each
    pair of models the two order the other way round ("gpt-4 above claude-v1")."""
    swaps = []
    for (_, a), (_, b) in itertools.combinations(wins.iterrows(), 2):
        judge = a["judge"].value - b["judge"].value
        people = a["people"].value - b["people"].value
        if judge * people < 0:
            above, below = (a, b) if judge > 0 else (b, a)
            swaps.append(f"{above['model']} above {below['model']}")
    return not swaps, swaps
