"""Auto chain-of-thought (G-EVAL; seed 001's generate_cot): evaluation steps written by a
judge from the task and criteria, stored, and reused for every item."""

from __future__ import annotations

from geval.judging.judgment import Judge
from geval.judging.templates import Template
from geval.store import Store


def cot_prompt(template: Template) -> str:
    """The prompt that asks a judge for evaluation steps."""
    criteria = template.criteria.strip() or "\n".join(
        f"{a.name} ({a.min}-{a.max})" for a in template.aspects
    )
    return (
        f"{template.task.strip()}\n\n"
        f"Evaluation Criteria:\n\n{criteria}\n\n"
        "Write the Evaluation Steps an annotator should follow to assign these scores: "
        "a short numbered list (3 to 5 steps), nothing else.\n\nEvaluation Steps:\n"
    )


def generate_steps(store: Store, template: Template, judge: Judge, regenerate: bool = False) -> str | None:
    """The evaluation steps for `template` with `judge`: stored ones, else generated now.

    None when the template does not ask for generated steps.
    """
    if not template.needs_generated_steps:
        return None
    if not regenerate:
        stored = store.steps(template, judge.settings)
        if stored:
            return stored
    steps = judge.generate(cot_prompt(template), max_tokens=300).strip()
    store.save_steps(template, judge.settings, steps)
    return steps
