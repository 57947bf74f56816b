"""The coverage of every 95% interval of "how the judge errs" (geval.analysis.label_errors,
score_errors), simulated on grouped and skewed data: a thousand datasets of 10, 14 and 30 groups of 6
items at once, through the engine's own kernels (per-group sums, the jackknife's t-interval); the
truth is the statistic on 40,000 groups of the same process. `python -m pytest
tests/test_judge_errors_stats.py -s` prints the shares missed (docs/statistics.md has them).

Labels: three annotators and a judge drawn alike (each right with a probability that varies by group,
else answering from the skewed marginal .65 / .25 / .10; each group with its own mix of true labels),
so that the judge − people difference is 0 in truth. Ordinal: a 1-5 scale skewed to the top. Scores:
the people's mean of three 1-3 scores with an annotator's offset per dialogue, a judge on 1-3 that is
harsh, spreads less than people, crowds the middle and follows response length (lognormal, shared in
part by a dialogue), with skewed (gamma) noise."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from geval.analysis.correlation import Resamples, correlate, interval, item_bootstrap
from geval.analysis.grouped import group_sums, t_interval, without_each
from geval.analysis.kappa import (
    accuracy_of,
    confusions,
    constant_shares,
    disagreement_weights,
    fleiss_of,
    fleiss_parts,
    kappa_of,
    per_label,
    with_each_left_out,
)
from geval.analysis.label_errors import KAPPA_TRANSFORM, SHARE_TRANSFORM
from geval.analysis.score_errors import (
    length_against_people,
    limits_with_intervals,
    share_parts,
    shares_of,
    spread_ratio,
)

SIZES = (10, 14, 30)
PER_GROUP = 6
DATASETS = 1000
BIG = 40_000
#: Shares (each label's precision, recall and F1, a constant's share): their logit intervals are
#: conservative at 10-14 groups (they miss less than 5%), and withheld where a share is 0 or 1, often for
#: a rare label (about 10% of the items: 6 in a dataset of 10 groups).
SHARES = {f"{what} of the {label} label" for what in ("precision", "recall", "F1") for label in ("common", "rare")} \
    | {f"a constant's share, the {label} label" for label in ("common", "rare")}


def _codes(n_groups: int) -> np.ndarray:
    return np.repeat(np.arange(n_groups), PER_GROUP)


def _missed(found: dict[str, tuple], truth: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Per statistic: the share of datasets whose interval misses the true value, and the share that got one."""
    out = {}
    for name, (value, loo, present, transform, *items) in found.items():  # items: a share's, read by Wilson
        low, high = t_interval(value, loo, present, transform, *items)
        given = np.isfinite(low)
        out[name] = (float(np.mean(~((low[given] <= truth[name]) & (truth[name] <= high[given])))), float(given.mean()))
    return out


def _check(missed: dict[str, tuple[float, float]], n_groups: int, conservative: set[str] = frozenset(),
           liberal: dict[str, float] | None = None) -> None:
    """Each interval misses the truth in 2.5-7.5% of the datasets (Monte Carlo sd about .007 at 1000), and
    is given in 95% of them; one `conservative` may miss less, and be withheld in up to 75% (a rare label);
    one `liberal` may miss up to the share given (docs/statistics.md says which, and by how much)."""
    for name, (share, given) in missed.items():
        print(f"{name}, {n_groups} groups: {share:.3f} missed ({given:.0%} with an interval)")
    for name, (share, given) in missed.items():
        if name in conservative:
            assert share <= 0.075 and given > 0.25, (name, share, given)
        else:
            assert 0.025 <= share <= (liberal or {}).get(name, 0.075) and given > 0.95, (name, share, given)


# --- labels -----------------------------------------------------------------------------------------

MARGINAL = np.array([0.65, 0.25, 0.10])


