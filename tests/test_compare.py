"""geval.compare: the paired bootstrap difference of two correlations, Williams' test, and
the item-by-item disagreement frame built from the store."""

import math

import numpy as np
import pytest
from scipy import stats
from helpers import make_items, make_template, scripted

import geval
from geval.analysis.comparison import (
    compared_humans,
    difference_interval,
    paired_columns,
    paired_difference,
    williams_test,
)
from geval.analysis.correlation import METRICS, correlate
from geval.analysis.disagreement import human_ranges
from geval.data.items import Turn, make_item
from geval.errors import StoreError


def _data(n_groups: int = 30, per_group: int = 4, seed: int = 1):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n_groups * per_group)
    groups = np.repeat([f"g{i}" for i in range(n_groups)], per_group)
    return rng, human, groups


# --- williams_test --------------------------------------------------------------------------

# Hand-computed with Steiger (1980) eq. 7:
#   |R| = 1 - r12² - r13² - r23² + 2 r12 r13 r23,  rbar = (r12 + r13) / 2
#   t = (r12 - r13) sqrt((n-1)(1+r23)) / sqrt(2 (n-1)/(n-3) |R| + rbar² (1-r23)³),  df = n - 3
# (0.6, 0.4, 0.5, 100): |R| = 0.47, rbar² (1-r23)³ = 0.03125, 2·99/97·0.47 = 0.959381;
#   t = 0.2·sqrt(148.5) / sqrt(0.990631) = 2.437212 / 0.995305 = 2.448709; p = 2·P(T97 > t) = 0.01613
# (0.5, 0.3, 0.2, 50): |R| = 0.68, rbar² (1-r23)³ = 0.08192, 2·49/47·0.68 = 1.417872;
#   t = 0.2·sqrt(58.8) / sqrt(1.499792) = 1.533623 / 1.224660 = 1.252285; p = 0.2167
@pytest.mark.parametrize("r12, r13, r23, n, t, p", [
    (0.6, 0.4, 0.5, 100, 2.448709, 0.01613),
    (0.5, 0.3, 0.2, 50, 1.252285, 0.2167),
])
def test_williams_test_known_answers(r12, r13, r23, n, t, p):
    got_t, got_p = williams_test(r12, r13, r23, n)
    assert got_t == pytest.approx(t, abs=1e-5)
    assert got_p == pytest.approx(p, abs=1e-4)


def test_williams_test_is_antisymmetric_in_the_two_correlations():
    t, p = williams_test(0.6, 0.4, 0.5, 100)
    t_swapped, p_swapped = williams_test(0.4, 0.6, 0.5, 100)
    assert t_swapped == pytest.approx(-t)
    assert p_swapped == pytest.approx(p)


@pytest.mark.parametrize("args", [(0.5, 0.3, 0.2, 3), (float("nan"), 0.3, 0.2, 50)])
def test_williams_test_is_nan_when_undefined(args):
    assert all(math.isnan(v) for v in williams_test(*args))


def test_williams_test_of_equal_correlations_is_zero():
    assert williams_test(0.4, 0.4, 1.0, 30) == (0.0, 1.0)


# --- paired_difference -----------------------------------------------------------------------


def test_identical_judges_differ_by_zero():
    rng, human, groups = _data()
    judge = human + rng.normal(size=len(human))
    result = paired_difference(judge, judge.copy(), human, groups)
    assert result.difference == 0
    assert result.a == result.b
    assert result.low <= 0 <= result.high
    assert result.p == 1.0
    assert (result.williams_t, result.williams_p) == (0.0, 1.0)
    assert (result.n_items, result.n_groups) == (120, 30)


def test_a_judge_that_follows_people_beats_noise():
    rng, human, groups = _data()
    noise = rng.normal(size=len(human))
    close = human + 0.3 * rng.normal(size=len(human))
    result = paired_difference(noise, close, human, groups)
    assert result.difference > 0.5
    assert result.difference == pytest.approx(result.b - result.a)
    assert 0 < result.low < result.difference < result.high
    assert result.p < 0.05
    assert result.williams_t > 0  # signed like B - A
    assert result.williams_p < 0.05
    reverse = paired_difference(close, noise, human, groups)
    assert reverse.difference == pytest.approx(-result.difference)
    assert reverse.p < 0.05 and reverse.williams_t < 0


