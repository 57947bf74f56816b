"""How often the systems' intervals hold the people's mean: a simulation from a dataset where
people scored every item (SummEval, Topical-Chat USR). Each draw labels k items of every system
(at random, or by the judge's uncertainty with known probabilities), computes the people-only and
the combined 95% interval exactly as the app does (`geval.decisions.betting`), and counts whether
each holds the mean of the people's scores over all the system's items; the textbook PPI++
interval (normal, `betting.classical_ppi`) beside it. Vectorized: thousands of draws at once
(tests/test_systems.py runs a few hundred in seconds, bench/systems_coverage.py the full table)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geval.data.items import Item
from geval.decisions.betting import Draws, chosen_observations, classical_ppi, interval, sequential_fit


@dataclass
class Coverage:
    """Per system (S,): the share of draws whose interval held the people's mean, and the mean width,
    people alone, combined with the predictors, and the textbook PPI++ interval."""

    people: np.ndarray
    people_width: np.ndarray
    combined: np.ndarray
    combined_width: np.ndarray
    textbook: np.ndarray
    textbook_width: np.ndarray


def simulate(scores: np.ndarray, predictors: np.ndarray, k: int, draws: int, seed: int = 0,
             weights: np.ndarray | None = None, scale: tuple[float, float] = (1.0, 5.0)) -> Coverage:
    """`scores` (S, N): the people's mean score of each system's N items; `predictors` (S, N, p)
    the judges' scores of them; k labeled items per system in each of `draws` draws (at random, or
    drawn one by one with probability proportional to `weights` (S, N) among the items left)."""
    rng = np.random.default_rng(seed)
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
    drawn = Draws(y, x.reshape(batch, k, -1), population, np.full(batch, size), np.repeat(np.arange(draws), systems),
                  scale)
    if weights is not None:
        drawn.weights = np.broadcast_to(weights, (draws, systems, size)).reshape(batch, size)
        drawn.taken = np.take_along_axis(np.broadcast_to(weights, (draws, systems, size)), order, 2).reshape(batch, k)
    truth = np.broadcast_to(scores.mean(1), (draws, systems))

    def read(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        low, high = low.reshape(draws, systems), high.reshape(draws, systems)
        # an empty interval (every candidate mean rejected: rare, drawn by weight) is a miss, and has no width
        return ((low <= truth + 1e-9) & (truth - 1e-9 <= high)).mean(0), np.nanmean(high - low, 0)

    people = read(*interval(drawn, *chosen_observations(drawn, None)))
    combined = read(*interval(drawn, *chosen_observations(drawn, sequential_fit(drawn))))
    judge = predictors[..., 0]
    judged = np.take_along_axis(np.broadcast_to(judge, (draws, systems, size)), order, 2)
    _, low, high, _ = classical_ppi(y.reshape(draws, systems, k), judged, np.broadcast_to(judge, (draws, systems, size)))
    textbook = read(low, high)
    return Coverage(*people, *combined, *textbook)


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
