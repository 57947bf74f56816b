"""Do two judges (or template versions) agree with people differently on the same items?

- `paired_difference`: the difference of the two correlations with a paired bootstrap over
  groups (dialogues, documents), a 95% CI and a bootstrap p-value, plus Williams' test;
- `williams_test`: Williams' t for two dependent correlations that share the human variable
  (Steiger 1980, eq. 7);
- `compare`: both, for two scored combinations of a stored dataset (`compared_humans`: the
  human aspects they can be compared on);
- `paired_columns`: B minus A on several columns at once (each aspect, their average), at the
  item or the group level, every column on the same draws of groups (the leaderboard's
  comparison of every judge row with one row of reference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from geval.analysis.agreement import human_aspect_for
from geval.analysis.correlation import (
    METRICS,
    Resamples,
    correlate,
    group_mean_bootstrap,
    interval_note,
    item_bootstrap,
    percentile_interval,
    within_groups,
)
from geval.analysis.disagreement import disagreements
from geval.errors import StoreError
from geval.store import Store

MIN_COMMON_ITEMS = 3
#: The name of `paired_columns`' row for the mean of the other rows' differences.
AVERAGE = "average"


@dataclass(frozen=True)
class Comparison:
    """B minus A: how much better (positive) or worse B's scores correlate with the human ones.

    `a` and `b` are the two correlations on the common items, `difference` = b - a with its
    paired-bootstrap 95% CI [`low`, `high`] and two-sided bootstrap p-value. `williams_t` is
    signed like `difference` (positive when B agrees better); Williams' test treats items as
    independent, so with several items per group its p-value is optimistic; trust the
    bootstrap, which resamples whole groups. Both are NaN where undefined (Kendall, n < 4).
    """

    metric: str
    a: float
    b: float
    difference: float
    low: float
    high: float
    p_bootstrap: float
    williams_t: float
    williams_p: float
    n_items: int
    n_groups: int
    note: str = ""  # why the interval and p-value are missing, when they are


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


def paired_difference(judge_a, judge_b, human, groups, metric: str = "pearson", n_boot: int = 2000,
                      seed: int = 0) -> Comparison:
    """Correlation of B with `human` minus that of A, on the items where all three are scored.

    Rows with NaN in any of the three are dropped first. The bootstrap resamples groups with
    replacement and recomputes both correlations on the same draw (paired); the CI is the
    2.5-97.5 percentile of the differences; the p-value is twice the share of draws whose
    difference is zero or of the opposite sign to the observed one, capped at 1 (its
    resolution is 1 / n_boot: 0.0 means "below that"). Williams' test uses the same
    correlations (Pearson, or Pearson on ranks for Spearman; NaN for Kendall).

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
    resamples = Resamples(g, n_boot, seed)
    diffs = item_bootstrap(b, h, resamples, (metric,))[metric] - item_bootstrap(a, h, resamples, (metric,))[metric]
    diffs = diffs[np.isfinite(diffs)]
    difference = r_b - r_a
    note = interval_note(g)
    if len(diffs) < max(10, n_boot // 2):
        low = high = p_boot = float("nan")
        note = note or "no interval: the bootstrap differences are undefined in most resamples"
    else:
        low, high = (float(v) for v in np.percentile(diffs, [2.5, 97.5]))
        if difference == 0:
            p_boot = 1.0
        else:
            against = np.mean(diffs <= 0) if difference > 0 else np.mean(diffs >= 0)
            p_boot = float(min(1.0, 2 * against))
    if metric == "kendall":
        t, p = float("nan"), float("nan")
    else:
        r_ab = correlate(metric, a, b)
        t, p = williams_test(r_a, r_b, r_ab if math.isfinite(r_ab) else 0.0, len(a))
        t = -t if math.isfinite(t) and t != 0 else t  # signed like B - A
    return Comparison(metric, float(r_a), float(r_b), float(difference), low, high, p_boot, t, p,
                      int(len(a)), resamples.n_groups, note)


def compare(store: Store, dataset: str, a: tuple[str, str], b: tuple[str, str], human: str,
                   metric: str = "pearson", n_boot: int = 2000, seed: int = 0) -> Comparison:
    """`paired_difference` of two scored (template version, signature) pairs against the human
    aspect `human`, each through its judge aspect mapped to it, on the items both scored."""
    columns = []
    for side, (version, sig) in (("A", a), ("B", b)):
        frame = disagreements(store, dataset, (version, sig), details=False)
        frame = frame[frame["human"] == human]
        if frame.empty:
            raise StoreError(
                f"{side} ({version}) has no judge aspect compared with the human aspect '{human}'; "
                f"pick a human aspect both templates map to (human = \"...\" in the template header)"
            )
        columns.append(frame.drop_duplicates("item_id").set_index("item_id"))
    b_scores = columns[1][["score"]].rename(columns={"score": "score_b"})
    joined = columns[0][["score", "human_score", "group"]].join(b_scores, how="inner")
    return paired_difference(joined["score"], joined["score_b"], joined["human_score"], joined["group"],
                             metric=metric, n_boot=n_boot, seed=seed)


def compared_humans(store: Store, dataset: str, combo: tuple[str, str]) -> list[str]:
    """The human aspects the judge aspects of a scored (template version, signature) are
    compared with, in template order: what two combinations can be compared on."""
    template = store.template(combo[0])
    human_aspects = list(dict.fromkeys(a for item in store.items(dataset) for a in item.human))
    found = [human_aspect_for(template, a.key, human_aspects) for a in template.aspects]
    return list(dict.fromkeys(h for h in found if h))


def paired_columns(columns: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], groups, level: str = "item",
                   metric: str = "pearson", average: Sequence[str] = (), n_boot: int = 2000,
                   seed: int = 0) -> list[dict]:
    """B minus A for each named column (a, b, human: arrays over the same items, NaN where
    missing), at the `level` "item" (one correlation over the items) or "group" (a correlation
    inside each group, then the mean over the groups where both are defined), and for the mean
    of the `average` columns' differences. Every column is resampled with the same draws of
    whole groups, so the average's interval is paired too. Each dict: column, a, b,
    difference, low, high, p (two-sided, as `paired_difference`), n (items), groups, note, and
    each side's own interval from the same draws (a_low, a_high, b_low, b_high)."""
    if level not in ("item", "group"):
        raise ValueError(f"level '{level}' is not compared pairwise; use item or group")
    groups = np.asarray(groups).astype(str)
    resamples = Resamples(groups, n_boot, seed)
    found, boots = [], {}
    for name, (a, b, human) in columns.items():
        a, b, human = (np.asarray(v, dtype=float) for v in (a, b, human))
        keep = np.flatnonzero(np.isfinite(a) & np.isfinite(b) & np.isfinite(human))
        if level == "item":
            r_a, r_b = correlate(metric, a[keep], human[keep]), correlate(metric, b[keep], human[keep])
            difference = r_b - r_a
            sides = [item_bootstrap(v[keep], human[keep], resamples, (metric,), rows=keep)[metric] for v in (a, b)]
            boot = sides[1] - sides[0]
            note = ""
        else:
            per_a, per_b = _per_group(a, human, groups, keep, resamples, metric), \
                _per_group(b, human, groups, keep, resamples, metric)
            both = np.isfinite(per_a) & np.isfinite(per_b)
            r_a, r_b = float(np.nanmean(per_a)) if both.any() else math.nan, \
                float(np.nanmean(per_b)) if both.any() else math.nan
            difference = float(np.mean(per_b[both] - per_a[both])) if both.any() else math.nan
            boot = group_mean_bootstrap(np.where(both, per_b - per_a, np.nan), resamples)
            sides = list(group_mean_bootstrap(np.column_stack([np.where(both, per, np.nan) for per in (per_a, per_b)]),
                                              resamples).T)
            note = f"difference over the {int(both.sum())} groups where both are defined"
        boots[name] = (*sides, boot)
        found.append(_paired_row(name, r_a, r_b, difference, boots[name], len(keep), resamples, note))
    averaged = [name for name in average if name in boots]
    if len(averaged) > 1:
        mine = [row for row in found if row["column"] in averaged]
        found.append(_paired_row(AVERAGE, float(np.mean([r["a"] for r in mine])),
                                 float(np.mean([r["b"] for r in mine])),
                                 float(np.mean([r["difference"] for r in mine])),
                                 [np.mean([boots[name][part] for name in averaged], axis=0) for part in (0, 1, 2)],
                                 max(r["n"] for r in mine), resamples, f"mean over {', '.join(averaged)}"))
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