@pytest.mark.parametrize("metric", METRICS)
def test_every_metric_gives_the_same_answer_twice(metric):
    rng, human, groups = _data(n_groups=15)
    a, b = rng.normal(size=len(human)), human + rng.normal(size=len(human))
    first = paired_difference(a, b, human, groups, metric=metric)
    again = paired_difference(a, b, human, groups, metric=metric)
    assert repr(first) == repr(again)  # repr: NaN (Williams for Kendall) compares unequal
    assert first.metric == metric
    assert first.a == pytest.approx(correlate(metric, a, human))
    assert first.b == pytest.approx(correlate(metric, b, human))
    assert math.isnan(first.williams_p) == (metric == "kendall")


def test_from_fewer_than_ten_groups_no_p_value_is_given_not_even_williams():
    """Williams' test treats items as independent: where the jackknife withholds its p-value for
    too few groups, the more optimistic test must not give one either."""
    rng, human, groups = _data(n_groups=5)
    noise, close = rng.normal(size=len(human)), human + 0.3 * rng.normal(size=len(human))
    result = paired_difference(noise, close, human, groups)
    assert result.n_groups == 5 and result.difference > 0.5
    assert all(math.isnan(v) for v in (result.p, result.low, result.williams_t, result.williams_p))


def test_rows_with_a_nan_anywhere_are_dropped():
    rng, human, groups = _data(n_groups=10)
    a, b = rng.normal(size=len(human)), human + rng.normal(size=len(human))
    a[0], b[1], human[2] = np.nan, np.nan, np.nan
    result = paired_difference(a, b, human, groups)
    assert result.n_items == len(human) - 3
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(human))
    assert result.a == pytest.approx(correlate("pearson", a[keep], human[keep]))


def test_fewer_than_three_common_items_is_a_named_error():
    with pytest.raises(StoreError, match=r"only 2 item\(s\) are scored by both .* at least 3: score the same"):
        paired_difference([1, 2, np.nan, 3], [2, 1, 3, np.nan], [1, 3, 2, 2], ["a", "b", "c", "d"])


def test_a_constant_judge_is_a_named_error_that_does_not_ask_for_more_items():
    with pytest.raises(StoreError, match="correlation of A with the human scores is undefined: A gives all 4 common "
                                         "items the same score, so there is nothing to compare .more items will not"):
        paired_difference([2, 2, 2, 2], [1, 2, 3, 1], [1, 3, 2, 2], ["a", "b", "c", "d"])
    with pytest.raises(StoreError, match="undefined: people gave all 4 common items the same score"):
        paired_difference([1, 2, 3, 1], [1, 2, 3, 2], [2, 2, 2, 2], ["a", "b", "c", "d"])


def test_bad_arguments_are_programming_errors():
    with pytest.raises(ValueError, match="metric 'cosine' is unknown"):
        paired_difference([1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3], metric="cosine")
    with pytest.raises(ValueError, match="equally long"):
        paired_difference([1, 2, 3], [1, 2], [1, 2, 3], [1, 2, 3])


# --- from the store ------------------------------------------------------------------------


def _scored(store, template=None, n=12, judge=None):
    items = make_items(n)
    store.save_dataset(geval.Dataset("synthetic", "", "table", items))
    template = template or make_template()
    geval.score(store, items, template, judge or scripted(), "synthetic")
    return items, template


def test_disagreements_put_judge_and_people_on_a_common_scale(store):
    items, template = _scored(store)
    frame = geval.disagreements(store, "synthetic")
    assert len(frame) == len(items)
    low, high = human_ranges(items)["Natural"]
    assert (low, high) == (1.0, 3.0)
    by_id = {item.id: item for item in items}
    for row in frame.itertuples():
        assert row.judge_01 == pytest.approx((row.score - 1) / 2)
        assert row.human_01 == pytest.approx((by_id[row.item_id].human_mean("Natural") - low) / (high - low))
        assert row.disagreement == pytest.approx(abs(row.judge_01 - row.human_01))
        assert row.human == "Natural" and row.aspect_name == "Naturalness"
        assert row.response == by_id[row.item_id].response
    assert frame["disagreement"].between(0, 1).all()


def test_disagreements_on_an_unscored_dataset_say_what_to_do(store):
    store.save_dataset(geval.Dataset("synthetic", "", "table", make_items(3)))
    with pytest.raises(StoreError, match="nothing scored on dataset 'synthetic' yet"):
        geval.disagreements(store, "synthetic")


