"""The alternative annotator test's per-annotator t-test with items in groups (responses of one
dialogue, summaries of one document), vectorized, and the simulation of its level and power.

Raters' errors are correlated within a group (an annotator reads a whole dialogue in one mood),
so the paper's one-sample t-test over items, which takes them as independent, rejects too often
on grouped data. The grouped test keeps the paper's estimand, the mean over the annotator's items
of person-win minus judge-win, and replaces its standard error by a cluster-robust one over the
annotator's groups: CR2 (Bell & McCaffrey 2002), which for a mean is the sum over groups of the
squared sum of the group's residuals divided by 1 - n_g / n, with Bell and McCaffrey's degrees of
freedom (G - 1 for groups of equal size, fewer for uneven ones). When every group is one item it
is the paper's t-test exactly (the variance s^2 / n, n - 1 degrees of freedom).

`simulate` draws studies with group offsets, `winning_rates` runs the test (grouped or by items)
on every simulated study at once: tests/test_alttest_groups.py checks the level and prints the
tables of docs/statistics.md.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: An annotator with fewer groups than this gets no grouped verdict (too few for the standard error).
MIN_GROUPS = 10
#: The step-up procedure across annotators, by name: Benjamini-Yekutieli, the paper's and the default
#: (valid under any dependence between the annotators' tests, which share the judge and each other's
#: labels); Benjamini-Hochberg, a departure from the paper, for those who accept its assumption (the
#: tests positively dependent) for more power (docs/statistics.md).
FDR = {"by": "Benjamini-Yekutieli", "bh": "Benjamini-Hochberg, a departure from the paper"}


def fdr_factor(m: np.ndarray | int, fdr: str = "by") -> np.ndarray:
    """What a step-up procedure divides q by with `m` tests: the harmonic sum H(m) for
    Benjamini-Yekutieli, 1 for Benjamini-Hochberg (FDR)."""
    if fdr not in FDR:
        raise ValueError(f"FDR procedure '{fdr}' is unknown; use one of {', '.join(FDR)}")
    m = np.maximum(np.asarray(m, dtype=int), 1)
    return np.r_[0.0, np.cumsum(1.0 / np.arange(1, int(m.max()) + 1))][m] if fdr == "by" else np.ones(m.shape)


def one_sided_p(differences: np.ndarray, groups: np.ndarray, epsilon: float) -> np.ndarray:
    """p of the one-sided test that the mean of each row of `differences` (runs x items: person-win
    minus judge-win) is below `epsilon`, with the CR2 standard error over `groups` (one integer code
    per item, shared by every row) and Bell-McCaffrey degrees of freedom. As scipy's t-test for rows
    that do not vary: 0 below epsilon, 1 above, NaN at it; NaN with a single group."""
    grouping = Grouping(groups)
    mean, variance = grouping.spread(differences)
    return grouping.p(mean, variance, epsilon)


class Grouping:
    """The groups of a set of items (one integer code per item), readied for `one_sided_p`: what does not
    depend on the differences tested on them (their sizes, order and degrees of freedom), made once for
    every judge tested on the same items, and `spread` what does not depend on epsilon."""

    def __init__(self, groups: np.ndarray):
        codes, groups = np.unique(groups, return_inverse=True)
        self.sizes = np.bincount(groups, minlength=len(codes)).astype(float)
        runs = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])  # where each run of one group's items begins
        if len(runs) == len(codes):  # each group's items follow one another, as a rule: each run summed where it is,
            self.order, self.starts = None, runs  # its sum then put in its group's place (no order of a million items
            self.runs = np.argsort(groups[runs])  # kept: 8 MB)
        else:
            self.order, self.runs = np.argsort(groups, kind="stable"), None
            self.starts = np.r_[0, np.cumsum(self.sizes)[:-1]].astype(int)
        self.freedom = degrees_of_freedom(self.sizes)

    def spread(self, differences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's mean of `differences` (runs x items) and its CR2 variance over the groups."""
        differences = np.atleast_2d(np.asarray(differences, dtype=float))
        mean = differences.mean(axis=1)
        residuals = differences - mean[:, None]
        sums = np.add.reduceat(residuals, self.starts, axis=1)[:, self.runs] if self.order is None \
            else np.add.reduceat(residuals[:, self.order], self.starts, axis=1)  # the groups' residuals, in their order
        return mean, cr2_variance(np.broadcast_to(self.sizes, sums.shape), sums)

    def p(self, mean: np.ndarray, variance: np.ndarray, epsilon: float) -> np.ndarray:
        """`one_sided_p` from `spread`'s mean and variance."""
        return cr2_p_of(mean, variance, self.freedom, np.broadcast_to(self.sizes, (len(mean), len(self.sizes))),
                        epsilon)


