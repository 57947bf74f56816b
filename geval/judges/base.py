"""What every judge returns, the signature that names it, and score parsing shared by backends."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from geval.templates import Aspect, Template
from geval.version import __version__


@dataclass
class AspectScore:
    """One aspect's result. `score` is None when unscored; `reason` then says why."""

    distribution: dict[int, float] = field(default_factory=dict)  # p(s) over the scale, sums to 1
    score: float | None = None  # sum of p(s) * s
    reason: str = ""
    samples: list[int] = field(default_factory=list)  # parsed scores of sampled answers, if sampled
    coverage: float | None = None  # probability the model put on score tokens at all (logits, logprobs)

    @classmethod
    def from_distribution(cls, distribution: dict[int, float], samples: list[int] | None = None) -> "AspectScore":
        """Normalize `distribution` and take its probability-weighted mean."""
        total = sum(distribution.values())
        if total <= 0 or not math.isfinite(total):
            return cls.unscored("no probability on any score of the scale")
        normalized = {s: p / total for s, p in sorted(distribution.items())}
        return cls(normalized, weighted_mean(normalized), "", list(samples or []))

    @classmethod
    def unscored(cls, reason: str) -> "AspectScore":
        """A result with no score, and why."""
        return cls(reason=reason)


@dataclass
class Judgment:
    """A judge's answer to one prompt: a score per aspect key, the raw text, and usage.

    `settings` are those that made it when they differ from the judge's own (an "auto"
    OpenAI judge answers by logprobs or by samples); None means the judge's `settings`.
    """

    scores: dict[str, AspectScore]
    raw: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    settings: dict | None = None


class Judge(Protocol):
    """A backend. `settings` holds only what changes the output (it goes into signatures and
    cache keys). A judge whose answers are made under other settings than it was given (an
    "auto" OpenAI judge) also has `accepts`: see `accepted_settings`."""

    settings: dict

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        """Score `prompt` on `aspects` (in form order)."""

    def generate(self, prompt: str, max_tokens: int) -> str:
        """Free text (used for auto chain-of-thought)."""


def accepted_settings(judge: Judge) -> list[dict]:
    """The settings whose cached answers answer `judge`, those of its next call first: its
    `accepts` when it has one (an "auto" OpenAI judge: logprobs and samples), else its `settings`."""
    return getattr(judge, "accepts", None) or [judge.settings]


def weighted_mean(distribution: dict[int, float]) -> float:
    """G-EVAL's score: sum of p(s) * s."""
    return float(sum(score * p for score, p in distribution.items()))


def distribution_from_samples(samples: list[int], aspect: Aspect) -> dict[int, float]:
    """Relative frequency of each score among parsed samples (seed 001's weighted mean)."""
    counts = Counter(samples)
    return {s: counts[s] / len(samples) for s in aspect.scale if counts[s]} if samples else {}


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


def locate_score(text: str, aspect: Aspect, single: bool) -> re.Match | None:
    """Where the score answering `aspect`'s form line is in `text` (group "value"), or None.

    The score is the first number after the aspect's label and its separator, not one inside a
    parenthesised scale: "- Coherence (1-3): 2", "**Coherence**: 2", "Coherence: 2/3" all read 2.
    When `single` (one aspect asked) an answer without the label counts too: its first number
    once scale expressions ("(1-3)", "1 to 3", "out of 3", "/3") are blanked out, e.g. "2" or
    "I would rate it 2.". Blanking keeps every other character where it was, so the match's
    offsets are offsets in `text`.
    """
    label = re.compile(rf"(?<![^\W\d_]){re.escape(aspect.name)}{_BETWEEN}{_NUMBER}(?![\d.]*\s*[-–—]\s*\d)",
                       re.IGNORECASE)
    found = label.search(text)
    if found is not None or not single:
        return found
    blanked = _NOT_ANSWERS.sub(lambda m: " " * len(m.group(0)), text)
    return re.search(_NUMBER, blanked)


def read_score(text: str, aspect: Aspect, single: bool) -> int | str:
    """The score answering `aspect` in `text`, or the reason it cannot be read (see `locate_score`)."""
    found = locate_score(text, aspect, single)
    if found is None:
        return f"no {aspect.name} score in the answer {_clip(text)!r}"
    value = float(found.group("value"))
    if value != int(value) or int(value) not in aspect.scale:
        return f"{aspect.name} score {found.group('value')} is outside the scale {aspect.min}-{aspect.max}"
    return int(value)


def parse_scores(text: str, aspects: list[Aspect]) -> dict[str, int | str]:
    """Read each aspect's score from an answer (see `locate_score`); a lone number counts
    when one aspect is asked. Returns aspect key -> score, or -> the reason it cannot be read."""
    return {aspect.key: read_score(text, aspect, single=len(aspects) == 1) for aspect in aspects}


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


def signature(settings: dict, template: Template, aspects: list[Aspect]) -> tuple[str, dict]:
    """A sacrebleu-style signature string and its JSON form (never parse the string back).

    `settings` is the judge's own state (backend, model, weights, sampling); the template
    name and version, the scale of each aspect and the package version are added here.
    """
    fields = {
        **settings,
        "template": template.label,
        "scale": ",".join(f"{a.key}={a.min}-{a.max}" for a in aspects),
        "agg": "wmean",
        "version": __version__,
    }
    text = "|".join(f"{k}:{v}" for k, v in fields.items() if v not in (None, ""))
    return text, fields


def cache_key(settings: dict, prompt: str, aspects: list[Aspect]) -> str:
    """What decides a judgment's output: judge settings, the exact prompt, the aspects asked
    (their names as written: a judge may prefill them), and the version of this code, which
    the signature names too: an answer cached by another version is not served under this one.

    Timeouts, retries and concurrency are not settings, so they never split the cache.
    """
    blob = json.dumps(
        {"settings": settings, "prompt": prompt, "aspects": [[a.name, a.min, a.max] for a in aspects],
         "version": __version__},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def approx_tokens(text: str) -> int:
    """Tokens of `text` before a tokenizer has seen it: characters / 4, rounded up."""
    return (len(text) + 3) // 4


def form_answer(aspects: list[Aspect]) -> str:
    """The answer a form asks for ("Naturalness: 3", one line per aspect), as long as the real one."""
    return "\n".join(f"{a.name}: {a.max}" for a in aspects)


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
