"""How a template asks the judge (its `kind`): the calls an item needs, and how their answers
become the item's scores.

| kind | calls per item | stored per item |
|---|---|---|
| `form` | one per aspect (the body names {{aspect}}) or one for all | each aspect's answer |
| `checklist` | one per question of each aspect, answered Yes or No | each question's P(yes) as "aspect#qN", and the aspect: min + (max - min) x the mean P(yes) of its questions |
| `batch` | one per aspect and order: every item of the group in {{responses}}, each read in turn ("Response 1: ...") | the item's line of each order as "aspect#orderN", and the aspect: the mean of the orders' distributions |

A batch call is the same prompt for every item of its group, so the group's first item pays
for it and the others are served from the cache. Order 1 is the dataset's order, order 2 the
reverse, later ones shuffles seeded by their number.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from geval.data.items import Item
from geval.errors import TemplateError
from geval.judging.examples import choose_examples, render_examples
from geval.judging.judgment import AspectScore
from geval.judging.templates import ANSWERS, EXAMPLES, PART, Aspect, Template

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
            self._examples[key] = choose_examples(self.items if self.pool is None else self.pool, item, template, spec)
        return self._examples[key]


def calls(template: Template, item: Item, steps: str | None = None,
          around: Neighbours | Sequence[Item] | None = None) -> list[Call]:
    """The judge calls `item` needs under `template` (see the module's table). `around` is the
    dataset's items, needed by batch layouts and {{examples}}."""
    template.check_asked()
    if around is None and (template.kind == "batch" or template.examples is not None):
        raise TemplateError(f"{template.source}: this template shows other items of the dataset (a batch layout or "
                            "examples); render it with the dataset's items")
    neighbours = around if isinstance(around, Neighbours) or around is None else Neighbours(around)
    fill, detail = {}, ""
    if template.examples is not None:
        chosen = neighbours.examples(template, item)
        fill[EXAMPLES] = render_examples(template, chosen)
        detail = json.dumps({"examples": [example.id for example in chosen]})
    if template.kind == "checklist":
        return [Call(template.render(item, steps, aspect, question=question, **fill), (QUESTION_ASPECT,),
                     ((QUESTION_ASPECT.key, part_key(aspect, f"q{number}")),), detail)
                for aspect in template.aspects for number, question in enumerate(aspect.questions, 1)]
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


def part_key(aspect: Aspect, part: str) -> str:
    """The storage key of a part of an aspect: "naturalness#q2", "naturalness#order1"."""
    return f"{aspect.key}{PART}{part}"


def parts(template: Template) -> dict[str, list[str]]:
    """Each aspect's part keys, for kinds whose aspects are made of parts ({} for forms)."""
    if template.kind == "checklist":
        return {a.key: [part_key(a, f"q{n}") for n in range(1, len(a.questions) + 1)] for a in template.aspects}
    if template.kind == "batch":
        return {a.key: [part_key(a, f"order{o}") for o in range(1, template.orders + 1)] for a in template.aspects}
    return {}


def part_name(template: Template, key: str) -> str:
    """How a stored key reads in tables: the aspect's name, or for a part its aspect and the
    part ("Naturalness · question 2: Is the response fluent ...?", "Naturalness · order 2").
    Raises TemplateError for a key the template does not have."""
    aspect_key, _, part = key.partition(PART)
    aspect = template.aspect(aspect_key)
    if not part:
        return aspect.name
    if part.startswith("q") and part[1:].isdigit() and 1 <= int(part[1:]) <= len(aspect.questions):
        return f"{aspect.name} · question {part[1:]}: {aspect.questions[int(part[1:]) - 1]}"
    if part.startswith("order") and part[5:].isdigit() and 1 <= int(part[5:]) <= template.orders:
        return f"{aspect.name} · order {part[5:]}"
    raise TemplateError(f"{template.source}: no part '{part}' of aspect '{aspect.name}'")


def combine(template: Template, answers: dict[str, AspectScore | None]) -> dict[str, AspectScore | None]:
    """Each aspect's score from its parts' answers (None: the part's call failed, or is missing),
    for checklists and batches; {} for forms, whose answers are the aspects' scores already.
    An aspect with a failed part is None (failed); one with an unscored part is unscored."""
    combined: dict[str, AspectScore | None] = {}
    for aspect_key, keys in parts(template).items():
        found = [answers.get(key) for key in keys]
        if any(answer is None for answer in found):
            combined[aspect_key] = None
            continue
        unscored = next((key for key, answer in zip(keys, found) if answer.score is None), None)
        if unscored is not None:
            combined[aspect_key] = AspectScore.unscored(f"{unscored} unscored: {answers[unscored].reason}")
            continue
        aspect = template.aspect(aspect_key)
        if template.kind == "checklist":
            yes = sum(answer.score for answer in found) / len(found)
            combined[aspect_key] = AspectScore(score=aspect.min + (aspect.max - aspect.min) * yes)
        else:
            mean = {s: sum(answer.distribution.get(s, 0.0) for answer in found) / len(found) for s in aspect.scale}
            combined[aspect_key] = AspectScore.from_distribution(mean)
    return combined


def _group_key(item: Item) -> tuple[str, str]:
    return item.group or item.id, item.level
