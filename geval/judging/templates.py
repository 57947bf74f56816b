"""Prompt templates: a TOML header between '+++' lines, then a body with {{placeholders}}.

    +++
    name = "topicalchat-naturalness"
    task = "Rate one response for the next turn of a conversation."
    steps = "auto"            # generate the evaluation steps (auto-CoT) into {{steps}}
    [[aspects]]
    name = "Naturalness"      # the form label the judge fills in: "Naturalness: <score>"
    min = 1
    max = 3
    human = "Natural"         # the dataset's human aspect it is compared with
    +++
    ...body with {{context}}, {{fact}}, {{response}}, {{steps}}...

A body that names {{aspect}} (in its form, at the end) is sent once per aspect, the aspect's
name filled in: the judge reads one score per prompt, and the prompts of one item differ only
after the response, so a judge that reuses a shared prefix evaluates the rest once. Without
{{aspect}}, one prompt asks for every aspect in a form: a line "- Naturalness:" for each of
them, and none for an aspect the header does not declare (the answer is read by these names).

`kind` says how the judge is asked (see `geval.judging.layouts`): "form" (the default, as
above), "checklist" (each aspect's `questions` asked one by one as yes/no questions through
{{question}}; the aspect's score is the mean P(yes) on its scale), or "batch" (all items of a
group listed in {{responses}} and scored in turn, in `orders` orders that are averaged), "pairwise"
(two responses of a pair in {{response_a}} and {{response_b}}, or {{conversation_a}} and
{{conversation_b}}, asked in both orders and answered A, B or tie: `geval.judging.pairwise`; its
aspects need no min and max); or "imported": never asked, the record of a judge's scores made elsewhere and imported from a file
(`geval.scoring.imports`), whose body says so. Any
kind may show scored examples of other groups in {{examples}}: an `[examples]` table with
k, select ("random", "stratified" or "nearest") and seed.

A template's version is the hash of its whole text.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import random
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from geval.bundled import bundled_dir
from geval.data.dataset import Dataset
from geval.data.items import PERSONA_LINE, PLACEHOLDERS, Item
from geval.data.reading import read_utf8
from geval.errors import TemplateError, shown
from geval.judging.aspects import (ANSWERS, ASPECT, EXAMPLES, KNOWN, OPTIONAL, PART, PLACEHOLDER, QUESTION, RESPONSES,
                                   STEPS, VARIANT, Aspect, Examples, one_line, part_key)
from geval.judging import pairwise
from geval.judging.drafts import draft_text
from geval.judging.examples import choose_examples, default_example_text, render_examples

#: A line of the form the judge fills in: an optional bullet, a label (an aspect's name, or
#: {{aspect}}), an optional scale in parentheses, a colon and nothing after it: "- Naturalness:",
#: "**Coherence** (1-5):", "- {{aspect}}:". Only a bulleted one is taken to ask for its label
#: (an unbulleted "Response:" is a heading).
FORM_LINE = re.compile(r"^[ \t]*(?P<bullet>[-*•][ \t]*)?[*_`]*(?P<label>[^\s*_`:(][^:(\n]*?)[*_`]*[ \t]*"
                       r"(?:\([^()\n]*\))?[ \t]*:[ \t]*$", re.MULTILINE)
HEADER_KEYS = {"name", "task", "criteria", "steps", "aspects", "level", "dataset", "kind", "orders", "examples"}
KINDS = ("form", "checklist", "batch", "pairwise", "imported")
#: Where templates are found by name: $GEVAL_PROMPTS_DIR, else prompts/ in the checkout (or installed with the package).
#: The placeholder that shows a conversation: a template with it fits no summary.
CONVERSATION = "context"
PROMPTS_DIR = Path(os.environ.get("GEVAL_PROMPTS_DIR") or bundled_dir("prompts"))


@dataclass(frozen=True)
class Template:
    """A parsed template. `text` is the whole file; `version` is its hash.

    `Template.load(name or path)` reads one (by name from the prompts folder), `Template.parse`
    one from text, `Template.known()` lists the prompts folder; `PLACEHOLDERS` says what each
    {{placeholder}} holds.
    """

    PLACEHOLDERS: ClassVar[dict[str, str]] = KNOWN

    name: str
    task: str
    criteria: str
    aspects: tuple[Aspect, ...]
    steps: str  # "auto", the steps themselves, or "" when the body has none
    body: str
    text: str
    source: str = "<text>"
    level: str = ""  # the item level it is written for (turn, dialogue, summary), if any
    dataset: str = ""  # the dataset it is written for (topicalchat, fed, ...), if any: "" for a generic one
    kind: str = "form"  # how the judge is asked: "form", "checklist", "batch", or "imported": never (KINDS)
    orders: int = 1  # batch: how many orders of the group's items are asked and averaged
    examples: Examples | None = None  # few-shot examples shown in {{examples}}

    @property
    def version(self) -> str:
        """12 hex digits of the SHA-256 of the file's text."""
        return template_hash(self.text)

    @property
    def label(self) -> str:
        """'name@version', as shown in signatures and the app."""
        return f"{self.name}@{self.version}"

    @property
    def made_by_search(self) -> bool:
        """True for a variant a prompt search made from another template ("<name>~<change>")."""
        return VARIANT in self.name

    @property
    def needs_generated_steps(self) -> bool:
        """True when the steps are to be generated by a judge (auto chain-of-thought)."""
        return self.steps.strip().lower() == "auto" and STEPS in self.placeholders

    @property
    def placeholders(self) -> list[str]:
        """The placeholders the body uses, in order of first use."""
        return list(dict.fromkeys(m.group(1).lower() for m in PLACEHOLDER.finditer(self.body)))

    def check_asked(self) -> None:
        """Raise TemplateError for a template that is never asked: kind "imported", the record of a
        judge's scores made elsewhere and imported from a file (`geval.alttest.import_judge`)."""
        if self.kind == "imported":
            raise TemplateError(f"{self.source}: kind = \"imported\" records a judge's scores imported from a file; "
                                "it is never asked: score with a template of another kind (form, checklist, batch)")

    @property
    def per_aspect(self) -> bool:
        """True when the body names {{aspect}}: one prompt (and judge call) per aspect."""
        return ASPECT in self.placeholders

    @staticmethod
    def load(name_or_path: str | Path) -> "Template":
        """A template from a file path, or by its name (or file stem) in the prompts folder."""
        return resolve_template(str(name_or_path))

    @staticmethod
    def parse(text: str, source: str = "<text>") -> "Template":
        """Parse and validate a template text; errors name the source and line."""
        return parse_template(text, source)

    @staticmethod
    def known() -> list["Template"]:
        """Every template in the prompts folder, by name."""
        return list_templates(PROMPTS_DIR)

    @staticmethod
    def fitting(items: Sequence[Item], templates: Sequence["Template"] | None = None) -> list["Template"]:
        """The `templates` (default: the prompts folder's) that fit `items` (`fits`)."""
        return [template for template in (Template.known() if templates is None else templates) if template.fits(items)]

    @staticmethod
    def unjudged(dataset: Dataset, templates: Sequence["Template"], labeled: Dataset | None = None) -> list[str]:
        """The aspects people scored on `dataset` that none of `templates` fitting its items is compared with (by
        its aspects' `human = ...`, or their own names, in any case), then those only the labels of `labeled` (the
        same items, their human scores the labels: `Store.dataset(name, side="you")`) give: those `draft` is
        offered for, from `dataset`, else `labeled`."""
        judged = {name.lower() for template in Template.fitting(dataset.items, templates)
                  for aspect in template.aspects for name in (aspect.human, aspect.name) if name}
        scored = {aspect.lower() for aspect in dataset.aspects}
        only_labeled = [aspect for aspect in (labeled.aspects if labeled else []) if aspect.lower() not in scored]
        return [aspect for aspect in [*dataset.aspects, *only_labeled] if aspect.lower() not in judged]

    @staticmethod
    def draft(dataset: Dataset, aspect: str) -> "Template":
        """A first template judging `aspect` as people scored it on `dataset` (`geval.judging.drafts`), for the
        user to make their own; TemplateError when a prompt cannot ask for it."""
        return parse_template(draft_text(dataset, aspect), source=f"a draft for {aspect}")

    def diff(self, other: "Template") -> str:
        """A unified diff from this template's text to `other`'s, labelled with their versions."""
        return diff_templates(self, other)

    def fits(self, items: Sequence[Item]) -> bool:
        """Whether some of `items` (of the template's level, when it names one) fill every item
        placeholder it needs: a Topical-Chat template fits the Topical-Chat items, a PersonaChat
        one (its {{persona}}) or a SummEval one (its summaries) does not. A template that shows a
        conversation ({{context}}) fits no summary, which has none (its {{fact}} would read the
        article: topicalchat-naturalness, which names no level, "fitted" news summaries)."""
        needed = self._item_placeholders()
        return any(self._at_level(item) and all(item.fields()[name] for name in needed) for item in items)

    def _at_level(self, item: Item) -> bool:
        """Whether `item` is of the kind this template is written for: its level, when it names one; never
        a summary for a template that shows a conversation; a pair for a pairwise template only."""
        if (self.kind == pairwise.KIND) != (item.pair is not None):
            return False
        if self.level:
            return item.level == self.level
        return not (item.level == "summary" and CONVERSATION in self.placeholders)

    def misfit(self, items: Sequence[Item]) -> str:
        """Why the template fits none of `items` ("" when it fits some): it is written for another
        level, or its first item of that level cannot fill a placeholder; with the fix that applies."""
        if self.fits(items) or not items:
            return ""
        if not any((self.kind == pairwise.KIND) == (item.pair is not None) for item in items):
            return (f"{self.name} compares two responses (kind = \"pairwise\") and these items are single responses: "
                    "pick a template of one response, or load pairs (a file with response_a and response_b)"
                    if self.kind == pairwise.KIND else
                    f"these items are pairs of responses and {self.name} judges one response: pick a pairwise template "
                    "(kind = \"pairwise\", e.g. mtbench-pairwise)")
        at_level = [item for item in items if self._at_level(item)]
        if not at_level and not self.level:
            return (f"{self.name} shows a conversation ({{{{{CONVERSATION}}}}}) and summaries have none: pick a template "
                    "written for summaries (one with {{document}})")
        if not at_level:
            levels = ", ".join(dict.fromkeys(item.level for item in items))
            fix = (SET_SUMMARY_LEVEL if self.level == "summary" and summary_shaped(items[0]) else
                   f"pick a template written for the {levels} level")
            return f"{self.name} is written for the {self.level} level and these items are at the {levels} level: {fix}"
        item = at_level[0]
        name = next(name for name in self._item_placeholders() if not item.fields()[name])
        return f"placeholder {{{{{name}}}}} of {self.name} has no value{empty_because(item, name, self.placeholders)}"

    def _item_placeholders(self) -> list[str]:
        """The item placeholders the body needs filled (not those that may be empty)."""
        return [name for name in self.placeholders if name in PLACEHOLDERS and name not in OPTIONAL]

    def aspect(self, name: str) -> Aspect:
        """The aspect called `name` (any case)."""
        for aspect in self.aspects:
            if aspect.key == name.lower():
                return aspect
        raise TemplateError(f"{self.source}: no aspect '{name}'; it has {', '.join(a.name for a in self.aspects)}")

    def calls(self, item: Item, steps: str | None = None, around: "Neighbours | Sequence[Item] | None" = None
              ) -> list["Call"]:
        """The judge calls `item` needs (`Call`: prompt, aspects asked, answers kept), in form
        order. `around` is the dataset's items (a list, or `Neighbours`), needed by batch layouts
        and {{examples}}."""
        return calls(self, item, steps, around)

    def render(self, item: Item, steps: str | None = None, aspect: Aspect | None = None, **fill: str) -> str:
        """The prompt for `item` (asking for `aspect`, default the first, if the body names {{aspect}});
        `fill` gives the other placeholders' text (question, responses, examples).

        Raises TemplateError naming the item if a value is missing.
        """
        values = {**item.fields(), **fill}
        values[ASPECT] = (aspect or self.aspects[0]).name
        if STEPS in self.placeholders:
            if self.needs_generated_steps:
                if not steps:
                    raise TemplateError(
                        f"{self.source}: steps = \"auto\" but no evaluation steps were generated; "
                        "run `python -m geval cot` with this template (or press 'Generate steps')"
                    )
                values[STEPS] = steps.strip()
            else:
                values[STEPS] = self.steps.strip()
        for name in self.placeholders:
            if not values.get(name) and name not in OPTIONAL:
                raise TemplateError(
                    f"item {item.id} ({item.dataset}): placeholder {{{{{name}}}}} in {self.source} "
                    f"has no value for this item{empty_because(item, name, self.placeholders)}"
                )
        return PLACEHOLDER.sub(lambda m: values[m.group(1).lower()], self.body)

    @property
    def asked_orders(self) -> int:
        """How many orders each aspect is asked in: a batch's `orders`, both for a pairwise template."""
        return len(pairwise.ORDERS) if self.kind == pairwise.KIND else self.orders

    def part_name(self, key: str) -> str:
        """How a stored key reads in tables: the aspect's name, or for a part its aspect and the
        part ("Naturalness · question 2: Is the response fluent ...?", "Naturalness · order 2").
        Raises TemplateError for a key the template does not have."""
        aspect_key, _, part = key.partition(PART)
        aspect = self.aspect(aspect_key)
        if not part:
            return aspect.name
        if part.startswith("q") and part[1:].isdigit() and 1 <= int(part[1:]) <= len(aspect.questions):
            return f"{aspect.name} · question {part[1:]}: {aspect.questions[int(part[1:]) - 1]}"
        if part.startswith("order") and part[5:].isdigit() and 1 <= int(part[5:]) <= self.asked_orders:
            return f"{aspect.name} · order {part[5:]}"
        raise TemplateError(f"{self.source}: no part '{part}' of aspect '{aspect.name}'")

    def prompts(self, item: Item, steps: str | None = None, around: Sequence[Item] | None = None) -> dict[str, str]:
        """The prompts the judge is sent for `item`, one per call (`calls`), each named by what the item keeps of
        its answer (`part_name`: "Coherence", "Coherence · order 2"; a form asking several aspects: their names
        joined). `around` is the dataset's items (`calls`)."""
        return {", ".join(self.part_name(stored) for _, stored in call.keep): call.prompt
                for call in self.calls(item, steps, around)}

    def judged_together(self, item: Item, around: Sequence[Item]) -> int:
        """How many items one prompt of `item` judges: its group's, at its level, for a batch template; else 1."""
        return len(Neighbours(around).group(item)) if self.kind == "batch" else 1


