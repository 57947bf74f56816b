"""How much people agree with each other: the ceiling a judge's agreement is read against.

From every annotator's score kept on each item (`Item.human`):

- Krippendorff's alpha (the `krippendorff` package), interval and ordinal;
- leave-one-annotator-out correlation: annotator k's scores against the mean of the other
  annotators' scores on the same items, for each k, then the mean over k.

Annotators are told apart by id (`Item.ratings`): by name where the file names them (SummEval's
experts, your labels), else "#k", the k-th score of each item (the USR and FED files do not say
whether position k is the same person on every item). Alpha does not need that (it pairs scores
within an item, whoever gave them); the leave-one-out correlation reads it as "one annotator
against the others", on the items scored by the annotators who scored most items together;
other items (a free-text score skipped on load, an extra annotator) are left out of it, and
counted in the note.

The judge is compared with the mean of all annotators, which is less noisy than one
annotator: a judge can exceed the leave-one-out figure without being better than a person.
Intervals (95%) resample whole groups (dialogues, documents), as everywhere in geval.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd

from geval.analysis.correlation import (
    METRICS,
    MIN_GROUPS,
    Resamples,
    correlate,
    interval_note,
    item_bootstrap,
    percentile_interval,
)
from geval.data.items import Item

ALPHA_LEVELS = ("interval", "ordinal")
#: Alpha's level for a categorical aspect (categories that have no order).
NOMINAL = "nominal"
COLUMNS = ["human", "statistic", "value", "low", "high", "items", "annotators", "note"]


def annotator_matrix(items: list[Item], aspect: str) -> np.ndarray:
    """Scores as an annotators x items array, a row per annotator (by id, `Item.ratings`, in
    first-seen order), NaN where an annotator did not score an item."""
    rated = [item.ratings(aspect) for item in items]
    who = list(dict.fromkeys(name for ratings in rated for name in ratings))
    matrix = np.full((len(who), len(items)), np.nan)
    row = {name: index for index, name in enumerate(who)}
    for column, ratings in enumerate(rated):
        for name, score in ratings.items():
            matrix[row[name], column] = score
    return matrix


def krippendorff_alpha(matrix: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha of an annotators x items array; NaN when undefined (fewer than
    two annotators on any item, or a single value throughout)."""
    import krippendorff

    if level not in (*ALPHA_LEVELS, NOMINAL):
        raise ValueError(f"level '{level}' is unknown; use one of {', '.join((*ALPHA_LEVELS, NOMINAL))}")
    matrix = np.asarray(matrix, dtype=float)
    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2) if matrix.size else np.array([], bool)
    if matrix.shape[0] < 2 or not pairable.any() or len(np.unique(matrix[:, pairable][~np.isnan(
            matrix[:, pairable])])) < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=matrix[:, pairable], level_of_measurement=level))


def leave_one_out(matrix: np.ndarray, metric: str = "pearson") -> float:
    """The mean over annotators k of corr(annotator k, mean of the others), over the items
    every annotator scored; NaN when fewer than two annotators or any correlation is undefined."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] < 2:
        return float("nan")
    complete = matrix[:, ~np.isnan(matrix).any(axis=0)]
    values = []
    for k in range(complete.shape[0]):
        others = np.delete(complete, k, axis=0).mean(axis=0)
        values.append(correlate(metric, complete[k], others))
    return float(np.mean(values))


def alpha_bootstrap(matrix: np.ndarray, resamples: Resamples, level: str = "interval") -> np.ndarray:
    """`krippendorff_alpha` in each resample of the items (columns) of an annotators x items array,
    all resamples at once: a resample's coincidence matrix is the sum of its items' (an item drawn
    twice counts twice), from which alpha follows as the krippendorff package computes it (on the
    values of the whole array: a value no item of a resample has adds nothing). NaN where a resample
    has one value or no item with two scores."""
    matrix = np.asarray(matrix, dtype=float)
    known = ~np.isnan(matrix)
    values = np.unique(matrix[known])
    n_boot = len(resamples.draws)
    if len(values) < 2:
        return np.full(n_boot, np.nan)
    counts_per_value = np.stack([(matrix == v).sum(axis=0) for v in values], axis=1).astype(float)  # items x V
    pairable = np.maximum(known.sum(axis=0), 2) - 1.0
    per_item = (counts_per_value[:, :, None] * counts_per_value[:, None, :]
                - counts_per_value[:, :, None] * np.eye(len(values))[None]) / pairable[:, None, None]
    per_group = np.stack([np.bincount(resamples.group_of, weights=cell, minlength=resamples.n_groups)
                          for cell in per_item.reshape(len(per_item), -1).T], axis=1)  # groups x V*V
    out = np.full(n_boot, np.nan)
    for start, counts in resamples.counts():
        coincidences = (counts @ per_group).reshape(len(counts), len(values), len(values))
        n_v = coincidences.sum(axis=1)
        n = n_v.sum(axis=1)
        expected = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(len(values))[None]) \
            / np.maximum(n - 1.0, 1e-300)[:, None, None]
        distance = _distances(values, n_v, level)
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = 1.0 - (coincidences * distance).sum(axis=(1, 2)) / (expected * distance).sum(axis=(1, 2))
        alpha[(n_v > 0).sum(axis=1) < 2] = np.nan
        out[start:start + len(counts)] = alpha
    return out


def _distances(values: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's squared distances between the values (resamples x V x V): interval, the squared
    difference; ordinal, the values' counts between the two, less half of the two's own, squared."""
    if level == "interval":
        return np.broadcast_to((values[:, None] - values[None, :]) ** 2, (len(n_v), len(values), len(values)))
    low, high = np.minimum.outer(np.arange(len(values)), np.arange(len(values))), \
        np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
    running = np.concatenate([np.zeros((len(n_v), 1)), np.cumsum(n_v, axis=1)], axis=1)
    between = running[:, high + 1] - running[:, low]
    return (between - (n_v[:, low] + n_v[:, high]) / 2.0) ** 2


