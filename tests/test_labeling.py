"""geval.labeling (geval/decisions/labeling.py): the aspects a user labels, which item next, how
many labels a figure needs, and the learning curve of the judge alone against a combination
fitted on the labels."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, make_items, make_template, scripted

import geval
from geval.analysis.correlation import correlate
from geval.decisions.labeling import (
    Features,
    accuracy_design_effect,
    accuracy_labels_needed,
    LabelAspect,
    counts,
    curve,
    dataset_aspects,
    curve_sizes,
    design_effect,
    features,
    informativeness,
    labels_needed,
    learning_curve,
    order,
    parse_aspects,
    planned_r,
    progress_line,
    template_aspects,
)
from geval.errors import LabelError


@pytest.mark.parametrize("text, aspects", [
    ("Naturalness 1-3, Overall 1-5", [("Naturalness", 1, 3), ("Overall", 1, 5)]),
    ("Uses Knowledge 0-1\nOverall 1-5,", [("Uses Knowledge", 0, 1), ("Overall", 1, 5)]),
])
def test_aspects_named_with_their_scales(text, aspects):
    assert [(a.name, a.min, a.max) for a in parse_aspects(text)] == aspects


@pytest.mark.parametrize("text, message", [
    ("Overall", "'Overall': name each aspect with its scale, e.g. Naturalness 1-3"),
    ("Overall 1 to 5", "'Overall 1 to 5': name each aspect with its scale, e.g. Naturalness 1-3"),
    ("Overall 1-10", "aspect 'Overall' scale 1-10: use whole numbers with 0 <= min < max <= 9, so that one key rates"),
    ("Overall 3-3", "aspect 'Overall' scale 3-3: use whole numbers with 0 <= min < max <= 9, so that one key rates"),
    ("A 1-3, a 1-5", "'a' is named twice; name each aspect once"),
    (" , ", "no aspect named: name each with its scale, e.g. Naturalness 1-3, Overall 1-5"),
])
def test_aspects_that_cannot_be_read_are_named(text, message):
    with pytest.raises(LabelError) as error:
        parse_aspects(text)
    assert str(error.value) == message


def test_a_categorical_aspect_is_named_on_its_categories_indexes():
    """Labels of a pass/fail aspect are stored as its categories' indexes (0 fail, 1 pass): named "verdict 1-2",
    its 1 was shown as "fail" and read as "pass", its 2 as no category at all."""
    categories = {"Verdict": ("fail", "pass")}
    assert [(a.name, a.min, a.max) for a in parse_aspects("verdict 0-1", categories)] == [("verdict", 0, 1)]
    with pytest.raises(LabelError) as error:
        parse_aspects("Natural 1-3, verdict 1-2", categories)
    assert str(error.value) == ("'verdict 1-2': verdict is labeled with 2 categories: name it verdict 0-1, a digit for "
                                "each (0 fail, 1 pass)")


def test_a_datasets_aspects_come_on_the_scale_people_were_asked_on():
    """The Queues form offered "Understandable 1-3" for Topical-Chat's Understandable, asked on 0-1."""
    from geval.data.items import make_item

    items = [make_item("d", "turn", [], f"r{i}", group=f"g{i}", human={
        "Natural": (2.0 + i % 2,), "Overall": (3.0,), "Passed": (float(i % 2),), "Stars": (1.0 + 8 * i,),
        "Rating": (1.5 + i,)}) for i in range(2)]
    dataset = geval.Dataset("d", "d.csv", "table", items, categories={"Passed": ("fail", "pass")},
                            scales={"Natural": (1, 3), "Overall": (1, 5), "Stars": (0, 10)})
    assert [str(a) for a in dataset_aspects(dataset)] == ["Natural 1-3", "Overall 1-5", "Passed 0-1", "Rating 1-3"]
    topical = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json")
    assert str(dataset_aspects(topical)[0]) == "Understandable 0-1"


def test_a_template_s_aspects_are_named_as_the_dataset_s_human_aspects():
    template = make_template(aspects=(("Naturalness", 1, 3, "Natural"), ("Coherence", 1, 5)))
    assert template_aspects(template, ["natural", "Overall"]) == [LabelAspect("natural", 1, 3),
                                                                  LabelAspect("Coherence", 1, 5)]