def cr2_p(sizes: np.ndarray, residuals: np.ndarray, mean: np.ndarray, epsilon: float) -> np.ndarray:
    """`one_sided_p` from each group's items and residual sum (... x groups: the sum over its items
    of the difference minus the mean; a group of 0 items counts for none) and the mean (...): the
    plan's drawn studies, whose groups differ row by row, ask it so."""
    return cr2_p_of(mean, cr2_variance(sizes, residuals), degrees_of_freedom(sizes), sizes, epsilon)


def cr2_variance(sizes: np.ndarray, residuals: np.ndarray) -> np.ndarray:
    """The CR2 variance of a mean from each group's items and residual sum (... x groups)."""
    n = sizes.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = 1.0 / (1.0 - sizes / n[..., None])  # CR2's correction of each group's residual sum
        return (residuals ** 2 * weight).sum(axis=-1) / n ** 2


def cr2_p_of(mean: np.ndarray, variance: np.ndarray, freedom: np.ndarray | float, sizes: np.ndarray,
             epsilon: float) -> np.ndarray:
    """`cr2_p` from the mean, its CR2 variance and degrees of freedom (`degrees_of_freedom` of `sizes`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - epsilon) / np.sqrt(variance)
        p = stats.t.cdf(t, freedom)
    flat = variance == 0
    p = np.where(flat, np.where(mean < epsilon, 0.0, np.where(mean > epsilon, 1.0, np.nan)), p)
    return np.where((sizes > 0).sum(axis=-1) > 1, p, np.nan)


def degrees_of_freedom(sizes: np.ndarray) -> float | np.ndarray:
    """Bell and McCaffrey's degrees of freedom of the CR2 variance of a mean over groups of `sizes`
    items: (tr A)^2 / tr(A^2) under independent items, G - 1 for equal sizes, n - 1 for one item each.
    `sizes` may hold one set of groups per row (... x groups; 0: no group): one each."""
    sizes = np.asarray(sizes, dtype=float)
    n = sizes.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = 1.0 / (1.0 - sizes / n[..., None])
        square = (weight ** 2 * sizes ** 2).sum(axis=-1) - 2 * (weight ** 2 * sizes ** 3).sum(axis=-1) / n \
            + ((weight * sizes ** 2).sum(axis=-1) / n) ** 2
        found = np.where((sizes > 0).sum(axis=-1) < 2, np.nan, n ** 2 / square)  # tr A = n
    return float(found) if found.ndim == 0 else found


def alignment(label: np.ndarray, others: np.ndarray, how: str) -> np.ndarray:
    """Each item's alignment of `label` (... x items) with `others` (... x raters x items; NaN where a
    rater gave no label): `accuracy`, the share of the others who gave the same label; else minus the
    root mean squared difference from them (`neg-rmse`, `rank`)."""
    present = ~np.isnan(others)
    count = present.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        if how == "accuracy":
            return (others == label[..., None, :]).sum(axis=-2) / count
        squares = (label[..., None, :] - others) ** 2
        return -np.sqrt((squares if present.all() else np.where(present, squares, 0.0)).sum(axis=-2) / count)


def rejected(p_values: np.ndarray, q: float = 0.05, fdr: str = "by", tested: np.ndarray | None = None) -> np.ndarray:
    """How many of each row's p-values (runs x annotators) the step-up procedure `fdr` (FDR;
    Benjamini-Yekutieli by default) rejects at FDR `q`, over the annotators `tested` (runs x
    annotators; default all; a NaN p-value is counted, never rejected)."""
    tested = np.ones(p_values.shape, bool) if tested is None else tested
    count = tested.sum(axis=1)
    ranked = np.sort(np.where(tested & ~np.isnan(p_values), p_values, np.inf), axis=1)
    ranks = np.arange(1, p_values.shape[1] + 1)
    thresholds = ranks[None, :] / np.maximum(count, 1)[:, None] * q / fdr_factor(count, fdr)[:, None]
    below = ranked <= thresholds
    return np.where(below.any(axis=1), p_values.shape[1] - np.argmax(below[:, ::-1], axis=1), 0)


def winning_rates(people: np.ndarray, judge: np.ndarray, groups: np.ndarray, epsilon: float,
                  how: str = "neg-rmse", by: str = "groups", q: float = 0.05, fdr: str = "by") -> np.ndarray:
    """The test of every simulated study at once (people: runs x annotators x items, each annotator
    labeling every item; judge: runs x items; groups: a code per item): its winning rate per run,
    per annotator over `groups` (by="groups") or over items taken as independent (by="items"),
    across annotators by `fdr` (FDR)."""
    return rejected(p_values(people, judge, groups, epsilon, how, by), q, fdr) / people.shape[1]


def p_values(people: np.ndarray, judge: np.ndarray, groups: np.ndarray, epsilon: float, how: str = "neg-rmse",
             by: str = "groups") -> np.ndarray:
    """Each annotator's one-sided p of every simulated study (runs x annotators; `winning_rates`)."""
    runs, m, n = people.shape
    units = groups if by == "groups" else np.arange(n)
    found = np.empty((runs, m))
    for k in range(m):
        others = np.delete(people, k, axis=1)
        person, machine = alignment(people[:, k], others, how), alignment(judge, others, how)
        differences = (person >= machine).astype(float) - (machine >= person).astype(float)
        found[:, k] = one_sided_p(differences, units, epsilon)
    return found