def _raters(count: int, n_groups: int, seed: int, raters: int = 4) -> np.ndarray:
    """Labels 0-2 of `raters` raters drawn alike (the last is the judge): (count, raters, items)."""
    rng = np.random.default_rng(seed)
    mix = rng.dirichlet(5 * MARGINAL, size=(count, n_groups))
    draw = rng.random((count, n_groups, PER_GROUP, 1))
    truth = (draw > np.cumsum(mix, axis=-1)[:, :, None, :]).sum(axis=-1)
    right = rng.random((count, raters, n_groups, PER_GROUP)) < np.clip(
        0.7 + rng.normal(0, 0.15, (count, raters, n_groups, 1)), 0, 1)
    wrong = rng.choice(len(MARGINAL), size=(count, raters, n_groups, PER_GROUP), p=MARGINAL)
    return np.where(right, truth[:, None], wrong).reshape(count, raters, -1)


def _majority(people: np.ndarray) -> np.ndarray:
    """The majority of three raters' labels (count, 3, items), NaN when all three differ."""
    a, b, c = people[:, 0], people[:, 1], people[:, 2]
    found = np.where((a == b) | (a == c), a, np.where(b == c, b, -1)).astype(float)
    return np.where(found < 0, np.nan, found)


def _label_statistics(labels: np.ndarray, n_groups: int, weighting: str = "none") -> dict[str, tuple]:
    """Every statistic of `label_errors`, for each dataset: (value, leave-one-out, present, transform);
    3 categories, or with `weighting` "quadratic" the 5 points of a scale."""
    k = 3 if weighting == "none" else 5
    codes, weights = _codes(n_groups), disagreement_weights(k, weighting)
    people, judge = labels[:, :3], labels[:, 3]
    majority = _majority(people)
    confusion = confusions(majority, judge, np.isfinite(majority), codes, n_groups, k)

    def kappa(table):
        return kappa_of(table, weights)

    found = {"kappa against the majority": (*with_each_left_out(confusion, kappa), KAPPA_TRANSFORM)}
    everywhere = np.ones(majority.shape, bool)
    pairs = [with_each_left_out(confusions(people[:, a], people[:, b], everywhere, codes, n_groups, k), kappa)
             for a, b in itertools.combinations(range(3), 2)]
    against = [with_each_left_out(confusions(people[:, a], judge, everywhere, codes, n_groups, k), kappa)
               for a in range(3)]
    people_kappa = [np.mean([p[i] for p in pairs], axis=0) for i in (0, 1)]
    judge_kappa = [np.mean([p[i] for p in against], axis=0) for i in (0, 1)]
    found["people's pairwise kappa"] = (*people_kappa, None, KAPPA_TRANSFORM)
    found["the judge − people"] = (judge_kappa[0] - people_kappa[0], judge_kappa[1] - people_kappa[1], None, "none")
    if weighting == "quadratic":
        return found
    accuracy = with_each_left_out(confusion, accuracy_of)
    found["accuracy"] = (*accuracy, "wilson", confusion.sum(axis=(-3, -2, -1)))  # as label_errors reads it
    for name in ("precision", "recall", "f1"):
        value, loo, present = with_each_left_out(confusion, lambda c, name=name: per_label(c)[name])
        shown = "F1" if name == "f1" else name
        found[f"{shown} of the common label"] = (value[..., 0], loo[..., 0], present, SHARE_TRANSFORM)
        found[f"{shown} of the rare label"] = (value[..., 2], loo[..., 2], present, SHARE_TRANSFORM)
    value, loo, present = with_each_left_out(confusion, constant_shares)
    found["a constant's share, the common label"] = (value[..., 0], loo[..., 0], present, SHARE_TRANSFORM)
    found["a constant's share, the rare label"] = (value[..., 2], loo[..., 2], present, SHARE_TRANSFORM)
    found["the judge's lead over the constant"] = (accuracy[0] - value[..., 0], accuracy[1] - loo[..., 0], present,
                                                   "none")
    counts = np.stack([(people == c).sum(axis=1) for c in range(k)], axis=-1)
    parts = fleiss_parts(counts, codes, n_groups)
    total, loo = without_each(parts, axis=-2)
    found["Fleiss' kappa"] = (fleiss_of(total), fleiss_of(loo), None, KAPPA_TRANSFORM)
    return found


