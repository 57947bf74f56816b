"""People's reasons into the judge (geval/decisions/reasons.py): corrections, the candidates made from
them, the groups they were made from kept out of the search, and the verdict."""

from __future__ import annotations

import math

import pytest
from helpers import make_items, make_template, scripted

import geval
from geval.decisions.reasons import (
    ReasonsError,
    corrections,
    draft_rubric,
    from_reasons,
    with_corrected_examples,
    with_rubric,
)

TEMPLATE = make_template(aspects=(("Naturalness", 1, 3, "Natural"),))


@pytest.fixture
def scored(store):
    """24 items in 12 groups scored by the scripted judge, and a reason on every item of the first 6
    groups, each label the opposite end of the scale from the judge's score."""
    items = make_items(24, per_group=2)
    store.save_dataset(geval.Dataset("synthetic", "s.json", "table", items))
    judge = scripted()
    geval.score(store, items, TEMPLATE, judge, "synthetic")
    judged = geval.labeling.features(store, "synthetic", "Natural").judge_scores()
    store.save_labels([{"item_id": i.id, "aspect": "Natural", "annotator": "lead", "score": 1 if judged[i.id] > 2 else 3,
                        "reason": f"because of item {n}"} for n, i in enumerate(items[:12])])
    return store, items, judge


def test_corrections_are_the_reasoned_labels_far_from_the_judge_largest_first(scored):
    store, items, _ = scored
    found = corrections(store, "synthetic", "Natural", 1, 3)
    assert 0 < len(found) <= 12 and all(c.gap >= 0.5 for c in found)
    assert [c.gap for c in found] == sorted((c.gap for c in found), reverse=True)
    assert {c.item.id for c in found} <= {i.id for i in items[:12]} and found[0].reason.startswith("because of item")


def test_a_candidate_shows_the_corrected_examples_with_their_reasons(scored):
    store, _, _ = scored
    found = corrections(store, "synthetic", "Natural", 1, 3)[:2]
    made = with_corrected_examples(TEMPLATE, "naturalness", found)
    assert made.name.endswith("reasons-k2") and made.version != TEMPLATE.version
    assert found[0].reason in made.text and "People's score:" in made.text
    assert made.text.index("because of item") < made.text.index("{{context}}")  # before the item to rate
    ruled = with_rubric(TEMPLATE, "naturalness", ["Score 1 when it ignores the question."])
    assert "- Score 1 when it ignores the question." in ruled.text


def test_only_an_openai_compatible_model_drafts_a_rubric(scored, stub):
    store, _, judge = scored
    found = corrections(store, "synthetic", "Natural", 1, 3)
    with pytest.raises(ReasonsError, match="OpenAI-compatible"):
        draft_rubric(judge, "Natural", 1, 3, found)
    stub.configure("text", text="Sure:\n- Score 1 for a garbled reply.\n- Score 3 for a fitting one.\nThanks")
    drafter = geval.make_judge("openai", model="drafter", base_url=stub.url, api_key="sk-test")
    assert draft_rubric(drafter, "Natural", 1, 3, found) == ["Score 1 for a garbled reply.", "Score 3 for a fitting one."]
    assert "because of item" in stub.requests[-1]["body"]["messages"][0]["content"]
    stub.configure("text", text="no list here")
    with pytest.raises(ReasonsError, match="no rubric sentence"):
        draft_rubric(drafter, "Natural", 1, 3, found)


