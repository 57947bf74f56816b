"""geval.templates: the real prompts, header and placeholder errors, rendering, versions, diffs."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from helpers import FULL_ITEM, PROMPTS, make_template, template_text

import geval
from geval.data.items import Pair, Turn, make_item
from geval.errors import TemplateError
from geval.judging.templates import (
    KNOWN,
    Aspect,
    diff_templates,
    list_templates,
    load_template,
    parse_template,
    template_hash,
)

PROMPT_FILES = sorted(PROMPTS.glob("*.txt"))


#: What each kind of grounding a template names looks like: (level, grounding).
GROUNDINGS = {"persona": ("turn", "your persona: i like dogs."), "document": ("summary", "a document")}


def _kind(template) -> tuple[str, str]:
    """The level and grounding of items a template is written for (its {{persona}} or {{document}})."""
    return next((GROUNDINGS[name] for name in GROUNDINGS if name in template.placeholders), ("turn", "a fact"))


def scored_others(template, groups: int = 25) -> list:
    """Items of other groups with a human score for every aspect of `template` (for {{examples}})."""
    human = {(a.human or a.name): (float(a.max),) for a in template.aspects}
    level, grounding = _kind(template)
    return [make_item("synthetic", level, [Turn("A", f"hi {g}")], f"other reply {g}", grounding=grounding,
                      group=f"g{g}", human=human) for g in range(groups)]


def test_the_prompts_folder_has_templates():
    assert PROMPT_FILES, f"no templates in {PROMPTS}"
    assert len(list_templates(PROMPTS)) == len(PROMPT_FILES)


@pytest.mark.parametrize("path", PROMPT_FILES, ids=[p.stem for p in PROMPT_FILES])
def test_every_real_prompt_parses_and_renders(path):
    template = load_template(path)
    assert template.name and template.aspects
    assert set(template.placeholders) <= set(KNOWN)
    for aspect in template.aspects:
        assert 0 <= aspect.min < aspect.max <= 9
    steps = "1. Read.\n2. Score." if template.needs_generated_steps else None
    level, grounding = _kind(template)
    item = replace(FULL_ITEM, level=level, grounding=grounding,
                   pair=Pair("a reply", "another reply") if template.kind == "pairwise" else None)
    calls = template.calls(item, steps, around=[item, *scored_others(template)])
    assert calls and {"response", "summary", "dialogue", "responses", "response_a", "conversation_a"} \
        & set(template.placeholders)
    for call in calls:
        assert "{{" not in call.prompt and "}}" not in call.prompt
        assert "a reply" in call.prompt  # it shows the text being judged
    assert template.version == hashlib.sha256(path.read_text("utf-8").encode()).hexdigest()[:12]


def test_parse_reads_header_and_aspects():
    template = make_template(aspects=(("Naturalness", 1, 3, "Natural"), ("Coherence", 1, 5)))
    assert template.name == "test-naturalness"
    assert template.aspects == (Aspect("Naturalness", 1, 3, "Natural"), Aspect("Coherence", 1, 5, ""))
    assert template.aspects[1].scale == [1, 2, 3, 4, 5]
    assert template.aspect("COHERENCE").key == "coherence"
    assert template.placeholders == ["context", "fact", "response"]
    assert template.label == f"test-naturalness@{template.version}"


def test_render_fills_every_placeholder():
    template = make_template()
    prompt = template.render(FULL_ITEM)
    assert prompt == (
        "Context:\nA: hi\nB: hello\n\nFact:\na fact\n\nResponse:\na reply\n\nForm:\n- Naturalness:"
    )


# --- errors ---------------------------------------------------------------------------------

HEADER = '+++\nname = "t"\n[[aspects]]\nname = "A"\nmin = 1\nmax = 3\n+++\n'


@pytest.mark.parametrize(
    "text, message",
    [
        # the body starts on line 8; blank lines before it still count
        (HEADER + "line 8\n{{bogus}}\n", "t.txt:9: unknown placeholder {{bogus}}; known: "),
        (HEADER + "\n\nline 10\n{{ Respons }} here\n", "t.txt:11: unknown placeholder {{ Respons }}; known: "),
        ("no header\n{{response}}\n", "t.txt:1: a template starts with a '+++' line, then a TOML header, then '+++' "
                                     "(e.g. prompts/response-overall.txt)"),  # it gave no example
        ('+++\nname = "t"\n{{response}}\n', "t.txt: the header is not closed by a second '+++' line"),
        ("+++\nname = \n+++\nbody\n", "t.txt: bad header: "),
        ('+++\nname = "t"\ncolour = "red"\n[[aspects]]\nname = "A"\nmin = 1\nmax = 3\n+++\nb\n',
         "t.txt: unknown header key(s) colour; known: aspects, criteria, dataset, examples, kind, level, name, orders, steps, task"),
        ('+++\nname = "t"\n+++\nbody\n',
         "t.txt: the header needs at least one [[aspects]] table with name, min and max"),
        ('+++\n[[aspects]]\nname = "A"\nmin = 1\nmax = 3\n+++\nbody\n', 't.txt: the header needs name = "..."'),
        ('+++\nname = "t"\n[[aspects]]\nname = "A"\nmin = 3\nmax = 1\n+++\nb\n',
         "t.txt: aspect 'A' scale 3-1 must be whole numbers with 0 <= min < max <= 9"),
        ('+++\nname = "t"\n[[aspects]]\nname = "A"\nmin = 1\nmax = 10\n+++\nb\n',
         "t.txt: aspect 'A' scale 1-10 must be whole numbers with 0 <= min < max <= 9"),
        ('+++\nname = "t"\n[[aspects]]\nname = "A"\nmin = 1.5\nmax = 3\n+++\nb\n',
         "t.txt: aspect 'A' scale 1.5-3 must be whole numbers with 0 <= min < max <= 9"),
        ('+++\nname = "t"\n[[aspects]]\nname = "A"\nmin = 1\n+++\nb\n', "t.txt: aspect 1 needs name, min and max"),
        ('+++\nname = "t"\n[[aspects]]\nname = "A"\nmin = 1\nmax = 3\n[[aspects]]\nname = "a"\nmin = 1\nmax = 3\n+++\nb',
         "t.txt: two aspects share a name"),
        (HEADER + "{{steps}}\n{{response}}\n",
         't.txt: the body uses {{steps}} but the header has no steps (write them, or steps = "auto")'),
    ],
)
def test_parse_errors_name_source_and_line(text, message):
    with pytest.raises(TemplateError) as error:
        parse_template(text, source="t.txt")
    assert str(error.value).startswith(message)


def test_an_unknown_placeholder_near_a_known_one_is_asked_about():
    """"unknown placeholder {{respnse}}; known: …" left the reader to find the typo among twelve names."""
    for typed, meant in (("{{respnse}}", "response"), ("{{ Contxt }}", "context"), ("{{bogus}}", None)):
        with pytest.raises(TemplateError) as error:
            parse_template(HEADER + typed + "\n", source="t.txt")
        said = str(error.value)
        assert said.endswith(f"; did you mean {{{{{meant}}}}}?") if meant else "did you mean" not in said, said


NATURALNESS = (PROMPTS / "topicalchat-naturalness.txt").read_text("utf-8")
TWO = (("Naturalness", 1, 3), ("Coherence", 1, 5))


@pytest.mark.parametrize(
    "text, message",
    [
        (NATURALNESS.replace("- Naturalness:", "- Fluency:"),
         "topicalchat-naturalness:41: the form asks for 'Fluency', which is not one of its aspects (Naturalness)"),
        (NATURALNESS.replace("- Naturalness:", "- **Fluency** (1-3):"),
         "topicalchat-naturalness:41: the form asks for 'Fluency', which is not one of its aspects (Naturalness)"),
        (NATURALNESS.replace("\n\n- Naturalness:", ""),
         "topicalchat-naturalness:39: no form line for aspect 'Naturalness' (e.g. '- Naturalness:' at the end of "
         "the body)"),
        (template_text(aspects=TWO, body="Response:\n{{response}}\n\n- Naturalness:"),
         "topicalchat-naturalness:16: no form line for aspect 'Coherence' (e.g. '- Coherence:' at the end of the "
         "body)"),
        (template_text(aspects=TWO, body="Response:\n{{response}}\n\n- {{aspect}}:\n- Fluency:"),
         "topicalchat-naturalness:17: the form asks for 'Fluency', which is not one of its aspects (Naturalness, "
         "Coherence)"),
    ],
    ids=["another aspect", "another aspect in markup", "no form line", "one aspect without", "per aspect and another"],
)
def test_a_form_that_does_not_ask_for_its_aspects_is_refused_naming_the_line(text, message):
    with pytest.raises(TemplateError) as error:
        parse_template(text, source="topicalchat-naturalness")
    assert str(error.value) == message


@pytest.mark.parametrize("form", ["- Naturalness:", "Naturalness:", "**Naturalness** (1-3):", "* naturalness (1-3):",
                                  "Evaluation Form (scores ONLY):\n- Naturalness:", "- Naturalness:\n\nThanks.",
                                  "Answer with exactly one line in this form:\n\nNaturalness: <score>"])
def test_a_form_line_may_be_written_in_several_ways(form):
    template = parse_template(template_text(body=f"Response:\n{{{{response}}}}\n\n{form}"))
    assert [a.name for a in template.aspects] == ["Naturalness"]


def test_a_form_not_checked_when_read_back_as_stored():
    text = NATURALNESS.replace("- Naturalness:", "- Fluency:")
    assert parse_template(text, check_form=False).body.endswith("- Fluency:")


def test_unknown_placeholder_error_lists_the_known_ones():
    with pytest.raises(TemplateError) as error:
        parse_template(HEADER + "{{bogus}}", source="t.txt")
    assert str(error.value).endswith(", ".join("{{" + k + "}}" for k in KNOWN))


def test_missing_template_file(tmp_path):
    with pytest.raises(TemplateError) as error:
        load_template(tmp_path / "nope.txt")
    assert str(error.value) == f"{tmp_path / 'nope.txt'}: no such template file"


def test_placeholder_without_value_names_the_item():
    template = make_template()
    item = make_item("mine", "turn", [Turn("A", "hi")], "a reply", grounding="")
    with pytest.raises(TemplateError) as error:
        template.render(item)
    assert str(error.value) == (
        f"item {item.id} (mine): placeholder {{{{fact}}}} in test-naturalness.txt has no value for this item: "
        "no grounding (a fact, persona or document); pick a template without {{fact}}, or, if the file has one, "
        "map the column that holds it to grounding when loading the file (the Data page's Grounding; "
        "CLI: --map grounding=COLUMN)"
    )


SET_LEVEL = "set the level to summary when loading the file (the Data page's Level; CLI: --map level=summary)"
MAP_DOCUMENT = ("map the column that holds the source document to grounding when loading the file (the Data page's "
                "Grounding; CLI: --map grounding=COLUMN)")
DIALOGUE = [Turn("A", "hi")]


# (placeholder asked, the item's level, context, grounding, the fix its message ends with): the fix that applies
EMPTY_BECAUSE = [
    ("document", "turn", [], "An article.",  # a summary file read at the turn level: the level, never {{fact}}
     f"read at the turn level, where a grounding is a fact; only a summary's grounding is a document: {SET_LEVEL}"),
    ("document", "turn", [], "", f"no source document; {MAP_DOCUMENT}, and {SET_LEVEL}"),
    ("document", "summary", [], "", f"the summary has no source document; {MAP_DOCUMENT}"),
    ("document", "turn", DIALOGUE, "a fact",  # Topical-Chat's turn
     "a dialogue turn with a fact, not a summary of a document; pick a template written for dialogues"),
    ("document", "turn", DIALOGUE, "your persona: i like dogs.",  # PersonaChat's
     "a dialogue turn with a persona, not a summary of a document; pick a template written for dialogues"),
    ("persona", "turn", DIALOGUE, "Harry Potter is a series of novels.",
     "its grounding is a fact, not a persona (lines starting 'your persona:'); pick a template written for a fact "
     "(one with {{fact}})"),
    ("persona", "summary", [], "An article.",
     "its grounding is a document, not a persona (lines starting 'your persona:'); pick a template written for "
     "summaries (one with {{document}})"),
    ("persona", "turn", DIALOGUE, "",
     "no grounding (a fact, persona or document); pick a template without {{persona}}, or, if the file has one, "
     "map the column that holds it to grounding when loading the file (the Data page's Grounding; "
     "CLI: --map grounding=COLUMN)"),
]


@pytest.mark.parametrize("asked, level, context, grounding, fix", EMPTY_BECAUSE,
                         ids=[f"{c[0]}-{c[1]}-{'dialogue' if c[2] else 'alone'}-{c[3][:8] or 'none'}"
                              for c in EMPTY_BECAUSE])
def test_a_placeholder_without_value_names_the_fix_that_applies(asked, level, context, grounding, fix):
    template = make_template(body=f"{{{{{asked}}}}}\n{{{{response}}}}\n- Naturalness:")
    item = make_item("mine", level, context, "a reply", grounding=grounding)
    with pytest.raises(TemplateError) as error:
        template.render(item)
    assert str(error.value).endswith(f"has no value for this item: {fix}")
    assert "write {{" not in str(error.value)


def test_a_persona_asked_beside_a_fact_is_told_to_go_not_to_pick_a_template_with_a_fact():
    """{{persona}} added to a template with {{fact}} was told to "pick a template written for a fact (one with
    {{fact}})": the one it is."""
    template = make_template(body="{{fact}}\n{{persona}}\n{{response}}\n- Naturalness:")
    item = make_item("mine", "turn", DIALOGUE, "a reply", grounding="Harry Potter is a series of novels.")
    with pytest.raises(TemplateError) as error:
        template.render(item)
    assert str(error.value).endswith("its grounding is a fact, not a persona (lines starting 'your persona:'); "
                                     "remove {{persona}}: the template's {{fact}} shows this grounding already")
    assert template.misfit([item]).endswith("remove {{persona}}: the template's {{fact}} shows this grounding already")