#: What a checklist question is asked as: the judge fills in "Answer: Yes" or "Answer: No".
QUESTION_ASPECT = Aspect("Answer", 0, 1, labels=ANSWERS)


@dataclass(frozen=True)
class Call:
    """One judge call of an item: the prompt, the aspects it asks for (in form order), and
    which answers are the item's: (answer key, key stored for the item). `detail` (JSON) says
    what else shaped the prompt, e.g. the ids of its examples."""

    prompt: str
    aspects: tuple[Aspect, ...]
    keep: tuple[tuple[str, str], ...]
    detail: str = ""


class Neighbours:
    """The dataset's items, indexed for prompts that show more than their own item: the other
    items of its group (batch layouts) and scored items of other groups (examples), taken
    from `pool` when given (e.g. only the groups a search may learn from)."""

    def __init__(self, items: Sequence[Item], pool: Sequence[Item] | None = None):
        self.items = list(items)
        self.pool = list(pool) if pool is not None else None
        self._groups: dict[tuple[str, str], list[Item]] = {}
        for item in self.items:
            self._groups.setdefault(_group_key(item), []).append(item)
        self._examples: dict[tuple, list[Item]] = {}

    @property
    def pool_label(self) -> str:
        """How a restricted example pool is named in signatures: its groups' count and a hash of
        their names ("" when examples may come from every other group of the dataset)."""
        if self.pool is None:
            return ""
        groups = sorted({item.group or item.id for item in self.pool})
        return f"{len(groups)}groups-{hashlib.sha256(chr(31).join(groups).encode()).hexdigest()[:8]}"

    def group(self, item: Item) -> list[Item]:
        """The items of `item`'s group at its level, in dataset order (`item` among them)."""
        members = self._groups.get(_group_key(item), [])
        return members if any(m.id == item.id for m in members) else [*members, item]

    def examples(self, template: Template, item: Item) -> list[Item]:
        """The scored examples shown with `item`: never from its own group; the same for every
        item of a group unless they are the nearest to each item."""
        spec = template.examples
        key = (template.version, item.id if spec.select == "nearest" else _group_key(item))
        if key not in self._examples:
            self._examples[key] = choose_examples(self.items if self.pool is None else self.pool, item, template.aspects, spec,
                                                  template.source)
        return self._examples[key]


