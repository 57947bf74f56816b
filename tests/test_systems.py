"""Systems as people would score them (issue 39): the estimator checked against the reference
implementation of PPI (ppi-python) and known answers, comparisons and ranks, what the CLI prints and
what bad input says (the intervals' coverage and the judges' worth: tests/test_systems_statistics.py)."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

import geval
from geval.decisions import betting
from geval.decisions.systems import TOGETHER, SystemsError, means, more_labels
from geval.decisions.worth import effective_labels
from tests.helpers import run_cli


def test_the_estimate_equals_the_reference_implementation():
    ppi = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(0)
    everywhere = rng.integers(1, 6, 300).astype(float)
    labeled = rng.choice(300, 40, replace=False)
    y = np.clip(everywhere[labeled] + rng.normal(0, 1, 40), 1, 5)
    # the app's point estimate: PPI++ with its own (pooled, ridge) coefficient, here given as lam
    population = pd.DataFrame({"system": "", "group": [f"g{i}" for i in range(300)], "human": np.nan,
                               "judge": everywhere}, index=[f"i{i}" for i in range(300)])
    population.loc[population.index[labeled], "human"] = y
    found = means(population, list(population.index[labeled]), ["judge"], (1, 5))
    beta = betting.sequential_fit(_final(population, labeled))[:, -1, 0][0]
    reference = float(np.ravel(ppi.ppi_mean_pointestimate(y, everywhere[labeled], everywhere, lam=beta))[0])
    row = found.table.iloc[0]
    assert row["combined_low"] <= row["combined"] <= row["combined_high"]
    assert row["combined"] == pytest.approx(float(np.clip(reference, row["combined_low"], row["combined_high"])),
                                            abs=1e-9)


def _final(population: pd.DataFrame, labeled: np.ndarray) -> betting.Draws:
    """The draws of `means` for one system with a position after the last label (its final fit)."""
    judge = population["judge"].to_numpy(float)
    centred = judge - judge.mean()
    return betting.Draws(np.append(population["human"].to_numpy(float)[labeled], np.nan)[None],
                         np.append(centred[labeled], 0.0)[None, :, None], centred[None, :, None],
                         np.array([len(judge)]), np.zeros(1, int), (1.0, 5.0))


def test_a_judge_of_a_few_items_is_said_so_in_the_judges_table():
    """A judge that scored 6 of 40 items was listed beside one of every item ("labels 40 … Pearson within systems
    -0.34") with nothing in the table saying its other 34 were read as its systems' means."""
    population = _population(per=10).assign(few=np.nan)
    population.loc[population.index[:6], "few"] = population["judge"].iloc[:6]
    order = [f"s{s}d{d}" for d in range(5) for s in range(3)]
    found = means(population, order, ["judge", "few"], (1, 5))
    table = geval.reporting.worth_table(found).set_index("judge")
    assert table["items it scored"].to_dict() == {
        "judge": "all 30", "few": "6 of 30 (the rest read as its system's mean)", TOGETHER: "all 30"}  # one at least
    assert "items it scored" not in geval.reporting.worth_table(means(population, order, ["judge"], (1, 5)))


def _population(n_systems: int = 3, per: int = 30, seed: int = 0, step: float = 0.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_systems):
        for d in range(per):
            truth = np.clip(rng.normal(2.5 + step * s, 1), 1, 5)
            rows.append({"id": f"s{s}d{d}", "system": f"S{s}", "group": f"d{d}", "human": round(truth),
                         "judge": truth + rng.normal(0, 0.5), "constant": 3.0})
    return pd.DataFrame(rows).set_index("id")


def test_every_item_labeled_gives_the_exact_mean_and_a_constant_judge_buys_nothing():
    population = _population()
    order = list(population.sample(frac=1, random_state=1).index)
    found = means(population, order, ["judge", "constant"], (1, 5))
    exact = population.groupby("system")["human"].mean()
    for row in found.table.itertuples():  # sampling without replacement: all N drawn, the mean is known
        assert row.people_low <= exact[row.system] <= row.people_high
        assert row.people_high - row.people_low < 1e-9
    constant = means(population, order[:45], ["constant"], (1, 5))
    assert np.allclose(constant.table["combined_low"], constant.table["people_low"])
    assert np.allclose(constant.table["combined_high"], constant.table["people_high"])
    worth = constant.worth.iloc[0]  # it removes none of the people's variance: worth its labels, exactly
    assert (worth["effective"], worth["saved"], worth["ratio"]) == (45, 0.0, 1.0)
    assert (worth["effective_low"], worth["effective_high"]) == (45, 45)


def test_documents_labeled_together_are_compared_paired_and_ranked():
    population = _population(per=60, step=1.0)
    documents = [f"d{d}" for d in np.random.default_rng(2).permutation(60)[:25]]
    order = [f"s{s}d{d[1:]}" for d in documents for s in range(3)]
    found = means(population, order, ["judge"], (1, 5), "Overall")
    assert found.paired and set(found.differences["documents"]) == {25}
    assert list(found.ranking["system"]) == ["S2", "S1", "S0"]
    lines = found.sentences(adjacent=True)
    assert len(lines) == 2 and all("by people's standard" in line for line in lines)
    # three systems: every pair by default (the first against the last was named in no sentence)
    assert found.sentences() == found.sentences(adjacent=False) and len(found.sentences()) == 3
    assert any(line.startswith("S2 is rated higher than S0") for line in found.sentences())


def test_bad_input_gets_one_line():
    population = _population()
    with pytest.raises(SystemsError, match="no item has people's scores"):
        means(population, [], ["judge"], (1, 5))
    with pytest.raises(SystemsError, match=r"too few labels: at most 4 of one system \(S0\); an interval needs 5"):
        means(population, [f"s0d{d}" for d in range(4)], ["judge"], (1, 5))
    unscored = population.assign(judge=np.where(population.index.str.startswith("s0d"), np.nan, population["judge"]))
    with pytest.raises(SystemsError, match="scored none of the 5 items whose people's scores are read as labels "
                                           r"\(it scored 60 of the 90 items\): .*score every item with it"):
        means(unscored, [f"s0d{d}" for d in range(5)], ["judge"], (1, 5))
    one = population.assign(system="")
    found = means(one, list(one.index[:20]), ["judge"], (1, 5))
    assert any("no systems" in note for note in found.notes) and len(found.table) == 1 and found.differences.empty


def test_effective_labels_and_more_labels_follow_sampling_without_replacement():
    assert effective_labels(np.array([10]), np.array([100]), 1.0) == 10  # a judge that leaves all the variance
    assert effective_labels(np.array([10]), np.array([100]), 0.0) == pytest.approx(100)  # one that leaves none
    # half the variance left: (1/n' − 1/N) = (1/10 − 1/100) / 2
    assert effective_labels(np.array([10, 20]), np.array([100, 100]), 0.5) == pytest.approx(1 / 0.055 + 1 / 0.03)
    row = pd.Series({"labeled": 10, "items": 100, "combined_low": 3.0, "combined_high": 4.0})
    more = more_labels(row)  # ±0.5 now; ±0.1 needs (1/n − 1/N) 25 times smaller
    assert more == int(np.ceil(1 / ((0.2 / 1.0) ** 2 * (0.1 - 0.01) + 0.01))) - 10
    assert more_labels(pd.Series({**row, "combined_low": 3.45, "combined_high": 3.55})) == 0


def test_the_where_a_label_buys_most_order_draws_uncertain_items_first_more_often():
    ids = [f"i{k}" for k in range(200)]
    spread = pd.Series([2.0 if k < 20 else 0.1 for k in range(200)], index=ids)
    firsts = [geval.labeling.order(ids, "uncertain", seed, spread=spread)[:20] for seed in range(30)]
    share = np.mean([sum(i in set(ids[:20]) for i in first) / 20 for first in firsts])
    assert share > 0.25  # a tenth of the items, drawn several times more often than at random
    assert sorted(firsts[0]) != sorted(geval.labeling.order(ids, "random", 0)[:20])


def test_cli_prints_people_only_combined_and_effective_labels(tmp_path, shared_file):
    llms = shared_file("alttest/summeval/llm_annotations.json")
    store = str(tmp_path / "s.sqlite")
    assert run_cli("datasets", "load", "summeval_sample", "--store", store).returncode == 0
    assert run_cli("judge", "import", str(llms), "--dataset", "summeval_sample", "--only-known", "--store",
                   store).returncode == 0
    done = run_cli("systems", "summeval_sample", "--aspect", "coherence", "--judge", "gpt-4o", "--labels", "6",
                   "--store", store)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "people only" in out and "combined" in out and "effective labels" in out and "judge alone (biased)" in out
    assert "combined with gpt-4o (imported" in out and "by people's standard" in out
    # each judge's Pearson within systems and advantage probability beside the labels it saves, and what the
    # sentences' intervals are
    assert re.search(r"^ +gpt-4o \(imported from llm_annotations\.json\) +48 .*%  +-?0\.\d\d +0\.\d\d$", out,
                     re.MULTILINE), out
    assert "Each comparison's interval is 95% for that pair alone; the ranks hold for all 28 pairs together" in out
    assert ("Below 0 saved: the labels alone do better than with the judge." in out) == bool(
        re.search(r" -[1-9]\d*% ", out))
    few = run_cli("systems", "summeval_sample", "--aspect", "coherence", "--labels", "3", "--store", store)
    assert few.returncode == 2 and few.stderr.strip().count("\n") == 0
    assert "too few labels: at most 3 of one system" in few.stderr


# --- what a new user met in a browser trial (the systems feature's defects) -------------------------


def _personachat(tmp_path, judges: dict[str, float]) -> tuple[geval.Store, list]:
    """The bundled PersonaChat sample (5 systems x 10 dialogues, people scored every item) with one
    imported judge per entry of `judges`: the people's Natural plus noise of that sd, rounded to 1-3."""
    store = geval.Store(tmp_path / "s.sqlite")
    items = geval.load_dataset("personachat_usr_sample", store=store).items
    rng = np.random.default_rng(0)
    for name, noise in judges.items():
        table = tmp_path / f"{name}.csv"
        table.write_text("item_id,Natural\n" + "".join(
            f"{i.id},{int(np.clip(round(i.human_mean('Natural') + rng.normal(0, noise)), 1, 3))}\n" for i in items))
        geval.alttest.import_judge(store, "personachat_usr_sample", table, name)
    return store, items


def test_labels_drawn_by_default_stay_below_the_items_and_every_item_labeled_says_so(tmp_path):
    """PersonaChat's sample has 10 items per system: the default 20 labeled them all, the intervals had
    no width ("10 of 10, 2.67 [2.67, 2.67]", effective labels "50 [50, 50]") and the caption still said
    "20 labels per system drawn (a document at a time ...)"."""
    from geval.decisions.systems import default_labels
    from geval.reporting import worth_table

    assert default_labels([10] * 5) == 5 and default_labels([100] * 16) == 20 and default_labels([3, 40]) == 5
    store, items = _personachat(tmp_path, {"gpt-x": 0.6})
    half = geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=default_labels([10] * 5),
                                       design="documents", items=items)
    assert half.table["labeled"].eq(5).all() and (half.table["people_high"] > half.table["people_low"]).all()
    assert half.notes[0].startswith("5 dialogues drawn at random, every system's item of each (5 labels per system), "
                                    "from the dataset's own scores")
    every = geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=10,
                                        design="documents", items=items)
    assert any(n.startswith("every item of every system is labeled: these are the people's own means, not estimates")
               for n in every.notes)
    assert worth_table(every)["effective labels"].str.contains("every item labeled").all()
    shown = geval.reporting.systems_table(every)  # its own means: "2.67", not "2.67 [2.67, 2.67]"
    assert shown["people only"].tolist() == [f"{v:.2f}" for v in every.table["people"]]
    assert not shown["combined"].str.contains(r"\[").any()


