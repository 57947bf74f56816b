"""Few-shot examples: scored items of *other* groups (never the judged item's own dialogue or
document), shown in {{examples}} with the people's mean scores.

| select | the k examples |
|---|---|
| `random` | k groups drawn at random, one item of each |
| `stratified` | spread across the human scale: the items at k evenly spaced ranks of their mean human score (0-1 over the template's aspects), one per group |
| `nearest` | the k items whose scored text (response, summary) is most similar to the judged item's, one per group: cosine of all-MiniLM-L6-v2 sentence vectors (`geval.judging.encoder`); the nearest shown last, next to the judged item |

Random and stratified choices depend on the seed and the judged item's group only, so every
item of a dialogue sees the same examples (and a judge that reuses a shared prefix evaluates
them once per dialogue). Nearest examples differ from item to item: such a judge reads them
again for each item, which costs time.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

from geval.data.items import PLACEHOLDERS, Item
from geval.errors import TemplateError
from geval.judging.encoder import minilm
from geval.judging.aspects import PLACEHOLDER, RESPONSES, Aspect, Examples

#: How the default example text names each part of an item.
TITLES = {"context": "Conversation History", "dialogue": "Dialogue", "fact": "Fact", "persona": "Persona",
          "document": "Document", "response": "Response", "summary": "Summary"}


#: Each distinct scored text's sentence vector, encoded once per process (the model's weights are
#: fixed and checked, so a vector never goes stale): a search trying a nearest template, run after
#: run, encodes its example pool once.
_VECTORS: dict[str, np.ndarray] = {}


def sentence_vectors(items: Sequence[Item]) -> np.ndarray:
    """[items, 384]: one L2-normalized vector of each item's scored text (the model loads on
    first use)."""
    texts = [item.scored_text for item in items]
    new = [text for text in dict.fromkeys(texts) if text not in _VECTORS]
    if new:
        _VECTORS.update(zip(new, minilm().sentence_vectors(new)))
    return np.array([_VECTORS[text] for text in texts])


def choose_examples(items: Sequence[Item], item: Item, aspects: Sequence[Aspect], spec: Examples,
                    source: str) -> list[Item]:
    """`spec.k` scored items of other groups than `item`'s, at its level, one per group (see the
    module's table).
    Raises TemplateError (naming the template `source`) when fewer than k groups have human
    scores for every one of `aspects`."""
    own = item.group or item.id
    pool = [other for other in items if (other.group or other.id) != own and other.level == item.level
            and all(math.isfinite(human_score(other, a)) for a in aspects)]
    groups = list(dict.fromkeys(other.group or other.id for other in pool))
    if len(groups) < spec.k:
        raise TemplateError(f"{source}: [examples] k = {spec.k}, but only {len(groups)} other groups have "
                            f"human scores for {', '.join(a.name for a in aspects)}; lower k")
    if spec.select == "nearest":
        return _nearest(pool, item, spec.k)
    rng = np.random.default_rng([spec.seed, int(hashlib.sha256(own.encode()).hexdigest()[:12], 16)])
    if spec.select == "random":
        chosen_groups = set(rng.choice(groups, spec.k, replace=False).tolist())
        members: dict[str, list[Item]] = {}
        for other in pool:
            if (other.group or other.id) in chosen_groups:
                members.setdefault(other.group or other.id, []).append(other)
        return [group[int(rng.integers(len(group)))] for group in members.values()]
    # stratified
    ranked = sorted(pool, key=lambda other: (_scaled_mean(other, aspects), other.id))
    chosen, used = [], set()
    for target in np.linspace(0, len(ranked) - 1, spec.k):
        # the free item of an unused group nearest to this rank
        best = min((i for i, other in enumerate(ranked) if (other.group or other.id) not in used),
                   key=lambda i: (abs(i - target), i))
        chosen.append(ranked[best])
        used.add(ranked[best].group or ranked[best].id)
    return [chosen[i] for i in rng.permutation(len(chosen))]  # not in the order of their scores


def _nearest(pool: list[Item], item: Item, k: int) -> list[Item]:
    similarity = sentence_vectors(pool) @ sentence_vectors([item])[0]
    chosen, used = [], set()
    for index in sorted(range(len(pool)), key=lambda i: (-similarity[i], pool[i].id)):
        group = pool[index].group or pool[index].id
        if group not in used:
            chosen.append(pool[index])
            used.add(group)
            if len(chosen) == k:
                break
    return chosen[::-1]  # the nearest last, next to the judged item


def render_examples(examples: list[Item], text: str, aspects: Sequence[Aspect]) -> str:
    """The text of {{examples}}: each example written by `text` (the template's example text, or
    `default_example_text`), its {{scores}} the people's mean scores of `aspects`."""
    blocks = []
    for number, example in enumerate(examples, 1):
        values = {**example.fields(), "n": str(number), "scores": human_scores_line(aspects, example)}
        blocks.append(PLACEHOLDER.sub(lambda m: values[m.group(1).lower()], text).strip())
    return "\n\n".join(blocks)


def default_example_text(placeholders: Sequence[str]) -> str:
    """"Example {{n}}", each item part a body of these `placeholders` shows (titled), then {{scores}}."""
    used = [name for name in placeholders if name in PLACEHOLDERS]
    if RESPONSES in placeholders and "response" not in used:
        used.append("response")
    shown = [name for name in used if not (name == "context" and "dialogue" in used)]
    return "Example {{n}}\n\n" + "\n\n".join(f"{TITLES[name]}:\n{{{{{name}}}}}" for name in shown) + "\n\n{{scores}}"


def human_scores_line(aspects: Sequence[Aspect], item: Item) -> str:
    """"Scores given by people (mean): Naturalness: 2.7, Coherence: 3.0"."""
    return "Scores given by people (mean): " + ", ".join(
        f"{aspect.name}: {human_score(item, aspect):.1f}" for aspect in aspects)


def human_score(item: Item, aspect: Aspect) -> float:
    """The item's mean human score for the aspect (its `human` name, else its own; any case), NaN if none."""
    wanted = (aspect.human or aspect.name).lower()
    name = next((h for h in item.human if h.lower() == wanted), None)
    return item.human_mean(name) if name else math.nan


def _scaled_mean(item: Item, aspects: Sequence[Aspect]) -> float:
    return float(np.mean([(human_score(item, a) - a.min) / (a.max - a.min) for a in aspects]))