def calls(template: Template, item: Item, steps: str | None = None,
          around: Neighbours | Sequence[Item] | None = None) -> list[Call]:
    """The judge calls `item` needs under `template` (see `geval.judging.layouts`' table). `around`
    is the dataset's items, needed by batch layouts and {{examples}}."""
    template.check_asked()
    if around is None and (template.kind == "batch" or template.examples is not None):
        raise TemplateError(f"{template.source}: this template shows other items of the dataset (a batch layout or "
                            "examples); render it with the dataset's items")
    neighbours = around if isinstance(around, Neighbours) or around is None else Neighbours(around)
    fill, detail = {}, ""
    if template.examples is not None:
        chosen = neighbours.examples(template, item)
        fill[EXAMPLES] = render_examples(chosen, template.examples.text or default_example_text(template.placeholders),
                                         template.aspects)
        detail = json.dumps({"examples": [example.id for example in chosen]})
    if template.kind == "checklist":
        return [Call(template.render(item, steps, aspect, question=question, **fill), (QUESTION_ASPECT,),
                     ((QUESTION_ASPECT.key, part_key(aspect, f"q{number}")),), detail)
                for aspect in template.aspects for number, question in enumerate(aspect.questions, 1)]
    if template.kind == pairwise.KIND:  # each aspect in both orders: order 2 shows the pair's sides swapped
        asked: dict[tuple[str, str], Call] = {}  # a pair whose two sides read alike is one prompt: asked once
        for aspect in template.aspects:
            for order in pairwise.ORDERS:
                prompt = template.render(item, steps, aspect, **fill, **pairwise.fill(item, order))
                keep = (aspect.key, part_key(aspect, f"order{order}"))
                found = asked.get((prompt, aspect.key))
                asked[(prompt, aspect.key)] = Call(prompt, (aspect,), (*(found.keep if found else ()), keep), detail)
        return list(asked.values())
    if template.kind == "batch":
        members = neighbours.group(item)
        result = []
        for order in range(1, template.orders + 1):  # order by order: the calls of one order share all but the aspect
            ordered = in_order(members, order)
            responses = "\n\n".join(f"Response {n}:\n{m.response}" for n, m in enumerate(ordered, 1))
            for aspect in template.aspects:
                asked = tuple(Aspect(f"Response {n}", aspect.min, aspect.max) for n in range(1, len(members) + 1))
                line = asked[[m.id for m in ordered].index(item.id)].key
                result.append(Call(template.render(item, steps, aspect, responses=responses, **fill), asked,
                                   ((line, part_key(aspect, f"order{order}")),), detail))
        return result
    if template.per_aspect:
        return [Call(template.render(item, steps, aspect, **fill), (aspect,), ((aspect.key, aspect.key),), detail)
                for aspect in template.aspects]
    return [Call(template.render(item, steps, **fill), template.aspects,
                 tuple((a.key, a.key) for a in template.aspects), detail)]


