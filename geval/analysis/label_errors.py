"""How a judge's labels differ from people's, as practitioners read it: Cohen's kappa against the
people's majority and against each annotator, beside the people's own pairwise kappa and Fleiss'
kappa among them (on an ordinal scale: quadratic-weighted kappa, and Krippendorff's alpha, ordinal);
the confusion matrix against the majority; each label's precision, recall and F1; and the share of
items a constant answer would get right (its kappa is 0), with the judge's lead over the best one.
Every interval is over groups (`geval.analysis.grouped`), none below 10 groups.

Items whose annotators' majority is tied are left out of what reads the majority (and counted), as
`geval.analysis.categorical.majority` does (`majority_of`, for every item at once); a pair of annotators counts toward the people's kappa when they
labeled MIN_PAIR_ITEMS items together."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from geval.analysis.annotators import alpha_interval, annotator_matrix, krippendorff_alpha
from geval.analysis.correlation import MIN_GROUPS, few_groups
from geval.analysis.grouped import SHARE, SIGNED, Estimate, codes_of_items, estimate, group_codes, without_each
from geval.analysis.kappa import (
    accuracy_of,
    confusions,
    constant_confusion,
    constant_shares,
    disagreement_weights,
    fleiss_of,
    fleiss_parts,
    kappa_of,
    left_out,
    per_label,
    with_each_left_out,
)
from geval.data.columns import columns as item_columns
from geval.data.items import Item
from geval.wording import counted

#: Items two annotators (or the judge and one) must share for their kappa to count in a mean.
MIN_PAIR_ITEMS = 10
#: Groups up to which Krippendorff's alpha gets its interval here (its jackknife grows as the square of the groups).
ALPHA_INTERVAL_UP_TO = 2000
#: How a kappa's interval is made (`geval.analysis.grouped.TRANSFORMS`), chosen by the coverage simulation.
KAPPA_TRANSFORM = "none"
#: How a share's interval is made (precision, recall, F1, a constant's share): on the logit, chosen likewise.
SHARE_TRANSFORM = "logit"


@dataclass
class LabelErrors:
    """A judge's labels against people's on one aspect (categories, or the points of an ordinal
    scale): see the module's docstring. `confusion` has the majority in its rows and the judge in
    its columns; `per_label` a row per label either side gives (support: the majority's count);
    `constants` a row per label the majority gives."""

    labels: tuple[str, ...]
    weighting: str
    kappa: Estimate
    accuracy: Estimate
    confusion: np.ndarray
    per_label: pd.DataFrame
    constants: pd.DataFrame
    lead: Estimate
    annotators: pd.DataFrame
    judge_mean: Estimate
    people: Estimate
    pairs: int
    difference: Estimate
    among: Estimate
    among_name: str
    items: int
    tied: int
    notes: list[str] = field(default_factory=list)


def label_errors(judge: pd.Series, items: list[Item], human: str, labels: tuple[str, ...],
                 weighting: str = "none", low: float = 0.0) -> LabelErrors:
    """The judge's labels (`judge`, by item id, as label indexes 0..k−1) against the people's of
    `human` (their scores less `low` are the indexes: a category's index, or a scale point less the
    scale's lowest), with `weighting` ("quadratic" on an ordinal scale)."""
    found = item_columns(items)
    chosen, judged = found.matched(judge, human)[1:]  # not their ids (a million: 24 MB held meanwhile)
    codes, n_groups = codes_of_items(found, chosen)
    k, weights = len(labels), disagreement_weights(len(labels), weighting)
    names, people = found.ratings_of(human, chosen)
    people = people - low  # annotators x items, label indexes
    majorities = majority_of(people, k)
    keep = np.isfinite(majorities)
    confusion = confusions(majorities, judged, keep, codes, n_groups, k)

    def kappa(table: np.ndarray) -> np.ndarray:
        return kappa_of(table, weights)

    parts = left_out(confusion)  # made once for every statistic of the confusion below
    present = parts[1]
    accuracy = with_each_left_out(confusion, accuracy_of, parts)
    shares = with_each_left_out(confusion, constant_shares, parts)
    total = confusion.sum(axis=0)
    constants = _constants(total, shares, labels, weights)
    best = int(np.nanargmax(shares[0])) if total.sum() else 0
    lead = estimate(float(accuracy[0] - shares[0][best]), accuracy[1] - shares[1][..., best], present, bounds=SIGNED)
    agreement = _kappa(with_each_left_out(confusion, kappa, parts), _undefined(total))
    given = np.flatnonzero(total.sum(axis=1))  # the labels the majority gives
    if len(given) == 1:  # one label: every judge's kappa against it is 0 (or undefined), saying nothing of the judge
        agreement = Estimate(math.nan, groups=agreement.groups, note=f"undefined: the people's majority gives "
                             f"'{labels[given[0]]}' on every item it reads, so any judge's kappa against it is 0")
    each_label = _per_label(confusion, labels, parts)
    del confusion, parts  # a group's k x k counts each, twice: let go before the annotators' are made
    annotators, judge_mean = _against_each(people, judged, names, codes, n_groups, k, kappa)
    pairs, people_kappa = _pairwise(people, codes, n_groups, k, kappa)
    difference = _difference(judge_mean, people_kappa)
    groups = found.groups[chosen] if n_groups <= ALPHA_INTERVAL_UP_TO else None  # as strings, for alpha's interval
    among, among_name = (_fleiss(people, codes, n_groups, k) if weighting == "none" else
                         _alpha(people, groups, n_groups))  # ordinal: their scores less `low`, the same alpha
    tied = int((~keep).sum())
    notes = [f"{counted(tied, 'item')} left out of what reads the majority: {'their' if tied > 1 else 'its'} "
             "annotators' majority is tied"] if tied else []
    return LabelErrors(
        labels, weighting, agreement, _grouped(accuracy, transform="wilson", items=int(total.sum())), total, each_label,
        constants, lead,
        annotators,
        _kappa(judge_mean, f"undefined: no annotator labeled {MIN_PAIR_ITEMS} of the judged items"),
        _kappa(people_kappa, f"undefined: no two annotators labeled {MIN_PAIR_ITEMS} items together"),
        pairs, difference, among, among_name, int(keep.sum()), int((~keep).sum()), notes)


def majority_of(people: np.ndarray, k: int) -> np.ndarray:
    """Each item's majority label from an annotators x items array of label indexes 0..k−1 (NaN where
    none): NaN where two labels or more tie for the most (`geval.analysis.categorical.majority`)."""
    counts = np.zeros((k, people.shape[1]), np.int32)  # each label's count, made in place (no stack of copies)
    for c in range(k):
        np.sum(people == c, axis=0, out=counts[c])
    top = counts.max(axis=0, initial=0)
    clear = (top > 0) & ((counts == top).sum(axis=0) == 1)
    return np.where(clear, counts.argmax(axis=0), np.nan) if k else np.full(people.shape[1], np.nan)


def _undefined(confusion: np.ndarray) -> str:
    """Why a kappa is undefined: no item, or one label on both sides."""
    if not confusion.sum():
        return "undefined: no item has both a judge label and a clear majority"
    return "undefined: the judge and the people give one and the same label throughout"


def _grouped(parts: tuple, index: int | None = None, undefined: str = "undefined",
             transform: str = SHARE_TRANSFORM, items: int | None = None) -> Estimate:
    """The Estimate of a share computed with each group left out (`with_each_left_out`), or of its
    entry `index` in the last axis (a share of `items` with the transform "wilson")."""
    value, loo, present = parts
    if index is not None:
        value, loo = value[index], loo[..., index]
    return estimate(float(value), loo, present, transform, undefined, SHARE, items)


def _kappa(parts: tuple, undefined: str) -> Estimate:
    """A kappa (value, leave-one-out, present) as an Estimate: its interval as KAPPA_TRANSFORM makes it."""
    value, loo, present = parts
    return estimate(float(value), loo, present, KAPPA_TRANSFORM, undefined, SIGNED)


def _per_label(confusion: np.ndarray, labels: tuple[str, ...], held: tuple | None = None) -> pd.DataFrame:
    """A row per label either side gives: its support (the majority's count), how often the judge
    gives it, its precision, recall and F1 (Estimates). `held`: `left_out(confusion)` when made."""
    value, loo, present = with_each_left_out(confusion, per_label, held)
    parts = {name: (value[name], loo[name], present) for name in ("precision", "recall", "f1")}
    total = confusion.sum(axis=0)
    support, given = total.sum(axis=1), total.sum(axis=0)
    absent = "undefined: no such label among the people's"  # their majority never gives it
    why = {"precision": "undefined: the judge never gives it", "recall": absent, "f1": absent}
    rows = [{"label": label, "support": int(support[c]), "judge gives": int(given[c]),
             **{name: _grouped(parts[name], c, undefined=why[name]) for name in parts}}
            for c, label in enumerate(labels) if support[c] or given[c]]
    return pd.DataFrame(rows, columns=["label", "support", "judge gives", "precision", "recall", "f1"])


def _constants(total: np.ndarray, shares, labels: tuple[str, ...], weights: np.ndarray) -> pd.DataFrame:
    """A row per label the majority gives, commonest first: the share of items a judge answering it
    throughout gets right, and that judge's kappa (0)."""
    support = total.sum(axis=1)
    rows = [{"label": labels[c], "share": _grouped(shares, c),
             "kappa": float(kappa_of(constant_confusion(total, c), weights))}
            for c in np.argsort(-support, kind="stable") if support[c]]
    return pd.DataFrame(rows, columns=["label", "share", "kappa"])


def _against_each(people: np.ndarray, judged: np.ndarray, names: list[str], codes: np.ndarray, n_groups: int,
                  k: int, kappa) -> tuple[pd.DataFrame, tuple]:
    """The judge's kappa against each annotator (a row each), and their mean over the annotators with
    MIN_PAIR_ITEMS items (value, leave-one-out, present)."""
    rows, counted = [], []
    for name, labels in zip(names, people):
        shared = np.isfinite(labels)
        parts = with_each_left_out(confusions(labels, judged, shared, codes, n_groups, k), kappa)
        found = _kappa(parts, "undefined: one and the same label on both sides")
        why = _left_out(parts, int(shared.sum()))
        rows.append({"annotator": name, "items": int(shared.sum()), "kappa": found,
                     "in the mean": f"no: {why}" if why else "yes"})
        if not why:
            counted.append(parts)
    return pd.DataFrame(rows, columns=["annotator", "items", "kappa", "in the mean"]), _mean(counted, n_groups)


def people_agreement(items: list[Item], human: str, low: int, k: int) -> tuple[pd.DataFrame, Estimate, Estimate]:
    """How much the annotators of `items` agree on `human`, a scale of k points from `low`: a row per
    pair of annotators with their quadratic-weighted kappa (an Estimate, over groups) and the items
    they share; the mean of the pairs with MIN_PAIR_ITEMS items together; Krippendorff's alpha
    (ordinal) among them all."""
    ratings = annotator_matrix(items, human)
    people = ratings - low
    groups = np.array([item.group or item.id for item in items])
    codes, n_groups = group_codes(groups)
    weights = disagreement_weights(k, "quadratic")
    names = list(dict.fromkeys(name for item in items for name in item.ratings(human)))
    rows = []
    for a, b in itertools.combinations(range(len(people)), 2):
        shared = np.isfinite(people[a]) & np.isfinite(people[b])
        parts = with_each_left_out(confusions(people[a], people[b], shared, codes, n_groups, k),
                                   lambda table: kappa_of(table, weights))
        why = _left_out(parts, int(shared.sum()))
        rows.append({"pair": f"{names[a]} and {names[b]}", "items": int(shared.sum()),
                     "kappa": _kappa(parts, "undefined: one and the same label on both sides"),
                     "in the mean": f"no: {why}" if why else "yes"})
    _, mean = _pairwise(people, codes, n_groups, k, lambda table: kappa_of(table, weights))
    alpha = _alpha(ratings, groups)[0] if len(items) >= MIN_PAIR_ITEMS else Estimate(  # as the kappa's mean needs
        math.nan, groups=n_groups, note=f"undefined: {len(items)} items labeled by two or more, fewer than "
                                        f"{MIN_PAIR_ITEMS}")
    return (pd.DataFrame(rows, columns=["pair", "items", "kappa", "in the mean"]),
            _kappa(mean, f"undefined: no two annotators labeled {MIN_PAIR_ITEMS} items together"), alpha)


def _pairwise(people: np.ndarray, codes: np.ndarray, n_groups: int, k: int, kappa) -> tuple[int, tuple]:
    """The people's kappa, each pair of annotators with MIN_PAIR_ITEMS items together, averaged over
    those pairs (`_left_out` says which are not): (pairs, (value, leave-one-out, present))."""
    counted = []
    for a, b in itertools.combinations(range(len(people)), 2):
        shared = np.isfinite(people[a]) & np.isfinite(people[b])
        if shared.sum() < MIN_PAIR_ITEMS:
            continue
        parts = with_each_left_out(confusions(people[a], people[b], shared, codes, n_groups, k), kappa)
        if not _left_out(parts, int(shared.sum())):
            counted.append(parts)
    return len(counted), _mean(counted, n_groups)


def _left_out(parts: tuple, items: int) -> str:
    """Why a kappa (value, leave-one-out, present) is left out of a mean ("" when it is not): too few
    items, undefined, or undefined when some group is left out (its jackknife would be)."""
    value, loo, present = parts
    if items < MIN_PAIR_ITEMS:
        return f"fewer than {MIN_PAIR_ITEMS} items"
    if not math.isfinite(value):
        return "undefined"
    return "" if np.isfinite(loo[present]).all() else "undefined when some group is left out"


def _mean(parts: list[tuple], n_groups: int) -> tuple[float, np.ndarray, np.ndarray]:
    """The mean of several statistics and of their leave-one-out values, over the groups any of them holds."""
    if not parts:
        return math.nan, np.full(n_groups, np.nan), np.zeros(n_groups, bool)
    return (float(np.mean([p[0] for p in parts])), np.mean([p[1] for p in parts], axis=0),
            np.any([p[2] for p in parts], axis=0))


def _difference(judge: tuple, people: tuple) -> Estimate:
    """The judge's mean kappa with an annotator minus the people's mean pairwise kappa (paired by group)."""
    return estimate(judge[0] - people[0], judge[1] - people[1], judge[2] | people[2],
                    undefined="undefined, as the judge's mean kappa or the people's is", bounds=(-2.0, 2.0))


def _fleiss(people: np.ndarray, codes: np.ndarray, n_groups: int, k: int) -> tuple[Estimate, str]:
    """Fleiss' kappa among the annotators, on the items two or more of them labeled."""
    counts = np.stack([(people == c).sum(axis=0) for c in range(k)], axis=-1).astype(float)
    parts = fleiss_parts(counts, codes, n_groups)
    total, loo = without_each(parts, axis=-2)
    found = _kappa((fleiss_of(total), fleiss_of(loo), parts[:, 1] > 0),
                   "undefined: no item has two annotators, or they give one label throughout")
    return found, "Fleiss' kappa"


def _alpha(ratings: np.ndarray, groups: np.ndarray | None, count: int | None = None) -> tuple[Estimate, str]:
    """Krippendorff's alpha, ordinal, among the annotators (`geval.analysis.annotators`), on items in
    `groups` (`count` of them, when known; None above ALPHA_INTERVAL_UP_TO of them, where no interval is made)."""
    value = krippendorff_alpha(ratings, "ordinal")
    count = len(set(groups.tolist())) if count is None else count
    if not math.isfinite(value):
        return Estimate(math.nan, groups=count, note="undefined: no two scores on an item, or one value"), \
            "Krippendorff's alpha (ordinal)"
    if count > ALPHA_INTERVAL_UP_TO:
        return Estimate(value, groups=count, note=f"no interval here above {ALPHA_INTERVAL_UP_TO} groups (its jackknife "
                                                   "grows as the square of the groups)"), "Krippendorff's alpha (ordinal)"
    low, high = alpha_interval(ratings, groups, "ordinal")
    note = few_groups(count) if count < MIN_GROUPS else \
        ("" if math.isfinite(low) else "no interval: undefined when some group is left out")
    return Estimate(value, low, high, count, note), "Krippendorff's alpha (ordinal)"