def test_scored_combos_label_each_template_version_and_judge(store):
    _scored(store)
    _scored(store, make_template(body="Context: {{context}}\nResponse: {{response}}\n- Naturalness:"))
    combos = store.combos("synthetic")
    assert len(combos) == 2
    assert combos["label"].is_unique
    assert all(label.startswith("test-naturalness@") and label.endswith(" · scripted: hashed")
               for label in combos["label"])
    assert list(combos["ok"]) == [12, 12]
    assert store.combos("nothing").empty


def test_compare_combos_uses_the_items_both_scored(store):
    items, first = _scored(store, n=12)
    second = make_template(body="Context: {{context}}\nResponse: {{response}}\n- Naturalness:")
    geval.score(store, items[:8], second, scripted(), "synthetic")
    combos = store.combos("synthetic").set_index("template_version")
    a = (first.version, combos.loc[first.version, "signature"])
    b = (second.version, combos.loc[second.version, "signature"])
    assert compared_humans(store, "synthetic", a) == ["Natural"]
    result = geval.compare(store, "synthetic", a, b, "Natural")
    assert result.n_items == 8 and result.n_groups == 4
    with pytest.raises(StoreError, match="no judge aspect compared with the human aspect 'Overall'"):
        geval.compare(store, "synthetic", a, b, "Overall")


def test_an_aspect_without_a_human_match_has_no_disagreement(store):
    item = make_item("synthetic", "turn", [Turn("A", "hi")], "hello", "fact", "s1", "g1", {"Natural": (2.0,)})
    store.save_dataset(geval.Dataset("synthetic", "", "table", [item]))
    geval.score(store, [item], make_template(aspects=(("Fluency", 1, 5),)), scripted(), "synthetic")
    frame = geval.disagreements(store, "synthetic")
    assert frame["human"].isna().all() and frame["disagreement"].isna().all()
    assert frame["judge_01"].between(0, 1).all()


# --- several columns at once (the leaderboard's comparison with a row of reference) ---------------------


def _columns(seed: int = 4, groups: int = 24, per: int = 5):
    rng = np.random.default_rng(seed)
    labels = np.repeat([f"g{i}" for i in range(groups)], per)
    columns = {}
    for name in ("x", "y", "z"):
        human = rng.integers(1, 4, len(labels)).astype(float)
        a, b = human + rng.normal(0, 1.2, len(labels)), human + rng.normal(0, 0.8, len(labels))
        a[rng.random(len(labels)) < 0.1] = np.nan  # an item A left unscored
        columns[name] = (a, b, human)
    return columns, labels


def test_paired_columns_at_item_level_equal_paired_difference_column_by_column():
    columns, groups = _columns()
    found = paired_columns(columns, groups, "item", "pearson", average=("x", "y", "z"))
    by_name = {row["column"]: row for row in found}
    for name, (a, b, human) in columns.items():
        one = paired_difference(a, b, human, groups, "pearson")
        row = by_name[name]
        assert (row["a"], row["b"], row["difference"], row["low"], row["high"], row["p"]) == pytest.approx(
            (one.a, one.b, one.difference, one.low, one.high, one.p), abs=1e-12)
    average = by_name["average"]
    assert average["difference"] == pytest.approx(np.mean([by_name[n]["difference"] for n in "xyz"]), abs=1e-12)
    assert average["low"] < average["difference"] < average["high"]
    assert average["high"] - average["low"] < by_name["x"]["high"] - by_name["x"]["low"]  # three columns narrow it


def test_paired_columns_at_group_level_are_the_mean_of_per_group_differences():
    columns, groups = _columns(groups=12, per=6)
    a, b, human = columns["x"]
    a[groups == "g0"] = 2.0  # constant: no correlation of A inside g0, so g0 is left out of the difference
    [row] = paired_columns({"x": (a, b, human)}, groups, "group", "spearman")
    per_group = []
    for g in dict.fromkeys(groups):
        rows = (groups == g) & np.isfinite(a)
        per_group.append(correlate("spearman", b[rows], human[rows]) - correlate("spearman", a[rows], human[rows]))
    assert row["difference"] == pytest.approx(np.nanmean(per_group), abs=1e-12)
    assert row["groups"] == 12 and row["low"] <= row["difference"] <= row["high"]
    assert row["note"] == "difference over the 11 groups where both are defined"
    # the jackknife of a mean of per-group values is the one-sample t-test on them
    known = stats.ttest_1samp([d for d in per_group if np.isfinite(d)], 0.0)
    interval = known.confidence_interval(0.95)
    assert (row["low"], row["high"], row["p"]) == pytest.approx((interval.low, interval.high, known.pvalue), abs=1e-12)


