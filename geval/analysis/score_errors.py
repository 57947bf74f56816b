"""How a judge's scores differ from people's beyond correlation, on the people's own scale:

- **offset**: the mean of judge − people (the people's mean score of each item): harsh below 0,
  lenient above; a judge that ranks as people do (Pearson at least HIGH_CORRELATION) while its
  offset is at least LARGE_OFFSET of the people's standard deviation is named as such;
- **spread and scale use**: the judge's standard deviation over a person's (a ratio), the share of
  its scores at each point of the scale (rounded to it) beside the share of the people's, and the
  share at the inner points against the people's (crowding the middle);
- **Bland-Altman**: the difference against the mean of the two, and its 95% limits of agreement
  (mean difference ± 1.96 standard deviations);
- **length**: Spearman's correlation of the judge's error (judge − people) with the response's
  length in words, beside each annotator's error against the mean of the others (leave-one-out:
  how far one person's error follows length), and the judge minus a person on the same references
  (each annotator's others), averaged over the annotators. The annotators' errors against each
  other sum to 0 on every item, so their correlations average to about 0 by construction: no
  yardstick of their own, which is why each annotator's is kept apart.

Intervals are over groups: the jackknife of per-group sums (`geval.analysis.grouped`; a ratio of
spreads on the log scale), the correlations' as every correlation's in the app
(`geval.analysis.correlation`); none below 10 groups."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats

from geval.analysis.baselines import length as words
from geval.analysis.correlation import EXACT_UP_TO
from geval.analysis.grouped import (
    SHARE,
    SIGNED,
    Estimate,
    bounded,
    codes_of_items,
    correlation_with_each_left_out,
    estimate,
    group_codes,
    group_sums,
    renumbered,
    t_interval,
    without_each,
)
from geval.data.columns import at_places
from geval.data.columns import columns as item_columns
from geval.data.items import Item, named

#: An offset this many of the people's standard deviations (of their mean scores) is large.
LARGE_OFFSET = 0.5
#: A Pearson correlation from which a judge ranks responses as people do.
HIGH_CORRELATION = 0.5
#: The limits of agreement: the mean difference ± this many standard deviations.
LIMITS = 1.96
#: Scales of up to this many whole-number points are read point by point.
MOST_POINTS = 11


@dataclass
class ScoreErrors:
    """A judge's scores against people's on one aspect, on the people's scale (see the module's
    docstring). `shares` has a row per scale point (judge, people and their difference, Estimates)
    when people give whole numbers; `annotators` a row per annotator of the length reading; `frame`
    the items (judge, people, difference, mean, words, group) the Bland-Altman figure draws."""

    scale: tuple[float, float]
    offset: Estimate
    people_sd: float
    pearson: Estimate
    spread: Estimate
    spread_of: str
    shares: pd.DataFrame
    middle: Estimate | None
    lower: Estimate
    upper: Estimate
    length: Estimate
    annotators: pd.DataFrame
    length_difference: Estimate
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    scale_named: str = ""  # the scale in words ("their 1-5 scale"; default that)

    def __post_init__(self):
        self.scale_named = self.scale_named or f"their {self.scale[0]:g}-{self.scale[1]:g} scale"

    @property
    def large_offset(self) -> bool:
        """Whether the offset is clearly away from 0 and at least LARGE_OFFSET people's standard deviations."""
        return (self.offset.above() or self.offset.below()) and abs(self.offset.value) >= LARGE_OFFSET * self.people_sd

    @property
    def stretched(self) -> bool:
        """Whether the judge's scores spread clearly more or less widely than a person's (the spread's
        interval clear of 1): then its offset changes along the scale, a stretch rather than a shift."""
        return self.spread.above(1.0) or self.spread.below(1.0)

    @property
    def ranks_but_offset(self) -> bool:
        """A judge that ranks as people do (Pearson at least HIGH_CORRELATION) with a large offset."""
        return self.large_offset and self.pearson.value >= HIGH_CORRELATION


