"""The coverage of every 95% interval of a pairwise judge (geval.analysis.pairwise), simulated on grouped
and skewed data: a thousand datasets of 10, 14, 30 and 42 questions of 1 to 6 pairs each (uneven, as
MT-Bench's), through the engine's own kernels (`position_counts`, `share_parts`, the agreement
FIGURES on confusion matrices summed per question, the jackknife's t-interval); the truth is the
statistic on 40,000 questions of the same process. `python -m pytest tests/test_pairwise_stats.py -s`
prints the shares missed (docs/statistics.md has them).

Each question has its own mix of true preferences (A .45, B .35, tie .20 on average), its own judge
skill (right with probability about .55) and position bias (else the first position with probability
about .7); two annotators are right with a probability that varies by question, else answer from the
skewed marginal."""

from __future__ import annotations

import numpy as np
import pytest

from geval.analysis.grouped import t_interval
from geval.analysis.kappa import confusions, with_each_left_out
from geval.analysis.pairwise import FIGURES, SHARE_TRANSFORM, WIN, position_counts, share_parts
from geval.judging.pairwise import FIRST, SECOND, TIE, labels_of

SIZES = (10, 14, 30, 42)
DATASETS = 1000
BIG = 40_000
MARGINAL = np.array([0.45, 0.35, 0.20])
SWAP = np.array([SECOND, FIRST, TIE])  # a label on the pair's sides <-> on the positions of order 2
#: Shares whose intervals are conservative (they miss less than 2.5% at 10-30 questions): a rare one on the logit,
#: withheld where a dataset's share is 0 or 1 (the second position both times, about 6% of the pairs), and the
#: mean accuracy without ties over the annotators (about .80, on the logit: .024 at 10 questions).
CONSERVATIVE = ("both_second", "accuracy without ties")
#: The first-position preference counts the answers that name a side: at 10 questions, one whose every answer
#: is a tie leaves 9 that count, too few for an interval (said so), in about 16% of the datasets.
FEWER = {"first"}


def _codes(n_groups: int) -> np.ndarray:
    """Questions of 1 to 6 pairs, unevenly."""
    return np.repeat(np.arange(n_groups), 1 + (np.arange(n_groups) * 7) % 6)


def _draw(count: int, n_groups: int, seed: int) -> dict[str, np.ndarray]:
    """`count` datasets: each pair's truth, the judge's answer in each order (on the positions asked),
    and two annotators' labels; (count, pairs) each."""
    rng = np.random.default_rng(seed)
    codes = _codes(n_groups)
    rows = len(codes)
    mix = rng.dirichlet(5 * MARGINAL, size=(count, n_groups))[:, codes]
    truth = (rng.random((count, rows, 1)) > np.cumsum(mix, axis=-1)).sum(axis=-1)
    skill = np.clip(0.55 + rng.normal(0, 0.15, (count, n_groups)), 0, 1)[:, codes]
    bias = np.clip(0.7 + rng.normal(0, 0.1, (count, n_groups)), 0, 1)[:, codes]

    def answer(right: np.ndarray) -> np.ndarray:
        skilled = rng.random((count, rows)) < skill
        draw = rng.random((count, rows))
        guess = np.where(draw < bias, FIRST, np.where(draw < bias + (1 - bias) * 0.8, SECOND, TIE))
        return np.where(skilled, right, guess)

    people = []
    for _ in range(2):
        sure = rng.random((count, rows)) < np.clip(0.7 + rng.normal(0, 0.15, (count, n_groups)), 0, 1)[:, codes]
        people.append(np.where(sure, truth, rng.choice(3, size=(count, rows), p=MARGINAL)))
    return {"first": answer(truth), "second": answer(SWAP[truth]), "people": np.stack(people, axis=1),
            "codes": codes}


def _statistics(draw: dict[str, np.ndarray], n_groups: int) -> dict[str, tuple]:
    """Every figure of the module for each dataset: (value, leave-one-out, present, transform)."""
    codes, first, second = draw["codes"], draw["first"], draw["second"]
    onehot = np.eye(3)
    judged = labels_of((onehot[first] + onehot[SWAP[second]]) / 2)
    found = {name: (*share_parts(hits, counted, codes, n_groups), SHARE_TRANSFORM)
             for name, (hits, counted) in position_counts(first, second, judged).items()}
    everywhere = np.ones(judged.shape, bool)
    against = [confusions(draw["people"][:, k], judged, everywhere, codes, n_groups, 3) for k in range(2)]
    between = confusions(draw["people"][:, 0], draw["people"][:, 1], everywhere, codes, n_groups, 3)
    for name, (statistic, transform, _, counted) in FIGURES.items():  # counted: the pairs an accuracy reads
        items = (lambda c: counted(c) if counted else None)  # noqa: E731
        found[f"{name}, judge against an annotator"] = (*with_each_left_out(against[0], statistic), transform,
                                                        items(against[0]))
        both = [with_each_left_out(confusion, statistic) for confusion in against]  # as `_mean_row` averages
        found[f"{name}, judge against an annotator, mean of two"] = (  # a mean of accuracies: on the logit
            (both[0][0] + both[1][0]) / 2, (both[0][1] + both[1][1]) / 2, both[0][2] | both[1][2],
            SHARE_TRANSFORM if counted else transform)
        found[f"{name}, two annotators"] = (*with_each_left_out(between, statistic), transform, items(between))
    votes = np.select([draw["people"] == s for s in WIN], list(WIN.values())).mean(axis=1)
    ours = np.select([judged == s for s in WIN], list(WIN.values()))
    everyone = np.ones(judged.shape)
    found["win rate of side A's model, judge"] = (*share_parts(ours, everyone, codes, n_groups), SHARE_TRANSFORM)
    found["win rate of side A's model, people"] = (*share_parts(votes, everyone, codes, n_groups), SHARE_TRANSFORM)
    return found


def _missed(n_groups: int, seed: int) -> dict[str, tuple[float, float]]:
    truth = {name: float(np.squeeze(value)) for name, (value, *_) in _statistics(_draw(1, BIG, seed + 1), BIG).items()}
    out = {}
    for name, (value, loo, present, transform, *items) in _statistics(_draw(DATASETS, n_groups, seed),
                                                                      n_groups).items():
        low, high = t_interval(value, loo, present, transform, *items)
        given = np.isfinite(low)
        hit = (np.maximum(low[given], -1) <= truth[name]) & (truth[name] <= high[given])
        out[name] = (float(np.mean(~hit)), float(given.mean()))
    return out


@pytest.mark.parametrize("n_groups", SIZES)
def test_every_interval_misses_the_truth_about_one_time_in_twenty(n_groups):
    missed = _missed(n_groups, seed=n_groups)
    for name, (share, given) in missed.items():
        print(f"{name}, {n_groups} questions: {share:.3f} missed ({given:.0%} with an interval)")
    for name, (share, given) in missed.items():
        if name.startswith(CONSERVATIVE):
            assert share <= 0.075 and given > 0.25, (name, n_groups, share, given)
        else:
            assert 0.025 <= share <= 0.075 and given > (0.8 if name in FEWER else 0.95), (name, n_groups, share, given)