def test_a_whole_dialogue_asked_for_its_response_is_pointed_to_a_dialogue_template():
    whole = make_item("mine", "dialogue", [Turn("User", "hi"), Turn("System", "hello")], "")
    with pytest.raises(TemplateError) as error:
        make_template(body="{{response}}\n- Naturalness:").render(whole)
    assert str(error.value).endswith("a whole dialogue with no separate response; pick a dialogue-level template "
                                     "(one with {{dialogue}})")


def test_misfit_says_why_a_template_fits_none_of_the_items_with_the_fix():
    summaries_read_as_turns = [make_item("mine", "turn", [], f"summary {i}", grounding="An article.")
                               for i in range(3)]
    consistency = geval.Template.load("summeval-consistency")
    assert not consistency.fits(summaries_read_as_turns)
    assert consistency.misfit(summaries_read_as_turns) == (
        f"summeval-consistency is written for the summary level and these items are at the turn level: {SET_LEVEL}")
    summaries = [replace(item, level="summary") for item in summaries_read_as_turns]
    assert consistency.fits(summaries) and consistency.misfit(summaries) == ""
    no_fact = [make_item("mine", "turn", DIALOGUE, "a reply")]
    assert geval.Template.load("topicalchat-naturalness").misfit(no_fact).startswith(
        "placeholder {{fact}} of topicalchat-naturalness has no value: no grounding")
    assert geval.Template.load("fed-dialogue-overall").misfit(no_fact) == (
        "fed-dialogue-overall is written for the dialogue level and these items are at the turn level: pick a "
        "template written for the turn level")


