"""What a judge is worth in labels: the variance of people's scores within a system that it removes.

The combined estimate of a system's mean (prediction-powered, PPI++) reads the people's scores less
β times the judge's on the labeled items, plus β times the judge's mean over all of them; with n of
the system's N items labeled at random its variance is (1/n − 1/N) S² of what the judge leaves, where
the labels alone have (1/n − 1/N) S² of the people's scores. So the judge leaves the share

    r = S²(people − β·judge) / S²(people),

β one coefficient pooled over every system's labels (least squares within systems), each variance
pooled within systems with the degrees of freedom the fit takes (adjusted R²: a judge that explains
nothing costs about a label's worth, a constant exactly nothing), and is worth

    n' = 1 / (1/N + r (1/n − 1/N))

labels alone per system: the labels at random that give the combined estimate's variance, for the
user's own N and n, summed over the systems. A judge that explains more of the people's scores within
a system leaves less (r falls as Pearson's r² within systems rises), so it is worth more, at any
number of labels. Its 95% interval: the delete-one-group jackknife of r over the labeled groups (in at
most BLOCKS blocks), Student's t. Drawn by weight ("where a label buys most"), each label counts at the
inverse of its weight, so that the variances are the population's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from geval.analysis.correlation import MIN_GROUPS, jackknife_se
from geval.analysis.grouped import group_sums
from geval.decisions.betting import Draws

#: Blocks of groups the jackknife leaves out one at a time, at the most.
BLOCKS = 20


def effective_labels(labels: np.ndarray, items: np.ndarray, ratio: float) -> float:
    """The labels alone that give the variance a judge leaving `ratio` of the people's variance gives
    with `labels` of `items` per system (sampling without replacement), summed over the systems;
    exactly the labels when the ratio is 1."""
    labels, items = np.asarray(labels, float), np.asarray(items, float)
    if not math.isfinite(ratio):
        return math.nan
    if ratio == 1.0:
        return float(labels.sum())
    inverse = 1 / items + max(ratio, 0.0) * (1 / labels - 1 / items)
    return float(np.sum(np.where(labels >= items, items, 1 / np.maximum(inverse, 1e-300))))


def _sums(draws: Draws, blocks: np.ndarray, n_blocks: int) -> dict[str, np.ndarray]:
    """Per sequence and block, the weighted sums a pooled within-system regression needs (each label
    at the inverse of its draw weight, scaled to the sequence's count of labels): each label added to
    its sequence's block in order."""
    labeled = draws.labeled
    weight = np.ones_like(draws.y) if draws.taken is None else 1 / np.where(labeled, draws.taken, np.inf)
    weight = np.where(labeled, weight, 0.0)
    weight *= labeled.sum(1, keepdims=True) / np.maximum(weight.sum(1, keepdims=True), 1e-300)
    count = len(labeled)
    cell = (np.arange(count)[:, None] * n_blocks + blocks)[labeled]  # each label's (sequence, block)
    w, y, x = weight[labeled], draws.y[labeled], draws.x[labeled]  # (labels,), (labels,), (labels, p)

    def total(values: np.ndarray) -> np.ndarray:
        """(labels, ...) summed into (B, blocks, ...)."""
        summed = group_sums(values.reshape(len(values), -1).T, cell, count * n_blocks)
        return np.ascontiguousarray(summed.T).reshape(count, n_blocks, *values.shape[1:])  # row-major: read in the same order after

    wx = w[:, None] * x
    return {"n": total(np.ones_like(w)), "w": total(w), "y": total(w * y), "yy": total(w * (y * y)),
            "x": total(wx), "xx": total(wx[:, :, None] * x[:, None, :]), "xy": total(wx * y[:, None])}


def variance_left(sums: dict[str, np.ndarray], keep: np.ndarray | None = None) -> tuple[float, float]:
    """The share of the people's variance within systems the predictors leave (r above), from `_sums`
    over the blocks `keep` (default all): 1 where nothing varies, or the predictors are constant; and
    the predictors' pooled correlation with the people's scores within systems (Pearson's; several
    predictors: the multiple correlation; NaN where nothing varies)."""
    part = {k: v if keep is None else v[:, keep] for k, v in sums.items()}
    total = {k: v.sum(1) for k, v in part.items()}
    used = total["n"] >= 2
    w = total["w"][used]
    syy = float(np.sum(total["yy"][used] - total["y"][used] ** 2 / w))
    sxy = np.sum(total["xy"][used] - total["x"][used] * (total["y"][used] / w)[:, None], 0)
    sxx = np.sum(total["xx"][used] - np.einsum("bp,bq->bpq", total["x"][used], total["x"][used]) / w[:, None, None], 0)
    n, systems = float(total["n"][used].sum()), int(used.sum())
    scale = np.diag(sxx) if sxx.size else np.zeros(0)
    varying = scale > 1e-12 * max(syy, 1e-12)
    if syy <= 1e-12 or not varying.any():
        return 1.0, (0.0 if syy > 1e-12 else math.nan)
    sxx, sxy = sxx[np.ix_(varying, varying)], sxy[varying]
    p = int(np.linalg.matrix_rank(sxx))
    beta = np.linalg.lstsq(sxx, sxy, rcond=None)[0]
    explained = min(max(float(beta @ sxy) / syy, 0.0), 1.0)
    correlation = math.copysign(math.sqrt(explained), float(sxy[0])) if p == 1 else math.sqrt(explained)
    if n - systems - p <= 0:
        return math.nan, correlation
    return ((1 - explained) / (n - systems - p)) / (1 / (n - systems)), correlation


@dataclass(frozen=True)
class Blocks:
    """The jackknife's blocks of labels: each label's block (`of`, B x k: the n-th group first labeled in
    block n % BLOCKS, 0 where unlabeled), how many blocks (`count`) and labeled groups (`groups`)."""

    of: np.ndarray
    count: int
    groups: int


def blocks(groups: np.ndarray, labeled: np.ndarray) -> Blocks:
    """The `Blocks` of labels in the groups `groups` (B, k; "" where unlabeled) where `labeled`: the
    same for every judge read on these labels."""
    order = pd.unique(groups[labeled]).tolist()
    at = pd.Index(order, dtype=object).get_indexer(pd.Index(groups.ravel(), dtype=object)).reshape(groups.shape)
    return Blocks(np.where(at >= 0, at % BLOCKS, 0), min(len(order), BLOCKS) or 1, len(order))


def judge_worth(draws: Draws, split: Blocks, name: str, labels: np.ndarray | None = None) -> dict:
    """A judge's (or several together: `draws.x`'s predictors) worth over the systems of `draws`, read
    on their labels, in the blocks `split` (`blocks` of their groups), for `labels` (B,) of each
    system (default: the labels read): labels, effective labels and the share saved (1 − labels /
    effective), each with its 95% interval (NaN below MIN_GROUPS groups); the share of the people's
    variance it leaves (`ratio`) and its correlation with them within systems (`within`)."""
    labeled = draws.labeled
    n_blocks = split.count
    sums = _sums(draws, split.of, n_blocks)
    ratio, within = variance_left(sums)
    counts, sizes = (labeled.sum(1) if labels is None else np.asarray(labels)), draws.size
    enough = counts >= 2
    total = int(counts[enough].sum())

    def effective(r: float) -> float:
        return effective_labels(counts[enough], sizes[enough], r)

    value = effective(ratio)
    low = high = math.nan
    if split.groups >= MIN_GROUPS and math.isfinite(ratio):
        loo = np.array([variance_left(sums, np.arange(n_blocks) != b)[0] for b in range(n_blocks)])
        se = jackknife_se(loo)
        if math.isfinite(se):
            half = float(stats.t.ppf(0.975, n_blocks - 1)) * se
            low, high = effective(ratio + half), effective(max(ratio - half, 0.0))

    def saved(n: float) -> float:
        return 1 - total / n if n and math.isfinite(n) else math.nan

    return {"judge": name, "labels": total, "effective": value, "effective_low": low, "effective_high": high,
            "saved": saved(value), "saved_low": saved(low), "saved_high": saved(high), "ratio": ratio,
            "within": within}
