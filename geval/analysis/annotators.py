"""How much people agree with each other: the ceiling a judge's agreement is read against.

From every annotator's score kept on each item (`Item.human`):

- Krippendorff's alpha (the `krippendorff` package; above PACKAGE_UP_TO items the same figure from
  the coincidence matrix summed by counts, in a fraction of the memory), interval and ordinal;
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

The leave-one-out correlation is read at any protocol level, as a judge's is: over all items
(item), inside each group then averaged over the groups (group), over the systems' means
(system). Intervals (95%) leave out or resample whole groups (dialogues, documents), as the
judge's do: alpha and the item level from the delete-one-group jackknife with Student's t (a
correlation's on Fisher's z), the group level the t-interval of the per-group values, the
system level a bootstrap of groups. The null simulation in tests/test_stats.py chose them:
their 95% intervals miss the true value in 3-7% of datasets at 10, 14 and 30 groups, where
the percentile bootstrap missed it in up to 10% (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd

from geval.analysis.correlation import (
    LEVELS,
    METRICS,
    MIN_GROUP_ITEMS,
    MIN_GROUPS,
    MIN_SYSTEMS,
    Resamples,
    correlate,
    group_mean_interval,
    interval,
    interval_note,
    item_bootstrap,
    item_values,
    percentile_interval,
    system_bootstraps,
    system_codes,
    system_interval_note,
    system_means,
    tied,
    within_groups,
)
from geval.analysis.grouped import codes_of_items, renumbered
from geval.data.columns import columns as item_columns
from geval.data.items import Item, positional

ALPHA_LEVELS = ("interval", "ordinal")
#: The values alpha can take: 1 - D_o / D_e is at most 1 (D_o >= 0), and above -1 (with squared distances, as
#: interval and ordinal alpha's are, D_o is at most twice the within-item variance and D_e about twice the total).
ALPHA_RANGE = (-1.0, 1.0)
#: Items up to which alpha is the krippendorff package's own (its memory grows as items x values²); beyond,
#: the same figure from the coincidence matrix summed by counts (`_alpha_by_counts`).
PACKAGE_UP_TO = 20000
#: Alpha's level for a categorical aspect (categories that have no order).
NOMINAL = "nominal"
#: n: what the statistic rests on (items; at the group level groups, at the system level systems).
COLUMNS = ["human", "statistic", "value", "low", "high", "items", "annotators", "note", "n"]


def annotator_matrix(items: list[Item], aspect: str) -> np.ndarray:
    """Scores as an annotators x items array, a row per annotator (by id, `Item.ratings`, in
    first-seen order), NaN where an annotator did not score an item."""
    return item_columns(items).ratings(aspect)[1].copy()


def krippendorff_alpha(matrix: np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha of an annotators x items array; NaN when undefined (fewer than
    two annotators on any item, or a single value throughout)."""
    import krippendorff

    if level not in (*ALPHA_LEVELS, NOMINAL):
        raise ValueError(f"level '{level}' is unknown; use one of {', '.join((*ALPHA_LEVELS, NOMINAL))}")
    matrix = np.asarray(matrix, dtype=float)
    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2) if matrix.size else np.array([], bool)
    paired = matrix[:, pairable] if matrix.size and not pairable.all() else matrix  # a copy only when some are not
    if matrix.shape[0] < 2 or not pairable.any() or len(pd.unique(paired[~np.isnan(paired)])) < 2:
        return float("nan")
    if paired.shape[1] <= PACKAGE_UP_TO:
        return float(krippendorff.alpha(reliability_data=paired, level_of_measurement=level))
    return _alpha_by_counts(paired, level)


