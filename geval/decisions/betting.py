"""The mean of a finite set of bounded scores from a few of them, by betting: 95% intervals that
hold at any number of labels, however skewed the scores (Waudby-Smith & Ramdas, "Estimating means
of bounded random variables by betting", JRSS B 2024, with its sampling without replacement).

Items are drawn one at a time without replacement, at random or with known probabilities (each
remaining item's weight over the remaining weight: `weights`). For each candidate mean m of the
population, a bettor who wagers that the next score is above (below) what m implies for the items
left doubles their money only where m is wrong; m is rejected once the hedged capital reaches 1/alpha
(Ville's inequality makes that a 95% interval whatever the scores' distribution). The bets follow
the scores' running mean and variance (predictable plug-ins), truncated at TRUNCATION of what the
scale's bounds allow.

A predictor known on every item (a judge's score, several judges') enters as a control variate, as
in prediction-powered inference: each observation is the people's score minus the predictor, plus
the predictor's mean over the items left (known exactly), so its conditional mean is still the
people's mean over the items left. The predictor's coefficients are fitted on earlier labels only
(`sequential_fit`: every population's labels at earlier positions), and a predictable choice among
shrunk versions (SHRINKS: the people alone among them) keeps the range from costing more than the
judge buys. Every array has a leading batch axis: the app computes a batch of systems, the
simulation (`geval.decisions.systems_coverage`) thousands of draws at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
#: Candidate means tried across the scale (the interval's ends are rounded outward to this grid).
GRID = 401
#: The bets stay below this share of what the bounds allow (the paper's 1/2 to 3/4).
TRUNCATION = 0.75
#: The predictor's coefficients times these: the bettor picks the version of lowest variance so far.
SHRINKS = (0.0, 0.5, 1.0)
#: Labels before a shrunk version other than the people alone may be picked.
WARM = 3
#: The ridge's penalty, in pseudo-observations of the predictor's variance at coefficient 0.
RIDGE = 4.0


@dataclass
class Draws:
    """A batch of B labeled sequences, each from its own population of N_b items (padded with NaN):
    `y` (B, k) the people's scores of the items drawn, in order; `x` (B, k, p) the predictors of
    those items and `population` (B, N, p) of every item, both centred on the population's mean;
    `size` (B,) each N_b; `draw` (B,) which sequences share a fit (a system's labels help fit the
    predictor of the others drawn with it); `weights` (B, N) the sampling weights (None: at random)
    and `taken` (B, k) the weight of each item drawn; `scale` the scores' bounds."""

    y: np.ndarray
    x: np.ndarray
    population: np.ndarray
    size: np.ndarray
    draw: np.ndarray
    scale: tuple[float, float]
    weights: np.ndarray | None = None
    taken: np.ndarray | None = None

    @property
    def labeled(self) -> np.ndarray:
        """(B, k): whether each position holds a label."""
        return np.isfinite(self.y)


def sequential_fit(draws: Draws, ridge: float = RIDGE) -> np.ndarray:
    """(B, k, p): the predictor's coefficients at each position, a ridge regression of the people's
    scores on the predictors fitted on the labels at earlier positions of every sequence of the
    same draw (none before the first: 0). Never on the label it is read on, nor on a later one."""
    y, x, labeled = draws.y, draws.x, draws.labeled
    n_draws = int(draws.draw.max()) + 1
    p = x.shape[2]
    yz, xz = np.where(labeled, y, 0.0), np.where(labeled[..., None], x, 0.0)

    def per_draw(values: np.ndarray) -> np.ndarray:  # sums over the sequences of each draw, by position
        out = np.zeros((n_draws,) + values.shape[1:])
        np.add.at(out, draws.draw, values)
        return out

    count, sy, sx = per_draw(labeled.astype(float)), per_draw(yz), per_draw(xz)
    sxx, sxy = per_draw(np.einsum("bkp,bkq->bkpq", xz, xz)), per_draw(np.einsum("bkp,bk->bkp", xz, yz))
    before = [np.concatenate([np.zeros_like(a[:, :1]), np.cumsum(a, 1)[:, :-1]], 1) for a in (count, sy, sx, sxx, sxy)]
    n, sy, sx, sxx, sxy = before
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = sx / np.maximum(n, 1)[..., None], sy / np.maximum(n, 1)
        cxx = sxx - n[..., None, None] * np.einsum("dkp,dkq->dkpq", mx, mx)
        cxy = sxy - n[..., None] * mx * my[..., None]
    variance = np.array([np.nanvar(draws.population[draws.draw == d].reshape(-1, p), 0) if (draws.draw == d).any()
                         else np.ones(p) for d in range(n_draws)])
    penalty = ridge * np.maximum(variance, 1e-12)[:, None, :, None] * np.eye(p)[None, None] if p else 0
    beta = np.linalg.solve(cxx + penalty, cxy[..., None])[..., 0] if p else np.zeros((n_draws, y.shape[1], 0))
    beta[n < 2] = 0.0
    return beta[draws.draw]


