"""Template kinds beyond the form (geval.judging.layouts): checklists asked question by question
and read as P(yes), batch layouts read in turn over several orders, and few-shot examples that
never come from the judged item's own group. Scored with the scripted judge."""

from __future__ import annotations

import json
import re

import pytest
from helpers import make_items, scripted, template_text
from hypothesis import given, settings
from hypothesis import strategies as st

import geval
from geval.data.dataset import Dataset
from geval.data.items import Turn, make_item
from geval.errors import JudgmentFailed, TemplateError
from geval.judging import encoder
from geval.judging.answers import read_score
from geval.judging.backends.openai import score_of_token
from geval.judging.examples import choose_examples, sentence_vectors
from geval.judging.templates import QUESTION_ASPECT, Aspect, Neighbours, parse_template

CHECKLIST = parse_template(template_text(
    name="test-checklist",
    aspects=(("Naturalness", 1, 3, "Natural"), ("Groundedness", 0, 1, "Uses Knowledge")),
    extra_header='kind = "checklist"',
    body="Response:\n{{response}}\n\nQuestion: {{question}}\nAnswer (Yes or No):",
).replace('human = "Natural"', 'human = "Natural"\nquestions = ["Is it fluent?", "Is it natural?", "Is it clear?"]')
 .replace('human = "Uses Knowledge"', 'human = "Uses Knowledge"\nquestions = ["Does it use the fact?"]'),
    source="test-checklist.txt")

BATCH = parse_template(template_text(
    name="test-batch", aspects=(("Naturalness", 1, 3, "Natural"),), extra_header='kind = "batch"\norders = 2',
    body="Context:\n{{context}}\n\n{{responses}}\n\nThe {{aspect}} of each response:"), source="test-batch.txt")


def p_yes_by_question(prompt: str, aspect: Aspect) -> dict[int, float]:
    """P(yes) 0.9 for "fluent", 0.6 for "natural", 0.3 otherwise; the item's number shifts none of it."""
    question = prompt.rsplit("Question: ", 1)[1]
    p = 0.9 if "fluent" in question else 0.6 if "natural" in question else 0.3
    return {0: 1 - p, 1: p}


def stored(store, dataset: str = "synthetic"):
    frame = store.judgments(dataset)
    return {(row.item_id, row.aspect): row for row in frame.itertuples()}


def test_a_checklist_asks_each_question_and_scores_the_aspect_by_its_mean_p_yes(store):
    items = make_items(4)
    judge = scripted(p_yes_by_question)
    progress = geval.score(store, items, CHECKLIST, judge, "synthetic")
    assert progress.calls == 4 * 4 and len(judge.calls) == 16  # 3 + 1 questions per item
    assert all(prompt.endswith("Answer (Yes or No):") for prompt in judge.calls)
    rows = stored(store)
    for item in items:
        parts = [rows[(item.id, f"naturalness#q{n}")].score for n in (1, 2, 3)]
        assert parts == pytest.approx([0.9, 0.6, 0.3])
        assert rows[(item.id, "naturalness")].score == pytest.approx(1 + 2 * (0.9 + 0.6 + 0.3) / 3)
        assert rows[(item.id, "groundedness")].score == pytest.approx(0.3)
        assert rows[(item.id, "naturalness")].call_key == rows[(item.id, "naturalness#q1")].call_key
    assert store.combos("synthetic")["aspects"].iloc[0] == ["groundedness", "naturalness"]  # parts are not aspects
    again = scripted(p_yes_by_question)
    assert geval.score(store, items, CHECKLIST, again, "synthetic").cached == 4 and again.calls == []


def test_a_checklist_reads_yes_and_no_written_out_and_its_parts_are_named(store):
    items = make_items(2)
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))
    answers = {"Is it fluent?": "Answer: Yes", "Is it natural?": "no.", "Is it clear?": "YES, it is",
               "Does it use the fact?": "Maybe"}
    judge = scripted(lambda prompt, aspect: answers[prompt.rsplit("Question: ", 1)[1].split("\n")[0]])
    geval.score(store, items, CHECKLIST, judge, "synthetic")
    rows = stored(store)
    assert [rows[(items[0].id, f"naturalness#q{n}")].score for n in (1, 2, 3)] == [1.0, 0.0, 1.0]
    assert rows[(items[0].id, "naturalness")].score == pytest.approx(1 + 2 * 2 / 3)
    assert rows[(items[0].id, "groundedness")].status == "unscored"
    assert "groundedness#q1 unscored" in rows[(items[0].id, "groundedness")].reason
    frame = geval.disagreements(store, "synthetic")
    names = set(frame["aspect_name"])
    assert "Naturalness · question 2: Is it natural?" in names and "Naturalness" in names
    assert CHECKLIST.part_name("naturalness#q1") == "Naturalness · question 1: Is it fluent?"