def test_a_judge_that_scored_no_labeled_item_is_left_out_of_the_worth_not_the_estimate():
    """`geval systems mychat --judge myjudge` failed with "nolabels ... scored none of the 10 labeled
    items": one judge without a score where people labeled blocked the estimate of every other."""
    population = _population().assign(nolabels=np.nan)
    population.loc[["s0d29", "s1d29"], "nolabels"] = 3.0  # two items nobody labeled
    order = [f"s{s}d{d}" for d in range(10) for s in range(3)]
    found = means(population, order, ["judge", "nolabels"], (1, 5))
    assert list(found.worth["judge"]) == ["judge"] and found.judge == "judge"
    assert any(note.startswith("left out of the judges' worth: nolabels, which scored none of the 30 items whose "
                               "people's scores are read as labels")
               for note in found.notes)
    with pytest.raises(SystemsError, match="nolabels scored none of the 30 items whose people's scores are read"):
        means(population, order, ["nolabels", "judge"], (1, 5))  # the chosen judge itself: the error stays


def test_a_sentence_told_apart_for_its_pair_alone_says_the_ranks_do_not_tell_it():
    """With --all-pairs, "M17 is rated higher than M11 ... +2.16 [+0.98, +2.82]" stood beside "may rank
    1-16" for both, and nothing said the sentences' intervals are per pair, the ranks' for all together."""
    from geval.decisions.systems import SystemMeans

    ranking = pd.DataFrame({"system": ["A", "B", "C"], "combined": [4.0, 3.0, 2.9]})
    differences = pd.DataFrame({"a": ["A", "A", "B"], "b": ["B", "C", "C"], "difference": [1.0, 1.1, 0.1],
                                "low": [0.2, 0.3, -0.5], "high": [1.8, 1.9, 0.7],
                                "simultaneous_low": [-0.1, 0.05, -0.8], "simultaneous_high": [2.1, 2.0, 1.0]})
    found = SystemMeans("Overall", (1, 5), "judge", pd.DataFrame(), differences, ranking, pd.DataFrame(), True)
    lines = found.sentences(adjacent=False)
    assert lines[0] == ("A is rated higher than B on Overall by people's standard: +1.00 [+0.20, +1.80]; for all 3 "
                        "pairs together [-0.10, +2.10], which holds 0: the ranks do not tell these two apart")
    assert lines[1].endswith("+1.10 [+0.30, +1.90]")  # apart for all pairs together too: nothing to add
    assert lines[2].startswith("No clear difference between B and C")
    assert found.pairs_line().startswith("Each comparison's interval is 95% for that pair alone; the ranks hold for "
                                         "all 3 pairs together")


