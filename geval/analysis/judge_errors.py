"""How a scored (template version, judge) combination errs against people, aspect by aspect: on a
categorical aspect its labels (`geval.analysis.label_errors`); on a score, its scores read on the
people's scale (`geval.analysis.score_errors`) and, when people give whole numbers, those scores
rounded to the scale's points and read as labels too (quadratic-weighted kappa). Read on the items
`geval.agree` reads: without the groups a prompt search chose the template version on.

A judge asked on another scale than the people's is mapped linearly onto theirs first, as the
alternative annotator test does (`geval.analysis.scales`), and `scale` says so, and which scale is
theirs (declared, or with none declared which reading was taken)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from geval.analysis.agreement import human_aspect_for, judge_scores, resolve
from geval.analysis.categorical import as_labels
from geval.analysis.disagreement import human_ranges
from geval.analysis.held_out import held_out, searched_versions
from geval.analysis.label_errors import LabelErrors, label_errors
from geval.analysis.scales import read_on_people_scale
from geval.analysis.score_errors import ScoreErrors, nearest_point, score_errors
from geval.data.columns import columns as item_columns
from geval.data.labels import MAJORITY_OF
from geval.errors import StoreError
from geval.store import Store


@dataclass
class AspectErrors:
    """How one judge aspect errs against the human aspect it is compared with: `labels` (categories,
    or a whole-number scale's points), `scores` (a score; None on categories), how its scores were put
    on the people's scale (`scale`, "" when they are on it already), notes, and what its labels are read
    against (`against`: the majority of the human side's labels, `geval.data.labels.MAJORITY_OF`)."""

    aspect: str
    human: str
    judge: str
    labels: LabelErrors | None
    scores: ScoreErrors | None
    scale: str = ""
    notes: list[str] = field(default_factory=list)
    against: str = MAJORITY_OF["people"]


def judge_errors(store: Store, dataset: str, combo: tuple[str | None, str | None] | None = None,
                 variant: str = "wmean", aspects: list[str] | None = None) -> list[AspectErrors]:
    """How the combination (default: the most recently scored) errs on each judge aspect compared
    with a human aspect (only those of `aspects`, judge or human names, when given), its scores read
    in `variant`. Raises StoreError when nothing is scored with it."""
    version, signature = resolve(store, dataset, combo)
    items, said = held_out(store.items(dataset), [version], searched_versions(store, dataset))
    scored = judge_scores(store, dataset, (version, signature), variant, items=items)
    combos = store.combos(dataset)
    match = combos[(combos["template_version"] == version) & (combos["signature"] == signature)]
    judge = str(match["label"].iloc[0]) if len(match) else version
    human_aspects = item_columns(items).human_aspects
    categories, ranges, declared = store.categories(dataset), human_ranges(items), store.scales(dataset)
    against = MAJORITY_OF[store.human_side(dataset)]
    found = []
    for key in scored.scores.columns:
        human = human_aspect_for(scored.template, key, human_aspects)
        name = scored.template.aspect(key).name
        if human is None or (aspects and not {name, key, human} & set(aspects)):
            continue
        values = scored.scores[key].astype(float)
        chosen = item_columns(items).matched(values, human)[1]  # an item's place: one per id
        if not len(chosen) or (chosen == chosen[0]).all():
            continue  # fewer than two items with both scores: nothing to read
        notes = [said] if said else []
        if human in categories:
            labels = as_labels(values, scored.scales.get(key), len(categories[human]))  # the nearest category
            found.append(AspectErrors(name, human, judge, label_errors(labels, items, human, categories[human]),
                                      None, notes=notes, against=against))
            continue
        if human not in ranges:
            continue
        mapped, scale, how, theirs = read_on_people_scale(values, scored.scales[key], human, declared.get(human),
                                                          ranges[human], dataset=dataset)
        scores = score_errors(mapped, items, human, scale)
        scores.scale_named = (f"their {scale[0]:g}-{scale[1]:g} scale" if theirs else
                              f"the judge's {scale[0]:g}-{scale[1]:g} scale (none is declared for theirs)")
        labels = None
        if len(scores.shares):  # whole numbers on a scale of a few points: read as labels too
            points = scores.shares["point"].tolist()
            rounded = pd.Series(nearest_point(mapped.to_numpy(float), scores.shares["point"].to_numpy(float)),
                                index=mapped.index)  # an array: numpy's look for one in a Series hashes its million ids
            labels = label_errors(rounded, items, human, tuple(f"{p:g}" for p in points),
                                  "quadratic" if len(points) > 2 else "none", scale[0])
        found.append(AspectErrors(name, human, judge, labels, scores, how, notes, against))
    if not found:
        raise StoreError(f"no judge aspect of {scored.template.label} has scores on two items or more that people "
                         f"scored in '{dataset}': score more items, or label those it scored")
    return found
