"""What a run would do before it is started: items already answered, calls to make, and an
estimate of tokens and cost (the Score page and `geval score --dry-run`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from geval.data.items import Item, without_item
from geval.errors import TemplateError
from geval.judging.judgment import Judge, accepted_settings, approx_tokens, form_answer
from geval.judging.templates import Template
from geval.scoring.lookup import ASK_AGAIN, Signer, answered_items, cached_answers, neighbours
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
    """What a run would do: items already answered, calls to make, an estimate of tokens, cost
    and time."""

    total: int
    cached: int = 0
    unscored: int = 0  # answers of the cached items no score could be read from (not asked again)
    calls: int = 0
    prompt_tokens: int = 0  # estimated (characters / 4) for the calls still to make, as billed
    completion_tokens: int = 0  # likewise for the answers (n of them per call in samples mode)
    cost: float = 0.0
    failing: list[str] = field(default_factory=list)  # items whose prompt cannot be rendered, with the reason
    reasons: dict[str, int] = field(default_factory=dict)  # each reason (without the item) -> items
    seconds_per_call: float = 0.0  # measured in this store for this judge, else the judge's default
    measured: int = 0  # calls the time per call was measured on (0: the judge's stated default)
    concurrency: int = 1
    priced: bool = True  # False when the judge knows no price for its model (the cost reads "unknown")

    @property
    def seconds(self) -> float:
        """The time the calls to make would take, estimated (calls x time per call / calls at once)."""
        return self.calls * self.seconds_per_call / max(1, self.concurrency)

    @property
    def renderable(self) -> bool:
        """False when not one item still to score can be rendered (nothing to start)."""
        return not self.failing or len(self.failing) < self.total - self.cached

    def problems(self) -> list[str]:
        """Why items cannot be rendered, each reason once with the number of items it hits."""
        lines = []
        for reason, count in sorted(self.reasons.items(), key=lambda pair: -pair[1]):
            counted = f"{count} of {self.total} items"
            lines.append(reason.replace("this item", counted) if "this item" in reason else f"{counted}: {reason}")
        return lines

    def time_line(self) -> str:
        """The time estimate and what it rests on."""
        if not self.calls:
            return "nothing to call"
        basis = (f"{self.seconds_per_call:.1f} s per call measured over {self.measured} calls of this judge"
                 if self.measured else f"{self.seconds_per_call:.1f} s per call, a default for this judge")
        at_once = f", {self.concurrency} at a time" if self.concurrency > 1 else ""
        return f"about {_rough(self.seconds)} ({basis}{at_once}; an estimate)"

    def line(self) -> str:
        """One line for the Score page and the CLI."""
        cost = ("cost unknown: no price for this model" if not self.priced else
                f"~${self.cost:.2f}" if self.cost >= 1 or self.cost == 0 else f"~${self.cost:.4f}")
        unread = (f" ({self.unscored} unscored answers among them: stored, not asked again; {ASK_AGAIN})"
                  if self.unscored else "")
        return (f"{self.total} items: {self.cached} cached{unread}, {self.calls} judge calls to make "
                f"(~{self.prompt_tokens:,} prompt + ~{self.completion_tokens:,} answer tokens, {cost})"
                + (f", {len(self.failing)} cannot be rendered" if self.failing else ""))


def _rough(seconds: float) -> str:
    """A duration as a person estimates it: '20 s', '4 min', '1.5 h'."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def seconds_per_call(store: Store, judge: Judge) -> tuple[float, int]:
    """(seconds per call, calls measured): the median time of this judge's calls in the store,
    else its stated default (`seconds_per_call`, 1 s for a judge that states none) and 0."""
    measured = store.seconds_per_call(accepted_settings(judge))
    if measured is not None:
        return measured
    return float(getattr(judge, "seconds_per_call", 1.0)), 0


def plan(store: Store, items: list[Item], template: Template, judge: Judge, size: int = 500,
         concurrency: int = 1, examples_from: list[Item] | None = None, fresh: bool = False) -> Plan:
    """Count the items already answered and estimate the work left, without calling the judge.

    Items judged with this template version and judge are counted by id (one query per
    `size` items, nothing rendered); the others are rendered, which also finds those that
    cannot be, and looked up by cache key (another template or dataset may have asked the same).
    The time is the calls to make times this judge's time per call (`seconds_per_call`), over
    `concurrency` calls at once when the judge takes several.
    `examples_from`: as for `score`. `fresh`: as if nothing were stored yet (what the items
    cost in all, the same before and after they are scored).
    """
    steps = store.steps(template, judge.settings) if template.needs_generated_steps else None
    known_steps = steps is not None or not template.needs_generated_steps
    result = Plan(len(items), concurrency=max(1, min(concurrency, getattr(judge, "max_concurrency", 1) or 1)),
                  priced=getattr(judge, "priced", True))
    result.seconds_per_call, result.measured = seconds_per_call(store, judge)
    around = neighbours(store, template, items[0].dataset, items, examples_from) if items else None
    asked: set[tuple] = set()  # a batch layout's call is shared by its group's items: counted once
    todo = []
    signer = Signer(template, around.pool_label if around else "")
    for item, unscored in answered_items(store, items, template, signer.all(accepted_settings(judge)), size):
        if unscored is None or fresh:
            todo.append(item)
        else:
            result.cached += 1
            result.unscored += len(unscored)
    for start in range(0, len(todo), size):
        rendered = []
        for item in todo[start:start + size]:
            try:
                rendered.append(template.calls(item, steps or "(evaluation steps, generated before the run)", around))
            except TemplateError as exc:
                result.failing.append(str(exc))
                reason = without_item(str(exc), item.id, item.dataset)
                result.reasons[reason] = result.reasons.get(reason, 0) + 1
        found = cached_answers(store, judge, [call for calls in rendered for call in calls]) \
            if known_steps and not fresh else None
        position = 0
        for calls in rendered:
            hits = [None] * len(calls) if found is None else found[position:position + len(calls)]
            position += len(calls)
            missing = [call for call, hit in zip(calls, hits) if hit is None]
            if not missing:
                result.cached += 1
                result.unscored += sum(hit[1].scores[asked].score is None
                                       for call, hit in zip(calls, hits) for asked, _ in call.keep)
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
