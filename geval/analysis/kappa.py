"""Chance-corrected agreement on labels, from confusion matrices summed per group: Cohen's kappa
(quadratic-weighted on an ordinal scale), Fleiss' kappa among several annotators, each label's
precision, recall and F1, and the share a constant answer would get right. Each comes with its
leave-one-group-out values (`geval.analysis.grouped`: a group's confusion subtracted from the
total), for one dataset or many at once.

A confusion matrix has the reference (the people's majority, or one annotator) in its rows and the
judge in its columns, as scikit-learn's `confusion_matrix(y_true, y_pred)`. Cohen's kappa is
1 − (weighted observed disagreement) / (weighted disagreement expected from the two sides'
marginals), which is scikit-learn's `cohen_kappa_score` (tests/test_judge_errors.py checks it):
a constant answer agrees exactly as often as chance and gets 0."""

from __future__ import annotations

import numpy as np

from geval.analysis.grouped import group_sums

WEIGHTINGS = ("none", "quadratic")
#: Groups whose leave-one-out statistics are computed at once (`with_each_left_out`).
BLOCK = 16384


def disagreement_weights(k: int, weighting: str = "none") -> np.ndarray:
    """How much each pair of k labels disagrees (k x k): 1 off the diagonal, or on an ordinal scale
    the squared distance between the points over the largest ((i − j) / (k − 1))²."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting '{weighting}' is unknown; use one of {', '.join(WEIGHTINGS)}")
    index = np.arange(k)
    if weighting == "quadratic":
        return ((index[:, None] - index[None, :]) / max(k - 1, 1)) ** 2
    return 1.0 - np.eye(k)


def confusions(truth, judged, keep, codes: np.ndarray, n_groups: int, k: int) -> np.ndarray:
    """Each group's confusion matrix (..., groups, k, k): rows the reference `truth`, columns the
    `judged` label (both label indexes 0..k−1, (..., rows)), counting the rows `keep` says."""
    truth, judged = (np.where(keep, np.asarray(v, dtype=float), 0).astype(np.int64) for v in (truth, judged))
    cells = (np.broadcast_to(codes, truth.shape) * k + truth) * k + judged
    counts = group_sums(np.asarray(keep, dtype=float), cells, n_groups * k * k)
    return counts.reshape(*counts.shape[:-1], n_groups, k, k)


def kappa_of(confusion: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each confusion matrix (..., k, k) with `weights` (`disagreement_weights`);
    NaN where it is undefined (no item, or both sides give one and the same label throughout)."""
    confusion = np.asarray(confusion, dtype=float)
    n = confusion.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = confusion.sum(axis=-1)[..., :, None] * confusion.sum(axis=-2)[..., None, :] / n[..., None, None]
        chance = (weights * expected).sum(axis=(-2, -1))
        kappa = 1.0 - (weights * confusion).sum(axis=(-2, -1)) / chance
    return np.where((n > 0) & (chance > 1e-12 * np.maximum(n, 1)), kappa, np.nan)


def left_out(per_group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The total of per-group confusions (..., groups, k, k) and which groups hold an item: what
    `with_each_left_out` reads, made once for several statistics."""
    return per_group.sum(axis=-3), per_group.sum(axis=(-2, -1)) > 0


def with_each_left_out(per_group: np.ndarray, statistic,
                       parts: tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`statistic` of the total of per-group confusions (..., groups, k, k) and of the total without each
    group; and which groups hold an item: (value (...), leave-one-out (..., groups), present).
    `parts`: `left_out(per_group)` when made already."""
    total, present = left_out(per_group) if parts is None else parts
    return statistic(total), _by_blocks(statistic, total, per_group), present


def _by_blocks(statistic, total: np.ndarray, per_group: np.ndarray):
    """`statistic` of the `total` without each group of `per_group` (..., groups, k, k), BLOCK groups at a time,
    joined: the totals without each group, and what the statistic makes of them, are a block's size, never every
    group's (half a million groups of 3 x 3 counts: 36 MB an array)."""
    groups = per_group.ndim - 3  # the groups' axis, in the confusions and in what a statistic gives of them
    total = np.expand_dims(total, groups)
    parts = [statistic(total - per_group[..., start:start + BLOCK, :, :])
             for start in range(0, max(per_group.shape[groups], 1), BLOCK)]
    if len(parts) == 1:
        return parts[0]
    if isinstance(parts[0], dict):
        return {name: np.concatenate([part[name] for part in parts], axis=groups) for name in parts[0]}
    return np.concatenate(parts, axis=groups)


def accuracy_of(confusion: np.ndarray) -> np.ndarray:
    """The share of items on the diagonal (NaN for none)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.trace(confusion, axis1=-2, axis2=-1) / confusion.sum(axis=(-2, -1))


def per_label(confusion: np.ndarray) -> dict[str, np.ndarray]:
    """Each label's precision (of the judge's answers of it, the share the reference gave too),
    recall (of the reference's, the share the judge found) and F1, (..., k) each; NaN where the
    judge never gives the label (precision), or the reference never does (recall and F1: of a label
    the reference never gives there is nothing to find, and scikit-learn's 0 would read as a failure
    to find it)."""
    hits = np.diagonal(confusion, axis1=-2, axis2=-1)
    given, true = confusion.sum(axis=-2), confusion.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"precision": hits / given, "recall": hits / true,
                "f1": np.where(true > 0, 2 * hits / (given + true), np.nan)}


def constant_shares(confusion: np.ndarray) -> np.ndarray:
    """The share of items a judge answering label c throughout gets right, for each c (..., k): the
    reference's share of c. Its kappa is 0 (`kappa_of` of its confusion matrix)."""
    true = confusion.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return true / true.sum(axis=-1, keepdims=True)


def constant_confusion(confusion: np.ndarray, label: int) -> np.ndarray:
    """The confusion matrix of a judge that answers `label` on every item the reference labeled."""
    constant = np.zeros_like(confusion, dtype=float)
    constant[..., label] = confusion.sum(axis=-1)
    return constant


def fleiss_parts(counts, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """What Fleiss' kappa is made of, per group (..., groups, k + 2): each item's share of pairs of its
    raters who agree, summed; the items with two raters or more; each label's share of an item's
    ratings, summed (k columns). `counts` (..., items, k): how many raters gave each label."""
    counts = np.asarray(counts, dtype=float)
    raters = counts.sum(axis=-1)
    kept = raters >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        agreeing = np.where(kept, (counts * (counts - 1)).sum(axis=-1) / (raters * (raters - 1)), 0.0)
        shares = np.where(kept[..., None], counts / raters[..., None], 0.0)
    columns = [agreeing, kept.astype(float), *np.moveaxis(shares, -1, 0)]
    return np.stack([group_sums(column, codes, n_groups) for column in columns], axis=-1)


def fleiss_of(parts: np.ndarray) -> np.ndarray:
    """Fleiss' kappa from `fleiss_parts` summed over groups (..., k + 2): the mean agreement of an
    item's pairs of raters against the agreement expected from the labels' overall shares (each item
    weighing the same, as irrCAC's `fleiss.kappa.raw` has it for items with varying raters); NaN where
    undefined (no item with two raters, or one label throughout)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = parts[..., 0] / parts[..., 1]
        expected = ((parts[..., 2:] / parts[..., 1:2]) ** 2).sum(axis=-1)
        kappa = (observed - expected) / (1.0 - expected)
    return np.where(expected < 1 - 1e-12, kappa, np.nan)
