"""Intervals for a fixed number of labels: what `geval systems`, the report and the Agreement page
give where the labels are drawn at random or a document at a time (the Label page's live line, and
labels drawn by weight, keep `geval.decisions.betting`'s intervals, valid however labels keep coming).

A system's mean: Student's t with one label added at each end of the scale (as Agresti & Coull's
interval adds successes and failures to a proportion), standing for the items not yet labeled: the
centre moves toward the middle by their share and the variance grows by what an unseen extreme score
could add, so that a sample piled at one end (most SummEval consistency scores are 5) still gets a
width (half a label held SummEval's systems but not a system with one item in ten at the bottom of the
scale, docs/statistics.md); the combined estimate reads the same on the
people's scores less the judge's (prediction-powered, the judge's coefficient fitted on all the
labels, PPI++), so its width follows the variance the judge leaves, not its range. Sampling without
replacement: the variance times 1 − k/N. The truth always lies between what the items not yet labeled
could make of it at either end of the scale; the interval is cut there.

A difference on shared documents: the paired t whose variance has a prior of one pseudo-label of a
difference's largest variance ((k s² + (b − a)²) / (k + 1), "the t interval with the prior variance");
for all pairs together (the ranks) the same t at alpha over the pairs (Bonferroni) with the prior of
one score's largest variance ((b − a) / 2)², the sharpest whose family-wise error stayed at or below
.05 in simulation (docs/statistics.md), widened to hold the pair's own interval.

Every array has a leading batch axis (systems, pairs, or thousands of simulated draws); the values are
NaN-padded on the right where a sequence has fewer labels.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from geval.decisions.betting import ALPHA, Draws, sequential_fit

#: Labels added at each end of the scale (a system's mean): the fewest that held every system (docs/statistics.md).
PADDING = 1.0
#: The ranks' prior: the spread whose half squared is the prior variance, as a share of a difference's range
#: (one score's range: half of it).
RANK_SPREAD = 0.5


def final_fit(draws: Draws) -> np.ndarray:
    """(B, p): the predictor's coefficients fitted on every label of each draw (the ridge of
    `betting.sequential_fit` read after the last label)."""
    padded = Draws(np.concatenate([draws.y, np.full((len(draws.y), 1), np.nan)], 1),
                   np.concatenate([draws.x, np.zeros((len(draws.y), 1, draws.x.shape[2]))], 1),
                   draws.population, draws.size, draws.draw, draws.scale)
    return sequential_fit(padded)[:, -1]


def residuals(draws: Draws, beta: np.ndarray | None) -> np.ndarray:
    """(B, k): the people's scores less the predictor (`beta` (B, p); None: the scores themselves),
    NaN where unlabeled. Their mean is the prediction-powered estimate: the predictor is centred on
    the population's mean."""
    if beta is None or beta.shape[1] == 0:
        return draws.y.copy()
    return draws.y - np.einsum("bkp,bp->bk", np.nan_to_num(draws.x), beta)


def padded_t(values: np.ndarray, size: np.ndarray, scale: tuple[float, float],
             padding: float = PADDING) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B,) each: the centre, standard error and degrees of freedom of the padded t for the mean of
    populations of `size` items from `values` (B, k): the labels added at each end of `scale` (times
    `padding`) stand for the items not yet labeled, so the centre moves toward the middle by the share
    of the items left, 1 − k/N, as the variance shrinks by it."""
    a, b = scale
    labeled = np.isfinite(values)
    k = labeled.sum(1).astype(float)
    total = k + 2 * padding
    padded = (np.where(labeled, values, 0.0).sum(1) + padding * (a + b)) / total
    squares = np.where(labeled, (values - padded[:, None]) ** 2, 0.0).sum(1) + \
        padding * ((a - padded) ** 2 + (b - padded) ** 2)
    left = np.clip(1 - k / size, 0, 1)
    mean = np.where(labeled, values, 0.0).sum(1) / np.maximum(k, 1)
    se = np.sqrt(squares / (total - 1) * left / total)
    return mean + left * (padded - mean), se, np.maximum(k - 1, 1)


def prior_t(values: np.ndarray, size: np.ndarray, spread: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B,) each: the mean, standard error and degrees of freedom of the t with the prior variance:
    (k s² + (spread / 2)²) / (k + 1), `spread` the width of the values' possible range; the variance
    times 1 − k/N."""
    labeled = np.isfinite(values)
    k = labeled.sum(1).astype(float)
    mean = np.where(labeled, values, 0.0).sum(1) / np.maximum(k, 1)
    squares = np.where(labeled, (values - mean[:, None]) ** 2, 0.0).sum(1)
    variance = (k * squares / np.maximum(k - 1, 1) + (spread / 2) ** 2) / (k + 1)
    return mean, np.sqrt(variance * np.clip(1 - k / size, 0, 1) / np.maximum(k, 1)), np.maximum(k - 1, 1)


