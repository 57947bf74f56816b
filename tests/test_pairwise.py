"""Pairwise judging with position swap (geval.judging.pairwise, geval.analysis.pairwise, geval.data.pairs):
a pairwise template asks every pair in both orders (two calls, two cache keys), the judgment is the
mean after swapping back; pairs load from CSV and JSONL (bad rows: one line, nothing stored), are made
from a scored dataset, and MT-Bench's instances are pairs; the figures (position consistency,
first-position preference, ties, accuracy with and without ties, kappa, win rates) against hand
counts and scikit-learn; the OpenAI stub's logprobs and samples; `geval agree` and `datasets pairs`."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, pair_rows, scripted, write_pairs

import geval
from geval.analysis import pairwise as analysis
from geval.analysis.categorical import label_disagreement
from geval.cli import main
from geval.data.items import Pair, Turn
from geval.data.pairs import PREFERENCES, pair_item, preference_index
from geval.errors import DatasetError, TemplateError
from geval.judging import pairwise
from geval.judging.judgment import AspectScore, cache_key

sys.path.insert(0, str(REPO / "stubs"))
from openai_stub import OpenAIStub  # noqa: E402

BODY = "Question:\n{{context}}\n\nA: {{response_a}}\nB: {{response_b}}\n\nWhich is better? Answer A, B or tie."


def template(body: str = BODY, aspects: str = '[[aspects]]\nname = "Preference"\n', name: str = "pw") -> geval.Template:
    return geval.Template.parse(f'+++\nname = "{name}"\nkind = "pairwise"\ntask = "Compare."\n{aspects}+++\n{body}\n',
                                source=f"{name}.txt")


def shown_as(prompt: str) -> tuple[str, str]:
    """The responses a prompt of BODY shows as A and as B."""
    return prompt.split("\nA: ")[1].split("\n")[0], prompt.split("\nB: ")[1].split("\n")[0]


def prefers_good(prompt: str, aspect) -> dict[int, float]:
    """A judge that sees quality: it prefers the response holding 'good', whatever its position."""
    a, b = shown_as(prompt)
    if ("good" in a) == ("good" in b):
        return {0: 0.1, 1: 0.1, 2: 0.8}
    return {0: 0.8, 1: 0.1, 2: 0.1} if "good" in a else {0: 0.1, 1: 0.8, 2: 0.1}


def always_first(prompt: str, aspect) -> dict[int, float]:
    """A judge that only sees positions: it answers A."""
    return {0: 0.9, 1: 0.05, 2: 0.05}


# --- templates and calls ----------------------------------------------------------------------------


def test_a_pairwise_aspect_is_answered_a_b_or_tie_and_needs_no_scale():
    found = template().aspects[0]
    assert (found.min, found.max, found.labels, found.categories) == (0, 2, ("A", "B", "tie"), PREFERENCES)


@pytest.mark.parametrize("body, aspects, said", [
    ("A: {{response_a}}\nWhich?", '[[aspects]]\nname = "Preference"\n', "needs {{response_a}} and {{response_b}}"),
    (BODY, '[[aspects]]\nname = "Preference"\nmin = 1\nmax = 3\n', "give only name and human"),
    (BODY, '[[aspects]]\nname = "Helpful"\n[[aspects]]\nname = "Harmless"\n', "name {{aspect}} in the body"),
])
def test_a_pairwise_template_that_cannot_be_asked_says_why(body, aspects, said):
    with pytest.raises(TemplateError, match=said.replace("{", r"\{").replace("}", r"\}")):
        template(body, aspects)


def test_every_pair_is_asked_in_both_orders_and_the_cache_keys_them_apart():
    item = pair_item("d", "here", Pair("first text", "second text", "m1", "m2"), [Turn("User", "what?")])
    calls = template().calls(item)
    assert [call.keep for call in calls] == [(("preference", "preference#order1"),), (("preference", "preference#order2"),)]
    assert shown_as(calls[0].prompt) == ("first text", "second text")
    assert shown_as(calls[1].prompt) == ("second text", "first text")  # swapped
    keys = {cache_key({"backend": "x"}, call.prompt, list(call.aspects)) for call in calls}
    assert len(keys) == 2


def test_a_pairwise_template_fits_pairs_only_and_a_single_response_template_refuses_pairs(shared_data):
    pairs = geval.load_dataset(shared_data / "alttest" / "mtbench").items
    singles = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json").items
    shipped = geval.Template.load("mtbench-pairwise")
    assert shipped.fits(pairs) and not shipped.fits(singles)
    assert "these items are single responses" in shipped.misfit(singles)
    single = geval.Template.load("topicalchat-naturalness")
    assert not single.fits(pairs) and "pick a pairwise template" in single.misfit(pairs)


def test_the_judgment_is_the_mean_after_swapping_back_and_a_flip_reads_as_a_tie():
    asked = AspectScore(distribution={0: 0.7, 1: 0.2, 2: 0.1})
    swapped_back = AspectScore(distribution={0: 0.3, 1: 0.6, 2: 0.1})  # order 2: A is the pair's B
    combined = pairwise.combine([asked, swapped_back])
    assert combined.distribution == pytest.approx({0: 0.65, 1: 0.25, 2: 0.1})
    assert combined.score == 0.0  # the pair's first side
    flip = pairwise.combine([AspectScore(distribution={0: 1.0}), AspectScore(distribution={0: 1.0})])
    assert flip.distribution == pytest.approx({0: 0.5, 1: 0.5, 2: 0.0}) and flip.score == 2.0  # a tie


# --- pairs: files, datasets, MT-Bench -------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_file_of_pairs_loads_with_each_annotators_preference(tmp_path, store, suffix):
    dataset = geval.load_dataset(write_pairs(tmp_path / f"mine{suffix}", pair_rows()), store=store)
    assert dataset.layout == "pairs" and len(dataset.items) == 24 and len(dataset.groups) == 12
    assert dataset.models == ["strong", "weak"] and "12 groups, 2 models compared in pairs;" in dataset.summary()
    assert store.categories(dataset.name) == {"preference": PREFERENCES}
    first = store.items(dataset.name)[0]
    assert first.pair == Pair("a good answer 0.0", "a poor answer 0.0", "strong", "weak", question="q0")
    assert first.ratings("preference") == {"ann1": 0.0, "ann2": 2.0}
    assert first.fields()["context"] == "User: question 0"


def test_the_plan_says_each_pair_is_asked_in_both_orders(tmp_path, store):
    """The Score page said "2 prompts per item (one per aspect or question)" of a pairwise template."""
    dataset = geval.load_dataset(write_pairs(tmp_path / "mine.csv", pair_rows(3)), store=store)
    said = geval.plan(store, dataset.items, template(), scripted(prefers_good)).line()
    assert said.endswith("The template asks 2 prompts per item (each pair asked in both orders, its sides swapped the "
                         "second time)."), said


@pytest.mark.parametrize("change, said", [
    ({"response_b": "a good answer 0.0"}, "mine.csv:2: response A and response B are the same text"),
    ({"response_a": ""}, "mine.csv:2: response A is missing; a pair needs both responses"),
    ({"preference:ann1": "better"}, "mine.csv:2: preference 'better' is not A, B or tie"),
])
def test_a_bad_pair_stops_the_load_with_one_line_and_nothing_is_stored(tmp_path, store, change, said):
    rows = pair_rows()
    rows[0].update(change)
    with pytest.raises(DatasetError) as raised:
        geval.load_dataset(write_pairs(tmp_path / "mine.csv", rows), store=store)
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert store.dataset_names() == []


def test_a_bad_pair_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys):
    rows = pair_rows()
    rows[3]["preference:ann2"] = "maybe"
    assert main(["datasets", "load", str(write_pairs(tmp_path / "mine.csv", rows)), "--store",
                 str(tmp_path / "s.sqlite")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {tmp_path / 'mine.csv'}:5: preference 'maybe' is not A, B or tie (also read: a, model_a, response_a, b, "
        "model_b, response_b, tie, draw, equal)"]


def test_labels_are_read_in_their_spellings():
    assert [preference_index(x, "here") for x in ("A", "model_b", "Tie", "tie (bothbad)", " b ")] == [0, 1, 2, 2, 1]


def test_pairs_are_made_from_a_scored_datasets_responses_to_one_context():
    sample = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json")  # 10 contexts x 6 responses
    every = sample.pairs()
    assert len(every.items) == 10 * 15 and every.categories == {"preference": PREFERENCES}
    drawn = sample.pairs(per_context=2, seed=3)
    assert len(drawn.items) == 20 and [i.id for i in drawn.items] == [i.id for i in sample.pairs(per_context=2, seed=3).items]
    item = every.items[0]
    a, b = (next(x for x in sample.items if x.response == side and x.group == item.group)
            for side in (item.pair.response_a, item.pair.response_b))
    expected = {who: PREFERENCES.index("tie") if a.ratings("Overall")[who] == b.ratings("Overall")[who]
                else PREFERENCES.index("model_a") if a.ratings("Overall")[who] > b.ratings("Overall")[who]
                else PREFERENCES.index("model_b") for who in a.ratings("Overall")}
    assert item.ratings("preference") == expected
    assert (item.pair.system_a, item.pair.system_b) == (a.system, b.system) and item.context == a.context
    with pytest.raises(DatasetError, match="no human aspect"):
        sample.pairs("Fluency")


def test_mt_bench_instances_are_pairs_of_each_turn_with_their_ids_unchanged(shared_data, store):
    dataset = geval.load_dataset(shared_data / "alttest" / "mtbench", store=store)
    by_source = {item.source_id: item for item in store.items(dataset.name)}
    first, second = by_source["82__gpt-3.5-turbo__llama-13b__1"], by_source["82__gpt-3.5-turbo__llama-13b__2"]
    assert first.id == "09f0eacb397f11a7"  # as before pairs: stored judgments keep their items
    assert (first.pair.system_a, first.pair.system_b, first.pair.question) == ("gpt-3.5-turbo", "llama-13b", "82")
    assert first.pair.response_a.startswith("Subject: Request for Feedback") and len(first.pair.turns_a) == 1
    assert len(second.pair.turns_a) == 3 and second.pair.turns_a[1].text == first.pair.response_a
    assert second.fields()["context"].count("user: ") == 2  # both questions: what both were asked
    assert second.fields()["conversation_b"].endswith(second.pair.response_b)
    # grouped by question, as the pairwise section groups them (the file's text_id names each instance: the report
    # gave one kappa two intervals, over 42 questions and over 120 instances)
    assert first.group == second.group == "82" and len({item.group for item in by_source.values()}) == 42


def test_a_store_of_an_older_schema_reads_its_items_as_single_responses(tmp_path):
    import sqlite_utils

    import geval.store.schema as schema
    path = tmp_path / "old.sqlite"
    db = sqlite_utils.Database(path)
    db["meta"].create({"key": str, "value": str}, pk="key")
    for version in range(1, 12):
        schema.MIGRATIONS[version](db)
    db["meta"].insert({"key": "schema_version", "value": "11"})
    row = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json").items[0].to_row()
    db["items"].insert({**{k: v for k, v in row.items() if k != "pair"}, "position": 0})
    db["datasets"].insert({"name": row["dataset"], "path": "x", "layout": "usr", "n_items": 1, "loaded_at": 1.0})
    db.conn.close()
    store = geval.Store(path)
    assert store.schema_version() == schema.SCHEMA_VERSION
    assert store.items(row["dataset"])[0].pair is None


# --- judged in both orders, read against people ---------------------------------------------------------


def scored_pairs(tmp_path, store, script, rows=None) -> str:
    dataset = geval.load_dataset(write_pairs(tmp_path / "mine.csv", rows or pair_rows()), store=store)
    progress = geval.score(store, dataset.items, template(), scripted(script, script.__name__), dataset.name)
    assert progress.calls == 2 * len(dataset.items) and progress.failed == 0
    return dataset.name


def test_a_judge_that_sees_quality_is_consistent_and_agrees_with_people(tmp_path, store):
    found = analysis.read(store, scored_pairs(tmp_path, store, prefers_good))
    positions = found.positions
    assert (positions.pairs, positions.questions) == (24, 12)
    assert positions.consistency.value == 1.0 and positions.first.value == 0.5 and positions.ties.value == 0.0
    rows = found.agreement.set_index("with")
    assert rows.loc["ann1", "accuracy"].value == 1.0 and rows.loc["ann1", "kappa"].value == 1.0
    # ann2 says tie on 5 of the 24 pairs (every fifth), where the judge names the better side
    assert rows.loc["ann2", "accuracy"].value == pytest.approx(19 / 24)
    assert rows.loc["ann2", "accuracy without ties"].value == 1.0 and rows.loc["ann2", "pairs without ties"] == 19
    wins = found.wins.set_index("model")
    assert wins.loc["strong", "judge"].value == 1.0 and wins.loc["weak", "judge"].value == 0.0
    assert wins.loc["strong", "people"].value == pytest.approx((19 + 5 * 0.75) / 24)  # a tie vote counts half
    assert analysis.same_order(found.wins) == (True, [])
    said = " ".join(geval.reporting.pairwise.lines(found))  # 12 questions: intervals, so no caveat of them
    assert "not a ranking against one common opponent. The judge's win rates order the 2 models as people do." in said
    dataset = geval.load_dataset(write_pairs(tmp_path / "few.csv", pair_rows(4)), store=store)  # 4 questions
    geval.score(store, dataset.items, template(), scripted(prefers_good, "prefers_good"), dataset.name)
    few = analysis.read(store, dataset.name)
    assert ("2 of the 2 models' win rates rest on fewer than 10 questions, too few for an interval: both orders are "
            "their point estimates' orders, not a finding.") in " ".join(geval.reporting.pairwise.lines(few))


def test_a_judge_that_only_sees_positions_flips_with_the_order_and_judges_every_pair_a_tie(tmp_path, store):
    found = analysis.read(store, scored_pairs(tmp_path, store, always_first))
    positions = found.positions
    assert positions.consistency.value == 0.0 and positions.first.value == 1.0
    assert positions.both_first.value == 1.0 and positions.both_second.value == 0.0 and positions.ties.value == 1.0
    said = " ".join(geval.reporting.pairwise.lines(found))
    assert "names the same winner on 0% " in said and "it always names the position shown first" in said
    assert found.agreement.set_index("with").loc["ann1", "kappa"].value == pytest.approx(0.0)


def test_the_report_has_a_section_of_each_pairwise_judge_with_its_position_figures(tmp_path, store):
    name = scored_pairs(tmp_path, store, always_first)
    markdown = geval.reporting.report(store, name, n_boot=50, baselines=[], figures=False, ceiling=False).markdown()
    section = markdown[markdown.index("## Pairwise judging: position, agreement with people, win rates"):]
    assert "names the same winner on 0% " in section and "it always names the position shown first" in section
    assert "win rate: judge" in section


def test_kappa_and_accuracy_are_scikit_learns_and_the_intervals_are_over_questions(tmp_path, store):
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    rows = pair_rows(14, 3)
    for row in rows:  # people who disagree now and then
        row["preference:ann1"] = rng.choice(["A", "B", "tie"], p=[0.4, 0.4, 0.2]) if rng.random() < 0.4 \
            else row["preference:ann1"]
    name = scored_pairs(tmp_path, store, prefers_good, rows)
    found = analysis.read(store, name)
    items = store.items(name)
    judged = [0 if "good" in item.pair.response_a else 1 for item in items]
    truth = [int(item.ratings("preference")["ann1"]) for item in items]
    row = found.agreement.set_index("with").loc["ann1"]
    assert row["kappa"].value == pytest.approx(sklearn.cohen_kappa_score(truth, judged, labels=[0, 1, 2]))
    assert row["accuracy"].value == pytest.approx(sklearn.accuracy_score(truth, judged))
    sides = [(t, j) for t, j in zip(truth, judged) if t != 2]
    assert row["accuracy without ties"].value == pytest.approx(np.mean([t == j for t, j in sides]))
    assert row["kappa"].groups == 14 and row["kappa"].has_interval()
    loo = []  # the jackknife by hand: kappa without each question
    for q in sorted({item.pair.question for item in items}):
        kept = [k for k, item in enumerate(items) if item.pair.question != q]
        loo.append(sklearn.cohen_kappa_score([truth[k] for k in kept], [judged[k] for k in kept], labels=[0, 1, 2]))
    from scipy import stats
    half = stats.t.ppf(0.975, 13) * math.sqrt(13 / 14 * np.sum((np.array(loo) - np.mean(loo)) ** 2))
    assert (row["kappa"].low, row["kappa"].high) == pytest.approx((row["kappa"].value - half,
                                                                  min(1.0, row["kappa"].value + half)))


def test_the_shipped_templates_judge_mt_bench_in_both_orders_and_the_test_reads_its_labels(shared_data, store):
    dataset = geval.load_dataset(shared_data / "alttest" / "mtbench", store=store)
    judge, shipped = scripted(), geval.Template.load("mtbench-pairwise")
    progress = geval.score(store, dataset.items, shipped, judge, dataset.name)
    prompts = {call.prompt for item in dataset.items for call in shipped.calls(item)}
    # 240 calls less those MT-Bench asks twice: question 118's alpaca-13b and llama-13b answer alike (two pairs
    # of gpt-3.5-turbo against them are one, swapped), and 104's first answers of gpt-3.5-turbo and gpt-4 are one
    # text (both orders one prompt, asked once)
    assert len(prompts) == 235
    assert (progress.done, progress.calls, progress.failed) == (120, 235, 0)
    found = geval.reporting.pairwise.read(store, dataset.name)
    assert found.human == "label" and found.positions.questions == 42
    people = found.people.set_index(["who", "with"])
    assert people.loc[("author_0", "expert_24"), "pairs"] == 42
    assert list(found.wins["model"])[0] == "gpt-3.5-turbo" and found.wins["pairs"].iloc[0] == 120
    result = next(r for r in geval.alttest.run(store, dataset.name) if not r.baseline)
    assert result.reading == "as judged in both orders"
    labels = store.judgments(dataset.name)
    combined = labels[labels["aspect"] == "preference"].set_index("item_id")["score"]
    assert set(combined.unique()) <= {0.0, 1.0, 2.0}
    again = geval.score(store, dataset.items, geval.Template.load("mtbench-pairwise"), judge, dataset.name)
    assert again.cached == 120 and again.calls == 0


# --- the OpenAI stub: logprobs and samples --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["logprobs", "samples"])
def test_an_openai_judge_answers_pairs_by_logprobs_or_by_samples(tmp_path, store, mode):
    dataset = geval.load_dataset(write_pairs(tmp_path / "mine.jsonl", pair_rows(2, 1)), store=store)
    with OpenAIStub() as stub:
        if mode == "logprobs":
            stub.configure("logprobs", distribution={0: 0.7, 1: 0.2, 2: 0.1}, aspects=["Preference"],
                           labels=pairwise.ANSWERS)
        else:
            stub.configure("no-logprobs", cycle=[0, 0, 0, 1], aspects=["Preference"], labels=pairwise.ANSWERS)
        judge = geval.make_judge("openai", model="stub", base_url=stub.url, api_key="sk-test", mode=mode, n=4)
        progress = geval.score(store, dataset.items, template(), judge, dataset.name)
        assert progress.failed == 0 and progress.unscored == 0 and stub.count == 4
    rows = store.judgments(dataset.name).set_index("aspect")
    order = json.loads(rows.loc["preference#order1", "distribution"].iloc[0])
    expected = {"0": 0.7, "1": 0.2, "2": 0.1} if mode == "logprobs" else {"0": 0.75, "1": 0.25}
    assert order == pytest.approx(expected)
    combined = json.loads(rows.loc["preference", "distribution"].iloc[0])
    assert combined["0"] == pytest.approx(combined["1"])  # the same answer in both orders: a flip
    assert set(rows.loc["preference", "score"]) == {2.0}  # read as a tie


# --- the command line -----------------------------------------------------------------------------------


def test_agree_prints_the_position_figures_and_pairs_are_made_on_the_command_line(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite")
    assert main(["datasets", "pairs", str(REPO / "data" / "topicalchat_usr_sample.json"), "--per-context", "3",
                 "--store", store]) == 0
    assert "topicalchat_usr_sample-pairs (pairs): 30 items" in capsys.readouterr().out
    assert main(["score", "topicalchat_usr_sample-pairs", "-t", "dialogue-pairwise", "--judge", "scripted",
                 "--store", store]) == 0
    assert "30 items, 0 cached, 60 judge calls" in capsys.readouterr().out
    assert main(["agree", "topicalchat_usr_sample-pairs", "--store", store]) == 0
    said = capsys.readouterr().out
    for expected in ("Pairwise: dialogue-pairwise@", "Asked in both orders, the judge names the same winner on",
                     "(10 dialogues)", "consistent under swap", "accuracy without ties", "win rate: judge"):
        assert expected in said, expected


@pytest.mark.model
@pytest.mark.timeout(600)
def test_the_embedded_judge_reads_a_and_b_and_tie_from_its_logits_in_both_orders(tmp_path, store):
    from geval.judging.backends.embedded import EmbeddedJudge

    dataset = geval.load_dataset(write_pairs(tmp_path / "one.csv", pair_rows(1, 1)), store=store)
    judge = EmbeddedJudge()
    progress = geval.score(store, dataset.items, geval.Template.load("dialogue-pairwise"), judge, dataset.name)
    assert (progress.calls, progress.failed, progress.unscored) == (2, 0, 0)
    assert progress.signature.startswith("backend:embedded|") and "scale:preference=categorical:model_a/model_b/tie" \
        in progress.signature
    rows = store.judgments(dataset.name).set_index("aspect")
    asked = {k: {int(s): p for s, p in json.loads(rows.loc[k, "distribution"]).items()}
             for k in ("preference#order1", "preference#order2", "preference")}
    for distribution in asked.values():
        assert set(distribution) == {0, 1, 2} and sum(distribution.values()) == pytest.approx(1.0, abs=1e-9)
    back = pairwise.swapped(asked["preference#order2"])
    assert asked["preference"] == pytest.approx({s: (asked["preference#order1"][s] + back[s]) / 2 for s in range(3)})
    assert rows.loc["preference", "score"] == pairwise.label(asked["preference"])


def test_a_pairs_disagreement_is_by_label_a_side_against_a_tie_half_of_one_side_against_the_other():
    """Inspect sorted a pair's judge and people by their labels' codes (model_a 0, model_b 1, tie 2): A against a tie
    read 1.00, A against B 0.50."""
    found = label_disagreement(np.array([0, 0, 0, 2, 1, np.nan]), np.array([0, 1, 2, 1, np.nan, 0]),
                               ("model_a", "model_b", "tie"))
    assert found[:5].tolist()[:4] == [0.0, 1.0, 0.5, 0.5] and np.isnan(found[4:]).all()
    assert label_disagreement(np.array([0, 2]), np.array([1, 0]), ("a", "b", "c")).tolist() == [1.0, 1.0]


def test_the_mean_of_one_pair_of_annotators_is_that_pair_interval_and_all():
    """With two annotators "each other, mean" read "79% [58%, 91%]" (the logit's) beside the pair's own "79% [60%,
    91%]" (Wilson's), and "100% (no interval)" beside "100% [83%, 100%]": the mean of one row is that row."""
    from geval.analysis.pairwise import among_people

    rng = np.random.default_rng(3)
    first = rng.integers(0, 3, 24).astype(float)
    second = np.where(rng.random(24) < 0.8, first, rng.integers(0, 3, 24)).astype(float)
    codes = np.repeat(np.arange(12), 2)
    table = among_people(np.stack([first, second]), ["ann1", "ann2"], codes, 12)
    pair, mean = table.iloc[0], table.iloc[1]
    for name in ("accuracy", "accuracy without ties", "kappa"):
        assert (mean[name].value, mean[name].low, mean[name].high) == (pair[name].value, pair[name].low,
                                                                      pair[name].high), name
    assert math.isfinite(pair["accuracy"].low)


