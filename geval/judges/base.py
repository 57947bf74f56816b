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
    coverage: float | None = None  # probability the model put on score tokens at all (logits only)

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
    """A judge's answer to one prompt: a score per aspect key, the raw text, and usage."""

    scores: dict[str, AspectScore]
    raw: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


class Judge(Protocol):
    """A backend. `settings` holds only what changes the output (it goes into signatures)."""

    settings: dict

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        """Score `prompt` on `aspects` (in form order)."""

    def generate(self, prompt: str, max_tokens: int) -> str:
        """Free text (used for auto chain-of-thought)."""


def weighted_mean(distribution: dict[int, float]) -> float:
    """G-EVAL's score: sum of p(s) * s."""
    return float(sum(score * p for score, p in distribution.items()))


def distribution_from_samples(samples: list[int], aspect: Aspect) -> dict[int, float]:
    """Relative frequency of each score among parsed samples (seed 001's weighted mean)."""
    counts = Counter(samples)
    return {s: counts[s] / len(samples) for s in aspect.scale if counts[s]} if samples else {}


def parse_scores(text: str, aspects: list[Aspect]) -> dict[str, int | str]:
    """Read 'Aspect: 3' for each aspect; a lone number counts when there is one aspect.

    Returns aspect key -> score, or -> a reason string when it cannot be read.
    """
    result: dict[str, int | str] = {}
    for aspect in aspects:
        match = re.search(rf"{re.escape(aspect.name)}\W{{0,6}}?(-?\d+(?:\.\d+)?)", text, re.IGNORECASE)
        if match is None and len(aspects) == 1:
            match = re.search(r"(-?\d+(?:\.\d+)?)", text)
        if match is None:
            result[aspect.key] = f"no {aspect.name} score in the answer {_clip(text)!r}"
            continue
        value = float(match.group(1))
        if value != int(value) or int(value) not in aspect.scale:
            result[aspect.key] = f"{aspect.name} score {match.group(1)} is outside the scale {aspect.min}-{aspect.max}"
        else:
            result[aspect.key] = int(value)
    return result


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
    """What decides a judgment's output: judge settings, the exact prompt, the aspects asked.

    Timeouts, retries and concurrency are not settings, so they never split the cache.
    """
    blob = json.dumps(
        {"settings": settings, "prompt": prompt, "aspects": [[a.key, a.min, a.max] for a in aspects]},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
