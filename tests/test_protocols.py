"""geval.protocols: the published protocols against hand computations and scipy; ties,
constant vectors (a clear "undefined", no crash) and groups of one item."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from geval.analysis.agreement import AVERAGE, MEAN_OF_ASPECTS, correlations, mean_of_aspects
from geval.analysis.correlation import Resamples, bootstrap, correlate, item_bootstrap
from geval.analysis.protocols import PROTOCOLS, ProtocolError, get_protocol, protocols_for
from geval.data.items import Turn, make_item

N_BOOT = 200


def apply(protocol: str, scores, items, **options) -> pd.DataFrame:
    """The one pipeline under a protocol named as the papers' tables are."""
    return correlations(scores, items, get_protocol(protocol), **options)

# SummEval-like documents: (judge scores, human scores) of each document's summaries.
DOCUMENTS = {
    **{f"d1-{k}": ([1, 2, 3, 4], [1, 3, 2, 4]) for k in range(4)},  # Spearman 0.8, Kendall 4/6
    **{f"d2-{k}": ([2, 2, 1, 3], [1, 2, 1, 3]) for k in range(4)},  # ties: Spearman 3.75/4.5, Kendall tau-b 4/5
    **{f"d3-{k}": ([1, 2, 3, 4], [4, 3, 2, 1]) for k in range(4)},  # -1, -1
    "d4": ([1, 2, 3], [2, 2, 2]),        # constant human scores: undefined, left out
    "d5": ([3, 1], [4, 2]),              # two summaries (always +-1): left out
}
# By hand (see the comments above): the mean over the twelve defined documents, four of each kind.
SPEARMAN_BY_HAND = (0.8 + 3.75 / 4.5 - 1) / 3
KENDALL_BY_HAND = (4 / 6 + 4 / 5 - 1) / 3
PEARSON_BY_HAND = (0.8 + 0.8528028654224418 - 1) / 3  # d2: sps.pearsonr([2,2,1,3],[1,2,1,3])


def summeval_case():
    items, scores = [], {}
    for doc, (judge, human) in DOCUMENTS.items():
        for position, (j, h) in enumerate(zip(judge, human)):
            item = make_item("summeval-synthetic", "summary", [], f"summary {doc}-{position}", grounding=f"doc {doc}",
                             system=f"s{position}", group=doc, human={"coherence": (float(h),)})
            items.append(item)
            scores[item.id] = float(j)
    return items, pd.DataFrame({"coherence": scores})


def by_metric(table: pd.DataFrame) -> dict[str, pd.Series]:
    return {row["metric"]: row for _, row in table.iterrows()}


def test_the_d2_pearson_used_by_hand_is_right():
    assert sps.pearsonr([2, 2, 1, 3], [1, 2, 1, 3]).statistic == pytest.approx(0.8528028654224418, abs=1e-12)


def test_summeval_per_document_protocol_equals_the_hand_computation():
    items, scores = summeval_case()
    table = apply("summeval-summary", scores, items, n_boot=N_BOOT)
    assert list(table["metric"]) == ["spearman", "kendall", "pearson"]
    rows = by_metric(table)
    assert rows["spearman"]["value"] == pytest.approx(SPEARMAN_BY_HAND, abs=1e-12)
    assert rows["kendall"]["value"] == pytest.approx(KENDALL_BY_HAND, abs=1e-12)
    assert rows["pearson"]["value"] == pytest.approx(PEARSON_BY_HAND, abs=1e-12)
    for row in rows.values():
        assert row["protocol"] == "summeval-summary" and row["level"] == "group"
        assert row["aspect"] == "coherence" and row["human"] == "coherence"
        assert row["n"] == 12  # documents averaged
        assert row["note"] == "2 of 14 groups left out (fewer than 3 items, or constant scores)"
        assert row["low"] <= row["value"] <= row["high"]


