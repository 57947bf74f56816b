"""Correlation between judge and human scores at item, group and system level, with
bootstrap 95% confidence intervals that resample groups (dialogues, documents), not items.

- item level: one correlation over all items;
- group level: a correlation inside each group, then their mean (the G-EVAL paper's
  SummEval protocol: per document over its summaries, then averaged);
- system level: the mean score of each system, then one correlation across systems.

A correlation of a constant vector is undefined: NaN with a note, never a crash. Too little
data says so instead of giving a number: below MIN_GROUPS groups no interval is given, and the
group level needs MIN_GROUPS groups of at least MIN_GROUP_ITEMS items (two points always
correlate at +1 or -1).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

METRICS = ("pearson", "spearman", "kendall")
LEVELS = ("item", "group", "system")
#: Fewer groups (dialogues, documents) than this: no bootstrap interval, and no group level.
MIN_GROUPS = 10
#: Items a group needs for a correlation inside it.
MIN_GROUP_ITEMS = 3


#: Seed 000's score of an item over several aspects, against the human Overall.
MEAN_OF_ASPECTS = "mean of aspects"


def mean_of_aspects(scores: pd.DataFrame, scales: dict[str, tuple[float, float]]) -> pd.Series:
    """The mean of aspects, one definition everywhere: each aspect column of `scales` ({column:
    (min, max)}) mapped onto 0-1 by its scale, then the mean per row (NaN when one is missing),
    so that aspects asked on different scales (1-3 and 0-1) weigh the same."""
    parts = [(scores[column].astype(float) - low) / (high - low) for column, (low, high) in scales.items()]
    return pd.concat(parts, axis=1).mean(axis=1, skipna=False).rename(MEAN_OF_ASPECTS)


def few_groups(count: int) -> str:
    """The note for an interval withheld because it would rest on `count` groups."""
    return (f"no interval: {count} group{'s' if count != 1 else ''} (dialogues, documents); "
            f"a bootstrap over groups needs at least {MIN_GROUPS}")


def interval_note(groups) -> str:
    """`few_groups` when `groups` (one label per row) has fewer than MIN_GROUPS distinct groups, else ""."""
    count = len(set(np.asarray(groups).astype(str).tolist()))
    return few_groups(count) if count < MIN_GROUPS else ""


@dataclass(frozen=True)
class Correlation:
    """A correlation with its bootstrap CI, how many units it rests on, and any note."""

    metric: str
    level: str
    value: float
    low: float
    high: float
    n: int
    note: str = ""


def correlate(metric: str, x: np.ndarray, y: np.ndarray) -> float:
    """Pearson, Spearman or Kendall tau-b; NaN when undefined (fewer than 2 points, constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if metric == "pearson":
            return float(stats.pearsonr(x, y).statistic)
        if metric == "spearman":
            return float(stats.spearmanr(x, y).statistic)
        if metric == "kendall":
            return float(stats.kendalltau(x, y, variant="b").statistic)
    raise ValueError(f"metric '{metric}' is unknown; use one of {', '.join(METRICS)}")


def agreement(
    judge: np.ndarray,
    human: np.ndarray,
    groups: np.ndarray | None = None,
    systems: np.ndarray | None = None,
    levels: tuple[str, ...] = LEVELS,
    n_boot: int = 1000,
    seed: int = 0,
) -> list[Correlation]:
    """Every metric at every requested level. Rows with a NaN on either side are dropped first."""
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    groups = np.asarray(groups if groups is not None else np.arange(len(judge))).astype(str)
    systems = np.asarray(systems if systems is not None else np.full(len(judge), "")).astype(str)
    keep = ~(np.isnan(judge) | np.isnan(human))
    judge, human, groups, systems = judge[keep], human[keep], groups[keep], systems[keep]
    members = group_members(groups)
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(members), len(members)) for _ in range(n_boot)] if members else []
    builders = {"item": _item_level, "group": _group_level, "system": _system_level}
    results = []
    for level in levels:
        if level not in builders:
            raise ValueError(f"level '{level}' is unknown; use one of {', '.join(LEVELS)}")
        results.extend(builders[level](judge, human, systems, members, draws))
    if len(members) < MIN_GROUPS:  # a bootstrap over so few groups would look like any other interval
        results = [replace(r, low=float("nan"), high=float("nan"),
                           note="; ".join(filter(None, (r.note, few_groups(len(members)) if np.isfinite(r.value) else ""))))
                   for r in results]
    return results


def to_frame(results: list[Correlation]) -> pd.DataFrame:
    """Correlations as a table."""
    return pd.DataFrame([r.__dict__ for r in results])


