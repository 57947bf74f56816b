"""How often the systems' intervals hold the people's mean, and how often the ranks err: simulations
from a dataset where people scored every item (SummEval, Topical-Chat USR).

`simulate`: each draw labels k items of every system (at random, or by the judge's uncertainty with
known probabilities), computes the people-only and the combined 95% interval exactly as the app does
for that design (`geval.decisions.systems`: the padded t at random, betting by weight), beside the
betting and the t with the prior variance on the same draws, and counts per system whether each
holds the mean of the people's scores over all the system's items.

`simulate_pairs`: each draw labels k documents (every system's item of each, the CLI's default) and
reads every pair's difference as the app does (`t_intervals.paired_intervals`): how often some
interval for all pairs together misses its pair's true difference (the family-wise error), how
often a pair is told apart the wrong way round, how many pairs are told apart, and each pair's own
interval's coverage; on the real systems, or on a null of equal systems (each document's systems
shuffled in every draw: exchangeable, their means equal but for chance).

Vectorized: thousands of draws at once (tests/test_systems*.py run a few hundred in seconds,
bench/systems_coverage.py the full tables).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from geval.data.items import Item
from geval.decisions import t_intervals
from geval.decisions.betting import Draws, chosen_observations, interval, sequential_fit
from geval.decisions.t_intervals import final_fit


@dataclass
class Reading:
    """Per system (S,): the share of draws whose interval held the people's mean, and its mean width."""

    coverage: np.ndarray
    width: np.ndarray


@dataclass
class Coverage:
    """The app's intervals for the design (`method`), people alone and combined with the predictors;
    `others`: the same draws read by other methods ("betting, combined", "t with the prior, people
    only", ...)."""

    method: str
    people: Reading
    combined: Reading
    others: dict[str, Reading] = field(default_factory=dict)


def _draws(scores: np.ndarray, predictors: np.ndarray, k: int, draws: int, rng: np.random.Generator,
           weights: np.ndarray | None, scale: tuple[float, float]) -> Draws:
    """`draws` draws of k items of every system, as one batch of draws × systems sequences."""
    systems, size = scores.shape
    centred = predictors - predictors.mean(1, keepdims=True)
    keys = rng.random((draws, systems, size))
    if weights is not None:  # successive sampling by weight: the order of Exp(1) / w (Efraimidis & Spirakis)
        keys = -np.log(keys) / weights[None]
    order = np.argsort(keys, 2)[:, :, :k]
    batch = draws * systems
    y = np.take_along_axis(np.broadcast_to(scores, (draws, systems, size)), order, 2).reshape(batch, k)
    x = np.take_along_axis(np.broadcast_to(centred, (draws,) + centred.shape), order[..., None], 2)
    population = np.broadcast_to(centred, (draws,) + centred.shape).reshape(batch, size, -1)
    found = Draws(y, x.reshape(batch, k, -1), population, np.full(batch, size), np.repeat(np.arange(draws), systems),
                  scale)
    if weights is not None:
        found.weights = np.broadcast_to(weights, (draws, systems, size)).reshape(batch, size)
        found.taken = np.take_along_axis(np.broadcast_to(weights, (draws, systems, size)), order, 2).reshape(batch, k)
    return found


def simulate(scores: np.ndarray, predictors: np.ndarray, k: int, draws: int, seed: int = 0,
             weights: np.ndarray | None = None, scale: tuple[float, float] = (1.0, 5.0),
             padding: float = t_intervals.PADDING, betting: bool = True) -> Coverage:
    """`scores` (S, N): the people's mean score of each system's N items; `predictors` (S, N, p)
    the judges' scores of them; k labeled items per system in each of `draws` draws (at random, or
    drawn one by one with probability proportional to `weights` (S, N) among the items left).
    `padding`: the labels the padded t adds at each end (the app's by default); `betting`: False
    leaves betting out (at random only; much faster)."""
    systems = scores.shape[0]
    drawn = _draws(scores, predictors, k, draws, np.random.default_rng(seed), weights, scale)
    truth = np.broadcast_to(scores.mean(1), (draws, systems))

    def read(low: np.ndarray, high: np.ndarray) -> Reading:
        low, high = low.reshape(draws, systems), high.reshape(draws, systems)
        # an empty interval (every candidate mean rejected: rare, drawn by weight) is a miss, and has no width
        return Reading(((low <= truth + 1e-9) & (truth - 1e-9 <= high)).mean(0), np.nanmean(high - low, 0))

    if not betting and weights is not None:
        raise ValueError("drawn by weight the app gives the betting intervals: simulate them")
    bets = {side: read(*interval(drawn, *chosen_observations(drawn, beta)))
            for side, beta in (("people only", None), ("combined", sequential_fit(drawn)))} if betting else {}
    final = final_fit(drawn)
    floor, ceiling = t_intervals.known_range(drawn)
    others = {f"betting, {side}": reading for side, reading in bets.items()}
    padded = {}
    for side, beta in (("people only", None), ("combined", final)):
        values = t_intervals.residuals(drawn, beta)
        mean, se, df = t_intervals.prior_t(values, drawn.size, scale[1] - scale[0])
        low, high = t_intervals.around(mean, se, df, t_intervals.ALPHA)
        others[f"t with the prior, {side}"] = read(np.clip(low, floor, ceiling), np.clip(high, floor, ceiling))
        padded[side] = read(*t_intervals.system_intervals(drawn, beta, [t_intervals.ALPHA], padding)[0])
    if weights is not None:  # drawn by weight, the app gives the betting intervals
        return Coverage("betting", bets["people only"], bets["combined"], others)
    others.update({f"padded t, {side}": reading for side, reading in padded.items()})
    return Coverage("padded t", padded["people only"], padded["combined"], others)