@functools.lru_cache(maxsize=2)
def _label_truth(kind: str) -> dict[str, float]:
    labels = _raters(1, BIG, 999) if kind == "nominal" else _ordinal(1, BIG, 999)
    truth = {name: float(np.ravel(value)[0]) for name, (value, *_) in
             _label_statistics(labels, BIG, "none" if kind == "nominal" else "quadratic").items()}
    return truth | {"the judge − people": 0.0}  # the judge is drawn as the annotators are


@pytest.mark.simulation
@pytest.mark.parametrize("n_groups", SIZES)
def test_the_label_intervals_hold_the_true_value_in_95_percent_of_datasets(n_groups):
    """Kappa, the people's pairwise kappa and Fleiss' kappa, accuracy, each label's
    precision, recall and F1 and a constant's share (on the logit), the judge's lead over the constant,
    and the judge − people difference (a judge drawn as the annotators are: its level)."""
    found = _label_statistics(_raters(DATASETS, n_groups, seed=n_groups), n_groups)
    _check(_missed(found, _label_truth("nominal")), n_groups, SHARES)


def _ordinal(count: int, n_groups: int, seed: int, raters: int = 4) -> np.ndarray:
    """1-5 scores, skewed to the top, as label indexes 0-4 of `raters` raters drawn alike (the last the
    judge): a quality per item (shared in part by its group) and each rater's offset per group."""
    rng = np.random.default_rng(seed)
    quality = 4.2 - rng.gamma(2.0, 0.5, (count, 1, n_groups, 1)) + rng.normal(0, 0.6, (count, 1, n_groups, PER_GROUP))
    offset = rng.normal(0, 0.4, (count, raters, n_groups, 1))
    scores = np.clip(np.round(quality + offset + rng.normal(0, 0.6, (count, raters, n_groups, PER_GROUP))), 1, 5)
    return (scores - 1).astype(int).reshape(count, raters, -1)


@pytest.mark.simulation
@pytest.mark.parametrize("n_groups", SIZES)
def test_the_weighted_kappas_intervals_hold_the_true_value_on_a_skewed_ordinal_scale(n_groups):
    """The people's mean pairwise weighted kappa is somewhat liberal at 10-14 groups on this scale (it missed
    .083 / .079 / .065 over four seeds of 1000 datasets; Fisher's z and log(1 − kappa) did worse)."""
    found = _label_statistics(_ordinal(DATASETS, n_groups, seed=50 + n_groups), n_groups, "quadratic")
    _check(_missed(found, _label_truth("ordinal")), n_groups, liberal={"people's pairwise kappa": 0.10})


# --- scores -----------------------------------------------------------------------------------------

POINTS = np.array([1.0, 2.0, 3.0])


def _scores(count: int, n_groups: int, seed: int, raters: int = 3):
    """The judge's 1-3 scores (count, items), the people's (count, raters, items) and the words of each response."""
    rng = np.random.default_rng(seed)
    group = rng.normal(size=(count, n_groups, 1))
    latent = group + rng.normal(size=(count, n_groups, PER_GROUP))
    offset = rng.normal(0, 0.6, (count, raters, n_groups, 1))
    people = np.clip(np.round(2 + 0.8 * latent[:, None] + offset + rng.normal(0, 0.7, (count, raters, n_groups,
                                                                                        PER_GROUP))), 1, 3)
    log_words = 4 + 0.5 * rng.normal(size=(count, n_groups, 1)) + 0.6 * rng.normal(size=(count, n_groups, PER_GROUP))
    judge = (1.6 + 0.35 * latent + 0.3 * (log_words - 4) + rng.normal(0, 0.3, (count, n_groups, 1))
             + rng.gamma(2.0, 0.2, (count, n_groups, PER_GROUP)) - 0.4)
    flat = lambda v: v.reshape(*v.shape[:-2], -1)  # noqa: E731
    return flat(np.clip(judge, 1, 3)), flat(people), flat(np.round(np.exp(log_words)))


