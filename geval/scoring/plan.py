"""What a run would do before it is started: items already answered, calls to make, and an
estimate of tokens and cost (the Score page and `geval score --dry-run`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from geval.data.items import Item
from geval.errors import TemplateError
from geval.judging.judgment import Judge, accepted_settings, approx_tokens, form_answer
from geval.judging.templates import Template
from geval.scoring.lookup import Signer, answered_items, cached_answers, neighbours
from geval.store import Store


def estimate_call(judge: Judge, prompt: str, aspects: list) -> tuple[int, int, float]:
    """(prompt tokens, answer tokens, cost) a call will be billed, before it is made: the
    judge's own estimate (OpenAI: per mode), else characters / 4 and no cost."""
    estimate = getattr(judge, "estimate", None)
    if estimate is not None:
        return estimate(prompt, aspects)
    return approx_tokens(prompt), approx_tokens(form_answer(aspects)), 0.0


@dataclass
class Plan:
    """What a run would do: items already answered, calls to make, an estimate of tokens and cost."""

    total: int
    cached: int = 0
    calls: int = 0
    prompt_tokens: int = 0  # estimated (characters / 4) for the calls still to make, as billed
    completion_tokens: int = 0  # likewise for the answers (n of them per call in samples mode)
    cost: float = 0.0
    failing: list[str] = field(default_factory=list)  # items whose prompt cannot be rendered, with the reason

    def line(self) -> str:
        """One line for the Score page and the CLI."""
        cost = f"${self.cost:.2f}" if self.cost >= 1 or self.cost == 0 else f"${self.cost:.4f}"
        return (f"{self.total} items: {self.cached} cached, {self.calls} judge calls to make "
                f"(~{self.prompt_tokens:,} prompt + ~{self.completion_tokens:,} answer tokens, ~{cost})"
                + (f", {len(self.failing)} cannot be rendered" if self.failing else ""))


def plan(store: Store, items: list[Item], template: Template, judge: Judge, size: int = 500,
         examples_from: list[Item] | None = None, fresh: bool = False) -> Plan:
    """Count the items already answered and estimate the work left, without calling the judge.

    Items judged with this template version and judge are counted by id (one query per
    `size` items, nothing rendered); the others are rendered, which also finds those that
    cannot be, and looked up by cache key (another template or dataset may have asked the same).
    `examples_from`: as for `score`. `fresh`: as if nothing were stored yet (what the items
    cost in all, the same before and after they are scored).
    """
    steps = store.steps(template, judge.settings) if template.needs_generated_steps else None
    known_steps = steps is not None or not template.needs_generated_steps
    around = neighbours(store, template, items[0].dataset, items, examples_from) if items else None
    result = Plan(len(items))
    asked: set[tuple] = set()  # a batch layout's call is shared by its group's items: counted once
    todo = []
    signer = Signer(template, around.pool_label if around else "")
    for item, unscored in answered_items(store, items, template, signer.all(accepted_settings(judge)), size):
        if unscored is None or fresh:
            todo.append(item)
        else:
            result.cached += 1
    for start in range(0, len(todo), size):
        rendered = []
        for item in todo[start:start + size]:
            try:
                rendered.append(template.calls(item, steps or "(evaluation steps, generated before the run)", around))
            except TemplateError as exc:
                result.failing.append(str(exc))
        found = cached_answers(store, judge, [call for calls in rendered for call in calls]) \
            if known_steps and not fresh else None
        position = 0
        for calls in rendered:
            missing = [call for index, call in enumerate(calls, position) if found is None or found[index] is None]
            position += len(calls)
            result.cached += not missing
            for call in missing:
                if (call.prompt, call.aspects) in asked:
                    continue
                asked.add((call.prompt, call.aspects))
                result.calls += 1
                prompt_tokens, completion_tokens, cost = estimate_call(judge, call.prompt, list(call.aspects))
                result.prompt_tokens += prompt_tokens
                result.completion_tokens += completion_tokens
                result.cost += cost
    return result