# --- which item next ----------------------------------------------------------------------------


IDS = [f"i{k:02d}" for k in range(20)]


def test_the_random_order_is_seeded():
    assert order(IDS, "random", 3) == order(IDS, "random", 3) != order(IDS, "random", 4)
    assert sorted(order(IDS, "random", 3)) == IDS


def test_the_stratified_order_spans_the_judge_s_range_first():
    judge = pd.Series(np.arange(20, dtype=float), index=IDS)  # quintiles: 0-3, 4-7, 8-11, 12-15, 16-19
    judge["i05"] = np.nan
    ordered = order(IDS, "stratified", 0, judge=judge)
    assert sorted(judge[ordered[:5]] // 4) == [0, 1, 2, 3, 4]  # one item of each quintile first
    assert judge[ordered[0]] >= 16 and ordered[-1] == "i05"  # highest first; unscored last
    with pytest.raises(LabelError, match="needs the judge's scores: score the dataset first"):
        order(IDS, "stratified", 0)


def test_the_informative_order_puts_the_largest_disagreement_first():
    spread = pd.Series(np.linspace(0, 1, 20), index=IDS)
    assert order(IDS, "informative", 0, spread=spread)[:3] == ["i19", "i18", "i17"]
    with pytest.raises(LabelError, match="order 'best' is unknown; use one of random, stratified, informative"):
        order(IDS, "best")


def _features(n: int = 60, per_group: int = 2, seed: int = 0, helpful: bool = True) -> tuple[Features, pd.Series]:
    """A judge weakly related to the labels, and a column that predicts them well (or noise)."""
    rng = np.random.default_rng(seed)
    ids = [f"i{k:03d}" for k in range(n)]
    truth = rng.normal(size=n)
    table = pd.DataFrame({"judge": truth * 0.3 + rng.normal(size=n),
                          "other": truth + 0.3 * rng.normal(size=n) if helpful else rng.normal(size=n),
                          "length": rng.normal(size=n)}, index=ids)
    groups = pd.Series([f"g{k // per_group}" for k in range(n)], index=ids)
    return Features(table, ["judge", "other"], "judge", groups, (1, 5)), pd.Series(truth, index=ids)


def test_informativeness_needs_two_columns_that_can_disagree():
    found, human = _features()
    alone = Features(found.table, ["judge"], "judge", found.groups)
    assert informativeness(alone, human.iloc[:0]) is None
    with_fit = informativeness(alone, human.iloc[:12])  # a fitted combination is the second column
    assert with_fit is not None and with_fit.notna().all()
    spread = informativeness(found, human.iloc[:0])
    ranks = found.table[["judge", "other"]].rank(pct=True)
    assert spread.round(12).equals(ranks.std(axis=1).round(12))


# --- how many labels ------------------------------------------------------------------------------


@pytest.mark.parametrize("r", [0.0, 0.3, 0.5, 0.8, -0.6])
def test_labels_needed_is_the_first_n_with_an_interval_of_plus_minus_a_tenth(r):
    def half(n):
        z = math.atanh(abs(r))
        return (math.tanh(z + 1.96 / math.sqrt(n - 3)) - math.tanh(z - 1.96 / math.sqrt(n - 3))) / 2

    n = labels_needed(r)
    assert half(n) <= 0.10 < half(n - 1)


def test_labels_needed_known_answers():
    assert labels_needed(0.0) == labels_needed(float("nan")) == 385
    assert labels_needed(0.9, 0.5) < labels_needed(0.9) < labels_needed(0.5) < labels_needed(0.0)


def test_the_progress_line_names_the_figure_and_the_labels_still_needed():
    found, human = _features(n=1000)
    labeled = human.iloc[:23]
    r = np.corrcoef(found.table.loc[labeled.index, "judge"], labeled)[0, 1]
    effect = design_effect(found.table.loc[labeled.index, "judge"], labeled, found.groups[labeled.index])
    planned = planned_r(r, 23, effect=effect)
    assert 0 < planned < r
    assert progress_line(found, labeled, "Natural") == (
        f"23 labeled; about {labels_needed(planned, effect=effect) - 23} more for a 95% interval of ±0.10 on the "
        f"judge's Pearson with your Natural labels (now {r:.2f}, planned as {planned:.2f}, the end of its 95% interval "
        f"nearest 0, until there are more); counted with the design effect of the 12 groups labeled so far "
        f"(×{effect:.1f})")
    independent = ("; counted as if items were independent (fewer than 10 groups labeled to measure how much a "
                   "group's items move together: more will be needed)")
    assert progress_line(found, human.iloc[:2], "Natural") == (
        "2 labeled; about 383 more for a 95% interval of ±0.10 on the judge's Pearson with your Natural labels (not "
        "computable yet, taken as 0)" + independent)
    r = np.corrcoef(found.table["judge"], human)[0, 1]
    assert progress_line(found, human, "Natural").startswith(
        f"1000 labeled: enough for a 95% interval of ±0.10 on the judge's Pearson with your Natural labels "
        f"(now {r:.2f}); counted with the design effect of the 500 groups labeled so far (×")
    nobody = Features(found.table, [], None, found.groups)
    assert progress_line(nobody, human.iloc[:5], "Natural") == (
        "5 labeled; no judge has scored these items yet: score them with a template whose aspect is compared with "
        "Natural to see how far the judge agrees with you")
    elsewhere = Features(found.table, [], None, found.groups, compared={"judge": "Engaging", "other": "Overall"})
    assert progress_line(elsewhere, human.iloc[:5], "Natural") == (
        "5 labeled; the judges scored here are compared with Engaging, Overall, not with Natural: score the items "
        "with a template whose aspect is compared with Natural (human = \"Natural\") to see how far the judge "
        "agrees with you")


def test_a_few_labels_plan_from_the_end_of_their_pearsons_interval_nearest_0():
    """On 4 labels the Label page said "about 3 more for ±0.10 (now -0.98)": planned at the observed r, a few labels'
    chance correlation promised an interval after a handful more. Planned at the end of its interval nearest 0, 5
    labels of a judge whose Pearson with people is .5 in truth plan fewer labels than .5 needs in 2.5% of draws
    (one end of a 95% interval; 3.0% at seed 7); planned at the observed r, in 60%."""
    rng = np.random.default_rng(7)
    needed = labels_needed(0.5)
    fewer, fewer_at_r = 0, 0
    for _ in range(2000):
        judge, human = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=5).T
        r = float(np.corrcoef(judge, human)[0, 1])
        fewer += labels_needed(planned_r(r, 5)) < needed
        fewer_at_r += labels_needed(r) < needed
    assert fewer / 2000 <= 0.05 and fewer_at_r / 2000 >= 0.3, (fewer, fewer_at_r)
    assert 0.3 < planned_r(-0.98, 4) < 0.35 and labels_needed(planned_r(-0.98, 4)) > 300  # "about 3 more" before
    assert planned_r(0.2, 20) == planned_r(float("nan"), 50) == planned_r(0.5, 3) == 0.0  # an interval holding 0
    assert planned_r(0.5, 10_000) == pytest.approx(0.5, abs=0.02)  # many labels: the r itself