def test_the_judges_table_reads_the_advantage_by_combination_and_aspect_under_a_short_name(tmp_path):
    """The worth table named judges "<label>: natural" and looked up the alternative annotator test's
    "<label>": its advantage probability column was always "–"."""
    from geval.reporting import judge_names, saved_line, worth_table

    store, items = _personachat(tmp_path, {"gpt-x": 0.6, "gpt-y": 2.0})
    result = geval.labeling.system_means(store, "personachat_usr_sample", "Natural", per_system=5,
                                         design="documents", items=items)
    advantage = {(r.judge, r.aspect): r.advantage_probability for r in geval.alttest.run(store, "personachat_usr_sample")}
    shown = worth_table(result, advantage, judge_names(store, "personachat_usr_sample")).set_index("judge")
    assert {"gpt-x (imported from gpt-x.csv)", "gpt-y (imported from gpt-y.csv)", "all judges together"} == \
        set(shown.index)
    for name in ("gpt-x", "gpt-y"):
        label = f"{name} (imported from {name}.csv)"
        assert shown.loc[label, "advantage probability"] == f"{advantage[(label, 'Natural')]:.2f}"
    assert "judge in full" not in shown  # "<label>: natural" would add the aspect alone, in a column cut at the edge
    assert shown.loc["all judges together", "advantage probability"] == "–"
    unread = worth_table(result, {key: math.nan for key in advantage})["advantage probability"]  # a test not read
    assert sorted(unread) == ["n/a", "n/a", "–"]  # never "nan"
    few = result.worth.assign(effective_low=math.nan, effective_high=math.nan)  # below 10 labeled groups
    assert worth_table(geval.labeling.SystemMeans(**{**vars(result), "worth": few}))["effective labels"].str.endswith(
        " (no interval: 10 labeled groups needed)").all()
    negative = result.worth.assign(saved=-0.2)
    line = saved_line(geval.labeling.SystemMeans(**{**vars(result), "worth": negative}))
    assert line == ("Below 0 saved: the labels alone do better than with the judge. It explains about none of "
                    "people's scores within a system, less than the weight fitted to it costs; a judge saves the more "
                    "labels the more of them it explains.")
    assert saved_line(geval.labeling.SystemMeans(**{**vars(result), "worth": result.worth.assign(saved=0.1)})) == ""


