"""agreement: judgments joined with human scores, the agreement table, and `geval agree`."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from helpers import make_items, make_template, run_cli, scripted, template_text
from scipy import stats as sps

import geval
from geval.analysis.agreement import MEAN_OF_ASPECTS, human_aspect_for, judge_scores, latest
from geval.analysis.correlation import METRICS, agreement
from geval.analysis.disagreement import distributions, most_disagreeing, normalized
from geval.errors import StoreError
from geval.judging.backends.scripted import hashed_distribution
from geval.judging.templates import Aspect, load_template

NATURALNESS_TEXT = template_text(name="tc-naturalness")
MULTI = make_template(name="tc-multi", aspects=(("Naturalness", 1, 3, "Natural"), ("Engagingness", 1, 3, "Engaging")))
N_BOOT = 60


def response_of(prompt: str) -> str:
    return prompt.split("Response:\n", 1)[1].rsplit("\n\nForm:", 1)[0]


def human_like(dataset: geval.Dataset):
    """A script whose distribution leans towards the human score of the response, with noise."""
    human = {}
    for item in dataset.items:
        human.setdefault(item.response, {a.lower(): item.human_mean(a) for a in item.human})

    def script(prompt: str, aspect: Aspect) -> dict[int, float]:
        target = human[response_of(prompt)].get({"naturalness": "natural", "engagingness": "engaging"}[aspect.key])
        noise = hashed_distribution(prompt, aspect)
        return {s: noise[s] / 255 + (2.0 if round(target) == s else 0.0) for s in aspect.scale}

    return script


@pytest.fixture(scope="module")
def scored(tc_dataset, tmp_path_factory):
    """A file store holding Topical-Chat scored by a scripted judge, with a single- and a multi-aspect template."""
    folder = tmp_path_factory.mktemp("agree")
    template_path = folder / "tc-naturalness.txt"
    template_path.write_text(NATURALNESS_TEXT, "utf-8")
    store = geval.Store(folder / "store.sqlite")
    store.save_dataset(tc_dataset)
    judge = scripted(human_like(tc_dataset), name="human-like")
    geval.score(store, tc_dataset.items, MULTI, judge, tc_dataset.name)
    naturalness = load_template(template_path)
    progress = geval.score(store, tc_dataset.items, naturalness, judge, tc_dataset.name)
    yield store, naturalness, progress.signature, template_path
    store.close()


def vectors(store: geval.Store, dataset: geval.Dataset, template: geval.Template, signature: str, aspect: str,
            human: str):
    """Judge scores, human means, groups and systems of one aspect, straight from the judgments table."""
    frame = store.judgments(dataset.name, template.version, signature)
    frame = frame[frame["aspect"] == aspect]
    items = {item.id: item for item in dataset.items}
    judge = frame["score"].to_numpy(float)
    human_means = np.array([items[i].human_mean(human) for i in frame["item_id"]])
    groups = np.array([items[i].group for i in frame["item_id"]])
    systems = np.array([items[i].system for i in frame["item_id"]])
    return judge, human_means, groups, systems


def test_judgments_join_human_means(scored, tc_dataset):
    store, template, signature, _ = scored
    frame = geval.disagreements(store, tc_dataset.name, (template.version, signature))
    assert len(frame) == 360 and frame["item_id"].is_unique
    items = {item.id: item for item in tc_dataset.items}
    row = frame.iloc[7]
    assert row["human_score"] == pytest.approx(items[row["item_id"]].human_mean("Natural"))
    assert row["group"] == items[row["item_id"]].group and row["system"] == items[row["item_id"]].system
    scored_table = judge_scores(store, tc_dataset.name, (template.version, signature))
    assert list(scored_table.scores.columns) == ["naturalness"] and len(scored_table.scores) == 360
    assert scored_table.humans == {"naturalness": "Natural"} and scored_table.scales == {"naturalness": (1, 3)}
    assert scored_table.signature_json == store.judgments(tc_dataset.name, template.version,
                                                          signature)["signature_json"].iloc[0]
    brief = geval.disagreements(store, tc_dataset.name, (template.version, signature), columns="brief")
    assert list(brief.columns) == [c for c in frame.columns if c not in ("prompt", "raw", "coverage", "parsed")]
    pd.testing.assert_frame_equal(brief, frame[brief.columns])  # the same rows, without prompts and answers


def test_the_scores_of_each_variant_hold_the_items_ids_once(scored, tc_dataset):
    store, template, signature, _ = scored
    combo = (template.version, signature)
    mean, most_probable = (judge_scores(store, tc_dataset.name, combo, variant).scores for variant in ("wmean", "argmax"))
    assert mean.index.equals(most_probable.index) and not mean.equals(most_probable)
    kept = [found for key, (_, found) in store._reads.items() if key[:2] == ("remembered", "judge scores")
            and key[-1] in ("wmean", "argmax") and key[4] == signature]
    assert len(kept) == 2 and kept[0].index.array is kept[1].index.array  # one array of ids for both


def test_latest_is_the_most_recent_combination(scored, tc_dataset):
    store, template, signature, _ = scored
    assert latest(store, tc_dataset.name) == (template.version, signature)
    assert latest(store, tc_dataset.name, MULTI.version)[0] == MULTI.version
    with pytest.raises(StoreError) as error:
        latest(store, "nope")  # not stored: said so, not "nothing scored"
    assert str(error.value) == (f"dataset 'nope' is not in {store.path}; load or score it first "
                                f"(stored: {tc_dataset.name})")
    with pytest.raises(StoreError) as error:
        latest(store, tc_dataset.name, "no-such-version")
    assert str(error.value) == (f"nothing scored on dataset '{tc_dataset.name}' yet (with these settings); run "
                                "`geval score` first")


def test_a_judge_that_scored_none_of_the_items_asked_says_so(scored, tc_dataset):
    """The Queues page's judge against the people who labeled other items than it scored: "no judgments for dataset
    ... with these settings" read as if it had none."""
    store, template, signature, _ = scored
    other = make_items(3)  # items of no judgment
    with pytest.raises(StoreError) as error:
        judge_scores(store, tc_dataset.name, (template.version, signature), items=other)
    assert str(error.value) == (f"the judge scored none of these 3 items (it scored {len(tc_dataset.items)} other "
                                f"items of dataset '{tc_dataset.name}')")


