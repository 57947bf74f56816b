"""Aligning a judge with a few human labels, and reporting only what holds on unseen groups.

A calibration maps what the judge stored for an item to the human scale, fitted on human
scored items. It is always cross-validated by group (dialogue, document): the groups are
split into `folds`, each fold is predicted by a calibration fitted on the other folds, so no
item is ever calibrated with labels from its own dialogue or document. Only these held-out
predictions are correlated with people; the in-sample fit is never reported.

| method | fitted on | prediction |
|---|---|---|
| `isotonic` | the judge's score (weighted mean) | a monotone step function of it (scipy's isotonic regression), linear between fitted points |
| `linear` | the judge's probabilities p(s) over its scale | sum_s w_s p(s) + b: a learned value per scale point instead of s itself (ridge, lambda 1e-3) |
| `ridge` | many columns (every judge score, baselines) | a ridge regression on the training rows' standardized columns, its penalty chosen among `ALPHAS` by an inner cross-validation by group on the training rows only; columns named `free` (e.g. the judge's own score) are not shrunk, so that with few labels the fit stays near a linear reading of them |

Several aspect columns (e.g. the four USR aspects) can be combined the same way against
one human aspect (e.g. Overall) with `linear`: a held-out weighted mean of the aspects.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from geval.errors import GevalError

METHODS = ("isotonic", "linear", "ridge")
RIDGE = 1e-3
ALPHAS = (0.1, 1.0, 10.0, 100.0, 1000.0)  # the penalties `ridge` chooses among
INNER_FOLDS = 4


class CalibrationError(GevalError):
    """A calibration cannot be cross-validated: unknown method, too few groups or labels."""


def group_folds(groups, folds: int = 5, seed: int = 0) -> np.ndarray:
    """A fold number (0..folds-1) per row; all rows of a group share one. Groups are shuffled
    with `seed` and dealt round robin, so fold sizes differ by at most one group."""
    groups = np.asarray(groups).astype(str)
    ids = np.unique(groups)
    if len(ids) < folds:
        raise CalibrationError(f"{len(ids)} groups cannot be split into {folds} folds; use fewer folds "
                               f"(at least 2) or score more dialogues/documents")
    order = np.random.default_rng(seed).permutation(len(ids))
    fold_of = {ids[g]: i % folds for i, g in enumerate(order)}
    return np.array([fold_of[g] for g in groups])


def fit_predict(method: str, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
                groups: np.ndarray | None = None, seed: int = 0, free: Sequence[int] = ()) -> np.ndarray:
    """Fit `method` on (x_train, y_train) and predict x_test. `isotonic` takes one column;
    `linear` and `ridge` any number (with an intercept); `ridge` needs the training rows'
    `groups` for the inner cross-validation that picks its penalty, and does not shrink the
    columns whose indices are `free`."""
    x_train, x_test = np.atleast_2d(x_train.T).T, np.atleast_2d(x_test.T).T
    if method == "ridge":
        if groups is None:
            raise CalibrationError("ridge needs the training rows' groups to choose its penalty")
        alpha = _inner_alpha(x_train, y_train, np.asarray(groups), seed, free)
        return _ridge(x_train, y_train, x_test, alpha, free)
    if method == "isotonic":
        if x_train.shape[1] != 1:
            raise CalibrationError("isotonic calibration takes one score column; use 'linear' for several")
        from scipy.optimize import isotonic_regression

        # tied scores are one point: the mean of their human scores, weighted by how many they are
        unique, inverse, counts = np.unique(x_train[:, 0], return_inverse=True, return_counts=True)
        means = np.bincount(inverse, weights=y_train) / counts
        values = isotonic_regression(means, weights=counts.astype(float)).x
        return np.interp(x_test[:, 0], unique, values) if len(unique) > 1 else np.full(len(x_test), values[0])
    if method == "linear":
        design = np.column_stack([x_train, np.ones(len(x_train))])
        penalty = RIDGE * np.eye(design.shape[1])
        penalty[-1, -1] = 0.0  # the intercept is not shrunk
        weights = np.linalg.solve(design.T @ design + penalty, design.T @ y_train)
        return np.column_stack([x_test, np.ones(len(x_test))]) @ weights
    raise CalibrationError(f"calibration method '{method}' is unknown; use one of {', '.join(METHODS)}")


def _ridge(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, alpha: float,
           free: Sequence[int] = ()) -> np.ndarray:
    """Ridge regression on columns standardized by the training rows; the intercept and the
    `free` columns are not shrunk."""
    mean, spread = x_train.mean(axis=0), x_train.std(axis=0)
    spread[spread == 0] = 1.0
    design = np.column_stack([(x_train - mean) / spread, np.ones(len(x_train))])
    penalty = alpha * np.eye(design.shape[1])
    penalty[-1, -1] = 0.0
    for column in free:
        penalty[column, column] = 0.0
    # least squares, not solve: a judge that gave one score to every training row is a column of zeros,
    # which a free column leaves singular (its weight is then 0)
    weights = np.linalg.lstsq(design.T @ design + penalty, design.T @ y_train, rcond=None)[0]
    return np.column_stack([(x_test - mean) / spread, np.ones(len(x_test))]) @ weights


def _inner_alpha(x: np.ndarray, y: np.ndarray, groups: np.ndarray, seed: int, free: Sequence[int] = ()) -> float:
    """The penalty of `ALPHAS` with the least squared error when the training rows are
    themselves cross-validated by group (nested: the outer fold's rows are never seen)."""
    fold = group_folds(groups, min(INNER_FOLDS, len(np.unique(groups.astype(str)))), seed)
    if fold.max() < 1:
        return ALPHAS[len(ALPHAS) // 2]
    errors = [sum(float(((_ridge(x[fold != k], y[fold != k], x[fold == k], alpha, free) - y[fold == k]) ** 2).sum())
                  for k in range(fold.max() + 1)) for alpha in ALPHAS]
    return ALPHAS[int(np.argmin(errors))]


def cross_validated(features: pd.DataFrame | pd.Series, human: pd.Series, groups: pd.Series, method: str = "isotonic",
                    folds: int = 5, seed: int = 0, free: Sequence[str] = ()) -> pd.Series:
    """Held-out calibrated scores, one per row of `features` (NaN where a feature or the
    human score is missing). `features`, `human` and `groups` share one index (item ids);
    `free`: columns a ridge does not shrink."""
    frame = pd.DataFrame(features) if isinstance(features, pd.Series) else features
    frame = frame.astype(float)
    human = human.reindex(frame.index).astype(float)
    usable = frame.notna().all(axis=1) & human.notna()
    if usable.sum() < 2 * folds:
        raise CalibrationError(f"only {int(usable.sum())} items have both a judge and a human score; "
                               f"{folds}-fold calibration needs at least {2 * folds}")
    group_of = groups.reindex(frame.index).astype(str).to_numpy()
    fold = group_folds(group_of, folds, seed)
    out = pd.Series(np.nan, index=frame.index, dtype=float)
    x, y = frame.to_numpy(), human.to_numpy()
    keep = usable.to_numpy()
    for k in range(folds):
        test = keep & (fold == k)
        train = keep & (fold != k)
        if test.any() and train.sum() >= 2:
            out[test] = fit_predict(method, x[train], y[train], x[test], group_of[train], seed,
                                    [frame.columns.get_loc(column) for column in free])
    return out


def probability_features(frame: pd.DataFrame, scale: list[int]) -> pd.DataFrame:
    """p(s) for each score s of `scale` (all but the last, which the others fix), per
    judgment of a judgments table, indexed by item id; NaN rows for unscored judgments."""
    rows = {}
    for item_id, text, status in zip(frame["item_id"], frame["distribution"], frame["status"]):
        distribution = {int(k): v for k, v in json.loads(text or "{}").items()}
        rows[item_id] = [distribution.get(s, 0.0) if status == "ok" and distribution else math.nan
                         for s in scale[:-1]]
    return pd.DataFrame.from_dict(rows, orient="index", columns=[f"p{s}" for s in scale[:-1]])


def calibrate_scores(scores: pd.DataFrame, items, humans: dict[str, str], method: str = "isotonic",
                     folds: int = 5, seed: int = 0) -> pd.DataFrame:
    """Each score column calibrated to its own human aspect (`humans`: column -> human
    aspect), held out by group. Returns a table like `scores` (columns without a human
    aspect, or with too few labels, are left out)."""
    by_id = {item.id: item for item in items}
    index = [i for i in scores.index if i in by_id]
    groups = pd.Series([by_id[i].group or i for i in index], index=index)
    out = {}
    for column in scores.columns:
        human = humans.get(column)
        if not human:
            continue
        target = pd.Series([by_id[i].human_mean(human) for i in index], index=index)
        out[column] = cross_validated(scores.loc[index, column], target, groups, method, folds, seed)
    return pd.DataFrame(out, index=index)


def combine_aspects(scores: pd.DataFrame, items, target: str = "Overall", folds: int = 5, seed: int = 0,
                    humans: dict[str, str] | None = None) -> pd.Series:
    """A held-out linear combination of the aspect columns fitted to the human `target`
    (e.g. Overall): seed 000's mean of aspects with weights learned on the other groups.

    With `humans` ({column: human aspect}) each column is first calibrated (isotonic) to its
    own human aspect. Every fitting step, the calibrations and the combination, sees only
    the training groups of the fold it predicts: a fold's held-out scores never depend on
    that fold's labels."""
    by_id = {item.id: item for item in items}
    index = [i for i in scores.index if i in by_id]
    human = pd.Series([by_id[i].human_mean(target) for i in index], index=index)
    if human.isna().all():
        raise CalibrationError(f"the items have no human '{target}' scores to fit the aspects to")
    features = scores.loc[index].astype(float)
    usable = (features.notna().all(axis=1) & human.notna()).to_numpy()
    if usable.sum() < 2 * folds:
        raise CalibrationError(f"only {int(usable.sum())} items have both a judge and a human score; "
                               f"{folds}-fold calibration needs at least {2 * folds}")
    fold = group_folds([by_id[i].group or i for i in index], folds, seed)
    targets = {c: np.array([by_id[i].human_mean(h) for i in index]) for c, h in (humans or {}).items()
               if c in features}
    x, y = features.to_numpy(), human.to_numpy()
    out = pd.Series(np.nan, index=index, dtype=float, name=f"learned combination → {target}")
    for k in range(folds):
        test, train = usable & (fold == k), usable & (fold != k)
        if not test.any() or train.sum() < 2:
            continue
        x_train, x_test = x[train].copy(), x[test].copy()
        for column, aspect_target in targets.items():
            j = features.columns.get_loc(column)
            fit = train & np.isfinite(aspect_target)
            x_train[:, j] = fit_predict("isotonic", x[fit, j], aspect_target[fit], x[train, j])
            x_test[:, j] = fit_predict("isotonic", x[fit, j], aspect_target[fit], x[test, j])
        out[test] = fit_predict("linear", x_train, y[train], x_test)
    return out