def test_a_categorical_aspect_is_left_out_saying_a_mean_needs_scores(tmp_path, shared_file):
    """`geval systems wax` printed "label (0-16): the mean people would give each system ... 7.84 [5.72,
    9.92]": the mean of 17 relation types' codes."""
    folder = shared_file("alttest/wax/human_annotations.json").parent
    store = str(tmp_path / "s.sqlite")
    assert run_cli("datasets", "load", str(folder), "--store", store).returncode == 0
    assert run_cli("judge", "import", str(folder / "llm_annotations.json"), "--dataset", "wax", "--name", "gpt-4o",
                   "--store", store).returncode == 0
    done = run_cli("systems", "wax", "--store", store)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stdout
    assert "label is categorical (17 categories: " in done.stderr and "a mean needs scores" in done.stderr
    assert "[" not in done.stdout
    from geval.reporting.systems import systems_section

    blocks = systems_section(geval.Store(store), "wax", lambda _: None, figures=False)
    said = [getattr(b, "text", "") for b in blocks]
    assert any("label is categorical" in t for t in said) and not any(type(b).__name__ == "Table" for b in blocks)


def test_a_dataset_without_systems_says_what_was_drawn_and_the_ranking_shows_labels_saved(tmp_path):
    """On an annotations folder (no systems) `geval systems` said "no systems" under "20 labels per
    system drawn (a document at a time ...)"; and `geval alttest` ranked judges without the labels saved."""
    rng = np.random.default_rng(1)
    truth = rng.integers(1, 6, 60)
    people = {f"e{k}": {f"i{n}": int(np.clip(t + rng.integers(-1, 2), 1, 5)) for n, t in enumerate(truth)}
              for k in range(3)}
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "human_annotations.json").write_text(json.dumps(people))
    (folder / "llm_annotations.json").write_text(json.dumps(
        {"judge-a": {f"i{n}": int(np.clip(t + rng.integers(-1, 2), 1, 5)) for n, t in enumerate(truth)}}))
    store = str(tmp_path / "s.sqlite")
    done = run_cli("systems", str(folder), "--store", store)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "the mean people would give the whole dataset (no systems)" in out
    assert "20 items drawn at random, from the dataset's own scores (seed 0): the people's mean over all 60 items" in out
    assert "per system" not in out and "a document at a time" not in out and "each system" not in out
    ranked = run_cli("alttest", "plain", "--brief", "--store", store)
    assert ranked.returncode == 0, ranked.stderr
    assert "labels saved" in ranked.stdout and "Labels saved: of the labels each system's mean needs" in ranked.stdout