def observations(draws: Draws, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B, k) each: the observation at each position (the people's score corrected by the predictor
    `beta` of that position, weighted by the inverse of its probability when drawn by weight) and
    its lower and upper bound over every item it could have been; its conditional mean is the
    people's mean over the items not yet drawn."""
    a, b = draws.scale
    y, x, pop, labeled = draws.y, draws.x, draws.population, draws.labeled
    k = y.shape[1]
    positions = np.arange(k)
    left = (draws.size[:, None] - positions[None, :]).astype(float)  # items not yet drawn, this one included
    left[left <= 0] = np.nan  # a position past a population's last item (a padded, shorter one): no observation
    g_pop = np.einsum("bnp,bkp->bkn", np.nan_to_num(pop), beta)  # the predictor of every item, per position
    g_pop = np.where(np.isfinite(pop[..., 0])[:, None, :] if pop.shape[2] else True, g_pop, np.nan)
    g = np.einsum("bkp,bkp->bk", np.where(labeled[..., None], x, 0.0), beta)
    g_before = _sum_before(x, labeled, beta)
    g_left = (np.nansum(g_pop, 2) - g_before) / left  # the predictor's mean over the items left
    if draws.weights is None:
        inverse, inverse_pop = np.ones_like(y), np.ones_like(g_pop)
    else:
        w_before = np.concatenate([np.zeros((len(y), 1)), np.cumsum(np.nan_to_num(draws.taken), 1)[:, :-1]], 1)
        w_left = np.nansum(draws.weights, 1)[:, None] - w_before
        inverse = w_left / (left * draws.taken)
        inverse_pop = w_left[:, :, None] / (left[:, :, None] * draws.weights[:, None, :])
    z = g_left + (y - g) * inverse
    low = g_left + np.nanmin((a - g_pop) * inverse_pop, 2)
    high = g_left + np.nanmax((b - g_pop) * inverse_pop, 2)
    return z, low, high