def test_summeval_per_document_equals_scipy_per_document_then_mean():
    rng = np.random.default_rng(3)
    items, scores = [], {}
    for doc in range(12):
        human = rng.integers(1, 6, 16) + rng.integers(0, 3, 16) / 3  # thirds, like SummEval's means
        judge = human + rng.normal(0, 1.5, 16)
        for system in range(16):
            item = make_item("s", "summary", [], f"{doc}-{system}", grounding="d", system=f"m{system}",
                             group=f"doc{doc}", human={"relevance": (float(human[system]),)})
            items.append(item)
            scores[item.id] = float(judge[system])
    table = apply("summeval-summary", pd.Series(scores), items, n_boot=N_BOOT)
    judge = np.array([scores[i.id] for i in items]).reshape(12, 16)
    human = np.array([i.human_mean("relevance") for i in items]).reshape(12, 16)
    expected = {"spearman": np.mean([sps.spearmanr(j, h).statistic for j, h in zip(judge, human)]),
                "kendall": np.mean([sps.kendalltau(j, h).statistic for j, h in zip(judge, human)])}
    rows = by_metric(table[table["human"] == "relevance"])
    for metric, value in expected.items():
        assert rows[metric]["value"] == pytest.approx(value, abs=1e-12)
    system = by_metric(apply("summeval-system", pd.Series(scores), items, n_boot=N_BOOT).query("human == 'relevance'"))
    # each system's people's mean in exact arithmetic (thirds), whose ties float sums may break by their order
    exact = [float(sum(Fraction(round(3 * h), 3) for h in column) / len(column)) for column in human.T]
    assert system["kendall"]["value"] == pytest.approx(sps.kendalltau(judge.mean(0), exact).statistic)
    assert system["pearson"]["n"] == 16


def test_a_series_is_compared_with_every_human_aspect_the_items_have():
    items, scores = summeval_case()
    items = [make_item(i.dataset, i.level, i.context, i.response, i.grounding, i.system, i.group,
                       {**i.human, "fluency": (float(len(i.response) % 3),)}) for i in items]
    table = apply("summeval-summary", pd.Series(scores["coherence"].to_numpy(), index=[i.id for i in items]), items,
                             n_boot=N_BOOT)
    assert list(dict.fromkeys(table["aspect"])) == ["coherence", "fluency"]


def usr_case(n_contexts: int = 12, per_context: int = 6, seed: int = 0):
    """Topical-Chat-like items with every USR aspect, and judge scores leaning on them."""
    rng = np.random.default_rng(seed)
    items, rows = [], {}
    for c in range(n_contexts):
        for r in range(per_context):
            human = {"Natural": tuple(rng.integers(1, 4, 3).astype(float)),
                     "Maintains Context": tuple(rng.integers(1, 4, 3).astype(float)),
                     "Engaging": tuple(rng.integers(1, 4, 3).astype(float)),
                     "Uses Knowledge": tuple(rng.integers(0, 2, 3).astype(float)),
                     "Overall": tuple(rng.integers(1, 6, 3).astype(float))}
            item = make_item("tc", "turn", [Turn("A", f"context {c}")], f"response {c}-{r}", grounding=f"fact {c}",
                             system=f"sys{r}", group=f"ctx-{c}", human=human)
            items.append(item)
            rows[item.id] = {
                "naturalness": float(np.mean(human["Natural"]) + rng.normal(0, 0.7)),
                "coherence": float(np.mean(human["Maintains Context"]) + rng.normal(0, 0.7)),
                "engagingness": float(rng.integers(1, 4)),  # ties
                "groundedness": float(np.mean(human["Uses Knowledge"]) + rng.normal(0, 0.3)),
            }
    return items, pd.DataFrame.from_dict(rows, orient="index")


def test_topicalchat_maps_the_usr_aspects_and_equals_scipy():
    items, scores = usr_case()
    table = apply("topicalchat-turn", scores, items, n_boot=N_BOOT)
    pearson = table[table["metric"] == "pearson"].set_index("aspect")
    assert list(pearson.index) == ["naturalness", "coherence", "engagingness", "groundedness"]
    assert list(pearson["human"]) == ["Natural", "Maintains Context", "Engaging", "Uses Knowledge"]
    assert set(table["level"]) == {"item"} and set(table["n"]) == {72}
    for aspect, human in zip(pearson.index, pearson["human"]):
        x = scores[aspect].to_numpy()
        y = np.array([i.human_mean(human) for i in items])
        for metric, fn in (("pearson", sps.pearsonr), ("spearman", sps.spearmanr), ("kendall", sps.kendalltau)):
            row = table[(table["aspect"] == aspect) & (table["metric"] == metric)].iloc[0]
            assert row["value"] == pytest.approx(fn(x, y).statistic, abs=1e-12)
            assert row["low"] < row["high"]


def test_columns_named_as_the_human_aspects_or_mapped_explicitly():
    items, scores = usr_case()
    renamed = scores.rename(columns={"naturalness": "natural", "coherence": "my-coherence"})
    table = apply("topicalchat-turn", renamed, items, humans={"my-coherence": "Maintains Context"}, n_boot=N_BOOT)
    assert list(dict.fromkeys(table["aspect"])) == ["naturalness", "coherence", "engagingness", "groundedness"]