def test_a_failed_question_fails_its_aspect_and_only_it_is_asked_again(store):
    items = make_items(2)

    def failing(prompt: str, aspect: Aspect):
        if "natural?" in prompt and "response 1\n" in prompt:
            raise JudgmentFailed("HTTP 500 from the server")
        return p_yes_by_question(prompt, aspect)

    progress = geval.score(store, items, CHECKLIST, scripted(failing), "synthetic")
    rows = stored(store)
    second = items[1].id
    assert progress.failed == 1
    assert rows[(second, "naturalness#q2")].status == "failed"
    assert rows[(second, "naturalness")].status == "failed" and "HTTP 500" in rows[(second, "naturalness")].reason
    assert rows[(second, "groundedness")].status == "ok"
    retry = scripted(p_yes_by_question)
    geval.score(store, items, CHECKLIST, retry, "synthetic")
    assert len(retry.calls) == 1 and "Is it natural?" in retry.calls[0]
    assert stored(store)[(second, "naturalness")].score == pytest.approx(1 + 2 * 0.6)


def test_a_batch_layout_asks_one_call_per_group_and_order_and_averages_the_orders(store):
    items = make_items(6, per_group=3)  # two groups of three
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))

    def by_position(prompt: str, aspect: Aspect) -> dict[int, float]:
        # the judge gives the first-listed response 3, the others 1: order matters, and is averaged away
        return {3: 1.0} if aspect.name == "Response 1" else {1: 1.0}

    judge = scripted(by_position)
    progress = geval.score(store, items, BATCH, judge, "synthetic")
    assert progress.calls == len(judge.calls) == 2 * 2  # 2 groups x 2 orders, not one per item
    first, last = judge.calls[0], judge.calls[1]
    assert first.index("response 0") < first.index("response 2") and last.index("response 2") < last.index("response 0")
    rows = stored(store)
    scores = [rows[(item.id, "naturalness")].score for item in items]
    assert scores == pytest.approx([2.0, 1.0, 2.0, 2.0, 1.0, 2.0])  # first or last in one of the two orders
    assert rows[(items[0].id, "naturalness#order1")].score == 3.0 and rows[(items[0].id, "naturalness#order2")].score == 1
    signature = json.loads(rows[(items[0].id, "naturalness")].signature_json)
    assert signature["layout"] == "batch:orders=2"
    assert geval.plan(store, items, BATCH, scripted(by_position)).cached == 6
    assert progress.cached == 0 and progress.called == 6  # the other items of a group: judged by its calls, not cached
    again = geval.score(store, items, BATCH, scripted(by_position), "synthetic")
    assert again.cached == 6 and again.calls == 0


def test_a_batch_run_resumed_within_a_group_counts_the_group_as_judged_not_cached(store):
    items = make_items(6, per_group=3)
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))

    def second_order_fails(prompt: str, aspect: Aspect) -> dict[int, float]:
        listed = [int(n) for n in re.findall(r"response (\d+)", prompt)]
        if listed != sorted(listed):  # the reversed order
            raise JudgmentFailed("rate limited (stub)")
        return {2: 1.0}

    first = geval.score(store, items, BATCH, scripted(second_order_fails), "synthetic")
    assert first.failed == 6 and first.calls == 2  # the first order of each group is stored, in the cache
    again = geval.score(store, items, BATCH, scripted(), "synthetic")
    assert again.calls == 2 and again.cached == 0 and again.called == 6  # partly from the cache, partly judged now


def test_a_batch_layouts_calls_come_order_by_order_so_each_shares_all_but_its_last_line_with_the_one_before():
    two = parse_template(template_text(
        name="test-batch2", aspects=(("Naturalness", 1, 3, "Natural"), ("Coherence", 1, 3, "Maintains Context")),
        extra_header='kind = "batch"\norders = 2',
        body="Context:\n{{context}}\n\n{{responses}}\n\nThe {{aspect}} of each response:"), source="t.txt")
    items = make_items(3, per_group=3)
    calls = two.calls(items[0], around=items)
    assert [stored for call in calls for _, stored in call.keep] == [
        "naturalness#order1", "coherence#order1", "naturalness#order2", "coherence#order2"]
    for before, after in zip(calls, calls[1:]):
        if before.keep[0][1].endswith("order1") == after.keep[0][1].endswith("order1"):
            assert before.prompt.rsplit("\n", 1)[0] == after.prompt.rsplit("\n", 1)[0]


