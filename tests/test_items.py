"""geval.items: the item model, its placeholder fields, storage rows and content ids."""

from __future__ import annotations

import math

from helpers import FULL_ITEM

from geval.data.items import PLACEHOLDERS, STORED, Item, Pair, Turn, content_id, make_item


def test_fields_fill_every_placeholder():
    assert set(FULL_ITEM.fields()) == set(PLACEHOLDERS)
    assert FULL_ITEM.fields() == {
        "context": "A: hi\nB: hello", "response": "a reply", "dialogue": "A: hi\nB: hello\nA: a reply",
        "fact": "a fact", "persona": "", "document": "", "summary": "a reply",
        "response_a": "", "response_b": "", "conversation_a": "", "conversation_b": "",  # a pair's: none here
    }


def test_only_the_placeholder_of_the_groundings_kind_is_filled_and_fact_names_any():
    persona = make_item("pc", "turn", [Turn("A", "hi")], "hey", grounding="your persona: i like dogs.\n"
                                                                           "your persona: i am tall.")
    summary = make_item("se", "summary", [], "a summary", grounding="the document")
    none = make_item("d", "turn", [Turn("A", "hi")], "hey")
    assert [i.grounding_kind for i in (FULL_ITEM, persona, summary, none)] == ["fact", "persona", "document", ""]
    assert persona.fields()["persona"] == persona.fields()["fact"] == persona.grounding
    assert summary.fields()["document"] == summary.fields()["fact"] == "the document"
    assert persona.fields()["document"] == summary.fields()["persona"] == ""


def test_persona_on_a_topicalchat_item_is_an_error_that_says_to_pick_a_template_for_a_fact():
    import pytest

    import geval
    from geval.errors import TemplateError
    from helpers import template_text

    template = geval.Template.parse(template_text(body="Fact: {{persona}}\nResponse: {{response}}\n\n"
                                                      "- Naturalness:"))
    with pytest.raises(TemplateError, match=r"placeholder \{\{persona\}\} in .* has no value for this item: its "
                                            r"grounding is a fact, not a persona .*; pick a template written "
                                            r"for a fact"):
        template.render(FULL_ITEM)


def test_the_dialogue_gives_the_response_to_the_speaker_of_two_turns_ago():
    one_turn = make_item("d", "turn", [Turn("User", "hi")], "hello")
    assert one_turn.fields()["dialogue"] == "User: hi\nhello"
    whole = make_item("d", "dialogue", [Turn("User", "hi"), Turn("System", "yo")], "")
    assert whole.fields()["dialogue"] == "User: hi\nSystem: yo"


def test_turns_without_a_speaker_render_bare():
    assert Turn("", "just text").render() == "just text"
    assert Turn("User", "hi").render() == "User: hi"


def test_human_mean():
    item = make_item("d", "turn", [], "r", human={"Natural": (1.0, 2.0, 3.0)})
    assert item.human_mean("Natural") == 2.0
    assert math.isnan(item.human_mean("Overall"))


def test_rows_round_trip():
    item = make_item("d", "dialogue", [Turn("User", "hi \u00e9")], "r", "g", "sys", "grp",
                     {"Overall": (4.0, 5.0)})
    assert Item.from_row(item.to_row()) == item


def test_items_made_from_many_rows_at_once_are_items_as_any_other_frozen_and_share_what_they_repeat():
    import dataclasses

    import pytest

    context = [Turn("User", "hi")]
    items = [make_item("d", "turn", context, "r1", "g", "sys", "grp", {"Overall": (4.0, 5.0)}),
             make_item("d", "turn", context, "r2", "g", "sys", "grp", {"Overall": (4.0, 5.0)},
                       {"Overall": ("ann", "bob")}, "src", Pair("a", "b", "s1", "s2"))]
    made = Item.from_rows([[item.to_row()[column] for column in STORED] for item in items])
    assert made == items and [type(item) for item in made] == [Item, Item]
    assert made[0].context is made[1].context and made[0].human is made[1].human  # read once, held once
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].response = "changed"
    assert dataclasses.replace(made[1], response="r3").pair == items[1].pair
    assert Item.from_values([items[1].to_row()[column] for column in STORED]) == items[1]


def test_ids_come_from_content():
    one = make_item("d", "turn", [Turn("A", "hi")], "r", group="g1", human={"x": (1.0,)})
    same = make_item("d", "turn", [Turn("A", "hi")], "r", group="g2", human={"x": (3.0,)})
    other = make_item("d", "turn", [Turn("A", "hi")], "r2")
    assert one.id == same.id != other.id  # group and human scores are not content
    assert len(one.id) == 16
    assert content_id("a", 1) == content_id("a", 1) != content_id("a", 2)
