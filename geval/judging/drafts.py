"""A first template for an aspect people scored that no template judges (`Template.draft`): G-EVAL's parts
(task, criteria, evaluation steps and form) written for the level of the items people scored it on, with the
placeholders every one of them fills, on the scale people were asked on (`Dataset.scales`, declared; else the
range they gave, widened to whole numbers; a scale beyond one digit asked on 1-5).

A two-category aspect (pass/fail, yes/no, true/false) is asked on 0-1, each digit the index of its word, as
people's labels are read (`geval.data.declared`): the judge's score, its probability-weighted mean, is then its
probability of a pass. The criteria say what people were asked only in general words: the user writes what
they were really asked in their place, and saves the draft as a version of their own."""

from __future__ import annotations

import json
import math
import re
from collections import Counter

from geval.data.dataset import Dataset, seen_scales
from geval.data.declared import positive
from geval.data.items import Item
from geval.errors import TemplateError, shown

__all__ = ["draft_text"]

#: What is judged at each level (one, many), and what the task says the judge is given.
UNITS = {"turn": ("response", "responses", "You will be given a conversation between two individuals. You will then "
                  "be given one potential response for the next turn in the conversation."),
         "dialogue": ("dialogue", "dialogues", "You will be given a complete conversation."),
         "summary": ("summary", "summaries", "You will be given one summary written for a source document.")}
#: The placeholders a draft may show, by level, in order: each with the heading it is shown under and what the
#: steps call it (those every item of the aspect fills are shown; a grounding of personas shown as {{persona}}).
SHOWN = {"turn": {"context": ("Conversation History", "conversation"), "fact": ("Fact", "fact"),
                  "response": ("Response", "response")},
         "dialogue": {"dialogue": ("Dialogue", "whole dialogue")},
         "summary": {"document": ("Source Text", "source document"), "summary": ("Summary", "summary")}}


def draft_text(dataset: Dataset, aspect: str) -> str:
    """The text of a template judging `aspect` of `dataset` as people scored it (see the module's docstring): an unsaved
    text for the user to make their own. TemplateError when a prompt cannot ask for it (pairs of responses,
    more than two categories, or no item scored on it)."""
    items = [item for item in dataset.items if item.human.get(aspect) and item.pair is None]
    if not items:
        raise TemplateError(f"{dataset.name}: no single response has people's {shown(aspect)} scores to draft a "
                            "template for (a pair's preference is judged by a pairwise template: dialogue-pairwise)")
    level = Counter(item.level for item in items).most_common(1)[0][0]
    items = [item for item in items if item.level == level]
    unit, units, task = UNITS.get(level, UNITS["turn"])
    shows = {name: shown for name, shown in SHOWN.get(level, SHOWN["turn"]).items()
             if all(item.fields()[name] for item in items)}
    if "fact" in shows and all(item.grounding_kind == "persona" for item in items):  # PersonaChat's
        shows = {("persona" if name == "fact" else name): (("Persona", "persona") if name == "fact" else shown)
                 for name, shown in shows.items()}
    if level == "turn" and "context" not in shows:
        task = "You will be given one response."
    low, high, words, people = _asked(dataset, aspect, items)
    if words:
        criteria = (f"{aspect} (0-1) - does the {unit} pass on \"{aspect}\", as the people who labeled these "
                    f"{units} were asked to judge it? {words[1]} if it does, {words[0]} if it does not.")
        rate = f"Answer {words[1]} if the {unit} passes on \"{aspect}\", {words[0]} if it does not."
    else:
        criteria = (f"{aspect} ({low}-{high}) - how the {unit} rates on {aspect}, as the people who scored these "
                    f"{units} were asked to judge it: {low} is the lowest score, {high} the highest.")
        rate = (f"Rate the {unit} on a scale of {low} to {high} for {aspect}, where {low} is the lowest and {high} "
                "the highest, according to the criteria above.")
    header = "\n".join([
        "+++",
        f"# A draft for {aspect}, which people scored on {dataset.name} ({people}): write what they were really",
        "# asked in criteria and under Evaluation Criteria, then save it as a version of your own (these two lines",
        "# may go: the header's # lines are comments, which the judge is not sent).",
        f"name = {_toml(_slug(f'{dataset.name}-{aspect}'))}", f"task = {_toml(task)}", f"criteria = {_toml(criteria)}",
        f"level = {_toml(level)}", f"dataset = {_toml(dataset.name)}",
        "[[aspects]]", f"name = {_toml(aspect)}", f"min = {low}", f"max = {high}", f"human = {_toml(aspect)}",
        "+++"])
    read = [noun for _, noun in shows.values()]
    steps = [f"Read the {' and the '.join([', the '.join(read[:-1]), read[-1]] if len(read) > 1 else read)}.",
             f"Check the {unit} for {aspect}, as the criteria above describe it.", rate]
    body = [task, "", f"Your task is to rate the {unit} on one metric.", "",
            "Please make sure you read and understand these instructions carefully.", "",
            "Evaluation Criteria:", "", criteria, "", "Evaluation Steps:", "",
            *(f"{k}. {step}" for k, step in enumerate(steps, 1)), "",
            *(line for name, (heading, _) in shows.items() for line in (f"{heading}:", "{{" + name + "}}", "")),
            "Evaluation Form (scores ONLY):", "", f"- {aspect}:", ""]
    return f"{header}\n" + "\n".join(body)


def _asked(dataset: Dataset, aspect: str, items: list[Item]) -> tuple[int, int, tuple[str, str] | None, str]:
    """The whole-number scale the judge is asked on (one digit per score); for a two-category aspect its two
    answers, negative first ("0 (fail)", "1 (pass)"); and how people scored it, for the draft's first lines."""
    categories = dataset.categories.get(aspect)
    if categories:
        passed = positive(categories)
        if passed is None:
            raise TemplateError(f"{dataset.name}: {shown(aspect)} is labeled with the categories "
                                f"{', '.join(categories)}; a judge asked by a prompt answers on a scale of digits, so "
                                "a draft is made for scores and pass/fail words only: import a judge's categories "
                                "from a file (python -m geval judge import)")
        k = categories.index(passed)  # its index, the score a label of it is read as
        return 0, 1, (f"{1 - k} ({categories[1 - k]})", f"{k} ({passed})"), f"{'/'.join(categories)}, asked on 0-1"
    low, high = dataset.scales.get(aspect) or seen_scales(items)[aspect]
    said = f"{low:g}-{high:g}"
    low, high = math.floor(low), max(math.ceil(high), math.floor(low) + 1)
    if not 0 <= low < high <= 9:
        return 1, 5, None, f"{said}; a judge answers one digit, so it is asked on 1-5 and read on {said}"
    return low, high, None, said


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", text.lower()).strip("-") or "draft"


def _toml(text: str) -> str:
    """`text` as a TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)