def simulate(rng: np.random.Generator, sizes: list[int], runs: int, annotators: int = 3, offset: float = 1.0,
             noise: float = 0.8, judge_noise: float | None = None, judge_offset: float | None = None,
             scale: tuple[int, int] = (1, 5), center: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`runs` studies of groups of `sizes` items on a whole-number `scale`: each item has a quality
    (`center`, by default the scale's middle, plus a normal of sd 1: a center near an end skews the
    scores, as SummEval's consistency where most summaries get 5); a group moves every rater's score by an offset of sd
    `offset` shared by all of them, and each rater's (the judge's too) by an offset of its own of the
    same sd (the rater's reading of that dialogue or document); each score adds the rater's noise (sd
    `noise`) and is rounded onto the scale. The judge is drawn as the people are (exchangeable with
    them: the test's null at epsilon 0) unless `judge_noise` or `judge_offset` say otherwise.
    Returns people (runs x annotators x items), the judge (runs x items) and each item's group."""
    groups, raters = np.repeat(np.arange(len(sizes)), sizes), annotators + 1
    own_sd = np.r_[np.full(annotators, offset), offset if judge_offset is None else judge_offset].astype(np.float32)
    noise_sd = np.r_[np.full(annotators, noise), noise if judge_noise is None else judge_noise].astype(np.float32)
    by_group = rng.standard_normal((runs, 1, len(sizes)), dtype=np.float32) * offset \
        + rng.standard_normal((runs, raters, len(sizes)), dtype=np.float32) * own_sd[None, :, None]  # shared, own
    scores = rng.standard_normal((runs, raters, len(groups)), dtype=np.float32) * noise_sd[None, :, None]
    scores += by_group[:, :, groups] + rng.standard_normal((runs, 1, len(groups)), dtype=np.float32)  # quality
    scores += (scale[0] + scale[1]) / 2 if center is None else center
    scores = np.clip(np.round(scores), *scale).astype(float)
    return scores[:, :annotators], scores[:, annotators], groups


def shaped(pattern: list[int], groups: int) -> list[int]:
    """`groups` group sizes cycling through `pattern` (USR's 6, FED's 3-5, SummEval's 16)."""
    return [pattern[k % len(pattern)] for k in range(groups)]