def test_unpaired_differences_read_the_draws_with_their_sampling_weights():
    """Where a label buys most, the systems' documents differ and the differences were read from the
    draws as if drawn at random: system A's 5s, drawn nine times as often as its 1s, made A − B's 95%
    interval [+1.61, +3.07] while the people's difference over every item is +1.00."""
    from geval.decisions.systems import weighted_order

    rows, weight = [], {}
    for system in ("A", "B"):
        for n in range(100):
            score = (5 if n % 2 else 1) if system == "A" else 2
            rows.append({"id": f"{system}{n}", "system": system, "group": f"{system}-d{n}", "human": score,
                         "judge": score + n % 3 - 1})
            weight[f"{system}{n}"] = 9.0 if system == "A" and n % 2 else 1.0
    population, weights = pd.DataFrame(rows).set_index("id"), pd.Series(weight)
    order = [i for s in ("A", "B") for i in weighted_order(list(population.index[population["system"] == s]),
                                                           weights, seed=1)[:30]]
    found = means(population, order, ["judge"], (1, 5), weights=weights)
    assert not found.paired
    truth = found.table.set_index("system")["truth"]
    pair = found.differences.iloc[0]
    assert (pair.a, pair.b) == ("A", "B")
    assert pair.low <= truth["A"] - truth["B"] <= pair.high
    assert pair.simultaneous_low <= truth["A"] - truth["B"] <= pair.simultaneous_high


