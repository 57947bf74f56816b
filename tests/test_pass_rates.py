"""Pass rates (issue 42.7): pass/fail, yes/no and true/false words taken where labels, judges and
dataset files come in, read as categories, and each system's pass rate from the judge on every item
and people on a few, as the systems' means are; the point estimate cross-checked against judgy's
`estimate_success_rate` where both apply."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import geval
from geval.decisions.labeling import PassRatesError, pass_aspects, pass_rates
from geval.analysis.judge_errors import judge_errors
from tests.helpers import run_cli, scripted

SYSTEMS = ("alpha", "beta", "gamma")


def write_table(path, rows: list[dict]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_pass_fail_words_come_in_as_two_categories_from_a_dataset_labels_and_a_judge_file(tmp_path):
    """A dataset column, a long labels CSV and a judge file of words: each was refused ("not a number"), or as
    0/1 read as a 0-1 scale. Any case, JSON true/false too; the negative word first (index 0)."""
    people = tmp_path / "people.jsonl"
    people.write_text("".join(json.dumps({"id": f"r{k}", "reply": f"reply {k}", "ok": bool(k % 3),
                                          "verdict": ["Pass", "FAIL", "pass"][k % 3]}) + "\n" for k in range(12)))
    store = geval.Store(tmp_path / "s.sqlite")
    dataset = geval.load_dataset(people, mapping=["id=id", "response=reply", "score:ok=ok", "score:verdict=verdict"],
                                 store=store)
    assert dataset.categories == {"ok": ("false", "true"), "verdict": ("fail", "pass")}
    assert [item.human["verdict"] for item in dataset.items[:3]] == [(1.0,), (0.0,), (1.0,)]
    assert [item.human["ok"] for item in dataset.items[:2]] == [(0.0,), (1.0,)]
    assert sorted(pass_aspects(store, "people")) == ["ok", "verdict"]
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,aspect,score,annotator\n" + "".join(f"r{k},helpful,{'yes' if k % 2 else 'No'},ann\n"
                                                                   for k in range(12)))
    assert run_cli("labels", "import", str(labels), "--dataset", "people", "--store",
                   str(tmp_path / "s.sqlite")).returncode == 0
    store = geval.Store(tmp_path / "s.sqlite")
    assert store.categories("people")["helpful"] == ("no", "yes")
    ids = {item.source_id: item.id for item in store.items("people")}
    given = store.labels("people").set_index("item_id")["score"]
    assert (given[ids["r0"]], given[ids["r1"]]) == (0.0, 1.0)  # No, yes
    judge = tmp_path / "judge.csv"
    judge.write_text("id,verdict\n" + "".join(f"r{k},{'PASS' if k % 2 else 'fail'}\n" for k in range(12)))
    imported = run_cli("judge", "import", str(judge), "--dataset", "people", "--store", str(tmp_path / "s.sqlite"))
    assert imported.returncode == 0 and "scale:verdict=categorical:fail/pass" in imported.stdout, imported.stderr
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("item_id,aspect,score\nr0,helpful,yes\nr1,helpful,2\n")
    refused = run_cli("labels", "import", str(mixed), "--dataset", "people", "--store", str(tmp_path / "s.sqlite"))
    assert refused.returncode == 2 and f"{mixed}:2: score 'yes' is not a number; a score is a number, or for every " \
        "label of an aspect one of two words (pass/fail, yes/no, true/false); other categories are read from a " \
        "folder of annotations" in refused.stderr


def constructed(tmp_path, items: int = 60, labeled: int = 20):
    """Three systems of `items` items, no human scores; pass/fail labels on `labeled` of each (a labels file),
    and a judge's pass/fail on every item, its pass rate the same on the labeled items as on the others:
    there prediction-powered inference and judgy's correction (Rogan-Gladen) both give the labels' rate."""
    rows, judge, labels, truth = [], [], [], {}
    for s, (human_pass, true_positive, false_positive, unlabeled_pass) in zip(
            SYSTEMS, [(14, 11, 1, 24), (10, 8, 4, 24), (6, 5, 3, 16)]):  # judge rate .6, .6, .4 on both parts
        for k in range(items):
            item = f"{s}-{k}"
            rows.append({"id": item, "system": s, "document": f"document {k}", "summary": f"{s} says {k}"})
            if k < labeled:
                person = k < human_pass
                said = k < true_positive if person else k - human_pass < false_positive
                labels.append({"item_id": item, "aspect": "verdict", "score": "pass" if person else "fail"})
                truth[item] = (person, said)
            else:
                said = k - labeled < unlabeled_pass
            judge.append({"id": item, "verdict": "pass" if said else "fail"})
    labels = [labels[k] for k in np.random.default_rng(1).permutation(len(labels))]  # labeled in a random order
    for name, content in (("items.csv", rows), ("labels.csv", labels), ("judge.csv", judge)):
        write_table(tmp_path / name, content)
    return truth, judge


def test_each_systems_pass_rate_is_judgys_where_both_apply(tmp_path):
    """The point estimate of each system's pass rate (labels and judge combined) against judgy's
    `estimate_success_rate` on the constructed case: the judge's rate on the labeled items equals its rate
    on the others, so both reduce to the labels' rate (PPI's correction term is 0; judgy's TPR/TNR
    correction inverts exactly). The judge's true-positive and true-negative rates are the counted ones."""
    judgy = pytest.importorskip("judgy")
    truth, judge = constructed(tmp_path)
    store_path = str(tmp_path / "s.sqlite")
    for command in (["datasets", "load", str(tmp_path / "items.csv"), "--map", "id=id", "--map", "response=summary",
                     "--map", "grounding=document", "--map", "system=system"],
                    ["labels", "import", str(tmp_path / "labels.csv"), "--dataset", "items"],
                    ["judge", "import", str(tmp_path / "judge.csv"), "--dataset", "items", "--name", "gpt"]):
        done = run_cli(*command, "--store", store_path)
        assert done.returncode == 0, done.stderr
    store = geval.Store(store_path)
    found = pass_rates(store, "items", "verdict")
    assert (found.counted, found.other) == ("pass", "fail") and found.labeled == 60
    said = {row["id"]: row["verdict"] == "pass" for row in judge}
    table = found.means.table.set_index("system")
    for system in SYSTEMS:
        labeled = [item for item in truth if item.startswith(system)]
        others = [item for item in said if item.startswith(system) and item not in truth]
        theta, _, _ = judgy.estimate_success_rate([int(truth[i][0]) for i in labeled], [int(truth[i][1]) for i in labeled],
                                                  [int(said[i]) for i in others], bootstrap_iterations=200)
        assert table.loc[system, "combined"] == pytest.approx(theta, abs=1e-9), system
        assert table.loc[system, "labeled"] == 20 and table.loc[system, "combined_low"] <= theta
    positives = [v for v in truth.values() if v[0]]
    negatives = [v for v in truth.values() if not v[0]]
    assert found.true_positive.value == pytest.approx(np.mean([said for _, said in positives]))
    assert found.true_negative.value == pytest.approx(np.mean([not said for _, said in negatives]))
    printed = run_cli("systems", "items", "--store", store_path)
    assert printed.returncode == 0, printed.stderr
    # the dataset has no scores of its own: the labels imported are the human side, yours ("as you would give it")
    assert "items · verdict (fail/pass): each system's pass rate as you would give it" in printed.stdout
    assert "the judge alone (its scores' mean on 0-1)" in printed.stdout  # "the judge's pass rate" read as its labels'
    rows = {line.split()[0]: line for line in printed.stdout.splitlines() if line.strip().startswith(SYSTEMS)}
    assert rows.keys() == set(SYSTEMS) and rows["alpha"].split()[3] == "70%", printed.stdout
    assert "(its true-positive rate); of those labeled 'fail', 'fail'" in printed.stdout
    written = geval.reporting.report(store, "items", n_boot=100, baselines=[]).markdown()  # the report has them too
    assert "### verdict (fail/pass): each system's pass rate as you would give it" in written  # (it said none
    assert found.judge_line() in written and found.source_line() in written  # could be computed)
    assert "no system's mean is estimated on it (its codes are not scores); each system's pass rate is estimated " \
           "instead" in written
    # one label an item: no agreement among people to read (it read "Krippendorff's alpha, nominal, nan.")
    assert "verdict is categorical (fail, pass): Krippendorff's alpha, nominal, n/a: no item has two people's " \
           "labels." in written


