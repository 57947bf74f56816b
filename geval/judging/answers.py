"""Reading a score from a judge's answer: the number that answers the form's line for an
aspect, never one inside a parenthesised scale nor one labelled with another aspect's name; and
the weighted mean over sampled answers (G-EVAL with n samples, seed 001)."""

from __future__ import annotations

import os

import re
from collections import Counter

from geval.judging.judgment import AspectScore, clip
from geval.judging.aspects import Aspect

#: A score: an integer or a decimal, signed.
_NUMBER = r"(?P<value>[-+]?\d+(?:\.\d+)?)"


#: Markdown around a label ("**Coherence**", "- Coherence", "## Coherence").
_MARKUP = r"[*_`]*"


#: What may stand between a label and its score: a parenthesised scale ("(1-3)"), then a
#: separator (":", "=", a dash, "is"), then spaces, newlines or markup.
_BETWEEN = rf"{_MARKUP}\s*(?:[\(\[][^\)\]\n]*[\)\]])?{_MARKUP}\s*(?:[:=]|[-–—]|\bis\b)?[\s*_`]*"


#: Scale expressions that hold numbers but are not the answer: "(1-3)", "1-3", "1 to 3",
#: "out of 3", "/3". Removed before a lone number is looked for.
_NOT_ANSWERS = re.compile(r"[\(\[][^\)\]\n]*[\)\]]|\d+\s*(?:[-–—]|to)\s*\d+|(?:\bout of|/)\s*\d+", re.IGNORECASE)


#: Words that give a score in a sentence without a label ("I'd give it a 2", "I would rate it 2",
#: "a score of 2"), then the words that may stand before the number: the number they give is
#: the answer, whatever other numbers the sentence holds ("mentions 3 facts").
_GIVEN = re.compile(r"\b(?:give|gives|gave|giving|rate|rates|rated|rating|score|scored|grade|graded|award|assign)\b"
                    r"(?:\s+(?:it|this|that|the|response|a|an|of|as|at|with))*\s*[:=]?\s*(?=[-+]?\d)", re.IGNORECASE)


#: The label just before a score, at the start of a line or sentence: one to three words, then
#: an optional scale and a colon or "=" ("Fluency: 3", "- **Uses Knowledge** (0-1): 1").
_LABEL_BEFORE = re.compile(r"(?:^|[\n.!?;,])[\s>#*•-]*[*_`]*(?P<label>[^\W\d_]+(?:[ '-][^\W\d_]+){0,2})[*_`]*\s*"
                           r"(?:[\(\[][^\)\]\n]*[\)\]])?[*_`]*\s*[:=][\s*_`]*$")


#: Words that label a score without naming an aspect ("Score: 2", "My rating: 2", "Answer: Yes").
_GENERIC_LABELS = {"score", "rating", "rate", "grade", "answer", "result", "evaluation", "verdict", "value"}


def _value(aspect: Aspect) -> str:
    """The pattern of a score: a number, or one of the aspect's labels as a whole word."""
    if not aspect.labels:
        return _NUMBER
    return r"(?<![^\W\d_])(?P<value>" + "|".join(map(re.escape, aspect.labels)) + r")(?![^\W\d_])"


def locate_score(text: str, aspect: Aspect, single: bool) -> re.Match | None:
    """Where the score answering `aspect`'s form line is in `text` (group "value"), or None.

    The score is the first number after the aspect's label and its separator, not one inside a
    parenthesised scale: "- Coherence (1-3): 2", "**Coherence**: 2", "Coherence: 2/3" all read 2.
    When `single` (one aspect asked) an answer without the label counts too: its first number
    once scale expressions ("(1-3)", "1 to 3", "out of 3", "/3") are blanked out, e.g. "2" or
    "I would rate it 2."; a number given by a verb ("I'd give it a 2", "rated 2") before any
    other ("The response mentions 3 facts. I'd give it a 2." reads 2). Blanking keeps every other
    character where it was, so the match's offsets are offsets in `text`. A labelled scale
    (No/Yes) reads its labels instead of numbers.
    """
    value = _value(aspect)
    label = re.compile(rf"(?<![^\W\d_]){re.escape(aspect.name)}{_BETWEEN}{value}(?![\d.]*\s*[-–—]\s*\d)",
                       re.IGNORECASE)
    found = label.search(text)
    if found is not None or not single:
        return found
    blanked = _NOT_ANSWERS.sub(lambda m: " " * len(m.group(0)), text)
    given = None if aspect.labels else _GIVEN.search(blanked)
    return re.compile(value, re.IGNORECASE).search(blanked, given.end() if given else 0)


