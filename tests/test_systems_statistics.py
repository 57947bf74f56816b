"""The systems' statistics (issue 42), simulated from SummEval where the experts scored every item:
the intervals the app gives hold every single system's mean where the t with the prior variance does
not, narrower than betting; what a judge is worth follows the variance it removes (its Pearson within
systems), a constant exactly nothing; the ranks' family-wise error on the real systems and on a null of
equal systems (marked `simulation`: small draws here, bench/systems_coverage.py the full tables)."""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import geval
from geval.decisions import t_intervals
from geval.decisions.systems import means, sampling_weights
from geval.decisions.systems_coverage import arrays, simulate, simulate_pairs


@pytest.fixture(scope="module")
def summeval(shared_file):
    """aspect -> the experts' means (16 x 100, each system's documents in the same order), the six LLMs'
    scores (16 x 100 x 6) and their names."""
    shared_file("summeval.json")
    llms = json.loads(shared_file("alttest/summeval/llm_annotations.json").read_text())
    items = geval.load_dataset("summeval").items

    @cache
    def read(aspect: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        judges = {name: {i.id: values[f"{i.source_id}__{aspect}"] for i in items} for name, values in llms.items()}
        scores, predictors, _ = arrays(items, aspect, judges)
        return scores, predictors, list(llms)

    return read


def _gpt4o(summeval, aspect: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    scores, predictors, names = summeval(aspect)
    return scores, predictors[:, :, [names.index("gpt-4o")]], predictors.std(2)


def test_the_padded_t_adds_a_label_at_each_end_of_the_scale():
    values = np.full((1, 20), 5.0)  # twenty 5s of a system's 100 items
    centre, se, df = t_intervals.padded_t(values, np.array([100]), (1, 5))
    padded = np.append(values, [1.0, 5.0])  # they stand for the 80 items not labeled: the centre moves by 80%
    assert centre[0] == pytest.approx(5 + 0.8 * (padded.mean() - 5)) and df[0] == 19
    assert se[0] == pytest.approx(padded.std(ddof=1) * math.sqrt((1 - 20 / 100) / 22))
    low, high = t_intervals.around(centre, se, df, 0.05)
    # a sample piled at 5 keeps a width: a system with one item in ten at 1 (mean 4.60) gives twenty 5s in about
    # one draw in ten, and its mean is not excluded
    assert low[0] < 4.6 < 5 <= high[0]


@pytest.mark.parametrize("k", [5, 20])
def test_the_intervals_given_hold_every_systems_mean_where_the_t_with_the_prior_does_not(summeval, k):
    scores, judge, _ = _gpt4o(summeval, "consistency")
    found = simulate(scores, judge, k, draws=150, seed=k)
    prior = found.others["t with the prior, people only"]
    print(f"k={k}: people {found.people.coverage.min():.3f} ({found.people.width.mean():.2f}), combined "
          f"{found.combined.coverage.min():.3f} ({found.combined.width.mean():.2f}), t with the prior "
          f"{prior.coverage.min():.3f}")
    assert found.method == "padded t"
    # every system: 150 draws, Monte Carlo sd about .018 at .95; the method's own level is higher
    assert found.people.coverage.min() >= 0.94 and found.combined.coverage.min() >= 0.94
    for side in ("people only", "combined"):  # narrower than betting on the same draws (at 5 labels about as wide)
        ratio = found.others[f"padded t, {side}"].width.mean() / found.others[f"betting, {side}"].width.mean()
        assert ratio < (0.85 if k == 20 else 1.0)
    if k == 20:  # most consistency scores are 5: a sample without the rare low ones misses a skewed system
        assert prior.coverage.min() < 0.92


@pytest.mark.parametrize("share, k", [(0.05, 40), (0.08, 40), (0.10, 20), (0.12, 40)])
def test_a_label_at_each_end_holds_a_system_with_a_few_scores_at_the_bottom_where_half_a_label_does_not(share, k):
    """Half a label at each end held every SummEval system, but not a system of 5s with a few 1s: a sample of
    twenty is then all 5s often enough that its interval must reach down past the mean."""
    low = int(round(share * 100))
    scores, judge = np.array([[1.0] * low + [5.0] * (100 - low)]), np.zeros((1, 100, 1))
    one = simulate(scores, judge, k, draws=600, seed=1, betting=False)
    half = simulate(scores, judge, k, draws=600, seed=1, padding=0.5, betting=False)
    assert one.people.coverage[0] >= 0.94 and half.people.coverage[0] < 0.93


def test_the_intervals_hold_in_the_order_where_a_label_buys_most(summeval):
    scores, judge, spread = _gpt4o(summeval, "consistency")
    weights = np.stack([sampling_weights(pd.Series(row)).to_numpy() for row in spread])
    found = simulate(scores, judge, 10, draws=150, seed=3, weights=weights)
    assert found.method == "betting"
    assert found.people.coverage.min() >= 0.94 and found.combined.coverage.min() >= 0.94


def _population(scores: np.ndarray, predictors: np.ndarray, names: list[str]) -> pd.DataFrame:
    """SummEval as `means` reads it: one row per summary, its system, document and every judge's score."""
    systems, size = scores.shape
    frame = pd.DataFrame({"system": np.repeat([f"M{s}" for s in range(systems)], size),
                          "group": np.tile([f"d{n}" for n in range(size)], systems), "human": scores.ravel()},
                         index=[f"M{s}-d{n}" for s in range(systems) for n in range(size)])
    for j, name in enumerate(names):
        frame[name] = predictors[:, :, j].ravel()
    return frame


def _within(scores: np.ndarray, judge: np.ndarray) -> float:
    """The judge's Pearson with the people within a system, averaged over the systems."""
    return float(np.mean([np.corrcoef(judge[s], scores[s])[0, 1] for s in range(len(scores))]))


@pytest.mark.parametrize("aspect", ["coherence", "relevance"])
def test_what_a_judge_is_worth_follows_its_agreement_with_people_within_systems(summeval, aspect):
    """`geval systems summeval --labels 20` headed coherence's judges with mistral (within-system Pearson
    .14) at -2% and ended with gpt-4o (.43) at -19%: Spearman -0.94 with the agreement."""
    scores, predictors, names = summeval(aspect)
    population = _population(scores, predictors, names)
    documents = [f"d{n}" for n in np.random.default_rng(0).permutation(scores.shape[1])[:20]]
    order = [f"M{s}-{d}" for d in documents for s in range(len(scores))]
    found = means(population, order, names, (1, 5), aspect, worth_on=list(population.index))
    worth = found.worth.set_index("judge").loc[names]
    within = [_within(scores, predictors[:, :, j]) for j in range(len(names))]
    print(worth[["saved", "saved_low", "saved_high", "within"]].assign(reference=within))
    assert stats.spearmanr(worth["saved"], within).statistic >= 0.8
    assert (worth["labels"] == 320).all() and (worth["saved"] >= -0.05).all()
    assert (worth["saved_low"] <= worth["saved"]).all() and (worth["saved"] <= worth["saved_high"]).all()
    if aspect == "coherence":  # told apart at 20 documents: fewer than all 16 systems may rank 1-16
        assert ((found.ranking["best_rank"] == 1) & (found.ranking["worst_rank"] == 16)).sum() < 16


def test_a_judge_that_explains_more_within_systems_is_worth_more_and_a_constant_nothing():
    rng = np.random.default_rng(4)
    truth = rng.normal(3, 0.8, (4, 60))
    scores = np.clip(np.round(truth), 1, 5)
    judges = np.stack([truth + rng.normal(0, noise, truth.shape) for noise in (0.3, 1.0, 3.0)] +
                      [np.full(truth.shape, 3.0)], 2)
    names = ["sharp", "fair", "noisy", "constant"]
    population = _population(scores, judges, names)
    order = list(population.sample(frac=0.25, random_state=0).index)
    worth = means(population, order, names, (1, 5)).worth.set_index("judge")
    saved = worth.loc[["sharp", "fair", "noisy"], "saved"]
    assert saved.is_monotonic_decreasing and saved.iloc[-1] > -0.05
    assert worth.loc["sharp", "within"] > worth.loc["fair", "within"] > worth.loc["noisy", "within"]
    assert worth.loc["constant", "saved"] == 0.0 and worth.loc["constant", "effective"] == worth.loc["constant", "labels"]


@pytest.mark.simulation
@pytest.mark.parametrize("aspect", ["coherence", "consistency"])
def test_the_ranks_family_wise_error_stays_below_five_percent_on_real_and_equal_systems(summeval, aspect):
    scores, judge, _ = _gpt4o(summeval, aspect)
    real = simulate_pairs(scores, judge, 20, draws=100, seed=1)
    null = simulate_pairs(scores, judge, 20, draws=100, seed=2, null=True)
    print(f"{aspect}: error {real.fwer:.3f} / null {null.fwer:.3f}, apart {real.apart:.1f} (reference "
          f"{real.reference['apart']:.1f}), worst pair {real.pair.min():.3f}")
    assert real.fwer <= 0.05 and null.fwer <= 0.05 and real.wrong <= 0.05 and null.wrong <= 0.05
    assert real.apart > real.reference["apart"]  # sharper than the t with a difference's prior, Bonferroni
    assert real.pair.min() >= 0.92  # each pair's own interval: 100 draws, Monte Carlo sd about .02
