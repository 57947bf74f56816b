"""Do two judges (or template versions) agree with people differently on the same items?

- `paired_difference`: the difference of the two correlations with a 95% CI and a p-value from
  the delete-one-group jackknife (each group, a dialogue or document, left out in turn; both
  correlations recomputed on the same groups, so the difference is paired) with Student's t on
  groups − 1 degrees of freedom (`geval.analysis.correlation`: chosen by a null simulation, it
  holds its 5% at 10-30 groups where the percentile bootstrap gave up to 11%);
- `williams_test`: Williams' t for two dependent correlations that share the human variable
  (Steiger 1980, eq. 7), kept on `Comparison` for reference only: it takes the items as
  independent, and with responses grouped by dialogue it rejects two equally good judges in
  9-19% of datasets at 10-30 groups (tests/test_stats.py), so no page, report or table shows it;
- `paired_accuracy`: on an aspect labeled with categories (pass/fail, a preference), the difference of the two
  accuracies against the people's majority, paired the same way;
- `compare`: both, for two scored combinations of a stored dataset (`compared_humans`: the
  human aspects they can be compared on), or `paired_accuracy` on labels;
- `paired_columns`: B minus A on several columns at once (each aspect, their average), at the
  item or the group level, every column with the same groups left out (the leaderboard's
  comparison of every judge row with one row of reference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from geval.analysis.agreement import human_aspect_for
from geval.analysis.categorical import METRIC as ACCURACY
from geval.analysis.correlation import (
    METRICS,
    MIN_GROUPS,
    Resamples,
    correlate,
    groups_note,
    interval_note,
    item_bootstrap,
    jackknife_df,
    jackknife_interval,
    jackknife_p,
    leave_one_out_means,
    within_groups,
)
from geval.analysis.disagreement import disagreements
from geval.analysis.grouped import group_codes, share_parts
from geval.analysis.held_out import held_out, searched_versions
from geval.data.declared import aspect_words
from geval.errors import StoreError
from geval.store import Store

MIN_COMMON_ITEMS = 3
#: The name of `paired_columns`' row for the mean of the other rows' differences.
AVERAGE = "average"


@dataclass(frozen=True)
class Comparison:
    """B minus A: how much better (positive) or worse B's scores correlate with the human ones.

    `a` and `b` are the two correlations on the common items, `difference` = b - a with its
    paired 95% CI [`low`, `high`] and two-sided p (the jackknife over groups with Student's t).
    `williams_t` is signed like `difference` (positive when B agrees better); it and
    `williams_p` are for reference only: Williams' test takes the items as independent (its
    assumption), so with several items per group its p-value is too small (9-19% below 0.05
    for equally good judges at 10-30 groups of 6, where `p` keeps 3-5%). Both are NaN where
    undefined (Kendall, n < 4) and, as `p` is, from fewer than MIN_GROUPS groups.
    """

    metric: str
    a: float
    b: float
    difference: float
    low: float
    high: float
    p: float
    williams_t: float
    williams_p: float
    n_items: int
    n_groups: int
    note: str = ""  # why the interval and p-value are missing, when they are
    searched: str = ""  # what prompt searches did with A or B: the groups left out or kept (`geval.analysis.held_out`)


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Williams' t and its two-sided p (df = n - 3) for H0: r12 = r13 (Steiger 1980, eq. 7).

    Variable 1 is shared: r12 = corr(human, A), r13 = corr(human, B), r23 = corr(A, B).
    t > 0 when A correlates more with the human scores than B. NaN when n < 4 or an input is NaN.

        t = (r12 - r13) * sqrt((n - 1)(1 + r23))
            / sqrt(2 (n - 1)/(n - 3) |R| + rbar^2 (1 - r23)^3)
        |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,   rbar = (r12 + r13) / 2
    """
    nan = float("nan")
    if n < 4 or not all(math.isfinite(r) for r in (r12, r13, r23)):
        return nan, nan
    if r12 == r13:
        return 0.0, 1.0
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    denominator = 2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3
    if not denominator > 0:
        return nan, nan
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denominator)
    return float(t), float(2 * stats.t.sf(abs(t), n - 3))