def _paired_row(name: str, a: float, b: float, difference: float, boots: tuple[np.ndarray, ...], n: int,
                resamples: Resamples, note: str) -> dict:
    """The row of one column from its bootstrap values (side a, side b, b - a): each side's
    interval, and the difference's with its p-value."""
    *sides, boot = boots
    finite = boot[np.isfinite(boot)]
    low = high = p = math.nan
    if not resamples.enough:
        note = "; ".join(filter(None, [note, f"no interval: {resamples.n_groups} groups"]))
    elif math.isfinite(difference) and len(finite) >= max(10, len(boot) // 2):
        low, high = (float(v) for v in np.percentile(finite, [2.5, 97.5]))
        against = np.mean(finite <= 0) if difference > 0 else np.mean(finite >= 0)
        p = 1.0 if difference == 0 else float(min(1.0, 2 * against))
    (a_low, a_high), (b_low, b_high) = ((percentile_interval(side) if resamples.enough and math.isfinite(value)
                                         else (math.nan, math.nan)) for side, value in zip(sides, (a, b)))
    return {"column": name, "a": a, "b": b, "difference": difference, "low": low, "high": high, "p": p, "n": n,
            "groups": resamples.n_groups, "note": note, "a_low": a_low, "a_high": a_high, "b_low": b_low,
            "b_high": b_high}