def _score_statistics(judge: np.ndarray, people: np.ndarray, n_groups: int) -> dict[str, tuple]:
    """Every interval of `score_errors` but the correlations: (value, leave-one-out, present, transform)."""
    codes = _codes(n_groups)
    difference = judge - people.mean(axis=1)
    sums = np.stack([group_sums(c, codes, n_groups) for c in (np.ones_like(difference), difference,
                                                                difference ** 2)], axis=-1)
    total, loo = without_each(sums, axis=-2)
    found = {"offset": (total[..., 1] / total[..., 0], loo[..., 1] / loo[..., 0], None, "none")}
    spreads = [np.stack([group_sums(c, codes, n_groups) for c in columns], axis=-1) for columns in (
        (np.ones_like(judge), judge, judge ** 2),
        (np.full(judge.shape, float(people.shape[1])), people.sum(axis=1), (people ** 2).sum(axis=1)))]
    (judge_total, judge_loo), (people_total, people_loo) = (without_each(s, axis=-2) for s in spreads)
    found["spread (the judge's sd over a person's)"] = (spread_ratio(judge_total, people_total),
                                                        spread_ratio(judge_loo, people_loo), None, "log")
    judged = without_each(share_parts(judge, np.ones_like(judge), POINTS, codes, n_groups), axis=-2)
    given = without_each(sum(share_parts(people[:, a], np.ones_like(judge), POINTS, codes, n_groups)
                             for a in range(people.shape[1])), axis=-2)
    (jt, jl), (pt, pl) = ([shares_of(part) for part in pair] for pair in (judged, given))
    for p, point in enumerate(POINTS):
        found[f"the judge's share at {point:g}"] = (jt[..., p], jl[..., p], None, "logit")
        found[f"the people's share at {point:g}"] = (pt[..., p], pl[..., p], None, "logit")
        found[f"judge − people at {point:g}"] = (jt[..., p] - pt[..., p], jl[..., p] - pl[..., p], None, "none")
    return found


def _limits(judge: np.ndarray, people: np.ndarray, n_groups: int) -> dict[str, tuple]:
    codes, difference = _codes(n_groups), judge - people.mean(axis=1)
    sums = np.stack([group_sums(c, codes, n_groups) for c in (np.ones_like(difference), difference,
                                                                difference ** 2)], axis=-1)
    return limits_with_intervals(sums)


@functools.lru_cache(maxsize=1)
def _score_truth() -> dict[str, float]:
    judge, people, _ = _scores(1, BIG, 4242)
    truth = {name: float(np.ravel(value)[0]) for name, (value, *_) in _score_statistics(judge, people, BIG).items()}
    return truth | {f"{name} limit of agreement": float(np.ravel(found[0])[0])
                    for name, found in _limits(judge, people, BIG).items()}


@pytest.mark.simulation
@pytest.mark.parametrize("n_groups", SIZES)
def test_the_offset_spread_scale_use_and_limits_of_agreement_hold_the_true_value(n_groups):
    """The offset, the spread ratio (on the log scale), each point's share (on the logit) and the
    difference of shares, and the Bland-Altman limits (MOVER: the jackknife of the limits themselves
    missed up to .10, the notes in score_errors say so)."""
    judge, people, _ = _scores(DATASETS, n_groups, seed=n_groups)
    missed = _missed(_score_statistics(judge, people, n_groups), _score_truth())
    truth = _score_truth()
    for name, (value, low, high) in _limits(judge, people, n_groups).items():
        key = f"{name} limit of agreement"
        given = np.isfinite(low)
        missed[key] = (float(np.mean(~((low[given] <= truth[key]) & (truth[key] <= high[given])))), float(given.mean()))
    _check(missed, n_groups, {"the judge's share at 3"},  # about 10% of the judge's scores: conservative
           liberal={"spread (the judge's sd over a person's)": 0.085})  # .065 / .069 / .059 over four seeds


