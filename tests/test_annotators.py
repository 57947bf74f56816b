"""geval.annotators: Krippendorff's alpha and leave-one-annotator-out correlation, by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from geval.analysis.annotators import annotator_agreement, annotator_matrix, krippendorff_alpha, leave_one_out
from geval.data.dataset import resolve_dataset
from geval.data.items import make_item, positional

N_BOOT = 100


def items_from(columns: list[tuple[float, ...]], aspect: str = "Natural", groups: list[str] | None = None):
    return [make_item("a", "turn", [], f"response {i}", group=(groups[i] if groups else f"g{i}"),
                      human={aspect: scores}) for i, scores in enumerate(columns)]


# Two annotators, four items: (1,1), (2,2), (3,3), (3,2).
# Interval: D_o = (1/8) * 2 * (3-2)^2 = 0.25; the 8 values are {1: 2, 2: 3, 3: 3}, so
# D_e = 2 * (2*3*1 + 2*3*4 + 3*3*1) / (8 * 7) = 78 / 56; alpha = 1 - D_o / D_e.
# Ordinal: delta(c, k) = (sum of n_g from c to k - (n_c + n_k) / 2)^2, so delta(1,2) = 2.5^2,
# delta(2,3) = 3^2, delta(1,3) = 5.5^2; D_o = 2 * 9 / 8, D_e = 2 * (6*6.25 + 6*30.25 + 9*9) / 56.
HAND = {"interval": 1 - 0.25 / (78 / 56), "ordinal": 1 - (18 / 8) / (600 / 56)}
TWO_ANNOTATORS = [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0), (3.0, 2.0)]


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_alpha_equals_the_hand_computation(level):
    matrix = annotator_matrix(items_from(TWO_ANNOTATORS), "Natural")
    assert matrix.shape == (2, 4)
    assert krippendorff_alpha(matrix, level) == pytest.approx(HAND[level], abs=1e-12)
    table = annotator_agreement(items_from(TWO_ANNOTATORS), n_boot=N_BOOT).set_index("statistic")
    assert table.loc[f"alpha ({level})", "value"] == pytest.approx(HAND[level], abs=1e-12)
    assert table.loc[f"alpha ({level})", "annotators"] == 2


def test_alpha_ignores_which_position_an_annotator_has():
    swapped = [(b, a) if i % 2 else (a, b) for i, (a, b) in enumerate(TWO_ANNOTATORS)]
    assert krippendorff_alpha(annotator_matrix(items_from(swapped), "Natural")) == pytest.approx(HAND["interval"])


def pearson_by_hand(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    dx, dy = x - x.mean(), y - y.mean()
    return float((dx * dy).sum() / math.sqrt((dx**2).sum() * (dy**2).sum()))


THREE = [(1.0, 1.0, 2.0), (2.0, 3.0, 2.0), (3.0, 3.0, 3.0), (3.0, 2.0, 1.0), (1.0, 2.0, 1.0)]


def test_leave_one_out_equals_the_hand_computation():
    a, b, c = (np.array(s) for s in zip(*THREE))
    by_hand = np.mean([pearson_by_hand(a, (b + c) / 2), pearson_by_hand(b, (a + c) / 2),
                       pearson_by_hand(c, (a + b) / 2)])
    matrix = annotator_matrix(items_from(THREE), "Natural")
    assert leave_one_out(matrix) == pytest.approx(by_hand, abs=1e-12)
    spearman = np.mean([sps.spearmanr(a, (b + c) / 2).statistic, sps.spearmanr(b, (a + c) / 2).statistic,
                        sps.spearmanr(c, (a + b) / 2).statistic])
    assert leave_one_out(matrix, "spearman") == pytest.approx(spearman, abs=1e-12)
    table = annotator_agreement(items_from(THREE, groups=["g0", "g0", "g1", "g1", "g2"]), n_boot=N_BOOT)
    row = table.set_index("statistic").loc["leave-one-out pearson"]
    assert row["value"] == pytest.approx(by_hand, abs=1e-12)
    assert row["items"] == 5 and row["annotators"] == 3
    assert row["note"] == "no interval: 3 groups (dialogues, documents); an interval over groups needs at least 10"
    assert math.isnan(row["low"]) and math.isnan(row["high"])
    assert list(table["statistic"]) == ["alpha (interval)", "alpha (ordinal)", "leave-one-out pearson",
                                        "leave-one-out spearman", "leave-one-out kendall"]


def test_items_with_fewer_scores_are_left_out_of_leave_one_out_and_counted():
    table = annotator_agreement(items_from(THREE + [(2.0, 1.0)]), n_boot=N_BOOT).set_index("statistic")
    row = table.loc["leave-one-out pearson"]
    assert row["items"] == 5
    assert row["note"].startswith("1 of 6 items left out: other annotators scored them than the 3 who scored most "
                                  "items; ")
    more = annotator_agreement(items_from(THREE + [(2.0, 1.0, 3.0, 1.0)]), n_boot=N_BOOT).set_index("statistic")
    assert more.loc["leave-one-out pearson", "note"].startswith("1 of 6 items left out")  # more scores: out too
    assert table.loc["alpha (interval)", "items"] == 6  # alpha takes every pairable score


def test_one_score_per_item_is_undefined_not_an_error():
    table = annotator_agreement(items_from([(1.0,), (2.0,), (3.0,)], aspect="coherence"), n_boot=N_BOOT)
    assert len(table) == 5 and table["value"].isna().all()
    assert set(table["note"]) == {"undefined: one score per item (the dataset keeps only one score, or the mean)"}


def test_constant_scores_are_undefined_with_a_note():
    table = annotator_agreement(items_from([(2.0, 2.0)] * 4), n_boot=N_BOOT).set_index("statistic")
    assert math.isnan(table.loc["alpha (interval)", "value"])
    assert table.loc["leave-one-out pearson", "note"].startswith("undefined: an annotator's scores")


def test_on_the_topicalchat_sample_every_usr_aspect_has_an_interval():
    import geval

    dataset = geval.load_dataset(resolve_dataset("topicalchat_usr_sample"))
    table = annotator_agreement(dataset.items, n_boot=N_BOOT)
    assert list(dict.fromkeys(table["human"])) == dataset.aspects
    natural = table[(table["human"] == "Natural") & (table["statistic"] == "alpha (interval)")].iloc[0]
    assert -1 <= natural["value"] <= 1 and natural["low"] <= natural["high"]
    assert natural["items"] == 60 and natural["annotators"] == 3


def test_alphas_interval_stays_inside_the_values_alpha_can_take():
    """Nine groups where three annotators agree exactly and one where they do not: the jackknife's t · se either
    side of alpha passed 1 (the issue: 0.775 [0.269, 1.281]); alpha is at most 1 (and above -1), so is its interval."""
    truth = np.random.default_rng(0).integers(1, 6, 30).astype(float)
    columns = [(v, v, v) for v in truth[:27]] + [(1.0, 5.0, 3.0), (5.0, 1.0, 3.0), (1.0, 5.0, 2.0)]
    items = items_from(columns, groups=[f"g{k // 3}" for k in range(30)])
    table = annotator_agreement(items, n_boot=N_BOOT).set_index("statistic")
    for level in ("interval", "ordinal"):
        row = table.loc[f"alpha ({level})"]
        assert row["value"] < 1 and row["high"] == 1.0 and -1.0 <= row["low"] < row["value"]


def test_unknown_alpha_level():
    with pytest.raises(ValueError, match="level 'ratio-ish' is unknown; use one of interval, ordinal"):
        krippendorff_alpha(np.ones((2, 2)), "ratio-ish")


def test_the_people_row_at_the_group_and_system_level_by_hand():
    """One annotator against the others' mean inside each group (then the mean over groups), and over the systems'
    means (then the mean over annotators), as a judge row is read at those levels."""
    rng = np.random.default_rng(0)
    matrix = rng.integers(1, 6, (3, 60)).astype(float)
    groups, systems = [f"g{k // 5}" for k in range(60)], [f"s{k % 4}" for k in range(60)]
    items = [make_item("a", "turn", [], f"response {k}", group=groups[k], system=systems[k],
                       human={"Natural": tuple(matrix[:, k])}) for k in range(60)]
    others = [np.delete(matrix, k, axis=0).mean(axis=0) for k in range(3)]
    per_group = [np.mean([pearson_by_hand(matrix[k, g * 5:g * 5 + 5], others[k][g * 5:g * 5 + 5]) for k in range(3)])
                 for g in range(12)]
    group = annotator_agreement(items, alpha=False, level="group").set_index("statistic").loc["leave-one-out pearson"]
    assert group["value"] == pytest.approx(np.mean(per_group), abs=1e-12) and group["n"] == 12
    assert group["low"] < group["value"] < group["high"]

    def system_means(values):
        return [np.mean(values[[s == f"s{j}" for s in systems]]) for j in range(4)]

    by_hand = np.mean([pearson_by_hand(system_means(matrix[k]), system_means(others[k])) for k in range(3)])
    system = annotator_agreement(items, alpha=False, level="system", n_boot=N_BOOT).set_index("statistic")
    assert system.loc["leave-one-out pearson", "value"] == pytest.approx(by_hand, abs=1e-12)
    assert system.loc["leave-one-out pearson", "n"] == 4
    # 4 systems: no interval, as a judge row's system level says (`correlation.system_level`)
    assert system.loc["leave-one-out pearson", ["low", "high"]].isna().all()
    assert system.loc["leave-one-out pearson", "note"] == ("no interval: 4 systems; an interval at the system level "
                                                          "needs at least 10")


@pytest.mark.parametrize("level", ["interval", "ordinal", "nominal"])
def test_alpha_above_the_packages_size_is_the_packages_figure(level, monkeypatch):
    """Above PACKAGE_UP_TO items alpha comes from the coincidence matrix summed by counts: the
    package's figure but for rounding, on items with two to four scores and missing ones."""
    import krippendorff

    from geval.analysis import annotators

    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, 3000)
    matrix = np.clip(truth + rng.integers(-1, 2, (4, 3000)), 1, 5).astype(float)
    matrix[rng.uniform(size=matrix.shape) < 0.35] = np.nan
    monkeypatch.setattr(annotators, "PACKAGE_UP_TO", 100)
    paired = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    assert krippendorff_alpha(matrix, level) == pytest.approx(
        krippendorff.alpha(reliability_data=paired, level_of_measurement=level), abs=1e-12)


@pytest.mark.parametrize("level", ["item", "group", "system"])
def test_annotators_by_position_read_as_the_same_annotators_named(level):
    # the panel found from the counts of scores (annotators "#1", "#2", ... by position) is the one found from
    # the names: 40 items of two scores and 40 of three (a tie: the first seen, two, wins), 20 of one; the 60
    # items of other annotators than the first two left out
    counts = [2, 3] * 40 + [1] * 20
    scores = [tuple(float(1 + (i * (k + 2)) % 5) for k in range(n)) for i, n in enumerate(counts)]
    def items(named: bool):
        return [make_item("a", "turn", [], f"response {i}", system=f"s{i % 4}", group=f"g{i // 5}",
                          human={"Natural": s}, annotators={"Natural": positional(len(s))} if named else None)
                for i, s in enumerate(scores)]
    by_position = annotator_agreement(items(False), n_boot=N_BOOT, level=level)
    named = annotator_agreement(items(True), n_boot=N_BOOT, level=level)
    pd.testing.assert_frame_equal(by_position, named)
    assert "60 of 100 items left out: other annotators scored them than the 2 who" in by_position["note"].iloc[-1]