def _alpha_by_counts(matrix: np.ndarray, level: str) -> float:
    """`krippendorff_alpha` of an annotators x items array whose every item has two scores or more, from
    its coincidence matrix summed exactly: the items with m scores add up their products of value counts
    (whole numbers), divided by m − 1 once per m, where the package divides item by item (items x
    values x values floats). Alpha as the package computes it from there; it differs from the
    package's by rounding only (about 1e-16)."""
    values = np.sort(pd.unique(matrix[~np.isnan(matrix)]))  # np.unique's, by hashing rather than sorting them all
    counts = np.empty((matrix.shape[1], len(values)))  # items x V
    for column, v in enumerate(values):
        counts[:, column] = (matrix == v).sum(axis=0)
    scores = counts.sum(axis=1)
    coincidences = np.zeros((len(values), len(values)))
    for m in np.unique(scores):
        held = counts if m == scores[0] == scores[-1] and (scores == m).all() else counts[scores == m]
        coincidences += (held.T @ held - np.diag(held.sum(axis=0))) / (m - 1)  # whole numbers, exact, until / (m − 1)
    n_v = coincidences.sum(axis=0)
    expected = (np.outer(n_v, n_v) - np.diagflat(n_v)) / (n_v.sum() - 1)
    distance = (values[:, None] != values[None, :]).astype(float) if level == NOMINAL else \
        _distances(values, n_v[None], level)[0]
    return float(1 - (coincidences * distance).sum() / (expected * distance).sum())


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