def leave_one_out_bootstrap(matrix: np.ndarray, resamples: Resamples) -> dict[str, np.ndarray]:
    """`leave_one_out` of every metric in each resample of the items (columns) of a complete
    annotators x items array: each annotator's correlation with the others' mean, computed for all
    resamples at once (`item_bootstrap`), then their mean (NaN where one is undefined)."""
    per_annotator = [item_bootstrap(matrix[k], np.delete(matrix, k, axis=0).mean(axis=0), resamples, METRICS)
                     for k in range(matrix.shape[0])]
    return {metric: np.mean([boot[metric] for boot in per_annotator], axis=0) for metric in METRICS}


def annotator_agreement(items: list[Item], aspects: list[str] | None = None, n_boot: int = 1000,
                        seed: int = 0, alpha: bool = True) -> pd.DataFrame:
    """Alpha (interval, ordinal; unless `alpha` is False) and leave-one-out Pearson, Spearman
    and Kendall per human aspect, with 95% intervals over groups. Columns: human, statistic,
    value, low, high, items, annotators, note. An aspect with one score per item (a dataset
    that keeps only the mean, like SummEval's or DSTC9's files) gets NaN rows saying so."""
    aspects = aspects or list(dict.fromkeys(a for item in items for a in item.human))
    rows = []
    for aspect in aspects:
        scored = [item for item in items if item.human.get(aspect)]
        counts = Counter(len(item.human[aspect]) for item in scored)
        annotators = max(counts, default=0)
        groups = np.array([item.group or item.id for item in scored])
        matrix = annotator_matrix(scored, aspect)
        if annotators < 2:
            note = "undefined: one score per item (the dataset keeps only one score, or the mean)"
            rows += [_row(aspect, s, math.nan, (math.nan, math.nan), len(scored), annotators, note)
                     for s in _statistics() if alpha or not s.startswith("alpha")]
            continue
        resamples = Resamples(groups, n_boot, seed)
        for level in ALPHA_LEVELS if alpha else ():
            value = krippendorff_alpha(matrix, level)
            interval = percentile_interval(alpha_bootstrap(matrix, resamples, level)) \
                if math.isfinite(value) and resamples.enough else (math.nan, math.nan)
            rows.append(_row(aspect, f"alpha ({level})", value, interval, len(scored), annotators,
                             interval_note(groups) if math.isfinite(value)
                             else "undefined: no two scores on an item, or one value"))
        panel, width = _panel(scored, aspect), len(scored)
        full = np.array([set(item.ratings(aspect)) == set(panel) for item in scored])
        common, left = len(panel), int((~full).sum())
        sub, sub_groups = matrix[_rows(scored, aspect, panel)][:, full], groups[full]
        boot = leave_one_out_bootstrap(sub, Resamples(sub_groups, n_boot, seed))
        for metric in METRICS:
            value = leave_one_out(sub, metric)
            interval = percentile_interval(boot[metric]) if math.isfinite(value) and len(set(sub_groups)) >= MIN_GROUPS \
                else (math.nan, math.nan)
            notes = [f"{left} of {width} items left out: other annotators scored them than the "
                     f"{common} who scored most items"] if left else []
            if not math.isfinite(value):
                notes.insert(0, "undefined: an annotator's scores (or the others' mean) are constant")
            else:
                notes.append(interval_note(sub_groups))
            rows.append(_row(aspect, f"leave-one-out {metric}", value, interval, int(full.sum()), common,
                             "; ".join(filter(None, notes))))
    return pd.DataFrame(rows, columns=COLUMNS)


def _panel(items: list[Item], aspect: str) -> tuple[str, ...]:
    """The annotators who scored the most items together (the most common set of them), in
    first-seen order: the leave-one-out correlation reads the items they all scored."""
    sets = Counter(frozenset(item.ratings(aspect)) for item in items)
    panel = sets.most_common(1)[0][0]
    return tuple(name for name in dict.fromkeys(n for item in items for n in item.ratings(aspect)) if name in panel)


def _rows(items: list[Item], aspect: str, panel: tuple[str, ...]) -> list[int]:
    """The rows of `panel`'s annotators in `annotator_matrix(items, aspect)`."""
    order = list(dict.fromkeys(name for item in items for name in item.ratings(aspect)))
    return [order.index(name) for name in panel]


def _statistics() -> list[str]:
    return [f"alpha ({level})" for level in ALPHA_LEVELS] + [f"leave-one-out {m}" for m in METRICS]


def _row(human, statistic, value, interval, n_items, annotators, note) -> dict:
    return {"human": human, "statistic": statistic, "value": float(value), "low": interval[0], "high": interval[1],
            "items": int(n_items), "annotators": int(annotators), "note": note}
