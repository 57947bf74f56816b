"""What a run would do before it is started: items already answered, calls to make, and an
estimate of tokens, cost and time (the Score page and `geval score --dry-run`).

Time is estimated from the work the calls are, whatever the judge's speed (`Work`: calls, the
tokens they evaluate, forward passes), at the judge's pace (`Pace`): the embedded judge's speed
measured on this machine (tokens per second; a prompt evaluates only what it does not share with
the one before it, as the judge's KV cache does), else a time per call measured in the store,
else the judge's stated default. A run follows its plan's work and corrects the pace by what it
measures (`geval.scoring.runner.Progress.eta`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from geval.data.items import Item, without_item
from geval.errors import TemplateError
from geval.judging import pairwise
from geval.judging.judgment import Judge, accepted_settings, approx_tokens, form_answer
from geval.judging.native import Speed
from geval.judging.templates import Template
from geval.scoring.lookup import ASK_AGAIN, Signer, answered_items, by_group, cached_answers, neighbours
from geval.store import Store
from geval.wording import counted


@dataclass
class Work:
    """Judge calls as work, whatever the judge's speed: the calls, the tokens they evaluate (what
    each prompt does not share with the one before it) and their forward passes (one per score read)."""

    calls: int = 0
    tokens: int = 0
    passes: int = 0

    def __add__(self, other: Work) -> Work:
        return Work(self.calls + other.calls, self.tokens + other.tokens, self.passes + other.passes)

    def __sub__(self, other: Work) -> Work:
        """What is left of this work once `other` is done (never below nothing)."""
        return Work(max(0, self.calls - other.calls), max(0, self.tokens - other.tokens),
                    max(0, self.passes - other.passes))

    def times(self, factor: float) -> Work:
        """This work `factor` times over (an extrapolation)."""
        return Work(round(self.calls * factor), round(self.tokens * factor), round(self.passes * factor))


class CallSequence:
    """The work of calls in the order a run makes them: a judge that keeps its KV cache (the
    embedded one) evaluates only the part of a prompt that the prompt before it did not have."""

    def __init__(self):
        self.previous = ""

    def work(self, prompt: str, aspects: int) -> Work:
        """The work of the next call: `prompt`, reading `aspects` scores."""
        shared = len(os.path.commonprefix([self.previous, prompt]))
        self.previous = prompt
        return Work(1, approx_tokens(prompt[shared:]), aspects)


@dataclass
class Pace:
    """How long work takes with a judge: at its measured speed (tokens per second: the embedded
    judge), else at a time per call (measured over this judge's calls in the store, else on the
    judge check's test judgment, else its stated default), `concurrency` calls at a time."""

    speed: Speed | None = None
    per_call: float = 1.0
    measured: int = 0  # calls the time per call was measured on (0: the judge's stated default)
    concurrency: int = 1
    measures: bool = False  # whether the judge measures its speed when it loads (then the run's estimate uses it)
    checked: bool = False  # whether the time per call is the judge check's test judgment's
    load: float | None = None  # seconds loading the model takes before the first call (a native judge not loaded)

    def seconds(self, work: Work) -> float:
        """The time `work` takes at this pace."""
        if self.speed is not None:
            return self.speed.seconds(work.tokens, work.passes)
        return work.calls * self.per_call / max(1, self.concurrency)

    @property
    def default(self) -> bool:
        """Whether the pace is the judge's stated default: nothing measured on this machine or in the store."""
        return self.speed is None and not self.measured and not self.checked

    def basis(self) -> str:
        """What the pace rests on, in words."""
        if self.speed is not None:
            age = _rough(max(1.0, time.time() - self.speed.measured))
            over = f" over {self.speed.judgments} judgments" if self.speed.judgments else ""
            return f"{self.speed.describe()}, measured on this machine{over} {age} ago"
        later = "; its speed on this machine is measured when it loads, and the run's ETA uses it" if self.measures else ""
        if self.measured:
            return f"{_per_call(self.per_call)} measured over {self.measured} calls of this judge{later}"
        if self.checked:
            return (f"{_per_call(self.per_call)}, from the judge check's test judgment"
                    + (later or ": the run's ETA corrects it from its first judgments"))
        return (f"{_per_call(self.per_call)}, a default for this judge, nothing measured here yet"
                + (later or ": the run's ETA corrects it from its first judgments"))


def pace(store: Store, judge: Judge, concurrency: int = 1) -> Pace:
    """The judge's pace: its speed measured on this machine (`judge.speed`, the embedded judge's),
    else the median time of its calls in the store, else the time of the judge check's test judgment
    (`checked_seconds`, `geval.judging.checkup`), else its stated default (`seconds_per_call`, 1 s for a
    judge that states none)."""
    speed = getattr(judge, "speed", None)
    measured = store.seconds_per_call(accepted_settings(judge))
    checked = getattr(judge, "checked_seconds", None) if not measured else None
    per_call, calls = measured or (float(getattr(judge, "seconds_per_call", 1.0) if checked is None else checked), 0)
    load = getattr(judge, "load_seconds", None) if not getattr(judge, "loaded", True) else None
    return Pace(speed, per_call, calls, max(1, min(concurrency, getattr(judge, "max_concurrency", 1) or 1)),
                hasattr(judge, "speed"), checked is not None, load)


def estimate_call(judge: Judge, prompt: str, aspects: list) -> tuple[int, int, float]:
    """(prompt tokens, answer tokens, cost) a call will be billed, before it is made: the
    judge's own estimate (OpenAI: per mode), else characters / 4 and no cost."""
    estimate = getattr(judge, "estimate", None)
    if estimate is not None:
        return estimate(prompt, aspects)
    return approx_tokens(prompt), approx_tokens(form_answer(aspects)), 0.0


#: Why a template asks several prompts per item: as a rule; a pairwise one.
PROMPTS_PER_ITEM = "one per aspect or question"
BOTH_ORDERS = "each pair asked in both orders, its sides swapped the second time"


@dataclass
class Plan:
    """What a run would do: items already answered, calls to make, an estimate of tokens, cost
    and time."""

    total: int
    cached: int = 0
    unscored: int = 0  # answers of the cached items no score could be read from (not asked again)
    calls: int = 0
    shared: int = 0  # items whose every call is another item's (the same prompt, or a batch's call): not asked again
    prompt_tokens: int = 0  # estimated (characters / 4) for the calls still to make, as billed
    completion_tokens: int = 0  # likewise for the answers (n of them per call in samples mode)
    cost: float = 0.0
    cost_with_logprobs: float | None = None  # the cost if the server gives logprobs, when `cost` is a bound
    failing: list[str] = field(default_factory=list)  # items whose prompt cannot be rendered, with the reason
    reasons: dict[str, int] = field(default_factory=dict)  # each reason (without the item) -> items
    work: Work = field(default_factory=Work)  # the calls to make as work, in the order a run makes them
    pace: Pace = field(default_factory=Pace)
    priced: bool = True  # False when the judge knows no price for its model (the cost reads "unknown")
    several: str = PROMPTS_PER_ITEM  # why the template asks several prompts per item (`calls_explained`)

    @property
    def seconds(self) -> float:
        """The time the calls to make would take, estimated (their work at the judge's pace)."""
        return self.pace.seconds(self.work)

    def __add__(self, other: Plan) -> Plan:
        """The plans of two runs one after the other with the same judge (two templates): their
        items, calls, tokens, cost and work added up, at this plan's pace."""
        reasons = dict(self.reasons)
        for reason, count in other.reasons.items():
            reasons[reason] = reasons.get(reason, 0) + count
        bounds = (self.cost_with_logprobs, other.cost_with_logprobs)
        with_logprobs = None if bounds == (None, None) else \
            sum(bound if bound is not None else plan.cost for bound, plan in zip(bounds, (self, other)))
        return Plan(total=self.total + other.total, cached=self.cached + other.cached,
                    unscored=self.unscored + other.unscored, calls=self.calls + other.calls,
                    shared=self.shared + other.shared, prompt_tokens=self.prompt_tokens + other.prompt_tokens,
                    completion_tokens=self.completion_tokens + other.completion_tokens, cost=self.cost + other.cost,
                    cost_with_logprobs=with_logprobs, failing=self.failing + other.failing, reasons=reasons,
                    work=self.work + other.work, pace=self.pace, priced=self.priced and other.priced,
                    several=self.several if self.several == other.several else PROMPTS_PER_ITEM)

    def duration(self) -> str:
        """The estimated time of the calls to make, and of loading the model first when it is not loaded, as a
        person says it: "about 4 min"; "nothing to call" when every item is cached."""
        return f"about {_rough(self.seconds + (self.pace.load or 0.0))}" if self.calls else "nothing to call"

    def seconds_for(self, calls: int) -> float:
        """The time `calls` calls like these would take (e.g. a search's budget of them); with no
        call to go by, at the judge's time per call."""
        if self.calls:
            return self.seconds * calls / self.calls
        return calls * self.pace.per_call / max(1, self.pace.concurrency)

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

    def time_line(self, calls: int | None = None) -> str:
        """The time estimate (of `calls` calls like these, when given) and what it rests on."""
        if not (self.calls if calls is None else calls):
            return "nothing to call"
        seconds = self.seconds if calls is None else self.seconds_for(calls)
        if self.pace.speed is not None:
            work = self.work if calls is None or not self.calls else self.work.times(calls / self.calls)
            basis = f"~{work.tokens:,} tokens to evaluate at {self.pace.basis()}"
            kept = self.prompt_tokens - work.tokens if calls is None else 0  # beside the plan's "~47,112 prompt"
            if kept > 0:
                basis += f"; the other ~{kept:,} prompt tokens repeat the prompt before, kept from it"
        else:
            basis = self.pace.basis()
        at_once = f", {self.pace.concurrency} at a time" if self.pace.concurrency > 1 else ""
        load = f", after about {_rough(self.pace.load)} loading the model" if self.pace.load else ""
        return f"about {_rough(seconds)}{load} ({basis}{at_once}; an estimate)"

    def calls_explained(self) -> str:
        """Why the judge calls are not one per item still to score, in words ("" when they are):
        items that share a prompt are asked once; a template may ask several prompts per item."""
        asked = self.total - self.cached - len(self.failing) - self.shared  # items with calls of their own
        parts = []
        if self.shared:
            parts.append(f"{counted(self.shared, 'item')} {'has' if self.shared == 1 else 'have'} the same prompt "
                         "as another item (a duplicate, or a call serving several items) and "
                         f"{'is' if self.shared == 1 else 'are'} asked once")
        if asked and self.calls != asked:
            parts.append(f"the template asks {self.calls / asked:.3g} prompts per item ({self.several})")
        return "; ".join(parts)

    def line(self) -> str:
        """One line for the Score page and the CLI. When the judge may ask a call two ways (an
        "auto" OpenAI judge: logprobs, then samples if the server gives none), the tokens and cost
        are a bound, and the line says so and gives the cost with logprobs beside it."""
        bound = self.cost_with_logprobs is not None
        cost = ("cost unknown: no price for this model" if not self.priced else
                f"at most {_dollars(self.cost)}; {_dollars(self.cost_with_logprobs)} if the server gives logprobs"
                if bound else _dollars(self.cost))
        unread = (f" ({self.unscored} unscored answers among them: stored, not asked again; {ASK_AGAIN})"
                  if self.unscored else "")
        why = self.calls_explained()
        return (f"{counted(self.total, 'item')}: {self.cached} cached{unread}, {counted(self.calls, 'judge call')} "
                f"to make ({'at most ' if bound else ''}~{self.prompt_tokens:,} prompt + ~{self.completion_tokens:,} "
                f"answer tokens, {cost})"
                + (f", {len(self.failing)} cannot be rendered" if self.failing else "")
                + (f". {why[:1].upper()}{why[1:]}." if why else ""))


def _per_call(seconds: float) -> str:
    """'1.5 s per call'; under 0.1 s to the hundredth ('0.03 s per call': a local server's, not '0.0'), under 0.01 s
    as such."""
    if seconds >= 0.1 or seconds == 0:
        return f"{seconds:.1f} s per call"
    return f"{seconds:.2f} s per call" if seconds >= 0.01 else "under 0.01 s per call"


def _dollars(cost: float) -> str:
    """'~$0.1370', '~$2.41', '~$0.00'."""
    return f"~${cost:.2f}" if cost >= 1 or cost == 0 else f"~${cost:.4f}"


def _rough(seconds: float) -> str:
    """A duration as a person estimates it: '20 s', '4 min', '1.5 h'."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def plan(store: Store, items: list[Item], template: Template, judge: Judge, size: int = 500,
         concurrency: int = 1, examples_from: list[Item] | None = None, fresh: bool = False) -> Plan:
    """Count the items already answered and estimate the work left, without calling the judge.

    Items judged with this template version and judge are counted by id (one query per
    `size` items, nothing rendered); the others are rendered, which also finds those that
    cannot be, and looked up by cache key (another template or dataset may have asked the same).
    The time is the calls' work, in the order a run makes them (by group), at the judge's pace
    (`pace`), `concurrency` calls at once when the judge takes several.
    `examples_from`: as for `score`. `fresh`: as if nothing were stored yet (what the items
    cost in all, the same before and after they are scored).
    """
    steps = store.steps(template, judge.settings) if template.needs_generated_steps else None
    known_steps = steps is not None or not template.needs_generated_steps
    result = Plan(len(items), pace=pace(store, judge, concurrency), priced=getattr(judge, "priced", True),
                  several=BOTH_ORDERS if template.kind == pairwise.KIND else PROMPTS_PER_ITEM)
    around = neighbours(store, template, items[0].dataset, items, examples_from) if items else None
    asked: set[tuple] = set()  # a batch layout's call is shared by its group's items: counted once
    todo = []
    signer = Signer(template, around.pool_label if around else "")
    sequence = CallSequence()
    with_logprobs = getattr(judge, "estimate_with_logprobs", None)  # an "auto" judge's other way of being billed
    for item, unscored in answered_items(store, by_group(items), template, signer.all(accepted_settings(judge)), size):
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
            if missing and all((call.prompt, call.aspects) in asked for call in missing):
                result.shared += 1
            for call in missing:
                if (call.prompt, call.aspects) in asked:
                    continue
                asked.add((call.prompt, call.aspects))
                result.calls += 1
                result.work += sequence.work(call.prompt, len(call.aspects))
                prompt_tokens, completion_tokens, cost = estimate_call(judge, call.prompt, list(call.aspects))
                result.prompt_tokens += prompt_tokens
                result.completion_tokens += completion_tokens
                result.cost += cost
                cheaper = with_logprobs(call.prompt, list(call.aspects)) if with_logprobs is not None else None
                if cheaper is not None:
                    result.cost_with_logprobs = (result.cost_with_logprobs or 0.0) + cheaper[2]
    return result