def _grouped(rng, skewed: bool, groups: int = 100, per: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A judge and people on `groups` dialogues of `per` responses, 40% of each one's variance shared within a
    dialogue (the dialogues' parts correlated .7, the responses' .35: Pearson about .5); `skewed`: people on 1-5
    piled at the top, the judge a weighted mean on 1-3."""
    shared = rng.multivariate_normal([0, 0], [[1, 0.7], [0.7, 1]], size=groups)
    own = rng.multivariate_normal([0, 0], [[1, 0.35], [0.35, 1]], size=groups * per)
    judge, human = (math.sqrt(0.4) * np.repeat(shared, per, axis=0) + math.sqrt(0.6) * own).T
    if skewed:
        human, judge = np.digitize(human, [-1.6, -1.0, -0.4, 0.3]) + 1.0, 2 + np.tanh(judge)
    return judge, human, np.repeat(np.arange(groups), per)


def _planned_labels(line: str, labeled: int) -> int:
    """The labels a progress line plans in all: "about N more" after `labeled`, or "needs about N labels"."""
    more = re.search(r"about (\d+) more", line)
    return labeled + int(more.group(1)) if more else int(re.search(r"needs about (\d+) labels", line).group(1))


@pytest.mark.simulation
@pytest.mark.parametrize("skewed", [False, True], ids=["grouped", "grouped-and-skewed"])
def test_on_grouped_labels_in_random_order_the_plan_is_short_no_more_often_than_on_independent_ones(skewed):
    """Labels in a random order share few dialogues, so the design effect measured on them is smaller than at the
    labels planned, where more of them share one: planned with it alone, 30, 60 and 120 labels of 100 dialogues of 6
    planned fewer labels than the interval over dialogues needs in 23% of draws (20% skewed; independent items: 5%
    over 10 seeds in bench/label_plan.py). Grown to the plan with the judge's own between-dialogue share
    (`grown_effect`), in 1.0% (1.3%). The labels needed: where the mean half-width over 40 draws of the interval over
    dialogues reaches ±0.10 (320; 340 skewed)."""
    rng = np.random.default_rng(11)
    truth = np.mean([np.corrcoef(*_grouped(rng, skewed)[:2])[0, 1] for _ in range(100)])
    ids = np.array([f"i{k:03d}" for k in range(600)])
    needs = None
    for size in range(200, 601, 20):
        widths = []
        for _ in range(40):
            judge, human, groups = _grouped(rng, skewed)
            pick = rng.permutation(600)[:size]
            effect = design_effect(*(pd.Series(v[pick]) for v in (judge, human, groups)))
            spread = 1.96 * math.sqrt((effect or 1.0) / (size - 3))
            widths.append((math.tanh(math.atanh(truth) + spread) - math.tanh(math.atanh(truth) - spread)) / 2)
        if np.mean(widths) <= 0.10:
            needs = size
            break
    short, short_alone = [], []
    for labeled in (30, 60, 120):
        for _ in range(100):
            judge, human, groups = _grouped(rng, skewed)
            found = Features(pd.DataFrame({"judge": judge}, index=ids), ["judge"], "judge",
                             pd.Series(groups.astype(str), index=ids), (1, 3))
            pick = rng.permutation(600)[:labeled]
            line = progress_line(found, pd.Series(human[pick], index=ids[pick]), "Natural")
            short.append(_planned_labels(line, labeled) < needs)
            r = float(np.corrcoef(judge[pick], human[pick])[0, 1])
            effect = design_effect(*(pd.Series(v[pick]) for v in (judge, human, groups))) or 1.0
            short_alone.append(labels_needed(planned_r(r, labeled, effect=effect), effect=effect) < needs)
    assert needs is not None and np.mean(short) <= 0.05 and np.mean(short_alone) >= 0.10, (
        needs, np.mean(short), np.mean(short_alone))


def test_the_progress_line_says_where_the_design_effect_grows_to_the_plan():
    rng = np.random.default_rng(3)
    judge, human, groups = _grouped(rng, skewed=False)
    ids = np.array([f"i{k:03d}" for k in range(600)])
    found = Features(pd.DataFrame({"judge": judge}, index=ids), ["judge"], "judge", pd.Series(groups, index=ids),
                     (1, 3))
    spread = rng.permutation(600)[:60]  # labels on about 45 dialogues
    line = progress_line(found, pd.Series(human[spread], index=ids[spread]), "Natural")
    assert re.search(r"counted with the design effect of the \d+ groups labeled so far \(×\d\.\d; ×\d\.\d at \d+ "
                     r"labels, more of them in one group\)$", line), line
    few = np.arange(12)  # two dialogues
    line = progress_line(found, pd.Series(human[few], index=ids[few]), "Natural")
    assert re.search(r"counted with ×\d\.\d at \d+ labels, the design effect expected from how much the judge's "
                     r"scores of a group's items move together \(fewer than 10 groups labeled to measure it on your "
                     r"labels\)$", line), line


def test_the_progress_line_says_how_many_labels_are_on_items_the_judge_scored():
    """A judge that scored 6 of 60 items and 3 labels on others: the Pearson is "not computable yet" for a reason
    the line names (a new user scored a sample, then labeled in the seeded random order)."""
    found, human = _features(n=60)
    found.table.loc[found.table.index[6:], "judge"] = np.nan
    line = progress_line(found, human.iloc[10:13], "Natural")
    assert line.startswith("3 labeled (0 of them on the 6 items the judge scored: only those are compared with it); "
                           "a 95% interval of ±0.10 on the judge's Pearson with your Natural labels (not computable "
                           "yet, taken as 0) needs about 385 labels, more than the 6 items the judge scored"), line
    assert progress_line(found, human.iloc[:3], "Natural").startswith("3 labeled; a 95% interval")  # all on judged


def test_the_progress_line_says_when_the_dataset_has_fewer_items_than_the_interval_needs():
    found, human = _features(n=60)
    line = progress_line(found, human.iloc[:0], "Natural")
    assert line == ("0 labeled; a 95% interval of ±0.10 on the judge's Pearson with your Natural labels (not "
                    "computable yet, taken as 0) needs about 385 labels, more than the 60 items the judge scored; all 60 give "
                    "about ±0.25; counted as if items were independent (fewer than 10 groups labeled to measure how "
                    "much a group's items move together: more will be needed)")


def test_on_a_pass_fail_aspect_the_progress_line_plans_the_judges_accuracy_not_a_pearson():
    """Labels of two words (0 fail, 1 pass): the interval to plan is the accuracy's (how often the judge's nearest
    label is yours), the normal approximation's at a planned (hits + 2) / (labels + 4): 97 labels for ±0.10 before
    any, fewer as the judge proves right; a 0-1 judge's 0.62 reads "pass"."""
    ids = [f"i{k:03d}" for k in range(400)]
    judge = pd.Series(np.tile([0.9, 0.62, 0.2, 0.3], 100), index=ids)  # pass, pass, fail, fail
    mine = pd.Series(np.tile([1.0, 1.0, 0.0, 1.0], 100), index=ids)  # the fourth: the judge is wrong
    groups = pd.Series([f"g{k // 4}" for k in range(400)], index=ids)
    found = Features(pd.DataFrame({"judge": judge}), ["judge"], "judge", groups, (0, 1))
    assert accuracy_labels_needed(0, 0) == 97  # 1.96² · 0.25 / 0.01 = 96.04
    assert progress_line(found, mine.iloc[:0], "verdict", categories=("fail", "pass")) == (
        "0 labeled; about 97 more for a 95% interval of ±0.10 on the judge's accuracy with your verdict labels (not "
        "computable yet, planned as 0.50: the widest); counted as if items were independent (fewer than 10 groups "
        "labeled to measure how much a group's items move together: more will be needed)")
    line = progress_line(found, mine.iloc[:8], "verdict", categories=("fail", "pass"))  # 6 of 8 right
    assert line.startswith(f"8 labeled; about {accuracy_labels_needed(6, 8) - 8} more for a 95% interval of ±0.10 on "
                           "the judge's accuracy with your verdict labels (now 0.75, planned as 0.67 until there are "
                           "more)"), line
    assert "Pearson" not in line
    # every group holds one miss of four: the groups move less than independent items would, the effect 1
    assert accuracy_design_effect(pd.Series(np.tile([1.0, 1, 1, 0], 100), index=ids), groups) == 1.0
    line = progress_line(found, mine, "verdict", categories=("fail", "pass"))
    assert line.startswith("400 labeled: enough for a 95% interval of ±0.10 on the judge's accuracy with your "
                           "verdict labels (now 0.75); counted with the design effect of the 100 groups"), line