def test_a_batch_layout_plans_each_group_call_once(store):
    items = make_items(6, per_group=3)
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))
    assert geval.plan(store, items, BATCH, scripted()).calls == 4


def test_kinds_are_checked_when_the_template_is_read():
    with pytest.raises(TemplateError, match="needs {{question}}"):
        parse_template(template_text(extra_header='kind = "checklist"'), "t.txt")
    with pytest.raises(TemplateError, match="kind = \"checklist\""):
        parse_template(template_text(body="{{response}} {{question}}"), "t.txt")
    with pytest.raises(TemplateError, match="no questions"):
        parse_template(template_text(extra_header='kind = "checklist"', body="{{response}} {{question}}"), "t.txt")
    with pytest.raises(TemplateError, match="go together"):
        parse_template(template_text(body="{{response}} {{examples}}"), "t.txt")
    with pytest.raises(TemplateError, match="cannot hold '#'"):
        Aspect("Natural#ness", 1, 3)
    with pytest.raises(TemplateError, match="labels"):
        Aspect("Answer", 0, 1, labels=("Yes", "yes"))


def test_labelled_answers_are_read_from_text_and_from_logprob_tokens():
    assert read_score("Answer: Yes", QUESTION_ASPECT, single=True) == 1
    assert read_score("No, it does not.", QUESTION_ASPECT, single=True) == 0
    assert isinstance(read_score("Nothing to say", QUESTION_ASPECT, single=True), str)  # "No" inside a word is no answer
    assert [score_of_token(token, QUESTION_ASPECT) for token in ("Yes", " yes", "NO.", "Yet", "1")] == [1, 1, 0, None, None]


# --- few-shot examples ------------------------------------------------------------------------------

FEWSHOT = parse_template(template_text(
    name="test-fewshot", extra_header='[examples]\nk = 3\nselect = "stratified"\nseed = 1',
    body="{{examples}}\n\nContext:\n{{context}}\n\nResponse:\n{{response}}\n\n- Naturalness:"), "test-fewshot.txt")


def dataset(groups: int, per_group: int, seed: int = 0) -> list:
    items = []
    for g in range(groups):
        for i in range(per_group):
            items.append(make_item("synthetic", "turn", [Turn("A", f"topic {g}")], f"reply {g}.{i}", group=f"g{g}",
                                   human={"Natural": (float(1 + (g * 7 + i * 3 + seed) % 3),)}))
    return items


@settings(max_examples=60, deadline=None)
@given(groups=st.integers(4, 12), per_group=st.integers(1, 4), k=st.integers(1, 3), seed=st.integers(0, 5),
       select=st.sampled_from(["random", "stratified", "nearest"]))
def test_examples_never_come_from_the_judged_items_own_group(groups, per_group, k, seed, select):
    template = parse_template(FEWSHOT.text.replace("k = 3", f"k = {k}").replace('"stratified"', f'"{select}"')
                              .replace("seed = 1", f"seed = {seed}"), "t.txt")
    items = dataset(groups, per_group, seed)
    around = Neighbours(items)
    for item in items:
        chosen = around.examples(template, item)
        assert len(chosen) == k and len({c.group for c in chosen}) == k  # k examples, one per group
        assert item.group not in {c.group for c in chosen}
        [call] = template.calls(item, around=around)
        assert json.loads(call.detail)["examples"] == [c.id for c in chosen]
        assert f"reply {item.group[1:]}." not in call.prompt.split("Context:")[0]  # nothing of its group shown
    if select == "nearest":  # each item its own examples, chosen again the same way
        for item in items:
            again = choose_examples(items, item, template.aspects, template.examples, template.source)
            assert [c.id for c in again] == [c.id for c in around.examples(template, item)]
        return
    first = {item.group: [c.id for c in around.examples(template, item)] for item in items}
    for item in items:  # every item of a group sees the same examples, chosen again the same way
        chosen = choose_examples(items, item, template.aspects, template.examples, template.source)
        assert [c.id for c in chosen] == first[item.group]