def test_the_generic_templates_fit_a_context_and_a_response_and_only_them():
    generic = [t for t in geval.Template.known() if t.name.startswith("response-")]
    assert sorted(t.name for t in generic) == ["response-coherence", "response-engagingness", "response-naturalness",
                                               "response-overall"]
    turns = [make_item("mine", "turn", DIALOGUE, "a reply")]
    fitting = {t.name for t in geval.Template.known() if t.fits(turns)}
    assert {t.name for t in generic} <= fitting
    assert not any("{{fact}}" in t.body or "{{persona}}" in t.body for t in generic)
    assert all(len(t.aspects) == 1 and t.aspects[0].human for t in generic)  # one aspect each, compared with people
    assert not any(t.fits([make_item("mine", "summary", [], "a summary", grounding="An article.")]) for t in generic)


def test_optional_placeholders_may_be_empty():
    template = make_template()
    first_turn = make_item("mine", "turn", [], "a reply", grounding="a fact")
    assert "Context:\n\n\nFact:" in template.render(first_turn)


def test_auto_steps_without_generated_steps_raise():
    template = make_template(steps="auto", body="Steps:\n{{steps}}\n{{response}}\n- Naturalness:")
    assert template.needs_generated_steps
    with pytest.raises(TemplateError) as error:
        template.render(FULL_ITEM)
    assert str(error.value).startswith('test-naturalness.txt: steps = "auto" but no evaluation steps were generated')
    assert template.render(FULL_ITEM, steps="  1. Read.\n") == "Steps:\n1. Read.\na reply\n- Naturalness:"