def score_errors(judge: pd.Series, items: list[Item], human: str, scale: tuple[float, float]) -> ScoreErrors:
    """The judge's scores (`judge`, by item id, already on the people's `scale`) against the people's
    scores of `human` on the same items."""
    found = item_columns(items)
    ids, chosen, values = found.matched(judge, human)  # every one (as a rule): the judge's own index and values
    people = at_places(found.mean(human), chosen)
    groups = found.groups[chosen]  # read as strings where grouped (`group_codes`)
    codes, n_groups = codes_of_items(found, chosen)
    names, ratings = found.ratings_of(human, chosen)
    difference = values - people
    offset = _mean(difference, codes, n_groups)
    lower, upper = _limits(difference, codes, n_groups)
    pearson = _correlation(values, people, groups, (codes, n_groups))
    one_each = ratings.shape[0] < 2
    spread = _spread(values, ratings, codes, n_groups)
    points = _points(ratings, scale)
    shares, middle = _scale_use(values, ratings, points, codes, n_groups) if points is not None else \
        (pd.DataFrame(columns=["point", "judge", "people", "difference"]), None)
    length = at_places(found.memo(("words",), lambda: np.asarray(words([item.response for item in found.items]))),
                       chosen)
    ranks = stats.rankdata(length) if len(length) > EXACT_UP_TO else None  # ranked once for each correlation
    annotators, paired = length_against_people(values, ratings, names, length, groups, (codes, n_groups), ranks)
    with_length = _correlation(difference, length, groups, (codes, n_groups), "spearman", ranks)
    del ratings, ranks  # read: let go before the items' table is made (a million items: 24 MB)
    frame = pd.DataFrame({"item_id": ids, "judge": values, "people": people, "difference": difference,
                          "mean": (values + people) / 2, "words": length,
                          "group": found.table_column_at("groups", lambda: found.groups, chosen)},
                         copy=False)  # of its columns: no block of five copied into one
    mean_only = one_each and not named(names)
    notes = [f"{_one_score(names)}: the spread and the scale's use are read against those scores, which spread less "
             "than a person's where they are the people's mean"] if mean_only else []
    return ScoreErrors(scale, offset, float(np.std(people, ddof=1)) if len(people) > 1 else math.nan, pearson,
                       spread, "the people's mean scores" if mean_only else "a person's scores", shares, middle,
                       lower, upper, with_length, annotators, paired, frame, notes)


def _one_score(names: list[str]) -> str:
    """Why each item has one score, by who gave it (`names`, one or none): an annotator named, else a file that gives
    one score per item, the people's mean or one person's."""
    if names and named(names):
        return f"one annotator ({names[0]}), no one else to compare with"
    return "one score per item (the file gives one: the people's mean, or one person's)"