def test_a_categorical_aspect_of_more_than_two_categories_stays_out_with_its_line(tmp_path):
    rows = [{"id": f"r{k}", "reply": f"reply {k}", "winner": ["model_a", "model_b", "tie"][k % 3]} for k in range(9)]
    folder = tmp_path / "three"
    folder.mkdir()
    (folder / "human_annotations.json").write_text(json.dumps({
        name: {row["id"]: row["winner"] for row in rows} for name in ("a", "b", "c")}))
    store = geval.Store(tmp_path / "s.sqlite")
    geval.load_dataset(folder, store=store)
    with pytest.raises(PassRatesError) as error:
        pass_rates(store, "three", "label")
    assert str(error.value) == ("label is categorical (3 categories: model_a, model_b, tie): a mean needs scores, so "
                                "no system's mean is estimated on it (its codes are not scores); nor a pass rate, "
                                "having more than two")
    assert pass_aspects(store, "three") == []


def test_a_pass_rates_interval_holds_the_people_s_rate_for_every_system_also_skewed_ones():
    """A rate is a bounded mean on [0, 1]: the systems' intervals hold it, for every single system, also
    where almost every item passes or fails (rates .95 to .05), with a judge of true-positive rate .85
    and true-negative rate .75: the padded t of a fixed number of labels and the betting interval of the
    Label page's live line; the t with the prior alone misses the middle systems more often (500 draws of
    10 labels per system here, Monte Carlo sd about .01 at .95; docs/statistics.md has 5-40)."""
    from geval.decisions.systems_coverage import simulate

    rng = np.random.default_rng(4)
    truth = (rng.random((5, 100)) < np.array([0.95, 0.8, 0.5, 0.2, 0.05])[:, None]).astype(float)
    judge = np.where(truth == 1, rng.random(truth.shape) < 0.85, rng.random(truth.shape) < 0.25).astype(float)
    found = simulate(truth, judge[..., None], 10, 500, seed=10, scale=(0.0, 1.0))
    assert found.method == "padded t"
    held = [found.people.coverage, found.combined.coverage, found.others["betting, combined"].coverage]
    assert all((reading >= 0.93).all() for reading in held), held
    assert found.others["t with the prior, people only"].coverage.min() < found.people.coverage.min()