def test_agreement_table_matches_stats_on_the_same_vectors(scored, tc_dataset):
    store, template, signature, _ = scored
    table = geval.agree(store, tc_dataset.name, (template.version, signature), n_boot=N_BOOT)
    assert list(table.columns) == ["protocol", "aspect", "human", "level", "metric", "value", "low", "high", "n",
                                   "groups", "unscored", "note", "variant"]
    assert len(table) == 9
    assert set(zip(table["level"], table["metric"])) == {(lv, m) for lv in ("item", "group", "system")
                                                         for m in METRICS}
    assert set(table["aspect"]) == {"naturalness"} and set(table["human"]) == {"Natural"}
    assert (table["unscored"] == 0).all()
    judge, human, groups, systems = vectors(store, tc_dataset, template, signature, "naturalness", "Natural")
    expected = {(r.level, r.metric): r for r in agreement(judge, human, groups, systems, n_boot=N_BOOT)}
    for _, row in table.iterrows():
        want = expected[row["level"], row["metric"]]
        assert row["value"] == pytest.approx(want.value, abs=1e-12)
        assert row["low"] == pytest.approx(want.low, abs=1e-9, nan_ok=True)
        assert row["high"] == pytest.approx(want.high, abs=1e-9, nan_ok=True)
        assert row["n"] == want.n
    item_pearson = table[(table["level"] == "item") & (table["metric"] == "pearson")].iloc[0]
    assert item_pearson["value"] == pytest.approx(sps.pearsonr(judge, human).statistic)
    assert item_pearson["value"] > 0.3  # the human-like script does agree
    assert item_pearson["n"] == 360
    assert table[(table["level"] == "group")]["n"].max() <= 60
    assert (table[(table["level"] == "system")]["n"] == 6).all()


def test_multi_aspect_table_adds_the_mean_of_aspects_against_overall(scored, tc_dataset):
    store, _, _, _ = scored
    table = geval.agree(store, tc_dataset.name, (MULTI.version, None), n_boot=N_BOOT, levels=("item",))
    assert list(dict.fromkeys(table["aspect"])) == ["naturalness", "engagingness", MEAN_OF_ASPECTS]
    assert list(dict.fromkeys(table["human"])) == ["Natural", "Engaging", "Overall"]
    signature = table_signature(store, tc_dataset, MULTI)
    nat, human_overall, _, _ = vectors(store, tc_dataset, MULTI, signature, "naturalness", "Overall")
    eng, _, _, _ = vectors(store, tc_dataset, MULTI, signature, "engagingness", "Overall")
    mean_row = table[(table["aspect"] == MEAN_OF_ASPECTS) & (table["metric"] == "pearson")].iloc[0]
    assert mean_row["value"] == pytest.approx(sps.pearsonr((nat + eng) / 2, human_overall).statistic)


def table_signature(store: geval.Store, dataset: geval.Dataset, template: geval.Template) -> str:
    return latest(store, dataset.name, template.version)[1]