def test_a_constant_judge_is_undefined_with_a_note_and_no_crash():
    items, scores = usr_case()
    scores["naturalness"] = 2.0
    table = apply("topicalchat-turn", scores, items, n_boot=N_BOOT)
    rows = table[table["aspect"] == "naturalness"]
    assert len(rows) == 3
    assert rows["value"].isna().all() and rows["low"].isna().all() and rows["high"].isna().all()
    assert set(rows["note"]) == {"undefined: the judge gives every item the same score"}
    other = table[table["aspect"] == "coherence"]
    assert other["value"].notna().all() and (other["note"] == "").all()


def test_unscored_items_are_dropped_and_counted():
    items, scores = usr_case()
    scores.iloc[:5, 0] = np.nan
    rows = apply("topicalchat-turn", scores, items, n_boot=N_BOOT).query("aspect == 'naturalness'")
    assert set(rows["n"]) == {67} and set(rows["unscored"]) == {5}


def test_groups_of_one_item_still_give_item_level_intervals():
    items, scores = usr_case(n_contexts=30, per_context=1)
    table = apply("topicalchat-turn", scores, items, n_boot=N_BOOT)
    assert table.query("aspect == 'naturalness' and metric == 'pearson'")["low"].notna().all()


def test_dstc9_system_level_is_the_correlation_of_system_means():
    rng = np.random.default_rng(1)
    items, scores = [], {}
    for d in range(40):
        human = float(rng.integers(4, 16) / 3)
        item = make_item("dstc9", "dialogue", [Turn("User", f"hi {d}")], f"bye {d}", system=f"sys{d % 4}",
                         group=f"dlg-{d:04d}", human={"overall": (human,)})
        items.append(item)
        scores[item.id] = human + rng.normal(0, 1)
    table = apply("dstc9-system", pd.Series(scores), items, n_boot=N_BOOT)
    frame = pd.DataFrame({"judge": [scores[i.id] for i in items], "human": [i.human_mean("overall") for i in items],
                          "system": [i.system for i in items]}).groupby("system").mean()
    row = table.query("metric == 'pearson'").iloc[0]
    assert row["value"] == pytest.approx(sps.pearsonr(frame["judge"], frame["human"]).statistic, abs=1e-12)
    assert row["n"] == 4 and row["level"] == "system"


SCALES = {"naturalness": (1, 3), "coherence": (1, 3), "engagingness": (1, 3), "groundedness": (0, 1)}


def mean_vs_overall(scores, items, scales, protocol="topicalchat-turn", **options) -> pd.DataFrame:
    mean = mean_of_aspects(scores, scales)
    return apply(protocol, mean.to_frame(), items, humans={MEAN_OF_ASPECTS: "Overall"}, **options)


def test_mean_vs_overall_by_hand_maps_each_aspect_onto_its_scale():
    items, scores = usr_case()
    overall = np.array([i.human_mean("Overall") for i in items])
    four = ["naturalness", "coherence", "engagingness", "groundedness"]
    scaled = mean_vs_overall(scores, items, SCALES, n_boot=N_BOOT).query("metric == 'pearson'").iloc[0]
    assert scaled["aspect"] == "mean of aspects" and scaled["human"] == "Overall"
    by_hand = sum((scores[a] - SCALES[a][0]) / (SCALES[a][1] - SCALES[a][0]) for a in four) / 4
    assert scaled["value"] == pytest.approx(sps.pearsonr(by_hand, overall).statistic, abs=1e-12)
    raw = sps.pearsonr(scores[four].mean(axis=1), overall).statistic  # the raw mean: another number
    assert scaled["value"] != pytest.approx(raw)


def test_mean_vs_overall_needs_overall():
    items, scores = summeval_case()
    with pytest.raises(ProtocolError, match=r"no score column \(mean of aspects\) maps to a human aspect \(coherence\)"):
        mean_vs_overall(scores, items, {"coherence": (1, 5)}, protocol="summeval-summary")


def test_average_over_aspects_is_the_mean_of_the_aspect_correlations():
    items, scores = usr_case()
    table = apply("topicalchat-turn", scores, items, n_boot=N_BOOT, average=True).query("metric == 'pearson'")
    average = table[table["aspect"] == AVERAGE].iloc[0]
    aspects = table[table["aspect"] != AVERAGE]
    assert average["value"] == pytest.approx(aspects[aspects["human"] != "Overall"]["value"].mean(), abs=1e-12)
    assert average["aspect"] == "average" and average["n"] == 72
    assert average["low"] < average["value"] < average["high"]
    items, scores = summeval_case()
    summary = apply("summeval-summary", scores, items, n_boot=N_BOOT, average=True)
    assert AVERAGE not in set(summary["aspect"])  # G-EVAL's average is of item-level correlations only