def test_written_steps_are_rendered_and_not_generated():
    template = make_template(steps="1. Look.\n2. Score.", body="{{steps}}\n{{response}}\n- Naturalness:")
    assert not template.needs_generated_steps
    assert template.render(FULL_ITEM, steps="ignored") == "1. Look.\n2. Score.\na reply\n- Naturalness:"


# --- versions and diffs ---------------------------------------------------------------------

def test_version_is_the_hash_of_the_text_and_changes_only_with_it():
    text = template_text()
    first, again = parse_template(text), parse_template(text, source="elsewhere.txt")
    assert first.version == again.version == template_hash(text) == hashlib.sha256(text.encode()).hexdigest()[:12]
    changed = parse_template(text.replace("Rate the response.", "Rate the reply."))
    assert changed.version != first.version
    assert parse_template(text + " ").version != first.version  # any byte counts


def test_diff_templates_shows_both_labels_and_the_change():
    old = parse_template(template_text())
    new = parse_template(template_text().replace("Rate the response.", "Rate the reply."))
    diff = diff_templates(old, new)
    assert f"--- {old.label}" in diff and f"+++ {new.label}" in diff
    assert '-task = "Rate the response."' in diff and '+task = "Rate the reply."' in diff
    assert diff_templates(old, old) == ""


