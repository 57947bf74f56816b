"""Correlation kernels and the group bootstrap: the one place where a correlation is computed.

- item level: one correlation over all items;
- group level: a correlation inside each group (dialogue, document), then their mean (the
  G-EVAL paper's SummEval protocol: per document over its summaries, then averaged);
- system level: the mean score of each system, then one correlation across systems.

95% intervals of item- and group-level statistics come from the delete-one-group jackknife
with Student's t on groups − 1 degrees of freedom (`jackknife_interval`, `jackknife_p`; an
item-level row's own interval on fewer when a few groups of uneven sizes carry most of it,
`jackknife_df`): each
statistic is recomputed with each group (dialogue, document) left out, never single items;
its standard error is the jackknife's, a correlation's interval is made on Fisher's z and
mapped back, a difference's is t · se either side of it with a two-sided p from the same t. At
the group level (a mean of per-group values) this is the t-interval of the per-group values.
Chosen by a null simulation (tests/test_stats.py): two equally good judges give p < 0.05 in
3-7% of datasets at 10, 14 and 30 groups, item and group level, where the percentile bootstrap
over groups gave 9-10% at 10-14 groups. System-level intervals resample groups with a
percentile bootstrap (systems are too few to leave out one at a time), and need MIN_GROUPS
systems as well: a correlation of 5 system means reads 1.000 [0.198, 1.000] from luck alone.

Every statistic of a table is computed on the same leave-one-out sets (or draws: `Resamples`),
in numpy, a block at a time: Pearson from per-group sums,
Spearman from the ranks of each resample (weighted by how often each group was drawn),
Kendall exactly per resample. Correlations inside groups and across systems are computed a
matrix at a time too (`rowwise`: all groups of one size at once; each resample's system means
from per-group sums). Above `EXACT_UP_TO` items, Spearman and Kendall intervals are
linearized instead (Spearman on the ranks of the whole sample; Kendall from each item's
concordance with the others, its Hájek projection), which the note says: their values are
always exact.

Too little data says so instead of giving a number: below MIN_GROUPS groups (or, at the
system level, systems) no interval is given, and the group level needs MIN_GROUPS groups of
at least MIN_GROUP_ITEMS items (two points always correlate at +1 or -1). A correlation of a
constant vector is undefined: NaN with a note, never a crash.
"""

from __future__ import annotations

import functools
import hashlib
import math
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from geval.wording import fixed

METRICS = ("pearson", "spearman", "kendall")
LEVELS = ("item", "group", "system")
#: Fewer groups (dialogues, documents) than this: no bootstrap interval, and no group level.
MIN_GROUPS = 10
#: Items a group needs for a correlation inside it.
MIN_GROUP_ITEMS = 3
#: Systems the system level needs.
MIN_SYSTEMS = 3
#: Up to this many items, Spearman and Kendall intervals are recomputed exactly in every resample.
EXACT_UP_TO = 2000
#: Resamples computed at once, at the least (memory: BLOCK x items floats for ranks).
BLOCK = 32
#: Cells (resamples x values) of a block up to which more resamples are computed at once.
CELLS_PER_BLOCK = 1_000_000
#: Resamples x groups up to which the counts of each resample are kept for the next statistic.
COUNTS_KEPT_UP_TO = 50_000_000
#: Resamples x groups up to which the bootstrap's draws are kept (8 bytes a cell) for other tables of the same groups.
DRAWS_KEPT_UP_TO = 5_000_000
#: Rows whose groups `interval_note` counts first (as many groups among them as MIN_GROUPS: enough, the rest unread).
FIRST_ROWS = 10_000
#: Above this many values per row, `rowwise` Kendall calls scipy row by row (pairs grow as the square).
ROWWISE_KENDALL_UP_TO = 200


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