def in_order(members: list[Item], order: int) -> list[Item]:
    """A batch's items in order `order`: 1 as given, 2 reversed, later ones shuffled (seeded by `order`)."""
    if order == 1:
        return list(members)
    if order == 2:
        return list(reversed(members))
    shuffled = list(members)
    random.Random(order).shuffle(shuffled)
    return shuffled


def _group_key(item: Item) -> tuple[str, str]:
    return item.group or item.id, item.level


#: The fixes a missing placeholder's message names, as the Data page and the CLI call them.
SET_SUMMARY_LEVEL = "set the level to summary when loading the file (the Data page's Level; CLI: --map level=summary)"
GROUNDING_TEMPLATES = {"fact": "a fact (one with {{fact}})", "persona": "a persona (one with {{persona}})",
                       "document": "summaries (one with {{document}})"}


def _map_grounding(what: str) -> str:
    return f"map the column that holds {what} to grounding when loading the file (the Data page's Grounding; " \
           "CLI: --map grounding=COLUMN)"


def summary_shaped(item: Item) -> bool:
    """Whether `item` reads as a summary loaded at another level: a grounding that is no persona
    and no context (a table of documents and summaries read as dialogue turns)."""
    return item.level != "summary" and not item.context and item.grounding_kind == "fact"


def empty_because(item: Item, name: str, has: Sequence[str] = ()) -> str:
    """Why `item` has no text for the placeholder `name`, and the fix that applies to it, from
    the item's shape (": ..."): e.g. a summary loaded at the turn level is told to set the level,
    a dialogue turn with a fact to pick a template written for dialogues. `has`: the template's
    placeholders (one that shows the item's grounding already: remove `name`)."""
    kind, level = item.grounding_kind, item.level
    if name == "document":
        if level == "summary":
            return f": the summary has no source document; {_map_grounding('the source document')}"
        if summary_shaped(item):
            return (f": read at the {level} level, where a grounding is a fact; only a summary's grounding is a "
                    f"document: {SET_SUMMARY_LEVEL}")
        if kind or item.context:
            read = "a whole dialogue" if level == "dialogue" else "a dialogue turn"
            return (f": {read} {f'with a {kind}' if kind else 'without a grounding'}, not a summary of a document; "
                    "pick a template written for dialogues")
        return f": no source document; {_map_grounding('the source document')}, and {SET_SUMMARY_LEVEL}"
    if name in GROUNDING_TEMPLATES:  # fact or persona
        if kind:  # a {{persona}} asked of another grounding ({{fact}} takes any)
            shown = next((f"{{{{{other}}}}}" for other in ("fact", kind) if other in has and other != name), "")
            fix = (f"remove {{{{{name}}}}}: the template's {shown} shows this grounding already" if shown else
                   f"pick a template written for {GROUNDING_TEMPLATES[kind]}")
            return f": its grounding is a {kind}, not a persona (lines starting '{PERSONA_LINE}'); {fix}"
        return (f": no grounding (a fact, persona or document); pick a template without {{{{{name}}}}}, or, if the "
                f"file has one, {_map_grounding('it')}")
    if name in ("response", "summary"):
        if level == "dialogue":
            return (": a whole dialogue with no separate response; pick a dialogue-level template "
                    "(one with {{dialogue}})")
        return f": its {name} is empty; fill it in the file, or leave the row out"
    return "; remove it from the template or pick a dataset that has it"