# --- length: Spearman of the error with the words, for a thousand datasets at once ------------------------


def _leave_one_out_ranks(x: np.ndarray, codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks of each dataset's rows (count, items), over all rows, and among the rows kept when
    each group is left out (count, groups, items; NaN on the rows left out), from one sort per dataset:
    a row's rank among those kept is its rank less the rows of the group left out below it (half those tied)."""
    count, n = x.shape
    order = np.argsort(x, axis=-1, kind="stable")
    values = np.take_along_axis(x, order, axis=-1)
    position = np.arange(n)
    start = np.ones((count, n), bool)
    start[:, 1:] = values[:, 1:] != values[:, :-1]
    end = np.ones((count, n), bool)
    end[:, :-1] = start[:, 1:]
    first = np.maximum.accumulate(np.where(start, position, 0), axis=-1)
    last = np.minimum.accumulate(np.where(end, position, n - 1)[:, ::-1], axis=-1)[:, ::-1]
    inverse = np.argsort(order, axis=-1)
    first, last = np.take_along_axis(first, inverse, -1), np.take_along_axis(last, inverse, -1)
    member = codes[order][:, None, :] == np.arange(n_groups)[None, :, None]
    before = np.zeros((count, n_groups, n + 1), np.int32)
    np.cumsum(member, axis=-1, out=before[..., 1:])
    below = np.take_along_axis(before, np.broadcast_to(first[:, None, :], (count, n_groups, n)), -1)
    upto = np.take_along_axis(before, np.broadcast_to(last[:, None, :] + 1, (count, n_groups, n)), -1)
    kept = (first[:, None, :] - below) + ((last - first + 1)[:, None, :] - (upto - below) + 1) / 2.0
    left_out = (codes[None, :] == np.arange(n_groups)[:, None])[None]
    return first + (last - first + 2) / 2.0, np.where(left_out, np.nan, kept)


def _pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson of each row of a and b (last axis), NaN cells left out."""
    both = np.isfinite(a) & np.isfinite(b)
    da, db = (np.where(both, v, 0.0) for v in (a, b))
    n = both.sum(axis=-1, keepdims=True)
    da, db = (np.where(both, v - v.sum(axis=-1, keepdims=True) / n, 0.0) for v in (da, db))
    return (da * db).sum(axis=-1) / np.sqrt((da * da).sum(axis=-1) * (db * db).sum(axis=-1))


def _spearman(x: np.ndarray, words_ranks: tuple, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    full, kept = _leave_one_out_ranks(x, _codes(n_groups), n_groups)
    return _pearson(full, words_ranks[0]), _pearson(kept, words_ranks[1])


def _length_statistics(judge: np.ndarray, people: np.ndarray, words: np.ndarray, n_groups: int) -> dict[str, tuple]:
    """`score_errors`' length readings: the judge's error against the people's mean, each annotator's
    against the others, and the judge − a person against the same others (the mean over annotators)."""
    ranks = _leave_one_out_ranks(words, _codes(n_groups), n_groups)
    found = {"length: the judge's error": (*_spearman(judge - people.mean(axis=1), ranks, n_groups), None, "fisher")}
    versus = []
    for k in range(people.shape[1]):
        others = np.delete(people, k, axis=1).mean(axis=1)
        mine, machine = _spearman(people[:, k] - others, ranks, n_groups), _spearman(judge - others, ranks, n_groups)
        found[f"length: annotator {k + 1}'s error"] = (*mine, None, "fisher")
        versus.append((machine[0] - mine[0], machine[1] - mine[1]))
    found["length: the judge − a person"] = (*(np.mean([v[i] for v in versus], axis=0) for i in (0, 1)), None, "none")
    return found


@functools.lru_cache(maxsize=1)
def _length_truth() -> dict[str, float]:
    judge, people, words = (v[0] for v in _scores(1, BIG, 4242))
    found, versus = {}, []
    for k in range(len(people)):
        others = np.delete(people, k, axis=0).mean(axis=0)
        found[f"length: annotator {k + 1}'s error"] = correlate("spearman", people[k] - others, words)
        versus.append(correlate("spearman", judge - others, words) - found[f"length: annotator {k + 1}'s error"])
    return {"length: the judge's error": correlate("spearman", judge - people.mean(axis=0), words), **found,
            "length: the judge − a person": float(np.mean(versus))}


def test_the_vectorized_length_readings_equal_the_engines():
    judge, people, words = _scores(3, 12, seed=7)
    found = _length_statistics(judge, people, words, 12)
    groups = np.array([f"g{c:02d}" for c in _codes(12)])
    resamples = Resamples.leave_one_out(groups)
    for d in range(3):
        error = judge[d] - people[d].mean(axis=0)
        value, loo, *_ = found["length: the judge's error"]
        assert value[d] == pytest.approx(correlate("spearman", error, words[d]), abs=1e-12)
        assert loo[d] == pytest.approx(item_bootstrap(error, words[d], resamples, ("spearman",))["spearman"], abs=1e-12)
        each, paired = length_against_people(judge[d], people[d], ["a", "b", "c"], words[d], groups)
        for name, engine, transform in (*((f"length: annotator {k + 1}'s error", e, "fisher")
                                          for k, e in enumerate(each["spearman"])),
                                        ("length: the judge − a person", paired, "none")):
            value, loo, *_ = found[name]
            assert value[d] == pytest.approx(engine.value, abs=1e-12)
            low, high = t_interval(value[d], loo[d], None, transform)
            assert (float(low), float(high)) == pytest.approx((engine.low, engine.high), abs=1e-12)
            assert (engine.low, engine.high) == pytest.approx(
                interval(engine.value, loo[d], resamples, correlation=transform == "fisher"), abs=1e-12)


@pytest.mark.simulation
@pytest.mark.parametrize("n_groups", SIZES)
def test_the_length_intervals_hold_the_true_value_in_95_percent_of_datasets(n_groups):
    judge, people, words = _scores(DATASETS, n_groups, seed=300 + n_groups)
    _check(_missed(_length_statistics(judge, people, words, n_groups), _length_truth()), n_groups)


def test_spearman_from_ranks_is_scipys_and_codes_renumbered_are_group_codes():
    """The large-sample Spearman of `correlation_with_each_left_out` (ranked once) is `correlate`'s to
    the bit, and a subset's renumbered codes are `group_codes` of its groups."""
    from geval.analysis.correlation import correlate
    from scipy import stats

    from geval.analysis.grouped import group_codes, renumbered, spearman_ranked

    rng = np.random.default_rng(3)
    x = rng.integers(0, 30, 5000) + rng.uniform(size=5000)
    y = rng.integers(0, 5, 5000) - 0.3 * x
    assert spearman_ranked(x, y)[0] == correlate("spearman", x, y)
    assert spearman_ranked(x, y, stats.rankdata(y))[0] == correlate("spearman", x, y)
    groups = np.array([f"g{i}" for i in rng.integers(0, 700, 5000)], dtype=object)
    every, count = group_codes(groups)
    subset = rng.uniform(size=5000) < 0.3
    codes, held = renumbered(every[subset], count)
    expected, expected_held = group_codes(groups[subset])
    assert held == expected_held and np.array_equal(codes, expected)
