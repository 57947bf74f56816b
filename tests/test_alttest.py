"""geval.alttest: the alternative annotator test (Calderon, Reichart & Dror, ACL 2025): the paper's
52 published results through the product's import path, its decision rule by hand, what it says
when its conditions do not hold, and its level under a judge drawn like the annotators."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

import geval
from geval.decisions.alttest import alt_test, benjamini_yekutieli
from geval.decisions.alttest_power import simulate, winning_rates
from geval.data.items import make_item
from geval.judging.aspects import Aspect
from geval.judging.templates import parse_template
from geval.scoring.lookup import signature
from studio.alttest import same_items_line
from tests.helpers import pair_rows, run_cli, scripted, write_pairs

ROW = re.compile(r"^\| (\w+) \| (accuracy|neg_rmse) \| ([\d.]+) \| ([\w.-]+) \| (yes|no) \| ([\d.]+) \| ([\d.]+) \|$")
LINE = re.compile(r"^(\S+) \(imported from llm_annotations\.json\) · label: winning rate (\d\.\d\d), "
                  r"advantage probability (\d\.\d\d), (passed|not passed|no verdict); ")


def published(shared_data) -> dict[str, list[tuple]]:
    """The table of ../shared/data/alttest/README.md: dataset -> (alignment, epsilon, llm, passed, W, A) rows."""
    readme = shared_data / "alttest" / "README.md"
    if not readme.is_file():
        pytest.skip(f"{readme} is not there")
    rows: dict[str, list[tuple]] = {}
    for line in readme.read_text().splitlines():
        if match := ROW.match(line.strip()):
            dataset, alignment, epsilon, llm, passed, wr, ap = match.groups()
            rows.setdefault(dataset, []).append((alignment, epsilon, llm, passed == "yes", wr, ap))
    return rows


def test_the_readme_holds_52_published_results(shared_data):
    assert sum(len(rows) for rows in published(shared_data).values()) == 52


@pytest.mark.parametrize("dataset", ["wax", "lgbteen", "mtbench", "framing", "cebab_aspects", "summeval",
                                     "10k_prompts", "cebab_stars", "lesion"])
def test_the_papers_published_results_are_reproduced_through_the_import_path(shared_data, tmp_path, dataset):
    rows = published(shared_data)[dataset]
    alignment, epsilon = rows[0][0], rows[0][1]
    result = run_cli("alttest", str(shared_data / "alttest" / dataset), "--epsilon", epsilon, "--alignment",
                     alignment.replace("_", "-"), "--by", "items", "--brief", "--store", str(tmp_path / "s.sqlite"),
                     timeout=300)  # the paper's test: its items taken as independent (MT-Bench's pairs: by question)
    assert result.returncode == 0, result.stderr
    printed = {m.group(1): m.groups()[1:] for line in result.stdout.splitlines() if (m := LINE.match(line))}
    assert len(printed) == len(rows), result.stdout
    for _, _, llm, passed, wr, ap in rows:
        assert printed[llm] == (wr, ap, "passed" if passed else "not passed"), llm
    ranked = result.stdout.split("Judges by advantage probability")[1].splitlines()[2:]  # after its header
    order = [next(llm for *_, llm, _, _, _ in rows if f" {llm} (imported from " in f" {line.strip()}") for line in ranked
             if "(imported from " in line]  # one row per judge, named as every table names it
    assert sorted(order) == sorted(printed) and [float(printed[llm][1]) for llm in order] == \
        sorted((float(printed[llm][1]) for llm in order), reverse=True)  # the best first


def test_a_second_import_of_the_same_file_changes_nothing(shared_data, store):
    folder = shared_data / "alttest" / "mtbench"
    dataset = geval.load_dataset(folder, store=store)
    first = geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json")
    assert [f.already for f in first] == [False] * 6 and first[0].items == 120
    count = len(store.judgments(dataset.name, columns=("id",)))
    second = geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json")
    assert [s.already for s in second] == [True] * 6
    assert len(store.judgments(dataset.name, columns=("id",))) == count == 720
    combo = store.combos(dataset.name).iloc[0]
    fields = __import__("json").loads(combo["signature_json"])
    assert fields["backend"] == "imported" and fields["file"] == "llm_annotations.json"
    assert len(fields["sha256"]) == 12 and fields["imported"]
    assert combo["label"].endswith("(imported from llm_annotations.json)")


def people_of(rows: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    return {name: {f"i{k}": v for k, v in enumerate(values)} for name, values in rows.items()}


def test_the_decision_rule_by_hand():
    # Three annotators on 40 items; the judge always gives what b and c give, a disagrees on 10.
    b = [1.0, 2.0, 3.0, 2.0] * 10
    a = [5.0 if k < 10 else v for k, v in enumerate(b)]
    result = alt_test(people_of({"a": a, "b": b, "c": b}), {f"i{k}": v for k, v in enumerate(b)}, "accuracy", 0.1)
    by_name = {x.name: x for x in result.annotators}
    # Left out a: on its 10 items the judge (matching b and c) wins alone; elsewhere a tie (both win).
    assert by_name["a"].judge_wins == 1.0 and by_name["a"].person_wins == pytest.approx(30 / 40)
    # Left out b: against a and c the judge and b are the same label: every item is a tie.
    assert by_name["b"].judge_wins == by_name["b"].person_wins == 1.0
    assert by_name["b"].p == 0.0  # every difference 0, below epsilon: scipy's t is -inf
    assert result.winning_rate == pytest.approx(1.0)
    assert result.passed is True and result.advantage_probability == 1.0
    assert "can replace an annotator here: it beats 3 of 3 annotators" in result.verdict()


def test_benjamini_yekutieli_known_answer():
    # m = 4, H_4 = 25/12; thresholds i/4 * 0.05 / H_4 = .006, .012, .018, .024
    assert benjamini_yekutieli([0.001, 0.011, 0.5, 0.02], 0.05) == [0, 1]
    assert benjamini_yekutieli([0.001, 0.013, 0.017, 0.5], 0.05) == [0, 1, 2]  # step-up: .013 > .012, .017 <= .018
    assert benjamini_yekutieli([0.007, 0.5, 0.5, 0.5], 0.05) == []
    assert benjamini_yekutieli([float("nan"), 0.001], 0.05) == [1]


def test_fewer_than_30_items_per_annotator_gives_no_verdict_and_says_what_to_do():
    values = [1.0, 2.0, 3.0] * 8  # 24 items
    result = alt_test(people_of({"a": values, "b": values, "c": values}), {f"i{k}": v for k, v in enumerate(values)})
    assert result.passed is None and math.isnan(result.winning_rate)
    assert result.verdict() == ("No verdict for the judge: fewer than 30 items per annotator (most: 24): the t-test "
                                "needs 30 or more; the paper recommends labeling more items (or a Wilcoxon "
                                "signed-rank test meanwhile).")


def test_two_annotators_give_numbers_but_no_verdict():
    values = [1.0, 2.0, 3.0] * 12
    result = alt_test(people_of({"a": values, "b": values}), {f"i{k}": v for k, v in enumerate(values)})
    assert result.winning_rate == 1.0 and result.passed is None
    assert "2 annotators: with 2 the test only asks which of the two the judge is nearer, the paper recommends 3 " \
           "or more for a verdict." in result.verdict()


def test_one_annotator_is_the_only_reason_said_with_no_count_of_items_a_second_would_score():
    """One column of scores read "1 annotator (...); fewer than 30 items per annotator (most: 0)" of 40 items."""
    values = [1.0, 2.0, 3.0] * 12
    result = alt_test(people_of({"a": values}), {f"i{k}": v for k, v in enumerate(values)})
    assert result.missing == ["1 annotator: the test needs at least 2, the paper recommends 3 or more"]
    assert result.annotators[0].untested == "no other annotator to compare with"  # it read "fewer than 30 items"


def test_the_ranking_counts_the_annotators_and_those_tested_apart():
    """Two annotators with 24 items each: the ranking's "annotators" read 0 (those tested)."""
    values = [1.0, 2.0, 3.0] * 8
    row = geval.alttest.summary([alt_test(people_of({"a": values, "b": values}),
                                          {f"i{k}": v for k, v in enumerate(values)})]).iloc[0]
    assert (row["annotators"], row["tested"]) == (2, 0)


