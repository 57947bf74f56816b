"""geval.calibration: folds never split a group, held-out predictions only, known fits."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from geval.analysis.calibration import (
    ALPHAS,
    CalibrationError,
    calibrate_scores,
    combine_aspects,
    cross_validated,
    fit_predict,
    group_folds,
    probability_features,
)
from geval.data.items import make_item


def test_group_folds_keep_groups_together_and_balance():
    groups = np.repeat([f"g{i}" for i in range(11)], 3)
    folds = group_folds(groups, 5, seed=1)
    for g in np.unique(groups):
        assert len(set(folds[groups == g])) == 1
    sizes = np.bincount(folds) // 3
    assert sorted(sizes) == [2, 2, 2, 2, 3]
    assert (group_folds(groups, 5, seed=1) == folds).all()
    with pytest.raises(CalibrationError, match="3 groups cannot be split into 5 folds; use fewer folds"):
        group_folds(["a", "b", "c"], 5)


@pytest.mark.parametrize("x_train, y_train, x_test, expected", [
    ([1, 2, 3, 4], [1, 3, 2, 4], [1, 2.5, 4, 9], [1, 2.5, 4, 4]),  # pool 3,2 -> 2.5; flat beyond the ends
    ([1, 1, 2, 2], [1, 3, 2, 2], [1, 1.5, 2], [2, 2, 2]),         # ties in x share one fitted value
    ([3, 3, 3], [1, 2, 3], [0, 5], [2, 2]),                       # a single distinct x: its mean
])
def test_isotonic_known_answers(x_train, y_train, x_test, expected):
    got = fit_predict("isotonic", np.array(x_train, float), np.array(y_train, float), np.array(x_test, float))
    assert got == pytest.approx(expected)


def test_linear_recovers_a_linear_rule():
    rng = np.random.default_rng(0)
    x = rng.random((50, 2))
    y = 2 * x[:, 0] - x[:, 1] + 0.5
    assert fit_predict("linear", x, y, np.array([[1.0, 1.0]]))[0] == pytest.approx(1.5, abs=1e-3)
    with pytest.raises(CalibrationError, match="isotonic calibration takes one score column"):
        fit_predict("isotonic", x, y, x)
    with pytest.raises(CalibrationError, match="calibration method 'magic' is unknown; use one of isotonic, linear"):
        fit_predict("magic", x, y, x)


def test_ridge_picks_its_penalty_by_an_inner_group_cross_validation():
    """A clean linear signal gets the smallest penalty (the rule is recovered); pure noise the largest
    (predictions shrink to the training mean); without groups there is nothing to choose by."""
    rng = np.random.default_rng(0)
    x = rng.random((80, 3))
    groups = np.repeat([f"g{n}" for n in range(20)], 4)
    y = 2 * x[:, 0] - x[:, 1] + 0.5
    assert fit_predict("ridge", x, y, np.array([[1.0, 1.0, 0.0]]), groups)[0] == pytest.approx(1.5, abs=0.05)
    noise = rng.random(80)
    predicted = fit_predict("ridge", x, noise, x[:5], groups)
    assert np.ptp(predicted) < 0.01 and predicted.mean() == pytest.approx(noise.mean(), abs=0.01)
    assert max(ALPHAS) >= 1000
    with pytest.raises(CalibrationError, match="ridge needs the training rows' groups"):
        fit_predict("ridge", x, y, x)


def test_no_item_is_predicted_with_its_own_groups_labels():
    """A group whose labels are all 100 is predicted from the others only, so never near 100."""
    index = [f"i{n}" for n in range(40)]
    groups = pd.Series([f"g{n // 4}" for n in range(40)], index=index)
    judge = pd.Series(np.tile([1.0, 2.0, 3.0, 4.0], 10), index=index)
    human = judge.copy()
    human[groups == "g3"] = 100.0
    for method in ("isotonic", "ridge"):
        held_out = cross_validated(judge, human, groups, method, folds=10)
        assert held_out[groups == "g3"].max() < 20
        assert held_out[groups != "g3"].notna().all()


def test_missing_values_stay_missing_and_too_few_labels_is_an_error():
    index = [f"i{n}" for n in range(20)]
    groups = pd.Series([f"g{n // 2}" for n in range(20)], index=index)
    judge = pd.Series(np.arange(20.0), index=index)
    judge.iloc[3] = np.nan
    held_out = cross_validated(judge, judge * 2, groups, "isotonic", folds=5)
    assert np.isnan(held_out.iloc[3]) and held_out.drop(index[3]).notna().all()
    with pytest.raises(CalibrationError, match="only 9 items have both a judge and a human score; 5-fold "
                                               "calibration needs at least 10"):
        cross_validated(judge.iloc[:10], judge.iloc[:10], groups, folds=5)


def usr_items(n_groups=12, per=5, seed=0):
    rng = np.random.default_rng(seed)
    items, rows = [], {}
    for g in range(n_groups):
        for r in range(per):
            natural, engaging = rng.integers(1, 4, 3).astype(float), rng.integers(1, 4, 3).astype(float)
            overall = tuple(np.clip(np.round(natural + engaging - 1), 1, 5))
            item = make_item("tc", "turn", [], f"r{g}-{r}", group=f"g{g}",
                             human={"Natural": tuple(natural), "Engaging": tuple(engaging), "Overall": overall})
            items.append(item)
            rows[item.id] = {"naturalness": natural.mean() ** 2 + rng.normal(0, 0.3),
                             "engagingness": engaging.mean() + rng.normal(0, 0.3)}
    return items, pd.DataFrame.from_dict(rows, orient="index")


def test_calibrate_scores_and_combine_aspects_on_usr_like_items():
    from scipy import stats

    items, scores = usr_items()
    calibrated = calibrate_scores(scores, items, {"naturalness": "Natural", "engagingness": "Engaging"})
    assert list(calibrated.columns) == ["naturalness", "engagingness"] and calibrated.notna().all().all()
    natural = [i.human_mean("Natural") for i in items]
    assert stats.spearmanr(calibrated["naturalness"], natural).statistic > 0.5
    combined = combine_aspects(scores, items, "Overall")
    assert combined.name == "learned combination → Overall"
    assert stats.pearsonr(combined, [i.human_mean("Overall") for i in items]).statistic > 0.5
    with pytest.raises(CalibrationError, match="no human 'Fluent' scores"):
        combine_aspects(scores, items, "Fluent")


def test_probability_features():
    frame = pd.DataFrame({"item_id": ["a", "b"], "status": ["ok", "unscored"],
                          "distribution": [json.dumps({"1": 0.2, "3": 0.8}), "{}"]})
    features = probability_features(frame, [1, 2, 3])
    assert list(features.columns) == ["p1", "p2"]
    assert features.loc["a"].tolist() == [0.2, 0.0] and features.loc["b"].isna().all()


def _with_labels(item, change):
    return make_item(item.dataset, item.level, list(item.context), item.response, item.grounding, item.system,
                     item.group, {aspect: tuple(change(s) for s in scores) for aspect, scores in item.human.items()})


def test_a_folds_learned_combination_never_depends_on_its_own_labels():
    from dataclasses import replace

    items, scores = usr_items()
    humans = {"naturalness": "Natural", "engagingness": "Engaging"}
    combined = combine_aspects(scores, items, "Overall", humans=humans)
    assert combined.notna().all()
    folds = group_folds([i.group for i in items], 5, 0)
    # every label of fold 0 changed: its calibrations and its combination would move if any step had seen them
    changed = [replace(_with_labels(item, lambda s: 6 - s), id=item.id) if fold == 0 else item
               for item, fold in zip(items, folds)]
    again = combine_aspects(scores, changed, "Overall", humans=humans)
    in_fold = [item.id for item, fold in zip(items, folds) if fold == 0]
    assert again[in_fold].tolist() == pytest.approx(combined[in_fold].tolist(), abs=1e-12)
    assert not np.allclose(again.drop(in_fold), combined.drop(in_fold))  # the other folds did learn from them
    # calibrating every item held out first, then combining, lets fold 0's labels into its own prediction
    leaky = combine_aspects(calibrate_scores(scores, changed, humans), changed, "Overall")
    before = combine_aspects(calibrate_scores(scores, items, humans), items, "Overall")
    assert not np.allclose(leaky[in_fold], before[in_fold])


def test_a_free_column_is_not_shrunk_by_the_ridge():
    """With few labels the ridge picks a strong penalty; a column named free (the judge's own score)
    keeps its full weight, so that the fit stays a linear reading of it instead of the labels' mean."""
    rng = np.random.default_rng(0)
    judge, noise = rng.normal(size=12), rng.normal(size=(12, 3))
    x = np.column_stack([judge, noise])
    y = 2 * judge + 1
    groups = np.array([f"g{i // 2}" for i in range(12)])
    test = np.column_stack([np.array([-1.0, 0.0, 1.0]), np.zeros((3, 3))])
    free = fit_predict("ridge", x, y, test, groups, free=[0])
    shrunk = fit_predict("ridge", x, y, test, groups)
    assert np.allclose(free, 2 * test[:, 0] + 1, atol=0.05)
    assert np.ptp(shrunk) < np.ptp(free)


def test_a_judge_that_gives_every_item_one_score_is_a_free_column_of_zeros_not_a_crash():
    """A judge imported with 2 for every item: the free column the ridge does not shrink was all zeros once
    standardized, and solving for its weight raised "Singular matrix" on the Agreement page."""
    rng = np.random.default_rng(0)
    x = np.column_stack([np.full(12, 2.0), rng.normal(size=12)])
    y = rng.normal(size=12)
    groups = np.array([f"g{i // 2}" for i in range(12)])
    predicted = fit_predict("ridge", x, y, x[:3], groups, free=[0])
    assert np.isfinite(predicted).all()