def paired_difference(judge_a, judge_b, human, groups, metric: str = "pearson") -> Comparison:
    """Correlation of B with `human` minus that of A, on the items where all three are scored.

    Rows with NaN in any of the three are dropped first. Both correlations are recomputed with
    each group left out in turn (paired); the CI is the difference ± t(0.975, groups − 1) times
    the jackknife's standard error, and the p-value the two-sided t (`jackknife_p`). Williams'
    test uses the same correlations (Pearson, or Pearson on ranks for Spearman; NaN for Kendall).

    Raises StoreError when fewer than 3 items are scored by both, or a correlation is undefined.
    """
    if metric not in METRICS:
        raise ValueError(f"metric '{metric}' is unknown; use one of {', '.join(METRICS)}")
    a, b, h = (np.asarray(v, dtype=float) for v in (judge_a, judge_b, human))
    g = np.asarray(groups).astype(str)
    if not len(a) == len(b) == len(h) == len(g):
        raise ValueError(f"judge_a, judge_b, human and groups must be equally long "
                         f"(got {len(a)}, {len(b)}, {len(h)}, {len(g)})")
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(h))
    a, b, h, g = a[keep], b[keep], h[keep], g[keep]
    if len(a) < MIN_COMMON_ITEMS:
        raise StoreError(
            f"only {len(a)} item(s) are scored by both and by people; a comparison needs at least "
            f"{MIN_COMMON_ITEMS}: score the same items with both template versions / judges"
        )
    r_a, r_b = correlate(metric, a, h), correlate(metric, b, h)
    for name, value, scores in (("A", r_a, a), ("B", r_b, b)):
        if math.isnan(value):
            why = (f"{name} gives all {len(a)} common items the same score, so there is nothing to compare (more "
                   "items will not change that; a judge or template whose scores vary will)" if np.ptp(scores) == 0
                   else f"people gave all {len(a)} common items the same score: compare on more items or another "
                   "human aspect")
            raise StoreError(f"the {metric} correlation of {name} with the human scores is undefined: {why}")
    resamples = Resamples.leave_one_out(g)
    diffs = item_bootstrap(b, h, resamples, (metric,))[metric] - item_bootstrap(a, h, resamples, (metric,))[metric]
    difference = r_b - r_a
    note = interval_note(g)
    low, high = difference_interval(difference, diffs) if resamples.enough else (math.nan, math.nan)
    p = jackknife_p(difference, diffs) if resamples.enough else math.nan
    if resamples.enough and not math.isfinite(p):
        note = "no interval: a correlation is undefined with some group left out"
    if metric == "kendall" or not resamples.enough:  # below MIN_GROUPS groups no p-value, not even Williams'
        t, p_williams = float("nan"), float("nan")
    else:
        r_ab = correlate(metric, a, b)
        t, p_williams = williams_test(r_a, r_b, r_ab if math.isfinite(r_ab) else 0.0, len(a))
        t = -t if math.isfinite(t) and t != 0 else t  # signed like B - A
    return Comparison(metric, float(r_a), float(r_b), float(difference), low, high, p, t, p_williams,
                      int(len(a)), resamples.n_groups, note)


def paired_accuracy(hits_a, hits_b, groups) -> Comparison:
    """B's accuracy minus A's on an aspect labeled with categories, on the items both are read on: each item's hit
    (1 when the judge's label is the people's majority, 0 when not, NaN when either has none), both accuracies
    recomputed with each group left out in turn (paired), the interval and p-value the jackknife with Student's t
    on groups − 1 as `paired_difference`'s (its level simulated in tests/test_stats.py). No Williams' test: there
    is no correlation. Raises StoreError when fewer than 3 items are read by both."""
    a, b = (np.asarray(v, dtype=float) for v in (hits_a, hits_b))
    g = np.asarray(groups).astype(str)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b, g = a[keep], b[keep], g[keep]
    if len(a) < MIN_COMMON_ITEMS:
        raise StoreError(f"only {len(a)} item(s) are labeled by both and by people; a comparison needs at least "
                         f"{MIN_COMMON_ITEMS}: score the same items with both template versions / judges")
    codes, n_groups = group_codes(g)
    difference = float(b.mean() - a.mean())
    low = high = p = math.nan
    if n_groups >= MIN_GROUPS:  # both accuracies without each group in turn
        left_out = [share_parts(hits, np.ones_like(hits), codes, n_groups)[1] for hits in (a, b)]
        diffs = left_out[1] - left_out[0]
        low, high = difference_interval(difference, diffs)
        low, high, p = max(low, -1.0), min(high, 1.0), jackknife_p(difference, diffs)
    return Comparison(ACCURACY, float(a.mean()), float(b.mean()), difference, low, high, p, math.nan, math.nan,
                      int(len(a)), n_groups, groups_note(n_groups))