@pytest.mark.parametrize("aspect", ["Natural", "label"])
def test_a_constant_with_the_judges_advantage_probability_says_what_that_means(aspect):
    """At epsilon .15 the constant's sentence gave a number without its meaning; on the annotations
    layout's pooled aspect, named "label", it read "on 71% of the label items"."""
    rng = np.random.default_rng(1)  # a random judge; people near a truth, 2 their commonest label
    truth = rng.integers(1, 4, 30)
    people = {n: {f"i{k}": float(np.clip(truth[k] + rng.integers(-1, 2), 1, 3)) for k in range(30)} for n in "abc"}
    judge = replace(alt_test(people, {f"i{k}": float(rng.integers(1, 4)) for k in range(30)}, "neg-rmse"),
                    judge="gpt-x", aspect=aspect)
    constant = replace(alt_test(people, {f"i{k}": 2.0 for k in range(30)}, "neg-rmse"),
                       judge="always 2 (the people's commonest label)", aspect=aspect, baseline=True)
    assert not constant.passed and constant.advantage_probability >= judge.advantage_probability
    said = geval.alttest.caveat(judge, [judge, constant])
    assert said == (f"A judge that always answers 2 is at least as good as a person on "
                    f"{constant.advantage_probability:.0%} of the items of {aspect} (its advantage probability), as "
                    f"often as this judge ({judge.advantage_probability:.0%}) or more: on this aspect the advantage "
                    "probability rewards giving the commonest label.")
    assert f"{aspect} items" not in said


def test_items_with_one_annotator_are_left_out():
    people = {"a": {f"i{k}": 1.0 for k in range(40)}, "b": {f"i{k}": 1.0 for k in range(35)}}
    result = alt_test(people, {f"i{k}": 1.0 for k in range(40)})
    assert result.items == 35 and result.dropped == 5


def test_the_vectorized_simulation_equals_the_test():
    rng = np.random.default_rng(3)
    people, judge = simulate(rng, np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.3, 0.5]), 0.4, 0.3, 4, 35, 12)
    for alignment in ("accuracy", "neg-rmse"):
        rates = winning_rates(people, judge, 0.1, alignment)
        for run in range(12):
            one = alt_test({f"a{k}": {f"i{i}": people[run, k, i] for i in range(35)} for k in range(4)},
                           {f"i{i}": judge[run, i] for i in range(35)}, alignment, 0.1)
            assert one.winning_rate == pytest.approx(rates[run])


@pytest.mark.simulation
@pytest.mark.parametrize("items", [30, 60])
def test_a_judge_drawn_like_the_annotators_is_beaten_no_more_often_than_the_tests_level(items):
    # epsilon 0: the null holds (the judge is one more annotator); the share of annotators it "beats"
    # stays within q = .05 plus Monte Carlo error (2000 annotators' tests: sd about .005).
    rng = np.random.default_rng(11)
    people, judge = simulate(rng, np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.full(5, 0.2), 0.4, 0.4, 4, items, 500)
    share = winning_rates(people, judge, 0.0, "neg-rmse").mean()
    assert share <= 0.05 + 3 * 0.005