def around(centre: np.ndarray, se: np.ndarray, df: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The 1 − alpha interval centre ± t(df) · se."""
    half = stats.t.ppf(1 - alpha / 2, df) * se
    return centre - half, centre + half


def known_range(draws: Draws, spread: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(B,) each: where the population's mean lies for sure, the items not yet labeled at either end of
    `spread` (default the scale)."""
    low, high = spread or draws.scale
    labeled = draws.labeled
    k = labeled.sum(1)
    total = np.where(labeled, draws.y, 0.0).sum(1)
    left = np.maximum(draws.size - k, 0)
    return (total + left * low) / draws.size, (total + left * high) / draws.size


def system_intervals(draws: Draws, beta: np.ndarray | None, alphas: list[float],
                     padding: float = PADDING) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each population's mean at each of `alphas`: the padded t of the people's scores less the
    predictor `beta` (B, p; None: the people alone), cut to the known range; NaN without 2 labels."""
    centre, se, df = padded_t(residuals(draws, beta), draws.size, draws.scale, padding)
    floor, ceiling = known_range(draws)
    enough = draws.labeled.sum(1) >= 2
    found = []
    for alpha in alphas:
        low, high = around(centre, se, df, alpha)
        found.append((np.where(enough, np.clip(low, floor, ceiling), np.nan),
                      np.where(enough, np.clip(high, floor, ceiling), np.nan)))
    return found


def paired_intervals(draws: Draws, beta: np.ndarray | None, alpha: float, pairs: int,
                     rank_spread: float = RANK_SPREAD) -> tuple[np.ndarray, ...]:
    """(B,) each, for sequences of paired differences (`draws`, scaled ±(b − a)): the pair's 1 − alpha
    interval (the t with the prior variance of a difference) and the one for all `pairs` together (at
    alpha / pairs, with the prior of `rank_spread` of a difference's range, by default one score's,
    widened to hold the pair's), both cut to the known range."""
    spread = draws.scale[1] - draws.scale[0]  # a difference's range: twice a score's
    values = residuals(draws, beta)
    mean, se, df = prior_t(values, draws.size, spread)
    low, high = around(mean, se, df, alpha)
    mean, se, df = prior_t(values, draws.size, rank_spread * spread)
    s_low, s_high = around(mean, se, df, alpha / max(pairs, 1))
    s_low, s_high = np.minimum(s_low, low), np.maximum(s_high, high)
    floor, ceiling = known_range(draws)
    enough = draws.labeled.sum(1) >= 2
    return tuple(np.where(enough, np.clip(v, floor, ceiling), np.nan) for v in (low, high, s_low, s_high))


def welch(centre: np.ndarray, se: np.ndarray, df: np.ndarray, a: np.ndarray, b: np.ndarray,
          alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The 1 − alpha interval of centre[a] − centre[b] from two independent samples (Welch's degrees of
    freedom)."""
    va, vb = se[a] ** 2, se[b] ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        dof = np.where(va + vb > 0, (va + vb) ** 2 / (va ** 2 / df[a] + vb ** 2 / df[b]), np.minimum(df[a], df[b]))
    return around(centre[a] - centre[b], np.sqrt(va + vb), np.nan_to_num(dof, nan=1.0), alpha)