def alpha_bootstrap(matrix: np.ndarray, resamples: Resamples,
                    levels: tuple[str, ...] = ALPHA_LEVELS) -> dict[str, np.ndarray]:
    """`krippendorff_alpha` at each of `levels` in each resample of the items (columns) of an annotators x
    items array (the bootstrap's draws of groups, or the jackknife's sets: `Resamples.leave_one_out`), all
    resamples at once: a resample's coincidence matrix is the sum of its items' (an item drawn
    twice counts twice; made once for every level), from which alpha follows as the krippendorff package
    computes it (on the values of the whole array: a value no item of a resample has adds nothing). NaN
    where a resample has one value or no item with two scores."""
    matrix = np.asarray(matrix, dtype=float)
    known = ~np.isnan(matrix)
    values = np.unique(matrix[known])
    n_boot = resamples.size
    if len(values) < 2 or not n_boot:
        return {level: np.full(n_boot, np.nan) for level in levels}
    counts_per_value = np.stack([(matrix == v).sum(axis=0) for v in values], axis=1).astype(float)  # items x V
    pairable = np.maximum(known.sum(axis=0), 2) - 1.0
    per_item = (counts_per_value[:, :, None] * counts_per_value[:, None, :]
                - counts_per_value[:, :, None] * np.eye(len(values))[None]) / pairable[:, None, None]
    per_group = np.stack([np.bincount(resamples.group_of, weights=cell, minlength=resamples.n_groups)
                          for cell in per_item.reshape(len(per_item), -1).T], axis=1)  # groups x V*V
    coincidences = resamples.sums(per_group).reshape(n_boot, len(values), len(values))
    n_v = coincidences.sum(axis=1)
    n = n_v.sum(axis=1)
    expected = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(len(values))[None]) \
        / np.maximum(n - 1.0, 1e-300)[:, None, None]
    found = {}
    for level in levels:
        distance = _distances(values, n_v, level)
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = 1.0 - (coincidences * distance).sum(axis=(1, 2)) / (expected * distance).sum(axis=(1, 2))
        alpha[(n_v > 0).sum(axis=1) < 2] = np.nan
        found[level] = alpha
    return found


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
    annotators x items array (the bootstrap's draws, or the jackknife's sets): each annotator's
    correlation with the others' mean, computed for all resamples at once (`item_bootstrap`), then
    their mean (NaN where one is undefined)."""
    per_annotator = [item_bootstrap(matrix[k], np.delete(matrix, k, axis=0).mean(axis=0), resamples, METRICS)
                     for k in range(matrix.shape[0])]
    return {metric: np.mean([boot[metric] for boot in per_annotator], axis=0) for metric in METRICS}


def alpha_interval(matrix: np.ndarray, groups: np.ndarray, level: str = "interval") -> tuple[float, float]:
    """The 95% interval of `krippendorff_alpha` of an annotators x items array whose items are in
    `groups`: the delete-one-group jackknife with Student's t, kept inside the values alpha can take
    (ALPHA_RANGE: t · se either side can pass 1 when most groups agree exactly); NaN below MIN_GROUPS groups."""
    return alpha_intervals(matrix, groups, (level,))[level][1:]


def alpha_intervals(matrix: np.ndarray, groups: np.ndarray, levels: tuple[str, ...] = ALPHA_LEVELS,
                    codes: tuple[np.ndarray, int] | None = None) -> dict[str, tuple[float, float, float]]:
    """`krippendorff_alpha` at each of `levels` with its interval (`alpha_interval`): level -> (value, low,
    high), the leave-one-group-out sets and their coincidences made once for every level. `codes`: the groups
    as `Resamples` takes them, when known (then `groups` is not read)."""
    resamples = Resamples.leave_one_out(groups, shared=matrix.T, codes=codes)
    boot = alpha_bootstrap(matrix, resamples, levels)
    found = {}
    for level in levels:
        value = krippendorff_alpha(matrix, level)
        low, high = interval(value, boot[level], resamples, correlation=False)
        found[level] = (value, *((low, high) if math.isnan(low) else (max(low, ALPHA_RANGE[0]),
                                                                         min(high, ALPHA_RANGE[1]))))
    return found


def leave_one_out_at(matrix: np.ndarray, groups: np.ndarray, systems: np.ndarray, level: str = "item",
                     n_boot: int = 1000, seed: int = 0,
                     codes: tuple[np.ndarray, int] | None = None) -> dict[str, tuple[float, float, float, int, str]]:
    """`leave_one_out` of every metric at a protocol level, on a complete annotators x items array:
    metric -> (value, low, high, n, note); n counts items, groups or systems, by level.

    - item: over all items; the interval from the delete-one-group jackknife on Fisher's z;
    - group: inside each group of MIN_GROUP_ITEMS items or more, each annotator against the others'
      mean, averaged over the annotators whose correlation is defined there, then the mean over
      the groups (at least MIN_GROUPS of them); the t-interval of the per-group values;
    - system: each annotator's system means against the others' system means, then the mean over
      the annotators; the interval from `n_boot` bootstrap draws of groups.

    `codes`: the groups as `Resamples` takes them, when known (then `groups` is read for the notes only)."""
    if level not in LEVELS:
        raise ValueError(f"level '{level}' is unknown; use one of {', '.join(LEVELS)}")
    if level == "group":
        return _leave_one_out_in_groups(matrix, groups, codes)
    if level == "system":
        return _leave_one_out_of_systems(matrix, groups, systems, n_boot, seed, codes)
    resamples = Resamples.leave_one_out(groups, shared=matrix.T, codes=codes)
    values, loo = _leave_one_out_values(matrix, resamples)
    found = {}
    for metric in METRICS:
        value = values[metric]
        found[metric] = (value, *interval(value, loo[metric], resamples), matrix.shape[1],
                         interval_note(groups) if math.isfinite(value) else _UNDEFINED)
    return found


def _leave_one_out_values(matrix: np.ndarray, resamples: Resamples) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """`leave_one_out` of every metric and `leave_one_out_bootstrap`: a complete array's annotators each
    correlated with the others' mean once for both (`item_values`); one annotator, or a missing score, as they do."""
    if matrix.shape[0] < 2 or np.isnan(matrix).any():
        return {metric: leave_one_out(matrix, metric) for metric in METRICS}, leave_one_out_bootstrap(matrix, resamples)
    per_annotator = [item_values(matrix[k], _others(matrix, k), resamples, METRICS) for k in range(matrix.shape[0])]
    return ({metric: float(np.mean([values[metric] for values, _ in per_annotator])) for metric in METRICS},
            {metric: np.mean([boot[metric] for _, boot in per_annotator], axis=0) for metric in METRICS})


_UNDEFINED = "undefined: an annotator's scores (or the others' mean) are constant"


def _others(matrix: np.ndarray, k: int) -> np.ndarray:
    """The mean of every annotator's scores but annotator k's."""
    return np.delete(matrix, k, axis=0).mean(axis=0)