def template_hash(text: str) -> str:
    """The version of a template text: 12 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def parse_template(text: str, source: str = "<text>", check_form: bool = True) -> Template:
    """Parse and validate a template text; errors name the source and line. `check_form=False`
    reads back a version stored before forms were checked (`_check_form`) as it was scored."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "+++":
        raise TemplateError(f"{source}:1: a template starts with a '+++' line, then a TOML header, then '+++' (e.g. "
                            "prompts/response-overall.txt)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        raise TemplateError(f"{source}: the header is not closed by a second '+++' line") from None
    try:  # the empty first line keeps TOML's line numbers equal to the file's
        header = tomllib.loads("\n" + "\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError as exc:
        raise TemplateError(f"{source}: bad header: {exc}") from None
    except RecursionError:
        raise TemplateError(f"{source}: bad header: nested too deeply to read") from None
    unknown = sorted(set(header) - HEADER_KEYS)
    if unknown:
        raise TemplateError(
            f"{source}: unknown header key(s) {', '.join(map(shown, unknown))}; known: {', '.join(sorted(HEADER_KEYS))}"
        )
    rest = "\n".join(lines[end + 1 :])
    body = rest.strip("\n")
    leading = len(rest) - len(rest.lstrip("\n"))  # blank lines stripped above still count in line numbers
    _check_placeholders(body, source, body_offset=end + 2 + leading)
    if check_form:  # a version stored before braces were checked is read back as it was scored
        _check_braces(body, source, body_offset=end + 2 + leading)
    template = Template(
        name=_text(header, "name", source, required=True),
        task=_text(header, "task", source),
        criteria=_text(header, "criteria", source),
        aspects=_aspects(header.get("aspects"), source, asked=header.get("kind") != "imported",
                         pairs=header.get("kind") == pairwise.KIND),
        steps=_text(header, "steps", source),
        body=body,
        text=text,
        source=source,
        level=_text(header, "level", source),
        dataset=_text(header, "dataset", source),
        kind=_text(header, "kind", source) or "form",
        orders=_orders(header, source),
        examples=_examples(header.get("examples"), source),
    )
    if STEPS in template.placeholders and not template.steps:
        raise TemplateError(f"{source}: the body uses {{{{steps}}}} but the header has no steps (write them, or steps = \"auto\")")
    _check_kind(template)
    if check_form:
        _check_form(template, body_offset=end + 2 + leading)
    return template


def _check_kind(template: Template) -> None:
    """The body and header fit the template's kind: {{question}} and questions for a checklist,
    {{responses}} and {{aspect}} for a batch, {{examples}} with an [examples] table."""
    source, used = template.source, set(template.placeholders)
    if template.kind not in KINDS:
        raise TemplateError(f"{source}: kind {shown(repr(template.kind))} is unknown; use one of {', '.join(KINDS)}")
    missing = sorted({"checklist": {QUESTION}, "batch": {RESPONSES, ASPECT}}.get(template.kind, set()) - used)
    if missing:
        raise TemplateError(f"{source}: kind = \"{template.kind}\" needs {{{{{missing[0]}}}}} in the body")
    for name, kind in ((QUESTION, "checklist"), (RESPONSES, "batch")):
        if name in used and template.kind != kind:
            raise TemplateError(f"{source}: {{{{{name}}}}} belongs to kind = \"{kind}\"; set it in the header")
    asked = [a.name for a in template.aspects if a.questions]
    if template.kind == "checklist" and len(asked) < len(template.aspects):
        missing = next(a.name for a in template.aspects if not a.questions)
        raise TemplateError(f"{source}: aspect '{missing}' has no questions = [...]; a checklist asks each aspect's questions")
    if template.kind == pairwise.KIND:
        _check_pairwise(template)
    elif template.kind != "imported" and any(a.categories for a in template.aspects):
        raise TemplateError(f"{source}: categories are for the scores of a judge imported from a file "
                            "(kind = \"imported\"); a judge asked by a prompt answers on a scale of digits")
    if template.kind != "checklist" and asked:
        raise TemplateError(f"{source}: aspect '{asked[0]}' has questions, which only a kind = \"checklist\" template asks")
    if template.orders != 1 and template.kind != "batch":
        raise TemplateError(f"{source}: orders = {template.orders} is for kind = \"batch\" only")
    if (EXAMPLES in used) != (template.examples is not None):
        raise TemplateError(f"{source}: {{{{examples}}}} in the body and an [examples] table (k, select, seed) in the "
                            "header go together; add the missing one")


def _check_pairwise(template: Template) -> None:
    """A pairwise body shows both sides of a pair, and asks one aspect per prompt."""
    used = set(template.placeholders)
    if not any(set(names) <= used for names in pairwise.SIDES):
        raise TemplateError(f"{template.source}: kind = \"pairwise\" needs {{{{response_a}}}} and {{{{response_b}}}} "
                            "(or {{conversation_a}} and {{conversation_b}}) in the body")
    if len(template.aspects) > 1 and ASPECT not in used:
        raise TemplateError(f"{template.source}: a pairwise template of several aspects asks one per prompt: name "
                            "{{aspect}} in the body")


def form_label(line: str) -> str | None:
    """The label a bulleted form line asks for ("- Fluency (1-3):" -> "Fluency"), else None."""
    match = FORM_LINE.match(line)
    return match.group("label").strip() if match and match.group("bullet") else None


def _check_form(template: Template, body_offset: int) -> None:
    """A form asks for its aspects and for no other: each bulleted form line names one of them
    (or {{aspect}}), and a body without {{aspect}} has a form line for each. The judge's answer
    is read by these names, so a form asking for another would be stored under the wrong one."""
    if template.kind != "form":
        return
    names = {aspect.key: aspect.name for aspect in template.aspects}
    asked = set()
    for match in FORM_LINE.finditer(template.body):
        label = match.group("label").strip()
        if label.lower() in names:
            asked.add(label.lower())
        elif match.group("bullet") and not PLACEHOLDER.search(label):
            line = body_offset + template.body.count("\n", 0, match.start())
            raise TemplateError(f"{template.source}:{line}: the form asks for '{shown(label)}', which is not one of "
                                f"its aspects ({', '.join(names.values())})")
    missing = [name for key, name in names.items() if key not in asked and not _answer_line(template.body, name)]
    if missing and not template.per_aspect:
        line = body_offset + template.body.count("\n")  # the body's last line: where a form ends it
        raise TemplateError(f"{template.source}:{line}: no form line for aspect '{missing[0]}' "
                            f"(e.g. '- {missing[0]}:' at the end of the body)")


def _answer_line(body: str, name: str) -> bool:
    """Whether a line of `body` starts with the aspect's name and a colon, with text after it too
    ("Naturalness: <score>", an answer's shape written out): it asks for that aspect."""
    return re.search(rf"^[ \t]*(?:[-*•][ \t]*)?[*_`]*{re.escape(name)}[*_`]*[ \t]*(?:\([^()\n]*\))?[ \t]*:", body,
                     re.MULTILINE | re.IGNORECASE) is not None


def load_template(path: str | Path) -> Template:
    """Read and parse a template file."""
    path = Path(path)
    text = read_utf8(path, TemplateError, "no such template file")
    return parse_template(text, source=str(path))


def list_templates(folder: str | Path) -> list[Template]:
    """Every *.txt template in `folder`, sorted by name."""
    return sorted((load_template(p) for p in Path(folder).glob("*.txt")), key=lambda t: t.name)


def resolve_template(name_or_path: str) -> Template:
    """A template from a file path, or by its name (or file stem) in the prompts folder."""
    path = Path(name_or_path)
    if path.is_file():
        return load_template(path)
    candidate = PROMPTS_DIR / f"{name_or_path}.txt"
    if candidate.is_file():
        return load_template(candidate)
    for template in list_templates(PROMPTS_DIR):
        if template.name == name_or_path:
            return template
    names = ", ".join(t.name for t in list_templates(PROMPTS_DIR))
    raise TemplateError(f"{name_or_path}: no such template file or name; known: {names}")


def diff_templates(old: Template, new: Template) -> str:
    """A unified diff of two template texts, labelled with their versions."""
    return "".join(
        difflib.unified_diff(
            old.text.splitlines(keepends=True),
            new.text.splitlines(keepends=True),
            fromfile=old.label,
            tofile=new.label,
        )
    )


def _check_placeholders(body: str, source: str, body_offset: int) -> None:
    """Every {{name}} of the body is known; the whole body is searched, as `render` does, so a
    placeholder broken over two lines is caught too."""
    for match in PLACEHOLDER.finditer(body):
        name = match.group(1).lower()
        if name not in KNOWN:
            number = body_offset + body.count("\n", 0, match.start())
            near = difflib.get_close_matches("".join(name.split()), list(KNOWN), n=1, cutoff=0.7)
            raise TemplateError(
                f"{source}:{number}: unknown placeholder {shown(match.group(0))}; known: "
                + ", ".join("{{" + k + "}}" for k in KNOWN) + (f"; did you mean {{{{{near[0]}}}}}?" if near else "")
            )


def _check_braces(body: str, source: str, body_offset: int) -> None:
    """No placeholder's braces are left open: "{{response" was taken as text, so every item got the same prompt."""
    left = PLACEHOLDER.sub(lambda m: " " * len(m.group(0)), body)  # what is not a placeholder, in place
    broken = re.search(r"\{\{|\}\}", left)
    if broken:
        number = body_offset + body.count("\n", 0, broken.start())
        raise TemplateError(f"{source}:{number}: a placeholder's braces are not closed ({shown(body[broken.start():][:30])}); "
                            "write it as {{name}}, e.g. {{response}}")
    single = re.search(r"\{\s*(" + "|".join(KNOWN) + r")\s*\}", left, re.IGNORECASE)  # "{document}" was sent as it
    if single:                                                                     # stands: every prompt lost the text
        number = body_offset + body.count("\n", 0, single.start())
        name = single.group(1).lower()
        raise TemplateError(f"{source}:{number}: {shown(single.group(0))} has single braces, so it would be sent as "
                            f"written, not replaced by the {name}; write it as {{{{{name}}}}}")


def _text(header: dict, key: str, source: str, required: bool = False) -> str:
    value = header.get(key, "")
    if not isinstance(value, str):
        raise TemplateError(f"{source}: header '{key}' should be text")
    if required and not value.strip():
        raise TemplateError(f"{source}: the header needs {key} = \"...\"")
    return value


def _orders(header: dict, source: str) -> int:
    value = header.get("orders", 1)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 8:
        raise TemplateError(f"{source}: orders = {shown(value, 20)} should be a whole number from 1 to 8")
    return value


def _examples(value: object, source: str) -> Examples | None:
    if value is None:
        return None
    known = {"k", "select", "seed", "text"}
    if not isinstance(value, dict) or not {"k"} <= value.keys() or value.keys() - known:
        raise TemplateError(f"{source}: [examples] takes k (how many), and optionally select, seed and text")
    k, select, seed, text = value["k"], value.get("select", "stratified"), value.get("seed", 0), value.get("text", "")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 20:
        raise TemplateError(f"{source}: [examples] k = {shown(k, 20)} should be a whole number from 1 to 20")
    if select not in Examples.CHOICES:
        raise TemplateError(f"{source}: [examples] select = {shown(repr(select), 30)}; use one of {', '.join(Examples.CHOICES)}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not isinstance(text, str):
        raise TemplateError(f"{source}: [examples] seed should be a whole number and text a string")
    for match in PLACEHOLDER.finditer(text):
        if match.group(1).lower() not in {*PLACEHOLDERS, "n", "scores"}:
            raise TemplateError(f"{source}: [examples] text has unknown placeholder {shown(match.group(0))}; known: "
                                + ", ".join("{{" + k + "}}" for k in (*PLACEHOLDERS, "n", "scores")))
    return Examples(k, select, seed, text)


def _aspects(value: object, source: str, asked: bool = True, pairs: bool = False) -> tuple[Aspect, ...]:
    """The header's [[aspects]]; `asked`: False for a template never asked (kind "imported"), whose
    scales may be any whole numbers; of a pairwise template (`pairs`), each answered A, B or tie (no min
    nor max)."""
    if not isinstance(value, list) or not value:
        raise TemplateError(f"{source}: the header needs at least one [[aspects]] table with name, min and max")
    aspects = []
    for index, spec in enumerate(value):
        if pairs and isinstance(spec, dict):
            aspects.append(_pairwise_aspect(spec, index, source))
            continue
        if not isinstance(spec, dict) or not {"name", "min", "max"} <= spec.keys():
            raise TemplateError(f"{source}: aspect {index + 1} needs name, min and max")
        if not one_line(spec["name"]):
            raise TemplateError(f"{source}: aspect {index + 1} name {shown(repr(spec['name']))} should be one line of text")
        unknown = sorted(set(spec) - {"name", "min", "max", "human", "questions", "categories"})
        if unknown:
            raise TemplateError(f"{source}: aspect {index + 1} has unknown key(s) {', '.join(map(shown, unknown))}; "
                                "known: name, min, max, human, questions, categories")
        questions = spec.get("questions", [])
        if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
            raise TemplateError(f"{source}: aspect {index + 1} questions should be a list of texts")
        try:
            aspects.append(Aspect(spec["name"], spec["min"], spec["max"], spec.get("human", ""),
                                  questions=tuple(q.strip() for q in questions),
                                  categories=tuple(map(str, spec.get("categories", ()))), asked=asked))
        except TemplateError as exc:
            raise TemplateError(f"{source}: {exc}") from None
    if len({a.key for a in aspects}) != len(aspects):
        raise TemplateError(f"{source}: two aspects share a name")
    return tuple(aspects)


def _pairwise_aspect(spec: dict, index: int, source: str) -> Aspect:
    """A pairwise template's aspect: a name and optionally the human aspect it is compared with."""
    unknown = sorted(set(spec) - {"name", "human"})
    if unknown:
        raise TemplateError(f"{source}: aspect {index + 1} has key(s) {', '.join(map(shown, unknown))}; a pairwise "
                            "aspect is answered A, B or tie: give only name and human")
    if not one_line(spec.get("name")):
        raise TemplateError(f"{source}: aspect {index + 1} needs a name of one line of text")
    try:
        return pairwise.aspect(spec["name"], spec.get("human", ""))
    except TemplateError as exc:
        raise TemplateError(f"{source}: {exc}") from None