def other_label(text: str, found: re.Match, aspect: Aspect) -> str | None:
    """The label written just before the score `found`, when it names something other than
    `aspect` ("Fluency: 3" read for Naturalness); None for no label, the aspect's own, or a
    generic one ("Score (1-3): 3")."""
    before = _LABEL_BEFORE.search(text, 0, found.start("value"))
    if before is None:
        return None
    label = before.group("label")
    words = set(re.split(r"[ '-]", label.lower()))
    return None if words & _GENERIC_LABELS or _names(words, aspect) else label


def _names(words: set[str], aspect: Aspect) -> bool:
    """Whether a label's `words` name `aspect`: a word shares its first five letters (or all of a
    shorter name) with the aspect's name, key or human aspect ("Natural", "Naturalness", "natural")."""
    names = {aspect.key, *aspect.name.lower().split(), *(aspect.human or "").lower().split()}
    return any(len(os.path.commonprefix([word, name])) >= min(5, len(name)) for word in words for name in names
               if name)


def read_score(text: str, aspect: Aspect, single: bool) -> int | str:
    """The score answering `aspect` in `text`, or the reason it cannot be read (see `locate_score`):
    a score labelled with another name ("Fluency: 3") answers that name, not `aspect`."""
    found = locate_score(text, aspect, single)
    if found is None:
        return f"no {aspect.name} score in the answer {clip(text)!r}"
    label = other_label(text, found, aspect)
    if label is not None:
        return f"the answer scores '{label}', not {aspect.name}: {clip(text)!r}"
    if aspect.labels:
        return aspect.min + [label.lower() for label in aspect.labels].index(found.group("value").lower())
    value = float(found.group("value"))
    if value != int(value) or int(value) not in aspect.scale:
        return f"{aspect.name} score {found.group('value')} is outside the scale {aspect.min}-{aspect.max}"
    return int(value)


def parse_scores(text: str, aspects: list[Aspect]) -> dict[str, int | str]:
    """Read each aspect's score from an answer (see `locate_score`); a lone number counts
    when one aspect is asked. Returns aspect key -> score, or -> the reason it cannot be read."""
    return {aspect.key: read_score(text, aspect, single=len(aspects) == 1) for aspect in aspects}


def distribution_from_samples(samples: list[int], aspect: Aspect) -> dict[int, float]:
    """Relative frequency of each score among parsed samples (seed 001's weighted mean)."""
    counts = Counter(samples)
    return {s: counts[s] / len(samples) for s in aspect.scale if counts[s]} if samples else {}


def scores_from_samples(texts: list[str], aspects: list[Aspect]) -> dict[str, AspectScore]:
    """Parse every sampled answer, then take each aspect's weighted mean over the parsed ones."""
    parsed = [parse_scores(text, aspects) for text in texts]
    scores = {}
    for aspect in aspects:
        values = [p[aspect.key] for p in parsed if isinstance(p[aspect.key], int)]
        if not values:
            reasons = Counter(str(p[aspect.key]) for p in parsed)
            scores[aspect.key] = AspectScore.unscored(
                f"none of {len(texts)} answers could be parsed: {reasons.most_common(1)[0][0] if reasons else 'no answers'}"
            )
        else:
            dist = distribution_from_samples(values, aspect)
            scores[aspect.key] = AspectScore.from_distribution(dist, samples=values)
    return scores