def test_the_labels_planned_for_an_accuracy_give_the_agreement_tables_interval_about_plus_minus_0_10():
    """The plan is read against the interval the Agreement page shows for an accuracy (the delete-one-group
    jackknife, Student's t: `accuracy_row`): at the labels planned after 40 labels, its half-width over 300
    simulated label sets (dialogues of 2 items) is 0.10 give or take the plan's own estimate of p."""
    from geval.analysis.correlation import jackknife_interval

    rng = np.random.default_rng(0)
    for p in (0.5, 0.75, 0.9):
        n = accuracy_labels_needed(round(p * 40), 40)
        widths = []
        for _ in range(300):
            hits = (rng.random(n) < p).astype(float)
            groups = np.arange(n) // 2
            sums = np.array([[hits[groups == g].sum(), (groups == g).sum()] for g in range(groups.max() + 1)])
            loo = (sums[:, 0].sum() - sums[:, 0]) / (sums[:, 1].sum() - sums[:, 1])
            low, high = jackknife_interval(float(hits.mean()), loo, correlation=False)
            widths.append((high - low) / 2)
        assert 0.085 < float(np.mean(widths)) < 0.115, (p, n, np.mean(widths))


def test_an_accuracy_whose_groups_hit_or_miss_together_needs_more_labels():
    ids = [f"i{k:03d}" for k in range(200)]
    groups = pd.Series([f"g{k // 10}" for k in range(200)], index=ids)
    together = pd.Series(np.repeat(np.tile([1.0, 0.0], 10), 10), index=ids)  # a group all right or all wrong
    effect = accuracy_design_effect(together, groups)
    assert effect > 5
    assert accuracy_labels_needed(100, 200, effect=effect) > 5 * accuracy_labels_needed(100, 200)
    assert accuracy_design_effect(together.iloc[:90], groups.iloc[:90]) is None  # 9 groups: too few to measure