def test_with_your_labels_chosen_the_judge_is_read_against_your_labels_not_the_peoples_majority(tmp_path, store):
    """With "your labels" as the human side, the section said "Against the people's majority" of a majority that
    was your labels'; it names them, in the table's row as in the sentence."""
    name = scored_pairs(tmp_path, store, prefers_good)
    for item in store.items(name):
        store.save_label(item.id, "preference", int(item.human["preference"][0]))  # as ann1: the better side
    store.set_human_side(name, "you")
    found = analysis.read(store, name)
    assert found.against == "your labels"
    assert found.agreement["with"].tolist() == ["you", "each annotator, mean", "your labels"]
    assert geval.reporting.pairwise.agreement_table(found)["with"].tolist() == ["your labels"]  # one row, not 3 alike
    said = geval.reporting.pairwise.lines(found)
    assert any(line.startswith("Against your labels (24 pairs with a clear one): accuracy 100%") for line in said), said
    assert not any("people" in line or "Against one annotator" in line for line in said), said
    assert "opponent. The judge's win rates order the 2 models as you do." in " ".join(said)
    assert "of the labels you gave, 0% (no interval: a share of 0%) are ties" in " ".join(said)
    assert list(geval.reporting.pairwise.wins_table(found).columns)[-2:] == ["win rate: judge", "win rate: you"]
    figure = geval.reporting.pairwise.wins_figure(found)
    assert figure.layout.title.text == "Win rates: judge and you" and [t.name for t in figure.data] == ["judge", "you"]
    assert figure.layout.xaxis.range[0] < 0 < 1 < figure.layout.xaxis.range[1]  # a marker at 0% or 100% shown whole
    markdown = geval.reporting.report(store, name, n_boot=50, baselines=[]).markdown()
    assert "## Pairwise judging: position, agreement with your labels, win rates" in markdown


def test_models_ordered_the_other_way_round_are_said_as_an_order_of_win_rates_met_or_not():
    """"of the 15 pairs of models, 10 are the other way round" read as head-to-head results, where every pair held
    one model: the win rates are over the models each met, said first, and the pairs "met or not"."""
    from types import SimpleNamespace

    def rate(value: float) -> SimpleNamespace:
        return SimpleNamespace(value=value, groups=20)

    wins = pd.DataFrame({"model": ["a", "b", "c"], "judge": [rate(.7), rate(.5), rate(.2)],
                         "people": [rate(.2), rate(.5), rate(.7)]})
    said = geval.reporting.pairwise._wins_lines(SimpleNamespace(wins=wins, who="people"))[0]
    assert said.startswith("A win rate here is a share of the model's pairs against the models it met, not a ranking "
                           "against one common opponent. The judge's win rates order the models otherwise than "
                           "people do: of the 3 pairs of models, met or not, 3 are ordered the other way round "
                           "(the judge's rates put a above b; a above c; b above c;"), said