PER_ASPECT = make_template(
    aspects=(("Naturalness", 1, 3), ("Groundedness", 0, 1)),
    body="Criteria for both.\n\nResponse:\n{{response}}\n\nRate {{aspect}} only.\n- {{aspect}}:",
)


def test_a_body_naming_aspect_makes_one_call_per_aspect_that_differ_only_at_the_end():
    calls = PER_ASPECT.calls(FULL_ITEM)
    assert PER_ASPECT.per_aspect
    assert [(call.prompt, [a.name for a in call.aspects]) for call in calls] == [
        ("Criteria for both.\n\nResponse:\na reply\n\nRate Naturalness only.\n- Naturalness:", ["Naturalness"]),
        ("Criteria for both.\n\nResponse:\na reply\n\nRate Groundedness only.\n- Groundedness:", ["Groundedness"]),
    ]
    assert PER_ASPECT.render(FULL_ITEM) == calls[0].prompt  # a preview shows the first aspect


def test_a_form_template_makes_one_call_with_every_aspect():
    form = make_template(aspects=(("Naturalness", 1, 3), ("Coherence", 1, 5)))
    [call] = form.calls(FULL_ITEM)
    assert not form.per_aspect and call.prompt == form.render(FULL_ITEM) and call.aspects == form.aspects


def test_a_template_that_shows_a_conversation_fits_no_summary():
    """topicalchat-naturalness names no level and its {{fact}} reads any grounding: it "fitted" news
    summaries (their article as the fact, an empty conversation), and the Label page opened on it."""
    summaries = [make_item("mine", "summary", [], f"summary {i}", grounding="An article.") for i in range(3)]
    naturalness = geval.Template.load("topicalchat-naturalness")
    assert not naturalness.fits(summaries)
    assert naturalness.misfit(summaries) == ("topicalchat-naturalness shows a conversation ({{context}}) and summaries "
                                             "have none: pick a template written for summaries (one with {{document}})")
    fitting = {t.name for t in geval.Template.fitting(summaries)}
    assert fitting and all(name.startswith("summeval-") for name in fitting), fitting
    turns = [make_item("mine", "turn", DIALOGUE, "a reply", grounding="a fact")]
    assert naturalness.fits(turns) and naturalness.misfit(turns) == ""