def difference_interval(difference: float, loo: np.ndarray, units: int | None = None) -> tuple[float, float]:
    """The 95% interval of a difference of two correlations from its leave-one-group-out values (the
    jackknife with Student's t), kept inside [-2, 2], where such a difference lies."""
    low, high = jackknife_interval(difference, loo, correlation=False, units=units)
    return max(low, -2.0), min(high, 2.0)


def compare(store: Store, dataset: str, a: tuple[str, str], b: tuple[str, str], human: str,
            metric: str = "pearson") -> Comparison:
    """`paired_difference` of two scored (template version, signature) pairs against the human
    aspect `human`, each through its judge aspect mapped to it, on the items both scored outside
    the groups a prompt search chose either on (`geval.analysis.held_out`; `searched` says so); on an aspect
    labeled with categories, `paired_accuracy` whatever `metric` is."""
    columns = []
    for side, (version, sig) in (("A", a), ("B", b)):
        frame = disagreements(store, dataset, (version, sig), columns="scores")
        frame = frame[frame["human"] == human]
        if frame.empty:
            raise StoreError(
                f"{side} ({version}) has no judge aspect compared with the human aspect '{human}'; "
                f"pick a human aspect both templates map to (human = \"...\" in the template header)"
            )
        columns.append(frame.drop_duplicates("item_id").set_index("item_id"))
    for frame in columns:  # a label's hit: the judge's nearest category is the people's majority (`disagreements`)
        frame["hit"] = (frame["judge_01"] == frame["human_01"]).astype(float).where(
            frame["judge_01"].notna() & frame["human_01"].notna())
    b_scores = columns[1][["score", "hit"]].rename(columns={"score": "score_b", "hit": "hit_b"})
    joined = columns[0][["score", "hit", "human_score", "group"]].join(b_scores, how="inner")
    kept, said = held_out(store.items(dataset), [a[0], b[0]], searched_versions(store, dataset))
    joined = joined[joined.index.isin({item.id for item in kept})]  # not where a search chose either
    if aspect_words(store.categories(dataset), human):  # labels: never correlated
        found = paired_accuracy(joined["hit"], joined["hit_b"], joined["group"])
    else:
        found = paired_difference(joined["score"], joined["score_b"], joined["human_score"], joined["group"],
                                  metric=metric)
    return replace(found, searched=said)


def compared_humans(store: Store, dataset: str, combo: tuple[str, str]) -> list[str]:
    """The human aspects the judge aspects of a scored (template version, signature) are
    compared with, in template order: what two combinations can be compared on."""
    template = store.template(combo[0])
    human_aspects = list(dict.fromkeys(a for item in store.items(dataset) for a in item.human))
    found = [human_aspect_for(template, a.key, human_aspects) for a in template.aspects]
    return list(dict.fromkeys(h for h in found if h))


