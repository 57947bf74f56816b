"""Statistics made of per-group sums, with the delete-one-group jackknife's 95% interval, for one
dataset or many at once (the coverage simulations in tests/test_judge_errors_stats.py run the same
code on a thousand datasets in one call).

A statistic that is a function of sums over items (a share, a mean, a confusion matrix, a variance)
is recomputed without each group by subtracting that group's sums from the totals: no resample is
drawn, and every leave-one-out value of every dataset comes out of one array operation. The
interval is `geval.analysis.correlation.jackknife_interval`'s, vectorized: the statistic (on a
transformed scale where that keeps it symmetric: log for a ratio, Fisher's z for a kappa)
± t(0.975, groups − 1) · the jackknife's standard error, over the groups that hold data. Below
MIN_GROUPS groups no interval is given, as everywhere in the app.

Arrays: rows (items) last; any leading axes are datasets. `codes` give each row's group (0..G−1),
the same for every dataset."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from geval.analysis.correlation import (
    EXACT_UP_TO,
    MIN_GROUPS,
    Resamples,
    correlate,
    few_groups,
    item_bootstrap,
    reading,
    system_codes,
)
from geval.data.columns import ItemColumns

#: How a statistic is read before its interval is made: as it is, on the log scale (a ratio of
#: spreads), on Fisher's z (bounded by −1 and 1), or on the logit (a share, inside 0-1); "wilson": an
#: accuracy's interval is Wilson's on its items' effective number (`wilson_interval`), not a t-interval.
TRANSFORMS = ("none", "log", "fisher", "logit", "wilson")
#: The normal quantile of a 95% interval (`wilson_interval`).
Z95 = float(stats.norm.ppf(0.975))
#: Where a share's interval is kept (inside [0, 1]), and a kappa's or a difference of shares' ([-1, 1]).
SHARE, SIGNED = (0.0, 1.0), (-1.0, 1.0)


def group_codes(groups) -> tuple[np.ndarray, int]:
    """Each row's group as a number 0..G−1 (groups in sorted order), and G. Strings a table holds (pandas' str),
    none missing, are coded as they are: the same order, without a copy of each (Arrow sorts them by their UTF-8
    bytes, which is the order of their code points, as numpy's)."""
    strings = isinstance(getattr(groups, "dtype", None), pd.StringDtype) and not groups.isna().any()
    codes, names = pd.factorize(groups if strings else np.asarray(groups).astype(str), sort=True)
    return codes.astype(np.int64), len(names)


def codes_of_items(found: ItemColumns, chosen: np.ndarray) -> tuple[np.ndarray, int]:
    """`group_codes` of the groups (`ItemColumns.groups`) of the items at the positions `chosen` of
    `found`: the codes of all its items, made once per list of items, renumbered over the groups held."""
    every, n_groups = found.memo(("group codes",), lambda: group_codes(found.strings("groups")))
    return renumbered(every[chosen], n_groups)


def systems_of_items(found: ItemColumns, chosen: np.ndarray) -> tuple[np.ndarray, int]:
    """The systems (`ItemColumns.systems`) of the items at the positions `chosen` of `found` as `system_codes`
    codes them (−1 for an item without one), and how many systems all of `found`'s items name: made once per
    list of items (`held_systems` reads them as `system_codes` gives some rows' systems)."""
    every, count = found.memo(("system codes",), lambda: _system_rows(found.counted("systems")))
    return every[chosen], count


def _system_rows(systems) -> tuple[np.ndarray, int]:
    named, system_of, count = system_codes(systems)
    rows = np.full(len(systems), -1, dtype=np.int64)
    rows[named] = system_of
    return rows, count


def held_systems(rows: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, int]:
    """`system_codes` of rows whose systems are coded as `systems_of_items` codes them: the rows that name one,
    their systems renumbered over those they hold, and how many those are."""
    named = rows >= 0
    return (named, *renumbered(rows[named], count))


def renumbered(codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, int]:
    """Group codes (0..n_groups−1) of some rows as 0..G−1 over the G groups they hold, in the same
    order: what `group_codes` gives of those rows' groups."""
    held = np.zeros(n_groups, bool)
    held[codes] = True
    return (np.cumsum(held) - 1)[codes].astype(np.int64), int(held.sum())


def group_sums(values, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """The sum of each group's rows: values (..., rows) -> (..., groups). `codes` (rows, or the
    shape of `values`: a cell per dataset) say where each row goes, 0..n_groups−1. NaN counts as 0:
    mask first."""
    values = np.asarray(values, dtype=float)
    values = np.nan_to_num(values) if np.isnan(values).any() else values  # a copy only where NaN is
    if values.ndim == 1 and np.shape(codes) == values.shape:  # one dataset: the rows' own codes are the bins
        return np.bincount(codes, weights=values, minlength=n_groups)
    flat = values.reshape(-1, values.shape[-1])
    cells = np.broadcast_to(codes, values.shape).reshape(flat.shape)
    index = (np.arange(len(flat))[:, None] * n_groups + cells).ravel()
    sums = np.bincount(index, weights=flat.ravel(), minlength=len(flat) * n_groups)
    return sums.reshape(*values.shape[:-1], n_groups)


def without_each(per_group: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """The totals over groups and the totals without each group in turn (the group axis kept)."""
    total = per_group.sum(axis=axis, keepdims=True)
    return np.squeeze(total, axis=axis), total - per_group


def share_parts(hits, counted, codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sum(hits) / sum(counted) over the rows (the last axis; leading axes are datasets), the same without
    each group (`codes`) in turn, and which groups count a row: (value, leave-one-out, present)."""
    per_group = np.stack([group_sums(hits, codes, n_groups), group_sums(counted, codes, n_groups)], axis=-1)
    total, loo = without_each(per_group, axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total[..., 0] / total[..., 1], loo[..., 0] / loo[..., 1], per_group[..., 1] > 0


def pearson_of(sums: np.ndarray) -> np.ndarray:
    """Pearson's r from sums [n, Σx, Σy, Σx², Σy², Σxy] in the last axis (NaN where a side is constant)."""
    n, sx, sy, sxx, syy, sxy = np.moveaxis(sums, -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (sxx - sx * sx / n) * (syy - sy * sy / n)
        r = (sxy - sx * sy / n) / np.sqrt(var)
    return np.where(var > 1e-12 * np.maximum(sxx * syy, 1e-300), np.clip(r, -1.0, 1.0), np.nan)


def correlation_with_each_left_out(metric: str, x: np.ndarray, y: np.ndarray, groups,
                                   codes: tuple[np.ndarray, int] | None = None,
                                   y_ranks: np.ndarray | None = None) -> tuple[float, np.ndarray, np.ndarray, str]:
    """One item-level correlation (`metric`: pearson or spearman) and its value without each group, in
    time linear in the groups: Pearson exactly from per-group sums; Spearman exactly up to EXACT_UP_TO
    items (`geval.analysis.correlation.item_bootstrap`), above it from the whole sample's ranks (the
    note says so, as the app's tables do). `codes`: `group_codes(groups)` when known; `y_ranks`: those
    of `y` (`stats.rankdata`) when known. Returns (value, leave-one-out, groups present, note)."""
    codes, n_groups = group_codes(groups) if codes is None else codes
    if metric == "spearman" and len(x) <= EXACT_UP_TO:
        loo = item_bootstrap(x, y, Resamples.leave_one_out(groups), (metric,))[metric]
        return correlate(metric, x, y), loo, np.ones(n_groups, bool), ""
    note = ""
    if metric == "spearman":
        value, x, y = spearman_ranked(x, y, y_ranks)
        note = f"interval linearized ({len(x)} items > {EXACT_UP_TO}): from the whole sample's ranks"
    else:
        value = correlate(metric, x, y)
    x, y = x - x.mean(), y - y.mean()  # centred first, for accuracy
    columns = (lambda: np.ones_like(x), lambda: x, lambda: y, lambda: x * x, lambda: y * y, lambda: x * y)
    sums = np.stack([group_sums(column(), codes, n_groups) for column in columns], axis=-1)  # one product at a time
    return value, pearson_of(without_each(sums, axis=-2)[1]), np.ones(n_groups, bool), note


def spearman_ranked(x: np.ndarray, y: np.ndarray, y_ranks: np.ndarray | None = None) -> tuple[float, np.ndarray,
                                                                                                np.ndarray]:
    """Spearman's correlation of x and y as `correlate` gives it (scipy's: Pearson's of the ranks,
    NaN where a side is constant or holds NaN), and the ranks of each, each ranked once (`y_ranks`:
    y's when known)."""
    x_ranks = stats.rankdata(x)
    y_ranks = stats.rankdata(y) if y_ranks is None else y_ranks
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0 or np.isnan(x).any() or np.isnan(y).any():
        return correlate("spearman", x, y), x_ranks, y_ranks
    return float(np.corrcoef(np.column_stack((x_ranks, y_ranks)), rowvar=False)[1, 0]), x_ranks, y_ranks


def t_interval(value, loo, present=None, transform: str = "none", items=None) -> tuple[np.ndarray, np.ndarray]:
    """The jackknife's 95% t-interval of `value` (...) from its leave-one-group-out values `loo`
    (..., groups), over the groups `present` (..., groups; default all) that hold data (a group with
    none leaves the statistic as it is and is no unit); with the transform "wilson", `wilson_interval` of a
    share of `items` (...). NaN where fewer than MIN_GROUPS groups hold data, or the value or a leave-one-out
    value is undefined."""
    if transform not in TRANSFORMS:
        raise ValueError(f"transform '{transform}' is unknown; use one of {', '.join(TRANSFORMS)}")
    if transform == "wilson":
        return wilson_interval(value, loo, items, present)
    value, loo = np.asarray(value, dtype=float), np.asarray(loo, dtype=float)
    present = np.ones(loo.shape, bool) if present is None else np.broadcast_to(present, loo.shape)
    forward, back = _transform(transform)
    with np.errstate(invalid="ignore", divide="ignore"):
        z, z_loo = forward(value), forward(loo)
        units = present.sum(axis=-1)
        kept = np.where(present, z_loo, 0.0)
        mean = kept.sum(axis=-1) / units
        spread = np.where(present, (z_loo - mean[..., None]) ** 2, 0.0).sum(axis=-1)
        se = np.sqrt((units - 1) / units * spread)
        half = stats.t.ppf(0.975, np.maximum(units - 1, 1)) * se
        low, high = back(z - half), back(z + half)
    bad = (units < MIN_GROUPS) | ~np.isfinite(z) | ~np.isfinite(np.where(present, z_loo, 0.0)).all(axis=-1)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def wilson_interval(value, loo, items, present=None) -> tuple[np.ndarray, np.ndarray]:
    """The 95% interval of a share (...) of `items` (...), an accuracy: Wilson's score interval on the items'
    effective number over their groups, `items` over the design effect (the jackknife's variance of the share from
    its leave-one-group-out values `loo` (..., groups), over the groups `present`, against the binomial's
    p(1 − p) / items; at least 1). Where the groups' items are right or wrong together they count as fewer; a share
    of 0 or 1, whose variance is 0, is read on every item. It stays inside [0, 1] and is given at 0 and 1, where the
    jackknife's t-interval (as it is: [1, 1]; on the logit: none) missed a true accuracy of .9-.97 in 8-40% of
    datasets, or gave none in up to 80% (the coverage simulation, tests/test_stats.py). NaN as `t_interval`'s."""
    value, loo = np.asarray(value, dtype=float), np.asarray(loo, dtype=float)
    items = np.asarray(items, dtype=float)
    present = np.ones(loo.shape, bool) if present is None else np.broadcast_to(present, loo.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        units = present.sum(axis=-1)
        mean = np.where(present, loo, 0.0).sum(axis=-1) / units
        variance = (units - 1) / units * np.where(present, (loo - mean[..., None]) ** 2, 0.0).sum(axis=-1)
        binomial = value * (1 - value) / items
        effective = np.where(variance > binomial, items * binomial / variance, items)
        q = Z95 ** 2 / effective
        centre = (value + q / 2) / (1 + q)
        half = Z95 * np.sqrt(value * (1 - value) / effective + q / (4 * effective)) / (1 + q)
    bad = (units < MIN_GROUPS) | ~np.isfinite(value) | ~np.isfinite(np.where(present, loo, 0.0)).all(axis=-1) | \
        ~(items > 0)
    return np.where(bad, np.nan, centre - half), np.where(bad, np.nan, centre + half)


def _transform(name: str):
    if name == "log":
        return (lambda v: np.log(np.where(v > 0, v, np.nan))), np.exp
    if name == "fisher":
        return (lambda v: np.arctanh(np.clip(v, -1 + 1e-12, 1 - 1e-12))), np.tanh
    if name == "logit":
        return (lambda v: np.log(v / (1 - v))), (lambda z: 1 / (1 + np.exp(-z)))
    return (lambda v: v), (lambda v: v)


@dataclass(frozen=True)
class Estimate:
    """A statistic with its 95% interval over groups (NaN when withheld), the groups it rests on,
    and why there is no value or interval when there is none."""

    value: float
    low: float = math.nan
    high: float = math.nan
    groups: int = 0
    note: str = ""

    def reads(self, digits: int = 3) -> str:
        """"0.412 [0.330, 0.490]", "0.412 (no interval: 5 groups)", "0.000 (no interval: a share of 0%, ...)",
        "n/a (undefined: no two annotators labeled 10 items together)" (why, when noted), "n/a (undefined)"."""
        if not math.isfinite(self.value) and self.note:
            return f"n/a ({self.note})"
        if math.isfinite(self.value) and not self.has_interval():
            return f"{self.value:.{digits}f} ({self.withheld()})"
        return reading(self.value, self.low, self.high, "item", self.groups, self.groups, digits)

    def percent(self) -> str:
        """A share as a percentage with its interval: "41% [35%, 47%]", "41% (no interval: 5 groups)"."""
        if not math.isfinite(self.value):
            return "n/a"
        shown = f"{self.value:.0%}"
        if self.has_interval():
            return f"{shown} [{self.low:.0%}, {self.high:.0%}]"
        return f"{shown} ({self.withheld()})"

    def has_interval(self) -> bool:
        """Whether both ends of its interval are known."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    def withheld(self) -> str:
        """Why a defined value has no interval, briefly: "no interval: 5 groups", else the reason noted
        ("no interval: undefined when some group is left out", `bounded`'s)."""
        if self.groups < MIN_GROUPS:
            return f"no interval: {self.groups} group{'s' if self.groups != 1 else ''}"
        return self.note or "no interval"

    def above(self, than: float = 0.0) -> bool:
        """Whether its interval lies above `than`."""
        return math.isfinite(self.low) and self.low > than

    def below(self, than: float = 0.0) -> bool:
        """Whether its interval lies below `than`."""
        return math.isfinite(self.high) and self.high < than


def estimate(value: float, loo: np.ndarray, present: np.ndarray | None = None, transform: str = "none",
             undefined: str = "undefined", bounds: tuple[float, float] = (-math.inf, math.inf),
             items: int | None = None) -> Estimate:
    """One dataset's statistic as an Estimate: `value`, its interval from `loo` (groups) over the
    groups `present` (a share of `items` with the transform "wilson": `wilson_interval`), kept inside `bounds` (a
    share's [0, 1]), the note saying why an interval or the value is withheld (`undefined`: why the value is, when
    it is NaN)."""
    loo = np.asarray(loo, dtype=float)
    present = np.ones(loo.shape, bool) if present is None else np.asarray(present, bool)
    if not math.isfinite(value):
        return Estimate(math.nan, groups=int(present.sum()), note=undefined)
    low, high = t_interval(value, loo, present, transform, items)
    return bounded(value, float(low), float(high), int(present.sum()), transform, bounds)


def bounded(value: float, low: float, high: float, groups: int, transform: str = "none",
            bounds: tuple[float, float] = (-math.inf, math.inf)) -> Estimate:
    """An Estimate of a defined `value` whose interval is made: kept inside `bounds`, with the note
    saying why it is withheld where it is (too few groups; the same value with any group left out, whose
    interval would have no width; a share of 0 or 1, whose logit has none; undefined when some group is left out)."""
    if groups < MIN_GROUPS:
        note = few_groups(groups)
    elif low == high == value:  # every group left out gives the same value (perfect agreement): no spread to read
        low = high = math.nan
        note = "no interval: the same with any group left out"
    elif math.isfinite(low):
        note = ""
    elif transform == "logit" and value in (0.0, 1.0):
        note = f"no interval: a share of {value:.0%}"  # its logit, where the interval is made, is infinite
    else:
        note = "no interval: undefined when some group is left out"
    return Estimate(float(value), max(low, bounds[0]), min(high, bounds[1]), groups, note)