@dataclass
class PairsCoverage:
    """Over the draws: the family-wise error of the intervals for all pairs together (`fwer`: some
    interval missed its pair's true difference; `wrong`: some pair told apart the wrong way round),
    the pairs told apart by them (`apart`, their mean count), each pair's own 95% interval's coverage
    (`pair`, (P,)) and its mean width; `reference`: the same for the paired t with the prior variance
    of a difference for all pairs together too (the sentences' interval at alpha over the pairs)."""

    fwer: float
    wrong: float
    apart: float
    pair: np.ndarray
    width: float
    reference: dict[str, float] = field(default_factory=dict)


def simulate_pairs(scores: np.ndarray, predictors: np.ndarray, k: int, draws: int, seed: int = 0,
                   null: bool = False, scale: tuple[float, float] = (1.0, 5.0),
                   rank_spread: float = t_intervals.RANK_SPREAD) -> PairsCoverage:
    """`scores` (S, N) and `predictors` (S, N, p) as in `simulate`, the N items of every system on the
    same N documents in the same order; k documents drawn at random in each of `draws` draws, every
    pair of systems read on them (the combined estimate with the predictors). `null`: each draw first
    shuffles the systems within every document. `rank_spread`: the ranks' prior (the app's by default)."""
    rng = np.random.default_rng(seed)
    systems, size = scores.shape
    pairs = np.array(list(combinations(range(systems), 2)))
    n_pairs = len(pairs)
    people = np.broadcast_to(scores, (draws, systems, size)).copy()
    judged = np.broadcast_to(predictors, (draws,) + predictors.shape).copy()
    if null:
        shuffle = np.argsort(rng.random((draws, systems, size)), 1)
        people = np.take_along_axis(people, shuffle, 1)
        judged = np.take_along_axis(judged, shuffle[..., None], 1)
    judged -= judged.mean(2, keepdims=True)
    truth = people.mean(2)
    truth = truth[:, pairs[:, 0]] - truth[:, pairs[:, 1]]  # (draws, P)
    documents = np.argsort(rng.random((draws, size)), 1)[:, :k]
    y = np.take_along_axis(people, documents[:, None, :], 2)
    difference = (y[:, pairs[:, 0]] - y[:, pairs[:, 1]]).reshape(draws * n_pairs, k)
    population = (judged[:, pairs[:, 0]] - judged[:, pairs[:, 1]]).reshape(draws * n_pairs, size, -1)
    x = np.take_along_axis(population.reshape(draws, n_pairs, size, -1), documents[:, None, :, None], 2)
    width = scale[1] - scale[0]
    drawn = Draws(difference, x.reshape(draws * n_pairs, k, -1), population, np.full(draws * n_pairs, size),
                  np.repeat(np.arange(draws), n_pairs), (-width, width))
    beta = final_fit(drawn)
    low, high, s_low, s_high = (v.reshape(draws, n_pairs) for v in
                                t_intervals.paired_intervals(drawn, beta, t_intervals.ALPHA, n_pairs, rank_spread))
    mean, se, df = t_intervals.prior_t(t_intervals.residuals(drawn, beta), drawn.size, 2 * width)  # a difference's
    r_low, r_high = (v.reshape(draws, n_pairs) for v in t_intervals.around(mean, se, df, t_intervals.ALPHA / n_pairs))

    def family(lo: np.ndarray, hi: np.ndarray) -> tuple[float, float, float]:
        missed = ((truth < lo - 1e-9) | (truth > hi + 1e-9)).any(1).mean()
        wrong = (((lo > 0) & (truth <= 0)) | ((hi < 0) & (truth >= 0))).any(1).mean()
        return float(missed), float(wrong), float(((lo > 0) | (hi < 0)).sum(1).mean())

    fwer, wrong, apart = family(s_low, s_high)
    r_fwer, r_wrong, r_apart = family(r_low, r_high)
    return PairsCoverage(fwer, wrong, apart, ((low <= truth + 1e-9) & (truth - 1e-9 <= high)).mean(0),
                         float(np.mean(high - low)), {"fwer": r_fwer, "wrong": r_wrong, "apart": r_apart})


def arrays(items: list[Item], aspect: str, judges: dict[str, dict[str, float]]) -> tuple[np.ndarray, np.ndarray, list]:
    """`items` of equally many per system as (S, N) people's means of `aspect` and (S, N, p) the
    `judges`' scores ({name: {item id: score}}; a missing one at the judge's mean), systems in order,
    each system's items by group; and the systems' names."""
    systems = sorted({item.system for item in items})
    by_system = {s: sorted((i for i in items if i.system == s), key=lambda i: (i.group, i.id)) for s in systems}
    sizes = {len(v) for v in by_system.values()}
    if len(sizes) != 1:
        raise ValueError(f"systems of unequal size ({sorted(sizes)}): the simulation needs equally many items each")
    scores = np.array([[i.human_mean(aspect) for i in by_system[s]] for s in systems])
    columns = []
    for values in judges.values():
        column = np.array([[values.get(i.id, np.nan) for i in by_system[s]] for s in systems], float)
        columns.append(np.where(np.isnan(column), np.nanmean(column), column))
    return scores, np.stack(columns, 2) if columns else np.zeros(scores.shape + (0,)), systems