def scored_on_words(tmp_path, seed: int, column: str, aspect: str, scale: tuple[int, int]):
    """A file of 60 replies (3 systems, 2 to a dialogue) whose `column` people labeled pass or fail at random
    (`seed`), stored as "mine" and scored by the scripted judge on a one-aspect template, `aspect` on `scale`,
    compared with it: (store, dataset)."""
    rng = np.random.default_rng(seed)
    rows = [{"id": f"r{k}", "reply": f"reply {k}", "system": SYSTEMS[k % 3], "dialogue": f"d{k // 2}",
             column: "pass" if rng.random() < 0.5 else "fail"} for k in range(60)]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = geval.Store(tmp_path / "s.sqlite")
    dataset = geval.load_dataset(path, mapping=["id=id", "response=reply", "system=system", "group=dialogue",
                                                f"score:{column}={column}"], store=store)
    template = geval.Template.parse(f"+++\nname = \"{aspect.lower()}\"\ntask = \"Is it good?\"\n[[aspects]]\n"
                                    f"name = \"{aspect}\"\nhuman = \"{column}\"\nmin = {scale[0]}\nmax = {scale[1]}\n"
                                    f"+++\nAnswer:\n{{{{response}}}}\n\nForm:\n- {aspect}:\n", source=f"{aspect}.txt")
    geval.score(store, dataset.items, template, scripted(), "mine")
    return store, dataset


def test_a_judge_on_a_0_1_scale_is_read_on_pass_fail_as_the_nearest_category_everywhere(tmp_path):
    """A user's 0-1 template compared with a pass/fail column: its weighted means (0.56, 0.97, ...) were compared
    with the category indexes as they are, so that accuracy read 0.000 [0.000, 0.000] beside a raw agreement of
    42%, and how it errs said it never answers "pass". Each reading now takes the nearest category (0.5 and above:
    pass): the accuracy, the confusion matrix and the true-positive rate (and the test's accuracy alignment)."""
    store, dataset = scored_on_words(tmp_path, 3, "ok", "Acceptable", (0, 1))
    scores = store.judgments("mine", columns=("item_id", "score")).set_index("item_id")["score"]
    assert not scores.isin([0.0, 1.0]).all()  # weighted means, not labels
    said = {item.id: float(np.floor(scores[item.id] + 0.5)) for item in dataset.items}
    truth = {item.id: item.human["ok"][0] for item in dataset.items}
    hits = np.mean([said[i] == truth[i] for i in said])
    table = geval.agree(store, "mine")
    assert table.loc[0, "metric"] == "accuracy" and table.loc[0, "value"] == pytest.approx(hits) and hits > 0.2
    confusion = judge_errors(store, "mine")[0].labels.confusion
    expected = np.array([[sum(truth[i] == a and said[i] == b for i in said) for b in (0, 1)] for a in (0, 1)])
    assert (confusion == expected).all() and confusion[:, 1].sum() > 0  # it does answer "pass"
    rates = pass_rates(store, "mine", "ok")
    assert rates.true_positive.value == pytest.approx(expected[1, 1] / expected[1].sum())