def test_human_aspect_for():
    assert human_aspect_for(MULTI, "naturalness", ["Overall", "Natural"]) == "Natural"
    plain = make_template(aspects=(("Overall", 1, 5),))
    assert human_aspect_for(plain, "overall", ["overall"]) == "overall"  # same name, any case
    assert human_aspect_for(plain, "overall", ["Natural"]) is None


def test_unscored_judgments_are_dropped_and_counted(store):
    items = make_items(12, per_group=3, systems=4)
    dataset = geval.Dataset("synthetic", "x", "table", items)
    store.save_dataset(dataset)

    answers = {item.response: ("no idea" if i % 4 == 0 else f"Naturalness: {1 + i % 3}") for i, item in enumerate(items)}
    judge = scripted(lambda prompt, aspect: answers[response_of(prompt)], name="texts")
    geval.score(store, items, make_template(), judge, "synthetic")
    table = geval.agree(store, "synthetic", None, n_boot=20)
    assert (table["unscored"] == 3).all()
    assert (table[table["level"] == "item"]["n"] == 9).all()


def test_no_matching_human_aspect_is_an_error(store):
    items = make_items(4)
    store.save_dataset(geval.Dataset("synthetic", "x", "table", items))
    template = make_template(aspects=(("Fluency", 1, 3),))
    geval.score(store, items, template, scripted(), "synthetic")
    with pytest.raises(StoreError) as error:
        geval.agree(store, "synthetic", None, n_boot=10)
    assert str(error.value) == (
        f"no judge aspect of {template.label} matches a human aspect: no human aspect of 'synthetic' (Natural) is "
        'named Fluency: set human = "..." on the aspect in the template header (e.g. human = "Natural"), or label '
        "Fluency on the Label page (or import labels with `python -m geval labels import`)"
    )


# (the template's aspect: name, human; the dataset's human aspects; how the reason starts): no score or label yet,
# none of the name the header asks for, or no header and no aspect of its name
NO_HUMAN = [
    (("Naturalness", "Natural"), [], "'mine' has no human score or label yet: label Naturalness on the Label page"),
    (("Naturalness", "Natural"), ["Overall"],
     "test-naturalness compares Naturalness with 'Natural' (its human = \"Natural\"), and 'mine' has no score or "
     "label of that name (it has Overall): label Naturalness on the Label page"),
    (("Fluency", ""), ["Overall"], "no human aspect of 'mine' (Overall) is named Fluency: set human = \"...\""),
]


@pytest.mark.parametrize("aspect, humans, said", NO_HUMAN, ids=["nothing yet", "not that name", "no header"])
def test_why_no_human_aspect_is_compared_tells_no_labels_yet_from_no_match(aspect, humans, said):
    from geval.analysis.agreement import no_human_because

    template = make_template(aspects=((aspect[0], 1, 3, aspect[1]) if aspect[1] else (aspect[0], 1, 3),))
    because = no_human_because(template, aspect[0].lower(), humans, "mine")
    assert because.startswith(said), because
    assert ("set human" in because) == bool(humans)  # never "set human = ..." when there is nothing to name


def test_distributions_and_normalized(scored, tc_dataset):
    store, template, signature, _ = scored
    frame = store.judgments(tc_dataset.name, template.version, signature)
    dists = distributions(frame)
    assert all(set(d) == {1, 2, 3} and math.isclose(sum(d.values()), 1.0) for d in dists)
    assert list(normalized([1, 2, 3], 1, 3)) == [0.0, 0.5, 1.0]
    assert list(normalized([4, 4], 4, 4)) == [0.0, 0.0]


# --- the CLI ----------------------------------------------------------------------------------

ROW = re.compile(r"^\s*naturalness\s+Natural\s+(item|group|system)\s+(pearson|spearman|kendall)\s+"
                 r"([+-]\d\.\d{3}|undefined)\s+(\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\])?", re.MULTILINE)