def test_nearest_examples_are_the_most_similar_texts_of_other_groups_the_nearest_last():
    texts = ["I love watching football on Sunday afternoons.", "On Sundays I enjoy watching football games.",
             "Football on Sunday is my favourite thing to watch.", "Quantum computers use qubits.",
             "My grandmother grows tomatoes.", "I watch football every Sunday afternoon."]
    items = [make_item("synthetic", "turn", [Turn("A", "hi")], text, group=f"g{n}", human={"Natural": (2.0,)})
             for n, text in enumerate(texts)]
    items.append(make_item("synthetic", "turn", [Turn("A", "hi")], "I watch football on Sundays too!", group="g5",
                           human={"Natural": (1.0,)}))  # same group as the judged item: never shown
    template = parse_template(FEWSHOT.text.replace('"stratified"', '"nearest"').replace("k = 3", "k = 2"), "t.txt")
    chosen = choose_examples(items, items[5], template.aspects, template.examples, template.source)
    similarity = {item.response: sentence_vectors([item])[0] @ sentence_vectors([items[5]])[0] for item in items[:5]}
    assert [c.response for c in chosen] == sorted(texts[:5], key=similarity.get)[-2:]
    assert {c.response for c in chosen} <= set(texts[:3]) and similarity[chosen[-1].response] == max(similarity.values())
    assert template.examples.signature == "k2,nearest:all-MiniLM-L6-v2@53aa51172d14,seed1"


def test_nearest_examples_encode_each_text_once_per_process_not_once_per_run(monkeypatch):
    model = encoder.minilm()
    encoded = []
    real = model.sentence_vectors
    monkeypatch.setattr(model, "sentence_vectors", lambda texts: encoded.extend(texts) or real(texts))
    items = [make_item("synthetic", "turn", [Turn("A", "hi")], f"once per process {n}", group=f"g{n}",
                       human={"Natural": (float(1 + n % 3),)}) for n in range(5)]
    template = parse_template(FEWSHOT.text.replace('"stratified"', '"nearest"').replace("k = 3", "k = 2"), "t.txt")
    for _ in range(2):  # two runs, as a search makes: each a Neighbours of its own
        around = Neighbours(items)
        for item in items:
            around.examples(template, item)
    assert sorted(encoded) == sorted(item.response for item in items)


def test_stratified_examples_spread_across_the_human_scale():
    items = dataset(30, 1)
    chosen = choose_examples(items, items[0], FEWSHOT.aspects, FEWSHOT.examples, FEWSHOT.source)
    assert sorted(c.human_mean("Natural") for c in chosen) == [1.0, 2.0, 3.0]
    assert "Scores given by people (mean): Naturalness: " in FEWSHOT.calls(items[0], around=items)[0].prompt


def test_too_few_scored_groups_for_k_examples_is_one_clear_error():
    items = dataset(3, 2)
    with pytest.raises(TemplateError, match="k = 3, but only 2 other groups"):
        FEWSHOT.calls(items[0], around=items)
    with pytest.raises(TemplateError, match="with the dataset's items"):
        FEWSHOT.calls(items[0])


def test_a_fewshot_run_stores_its_examples_and_names_their_choice_in_the_signature(store):
    items = dataset(6, 2)
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score(store, items, FEWSHOT, scripted(), "synthetic")
    frame = store.judgments("synthetic")
    assert json.loads(frame["signature_json"].iloc[0])["examples"] == "k3,stratified,seed1"
    for item_id, detail in zip(frame["item_id"], frame["detail"]):
        group = next(i.group for i in items if i.id == item_id)
        shown = {i.group for i in items if i.id in json.loads(detail)["examples"]}
        assert len(shown) == 3 and group not in shown


def test_a_nearest_fewshot_run_stores_each_items_own_examples(store):
    items = dataset(6, 2)
    store.save_dataset(Dataset("synthetic", "synthetic.csv", "table", items))
    nearest = parse_template(FEWSHOT.text.replace('"stratified"', '"nearest"'), "t.txt")
    geval.score(store, items, nearest, scripted(), "synthetic")
    frame = store.judgments("synthetic")
    assert json.loads(frame["signature_json"].iloc[0])["examples"] == "k3,nearest:all-MiniLM-L6-v2@53aa51172d14,seed1"
    for item_id, detail in zip(frame["item_id"], frame["detail"]):
        item = next(i for i in items if i.id == item_id)
        chosen = choose_examples(items, item, nearest.aspects, nearest.examples, nearest.source)
        assert json.loads(detail)["examples"] == [c.id for c in chosen]