def test_the_judge_alone_is_shown_on_the_people_s_scale_when_its_template_has_another(tmp_path):
    """A 1-9 judge's own mean was plotted on the people's 1-3 axis (off it, beyond 3) under "judge alone": it is
    mapped end to end onto the people's scale, and the table and legend say so."""
    from tests.helpers import REPO, make_template, scripted

    store = geval.Store(tmp_path / "s.sqlite")
    dataset = geval.load_dataset(REPO / "data" / "personachat_usr_sample.json", store=store)
    geval.score(store, dataset.items, make_template(aspects=(("Naturalness", 1, 9, "Natural"),)), scripted(),
                dataset.name)
    result = geval.labeling.system_means(store, dataset.name, "Natural", per_system=5, design="documents")
    own = result.table["judge"]
    assert result.judge_scale == (1, 9) and result.scale == (1, 3) and own.max() > 3  # off the people's axis
    np.testing.assert_allclose(result.judge_alone(), 1 + (own - 1) / 8 * 2)
    words = "judge alone (biased; its 1-9 mapped onto the people's 1-3)"
    assert result.judge_alone_words() == words
    shown = geval.reporting.systems_table(result)
    assert list(shown[words]) == [f"{v:.2f}" for v in result.judge_alone()]
    forest = geval.reporting.systems_forest(result)
    cross = next(t for t in forest.data if t.name == words)
    # the legend below the axis' title with a line per entry: on one system's plot it overlapped the axis
    assert forest.layout.legend.yanchor == "top" and forest.layout.legend.y < 0
    assert forest.layout.margin.b >= 22 * len(forest.data) + 40
    np.testing.assert_allclose(list(cross.x), list(result.judge_alone())[::-1])
    same = geval.labeling.system_means(store, dataset.name, "Natural", per_system=5, design="documents")
    same.judge_scale = same.scale  # a judge on the people's own scale: as it was
    assert same.judge_alone_words() == "judge alone (biased)" and same.judge_alone().equals(own)


def test_more_labels_for_a_narrow_interval_say_every_item_left_where_it_takes_all(tmp_path):
    """Half of each system's 10 items labeled, intervals about ±0.4 wide: "more labels for ±0.10" read "about 5", as
    if 5 would do; it takes every item left. Where fewer do, the count; where reached or all labeled, so."""
    from tests.helpers import REPO, make_template, scripted

    store = geval.Store(tmp_path / "s.sqlite")
    dataset = geval.load_dataset(REPO / "data" / "personachat_usr_sample.json", store=store)
    geval.score(store, dataset.items, make_template(), scripted(), dataset.name)
    result = geval.labeling.system_means(store, dataset.name, "Natural", per_system=5, design="documents")
    assert set(geval.reporting.systems_table(result)["more labels for ±0.10"]) == {"all 5 left, then exact"}
    labeled = geval.labeling.system_means(store, dataset.name, "Natural", per_system=10, design="documents")
    assert set(geval.reporting.systems_table(labeled)["more labels for ±0.10"]) == {"all labeled"}


def test_labels_drawn_from_your_labels_say_so(tmp_path):
    """With your labels as the human side, the systems' section drew its labels from them but said "20 items drawn at
    random, from the dataset's own scores"."""
    from helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 40)
    store = geval.Store(tmp_path / "store.sqlite")
    for k, item in enumerate(dataset.items[:24]):
        store.save_label(item.id, "verdict", int(k * 7 % 3 == 0))
    store.set_human_side("verdicts", "you")
    found = geval.labeling.system_means(store, "verdicts", "verdict", per_system=20, design="random")
    assert found.notes[0].startswith("20 items drawn at random, from your labels (seed 0)"), found.notes
    assert found.source == "your labels"


def test_a_system_the_judge_scored_none_of_reads_na_with_why_not_nan(tmp_path):
    """Five items judged, all of one dialogue: the table's "judge alone" read "nan" for the system whose items the
    judge never saw (a new user's first run); it says so."""
    from tests.helpers import scripted

    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset("topicalchat_usr_sample", store=store)
    template = geval.Template.load("topicalchat-engagingness")
    for group in dataset.groups:  # the first dialogue whose items the drawn labels include
        geval.score(store, [item for item in dataset.items if item.group == group][:5], template, scripted(),
                    dataset.name)
        try:
            result = geval.labeling.system_means(store, dataset.name, "Engaging", per_system=5, design="documents")
            break
        except geval.GevalError:
            continue
    column = geval.reporting.systems.systems_table(result)["judge alone (biased)"]
    unjudged = result.table["judge"].isna().to_numpy()
    assert unjudged.any() and not unjudged.all()
    assert (column[unjudged] == "n/a: none of its items judged").all() and "nan" not in column.tolist()