def test_paired_columns_with_few_groups_give_no_interval_and_say_why():
    columns, groups = _columns(groups=6)
    [row] = paired_columns({"x": columns["x"]}, groups)
    assert math.isfinite(row["difference"]) and math.isnan(row["low"]) and math.isnan(row["p"])
    assert "no interval: 6 groups" in row["note"]


def test_two_judges_that_would_read_alike_are_labelled_by_what_differs(store):
    from openai_stub import OpenAIStub

    from geval.judging.backends.openai import OpenAIJudge

    items = make_items(3)
    store.save_dataset(geval.Dataset("synthetic", "", "table", items))
    with OpenAIStub() as one, OpenAIStub() as two:
        for stub in (one, two):
            judge = OpenAIJudge("stub-model", base_url=stub.url, api_key="sk-test", mode="logprobs", max_retries=0)
            geval.score(store, items, make_template(), judge, "synthetic")
        labels = set(store.combos("synthetic")["label"])
        hosts = [stub.url.split("/")[2] for stub in (one, two)]  # 127.0.0.1:PORT: the judge's name says where it runs
        assert labels == {f"{make_template().label} · openai: stub-model, logprobs at {host}" for host in hosts}
        runs = store.runs("synthetic")
        assert set(runs["judge"]) == {f"openai: stub-model, logprobs at {host}" for host in hosts}


def test_the_interval_of_a_difference_of_correlations_stays_inside_minus_2_and_2():
    """A difference of two correlations lies in [-2, 2]; so does its interval (the review saw -1.009 [-2.130,
    0.112] on a learning curve of 10 labels)."""
    from geval.analysis.correlation import jackknife_interval

    loo = np.array([-1.2, -0.8] * 5)
    raw = jackknife_interval(-1.0, loo, correlation=False)
    assert raw[0] < -2 and -1 < raw[1] < 2
    assert difference_interval(-1.0, loo) == (-2.0, pytest.approx(raw[1]))
    assert difference_interval(1.0, -loo) == (pytest.approx(-raw[1]), 2.0)


def test_two_judges_of_pass_fail_labels_are_compared_by_accuracy_in_compare_and_the_report(tmp_path):
    """Compare read a pass/fail aspect by the Pearson of its label codes ("pearson 0.208 against -0.064") beside an
    agreement table of accuracies; now B's accuracy minus A's, each the table's own, whatever metric is asked."""
    from helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 24)
    store = geval.Store(tmp_path / "store.sqlite")
    other = make_template(aspects=(("Verdict", 0, 1, "verdict"),), body="Reply:\n{{response}}\n\nForm:\n- Verdict:")
    geval.score(store, dataset.items, other, scripted(), dataset.name)
    a, b = (tuple(row) for row in store.combos(dataset.name)[["template_version", "signature"]].to_numpy())
    found = geval.compare(store, dataset.name, a, b, "verdict", metric="spearman")
    tables = [geval.agree(store, dataset.name, combo) for combo in (a, b)]
    assert found.metric == "accuracy" and math.isnan(found.williams_p)
    assert (found.a, found.b) == tuple(float(t.loc[t["metric"] == "accuracy", "value"].iloc[0]) for t in tables)
    assert found.difference == pytest.approx(found.b - found.a) and found.low <= found.difference <= found.high
    page = geval.reporting.report(store, dataset.name, baselines=()).markdown()
    assert "A: accuracy" in page and "A: pearson" not in page
    assert "Accuracy of each judge aspect against the people's majority" in page  # it said "Correlation ..."
    assert "Plot: accuracy against the people's majority, per aspect" in page  # and drew no bar
    store.set_human_side(dataset.name, "you")  # no label yet: a report all the same (the leaderboard raised
    assert geval.reporting.report(store, dataset.name, baselines=()).markdown()  # "No objects to concatenate")
    for k, item in enumerate(dataset.items[:12]):
        store.save_label(item.id, "verdict", k % 2)
    mine = geval.reporting.report(store, dataset.name, baselines=()).markdown()
    assert "## Agreement with your labels" in mine and "Accuracy of each judge aspect against your labels" in mine
    store.set_human_side(dataset.name, "people")
    worst = page[page.index("| item | system | judge | human |"):].split("\n\n")[0].splitlines()[2:]
    assert worst and {line.split("|")[c].strip() for line in worst for c in (3, 4)} <= {"fail", "pass"}  # not codes