def _sums(columns: list[np.ndarray], codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the sum of each column (groups x columns)."""
    return np.stack([group_sums(column, codes, n_groups) for column in columns], axis=-1)


def _mean(values: np.ndarray, codes: np.ndarray, n_groups: int) -> Estimate:
    sums = _sums([values, np.ones_like(values)], codes, n_groups)
    total, loo = without_each(sums, axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return estimate(float(total[0] / total[1]), loo[:, 0] / loo[:, 1], sums[:, 1] > 0,
                        undefined="undefined: no item")


def moments(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean and standard deviation (n − 1) from sums [n, Σx, Σx²] in the last axis."""
    n, s, ss = sums[..., 0], sums[..., 1], sums[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
        return mean, np.sqrt(np.maximum(ss - n * mean ** 2, 0.0) / (n - 1))


def limits_with_intervals(per_group: np.ndarray, present=None) -> dict[str, tuple]:
    """Bland-Altman's 95% limits of agreement (mean difference ± LIMITS standard deviations) and
    each one's 95% interval, from per-group sums [n, Σd, Σd²] of the differences (..., groups, 3):
    {"lower": (value, low, high), "upper": ...}. The interval combines the mean's jackknife t-interval
    with the standard deviation's (on the log scale) by the method of variance estimates recovery
    (MOVER; Zou 2013, for limits of agreement with several observations per subject): the jackknife
    of the limits themselves missed the true limit in up to 10% of simulated datasets."""
    total, loo = without_each(per_group, axis=-2)
    (mean, sd), (mean_loo, sd_loo) = moments(total), moments(loo)
    mean_low, mean_high = t_interval(mean, mean_loo, present)
    width, width_loo = LIMITS * sd, LIMITS * sd_loo
    width_low, width_high = t_interval(width, width_loo, present, "log")
    below, above = np.hypot(mean - mean_low, width_high - width), np.hypot(mean_high - mean, width - width_low)
    return {"lower": (mean - width, mean - width - below, mean - width + above),
            "upper": (mean + width, mean + width - np.hypot(mean - mean_low, width - width_low),
                      mean + width + np.hypot(mean_high - mean, width_high - width))}


def _limits(difference: np.ndarray, codes: np.ndarray, n_groups: int) -> tuple[Estimate, Estimate]:
    sums = _sums([np.ones_like(difference), difference, difference ** 2], codes, n_groups)
    present = sums[:, 0] > 0
    found = limits_with_intervals(sums, present)
    if not present.sum() or sums[:, 0].sum() < 2:
        return (Estimate(math.nan, groups=int(present.sum()), note="undefined: fewer than 2 items"),) * 2
    return tuple(bounded(float(value), float(low), float(high), int(present.sum()))
                 for value, low, high in (found["lower"], found["upper"]))


def spread_ratio(judge_sums: np.ndarray, people_sums: np.ndarray) -> np.ndarray:
    """The judge's standard deviation over the people's, from sums [n, Σx, Σx²] of each."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return moments(judge_sums)[1] / moments(people_sums)[1]


def _spread(values: np.ndarray, ratings: np.ndarray, codes: np.ndarray, n_groups: int) -> Estimate:
    """The judge's spread over a person's (every annotator's score pooled; with one score per item, that score)."""
    known = np.isfinite(ratings)
    given = np.where(known, ratings, 0.0)
    judge = _sums([np.ones_like(values), values, values ** 2], codes, n_groups)
    people = _sums([known.sum(axis=0).astype(float), given.sum(axis=0), (given ** 2).sum(axis=0)], codes, n_groups)
    (judge_total, judge_loo), (people_total, people_loo) = without_each(judge, -2), without_each(people, -2)
    return estimate(float(spread_ratio(judge_total, people_total)), spread_ratio(judge_loo, people_loo),
                    judge[:, 0] > 0, "log", "undefined: the judge or the people give one score throughout")


def _points(ratings: np.ndarray, scale: tuple[float, float]) -> np.ndarray | None:
    """The scale's whole-number points when every score people gave is one of them, else None."""
    seen = ratings[np.isfinite(ratings)]
    points = np.arange(math.floor(scale[0]), math.ceil(scale[1]) + 1, dtype=float)
    if not len(seen) or len(points) > MOST_POINTS or not np.isin(seen, points).all():
        return None
    return points


def nearest_point(values, points: np.ndarray) -> np.ndarray:
    """The index of the whole-number point of `points` (consecutive) each value rounds to (halves up)."""
    numbers = values.to_numpy(dtype=float) if isinstance(values, pd.Series) else np.asarray(values, dtype=float)
    return np.clip(np.floor(numbers - points[0] + 0.5), 0, len(points) - 1)  # numpy given no Series: `scales._clipped`


def share_parts(values: np.ndarray, weights: np.ndarray, points: np.ndarray, codes: np.ndarray,
                n_groups: int) -> np.ndarray:
    """Per group, how many of `values` (..., rows) fall on each of `points` (rounded to them, each row
    weighing `weights`), then the weight of all: (..., groups, points + 1)."""
    nearest = nearest_point(values, points)
    columns = [np.where(nearest == p, weights, 0.0) for p in range(len(points))] + [weights]
    return np.stack([group_sums(column, codes, n_groups) for column in columns], axis=-1)


def shares_of(parts: np.ndarray) -> np.ndarray:
    """Each point's share (..., points) from `share_parts` summed over groups."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return parts[..., :-1] / parts[..., -1:]


def _scale_use(values: np.ndarray, ratings: np.ndarray, points: np.ndarray, codes: np.ndarray,
               n_groups: int) -> tuple[pd.DataFrame, Estimate | None]:
    """The share of each point the judge (rounded) and the people (every score) give, their difference,
    and the difference at the inner points (None on a scale of two points)."""
    judge = share_parts(values, np.ones_like(values), points, codes, n_groups)
    known = np.isfinite(ratings)
    people = sum(share_parts(np.where(row, r, points[0]), row.astype(float), points, codes, n_groups)
                 for r, row in zip(ratings, known))
    (judge_total, judge_loo), (people_total, people_loo) = without_each(judge, -2), without_each(people, -2)
    judged, given = shares_of(judge_total), shares_of(people_total)
    judged_loo, given_loo = shares_of(judge_loo), shares_of(people_loo)
    present = judge[:, -1] > 0
    rows = [{"point": float(point), "judge": estimate(float(judged[p]), judged_loo[:, p], present, "logit",
                                                      bounds=SHARE),
             "people": estimate(float(given[p]), given_loo[:, p], people[:, -1] > 0, "logit", bounds=SHARE),
             "difference": estimate(float(judged[p] - given[p]), judged_loo[:, p] - given_loo[:, p], present,
                                    bounds=SIGNED)}
            for p, point in enumerate(points)]
    middle = None
    if len(points) > 2:
        inner = slice(1, -1)
        middle = estimate(float(judged[inner].sum() - given[inner].sum()),
                          judged_loo[:, inner].sum(axis=-1) - given_loo[:, inner].sum(axis=-1), present,
                          bounds=SIGNED)
    return pd.DataFrame(rows, columns=["point", "judge", "people", "difference"]), middle


def _correlation(x: np.ndarray, y: np.ndarray, groups: np.ndarray, codes: tuple[np.ndarray, int],
                 metric: str = "pearson", y_ranks: np.ndarray | None = None) -> Estimate:
    """One item-level correlation with its interval over groups (the jackknife on Fisher's z, as
    `geval.analysis.correlation` gives every one); `codes`: `group_codes(groups)`; `y_ranks`: y's
    ranks when known."""
    value, loo, present, note = correlation_with_each_left_out(metric, x, y, groups, codes, y_ranks)
    found = estimate(value, loo, present, "fisher", f"undefined: a side is constant ({len(x)} items)", SIGNED)
    return replace(found, note="; ".join(filter(None, [found.note, note])))


def length_against_people(values: np.ndarray, ratings: np.ndarray, names: list[str], length: np.ndarray,
                          groups: np.ndarray, codes: tuple[np.ndarray, int] | None = None,
                          ranks: np.ndarray | None = None) -> tuple[pd.DataFrame, Estimate]:
    """On the items every annotator scored (`ratings`: annotators x items, named `names`): each
    annotator's error against the mean of the others correlated with `length` (a row each), and the
    judge's (`values`) error against the same others minus the annotator's, averaged over the
    annotators (paired by group). The annotators' correlations are not averaged: their errors sum to 0
    on every item, so their mean is about 0 whatever each one does. `codes`: `group_codes(groups)` and
    `ranks`: `length`'s ranks, when known."""
    complete = np.isfinite(ratings).all(axis=0)
    count = int(complete.sum())
    table = pd.DataFrame(columns=["annotator", "items", "spearman"])
    if ratings.shape[0] < 2 or count < 3:
        why = (f"undefined: {_one_score(names)}" if ratings.shape[0] < 2 else
               f"undefined: {count} items scored by every annotator")
        return table, Estimate(math.nan, note=why)
    if complete.all():  # as a rule: the arrays themselves, not copies of them (a million items: 40 MB)
        matrix, judge, words_, kept = ratings, values, length, groups
    else:
        matrix, judge, words_, kept = ratings[:, complete], values[complete], length[complete], groups[complete]
        codes = None if codes is None else renumbered(codes[0][complete], codes[1])
    codes = group_codes(kept) if codes is None else codes
    if count <= EXACT_UP_TO:
        ranks = None
    elif ranks is None or count < len(length):  # ranked once for every correlation below
        ranks = stats.rankdata(words_)
    versus, rows = [], []
    for k in range(len(matrix)):
        others = np.delete(matrix, k, axis=0).mean(axis=0)
        own = correlation_with_each_left_out("spearman", matrix[k] - others, words_, kept, codes, ranks)
        machine = correlation_with_each_left_out("spearman", judge - others, words_, kept, codes, ranks)
        versus.append((machine[0] - own[0], machine[1] - own[1]))
        found = estimate(own[0], own[1], own[2], "fisher", "undefined: constant", SIGNED)
        rows.append({"annotator": names[k], "items": count,
                     "spearman": replace(found, note="; ".join(filter(None, [found.note, own[3]])))})
    present, note = own[2], own[3]
    difference = estimate(float(np.mean([v[0] for v in versus])), np.mean([v[1] for v in versus], axis=0), present,
                          undefined="undefined: an annotator's or the judge's error is constant", bounds=(-2.0, 2.0))
    return (pd.DataFrame(rows, columns=["annotator", "items", "spearman"]),
            replace(difference, note="; ".join(filter(None, [difference.note, note]))))
