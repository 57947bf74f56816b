"""A judge that answers from a script, for tests and demos: no model, no network."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from geval.judging import checkup
from geval.judging.answers import parse_scores
from geval.judging.judgment import AspectScore, Judgment
from geval.judging.aspects import Aspect

Script = Callable[[str, Aspect], dict[int, float] | str]


def hashed_distribution(prompt: str, aspect: Aspect) -> dict[int, float]:
    """A deterministic distribution that depends on the prompt text (the default script)."""
    digest = hashlib.sha256(f"{aspect.key}\n{prompt}".encode()).digest()
    return {s: 1 + digest[i] for i, s in enumerate(aspect.scale)}


class ScriptedJudge:
    """Returns `script(prompt, aspect)`: a distribution over the scale, or a text to parse.

    A text answer goes through the same parser as real models, so garbage becomes unscored.
    """

    seconds_per_call = 0.0  # for estimates: no model, no network

    def __init__(self, script: Script = hashed_distribution, name: str = "hashed"):
        self.script = script
        self.settings = {"backend": "scripted", "model": name}
        self.calls: list[str] = []

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        """Score every aspect from the script."""
        self.calls.append(prompt)
        scores, raw = {}, []
        for aspect in aspects:
            answer = self.script(prompt, aspect)
            if isinstance(answer, str):
                raw.append(answer)
                parsed = parse_scores(answer, [aspect])[aspect.key]
                scores[aspect.key] = (
                    AspectScore.from_distribution({parsed: 1.0}) if isinstance(parsed, int) else AspectScore.unscored(parsed)
                )
            else:
                scores[aspect.key] = AspectScore.from_distribution(answer)
                raw.append(f"{aspect.name}: {max(answer, key=answer.get)}")
        return Judgment(scores, raw, prompt_tokens=len(prompt.split()), completion_tokens=len(aspects))

    def check(self, on_step: checkup.OnStep = checkup.ignore) -> checkup.Checkup:
        """Whether this judge answers: versions and a test judgment from the script (`python -m geval doctor`)."""
        return checkup.answering(self, "from the script", on_step)

    def generate(self, prompt: str, max_tokens: int) -> str:
        """Fixed evaluation steps."""
        self.calls.append(prompt)
        return "1. Read the input carefully.\n2. Compare it with the criteria.\n3. Assign a score."