def test_labels_of_groups_whose_items_move_together_count_for_less():
    """The interval the Label page shows is over groups: when a group's items share an offset (the judge and the
    labels alike), the labels needed for ±0.10 grow by the design effect of the groups seen so far, where taking
    the items as independent undercounts them."""
    rng = np.random.default_rng(0)
    groups = pd.Series([f"g{k // 10}" for k in range(1000)], index=[f"i{k:04d}" for k in range(1000)])
    shared = rng.normal(size=100).repeat(10)
    truth = pd.Series(shared + 0.3 * rng.normal(size=1000), index=groups.index)
    judge = 0.5 * shared + rng.normal(size=100).repeat(10) + 0.5 * rng.normal(size=1000)  # its own offset per group
    found = Features(pd.DataFrame({"judge": judge}, index=groups.index), ["judge"], "judge", groups)
    labeled = truth.iloc[:150]
    effect = design_effect(found.table.loc[labeled.index, "judge"], labeled, groups[labeled.index])
    assert effect > 2
    r = correlate("pearson", found.table.loc[labeled.index, "judge"], labeled)
    assert labels_needed(r, effect=effect) > 2 * labels_needed(r)
    line = progress_line(found, labeled, "Natural")
    assert f"needs about {labels_needed(planned_r(r, 150, effect=effect), effect=effect)} labels" in line
    assert f"(×{effect:.1f})" in line