def test_the_candidates_are_measured_on_groups_they_were_not_made_from(scored, stub):
    store, items, judge = scored
    stub.configure("text", text="- Score 1 for a garbled reply.")
    drafter = geval.make_judge("openai", model="drafter", base_url=stub.url, api_key="sk-test")
    result = from_reasons(store, "synthetic", judge, "Natural", 2000, start=TEMPLATE, k=2, drafter=drafter)
    assert set(result.candidates) == {"corrected examples", "rubric"}
    searched = set(result.search.tune_groups) | set(result.search.test_groups)
    reasoned = {i.group for i in items[:12]}
    found = corrections(store, "synthetic", "Natural", 1, 3)
    assert {c.item.group for c in found} <= set(result.source_groups)  # the rubric read every reason
    assert not searched & set(result.source_groups) and searched == {i.group for i in items} - reasoned
    assert result.verdict.startswith(("adopted", "not adopted"))
    assert math.isfinite(result.gain)  # the gain on the test groups, whoever won on the tune groups
    assert math.isnan(result.low) and "3 groups" in result.reading["note"]  # 3 test groups: said, no interval
    assert not result.adopted and result.verdict.startswith("not adopted")


def test_an_openai_compatible_judge_that_drafts_no_rubric_leaves_the_corrected_examples_measured_and_says_why(
        scored, stub):
    """The Queues page's Measure asks the judge itself for the rubric: a model that only answers scores
    (the stub) once failed the whole measurement; now the corrected examples are measured alone."""
    store, _, _ = scored
    stub.configure("logprobs", distribution={1: 0.2, 2: 0.5, 3: 0.3}, hashed=True)  # any prompt: a score, no rubric
    judge = geval.make_judge("openai", model="stub-model", base_url=stub.url, api_key="sk-test", mode="logprobs")
    result = from_reasons(store, "synthetic", judge, "Natural", 300, start=TEMPLATE, k=2)
    assert set(result.candidates) == {"corrected examples"} and not result.drafted
    assert result.rubric_note.startswith("No rubric was tried") and "answered no rubric sentence" in result.rubric_note
    assert result.verdict.startswith(("adopted", "not adopted")) and math.isfinite(result.gain)
    drafter = geval.make_judge("openai", model="drafter", base_url=stub.url, api_key="sk-test")
    with pytest.raises(ReasonsError, match="no rubric sentence"):  # a drafter named: its failure is the caller's
        from_reasons(store, "synthetic", judge, "Natural", 300, start=TEMPLATE, k=2, drafter=drafter)


def test_too_few_corrections_or_groups_say_so(scored):
    store, _, judge = scored
    with pytest.raises(ReasonsError, match="corrected examples need 20 groups"):
        from_reasons(store, "synthetic", judge, "Natural", 500, start=TEMPLATE, k=20)
    with pytest.raises(ReasonsError, match="no groups are left"):
        from_reasons(store, "synthetic", judge, "Natural", 500, start=TEMPLATE, k=2, groups=["g0", "g1"])


def test_cli_queue_reasons_measures_the_queues_reasons(tmp_path):
    from helpers import run_cli, template_text

    path = tmp_path / "s.sqlite"
    store = geval.Store(path)
    items = make_items(24, per_group=2)
    store.save_dataset(geval.Dataset("synthetic", "s.json", "table", items))
    geval.labeling.queues.create(store, "pilot", "synthetic", geval.labeling.parse_aspects("Natural 1-3"),
                                 ["ann", "bob"], overlap=1)
    held = store.assignments("pilot")
    for row in held.itertuples():  # every label at the scale's far end from the dataset's people, with a reason
        store.save_label(row.item_id, "Natural", 3, row.annotator, 5.0, f"{row.annotator} says why")
    template = tmp_path / "t.txt"
    template.write_text(template_text(aspects=(("Naturalness", 1, 3, "Natural"),)))
    geval.score(store, items, geval.Template.load(template), geval.make_judge("scripted"), "synthetic")
    done = run_cli("queue", "reasons", "pilot", "--aspect", "Natural", "--budget", "2000", "--template", str(template),
                   "--judge", "scripted", "--store", str(path))
    assert done.returncode == 0, done.stderr
    assert "candidates from the reasons: " in done.stdout and "gain on the test groups: " in done.stdout
    assert "not adopted" in done.stdout or "adopted:" in done.stdout
