"""How a template asks the judge (its `kind`), and how the answers of its calls become the item's
scores (the calls themselves: `Template.calls`).

| kind | calls per item | stored per item |
|---|---|---|
| `form` | one per aspect (the body names {{aspect}}) or one for all | each aspect's answer |
| `checklist` | one per question of each aspect, answered Yes or No | each question's P(yes) as "aspect#qN", and the aspect: min + (max - min) x the mean P(yes) of its questions |
| `batch` | one per aspect and order: every item of the group in {{responses}}, each read in turn ("Response 1: ...") | the item's line of each order as "aspect#orderN", and the aspect: the mean of the orders' distributions |
| `pairwise` | one per aspect and order: the pair as given, then its sides swapped, answered A, B or tie | each order's answer as "aspect#order1", "#order2" (on the positions asked), and the aspect: the mean after order 2 is swapped back, its score the label (`geval.judging.pairwise`) |

A batch call is the same prompt for every item of its group, so the group's first item pays
for it and the others are served from the cache. Order 1 is the dataset's order, order 2 the
reverse, later ones shuffles seeded by their number.
"""

from __future__ import annotations

from geval.judging import pairwise
from geval.judging.aspects import part_key
from geval.judging.judgment import AspectScore
from geval.judging.templates import Template


def parts(template: Template) -> dict[str, list[str]]:
    """Each aspect's part keys, for kinds whose aspects are made of parts ({} for forms)."""
    if template.kind == "checklist":
        return {a.key: [part_key(a, f"q{n}") for n in range(1, len(a.questions) + 1)] for a in template.aspects}
    if template.kind in ("batch", pairwise.KIND):
        return {a.key: [part_key(a, f"order{o}") for o in range(1, template.asked_orders + 1)] for a in template.aspects}
    return {}


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
        if template.kind == pairwise.KIND:
            combined[aspect_key] = pairwise.combine(found)
        elif template.kind == "checklist":
            yes = sum(answer.score for answer in found) / len(found)
            combined[aspect_key] = AspectScore(score=aspect.min + (aspect.max - aspect.min) * yes)
        else:
            mean = {s: sum(answer.distribution.get(s, 0.0) for answer in found) / len(found) for s in aspect.scale}
            combined[aspect_key] = AspectScore.from_distribution(mean)
    return combined
