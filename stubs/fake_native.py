"""Stand-ins for the native models that run in worker processes (geval/judging/worker.py), for
tests that need a worker but not a real model: they start in a blink and answer at once.

- `Counter`: keeps a count between calls (state stays in the worker), raises on request.
- `FakeJudgeModel`: the embedded judge's model's calls (`judge`, `counters`, ...), answering a
  fixed distribution after a short wait; `info` carries a measured speed as the real one does.
"""

from __future__ import annotations

import time

from geval.errors import JudgmentFailed
from geval.judging.judgment import AspectScore, Judgment


class Counter:
    """Counts its calls; `fail(kind)` raises a JudgmentFailed or a ValueError."""

    def __init__(self, start: int = 0, refuse: bool = False):
        if refuse:
            raise JudgmentFailed("this model refuses to be built")
        self.count = start
        self.info = {"started": start}

    def add(self, step: int) -> int:
        self.count += step
        return self.count

    def fail(self, kind: str) -> None:
        if kind == "geval":
            raise JudgmentFailed("the prompt has 9000 tokens, more than the context window of 8192")
        raise ValueError("a bug in the model's code")


class FakeJudgeModel:
    """The embedded judge's model's interface without a model: each score of an aspect's scale gets a
    probability in proportion to its rank ({1: 1/6, 2: 2/6, 3: 3/6} on a 1-3 scale)."""

    def __init__(self, path: str, n_ctx: int, model: str = "", seconds: float = 0.05):
        self.seconds = seconds
        self.rendered = self.evaluated = 0
        self.info = {"speed": {"prefill": 1000.0, "decode": 100.0, "measured": time.time()}, "load_seconds": 0.0}

    def judge(self, prompt: str, aspects: list) -> Judgment:
        time.sleep(self.seconds)
        self.rendered += len(prompt) // 4
        self.evaluated += len(prompt) // 4
        scores = {}
        for aspect in aspects:
            total = len(aspect.scale) * (len(aspect.scale) + 1) / 2
            scores[aspect.key] = AspectScore.from_distribution({s: (rank + 1) / total
                                                                for rank, s in enumerate(aspect.scale)})
        return Judgment(scores, ["fake"], prompt_tokens=len(prompt) // 4, completion_tokens=len(aspects))

    def generate(self, prompt: str, max_tokens: int) -> str:
        return "1. Read. 2. Judge."

    def counters(self) -> dict[str, int]:
        return {"rendered": self.rendered, "evaluated": self.evaluated}