def _ci(values: list[float]) -> tuple[float, float]:
    finite = np.asarray([v for v in values if np.isfinite(v)])
    if len(finite) < max(10, len(values) // 2):
        return float("nan"), float("nan")
    return float(np.percentile(finite, 2.5)), float(np.percentile(finite, 97.5))


def _item_level(judge, human, systems, members, draws) -> list[Correlation]:
    values = {metric: correlate(metric, judge, human) for metric in METRICS}
    defined = [metric for metric in METRICS if not np.isnan(values[metric])]
    boot: dict[str, list[float]] = {metric: [] for metric in defined}
    for draw in draws:  # one resample at a time: memory stays at one index, whatever the size
        index = np.concatenate([members[g] for g in draw])
        for metric in defined:
            boot[metric].append(fast_correlate(metric, judge[index], human[index]))
    results = []
    for metric in METRICS:
        if metric not in boot:
            results.append(Correlation(metric, "item", values[metric], float("nan"), float("nan"), len(judge),
                                       "undefined: constant or too few scores"))
            continue
        low, high = _ci(boot[metric])
        results.append(Correlation(metric, "item", values[metric], low, high, len(judge)))
    return results


def _group_level(judge, human, systems, members, draws) -> list[Correlation]:
    results = []
    for metric in METRICS:
        per_group = np.array([correlate(metric, judge[m], human[m]) if len(m) >= MIN_GROUP_ITEMS else np.nan
                              for m in members])
        defined = np.isfinite(per_group)
        if defined.sum() < MIN_GROUPS:
            results.append(Correlation(metric, "group", float("nan"), float("nan"), float("nan"), int(defined.sum()),
                                       f"n/a ({int(defined.sum())} groups): the group level needs at least {MIN_GROUPS} "
                                       f"groups with {MIN_GROUP_ITEMS} or more items and varying scores"))
            continue
        dropped = int((~defined).sum())
        note = (f"{dropped} of {len(members)} groups left out (fewer than {MIN_GROUP_ITEMS} items, or constant "
                "scores)") if dropped else ""
        boot = [float(np.nanmean(per_group[d])) if np.isfinite(per_group[d]).any() else float("nan") for d in draws]
        low, high = _ci(boot)
        results.append(Correlation(metric, "group", float(per_group[defined].mean()), low, high,
                                   int(defined.sum()), note))
    return results


def _system_level(judge, human, systems, members, draws) -> list[Correlation]:
    n_systems = len(set(systems.tolist()) - {""})
    if n_systems < 3:
        note = f"undefined: {n_systems} system(s); system level needs at least 3"
        nan = float("nan")
        return [Correlation(metric, "system", nan, nan, nan, n_systems, note) for metric in METRICS]
    system_ids, system_index = np.unique(systems, return_inverse=True)
    named = systems != ""  # items without a system are no system of their own

    def means(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        index = index[named[index]]
        counts = np.bincount(system_index[index], minlength=len(system_ids))
        present = counts > 0
        sums_j = np.bincount(system_index[index], weights=judge[index], minlength=len(system_ids))
        sums_h = np.bincount(system_index[index], weights=human[index], minlength=len(system_ids))
        return sums_j[present] / counts[present], sums_h[present] / counts[present]

    full = means(np.arange(len(judge)))
    resampled = [means(np.concatenate([members[g] for g in draw])) for draw in draws]
    results = []
    for metric in METRICS:
        value = correlate(metric, *full)
        low, high = _ci([correlate(metric, *r) for r in resampled])
        note = "undefined: constant system means" if np.isnan(value) else ""
        results.append(Correlation(metric, "system", value, low, high, n_systems, note))
    return results


# --- group bootstrap for any statistic (protocol averages, annotator ceilings) ----------------


def group_members(groups: np.ndarray) -> list[np.ndarray]:
    """The row indices of each distinct group, groups in sorted order."""
    groups = np.asarray(groups).astype(str)
    if len(groups) == 0:
        return []
    ids, index = np.unique(groups, return_inverse=True)
    order = np.argsort(index, kind="stable")  # rows of each group together, in row order
    return np.split(order, np.cumsum(np.bincount(index, minlength=len(ids)))[:-1])


def bootstrap_groups(statistic, groups: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[float, float]:
    """A 95% percentile interval of `statistic(rows)` over resamples of whole groups.

    `statistic` takes an array of row indices (a group drawn twice contributes its rows
    twice) and returns a float, NaN where undefined. The interval is NaN when fewer than
    half the draws (or 10) give a finite value, as for the correlations above, and when there
    are fewer than MIN_GROUPS groups (`few_groups` says why). The draws are those of
    `agreement` with the same `seed` and groups, so intervals line up.
    """
    members = group_members(groups)
    if len(members) < MIN_GROUPS:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(members), len(members)) for _ in range(n_boot)]
    return _ci([statistic(np.concatenate([members[g] for g in draw])) for draw in draws])


def fast_correlate(metric: str, x: np.ndarray, y: np.ndarray) -> float:
    """`correlate` for bootstrap loops: Pearson and Spearman (Pearson on average ranks)
    computed directly with numpy, equal to scipy's to rounding; Kendall through `correlate`.
    NaN when undefined (fewer than 2 points, a constant vector)."""
    if metric == "kendall":
        return correlate(metric, x, y)
    if metric not in METRICS:
        raise ValueError(f"metric '{metric}' is unknown; use one of {', '.join(METRICS)}")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if metric == "spearman":
        x, y = stats.rankdata(x), stats.rankdata(y)
    xm, ym = x - x.mean(), y - y.mean()
    value = float(xm @ ym) / float(np.sqrt(float(xm @ xm) * float(ym @ ym)))
    return max(-1.0, min(1.0, value))