def _sum_before(x: np.ndarray, labeled: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """(B, k): at each position t, the predictor of position t's coefficients summed over the items
    drawn before t (they are no longer among the items left)."""
    xs = np.where(labeled[..., None], x, 0.0)
    cumulative = np.concatenate([np.zeros_like(xs[:, :1]), np.cumsum(xs, 1)[:, :-1]], 1)
    return np.einsum("bkp,bkp->bk", cumulative, beta)


def chosen_observations(draws: Draws, beta: np.ndarray | None,
                        shrinks: tuple[float, ...] = SHRINKS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`observations` of the version the bettor picks at each position: among the predictor times
    each of `shrinks`, the one whose observations so far vary least (the people alone until WARM
    labels). `beta` None: the people alone."""
    if beta is None or beta.shape[2] == 0:
        return observations(draws, np.zeros(draws.x.shape[:2] + (draws.x.shape[2],)))
    versions = [observations(draws, beta * s) for s in shrinks]
    z = np.stack([v[0] for v in versions])
    filled = np.where(np.isfinite(z), z, 0.0)
    count = np.cumsum(np.isfinite(z), 2)
    mean = np.cumsum(filled, 2) / np.maximum(count, 1)
    variance = np.cumsum(filled ** 2, 2) / np.maximum(count, 1) - mean ** 2
    so_far = np.concatenate([np.full(z.shape[:2] + (1,), np.inf), variance[:, :, :-1]], 2)
    so_far[:, :, :WARM] = np.inf
    so_far[list(shrinks).index(0.0) if 0.0 in shrinks else 0, :, :WARM] = 0.0
    pick = np.argmin(so_far, 0)[None]
    return tuple(np.take_along_axis(np.stack([v[i] for v in versions]), pick, 0)[0] for i in range(3))


def interval(draws: Draws, z: np.ndarray, low: np.ndarray, high: np.ndarray, alpha: float = ALPHA,
             grid: int = GRID) -> tuple[np.ndarray, np.ndarray]:
    """(B,) each: the 1 - alpha interval of each population's mean from its observations `z` and
    their bounds (`observations`): the candidate means whose hedged capital never reached 1/alpha,
    widened by one step of the grid (a grid is coarse: the ends stay outside the true ones). NaN
    where a sequence has no label."""
    a, b = draws.scale
    y, labeled = draws.y, draws.labeled
    count = labeled.sum(1)
    m = np.linspace(a, b, grid)
    n = draws.size[:, None].astype(float)
    y_before = np.concatenate([np.zeros((len(y), 1)), np.cumsum(np.where(labeled, y, 0.0), 1)[:, :-1]], 1)
    up, down = np.zeros((len(y), grid)), np.zeros((len(y), grid))
    rejected = np.zeros((len(y), grid), bool)
    prior = ((b - a) / 2) ** 2
    squares, total = np.full(len(y), prior), np.zeros(len(y))
    threshold, log2 = math.log(1 / alpha), math.log(2)
    for t in range(y.shape[1]):
        on = labeled[:, t]
        variance = squares / (t + 1)
        bet = np.sqrt(2 * math.log(2 / alpha) / (variance * np.maximum(count, 1)))[:, None]
        remaining = np.where(n > t, n - t, np.nan)  # NaN past a shorter population's last item (never labeled)
        mean_left = (n * m[None, :] - y_before[:, t:t + 1]) / remaining  # the people's mean over the items left, if m
        possible = (mean_left >= a - 1e-9) & (mean_left <= b + 1e-9)
        above = np.minimum(bet, TRUNCATION / np.maximum(mean_left - low[:, t:t + 1], 1e-12))
        below = np.minimum(bet, TRUNCATION / np.maximum(high[:, t:t + 1] - mean_left, 1e-12))
        gap = np.nan_to_num(z[:, t:t + 1]) - mean_left
        with np.errstate(invalid="ignore", divide="ignore"):
            up = np.where(on[:, None], up + np.log1p(np.maximum(above * gap, -1 + 1e-15)), up)
            down = np.where(on[:, None], down + np.log1p(np.maximum(-below * gap, -1 + 1e-15)), down)
        rejected |= on[:, None] & ((np.logaddexp(up, down) - log2 >= threshold) | ~possible)
        zt = np.where(on, np.nan_to_num(z[:, t]), 0.0)
        total += zt
        squares += np.where(on, (zt - ((a + b) / 2 + total) / (t + 2)) ** 2, 0.0)
    kept = ~rejected
    step = m[1] - m[0]
    first, last = np.argmax(kept, 1), grid - 1 - np.argmax(kept[:, ::-1], 1)
    defined = kept.any(1) & (count > 0)
    low = np.where(defined, np.maximum(m[first] - step, a), np.nan)
    high = np.where(defined, np.minimum(m[last] + step, b), np.nan)
    every = count >= draws.size  # every item drawn: the mean is known
    exact = np.where(labeled, y, 0.0).sum(1) / np.maximum(count, 1)
    return np.where(every, exact, low), np.where(every, exact, high)


def point(draws: Draws, beta: np.ndarray) -> np.ndarray:
    """(B,): the prediction-powered estimate of each population's mean with the coefficients
    `beta` (B, p), fitted on all the labels: the predictor's mean over every item plus the people's
    mean difference from it on the labeled ones (PPI++; at random), or, drawn by weight, the mean
    of each draw's unbiased estimate (inverse-probability weighted)."""
    labeled = draws.labeled
    if draws.weights is None:
        residual = np.where(labeled, draws.y - np.einsum("bkp,bp->bk", np.nan_to_num(draws.x), beta), 0.0)
        return residual.sum(1) / np.maximum(labeled.sum(1), 1) + 0.0  # the predictor is centred: its mean is 0
    full = draws.x.shape[1]
    fixed = np.repeat(beta[:, None, :], full, 1)
    z, _, _ = observations(draws, fixed)
    n = draws.size[:, None].astype(float)
    positions = np.arange(full)[None, :]
    y_before = np.concatenate([np.zeros((len(z), 1)), np.cumsum(np.where(labeled, draws.y, 0.0), 1)[:, :-1]], 1)
    each = (y_before + (n - positions) * z) / n
    return np.where(labeled, each, 0.0).sum(1) / np.maximum(labeled.sum(1), 1)
