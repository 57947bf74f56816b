"""What a run asks the store before it calls a judge: which items are answered already (by
id, nothing rendered), which calls the cache holds, and the signatures of the settings met."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from geval.data.items import Item
from geval.judging.aspects import Aspect
from geval.judging.judgment import Judge, Judgment, accepted_settings, cache_key
from geval.judging.templates import Call, Neighbours, Template
from geval.store import Store
from geval.store.records import judgment_id
from geval.version import __version__

#: What to do about answers no score could be read from: they are cached (a judge is never paid
#: twice for one prompt), so only another prompt or judge asks again.
ASK_AGAIN = "change the template's form or scale, or the judge, to ask again"


def signature(settings: dict, template: Template, aspects: list[Aspect], pool: str = "") -> tuple[str, dict]:
    """A sacrebleu-style signature string and its JSON form (never parse the string back).

    `settings` is the judge's own state (backend, model, weights, sampling); the template
    name and version, the scale of each aspect, how the judge is asked (a checklist's questions
    per aspect, a batch's orders, how few-shot examples are chosen; the ids of an item's
    examples are stored with its judgments) and the package version are added here.
    """
    asked = {}  # only for templates that are not plain forms, so that a form's signature stays as it was
    if template.kind == "checklist":
        asked["layout"] = "checklist:" + ",".join(str(len(a.questions)) for a in aspects) + "q"
    if template.kind == "batch":
        asked["layout"] = f"batch:orders={template.orders}"
    if template.examples:
        asked["examples"] = template.examples.signature + (f",pool:{pool}" if pool else "")
    fields = {
        **settings,
        "template": template.label,
        "scale": ",".join(scale_text(a.key, f"{a.min}-{a.max}", a.categories) for a in aspects),
        **asked,
        "agg": "mean-p-yes" if template.kind == "checklist" else "wmean",
        "version": __version__,
    }
    text = "|".join(f"{k}:{v}" for k, v in fields.items() if v not in (None, ""))
    return text, fields


def scale_text(key: str, scale: str, categories: Iterable[str] = ()) -> str:
    """One aspect's scale as a signature names it: "naturalness=1-3"; a categorical aspect's says it
    is categorical and names its categories in order, its scores being their indexes
    ("label=categorical:model_a/model_b/tie")."""
    categories = list(categories)
    return f"{key}=categorical:{'/'.join(categories)}" if categories else f"{key}={scale}"


class Signer:
    """The signature (string, JSON text) of each judge settings a run meets, made once each.
    `pool` names a restricted pool of few-shot examples (`Neighbours.pool_label`)."""

    def __init__(self, template: Template, pool: str = ""):
        self.template, self.aspects, self.pool = template, list(template.aspects), pool
        self._made: dict[str, tuple[str, str]] = {}

    def __call__(self, settings: dict) -> tuple[str, str]:
        key = json.dumps(settings, sort_keys=True)
        if key not in self._made:
            text, fields = signature(settings, self.template, self.aspects, self.pool)
            self._made[key] = (text, json.dumps(fields))
        return self._made[key]

    def all(self, settings: list[dict]) -> list[str]:
        """The signature strings of several settings (those an "auto" judge accepts)."""
        return [self(s)[0] for s in settings]


def cached_answers(store: Store, judge: Judge, calls: list[Call]) -> list[tuple[str, Judgment] | None]:
    """For each call, (cache key, answer) when the cache holds an answer under any settings
    the judge accepts (in its order), else None. One query."""
    accepted = accepted_settings(judge)
    keys = [[cache_key(settings, call.prompt, list(call.aspects)) for settings in accepted] for call in calls]
    cached = store.cached_calls([key for options in keys for key in options])
    return [next(((key, cached[key]) for key in options if key in cached), None) for options in keys]


def answered_items(store: Store, items: list[Item], template: Template, signatures: list[str],
                  size: int = 500) -> Iterator[tuple[Item, list[str] | None]]:
    """Each item, with why each of its unscored aspects has no score (an empty list when all
    are scored) when all are answered already by this template version and one of
    `signatures` (a rerun: nothing to render), else None. One query per `size` items. With
    generated steps the prompt also depends on the steps stored now, so those items always
    go through their cache keys."""
    for start in range(0, len(items), size):
        chunk = items[start:start + size]
        if template.needs_generated_steps:
            yield from ((item, None) for item in chunk)
            continue
        ids = {item.id: [[judgment_id(item.id, template.version, s, a.key) for s in signatures]
                         for a in template.aspects] for item in chunk}
        found = store.answered([i for per_aspect in ids.values() for options in per_aspect for i in options])
        for item in chunk:
            answers = [next((found[i] for i in options if i in found), None) for options in ids[item.id]]
            yield item, None if None in answers else [reason for status, reason in answers if status == "unscored"]


def neighbours(store: Store, template: Template, dataset: str, items: list[Item],
               pool: list[Item] | None = None) -> Neighbours | None:
    """The dataset's items (as stored, else `items`) indexed for a template that shows other
    items than its own (a batch layout, few-shot examples from `pool`, default: every other
    group); None for one that does not."""
    if template.kind != "batch" and template.examples is None:
        return None
    return Neighbours(store.items(dataset) or items, pool if template.examples is not None else None)


def by_group(items: Iterable[Item]) -> list[Item]:
    """Items of the same group next to each other, groups in first-seen order.

    A list that already is (datasets are stored dialogue by dialogue) is returned as it is,
    without a copy.
    """
    items = items if isinstance(items, list) else list(items)
    seen: set[str] = set()
    previous = None
    for item in items:
        if item.group != previous:
            if item.group in seen:
                break
            seen.add(item.group)
            previous = item.group
    else:
        return items
    order: dict[str, int] = {}
    for item in items:
        order.setdefault(item.group, len(order))
    return sorted(items, key=lambda item: order[item.group])