def test_errors_name_the_problem():
    items, scores = usr_case()
    with pytest.raises(ProtocolError, match="protocol 'usr' is unknown; use one of topicalchat-turn"):
        apply("usr", scores, items)
    with pytest.raises(ProtocolError, match="FED, turn level: no score column \\(naturalness, coherence"):
        fed_item = make_item("f", "turn", [], "x", human={"Fluent": (1.0,)})
        apply("fed-turn", pd.DataFrame({"naturalness": [1.0], "coherence": [2.0]}, index=[fed_item.id]), [fed_item])
    with pytest.raises(ProtocolError, match="none of the 72 items is at summary level"):
        apply("summeval-summary", scores, items)
    with pytest.raises(ProtocolError, match="no scored item is one of the 72 turn-level items"):
        apply("topicalchat-turn", pd.Series({"nope": 1.0}), items)


@pytest.mark.parametrize("layout, name, levels, expected", [
    ("usr", "tc_usr_data", ["turn"], ["topicalchat-turn"]),
    ("usr", "personachat_usr_sample", ["turn"], ["personachat-turn"]),
    ("usr", "pc_usr_data", ["turn"], ["personachat-turn"]),
    ("fed", "fed_data", ["turn", "dialogue"], ["fed-turn", "fed-dialogue"]),
    ("fed", "fed_data", ["dialogue"], ["fed-dialogue"]),
    ("summeval", "summeval", ["summary"], ["summeval-summary", "summeval-system"]),
    ("dstc9", "dstc9_data", ["dialogue"], ["dstc9-dialogue", "dstc9-system"]),
    ("table", "mine", ["turn"], []),
])
def test_protocols_for_a_dataset(layout, name, levels, expected):
    assert [p.name for p in protocols_for(layout, name, levels)] == expected


def test_every_protocol_names_its_source_and_a_primary_metric_it_computes():
    for protocol in PROTOCOLS.values():
        assert protocol.reference and protocol.primary in protocol.metrics
        assert protocol.aspects and protocol.title and protocol.item_level in ("turn", "dialogue", "summary")


# --- the additions to geval.stats used by the protocols --------------------------------------


@pytest.mark.parametrize("metric", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("seed", range(3))
def test_the_vectorized_bootstrap_equals_each_resample_computed_alone(metric, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.integers(1, 4, 40).astype(float), rng.integers(1, 6, 40).astype(float)  # ties
    resamples = Resamples(np.repeat(np.arange(10), 4), n_boot=60, seed=seed)
    alone = [correlate(metric, x[resamples.rows(b)], y[resamples.rows(b)]) for b in range(60)]
    assert item_bootstrap(x, y, resamples, (metric,))[metric] == pytest.approx(alone, abs=1e-12, nan_ok=True)


def test_agreement_leaves_out_whole_groups_and_the_bootstrap_draws_whole_groups():
    from geval.analysis.correlation import agreement, jackknife_interval

    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    groups = np.repeat(np.arange(10), 3)
    left_out = np.array([correlate("pearson", x[groups != g], y[groups != g]) for g in range(10)])
    item = next(r for r in agreement(x, y, groups, levels=("item",)) if r.metric == "pearson")
    assert (item.low, item.high) == pytest.approx(jackknife_interval(item.value, left_out), abs=1e-12)
    low, high = bootstrap(lambda rows: correlate("pearson", x[rows], y[rows]), Resamples(groups, 300, seed=4))
    assert low < item.value < high
    sizes = []
    bootstrap(lambda rows: sizes.append(len(rows)) or 0.0, Resamples(groups, 20))
    assert set(sizes) == {30}  # ten groups of three drawn each time
    assert all(np.isnan(v) for v in bootstrap(lambda rows: float("nan"), Resamples(groups, 20)))


@pytest.mark.parametrize("seed", range(3))
def test_the_fast_item_level_path_equals_stats_agreement(seed):
    from geval.analysis.correlation import agreement

    items, scores = usr_case(seed=seed)
    scores.iloc[:4, 0] = np.nan
    table = apply("topicalchat-turn", scores, items, n_boot=300, seed=seed).query("aspect == 'naturalness'")
    human = np.array([i.human_mean("Natural") for i in items])
    expected = {r.metric: r for r in agreement(scores["naturalness"].to_numpy(), human, [i.group for i in items],
                                               levels=("item",), n_boot=300, seed=seed)}
    for _, row in table.iterrows():
        want = expected[row["metric"]]
        assert (row["value"], row["low"], row["high"], row["n"]) == pytest.approx(
            (want.value, want.low, want.high, want.n), abs=1e-12)


def test_a_subset_of_metrics():
    items, scores = usr_case()
    table = apply("topicalchat-turn", scores, items, n_boot=50, metrics=("pearson",))
    assert set(table["metric"]) == {"pearson"}