def paired_columns(columns: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], groups, level: str = "item",
                   metric: str = "pearson", average: Sequence[str] = ()) -> list[dict]:
    """B minus A for each named column (a, b, human: arrays over the same items, NaN where
    missing), at the `level` "item" (one correlation over the items) or "group" (a correlation
    inside each group, then the mean over the groups where both are defined), and for the mean
    of the `average` columns' differences. Every column is recomputed with the same group left
    out in turn (the jackknife), so the average's interval is paired too. Each dict: column, a,
    b, difference, low, high, p (two-sided, as `paired_difference`), n (items), groups, note,
    and each side's own interval (a_low, a_high, b_low, b_high)."""
    if level not in ("item", "group"):
        raise ValueError(f"level '{level}' is not compared pairwise; use item or group")
    groups = np.asarray(groups).astype(str)
    resamples = Resamples.leave_one_out(groups)
    found, loo = [], {}
    for name, (a, b, human) in columns.items():
        a, b, human = (np.asarray(v, dtype=float) for v in (a, b, human))
        keep = np.flatnonzero(np.isfinite(a) & np.isfinite(b) & np.isfinite(human))
        if level == "item":
            r_a, r_b = correlate(metric, a[keep], human[keep]), correlate(metric, b[keep], human[keep])
            difference = r_b - r_a
            sides = [item_bootstrap(v[keep], human[keep], resamples, (metric,), rows=keep)[metric] for v in (a, b)]
            loo[name] = (*sides, sides[1] - sides[0], len(np.unique(resamples.group_of[keep])),
                         jackknife_df(groups[keep], human[keep]))  # each side's own interval, as agreement's
            note = ""
        else:
            per_a, per_b = _per_group(a, human, groups, keep, resamples, metric), \
                _per_group(b, human, groups, keep, resamples, metric)
            both = np.isfinite(per_a) & np.isfinite(per_b)
            r_a, r_b = float(np.nanmean(per_a)) if both.any() else math.nan, \
                float(np.nanmean(per_b)) if both.any() else math.nan
            difference = float(np.mean(per_b[both] - per_a[both])) if both.any() else math.nan
            means, units = leave_one_out_means(np.column_stack([np.where(both, v, np.nan)
                                                                for v in (per_a, per_b, per_b - per_a)]))
            loo[name] = (*means.T, units, None)
            note = f"difference over the {int(both.sum())} groups where both are defined"
        found.append(_paired_row(name, r_a, r_b, difference, loo[name], len(keep), resamples, note, level))
    averaged = [name for name in average if name in loo]
    if len(averaged) > 1:
        mine = [row for row in found if row["column"] in averaged]
        parts = [np.mean([loo[name][part] for name in averaged], axis=0) for part in (0, 1, 2)]
        found.append(_paired_row(AVERAGE, float(np.mean([r["a"] for r in mine])),
                                 float(np.mean([r["b"] for r in mine])),
                                 float(np.mean([r["difference"] for r in mine])),
                                 (*parts, min(loo[name][3] for name in averaged),
                                  None if level == "group" else min(loo[name][4] for name in averaged)),
                                 max(r["n"] for r in mine), resamples, f"mean over {', '.join(averaged)}", level))
    return found


def _per_group(scores: np.ndarray, human: np.ndarray, groups: np.ndarray, keep: np.ndarray, resamples: Resamples,
               metric: str) -> np.ndarray:
    """The correlation inside each of `resamples`' groups, on the rows `keep` (NaN where undefined)."""
    out = np.full(resamples.n_groups, np.nan)
    if len(keep):
        kept = Resamples(groups[keep], 0)
        where = np.searchsorted(np.unique(groups), np.unique(groups[keep]))
        out[where] = within_groups(scores[keep], human[keep], kept, (metric,))[metric]
    return out


def _paired_row(name: str, a: float, b: float, difference: float, loo: tuple, n: int, resamples: Resamples,
                note: str, level: str) -> dict:
    """The row of one column from its leave-one-group-out values (side a, side b, b - a, and the
    groups they rest on, and each side's t degrees of freedom: `jackknife_df`, None for units − 1): each
    side's interval, and the difference's with its p-value (on units − 1: two equally good judges differ
    at p < .05 in .037-.048 of simulated datasets with few uneven groups, docs/statistics.md)."""
    side_a, side_b, diffs, units, df = loo
    low = high = p = math.nan
    enough = resamples.enough and units >= MIN_GROUPS
    if not enough:
        note = "; ".join(filter(None, [note, f"no interval: {min(units, resamples.n_groups)} groups"]))
    elif math.isfinite(difference):
        low, high = difference_interval(difference, diffs, units)
        p = jackknife_p(difference, diffs, units)
    correlation = level == "item"  # a group-level side is a mean of per-group values: its t-interval, inside [-1, 1]
    (a_low, a_high), (b_low, b_high) = (
        _side_interval(value, side, units, correlation, df) if enough and math.isfinite(value) else (math.nan, math.nan)
        for side, value in zip((side_a, side_b), (a, b)))
    return {"column": name, "a": a, "b": b, "difference": difference, "low": low, "high": high, "p": p, "n": n,
            "groups": resamples.n_groups, "note": note, "a_low": a_low, "a_high": a_high, "b_low": b_low,
            "b_high": b_high}


def _side_interval(value: float, loo: np.ndarray, units: int, correlation: bool,
                   df: float | None = None) -> tuple[float, float]:
    """One side's 95% interval from its leave-one-group-out values: on Fisher's z for an item-level
    correlation, else a t-interval kept inside [-1, 1]."""
    low, high = jackknife_interval(value, loo, correlation=correlation, units=units, df=df)
    return (low, high) if correlation else (max(low, -1.0), min(high, 1.0))
