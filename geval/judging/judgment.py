"""What a judge returns, the Judge protocol, and its cache key (the signature that names a
judgment is made where a run meets its settings: `geval.scoring.lookup.signature`)."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from geval.judging.aspects import Aspect
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


def cache_key(settings: dict, prompt: str, aspects: list[Aspect]) -> str:
    """What decides a judgment's output: judge settings, the exact prompt, the aspects asked
    (their names as written: a judge may prefill them), and the version of this code, which
    the signature names too: an answer cached by another version is not served under this one.

    Timeouts, retries and concurrency are not settings, so they never split the cache.
    """
    blob = json.dumps(
        {"settings": settings, "prompt": prompt,
         "aspects": [[a.name, a.min, a.max, *([list(a.labels)] if a.labels else [])] for a in aspects],
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
    return "\n".join(f"{a.name}: {a.answer(a.max)}" for a in aspects)


def judge_name(fields: dict) -> str:
    """A judge as menus name it, from its signature's fields: backend and model, and how an
    OpenAI-compatible judge read its scores and, unless it is api.openai.com, where it runs
    ("openai: gpt-4o-mini, samples", "openai: qwen2.5-7b, logprobs at gpu-host:8000")."""
    name = f"{fields.get('backend', '?')}: {fields.get('model') or 'default'}"
    if fields.get("backend") != "openai":
        return name
    host = urlsplit(str(fields.get("base_url") or "")).netloc
    return name + (f", {fields['mode']}" if fields.get("mode") else "") + \
        (f" at {host}" if host and host != "api.openai.com" else "")


def told_apart(labels: list[str], fields: list[dict], short: list[str]) -> list[str]:
    """`labels` where some read alike, each of those followed by the signature `fields` in which
    they differ (e.g. max_tokens 16 / max_tokens 32), else by its `short` hash."""
    labels = list(labels)
    for label in {label for label in labels if labels.count(label) > 1}:
        rows = [n for n, other in enumerate(labels) if other == label]
        keys = sorted({key for n in rows for key in fields[n]})
        differ = [key for key in keys if len({str(fields[n].get(key)) for n in rows}) > 1]
        for n in rows:
            told = ", ".join(f"{key} {fields[n].get(key) or 'none'}" for key in differ)
            labels[n] = f"{label} · {told}" if told else f"{label} · {short[n]}"
    if len(set(labels)) < len(labels):  # still alike (the fields differ only together): the hash
        labels = [f"{label} · {h}" if labels.count(label) > 1 else label for label, h in zip(labels, short)]
    return labels


def clip(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters (an ellipsis at the end when cut), for messages."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