def _leave_one_out_in_groups(matrix: np.ndarray, groups: np.ndarray,
                             codes: tuple[np.ndarray, int] | None) -> dict:
    """`leave_one_out_at`'s group level."""
    inside = Resamples(groups, 0, codes=codes)
    per_annotator = [within_groups(matrix[k], _others(matrix, k), inside) for k in range(matrix.shape[0])]
    found = {}
    for metric in METRICS:
        stacked = np.stack([values[metric] for values in per_annotator])
        defined = np.isfinite(stacked).any(axis=0)
        per_group = np.full(inside.n_groups, np.nan)
        per_group[defined] = np.nanmean(stacked[:, defined], axis=0)
        count = int(defined.sum())
        if count < MIN_GROUPS:
            found[metric] = (math.nan, math.nan, math.nan, count,
                             f"n/a: {count} of {inside.n_groups} groups have a correlation ({MIN_GROUP_ITEMS} items "
                             f"or more, scores that vary); the group level needs {MIN_GROUPS} groups that have one")
            continue
        value = float(per_group[defined].mean())
        dropped = inside.n_groups - count
        found[metric] = (value, *group_mean_interval(value, per_group), count,
                         f"{dropped} of {inside.n_groups} groups left out (fewer than {MIN_GROUP_ITEMS} items, or "
                         "constant scores)"
                         if dropped else "")
    return found


def _leave_one_out_of_systems(matrix: np.ndarray, groups: np.ndarray, systems: np.ndarray, n_boot: int,
                              seed: int, codes: tuple[np.ndarray, int] | None) -> dict:
    """`leave_one_out_at`'s system level."""
    coded = system_codes(systems)  # the systems coded once, for every annotator's means and resamples
    n_systems = coded[2]
    if n_systems < MIN_SYSTEMS:
        return {metric: (math.nan, math.nan, math.nan, n_systems,
                         f"undefined: {n_systems} system(s); system level needs at least {MIN_SYSTEMS}")
                for metric in METRICS}
    resamples = Resamples(groups, n_boot, seed, codes)
    withheld = system_interval_note(n_systems, resamples)  # as a judge's system level withholds it
    pairs = [(matrix[k], _others(matrix, k)) for k in range(matrix.shape[0])]
    boot = system_bootstraps(pairs, systems, resamples, coded=coded) if not withheld else []
    means = [system_means(x, y, systems, coded) for x, y in pairs]
    found = {}
    for metric in METRICS:
        value = float(np.mean([correlate(metric, *tied(metric, *xy)) for xy in means]))
        low, high = percentile_interval(np.mean([b[metric] for b in boot], axis=0)) \
            if boot and math.isfinite(value) else (math.nan, math.nan)
        found[metric] = (value, low, high, n_systems,
                         withheld if math.isfinite(value) else "undefined: constant system means")
    return found