def test_a_declared_scale_nobody_used_the_low_end_of_is_the_people_s_scale_in_inspect_and_the_systems(tmp_path):
    """People scored 2-5 on a file declared 1-5: Inspect's common 0-1 scale, the plots' axes and the systems' section
    read 2-5 (a people's 2 drawn at 0, the judge's 1-5 "mapped onto the people's 2-5") while How the judge errs said
    1-5. The declared scale is the people's scale everywhere."""
    from tests.helpers import make_items, make_template, scripted

    items = make_items(36, dataset="own", human="Natural")
    for n, item in enumerate(items):  # 2-5: nobody gave 1
        item.human["Natural"] = (2.0 + n % 4, 2.0 + (n * 3) % 4)
    store = geval.Store(tmp_path / "s.sqlite")
    store.save_dataset(geval.Dataset("own", "own.csv", "table", items, scales={"Natural": (1.0, 5.0)}))
    geval.score(store, items, make_template(aspects=(("Naturalness", 1, 5, "Natural"),)), scripted(), "own")
    frame = geval.disagreements(store, "own")
    assert set(frame["human_min"]) == {1.0} and set(frame["human_max"]) == {5.0}
    np.testing.assert_allclose(frame["human_01"], (frame["human_score"] - 1) / 4)
    result = geval.labeling.system_means(store, "own", "Natural", per_system=6, design="documents")
    assert result.scale == (1, 5) and result.judge_alone_words() == "judge alone (biased)"
    undeclared = geval.Store(tmp_path / "u.sqlite")  # without the declaration: the scores' own range, as before
    undeclared.save_dataset(geval.Dataset("own", "own.csv", "table", items))
    geval.score(undeclared, items, make_template(aspects=(("Naturalness", 1, 5, "Natural"),)), scripted(), "own")
    assert set(geval.disagreements(undeclared, "own")["human_min"]) == {2.0}
    assert geval.labeling.system_means(undeclared, "own", "Natural", per_system=6, design="documents").scale == (2, 5)


def test_more_labels_asked_than_documents_say_how_many_were_drawn(tmp_path):
    """--labels 100 on 10 documents said "100 documents drawn at random … (100 labels per system)"."""
    from tests.helpers import REPO, make_template, scripted

    store = geval.Store(tmp_path / "s.sqlite")
    dataset = geval.load_dataset(REPO / "data" / "personachat_usr_sample.json", store=store)
    geval.score(store, dataset.items, make_template(), scripted(), dataset.name)
    result = geval.labeling.system_means(store, dataset.name, "Natural", per_system=100, design="documents")
    assert result.notes[0].startswith("10 dialogues drawn at random (all there are; 100 asked), every system's item "
                                      "of each (10 labels per system)")
    asked = geval.labeling.system_means(store, dataset.name, "Natural", per_system=5, design="documents")
    assert asked.notes[0].startswith("5 dialogues drawn at random, every system's item of each (5 labels per system)")


def test_labels_per_system_count_labels_where_a_document_holds_two_of_a_system_s_items(tmp_path):
    """A file without systems, two responses to each dialogue: 5 "labels per system" drew 5 dialogues, 10 labels.
    Whole documents are drawn until a system has k labels: 3 dialogues, 6 labels; as with two systems of two
    responses each to a document."""
    from tests.helpers import make_items, make_template, scripted

    alone = [dataclasses.replace(item, system="") for item in make_items(40, dataset="alone", per_group=2)]
    paired = make_items(40, dataset="paired", per_group=4, systems=2)
    store = geval.Store(tmp_path / "s.sqlite")
    for name, items in (("alone", alone), ("paired", paired)):
        store.save_dataset(geval.Dataset(name, f"{name}.csv", "table", items))
        geval.score(store, items, make_template(), scripted(), name)
    result = geval.labeling.system_means(store, "alone", "Natural", per_system=5, design="documents")
    assert result.notes[0].startswith("3 dialogues drawn at random, every item of each (6 labels)"), result.notes
    assert result.table["labeled"].tolist() == [6]
    both = geval.labeling.system_means(store, "paired", "Natural", per_system=5, design="documents")
    assert both.notes[0].startswith("3 dialogues drawn at random, every system's item of each (6 labels per "
                                    "system)"), both.notes
    assert both.table["labeled"].tolist() == [6, 6]
    every = geval.labeling.system_means(store, "alone", "Natural", per_system=40, design="documents")
    assert every.table["labeled"].tolist() == [40] and every.every_item_labeled