# --- the learning curve -----------------------------------------------------------------------------


def test_curve_sizes():
    assert curve_sizes(12) == [10, 12]
    assert curve_sizes(25) == [10, 15, 20, 25]  # the review's 25 labels read at 3 points
    assert curve_sizes(360) == [10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 360]
    assert curve_sizes(9) == []


def test_a_combination_with_a_predictive_column_beats_the_judge_with_enough_labels():
    found, human = _features(200, per_group=2)
    learned = learning_curve(found, human, list(human.index), "Natural")
    points = learned.points
    assert points["labels"].tolist() == [10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200]
    assert points["combined"].iloc[-1] > 0.8 > 0.5 > points["judge"].iloc[-1]
    assert learned.beats_at is not None and learned.beats_at <= 50
    first = points.iloc[0]  # 10 labels in 5 groups: values, no interval
    assert math.isnan(first["low"]) and "no interval: 5 groups" in first["note"]
    assert learned.notes == ["below 10 groups no interval is given"]


def test_a_combination_of_noise_does_not_beat_the_judge():
    found, human = _features(120, per_group=3, helpful=False)
    learned = learning_curve(found, human, list(human.index), "Natural")
    assert learned.beats_at is None


def test_a_curve_needs_a_judge_and_ten_labels():
    found, human = _features()
    with pytest.raises(LabelError, match="9 labels of Natural: a learning curve starts at 10"):
        learning_curve(found, human, list(human.index[:9]), "Natural")
    with pytest.raises(LabelError, match="no scored judge compares an aspect with 'Natural'"):
        learning_curve(Features(found.table, [], None, found.groups), human, list(human.index), "Natural")