def correlate(metric: str, x, y) -> float:
    """Pearson, Spearman or Kendall tau-b; NaN when undefined (fewer than 2 points, constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if metric not in METRICS:
        raise ValueError(f"metric '{metric}' is unknown; use one of {', '.join(METRICS)}")
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if metric == "pearson":
            return float(stats.pearsonr(x, y).statistic)
        if metric == "spearman":
            return float(stats.spearmanr(x, y).statistic)
        return float(stats.kendalltau(x, y, variant="b").statistic)


#: The metrics that read ranks, and the decimals systems' means are rounded to before they are ranked (`tied`).
RANKED, TIE_DECIMALS = ("spearman", "kendall"), 12


def tied(metric: str, *means: np.ndarray) -> tuple[np.ndarray, ...]:
    """`means` (systems' means, any shape) as `metric` reads them: for a rank correlation rounded to TIE_DECIMALS
    decimals, so that means equal in exact arithmetic (people's means of thirds), which float sums leave apart by
    the order their rows were summed in, tie whatever order the store returned the rows in; Pearson's as they are."""
    return tuple(np.round(m, TIE_DECIMALS) for m in means) if metric in RANKED else means


def few_groups(count: int) -> str:
    """The note for an interval withheld because it would rest on `count` groups."""
    return (f"no interval: {count} group{'s' if count != 1 else ''} (dialogues, documents); "
            f"an interval over groups needs at least {MIN_GROUPS}")


def few_systems(count: int) -> str:
    """The note for a system-level interval withheld because the correlation rests on `count` systems."""
    return (f"no interval: {count} system{'s' if count != 1 else ''}; an interval at the system level needs at "
            f"least {MIN_GROUPS}")


def reading(value: float, low: float, high: float, level: str, n: int, groups: int | None = None,
            digits: int = 3) -> str:
    """How a statistic reads in a table: "0.512 [0.301, 0.690]"; "0.512 (no interval: 5 groups)"
    when its interval is withheld ("(no interval: 6 systems)" at the system level from fewer than
    MIN_GROUPS systems); "n/a (2 groups, 10 needed)" when the value itself is (the group
    level from fewer than MIN_GROUPS groups with a correlation; "n/a (2 of 10 groups, 10 needed)" where the data has
    more; "n/a (no group of 3+ items)" from none), "n/a (2 systems, 3 needed)"
    (the system level from fewer than MIN_SYSTEMS), "n/a (undefined)" otherwise (constant scores).
    `n` is what the statistic rests on (items, groups or systems, by level); `groups` the groups its
    interval resamples."""
    def count(number, word: str) -> str:
        return f"{number} {word}{'' if number == 1 else 's'}"

    if value is None or not math.isfinite(value):
        if level == "group" and not n:  # none usable: "0 groups" read as if the data had none
            return f"n/a (no group of {MIN_GROUP_ITEMS}+ items)"
        if level == "group" and n < MIN_GROUPS:  # of 3+ items: "9 groups" alone puzzled on data of 10 groups,
            of = f"{int(n)} of {int(groups)} groups" if groups is not None and math.isfinite(groups) and groups > n \
                else count(int(n), "group")  # as "2 groups" did on 10, in 8 of which the judge gives one score
            return f"n/a ({of}, {MIN_GROUPS} needed)"
        if level == "system" and n < MIN_SYSTEMS:
            return f"n/a ({count(int(n), 'system')}, {MIN_SYSTEMS} needed)"
        return "n/a (undefined)"
    shown = fixed(value, digits)
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        if level == "system" and n < MIN_GROUPS:
            return f"{shown} (no interval: {count(int(n), 'system')})"
        few = groups is not None and math.isfinite(groups) and groups < MIN_GROUPS
        resampled = " to resample" if level == "system" else ""  # its n counts systems, its interval groups
        return f"{shown} (no interval: {count(int(groups), 'group')}{resampled})" if few else f"{shown} (no interval)"
    return f"{shown} [{low:.{digits}f}, {high:.{digits}f}]"


def difference_reading(value: float, low: float, high: float, p: float, digits: int = 3) -> str:
    """How a paired difference reads in a table: "+0.060 [-0.011, +0.128] p 0.100" ("n/a"
    when undefined; the interval and p left out where they are)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    text = fixed(value, digits, signed=True)
    if math.isfinite(low) and math.isfinite(high):
        text += f" [{low:+.{digits}f}, {high:+.{digits}f}]"
    if math.isfinite(p):
        text += " p < 0.001" if p < 0.001 else f" p {p:.3f}"
    return text


def interval_note(groups) -> str:
    """`few_groups` when `groups` (one label per row) has fewer than MIN_GROUPS distinct groups, else "" (at once
    when the first rows hold as many: a million rows' labels are not all read)."""
    groups = np.asarray(groups)
    if len(set(groups[:FIRST_ROWS].astype(str).tolist())) >= MIN_GROUPS:
        return ""
    return groups_note(len(set(groups.astype(str).tolist())))


def groups_note(count: int) -> str:
    """`few_groups` when `count` groups are fewer than MIN_GROUPS, else ""."""
    return few_groups(count) if count < MIN_GROUPS else ""


def group_members(groups) -> list[np.ndarray]:
    """The row indices of each distinct group, groups in sorted order."""
    groups = np.asarray(groups).astype(str)
    if len(groups) == 0:
        return []
    ids, index = np.unique(groups, return_inverse=True)
    order = np.argsort(index, kind="stable")  # rows of each group together, in row order
    return np.split(order, np.cumsum(np.bincount(index, minlength=len(ids)))[:-1])


def jackknife_se(loo: np.ndarray, units: int | None = None) -> float:
    """The delete-one-group jackknife's standard error from the statistic's leave-one-out values
    (one per group; NaN when one is undefined). `units`: the groups the statistic rests on, when
    fewer than the values (a mean over the groups where it is defined: leaving out another
    group changes nothing)."""
    loo = np.asarray(loo, dtype=float)
    units = len(loo) if units is None else units
    if units < 2 or not np.isfinite(loo).all():
        return math.nan
    return float(math.sqrt((units - 1) / units * np.sum((loo - loo.mean()) ** 2)))


def jackknife_interval(value: float, loo: np.ndarray, correlation: bool = True,
                       units: int | None = None, df: float | None = None) -> tuple[float, float]:
    """A 95% interval: `value` ± t(0.975, df) · the jackknife's standard error, on Fisher's z for a
    `correlation` (mapped back: inside [-1, 1]); NaN when undefined. `df`: units − 1 unless given
    (`Resamples.df`: fewer for few groups of uneven sizes)."""
    units = len(loo) if units is None else units
    if not math.isfinite(value) or units < 2:
        return math.nan, math.nan
    low, high = jackknife_bounds(value, loo, correlation, units - 1 if df is None else df, units)
    return float(low), float(high)


def jackknife_bounds(value, loo, correlation: bool = True, df=None, units: int | None = None):
    """`jackknife_interval` of many statistics at once: `value` (...), their leave-one-group-out
    values `loo` (..., groups), `df` one per statistic (default groups − 1): (low, high) arrays,
    NaN where a leave-one-out value is undefined."""
    value, loo = np.asarray(value, dtype=float), np.asarray(loo, dtype=float)
    units = loo.shape[-1] if units is None else units
    if correlation:
        value, loo = (np.arctanh(np.clip(v, -1 + 1e-12, 1 - 1e-12)) for v in (value, loo))
    se = np.sqrt((units - 1) / units * ((loo - loo.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1))
    half = stats.t.ppf(0.975, units - 1 if df is None else df) * se
    low, high = value - half, value + half
    return (np.tanh(low), np.tanh(high)) if correlation else (low, high)


def between_share(values, group_of) -> float:
    """The share of `values`' variance that lies between the groups `group_of` (one label per
    row): the one-way ANOVA intraclass correlation, kept in [0, 1]; 0 when undefined (one group,
    one item per group, constant values). `values`: one per row, or several (rows x columns: each
    row's mean over those given); NaN values are left out."""
    values, group_of = np.asarray(values, dtype=float), np.asarray(group_of)
    if values.ndim == 2:
        given = np.isfinite(values).sum(axis=1)
        values = np.where(given > 0, np.where(np.isfinite(values), values, 0.0).sum(axis=1) / np.maximum(given, 1),
                          np.nan)
    keep = np.isfinite(values)
    codes, counts = _coded(group_of[keep])
    groups, total = len(counts), int(keep.sum())
    if groups < 2 or total <= groups:
        return 0.0
    sums = np.bincount(codes, values[keep])
    between = float((sums ** 2 / counts).sum() - sums.sum() ** 2 / total) / (groups - 1)
    within = float((values[keep] ** 2).sum() - (sums ** 2 / counts).sum()) / (total - groups)
    size = (total - float((counts ** 2).sum()) / total) / (groups - 1)
    spread = between + (size - 1) * within
    return float(np.clip((between - within) / spread, 0.0, 1.0)) if spread > 0 else 0.0


def _coded(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's label as 0..K−1 over the K distinct labels in sorted order, and how many rows hold each:
    counted for group codes (whole numbers from 0, a million of them at once), sorted for other labels."""
    if labels.dtype.kind in "iu" and len(labels) and labels.min() >= 0:
        held = np.bincount(labels)
        return (np.cumsum(held > 0) - 1)[labels], held[held > 0]
    codes, distinct = pd.factorize(labels, sort=True, use_na_sentinel=False)
    return codes, np.bincount(codes, minlength=len(distinct))


def effective_groups(sizes, share):
    """How many groups of these `sizes` a jackknife over groups rests on in effect (Satterthwaite's
    (Σλ)² / Σλ², λ a group's variance n(1 + (n − 1)·share) with `share` of it between groups): the
    number of groups when they are all of one size, fewer the more a few large groups weigh.
    Along the last axis of `sizes` (`share`: one per row)."""
    sizes = np.asarray(sizes, dtype=float)
    weight = sizes * (1.0 + (sizes - 1.0) * np.asarray(share, dtype=float)[..., None])
    return weight.sum(axis=-1) ** 2 / (weight ** 2).sum(axis=-1)


def jackknife_df(groups, shared) -> float:
    """The t's degrees of freedom of a jackknife interval over `groups` (one label per row): groups − 1,
    fewer when the groups are of uneven sizes and `shared` (a score of each row, or several: their
    mean) varies between them (`effective_groups`, `uneven_df`); groups − 1 when they are of one size."""
    sizes = _coded(np.asarray(groups))[1]
    if len(sizes) < 2 or sizes.min() == sizes.max():
        return len(sizes) - 1.0
    return uneven_df(len(sizes), float(effective_groups(sizes, between_share(shared, groups))))


def uneven_df(groups: int, effective: float) -> float:
    """The t's degrees of freedom of a jackknife over `groups` groups that weigh as `effective` ones:
    effective − 1, but at least half of groups − 1 (a floor chosen by the simulation in
    tests/test_stats.py: below it, a few large groups among many small ones gave intervals far too wide)."""
    return max(effective - 1.0, (groups - 1.0) / 2.0) if groups > 1 else math.nan


def jackknife_p(value: float, loo: np.ndarray, units: int | None = None) -> float:
    """The two-sided p of a difference `value` against 0: Student's t of value / the jackknife's
    standard error on units − 1 degrees of freedom (1 for no difference at all)."""
    units = len(loo) if units is None else units
    se = jackknife_se(loo, units)
    if not math.isfinite(value) or not math.isfinite(se):
        return math.nan
    if se == 0:
        return 1.0 if value == 0 else 0.0
    return float(2 * stats.t.sf(abs(value) / se, units - 1))


def leave_one_out_means(per_group: np.ndarray) -> tuple[np.ndarray, int]:
    """The mean of the defined per-group values (groups x k, NaN where undefined) without each
    group in turn (a group with no value leaves the mean as it is), and how many groups have a
    value (in every column: the fewest): what a group-level mean's jackknife reads."""
    defined = np.isfinite(per_group)
    values = np.where(defined, per_group, 0.0)
    total, count = values.sum(axis=0), defined.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = (total - values) / (count - defined)
    return loo, int(np.min(count, initial=len(per_group)))


def percentile_interval(values: np.ndarray) -> tuple[float, float]:
    """The 2.5-97.5 percentile interval of bootstrap values; NaN when fewer than half of them
    (or 10) are finite."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if len(finite) < max(10, len(values) // 2):
        return float("nan"), float("nan")
    return float(np.percentile(finite, 2.5)), float(np.percentile(finite, 97.5))


class Resamples:
    """The bootstrap's draws of whole groups, made once and shared by every statistic of a
    table (so that intervals, averages and differences line up). `counts` yields, a block at a
    time, how many times each group was drawn in each resample (resamples x groups); `sums`, what
    a statistic made of per-group sums adds up to in each resample."""

    def __init__(self, groups, n_boot: int = 1000, seed: int = 0, codes: tuple[np.ndarray, int] | None = None):
        """`codes`: each row's group as 0..G−1 (the groups in sorted order) and G, when known (then `groups` is
        not read): what the groups of one table give every level's resamples."""
        if codes is None:
            found, ids = pd.factorize(_as_text(groups), sort=True)  # the groups in sorted order
            codes = found, len(ids)
        self.group_of, self.n_groups = codes[0].astype(np.int64), codes[1]
        self.sizes = np.bincount(self.group_of, minlength=self.n_groups)
        self.jackknife = False  # True for `leave_one_out`'s sets
        #: The t's degrees of freedom of a jackknife interval over these groups: groups − 1, fewer for
        #: few groups of uneven sizes whose scores vary between groups (`leave_one_out(shared=...)`).
        self.df = self.n_groups - 1.0
        #: How many resamples (the jackknife's: one per group).
        self.size = n_boot
        self.seed = seed

    @classmethod
    def leave_one_out(cls, groups, shared=None, codes: tuple[np.ndarray, int] | None = None) -> Resamples:
        """The delete-one-group jackknife's sets, one per group: set g holds every group but g
        (what `jackknife_interval` and `jackknife_p` read). `shared`: a score of each row (the
        people's) whose share of variance between groups, with the groups' sizes, sets the t's
        degrees of freedom of the intervals read from these sets (`df`). Nothing is drawn: a
        set's counts are all ones but its own group's, made when a statistic asks for them. `codes`: as
        `Resamples` takes them."""
        found = cls(groups, 0, codes=codes)
        found.size = found.n_groups
        found.jackknife = True
        if shared is not None:
            found.df = jackknife_df(found.group_of, shared)
        return found

    @property
    def draws(self) -> np.ndarray:
        """The groups in each resample (resamples x groups; the jackknife's: every group but one,
        the bootstrap's: drawn with replacement), made when asked (`rows`): statistics read `counts`
        and `sums`, which need not hold them all."""
        if self.jackknife:
            count = self.n_groups
            return np.array([np.delete(np.arange(count), g) for g in range(count)], dtype=np.int64).reshape(
                count, max(count - 1, 0))
        return _draws(self.n_groups, self.size, self.seed)

    @property
    def enough(self) -> bool:
        """Whether there are groups enough for an interval (MIN_GROUPS)."""
        return self.n_groups >= MIN_GROUPS

    def sums(self, per_group: np.ndarray) -> np.ndarray:
        """`counts @ per_group` of every resample (resamples x columns): what sums per group
        (groups x columns) add up to in each. The jackknife's in time linear in the groups: the
        totals less each group's own."""
        per_group = np.asarray(per_group, dtype=float)
        if self.jackknife:
            return per_group.sum(axis=0) - per_group
        blocks = [counts @ per_group for _, counts in self.counts()]
        return np.concatenate(blocks) if blocks else np.zeros((0,) + per_group.shape[1:])

    def counts(self, width: int | None = None):
        """(first resample, counts) per block of resamples: how many times each group was drawn
        (resamples x groups). A block holds at least BLOCK resamples, and more while a block's rows
        expanded to `width` values each (default: the groups) stay under CELLS_PER_BLOCK. Up to
        COUNTS_KEPT_UP_TO cells, the bootstrap's counts are kept the first time through (small
        integers, a byte per cell as a rule) and shared by every later statistic computed on these
        draws; above it, the draws are made again a block at a time (the same draws: one seed), unless
        inside `counts_shared`, where counts of every size are kept for every Resamples drawn so."""
        step = max(BLOCK, min(self.size, CELLS_PER_BLOCK // max(width or self.n_groups, 1)))
        if self.jackknife:
            for start in range(0, self.size, step):
                block = np.ones((min(step, self.size - start), self.n_groups))
                block[np.arange(len(block)), start + np.arange(len(block))] = 0.0
                yield start, block
            return
        kept = _shared_counts(self.n_groups, self.size, self.seed)
        if kept is None and self.size * self.n_groups > COUNTS_KEPT_UP_TO:
            for start, drawn in _drawn_blocks(self.n_groups, self.size, self.seed, step):
                yield start, _count(drawn, self.n_groups).astype(float)
            return
        if kept is None and not hasattr(self, "_counts"):
            self._counts = _all_counts(self.n_groups, self.size, self.seed)
        for start in range(0, self.size, step):
            yield start, (self._counts if kept is None else kept)[start:start + step].astype(float)

    def rows(self, b: int) -> np.ndarray:
        """The row indices of resample `b` (a group drawn twice contributes its rows twice)."""
        members = self._members()
        return np.concatenate([members[g] for g in self.draws[b]]) if self.n_groups else np.array([], int)

    def _members(self) -> list[np.ndarray]:
        if not hasattr(self, "_member_rows"):
            order, starts = self._grouped()
            self._member_rows = np.split(order, starts[1:])
        return self._member_rows

    def _grouped(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows group by group (each group's in row order), and where each group's rows start."""
        if not hasattr(self, "_grouped_rows"):
            self._grouped_rows = np.argsort(self.group_of, kind="stable"), np.cumsum(self.sizes) - self.sizes
        return self._grouped_rows

    def members_of(self, which: np.ndarray, size: int) -> np.ndarray:
        """The rows of the groups `which`, each of `size` rows (groups x size, each group's in row order)."""
        order, starts = self._grouped()
        return order[starts[which][:, None] + np.arange(size)]


def _count(block: np.ndarray, n_groups: int) -> np.ndarray:
    """How many times each of `n_groups` groups is drawn in each resample of `block` (resamples x groups), a
    resample at a time (its counts stay in the cache: a million items' groups several times faster than a block's
    counts at once)."""
    counts = np.empty((len(block), n_groups), dtype=np.int64)
    for row, drawn in enumerate(block):
        counts[row] = np.bincount(drawn, minlength=n_groups)
    return counts


def _all_counts(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """`_count` of every resample `_drawn_rows` draws (resamples x groups), as the smallest unsigned integers that
    hold them (a byte a cell as a rule), counted a resample at a time into the table: a million items' counts
    without a block of draws and of counts made, and its fresh memory touched, for every 32 resamples. The table is
    not zeroed first (every row is written): a million items' zeroed pages, first written here, took as long again
    as the counting."""
    counts = np.empty((n_boot, n_groups), dtype=np.uint8)
    for row, drawn in enumerate(_drawn_rows(n_groups, n_boot, seed)):
        found = np.bincount(drawn, minlength=n_groups)
        most = int(found.max(initial=0))
        if most > np.iinfo(counts.dtype).max:
            counts = counts.astype(np.min_scalar_type(most))
        counts[row] = found
    return counts


#: While `counts_shared` is entered: its depth, the bootstrap's counts made meanwhile, by (groups, resamples, seed),
#: and the correlations made meanwhile (`at_levels`), by what they read.
_SHARED: dict = {"depth": 0, "counts": {}, "levels": {}}
_SHARED_LOCK = threading.Lock()


@contextmanager
def counts_shared() -> Iterator[None]:
    """Inside, the bootstrap's counts (`Resamples.counts`) of every size are made once per number of groups,
    resamples and seed, and shared by every statistic drawn so (a report's many tables of the same groups: a
    million items' made once, instead of drawn again for each), and `at_levels` correlates the same scores once;
    freed when the outermost is left."""
    with _SHARED_LOCK:
        _SHARED["depth"] += 1
    try:
        yield
    finally:
        with _SHARED_LOCK:
            _SHARED["depth"] -= 1
            if not _SHARED["depth"]:
                _SHARED["counts"].clear()
                _SHARED["levels"].clear()


def _shared_counts(n_groups: int, n_boot: int, seed: int) -> np.ndarray | None:
    """The counts of these draws while `counts_shared` is entered (made the first time), else None."""
    with _SHARED_LOCK:
        if not _SHARED["depth"]:
            return None
        key = (n_groups, n_boot, seed)
        if key not in _SHARED["counts"]:
            _SHARED["counts"][key] = _all_counts(n_groups, n_boot, seed)
        return _SHARED["counts"][key]


def _as_text(values) -> np.ndarray:
    """`values` as text, each as str() writes it: as they are when they are strings already (ids, names;
    no copy of a million of them)."""
    values = np.asarray(values)
    if values.dtype == object and pd.api.types.infer_dtype(values, skipna=False) == "string":
        return values
    return values.astype(str)


def _drawn_blocks(n_groups: int, n_boot: int, seed: int, step: int):
    """(first resample, the groups drawn in each of the next `step` resamples), the draws `_draws`
    makes, made a block at a time (`_drawn_rows`)."""
    rows = _drawn_rows(n_groups, n_boot, seed)
    for start in range(0, n_boot, step):
        block = np.empty((min(step, n_boot - start), n_groups), dtype=np.int64)
        for row in range(len(block)):  # into the block as drawn (a million items': no list of draws copied again)
            block[row] = next(rows)
        yield start, block


def _drawn_rows(n_groups: int, n_boot: int, seed: int):
    """The groups drawn in each resample, the rows of `_draws`, one at a time: one call per resample from one
    generator seeded once, or, small, the rows `_draws` keeps. Drawn as 32-bit integers below 2^31 groups: numpy
    draws a range under 2^32 from 32-bit words at either width, so these are `_draws`' very groups, made in half
    the time (tests/test_stats.py holds them to it)."""
    if n_boot * n_groups <= DRAWS_KEPT_UP_TO:  # small: made once and shared (`_draws`)
        yield from _draws(n_groups, n_boot, seed)
        return
    rng = np.random.default_rng(seed)
    kind = np.int32 if n_groups < 2 ** 31 else np.int64
    for _ in range(n_boot):
        yield rng.integers(0, n_groups, n_groups, dtype=kind)


@functools.lru_cache(maxsize=16)
def _draws(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """The groups drawn in each resample (resamples x groups, read-only): they depend on the number of
    groups, resamples and the seed alone, so a report's many tables of the same groups share them.
    One call per resample, as the draws have always been made: the same seed gives the same intervals."""
    rng = np.random.default_rng(seed)
    draws = np.array([rng.integers(0, n_groups, n_groups) for _ in range(n_boot)], dtype=np.int64).reshape(
        n_boot, n_groups) if n_groups else np.zeros((n_boot, 0), dtype=np.int64)
    draws.flags.writeable = False
    return draws


def bootstrap(statistic: Callable[[np.ndarray], float], resamples: Resamples) -> tuple[float, float]:
    """A 95% percentile interval of `statistic(rows)` (a float from row indices, NaN where
    undefined) over the resamples; NaN when there are fewer than MIN_GROUPS groups."""
    if not resamples.enough:
        return float("nan"), float("nan")
    return percentile_interval(np.array([statistic(resamples.rows(b)) for b in range(resamples.size)]))


# --- item level ---------------------------------------------------------------------------------


def item_level(x: np.ndarray, y: np.ndarray, resamples: Resamples, metrics=METRICS) -> dict[str, Correlation]:
    """Each metric over all rows, with its interval (`interval`: the jackknife's for
    `Resamples.leave_one_out`). `x`, `y` are complete (no NaN) and line up with the rows
    `resamples` was made from."""
    values, boot = item_values(x, y, resamples, metrics)
    results = {}
    for metric in metrics:
        value = values[metric]
        if math.isnan(value):
            results[metric] = Correlation(metric, "item", value, math.nan, math.nan, len(x), _why_undefined(x, y))
            continue
        low, high = interval(value, boot[metric], resamples)
        results[metric] = Correlation(metric, "item", value, low, high, len(x), _interval_note(metric, len(x),
                                                                                             resamples))
    return results


def item_values(x: np.ndarray, y: np.ndarray, resamples: Resamples,
                metrics=METRICS) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Each metric over all rows (`correlate`'s value) and in every resample (`item_bootstrap`'s). Above
    EXACT_UP_TO items, Spearman's and Kendall's values are read from the sort their intervals make (`_Ranked`:
    the same values, each side sorted once)."""
    ranked = _Ranked.of(x, y) if len(x) > EXACT_UP_TO and {"spearman", "kendall"} & set(metrics) else None
    boot = _item_bootstrap(x, y, resamples, metrics, None, ranked)
    return {metric: ranked.value(metric) if ranked is not None and metric != "pearson" else correlate(metric, x, y)
            for metric in metrics}, boot


def interval(value: float, values: np.ndarray, resamples: Resamples, correlation: bool = True) -> tuple[float, float]:
    """A statistic's 95% interval from its values on `resamples`: the jackknife's (on Fisher's z
    for a `correlation`) for leave-one-out sets, else the bootstrap's percentiles; NaN below
    MIN_GROUPS groups or for an undefined value."""
    if not resamples.enough or not math.isfinite(value):
        return math.nan, math.nan
    return jackknife_interval(value, values, correlation, df=resamples.df) if resamples.jackknife \
        else percentile_interval(values)


def _why_undefined(judge: np.ndarray, human: np.ndarray) -> str:
    """Why a correlation over these items is undefined, in a few words."""
    if len(judge) < 2:
        return f"undefined: {len(judge)} item with both scores"
    if np.ptp(judge) == 0:
        return "undefined: the judge gives every item the same score"
    if np.ptp(human) == 0:
        return "undefined: people give every item the same score"
    return "undefined"


def item_bootstrap(x: np.ndarray, y: np.ndarray, resamples: Resamples, metrics=METRICS,
                   rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each metric's value in every resample, or leave-one-out set (NaN where undefined): what
    intervals, averages over aspects and paired differences are read from. `x`, `y` are the
    values of the resampled rows `rows` (default: all of them, in order). Pearson, and above
    EXACT_UP_TO items Spearman and Kendall, are made of sums per group (`Resamples.sums`: the
    jackknife's in time linear in the groups); up to it, Spearman and Kendall read each resample."""
    return _item_bootstrap(x, y, resamples, metrics, rows, None)


def _item_bootstrap(x: np.ndarray, y: np.ndarray, resamples: Resamples, metrics, rows: np.ndarray | None,
                    ranked: _Ranked | None) -> dict[str, np.ndarray]:
    """`item_bootstrap`; `ranked`: x and y sorted already (`_Ranked.of`), when they are."""
    out = {metric: np.full(resamples.size, np.nan) for metric in metrics}
    if not resamples.enough or len(x) < 2:  # nothing to correlate (e.g. a column with no value on these rows)
        return out
    rows = np.arange(len(resamples.group_of)) if rows is None else np.asarray(rows)
    group_of = resamples.group_of[rows]
    exact = len(x) <= EXACT_UP_TO
    linear = {}  # metric -> its sums per group (groups x columns)
    if "pearson" in metrics:
        linear["pearson"] = _group_sums(x, y, group_of, resamples.n_groups)
    if not exact and {"spearman", "kendall"} & set(metrics) and ranked is None:  # each side sorted once for its
        ranked = _Ranked(_Distinct.of(x), _Distinct.of(y))                     # ranks, ties, concordance
    if "spearman" in metrics and not exact:
        linear["spearman"] = _group_sums(ranked.x.ranks(), ranked.y.ranks(), group_of, resamples.n_groups)
    if "kendall" in metrics and not exact:
        kendall_parts = _kendall_projections(ranked, group_of, resamples.n_groups)
        linear["kendall"] = np.column_stack([per_group for per_group, _ in kendall_parts])
    if linear:  # every resample's sums at once, one pass over the resamples
        widths = np.cumsum([part.shape[1] for part in linear.values()])[:-1]
        for metric, summed in zip(linear, np.split(resamples.sums(np.hstack(list(linear.values()))), widths, axis=1)):
            if metric != "kendall":
                out[metric] = _pearson_from_sums(summed)
                continue
            s, t1, t2 = (summed[:, i] - constant for i, (_, constant) in enumerate(kendall_parts))
            with np.errstate(invalid="ignore", divide="ignore"):
                out["kendall"] = np.clip(s / np.sqrt(t1 * t2), -1.0, 1.0)
    if not exact or not {"spearman", "kendall"} & set(metrics):
        return out
    pair_signs = _pair_signs(x, y, group_of, resamples.n_groups) if "kendall" in metrics else None
    for start, counts in resamples.counts(width=len(x)):
        block = slice(start, start + len(counts))
        if "spearman" in metrics:
            out["spearman"][block] = _weighted_rank_pearson(x, y, counts[:, group_of])
        if "kendall" in metrics:
            out["kendall"][block] = _weighted_kendall(pair_signs, counts)
    return out


def _pair_signs(x: np.ndarray, y: np.ndarray, group_of: np.ndarray, n_groups: int) -> tuple[np.ndarray, ...]:
    """What Kendall's tau-b of any resample of whole groups is made of, summed over the pairs of rows of
    each two groups (groups x groups): sign(x_i - x_j) * sign(y_i - y_j), pairs tied in x, pairs tied in y
    (a row is not paired with itself); and each group's rows."""
    cell = (group_of[:, None] * n_groups + group_of[None, :]).ravel()  # the pair's (group, group)

    def by_group(pairs: np.ndarray) -> np.ndarray:
        np.fill_diagonal(pairs, 0.0)
        return np.bincount(cell, weights=pairs.ravel(), minlength=n_groups * n_groups).reshape(n_groups, n_groups)

    concordance = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    return (by_group(concordance), by_group(np.equal.outer(x, x).astype(float)),
            by_group(np.equal.outer(y, y).astype(float)), np.bincount(group_of, minlength=n_groups).astype(float))


def _weighted_kendall(pair_signs: tuple[np.ndarray, ...], counts: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each resample, exactly (what scipy gives on the resample with its repeats),
    from how many times each group was drawn (`counts`, resamples x groups): pairs of rows of two draws
    count once each, and the copies of one row are pairs tied in both x and y. NaN where x or y is
    constant."""
    concordance, tied_x, tied_y, sizes = pair_signs
    total = counts @ sizes
    own = (counts * (counts - 1.0)) @ sizes / 2.0  # a row with its own copies (a group drawn twice or more)
    pairs = total * (total - 1.0) / 2.0

    def quadratic(matrix: np.ndarray) -> np.ndarray:
        return ((counts @ matrix) * counts).sum(axis=1) / 2.0

    s = quadratic(concordance)
    untied_x, untied_y = pairs - quadratic(tied_x) - own, pairs - quadratic(tied_y) - own
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = s / np.sqrt(untied_x * untied_y)
    tau[~((untied_x > 0.5) & (untied_y > 0.5))] = np.nan
    return np.clip(tau, -1.0, 1.0)


def _interval_note(metric: str, n: int, resamples: Resamples) -> str:
    if not resamples.enough:
        return few_groups(resamples.n_groups)
    if metric != "pearson" and n > EXACT_UP_TO:
        how = "the whole sample's ranks" if metric == "spearman" else "each item's concordance (Hájek projection)"
        return f"interval linearized ({n} items > {EXACT_UP_TO}): from {how}"
    return ""


def _group_sums(x: np.ndarray, y: np.ndarray, group_of: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group: rows, sum x, sum y, sum x², sum y², sum xy (x, y centred first, for accuracy)."""
    x, y = x - x.mean(), y - y.mean()
    columns = (np.ones_like(x), x, y, x * x, y * y, x * y)
    return np.column_stack([np.bincount(group_of, weights=c, minlength=n_groups) for c in columns])


def _pearson_from_sums(sums: np.ndarray) -> np.ndarray:
    n, sx, sy, sxx, syy, sxy = sums.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / n
        var = (sxx - sx * sx / n) * (syy - sy * sy / n)
        r = cov / np.sqrt(var)
    r[~(var > 1e-12 * np.maximum(sxx * syy, 1e-300))] = np.nan  # a constant resample
    return np.clip(r, -1.0, 1.0)


def _weighted_ranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average ranks of `values` within each resample, where row i appears weights[b, i] times
    (what scipy's rankdata gives on the resample with its repeats): rows x values."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    per_value = np.add.reduceat(weights[:, order], starts, axis=1)
    below = np.cumsum(per_value, axis=1) - per_value
    ranks_of_value = below + (per_value + 1.0) / 2.0
    which = np.empty(len(values), dtype=np.int64)
    which[order] = np.cumsum(np.r_[True, sorted_values[1:] != sorted_values[:-1]]) - 1
    return ranks_of_value[:, which]


def _weighted_rank_pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Spearman of each resample, exactly: Pearson of its ranks, each row counted weights[b, i] times."""
    rx, ry = _weighted_ranks(x, weights), _weighted_ranks(y, weights)
    total = weights.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = (weights * rx).sum(axis=1, keepdims=True) / total, (weights * ry).sum(axis=1, keepdims=True) / total
        dx, dy = rx - mx, ry - my
        cov = (weights * dx * dy).sum(axis=1)
        var = (weights * dx * dx).sum(axis=1) * (weights * dy * dy).sum(axis=1)
        r = cov / np.sqrt(var)
    r[~(var > 0)] = np.nan
    return np.clip(r, -1.0, 1.0)


@dataclass(frozen=True)
class _Distinct:
    """Where each row's value is among a vector's distinct values (in sorted order), and how many rows hold
    each: what its average ranks, its ties and its concordance with another vector are read from, after one sort."""

    inverse: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> _Distinct:
        """`np.unique`'s inverse and counts of `values` (finite numbers), found by hashing and sorting the distinct
        values only: a million scores in a fifth of a full sort's time."""
        inverse, distinct = pd.factorize(values, sort=True, use_na_sentinel=False)
        return cls(inverse, np.bincount(inverse, minlength=len(distinct)))

    def ranks(self) -> np.ndarray:
        """Each row's average rank, as `stats.rankdata` gives it (tied rows share the mean of their ranks)."""
        return (np.cumsum(self.counts) - self.counts + (self.counts + 1) / 2.0)[self.inverse]

    def ties(self) -> np.ndarray:
        """How many rows share each row's value (itself included)."""
        return self.counts[self.inverse].astype(float)


@dataclass
class _Ranked:
    """Two vectors each sorted once (`_Distinct`): their ranks, ties and concordance, what the item level's
    Spearman and Kendall read, their values as their linearized intervals."""

    x: _Distinct
    y: _Distinct

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray) -> _Ranked | None:
        """Complete vectors of numbers sorted; None when one holds NaN or an infinity (`correlate` reads those)."""
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            return None
        return cls(_Distinct.of(x), _Distinct.of(y))

    @functools.cached_property
    def concordance(self) -> np.ndarray:
        """`_concordance` of the two."""
        return _concordance(self.x, self.y)

    def value(self, metric: str) -> float:
        """`correlate(metric, x, y)` for Spearman or Kendall, in scipy's arithmetic: Pearson's of the ranks
        (`np.corrcoef`); tau-b from whole counts, concordant less discordant pairs over the square roots of the
        pairs untied in each."""
        if len(self.x.counts) < 2 or len(self.y.counts) < 2:  # constant (or one row): undefined
            return math.nan
        if metric == "spearman":
            return float(np.corrcoef(np.column_stack((self.x.ranks(), self.y.ranks())), rowvar=False)[1, 0])
        pairs = len(self.x.inverse) * (len(self.x.inverse) - 1) // 2
        untied_x, untied_y = (pairs - int((side.counts * (side.counts - 1) // 2).sum()) for side in (self.x, self.y))
        tau = int(self.concordance.sum()) // 2 / np.sqrt(untied_x) / np.sqrt(untied_y)
        return float(np.minimum(1.0, max(-1.0, tau)))


def _kendall_projections(ranked: _Ranked, group_of: np.ndarray, n_groups: int) -> list[tuple[np.ndarray, float]]:
    """Kendall's S and its untied pair counts T1 (in x) and T2 (in y) are quadratic forms
    Q(w) = 1/2 sum_ij w_i w_j a_ij in the resample's row weights w. To first order around
    w = 1 (a U-statistic's Hájek projection), Q(w) = sum_i w_i q_i - Q(1), with q_i the row
    sums: each item's concordance with all the others, and its pairs untied in x and in y.
    Returns, for S, T1 and T2, the per-group sums of q and the constant Q(1)."""
    x, y = ranked.x, ranked.y
    rows = (ranked.concordance, len(x.inverse) - x.ties(), len(y.inverse) - y.ties())
    return [(np.bincount(group_of, weights=q, minlength=n_groups), q.sum() / 2.0) for q in rows]


def _concordance(x: _Distinct, y: _Distinct) -> np.ndarray:
    """For each row i: sum over rows j of sign(x_i - x_j) * sign(y_i - y_j), by the variable
    with fewer distinct values: for each value of it, its rows counted at each value of the other."""
    if len(y.counts) > len(x.counts):
        x, y = y, x
    result = np.zeros(len(x.inverse))
    for level in range(len(y.counts)):
        at = np.bincount(x.inverse[y.inverse == level], minlength=len(x.counts))  # its rows at each value of x
        up_to = np.cumsum(at)
        found = (up_to - at) - (up_to[-1] - up_to)  # its rows below each value of x less those above
        result += np.sign(y.inverse - level) * found[x.inverse].astype(float)
    return result


# --- group and system level -------------------------------------------------------------------


def group_level(x: np.ndarray, y: np.ndarray, resamples: Resamples, metrics=METRICS) -> dict[str, Correlation]:
    """A correlation inside each group of MIN_GROUP_ITEMS or more items, then their mean over
    the groups where it is defined; its interval is the t-interval of the per-group correlations
    (the jackknife of their mean: `group_mean_interval`)."""
    per_group = within_groups(x, y, resamples, metrics)
    results = {}
    counted = {metric: int(np.isfinite(per_group[metric]).sum()) for metric in metrics}
    why = _why_groups_undefined(x, y, resamples) if min(counted.values(), default=MIN_GROUPS) < MIN_GROUPS else ""
    for metric, defined in counted.items():
        if defined < MIN_GROUPS:  # "3 of 3 groups have a correlation; ... needs 10" read as a contradiction
            have = (f"only {defined} group{'s' if defined != 1 else ''}, each with a correlation"
                    if 0 < defined == resamples.n_groups else
                    f"{defined} of {resamples.n_groups} groups have a correlation{why}")
            results[metric] = Correlation(metric, "group", math.nan, math.nan, math.nan, defined,
                                          f"n/a: {have}; the group level needs {MIN_GROUPS} groups that have one")
    for metric in [metric for metric in metrics if metric not in results]:
        values = per_group[metric]
        defined = np.isfinite(values)
        dropped = int((~defined).sum())
        note = (f"{dropped} of {resamples.n_groups} groups left out (fewer than {MIN_GROUP_ITEMS} items, or constant "
                "scores)") if dropped else ""
        mean = float(values[defined].mean())
        low, high = group_mean_interval(mean, values)
        results[metric] = Correlation(metric, "group", mean, low, high, int(defined.sum()), note)
    return {metric: results[metric] for metric in metrics}


def group_mean_interval(mean: float, per_group: np.ndarray, correlation: bool = True) -> tuple[float, float]:
    """The 95% t-interval of a mean of per-group values (NaN where undefined): mean ± t(0.975,
    n − 1) · sd / √n over the n groups with a value (the jackknife of the mean), kept inside
    [-1, 1] for a `correlation`; NaN below MIN_GROUPS groups."""
    loo, units = leave_one_out_means(np.asarray(per_group, dtype=float))
    if units < MIN_GROUPS:
        return math.nan, math.nan
    low, high = jackknife_interval(mean, loo, correlation=False, units=units)
    return (max(low, -1.0), min(high, 1.0)) if correlation else (low, high)


def _why_groups_undefined(judge: np.ndarray, human: np.ndarray, resamples: Resamples) -> str:
    """How many groups have too few items, one judge score or one human score: " (3 with ...)"."""
    order, starts = resamples._grouped()

    def one_value(values: np.ndarray) -> np.ndarray:  # each group's values: at most one, NaN left out
        grouped = values[order]
        return ~(np.fmax.reduceat(grouped, starts) > np.fmin.reduceat(grouped, starts))

    small = resamples.sizes < MIN_GROUP_ITEMS
    one_judge, one_human = (~small & one_value(np.asarray(side, dtype=float)) for side in (judge, human))
    parts = [f"{int(count.sum())} {what}" for count, what in (
        (small, f"with fewer than {MIN_GROUP_ITEMS} items"), (one_judge, "where the judge gives one score to all"),
        (one_human & ~one_judge, "where people give one score to all")) if count.any()]
    return f" ({', '.join(parts)})" if parts else ""


def within_groups(x: np.ndarray, y: np.ndarray, resamples: Resamples, metrics=METRICS) -> dict[str, np.ndarray]:
    """Each metric inside each group (NaN for groups under MIN_GROUP_ITEMS items or constant):
    the groups of one size at a time, as the rows of one matrix."""
    out = {metric: np.full(resamples.n_groups, np.nan) for metric in metrics}
    for size in np.unique(resamples.sizes[resamples.sizes >= MIN_GROUP_ITEMS]):
        which = np.flatnonzero(resamples.sizes == size)
        rows = resamples.members_of(which, size)
        for metric, r in rowwise_each(metrics, x[rows], y[rows]).items():
            out[metric][which] = r
    return out


def rowwise(metric: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`correlate` on each row of two matrices (same values, up to rounding), NaN marking
    absent cells; NaN where a row's correlation is undefined (fewer than 2 cells, constant)."""
    return rowwise_each((metric,), x, y)[metric]


def rowwise_each(metrics, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """`rowwise` of each metric on the same two matrices: the cells both have, and the rows where a
    correlation is undefined, found once for all of them."""
    present = np.isfinite(x) & np.isfinite(y)
    if x.size and present.all():  # every cell a number (as a rule): the rows' own extremes, nothing masked
        held_x, held_y, largest, smallest = x, y, np.max, np.min
    else:
        held_x, held_y = np.where(present, x, np.nan), np.where(present, y, np.nan)
        largest, smallest = np.nanmax, np.nanmin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows
        undefined = ~(largest(held_x, axis=1) > smallest(held_x, axis=1)) \
            | ~(largest(held_y, axis=1) > smallest(held_y, axis=1)) | (present.sum(axis=1) < 2)
    out = {}
    for metric in metrics:
        if metric == "kendall" and x.shape[1] > ROWWISE_KENDALL_UP_TO:  # pairs would not fit in memory
            out[metric] = np.array([correlate(metric, a[np.isfinite(a)], b[np.isfinite(b)]) for a, b in zip(x, y)])
            continue
        r = np.clip(_rowwise(metric, held_x, held_y, None if held_x is x else present), -1.0, 1.0)
        r[undefined] = np.nan
        out[metric] = r
    return out


def _rowwise(metric: str, x: np.ndarray, y: np.ndarray, present: np.ndarray | None) -> np.ndarray:
    """One metric on each row of two matrices whose cells are NaN where either is absent (`present`: the
    others; None when every cell is a number: then nothing is masked, the same sums made without NaN's passes),
    before the undefined rows are marked."""
    if metric == "kendall":
        step = max(1, 2_000_000 // x.shape[1] ** 2)  # rows at once: their pairs in ~16 MB per array
        return np.concatenate([_rowwise_kendall(x[start:start + step], y[start:start + step])
                               for start in range(0, len(x), step)]) if len(x) else np.empty(0)
    if metric == "spearman":
        x, y = (stats.rankdata(v, axis=1, nan_policy="omit" if present is not None else "propagate") for v in (x, y))
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an all-NaN row
        if present is None:
            dx, dy = (v - v.mean(axis=1, keepdims=True) for v in (x, y))
        else:
            dx, dy = (np.where(present, v - np.nanmean(v, axis=1, keepdims=True), 0.0) for v in (x, y))
        return (dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))


def _rowwise_kendall(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row from its pairs: S / sqrt(pairs untied in x * pairs untied in y)."""
    first, second = np.triu_indices(x.shape[1], 1)  # each pair of cells once, row by row as np.triu orders them
    with np.errstate(invalid="ignore"):
        sx = np.sign(x[:, first] - x[:, second])
        sy = np.sign(y[:, first] - y[:, second])
    both = np.isfinite(sx) & np.isfinite(sy)
    sx, sy = np.where(both, sx, 0.0), np.where(both, sy, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx * sy).sum(axis=1) / np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=1))


def system_level(x: np.ndarray, y: np.ndarray, systems: np.ndarray, resamples: Resamples,
                 metrics=METRICS, coded: tuple | None = None) -> dict[str, Correlation]:
    """Each system's mean judge and human score, then one correlation across the systems (at
    least 3; items without a system are no system of their own); the interval resamples groups,
    and is given from MIN_GROUPS systems and MIN_GROUPS groups on. `coded`: the systems as
    `system_codes` gives them, when known (then `systems` is not read)."""
    coded = system_codes(systems) if coded is None else coded
    n_systems = coded[2]
    if n_systems < MIN_SYSTEMS:
        nan = math.nan
        return {m: Correlation(m, "system", nan, nan, nan, n_systems,
                               f"undefined: {n_systems} system(s); system level needs at least {MIN_SYSTEMS}")
                for m in metrics}
    withheld = system_interval_note(n_systems, resamples)
    boot = _coded_system_bootstraps([(x, y)], coded, resamples, metrics)[0] if not withheld else {}
    full_x, full_y = _coded_system_means(x, y, coded)
    alone = ONE_ITEM_PER_SYSTEM if np.bincount(coded[1], minlength=n_systems).max() == 1 else ""
    results = {}
    for metric in metrics:
        value = correlate(metric, *tied(metric, full_x, full_y))
        low, high = percentile_interval(boot[metric]) if not withheld else (math.nan, math.nan)
        note = "undefined: constant system means" if math.isnan(value) else "; ".join(filter(None, [alone, withheld]))
        results[metric] = Correlation(metric, "system", value, low, high, n_systems, note)
    return results


#: The system level's note where every system has one item (its means are those items' scores), first: a table's
#: note column cut at its width shows it.
ONE_ITEM_PER_SYSTEM = "one item per system: the same as the item level on these items, not a finding about systems"


def system_interval_note(n_systems: int, resamples: Resamples) -> str:
    """Why a system-level interval over `n_systems` systems and the groups of `resamples` is withheld: `few_systems`
    below MIN_GROUPS systems, else `few_groups` below MIN_GROUPS groups; "" when it is given."""
    if n_systems < MIN_GROUPS:
        return few_systems(n_systems)
    return "" if resamples.enough else few_groups(resamples.n_groups)


def system_codes(systems: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The rows that name a system (`systems` != ""), the system of each of them as 0..S−1 (the systems in
    sorted order), and S: the names hashed, not sorted row by row (a million rows name a few systems). `systems`:
    objects, or pandas' str with none missing (`ItemColumns.counted`)."""
    named = np.asarray(systems != "", dtype=bool)
    system_of, names = pd.factorize(systems[named], sort=True)
    return named, system_of.astype(np.int64), len(names)


def system_means(x: np.ndarray, y: np.ndarray, systems: np.ndarray,
                 coded: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each named system's mean x and mean y (systems in sorted order; rows without a system left out). `coded`:
    the systems as `system_codes` gives them, when known (then `systems` is not read)."""
    return _coded_system_means(x, y, system_codes(systems) if coded is None else coded)


def _coded_system_means(x: np.ndarray, y: np.ndarray, coded: tuple) -> tuple[np.ndarray, np.ndarray]:
    """`system_means` of the systems as `system_codes` gives them."""
    named, system_of, count = coded
    rows = np.bincount(system_of, minlength=count)
    full_x, full_y = (np.bincount(system_of, weights=v[named], minlength=count) / rows for v in (x, y))
    return full_x, full_y  # summed in row order


def system_bootstraps(pairs: list[tuple[np.ndarray, np.ndarray]], systems: np.ndarray, resamples: Resamples,
                      metrics=METRICS, coded: tuple | None = None) -> list[dict[str, np.ndarray]]:
    """Each metric's system-level correlation (`system_level`'s value) in every resample of groups, for each (x, y)
    of `pairs` (scores of the same rows): the resamples' sums of every pair made in one pass over the draws.
    `coded`: as `system_means` takes it."""
    return _coded_system_bootstraps(pairs, system_codes(systems) if coded is None else coded, resamples, metrics)


def _coded_system_bootstraps(pairs: list[tuple[np.ndarray, np.ndarray]], coded: tuple, resamples: Resamples,
                             metrics=METRICS) -> list[dict[str, np.ndarray]]:
    """`system_bootstraps` of the systems as `system_codes` gives them: per group, its rows and each pair's sums
    of x and of y in each system (a column per system in each), weighted by how often each group was drawn."""
    named, system_of, count = coded
    cells = resamples.group_of[named] * count + system_of  # (group, system) of each named row

    def sums(values: np.ndarray) -> np.ndarray:
        return np.bincount(cells, weights=values, minlength=resamples.n_groups * count).reshape(
            resamples.n_groups, count)

    per_group = [sums(np.ones(int(named.sum())))] + [sums(values[named]) for pair in pairs for values in pair]
    n, *sides = np.hsplit(resamples.sums(np.hstack(per_group)), len(per_group))
    return [_system_bootstrap(metrics, n, sx, sy) for sx, sy in zip(sides[::2], sides[1::2])]


def _system_bootstrap(metrics, n: np.ndarray, sx: np.ndarray, sy: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric's system-level correlation in every resample, from each system's rows, sum of x and sum of y
    in each (resamples x systems)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(n > 0, sx / n, np.nan), np.where(n > 0, sy / n, np.nan)
    found = rowwise_each([m for m in metrics if m not in RANKED], *means)
    found.update(rowwise_each([m for m in metrics if m in RANKED], *tied(RANKED[0], *means)))
    return {metric: found[metric] for metric in metrics}


def agreement(judge, human, groups=None, systems=None, levels: tuple[str, ...] = LEVELS, n_boot: int = 1000,
              seed: int = 0, metrics: tuple[str, ...] = METRICS) -> list[Correlation]:
    """Every metric at every requested level for one score against one human score. Rows with
    a NaN on either side are dropped first; without `groups` each row is its own group."""
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    groups = np.asarray(groups if groups is not None else np.arange(len(judge))).astype(str)
    systems = np.asarray(systems if systems is not None else np.full(len(judge), "")).astype(str)
    keep = ~(np.isnan(judge) | np.isnan(human))
    judge, human, groups, systems = judge[keep], human[keep], groups[keep], systems[keep]
    unknown = [level for level in levels if level not in LEVELS]
    if unknown:
        raise ValueError(f"level '{unknown[0]}' is unknown; use one of {', '.join(LEVELS)}")
    results = []
    for level in levels:
        found = at_level(level, judge, human, groups, systems, n_boot, seed, metrics)
        results.extend(found[metric] for metric in metrics)
    return results


def at_level(level: str, judge: np.ndarray, human: np.ndarray, groups: np.ndarray, systems: np.ndarray,
             n_boot: int, seed: int, metrics=METRICS, codes: tuple[np.ndarray, int] | None = None,
             coded_systems: tuple | None = None) -> dict[str, Correlation]:
    """Each metric at one level for complete rows (no NaN): item and group level with the
    jackknife over groups, system level with `n_boot` bootstrap draws of groups. `codes`: the
    groups as `Resamples` takes them, when known (made once for every level; `groups` is not read);
    `coded_systems`: the systems as `system_codes` gives them, when known (`systems` is not read)."""
    if level == "item":
        return item_level(judge, human, Resamples.leave_one_out(groups, shared=human, codes=codes), metrics)
    if level == "group":
        return group_level(judge, human, Resamples.leave_one_out(groups, codes=codes), metrics)
    return system_level(judge, human, systems, Resamples(groups, n_boot, seed, codes), metrics, coded_systems)


def at_levels(levels: tuple[str, ...], judge: np.ndarray, human: np.ndarray, n_boot: int, seed: int, metrics,
              codes: tuple[np.ndarray, int], coded_systems: tuple) -> dict[str, dict[str, Correlation]]:
    """`at_level` at each of `levels` for complete rows whose groups and systems are coded (`codes`,
    `coded_systems`, as `at_level` takes them). Inside `counts_shared`, the correlations of the same scores,
    groups and systems at a level are made once (a report's agreement table and its leaderboard's judge row read
    the same), found by a digest of what they read."""
    with _SHARED_LOCK:
        kept = _SHARED["levels"] if _SHARED["depth"] else None
    read = _digest(judge, human, codes[0], coded_systems[0], coded_systems[1]) + (codes[1], coded_systems[2]) \
        if kept is not None else None
    found = {}
    for level in levels:
        key = (level, n_boot, seed, tuple(metrics), read)
        with _SHARED_LOCK:
            made = kept.get(key) if kept is not None else None
        if made is None:
            made = at_level(level, judge, human, None, None, n_boot, seed, metrics, codes, coded_systems)
            if kept is not None:
                with _SHARED_LOCK:
                    kept[key] = made
        found[level] = made
    return found


def _digest(*arrays: np.ndarray) -> tuple[str, ...]:
    """What `arrays` hold, each as its type, shape and a hash of its bytes (a million scores' in milliseconds)."""
    return tuple(f"{a.dtype.str}{a.shape}" + hashlib.sha1(np.ascontiguousarray(a).data).hexdigest() for a in arrays)


def to_frame(results: list[Correlation]) -> pd.DataFrame:
    """Correlations as a table."""
    return pd.DataFrame([r.__dict__ for r in results], columns=["metric", "level", "value", "low", "high", "n", "note"])
