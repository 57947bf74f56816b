"""How many items does the alternative annotator test need? A planned study (annotators, items,
how much they agree, epsilon) simulated as in the paper's appendix C (Calderon, Reichart & Dror,
ACL 2025): each item has a true label drawn from the labels' frequencies; an annotator gives it
with probability 1 - eta, else a label drawn from the same frequencies (noise); the judge likewise
with its own eta_f. Each annotator's eta is chosen so that two of them agree exactly as often as
the data's annotators do, and the judge's so that it agrees with an annotator as often as the
data's judge does ("a judge as good as this one"; without one, as good as an annotator). The
chance to pass is the share of simulated studies in which the test passes (`alttest.alt_test`'s
rule, vectorized here: the same t-test, Benjamini-Yekutieli and winning rate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

#: The chance a planned study should give the test.
TARGET = 0.8
SIZES = tuple(range(30, 301, 10))


@dataclass
class Plan:
    """The chance to pass by number of items, for a study of `annotators` annotators whose labels
    agree exactly `agreement` of the time (the judge with an annotator: `judge_agreement`), on
    `values` with `frequencies`, at `epsilon` and `alignment`; `runs` simulated studies per size."""

    annotators: int
    agreement: float
    judge_agreement: float
    judge_known: bool
    epsilon: float
    alignment: str
    sizes: list[int] = field(default_factory=list)
    chances: list[float] = field(default_factory=list)
    runs: int = 0

    def items_for(self, chance: float = TARGET) -> int | None:
        """The fewest items (of `sizes`) with at least `chance` to pass, None when no size reaches it."""
        return next((n for n, c in zip(self.sizes, self.chances) if c >= chance), None)

    def sentence(self, chance: float = TARGET) -> str:
        """What the plan says, in one sentence."""
        judge = "a judge as good as this one" if self.judge_known else "a judge as good as one of the annotators"
        agree = f"agreeing as yours do ({self.agreement:.0%} exact agreement)"
        needed = self.items_for(chance)
        if needed is None:
            best = max(self.chances, default=0.0)
            return (f"With {self.annotators} annotators {agree}, even {self.sizes[-1]} items give {judge} only "
                    f"{_a(best)} chance to pass (epsilon {self.epsilon:g}, {self.alignment}): the judge, or the "
                    "annotators' agreement, is too far from passing for more items to help much.")
        return (f"With {self.annotators} annotators {agree}, about {needed} items give {judge} {_a(chance)} "
                f"chance to pass (epsilon {self.epsilon:g}, {self.alignment}; {self.runs} simulated studies per size).")


def _a(share: float) -> str:
    """A percentage with its article: "an 18%", "a 25%"."""
    shown = f"{share:.0%}"
    return f"{'an' if shown.startswith(('8', '11', '18')) else 'a'} {shown}"


def plan_study(people: Mapping[str, Mapping[str, float]], judge: Mapping[str, float] | None = None,
               annotators: int | None = None, epsilon: float = 0.15, alignment: str = "accuracy",
               sizes: Sequence[int] = SIZES, runs: int = 200, seed: int = 0) -> Plan | None:
    """The plan for a study like the data's ({annotator: {item: label}}; the judge's {item: label},
    read on the annotators' scale), with `annotators` annotators (default: as many as the data has,
    at least 3). None when no two annotators labeled the same item (their agreement is unknown)."""
    labels = [float(v) for scores in people.values() for v in scores.values()]
    pairs = _pairs(people)
    if not pairs or len(set(labels)) < 2:
        return None
    values, counts = np.unique(np.round(labels, 6), return_counts=True)
    frequencies = counts / counts.sum()
    agreement = float(np.mean([a == b for a, b in pairs]))
    eta = _eta(frequencies, agreement)
    with_judge = [(float(judge[item]), float(score)) for scores in people.values() for item, score in scores.items()
                  if judge and item in judge and np.isfinite(judge[item])]
    judge_agreement = float(np.mean([round(j) == s for j, s in with_judge])) if with_judge else agreement
    eta_f = _eta_judge(frequencies, eta, judge_agreement)
    m = annotators or max(3, len(people))
    rng = np.random.default_rng(seed)
    chances = [_chance(rng, values, frequencies, eta, eta_f, m, n, epsilon, alignment, runs) for n in sizes]
    return Plan(m, agreement, judge_agreement, bool(with_judge), epsilon, alignment, list(sizes), chances, runs)


def simulate(rng: np.random.Generator, values: np.ndarray, frequencies: np.ndarray, eta: float, eta_f: float,
             annotators: int, items: int, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """`runs` simulated studies: labels (runs x annotators x items) and the judge's (runs x items)."""
    gold = rng.choice(len(values), size=(runs, 1, items), p=frequencies)
    noise = rng.choice(len(values), size=(runs, annotators + 1, items), p=frequencies)
    keep = rng.random((runs, annotators + 1, items)) >= np.r_[np.full(annotators, eta), eta_f][None, :, None]
    drawn = values[np.where(keep, gold, noise)]
    return drawn[:, :annotators], drawn[:, annotators]