def test_the_curve_of_stored_labels_follows_the_order_they_were_given(store):
    items = make_items(30, per_group=2)
    store.save_dataset(geval.Dataset("synthetic", "s.json", "table", items))
    template = make_template(aspects=(("Naturalness", 1, 3, "Natural"),))
    geval.score(store, items, template, scripted(), "synthetic")
    for index, item in enumerate(reversed(items[:12])):
        store.save_label(item.id, "natural", 1 + index % 3)
    found = features(store, "synthetic", "Natural", baselines=())
    assert found.rows == [found.judge] and found.judge.endswith(": naturalness") and found.scale == (1, 3)
    learned = curve(store, "synthetic", "Natural")
    assert learned.points["labels"].tolist() == [10, 12] and learned.judge == found.judge
    assert learned.points["groups"].tolist() == [5, 6]  # the last 12 items given first: items 11..2 in 5 groups
    assert counts(store, "synthetic")[["aspect", "items", "annotators"]].values.tolist() == [["natural", 12, "you"]]


@pytest.mark.parametrize("lows, beats_at", [
    ([0.1, 0.2, 0.2, 0.3], 10),
    ([0.1, -0.1, 0.2, 0.3], 20),       # from which on it stays above 0, not the first time it is
    ([math.nan, 0.1, 0.1, 0.1], 15),   # no interval yet (too few groups), then above 0
    ([0.1, 0.2, 0.2, -0.1], None),     # not with every label
])
def test_beats_at_is_where_the_paired_interval_stays_above_zero(lows, beats_at):
    from geval.decisions.labeling import LearningCurve

    points = pd.DataFrame({"labels": [10, 15, 20, 30], "low": lows})
    assert LearningCurve("Natural", "judge", [], points).beats_at == beats_at


def test_a_curve_read_on_other_groups_fits_on_all_the_labels_and_reads_there():
    found, human = _features(200, per_group=2)
    labeled = [i for i in human.index if int(found.groups[i][1:]) < 60]  # groups g0..g59 labeled
    other = [i for i in human.index if int(found.groups[i][1:]) >= 60]   # g60..g99 read on: 40 groups
    learned = learning_curve(found, human, labeled, "Natural", read_on=other)
    points = learned.points
    assert points["labels"].tolist() == [10, 15, 20, 25, 30, 40, 50, 75, 100, 120]
    assert (points["groups"] == 40).all() and points["low"].notna().all()  # read on the 40 other groups
    assert points["combined"].iloc[-1] > 0.8 > 0.5 > points["judge"].iloc[-1]
    assert points["judge"].nunique() == 1  # the judge alone reads the same items at every number of labels
    assert learned.beats_at == 10


def test_the_curve_of_pass_fail_labels_reads_accuracy_not_a_pearson_of_their_codes(tmp_path):
    """"How many labels buy how much" read the Pearson of a combination fitted on a pass/fail aspect's codes, beside
    a progress line and a table of accuracies; now each point is the judge's accuracy against your labels (its
    nearest label), the combination's (its prediction rounded to the nearest label) and their paired difference."""
    from helpers import scored_verdicts

    from geval.analysis.categorical import as_labels
    from geval.reporting.figures import learning_curve_figure
    from geval.reporting.tables import curve_caption

    dataset = scored_verdicts(tmp_path, 30)
    store = geval.Store(tmp_path / "store.sqlite")
    given = {item.id: (k * 7 % 3 == 0) * 1 for k, item in enumerate(dataset.items[:24])}  # not the people's labels
    for item_id, label in given.items():
        store.save_label(item_id, "verdict", label)
    learned = curve(store, "verdicts", "verdict", baselines=())
    assert learned.metric == "accuracy" and learned.points["labels"].tolist() == [10, 15, 20, 24]
    judge = features(store, "verdicts", "verdict", baselines=())
    nearest = as_labels(judge.table[judge.judge], judge.scale, 2)
    expected = [np.mean([nearest[i] == label for i, label in list(given.items())[:size]]) for size in (10, 15, 20, 24)]
    assert learned.points["judge"].tolist() == pytest.approx(expected)
    assert ((learned.points["combined"] * learned.points["labels"]) % 1 == 0).all()  # a share of the labels
    assert curve_caption(learned).startswith("The accuracy against the verdict labels")
    assert learning_curve_figure(learned).layout.yaxis.title.text == "accuracy against the labels"