def test_the_judges_rates_name_the_items_they_are_read_on_where_labels_tie(tmp_path):
    """With you as one more annotator beside one person, half the items labeled tie: the sentence said "on the 24
    items labeled" of rates read on the 12 that do not tie; it names those, and the ties left out."""
    from tests.helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 40)
    store = geval.Store(tmp_path / "store.sqlite")
    for k, item in enumerate(dataset.items[:24]):  # the same label as the person's on every other item
        own = int(item.human["verdict"][0])
        store.save_label(item.id, "verdict", own if k % 2 else 1 - own)
    store.set_human_side(dataset.name, "both")
    found = pass_rates(store, dataset.name, "verdict")
    assert (found.labeled, found.tied) == (12, 12)  # the 24 items you labeled: 12 where you and the person agree
    assert found.judge_line().startswith("The judge against the majority of people and you on the 12 items whose "
                                         "labels have a majority (12 whose labels tie left out): of the items labeled")
    assert found.judge_line().endswith("The combined rate is the judge's own, corrected by its errors on the labeled "
                                       f"items, with {found.means.interval_words()}.")


def test_the_judges_rates_say_they_read_every_item_labeled_not_only_those_drawn_for_the_rates(tmp_path):
    """Seen as a new user: "on the 12 items labeled" under a table of 10 labeled (the labels drawn for the rates),
    and no way to tell which the judge's rates were read on."""
    from tests.helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 40)
    found = pass_rates(geval.Store(tmp_path / "store.sqlite"), dataset.name, "verdict", per_system=10)
    assert found.means.table["labeled"].sum() == 10 and found.labeled == 40
    assert found.judge_line().startswith("The judge against the people's majority on the 40 items labeled, not only "
                                         "the 10 drawn for the rates above: of the items labeled 'pass'")


def test_on_your_labels_the_rates_are_as_you_would_give_them(tmp_path):
    """With your labels as the human side, the title still said "as people would give it" and the column of every
    item's labels "people's pass rate": both name you."""
    from tests.helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 40)
    store = geval.Store(tmp_path / "store.sqlite")
    for k, item in enumerate(dataset.items):  # every item labeled: the rate of every item is yours, not estimated
        store.save_label(item.id, "verdict", k % 3 == 0)
    store.set_human_side(dataset.name, "you")
    found = pass_rates(store, dataset.name, "verdict")
    assert found.title() == "verdict (fail/pass): each system's pass rate as you would give it"
    assert found.judge_line().startswith("The judge against your labels on the 40 items labeled")
    assert found.judge_line().endswith("Every item is labeled: the rates above are the people's own, not "
                                       "estimates.")  # once garbled, and said of intervals there were none of
    assert found.table()["your pass rate, every item"].tolist() == [f"{14 / 40:.0%}"]
    assert found.table()["pass rate, labels alone"].tolist() == [f"{14 / 40:.0%}"]  # its own rate: no [35%, 35%]
    assert found.table()["system"].tolist() == ["all items"]  # not a blank cell


def test_a_judge_on_a_1_5_scale_has_its_rate_on_0_1_not_its_mean_as_a_percentage(tmp_path):
    """A 1-5 template compared with a pass/fail column: "the judge alone (its scores' mean on 0-1)" read 205%, its
    1-5 mean (2.05) printed as a share. It is its mean mapped onto 0-1, as the systems' section maps a judge's
    scale onto the people's."""
    store, _ = scored_on_words(tmp_path, 5, "verdict", "Overall", (1, 5))
    rates = pass_rates(store, "mine", "verdict", per_system=10)
    own = rates.means.table["judge"]
    assert own.between(1, 5).all() and (own > 1).any()  # the judge's own 1-5 means
    shown = rates.table()["the judge alone (its scores' mean on 0-1)"]
    assert list(shown) == [f"{(v - 1) / 4:.0%}" for v in own]
    assert all(0 <= float(v.rstrip("%")) <= 100 for v in shown)