def winning_rates(people: np.ndarray, judge: np.ndarray, epsilon: float, alignment: str = "accuracy",
                  q: float = 0.05) -> np.ndarray:
    """The alternative annotator test of every simulated study at once (people: runs x annotators x
    items, each annotator labeling every item; judge: runs x items): its winning rate per run."""
    runs, m, _ = people.shape
    p_values = np.empty((runs, m))
    for k in range(m):
        others = np.delete(people, k, axis=1)
        person, machine = _align(people[:, k], others, alignment), _align(judge, others, alignment)
        differences = (person >= machine).astype(float) - (machine >= person).astype(float)
        p_values[:, k] = _t_less(differences, epsilon)
    ranked = np.sort(np.where(np.isnan(p_values), np.inf, p_values), axis=1)
    thresholds = np.arange(1, m + 1) / m * q / np.sum(1.0 / np.arange(1, m + 1))
    below = ranked <= thresholds
    rejected = np.where(below.any(axis=1), m - np.argmax(below[:, ::-1], axis=1), 0)
    return rejected / m


def _chance(rng, values, frequencies, eta, eta_f, m, n, epsilon, alignment, runs) -> float:
    people, judge = simulate(rng, values, frequencies, eta, eta_f, m, n, runs)
    return float(np.mean(winning_rates(people, judge, epsilon, alignment) >= 0.5))


def _align(label: np.ndarray, others: np.ndarray, alignment: str) -> np.ndarray:
    """Each item's alignment of `label` (runs x items) with `others` (runs x annotators x items)."""
    if alignment == "accuracy":
        return (others == label[:, None, :]).mean(axis=1)
    return -np.sqrt(((others - label[:, None, :]) ** 2).mean(axis=1))


def _t_less(differences: np.ndarray, epsilon: float) -> np.ndarray:
    """One-sided t-test p (mean < epsilon) of each row, as scipy gives it for constant rows."""
    n = differences.shape[1]
    mean, sd = differences.mean(axis=1), differences.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - epsilon) / (sd / math.sqrt(n))
    p = stats.t.cdf(t, n - 1)
    constant = sd == 0
    p[constant] = np.where(mean[constant] < epsilon, 0.0, np.where(mean[constant] > epsilon, 1.0, np.nan))
    return p


def _pairs(people: Mapping[str, Mapping[str, float]]) -> list[tuple[float, float]]:
    """Every pair of two annotators' labels of the same item."""
    names = list(people)
    return [(float(people[a][item]), float(people[b][item])) for i, a in enumerate(names) for b in names[i + 1:]
            for item in people[a] if item in people[b]]


def _agreement(frequencies: np.ndarray, eta: float, eta_f: float) -> float:
    """How often two raters of noise eta and eta_f agree exactly, in the model above."""
    q_h = eta * frequencies[None, :] + (1 - eta) * np.eye(len(frequencies))
    q_f = eta_f * frequencies[None, :] + (1 - eta_f) * np.eye(len(frequencies))
    return float(np.sum(frequencies[:, None] * q_h * q_f))


def _eta(frequencies: np.ndarray, agreement: float) -> float:
    """The annotators' noise that makes two of them agree `agreement` of the time (bisection)."""
    return _solve(lambda eta: _agreement(frequencies, eta, eta), agreement)


def _eta_judge(frequencies: np.ndarray, eta: float, agreement: float) -> float:
    """The judge's noise that makes it agree with an annotator `agreement` of the time."""
    return _solve(lambda eta_f: _agreement(frequencies, eta, eta_f), agreement)


def _solve(agreement_at, target: float) -> float:
    """The eta in [0, 1] at which the decreasing `agreement_at(eta)` is `target` (clipped to its range)."""
    low, high = 0.0, 1.0
    if target >= agreement_at(low):
        return low
    if target <= agreement_at(high):
        return high
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if agreement_at(middle) > target else (low, middle)
    return (low + high) / 2
