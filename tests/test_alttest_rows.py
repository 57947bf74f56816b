"""What the alternative annotator test sets beside a judge (issue 36, points 3 and 5): every constant
of the scale as a baseline, the best of them shown and a warning when any passes; the ranking one
row per template version and judge, in the engine, the CLI and the report."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

import geval
from tests.helpers import make_items, make_template, run_cli, scripted


def symmetric(store, n: int = 300) -> list:
    """A symmetric 1-3 study (3 people, `n` items): each item's label 1, 2 or 3 (.4, .2, .4), each
    person giving it half the time, else one drawn alike; the people's commonest label is 1."""
    rng = np.random.default_rng(1)
    truth = rng.choice([1.0, 2.0, 3.0], size=n, p=[0.4, 0.2, 0.4])
    labels = np.where(rng.random((3, n)) < 0.5, truth, rng.choice([1.0, 2.0, 3.0], size=(3, n), p=[0.4, 0.2, 0.4]))
    items = [replace(item, human={"Natural": tuple(labels[:, k])}, annotators={"Natural": ("a", "b", "c")})
             for k, item in enumerate(make_items(n, dataset="symmetric", per_group=1))]
    assert Counter(labels.ravel()).most_common(1)[0][0] == 1.0
    store.save_dataset(geval.Dataset("symmetric", "symmetric.csv", "table", items))
    return items


def test_with_neg_rmse_the_middle_of_the_scale_passes_and_the_verdict_warns(store, tmp_path):
    items = symmetric(store)
    path = tmp_path / "middle.csv"  # an imported judge that always answers 2
    path.write_text("item_id,natural\n" + "".join(f"{i.id},2\n" for i in items))
    geval.alttest.import_judge(store, "symmetric", path)
    judge, constant = geval.alttest.run(store, "symmetric", epsilon=0.2, baseline=True)
    assert judge.passed is True and judge.winning_rate == 1.0
    assert constant.baseline and constant.judge == "always 2 (the best constant in this test: a baseline)"
    assert (constant.winning_rate, round(constant.advantage_probability, 2)) == (1.0, 0.74)
    assert constant.constants == "1 of the 3 constants of the scale passes (always 2)"  # not 1, the commonest
    warning = geval.alttest.caveat(judge, [judge, constant])
    assert warning == ("A judge that always answers 2 passes the test on Natural too (winning rate 1.00, advantage probability "
                       "0.74; 1 of the 3 constants of the scale passes (always 2)): here the test cannot tell a "
                       "judge from a constant, so this pass says little.")
    ranked = geval.alttest.ranking(store, "symmetric", [judge, constant])
    baseline = ranked[ranked["reading"] == "a constant"].iloc[0]
    assert (baseline["judge"], baseline["winning rate"], baseline["passed"]) == \
        ("always 2 (the best constant in this test: a baseline)", 1.0, "1 of 1")


def test_every_category_is_a_constant(shared_data, store):
    folder = shared_data / "alttest" / "mtbench"
    dataset = geval.load_dataset(folder, store=store)
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json", name="gpt-4o")
    constant = geval.alttest.run(store, dataset.name, epsilon=0.2, baseline=True)[-1]
    assert constant.baseline and constant.constants == "none of the 3 constants of the scale passes"
    assert constant.judge == "always model_b (the best constant in this test: a baseline)"


def three_templates(store) -> list[str]:
    """40 items scored by one scripted model through three templates of Natural."""
    items = [replace(item, human={"Natural": (s, s, 1 + (k % 3))}, annotators={"Natural": ("a", "b", "c")})
             for k, (item, s) in enumerate(zip(make_items(40, dataset="three"), [1.0, 2.0, 3.0, 2.0] * 10))]
    store.save_dataset(geval.Dataset("three", "three.csv", "table", items))
    for name in ("natural-short", "natural-steps", "natural-strict"):
        geval.score(store, items, make_template(name=name), scripted(), "three")
    labels = list(store.combos("three")["label"])
    assert len(labels) == 3 and len(set(store.combos("three")["model"])) == 1
    return labels


def test_three_templates_on_one_model_are_three_ranking_rows(file_store):
    labels = three_templates(file_store)
    results = geval.alttest.run(file_store, "three", epsilon=0.15, baseline=True)
    ranked = geval.alttest.ranking(file_store, "three", results)
    judges = ranked[ranked["reading"] != "a constant"]
    assert sorted(judges["judge"]) == sorted(labels) and (judges["aspects"] == "Natural").all()
    assert {r.judge: r.advantage_probability for r in results if not r.baseline} == \
        dict(zip(judges["judge"], judges["advantage probability"]))
    file_store.close()
    printed = run_cli("alttest", "three", "--brief", "--store", str(file_store.path)).stdout
    table = printed.split("Judges by advantage probability")[1]
    assert all(label in table for label in labels), printed


def test_the_reports_ranking_has_a_row_per_template(file_store):
    labels = three_templates(file_store)
    text = geval.reporting.report(file_store, "three", baselines=[], figures=False, n_boot=50,
                                  alttest_epsilon=0.15).markdown()
    section = text[text.index("## Can the judge replace an annotator?"):]
    ranked = section[section.index("| judge | aspects |"):].split("\n\n")[0]
    names = [label.split("@")[0] for label in labels]  # as the report names them, without their versions
    assert sorted(line.split(" · ")[0].removeprefix("| ") for line in ranked.splitlines()
                  if "scripted" in line) == sorted(names), ranked


def test_the_reports_annotators_say_their_groups_where_the_test_was_over_groups(store, tmp_path):
    """FED: turns in their dialogues (over groups) beside whole dialogues, one to a group (over items)."""
    dataset = geval.load_dataset("fed_sample", store=store)
    path = tmp_path / "first.csv"  # a judge that gives the first annotator's score
    path.write_text("item_id,engaging,coherent\n" + "".join(
        f"{i.id},{i.human['Engaging'][0] if 'Engaging' in i.human else ''},"
        f"{i.human['Coherent'][0] if 'Coherent' in i.human else ''}\n" for i in store.items(dataset.name)))
    geval.alttest.import_judge(store, dataset.name, path, name="first")
    text = geval.reporting.report(store, dataset.name, baselines=[], figures=False, n_boot=50,
                                  alttest_epsilon=0.15).markdown()
    section = text[text.index("Each annotator left out in turn:"):]
    assert "| judge | aspect | annotator | items | groups | judge wins | person wins | p | judge beats |" in section
    assert "| first (imported from first.csv) | Engaging | #1 | 60 | 20 | " in section
    assert "| first (imported from first.csv) | Coherent | #1 | 20 | – | " in section