@pytest.mark.parametrize("how", ["--store", "GEVAL_STORE"])
def test_cli_agree_prints_the_table(scored, tc_dataset, how):
    store, template, signature, template_path = scored
    args = ["agree", tc_dataset.name, "--template", str(template_path), "--bootstrap", "50"]
    if how == "--store":
        result = run_cli(*args, "--store", str(store.path))
    else:
        result = run_cli(*args, env={"GEVAL_STORE": str(store.path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"dataset tc_usr_data; 360 items; signature: {signature}\n")
    rows = {(level, metric): (value, ci) for level, metric, value, ci in ROW.findall(result.stdout)}
    assert set(rows) == {(lv, m) for lv in ("item", "group", "system") for m in METRICS}
    # every row has a 95% CI but the system level's: 6 systems are too few for one, and the row says so
    assert {key for key, (_, ci) in rows.items() if not ci} == {("system", m) for m in METRICS}
    assert result.stdout.count("no interval: 6 systems; an interval at the system level needs at least 10") == 3
    judge, human, _, _ = vectors(store, tc_dataset, template, signature, "naturalness", "Natural")
    assert float(rows["item", "pearson"][0]) == pytest.approx(sps.pearsonr(judge, human).statistic, abs=5e-4)
    assert float(rows["item", "spearman"][0]) == pytest.approx(sps.spearmanr(judge, human).statistic, abs=5e-4)
    assert float(rows["item", "kendall"][0]) == pytest.approx(sps.kendalltau(judge, human).statistic, abs=5e-4)


def test_cli_agree_writes_csv_and_checks_levels(scored, tc_dataset, tmp_path):
    store, _, _, template_path = scored
    out = tmp_path / "table.csv"
    result = run_cli("agree", tc_dataset.name, "--store", str(store.path), "--template", str(template_path),
                     "--levels", "item", "--bootstrap", "20", "--csv", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text().splitlines()[0] == "protocol,aspect,human,level,metric,value,low,high,n,groups,unscored,note,variant"
    assert len(out.read_text().splitlines()) == 4
    bad = run_cli("agree", tc_dataset.name, "--store", str(store.path), "--levels", "item,corpus")
    assert bad.returncode == 2
    assert bad.stderr.strip() == "error: --levels: unknown level(s) corpus; use item, group, system"


def test_cli_agree_on_an_unscored_dataset(tmp_path):
    result = run_cli("agree", "nothing", "--store", str(tmp_path / "empty.sqlite"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (  # not stored at all: said so (a stored one with no judgment: test_latest_...)
        f"error: dataset 'nothing' is not in {tmp_path / 'empty.sqlite'}; load or score it first (stored: none)"
    )


def test_the_items_of_largest_disagreement_list_equals_by_item_id_whatever_order_the_rows_come_in():
    rows = pd.DataFrame({"item_id": ["d", "b", "e", "a", "c", "f"], "disagreement": [0.5, 0.9, 0.5, 0.5, None, 0.1]})
    for order in ([0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 0, 3, 1, 5, 4]):
        assert most_disagreeing(rows.iloc[order], 3)["item_id"].tolist() == ["b", "a", "d"]


def test_a_figure_that_rounds_to_zero_never_reads_minus_zero():
    """A kappa of -1e-17 read "-0.000 [-0.547, 0.547]" on the Agreement page, a difference "-0.000 [...]"; an
    interval's bound keeps its sign (a lower bound of -0.0001 reads -0.000: the interval holds 0)."""
    from geval.analysis.correlation import difference_reading, reading
    from geval.reporting.tables import number

    assert reading(-1e-17, -0.547, 0.547, "item", 30, 12) == "0.000 [-0.547, 0.547]"
    assert difference_reading(-0.0001, -0.901, 0.901, float("nan")) == "+0.000 [-0.901, +0.901]"
    assert number(-0.0004) == "0.000" and number(-0.3) == "-0.300"
    from geval.decisions.systems import difference_sentence

    assert difference_sentence("A", "B", -0.001, -0.89, 0.88).endswith("(the interval holds 0): +0.00 [-0.89, +0.88]")
    # every item labeled: the means themselves (it read "A is rated lower than B ...: +0.00 [-0.00, -0.00]")
    assert difference_sentence("A", "B", -0.001, -0.001, -0.001) == ("A and B have the same mean by people's standard "
                                                                      "(exact: every item labeled): +0.00")
    assert difference_sentence("A", "B", 0.13, 0.13, 0.13, "Natural") == ("A is rated higher than B on Natural by people's "
                                                                          "standard: +0.13 (exact: every item labeled)")
    assert reading(0.2, -0.0001, 0.4, "item", 30, 12) == "0.200 [-0.000, 0.400]"  # a bound keeps its sign: below 0


def test_a_group_level_read_on_no_usable_group_says_why_not_zero_groups():
    """A file of one or two responses per dialogue read "n/a (0 groups)" at the group level, as if it had no
    dialogues: none has the 3 items a correlation inside it needs."""
    from geval.analysis.correlation import reading

    assert reading(float("nan"), float("nan"), float("nan"), "group", 0) == "n/a (no group of 3+ items)"
    assert reading(float("nan"), float("nan"), float("nan"), "group", 2) == "n/a (2 groups, 10 needed)"
    assert reading(float("nan"), float("nan"), float("nan"), "group", 9) == "n/a (9 groups, 10 needed)"
    assert reading(float("nan"), float("nan"), float("nan"), "group", 12) == "n/a (undefined)"  # enough: constant