@pytest.mark.simulation
def test_a_judge_clearly_better_than_the_annotators_passes_in_most_runs():
    rng = np.random.default_rng(12)
    people, judge = simulate(rng, np.array([1.0, 2.0, 3.0]), np.array([0.3, 0.4, 0.3]), 0.5, 0.05, 3, 60, 300)
    assert np.mean(winning_rates(people, judge, 0.1, "accuracy") >= 0.5) > 0.8


def items_with(scores: list[dict[str, float]]):
    return [make_item("d", "turn", [], f"response {k}", group=f"g{k}", source_id=f"row{k}",
                      human={"Natural": tuple(s.values())}, annotators={"Natural": tuple(s)})
            for k, s in enumerate(scores)]


@pytest.fixture
def labeled(store):
    """A stored dataset of 4 items (ids row0..row3 in its file), Natural scored 1-3 by a and b."""
    store.save_dataset(geval.Dataset("d", "d.csv", "table", items_with([{"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 3.0},
                                                                        {"a": 2.0, "b": 2.0}, {"a": 1.0, "b": 1.0}])))
    return store


@pytest.mark.parametrize("text, message", [
    ("item_id,natural\nrow0,2\nrow9,3\n", "{path}:3: 'row9' is not an item of the dataset (neither its id nor the "
                                          "id its file gave it); a file made for more items than the dataset has "
                                          "is imported with only the dataset's items asked for (--only-known)"),
    ("item_id,natural\nrow0,2\nrow1,7\n", "{path}:3: 7 is off Natural's scale 1-3 (the people's; a judge on a "
                                          "scale of its own is imported with it: --scale LOW-HIGH, e.g. 1-10, 0-100, "
                                          "0-1)"),
    ("item_id,natural\nrow0,2\nrow1,3\nrow0,1\n", "{path}:4: judge scores item row0 on Natural a second time "
                                                   "(first at {path}:2)"),
    ("item_id,natural\nrow0,two\n", "{path}:2: 'two' is not a number (a score of Natural); a score is a number, or "
                                   "for every label of an aspect one of two words (pass/fail, yes/no, true/false); "
                                   "other categories are read from a folder of annotations (human_annotations.json, "
                                   "{{annotator: {{item: label}}}}: python -m geval datasets load FOLDER)"),
    ("item_id,fluency\nrow0,2\n", "{path}:2: no score column: name it as an aspect of the dataset (Natural), or "
                                   "'score' and say its aspect (--aspect: one of those, or a new one with --scale "
                                   "LOW-HIGH)"),
    ('{"row0": 2, "row1": ', "{path}:1:21: invalid JSON (Expecting value); correct it there and load the file again"),
])
def test_a_bad_import_names_the_row_and_stores_nothing(labeled, tmp_path, text, message):
    path = tmp_path / ("judge.json" if text.startswith("{") else "judge.csv")
    path.write_text(text)
    with pytest.raises(geval.alttest.JudgeImportError) as error:
        geval.alttest.import_judge(labeled, "d", path)
    assert str(error.value) == message.format(path=path)
    assert labeled.combos("d").empty


def test_an_item_given_twice_is_named_as_the_file_names_it(labeled, tmp_path):
    item = labeled.items("d")[0].id  # the store's id, not the id of the dataset's own file (row0)
    path = tmp_path / "twice.csv"
    path.write_text(f"item_id,natural\n{item},2\nrow1,3\n{item},1\n")
    with pytest.raises(geval.alttest.JudgeImportError) as error:
        geval.alttest.import_judge(labeled, "d", path)
    assert str(error.value) == f"{path}:4: twice scores item {item} on Natural a second time (first at {path}:2)"


def test_a_file_made_for_more_items_imports_the_datasets_own_when_asked_and_counts_the_rest(labeled, tmp_path):
    path = tmp_path / "llm_annotations.json"  # the release's shape: every judge, ids "<item>__<aspect>"
    path.write_text(json.dumps({"big": {"row0__natural": 2, "row1__natural": 3, "row7__natural": 1, "row8": 2},
                                "other": {"row9__natural": 1}}))
    with pytest.raises(geval.alttest.JudgeImportError, match="'row7__natural' is not an item of the dataset"):
        geval.alttest.import_judge(labeled, "d", path)
    with pytest.raises(geval.alttest.JudgeImportError) as error:  # a judge with none of the dataset's items
        geval.alttest.import_judge(labeled, "d", path, only_known=True)
    assert str(error.value) == f"{path}: other: none of its 1 items is an item of 'd': is it the dataset the scores " \
                               "were made on?"
    assert labeled.combos("d").empty
    done = geval.alttest.import_judge(labeled, "d", path, name="big", only_known=True)
    assert [(d.name, d.items, d.left_out) for d in done] == [("big", 2, 2)]
    assert geval.alttest.import_judge(labeled, "d", path, name="big", only_known=True)[0].already


def test_an_import_by_the_files_own_ids_reads_like_a_judge(labeled, tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("id,score\nrow0,1.5\nrow1,3\nrow2,2\nrow3,\n")
    done = geval.alttest.import_judge(labeled, "d", path, name="my gpt-4o")
    assert (done[0].name, done[0].items, done[0].aspects, done[0].unscored) == ("my gpt-4o", 4, ["Natural"], 1)
    combo = labeled.combos("d").iloc[0]
    assert combo["label"] == "my gpt-4o (imported from mine.csv)" and (combo["ok"], combo["unscored"]) == (3, 1)
    table = geval.agree(labeled, "d")
    assert set(table["human"]) == {"Natural"} and (table["n"] == 3).any()
    template = labeled.template(combo["template_version"])
    assert template.kind == "imported" and "imported from mine.csv (SHA-256" in template.body


def test_an_imported_judge_is_never_asked(labeled, tmp_path):
    """Its template is a record, not a prompt: the plan says it cannot be rendered, scoring refuses it
    before storing anything."""
    path = tmp_path / "mine.csv"
    path.write_text("id,score\nrow0,1\nrow1,3\n")
    geval.alttest.import_judge(labeled, "d", path)
    template = labeled.template(labeled.combos("d").iloc[0]["template_version"])
    items = labeled.items("d")
    assert not geval.plan(labeled, items, template, scripted()).renderable
    with pytest.raises(geval.GevalError, match='kind = "imported" records a judge\'s scores imported from a file'):
        geval.score(labeled, items, template, scripted(), "d")
    assert len(labeled.judgments("d", columns=("id",))) == 2  # the import's, nothing more


def test_a_categorical_aspect_is_read_by_accuracy_never_correlated(shared_data, store):
    folder = shared_data / "alttest" / "mtbench"
    dataset = geval.load_dataset(folder, store=store)
    assert store.categories(dataset.name) == {"label": ("model_a", "model_b", "tie")}
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json", name="gpt-4o")
    table = geval.agree(store, dataset.name)
    assert list(table["metric"]) == ["accuracy"]
    row = table.iloc[0]
    items = [i for i in store.items(dataset.name) if len(i.human["label"]) >= 1]
    assert 0 < row["value"] < 1 and row["low"] < row["value"] < row["high"] and row["n"] <= len(items)


def test_the_report_says_whether_the_judge_can_replace_an_annotator(shared_data, store):
    folder = shared_data / "alttest" / "mtbench"
    dataset = geval.load_dataset(folder, store=store)
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json")
    text = geval.reporting.report(store, dataset.name, baselines=[], figures=False, n_boot=50,
                                  alttest_epsilon=0.2).markdown()
    section = text[text.index("## Can the judge replace an annotator?"):]
    assert "epsilon = 0.2 (experts)" in section
    assert "| gpt-4o (imported from llm_annotations.json) | label | 0.773 | 0.000 | 0 of 1 | 0.671 | as imported | " \
           "groups: 42 questions |" in section  # the paper's .77, first; its pairs of a question read together
    assert "gpt-4o (imported from llm_annotations.json) cannot be shown to replace an annotator here: it beats 0 of " \
           "3 annotators" in section
    without = geval.reporting.report(store, dataset.name, baselines=[], figures=False, n_boot=50,
                                     alttest_epsilon=None).markdown()
    assert "Can the judge replace" not in without


def leaning_judge(store) -> list:
    """40 items on which three people agree (3, 3, 3 or 2, 2, 2), scored by a judge whose most probable
    score is theirs (.7) and the rest on another (.3 on 1 or 3): its mean is never a whole number."""
    from tests.helpers import make_items, make_template, scripted

    items = [replace(item, human={"Natural": (s, s, s)}, annotators={}) for item, s in
             zip(make_items(40, dataset="agree"), [3.0, 2.0] * 20)]
    store.save_dataset(geval.Dataset("agree", "agree.csv", "table", items))
    by_response = {item.response: item.human["Natural"][0] for item in items}

    def leaning(prompt: str, aspect) -> dict[int, float]:
        label = next(int(v) for r, v in by_response.items() if f"{r}\n" in prompt + "\n")
        return {label: 0.7, (1 if label == 3 else 3): 0.3}

    geval.score(store, items, make_template(), scripted(leaning), "agree")
    return items


def test_how_a_g_eval_judge_is_read_decides_the_test(store):
    """People who agree exactly (3, 3, 3 or 2, 2, 2), a judge whose most probable score is theirs but whose
    probability-weighted mean is not a whole number: read continuously it never ties a person and loses
    every item to them; read as its most probable score (the default) it ties them all."""
    items = leaning_judge(store)
    read = {reading: geval.alttest.run(store, "agree", epsilon=0.15, reading=reading)[0]
            for reading in geval.alttest.READINGS}
    assert read["mode"].advantage_probability == 1.0 and read["mode"].passed is True
    assert geval.alttest.run(store, "agree", epsilon=0.15)[0].advantage_probability == 1.0  # the default: the mode
    assert read["continuous"].advantage_probability == 0.0 and read["continuous"].passed is False
    # rounded: 0.7 * 2 + 0.3 * 3 = 2.3 reads 2 (a tie with the people), 0.7 * 3 + 0.3 * 1 = 2.4 also reads 2 (a loss)
    assert read["rounded"].advantage_probability == 0.5


def test_a_judge_with_no_most_probable_score_says_so_and_leaves_the_others_their_items(store):
    """A checklist stores no distribution over the scale's scores, so it has no most probable score (the default
    reading) and is read on no item. The judges of its aspect are read on the items every one of them scored:
    they were read on none either, each "0 annotators". Now it says why, and the others read as they do alone."""
    from tests.helpers import make_template, template_text

    items = leaning_judge(store)
    alone = geval.alttest.run(store, "agree", epsilon=0.15)[0]
    checklist = template_text(name="agree-checklist", extra_header='kind = "checklist"',
                              body="Response:\n{{response}}\n\nQuestion: {{question}}\nAnswer (Yes or No):")
    checklist = checklist.replace('human = "Natural"', 'human = "Natural"\nquestions = ["Is it natural?"]')
    geval.score(store, items, parse_template(checklist, "agree-checklist.txt"),
                scripted(lambda prompt, aspect: {0: 0.4, 1: 0.6}), "agree")
    both = {r.judge.split(" · ")[0].split("@")[0]: r for r in geval.alttest.run(store, "agree", epsilon=0.15)}
    form, asked = both[make_template().name], both["agree-checklist"]
    assert (form.items, form.advantage_probability, form.passed) == (alone.items, 1.0, True) and form.items == 40
    assert asked.items == 0 and asked.passed is None
    assert asked.missing == [geval.alttest.UNREAD] and "most probable score" in geval.alttest.UNREAD
    rounded = {r.judge.split("@")[0]: r for r in geval.alttest.run(store, "agree", epsilon=0.15, reading="rounded")}
    assert rounded["agree-checklist"].items == 40 and rounded["agree-checklist"].missing != [geval.alttest.UNREAD]


def test_a_judge_of_a_few_items_is_read_alone_and_leaves_the_others_their_verdict(store):
    """Scoring 4 items with a new judge cut the 40-item judge down to those 4 ("judges are compared on the same
    items"): its verdict became "fewer than 30 items per annotator". A judge of fewer than 30 items is read on its
    own items, and the others on the items they all scored, as before."""
    from tests.helpers import make_template

    items = leaning_judge(store)
    alone = geval.alttest.run(store, "agree", epsilon=0.15)[0]
    few = make_template(name="agree-few")
    geval.score(store, items[:4], few, scripted(), "agree")
    both = {r.judge.split(" · ")[0].split("@")[0]: r for r in geval.alttest.run(store, "agree", epsilon=0.15)}
    form, small = both[make_template().name], both["agree-few"]
    assert (form.items, form.passed, form.alone) == (alone.items, True, False) and form.items == 40
    assert (small.items, small.passed, small.alone) == (4, None, True)
    assert same_items_line(list(both.values())) == (
        f"Read alone, too few items to be set beside the others: {small.judge} on its own 4.")


def test_the_plan_reads_the_judge_as_the_verdict_beside_it_does(store):
    """(Issue 43.5) The plan used the judge's most probable score even where the verdict beside it read its
    mean, rounded or not. The judge of the test above: read continuously it loses every item and fails, as
    its most probable score it ties every person and passes; the plan reads what the verdict reads (its
    judge's values and its advantage probability are the verdict's), and so refuses the one and plans the
    other, beside its verdict on the Agreement page and under `geval alttest --reading`."""
    items = leaning_judge(store)
    combo = next((c.template_version, c.signature) for c in store.combos("agree").itertuples())
    for reading in geval.alttest.READINGS:
        result = geval.alttest.run(store, "agree", epsilon=0.15, reading=reading)[0]
        _, judge, _ = geval.alttest.plan_data(store, "agree", "Natural", combo, reading)
        expected = {"mode": 3.0, "rounded": 2.0, "continuous": 2.4}[reading]  # its score of a "3, 3, 3" item
        assert judge[items[0].id] == pytest.approx(expected), reading
        planned = geval.alttest.plan(store, "agree", "Natural", combo, 0.15, runs=20, reading=reading)
        assert planned.advantage == pytest.approx(result.advantage_probability), reading
        assert bool(planned.reason) == (result.passed is False), (reading, planned.reason)


def test_a_judge_on_another_scale_is_read_on_the_annotators_scale_and_says_so(store, tmp_path):
    """SummEval's fluency asks the judge for 1-3 while its experts gave 1-5; a judge imported with its
    own 1-5 beside people on USR's 1-3. Read on its own numbers, a judge that always agrees with the
    people would lose to them; mapped linearly onto their scale it ties them everywhere. Where the
    dataset declares no scale, the people's scores outside the judge's 1-3 tell it (their range)."""
    from tests.helpers import make_items, make_template, scripted

    items = [replace(item, human={"Natural": (s, s, s)}, annotators={}) for item, s in
             zip(make_items(40, dataset="wide"), [5.0, 1.0] * 20)]
    store.save_dataset(geval.Dataset("wide", "wide.csv", "table", items))
    by_response = {item.response: item.human["Natural"][0] for item in items}

    def agreeing(prompt: str, aspect) -> dict[int, float]:  # on its 1-3: 3 for the people's 5, 1 for their 1
        return {3 if next(v for r, v in by_response.items() if f"{r}\n" in prompt + "\n") == 5 else 1: 1.0}

    geval.score(store, items, make_template(), scripted(agreeing), "wide")
    result = geval.alttest.run(store, "wide", epsilon=0.15)[0]
    assert result.advantage_probability == 1.0 and result.passed is True
    assert result.verdict().endswith(" Its scores, on 1-3, are mapped linearly onto the people's 1-5 and rounded "
                                     "to it (the whole-number range of the scores they gave, as no scale is declared "
                                     "for Natural; if they were asked on another, declare it: python -m geval datasets "
                                     "load wide --scale 'Natural=LOW-HIGH', or on the Data page).")

    narrow = [replace(item, dataset="narrow", human={"Natural": (3.0 if s == 5 else 1.0,) * 3})
              for item, s in zip(items, [5.0, 1.0] * 20)]
    store.save_dataset(geval.Dataset("narrow", "narrow.json", "usr", narrow))  # USR's Natural: 1-3, its paper says
    path = tmp_path / "wide.csv"  # the people's 3 as 5: the same judge, on 1-5
    path.write_text("item_id,natural\n" + "".join(f"{i.id},{5 if i.human['Natural'][0] == 3 else 1}\n" for i in narrow))
    geval.alttest.import_judge(store, "narrow", path, scale=(1, 5))
    result = geval.alttest.run(store, "narrow", epsilon=0.15)[0]
    assert result.advantage_probability == 1.0 and result.reading == "as imported"
    assert result.verdict().endswith(" Its scores, on 1-5, are mapped linearly onto the people's 1-3, the scale "
                                     "declared for Natural.")


def copied_people(dataset: str, items: int = 40) -> tuple[list, str]:
    """`items` items in 20 dialogues on which three people agree, on a 1-5 aspect where nobody gave a 1
    (2, 3, 4, 5 in turn), and a judge's file that gives exactly the people's score."""
    from tests.helpers import make_items

    scores = [2.0, 3.0, 4.0, 5.0] * (items // 4)
    made = [replace(item, human={"Overall": (s, s, s)}, annotators={}) for item, s in
            zip(make_items(items, dataset=dataset), scores)]
    return made, "item_id,overall\n" + "".join(f"{i.id},{s:g}\n" for i, s in zip(made, scores))


@pytest.mark.parametrize("layout", ["table", "usr"])  # nothing declared; USR's Overall, declared 1-5
def test_a_judge_copying_the_people_passes_where_nobody_used_the_scales_end(store, tmp_path, layout):
    items, copy = copied_people("copy")
    store.save_dataset(geval.Dataset("copy", "copy.csv", layout, items))
    path = tmp_path / "copy.csv"
    path.write_text(copy)
    geval.alttest.import_judge(store, "copy", path, scale=(1, 5))
    result = geval.alttest.run(store, "copy", epsilon=0.15)[0]
    # read on its 1-5, the people's: not stretched onto the 2-5 they happened to use; and which reading, said
    assert result.scale == ("Read on the people's 1-5 scale, declared for Overall" if layout == "usr" else
                            "No scale is declared for the people's Overall: their scores (2-5) are read on the "
                            "judge's own 1-5 scale, as if they were asked on it; if they were asked on another, "
                            "declare it: python -m geval datasets load copy --scale 'Overall=LOW-HIGH', or on the "
                            "Data page")
    assert result.advantage_probability == 1.0 and result.passed is True


def test_a_judge_copying_the_people_on_1_to_9_passes_once_their_1_to_5_is_declared(tmp_path):
    """The issue's study: 60 items in 12 dialogues, 3 annotators asked 1-5 who used only 2-5, and a judge
    giving exactly their median on 1-9 (2m - 1). Undeclared, it is read on its own 1-9, fails and the verdict
    and how it errs say so and how to declare the scale (and advise no shift: it is a stretch); declared
    where the data comes in (`datasets load --scale`), it is mapped onto 1-5 and passes as the same
    judgments on 1-5 do."""
    rng = np.random.default_rng(3)
    medians = rng.choice([2, 3, 4, 5], 60)
    people = [np.clip(m + rng.choice([-1, 0, 0, 1], 3), 2, 5) for m in medians]
    people = [[int(m)] * 3 if k % 3 else [int(v) for v in p] for k, (m, p) in enumerate(zip(medians, people))]
    path, judge = tmp_path / "people.jsonl", tmp_path / "judge.csv"
    path.write_text("".join(json.dumps({"id": f"r{k}", "response": f"reply {k}", "dialogue": f"d{k // 5}",
                                        "overall": p}) + "\n" for k, p in enumerate(people)))
    judge.write_text("id,overall\n" + "".join(f"r{k},{2 * np.median(p) - 1:g}\n" for k, p in enumerate(people)))
    store = str(tmp_path / "s.sqlite")
    mapping = ["--map", "id=id", "--map", "response=response", "--map", "group=dialogue", "--map",
               "score:Overall=overall"]
    assert run_cli("datasets", "load", str(path), *mapping, "--store", store).returncode == 0
    imported = run_cli("judge", "import", str(judge), "--dataset", "people", "--scale", "1-9", "--store", store)
    assert imported.returncode == 0, imported.stderr
    assert "Overall: no scale is declared for the people's scores (they gave 2-5) beside this judge's 1-9" \
        in imported.stdout
    undeclared = run_cli("alttest", "people", "--store", store).stdout
    assert ", not passed;" in undeclared.splitlines()[1]
    assert "No scale is declared for the people's Overall: their scores (2-5) are read on the judge's own 1-9 " \
           "scale" in undeclared
    errs = run_cli("agree", "people", "--store", store).stdout
    assert "points above the people's mean, on the judge's 1-9 scale (none is declared for theirs)" in errs
    assert "a stretch, not a shift" in errs and "shift them by" not in errs
    declared = run_cli("datasets", "load", "people", "--scale", "Overall=1-5", "--store", store)
    assert declared.returncode == 0 and "the people's scales: Overall 1-5" in declared.stdout, declared.stderr
    printed = run_cli("alttest", "people", "--store", store).stdout
    line = printed.splitlines()[1]
    assert line.startswith("judge (imported from judge.csv) · Overall:") and ", passed;" in line, printed
    assert "Its scores, on 1-9, are mapped linearly onto the people's 1-5, the scale declared for Overall." in printed
    errs = run_cli("agree", "people", "--store", store).stdout
    assert "  - Its scores, on 1-9, are mapped linearly onto the people's 1-5, the scale declared for Overall.\n" in errs
    assert "Neither harsh nor lenient" in errs and "on their 1-5 scale" in errs


def test_a_judge_copying_the_people_passes_through_the_cli(tmp_path):
    """A user's own file, nothing declared about its scale: a judge imported on 1-5 (--scale) is read on
    it, as the people's, since their scores (2-5) lie within it."""
    people, judge = tmp_path / "people.jsonl", tmp_path / "copy.csv"
    scores = [2, 3, 4, 5] * 10
    people.write_text("".join(json.dumps({"id": f"r{k}", "response": f"reply {k}", "dialogue": f"d{k // 2}",
                                          "overall": [s, s, s]}) + "\n" for k, s in enumerate(scores)))
    judge.write_text("id,overall\n" + "".join(f"r{k},{s}\n" for k, s in enumerate(scores)))
    store = str(tmp_path / "s.sqlite")
    loaded = run_cli("datasets", "load", str(people), "--map", "id=id", "--map", "response=response", "--map",
                     "group=dialogue", "--map", "score:Overall=overall", "--store", store)
    assert loaded.returncode == 0, loaded.stderr
    imported = run_cli("judge", "import", str(judge), "--dataset", "people", "--scale", "1-5", "--store", store)
    assert imported.returncode == 0, imported.stderr
    printed = run_cli("alttest", "people", "--brief", "--store", store)
    assert printed.returncode == 0, printed.stderr
    line = next(line for line in printed.stdout.splitlines() if line.startswith("copy (imported from copy.csv)"))
    assert "advantage probability 1.00" in line and ", passed;" in line, printed.stdout


def test_summevals_experts_set_the_default_epsilon(shared_data, tmp_path):
    store = tmp_path / "s.sqlite"
    run_cli("datasets", "load", "summeval_sample", "--store", str(store))
    imported = run_cli("judge", "import", str(shared_data / "alttest" / "summeval" / "llm_annotations.json"),
                       "--dataset", "summeval_sample", "--name", "gpt-4o", "--only-known", "--store", str(store))
    assert imported.returncode == 0, imported.stderr
    assert "gpt-4o: 80 items, coherence, consistency, relevance, fluency, 6080 scores of items not in " \
           "summeval_sample left out" in imported.stdout
    printed = run_cli("alttest", "summeval_sample", "--brief", "--store", str(store)).stdout
    assert printed.startswith("summeval_sample: epsilon 0.2,")  # experts, as SummEval's paper says
    full = run_cli("alttest", "summeval_sample", "--store", str(store)).stdout  # with the plan of each aspect
    assert re.search(r"^How many items, coherence \(gpt-4o \(imported from llm_annotations.json\)\): Drawing studies "
                     r"from your 80 items \(in 10 groups drawn whole, as your 3 annotators labeled them, 3.0 per item, "
                     r"\d+% exact agreement\) with this judge's own scores, ", full, re.M), full
    assert run_cli("alttest", "summeval_sample", "--brief", "--annotators", "crowd", "--store",
                   str(store)).stdout.startswith("summeval_sample: epsilon 0.1,")


def test_the_plan_says_an_18_percent_chance_and_its_alignment():
    from geval.decisions.alttest_power import Plan

    short = Plan(3, 0.5, 0.4, True, 0.15, "neg-rmse", [30, 1000], [0.05, 0.18], runs=200, items=400, per_item=3.0,
                 resampled=True)
    assert short.sentence() == (
        "Drawing studies from your 400 items (drawn one by one, as your 3 annotators labeled them, 3.0 per item, 50% "
        "exact agreement) with this judge's own scores, even 1,000 items give it only an 18% chance to pass (epsilon "
        "0.15, neg-rmse, over items; 200 resampled studies per size): the judge, or the annotators' agreement, is too far from "
        "passing for more items to help much. On data it was not made from, such a chance was within about 20 points "
        "of the real pass rate on average (docs/statistics.md).")
    enough = Plan(4, 0.5, 0.5, False, 0.15, "accuracy", [30, 40], [0.5, 0.85], runs=200, items=60, per_item=2.5)
    assert enough.sentence() == (
        "With annotators agreeing as yours do (50% exact agreement) and labeling as yours did (4 annotators, 2.5 per "
        "item), about 40 items give a judge as good as one of the annotators an 80% chance to pass (epsilon 0.15, "
        "accuracy, over items; 200 simulated studies per size, as in the paper's appendix C).")


def test_a_users_csv_without_a_group_column_is_tested_over_its_dialogues(store, tmp_path):
    """The trial's CSV: 20 dialogues, 2 responses to each, no group column. Each row was its own group, and
    the test took the items as independent; the responses to one dialogue are grouped by their context now."""
    scores = [2, 3, 4, 5] * 10
    people, judge = tmp_path / "people.csv", tmp_path / "judge.csv"
    people.write_text("id,context,reply,overall\n" + "".join(
        f'r{k},"A: question {k // 2}",reply {k},"[{s}, {s}, {s}]"\n' for k, s in enumerate(scores)))
    judge.write_text("id,overall\n" + "".join(f"r{k},{s}\n" for k, s in enumerate(scores)))
    geval.load_dataset(people, mapping=["response=reply", "context=context", "score:Overall=overall"], store=store)
    geval.alttest.import_judge(store, "people", judge, scale=(1, 5))
    result = geval.alttest.run(store, "people", epsilon=0.15)[0]
    assert (result.by, result.how) == ("groups", "groups: 20 dialogues")
    assert result.passed is True


def test_pairs_of_named_questions_are_tested_over_questions_as_the_pairwise_section_says(store, tmp_path):
    """The test said "groups: 12 dialogues" of MT-Bench-like pairs that name their questions, where the pairwise
    section beside it says "questions"; the same groups, now called the same."""
    pairs = geval.load_dataset(write_pairs(tmp_path / "pairs.csv", pair_rows()), store=store)
    geval.score(store, pairs.items, geval.Template.load("dialogue-pairwise"), scripted(), pairs.name)
    result = geval.alttest.run(store, pairs.name, epsilon=0.15)[0]
    assert (result.by, result.how) == ("groups", "groups: 12 questions")


def test_a_judge_of_an_aspect_nobody_has_labeled_yet_imports_on_the_scale_given(tmp_path):
    """The trial: `judge import --aspect Fluency --scale 1-5` on a dataset without human scores was refused
    ("label items first"), though --scale says the scale; the judge is imported, and compared once labeled."""
    people, judge = tmp_path / "mine.csv", tmp_path / "gpt.csv"
    people.write_text("id,reply\nq1,hello there\nq2,see you\nq3,bye\n")
    judge.write_text("id,score\nq1,3\nq2,4.5\nq3,1\n")
    store_path = str(tmp_path / "s.sqlite")
    assert run_cli("datasets", "load", str(people), "--map", "response=reply", "--store", store_path).returncode == 0
    unscaled = run_cli("judge", "import", str(judge), "--dataset", "mine", "--aspect", "Fluency", "--store", store_path)
    assert unscaled.returncode == 2 and unscaled.stderr.strip() == (
        f"error: {judge}:2: aspect 'Fluency' is not one of the dataset's (none yet); a judge of a new aspect is "
        "imported with its scale (--aspect NAME --scale LOW-HIGH)")
    imported = run_cli("judge", "import", str(judge), "--dataset", "mine", "--aspect", "Fluency", "--scale", "1-5",
                       "--store", store_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith("gpt: 3 items, Fluency (") and "scale:fluency=1-5" in imported.stdout
    assert "\n  Fluency: nobody scored it on these items (people scored nothing yet): it is compared with people " \
           "once they label it" in imported.stdout  # said, so that an aspect named otherwise than the people's is seen
    store = geval.Store(store_path)
    items = {item.source_id: item.id for item in store.items("mine")}
    for key, label in {"q1": 3, "q2": 5, "q3": 1}.items():
        store.save_label(items[key], "fluency", label)
    table = geval.agree(store, "mine")
    pearson = table[(table["level"] == "item") & (table["metric"] == "pearson")]
    assert set(table["human"]) == {"fluency"} and list(pearson["n"]) == [3] and pearson["value"].iloc[0] > 0.99


def test_a_categorical_judges_signature_says_it_is_categorical(store, tmp_path):
    """Its scale read "label=0-2", the indexes of its categories, as if it were a score."""
    from tests.helpers import make_items

    items = [replace(item, human={"label": (float(k % 3),)}) for k, item in enumerate(make_items(6, dataset="cat"))]
    store.save_dataset(geval.Dataset("cat", "cat.json", "annotations", items,
                                     categories={"label": ("model_a", "model_b", "tie")}))
    path = tmp_path / "llm.csv"
    path.write_text("item_id,label\n" + "".join(f"{item.id},{('model_a', 'tie')[k % 2]}\n"
                                                 for k, item in enumerate(items)))
    geval.alttest.import_judge(store, "cat", path)
    assert "|scale:label=categorical:model_a/model_b/tie|" in store.combos("cat").iloc[0]["signature"]
    from tests.helpers import make_template

    text, fields = signature({"backend": "x"}, make_template(), [Aspect("label", 0, 2, categories=("a", "b", "c")),
                                                                Aspect("naturalness", 1, 3)])
    assert fields["scale"] == "label=categorical:a/b/c,naturalness=1-3"


@pytest.mark.parametrize("scale, to_judge", [((1, 10), lambda s: 1 + (s - 1) * 9 / 4), ((0, 100), lambda s: (s - 1) * 25),
                                             ((0, 1), lambda s: (s - 1) / 4)])
def test_a_judge_on_1_to_10_0_to_100_or_0_to_1_is_imported_and_mapped_onto_the_declared_scale(store, tmp_path, scale,
                                                                                                to_judge):
    """(Issue 43.2) `judge import --scale 1-10` was refused ("must be whole numbers with 0 <= min < max <= 9").
    Judges score 1-10, 0-100, 0-1 floats: imported on their own scale, they are mapped onto the people's
    declared one by the one rule of geval/analysis/scales.py, and one that gives the people's score passes."""
    items, _ = copied_people("copy")
    store.save_dataset(geval.Dataset("copy", "copy.csv", "table", items, scales={"Overall": (1.0, 5.0)}))
    path = tmp_path / "judge.csv"
    path.write_text("item_id,overall\n" + "".join(f"{i.id},{to_judge(i.human['Overall'][0]):g}\n" for i in items))
    done = geval.alttest.import_judge(store, "copy", path, scale=scale)[0]
    assert f"scale:overall={scale[0]}-{scale[1]}" in done.signature and done.notes == []
    result = geval.alttest.run(store, "copy", epsilon=0.15)[0]
    assert result.scale == (f"Its scores, on {scale[0]}-{scale[1]}, are mapped linearly onto the people's 1-5, the "
                            "scale declared for Overall")
    assert result.advantage_probability == pytest.approx(1.0) and result.passed is True
    with pytest.raises(geval.alttest.JudgeImportError, match=r"scale 0\.5-2\.5: its ends are whole numbers"):
        geval.alttest.import_judge(store, "copy", path, scale=(0.5, 2.5))