def annotator_agreement(items: list[Item], aspects: list[str] | None = None, n_boot: int = 1000,
                        seed: int = 0, alpha: bool = True, level: str = "item") -> pd.DataFrame:
    """Alpha (interval, ordinal; unless `alpha` is False) and leave-one-out Pearson, Spearman
    and Kendall per human aspect, at the protocol `level` (`leave_one_out_at`; alpha is over all
    items), with 95% intervals over groups (`n_boot` bootstrap draws, seeded, at the system level
    only). Columns: human, statistic, value, low, high, items, annotators, note. An aspect with
    one score per item (a dataset that keeps only the mean, like SummEval's or DSTC9's files) gets
    NaN rows saying so. Each level's leave-one-out figures are made once for these items (the leaderboard's
    ceiling and the report's people read the same)."""
    aspects = aspects or list(dict.fromkeys(a for item in items for a in item.human))
    held = item_columns(items)
    rows = []
    for aspect in aspects:
        scored, annotators, groups, codes, matrix, panel, full, systems, panel_rows = held.memo(
            ("annotator agreement", aspect), lambda aspect=aspect: _scored_by(items, aspect))  # each level reads it
        if annotators < 2:
            note = "undefined: one score per item (the dataset keeps only one score, or the mean)"
            rows += [_row(aspect, s, math.nan, (math.nan, math.nan), len(scored), annotators, note)
                     for s in _statistics() if alpha or not s.startswith("alpha")]
            continue
        for alpha_level, (value, low, high) in (alpha_intervals(matrix, groups, codes=codes) if alpha else {}).items():
            rows.append(_row(aspect, f"alpha ({alpha_level})", value, (low, high), len(scored), annotators,
                             interval_note(groups) if math.isfinite(value)
                             else "undefined: no two scores on an item, or one value"))
        width, common, left = len(scored), len(panel), int((~full).sum())
        found = held.memo(("leave one out", aspect, level, n_boot, seed), lambda: leave_one_out_at(
            matrix[panel_rows][:, full], groups[full], systems, level, n_boot, seed,
            renumbered(codes[0][full], codes[1])))
        for metric, (value, low, high, n, note) in found.items():
            said = f"{left} of {width} items left out: other annotators scored them than the " \
                   f"{common} who scored most items" if left else ""
            notes = [note, said] if math.isnan(value) else [said, note]  # why there is no value first
            rows.append(_row(aspect, f"leave-one-out {metric}", value, (low, high), int(full.sum()), common,
                             "; ".join(filter(None, notes)), n))
    return pd.DataFrame(rows, columns=COLUMNS)


def _scored_by(items: list[Item], aspect: str) -> tuple:
    """What `annotator_agreement` reads of `aspect` at any level: the items scored on it, the most scores an
    item has, their groups (and as `Resamples` codes them), the annotators x items array; the panel (`_panel`),
    which items it scored whole, those items' systems, and the panel's rows of the array (None for the last four
    below two annotators)."""
    found = item_columns(items)
    where = np.flatnonzero(found.scored(aspect))
    scored = found.items if len(where) == len(items) else [items[i] for i in where.tolist()]  # no copy of them all
    counts = found.rated(aspect)[where]  # each scored item's number of scores
    annotators = int(counts.max(initial=0))
    groups = found.groups[where]
    codes = codes_of_items(found, where)
    matrix = annotator_matrix(scored, aspect)
    if annotators < 2:
        return scored, annotators, groups, codes, matrix, None, None, None, None
    panel, full, rows = _positional_panel(counts) if not found.named(aspect) else _named_panel(scored, aspect)
    systems = np.array(found.systems[where].tolist())[full]
    for shared in (groups, codes[0], matrix, full, systems):  # read by every level: none may change them
        shared.flags.writeable = False
    return scored, annotators, groups, codes, matrix, panel, full, systems, rows


def _named_panel(items: list[Item], aspect: str) -> tuple[tuple[str, ...], np.ndarray, list[int]]:
    """The panel of annotators named by the items (`_panel`), which items it scored whole, and its rows of
    `annotator_matrix(items, aspect)`."""
    panel = _panel(items, aspect)
    return panel, np.array([set(item.ratings(aspect)) == set(panel) for item in items]), _rows(items, aspect, panel)


def _positional_panel(counts: np.ndarray) -> tuple[tuple[str, ...], np.ndarray, list[int]]:
    """`_named_panel` of items whose annotators are "#1", "#2", ... by position (an item of k scores: "#1" ...
    "#k"), from each item's number of scores (`counts`): the panel is "#1" ... "#k" for the most common k (the
    first seen of those as common), the items of k scores are those it scored whole, its rows the first k."""
    values, first, seen = np.unique(counts, return_index=True, return_counts=True)
    common = seen == seen.max()
    k = int(values[common][np.argmin(first[common])])
    return positional(k), counts == k, list(range(k))


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


def _row(human, statistic, value, bounds, n_items, annotators, note, n=None) -> dict:
    return {"human": human, "statistic": statistic, "value": float(value), "low": bounds[0], "high": bounds[1],
            "items": int(n_items), "annotators": int(annotators), "note": note,
            "n": int(n_items if n is None else n)}
