"""geval.cot: evaluation steps generated once per template and judge, stored, and reused."""

from __future__ import annotations

import pytest
from helpers import PROMPTS, make_items, make_template, run_cli, scripted, template_text

import geval
from geval.judging.templates import load_template, parse_template
from geval.scoring.steps import cot_prompt

AUTO = make_template(steps="auto", body="Steps:\n{{steps}}\n\nResponse:\n{{response}}\n\n- Naturalness:",
                     extra_header='criteria = "Naturalness (1-3): is the response natural?"')
STEPS = "1. Read the input carefully.\n2. Compare it with the criteria.\n3. Assign a score."


def test_cot_prompt_holds_task_and_criteria():
    prompt = cot_prompt(AUTO)
    assert prompt.startswith("Rate the response.\n\nEvaluation Criteria:\n\nNaturalness (1-3): is the response natural?")
    assert prompt.endswith("Evaluation Steps:\n")


def test_cot_prompt_without_criteria_lists_the_aspects():
    template = make_template(steps="auto", aspects=(("Naturalness", 1, 3), ("Coherence", 1, 5)),
                             body="{{steps}}\n{{response}}\n- Naturalness:\n- Coherence:")
    assert "Evaluation Criteria:\n\nNaturalness (1-3)\nCoherence (1-5)\n\n" in cot_prompt(template)


def test_steps_are_generated_once_stored_and_reused(store):
    judge = scripted()
    assert geval.generate_steps(store, AUTO, judge) == STEPS
    assert judge.calls == [cot_prompt(AUTO)]
    assert store.steps(AUTO, judge.settings) == STEPS
    assert geval.generate_steps(store, AUTO, judge) == STEPS
    assert len(judge.calls) == 1
    assert geval.generate_steps(store, AUTO, scripted()) == STEPS  # another judge object, same settings
    assert len(judge.calls) == 1


def test_regenerate_calls_the_judge_again(store):
    judge = scripted()
    geval.generate_steps(store, AUTO, judge)
    geval.generate_steps(store, AUTO, judge, regenerate=True)
    assert len(judge.calls) == 2
    assert store.db["steps"].count == 1


def test_steps_belong_to_one_judge_and_one_template_version(store):
    geval.generate_steps(store, AUTO, scripted())
    other = scripted(name="other")
    geval.generate_steps(store, AUTO, other)
    assert len(other.calls) == 1
    changed = parse_template(AUTO.text.replace("Rate the response.", "Rate it."))
    geval.generate_steps(store, changed, other)
    assert len(other.calls) == 2
    assert store.db["steps"].count == 3


def test_templates_without_auto_steps_need_none(store):
    judge = scripted()
    assert geval.generate_steps(store, make_template(), judge) is None
    written = make_template(steps="1. Look.", body="{{steps}}\n{{response}}\n- Naturalness:")
    assert geval.generate_steps(store, written, judge) is None
    assert judge.calls == []


def test_a_run_generates_steps_first_and_renders_them(store):
    judge = scripted()
    progress = geval.score(store, make_items(3), AUTO, judge, "synthetic")
    assert progress.done == 3 and progress.failed == 0
    assert judge.calls[0] == cot_prompt(AUTO)
    assert all(prompt.startswith(f"Steps:\n{STEPS}\n\nResponse:") for prompt in judge.calls[1:])
    geval.score(store, make_items(3), AUTO, judge, "synthetic")
    assert len(judge.calls) == 4  # steps and judgments all reused


def test_plan_before_steps_exist_counts_every_item_as_a_call(store):
    plan = geval.plan(store, make_items(3), AUTO, scripted())
    assert (plan.cached, plan.calls, plan.failing) == (0, 3, [])


def test_cli_cot_generates_then_reuses(tmp_path):
    path = tmp_path / "auto.txt"
    path.write_text(AUTO.text, "utf-8")
    args = ["cot", "--template", str(path), "--judge", "scripted", "--store", str(tmp_path / "s.sqlite")]
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == STEPS
    store = geval.Store(tmp_path / "s.sqlite")
    assert store.steps(AUTO, scripted().settings) == STEPS
    store.close()


def test_cli_cot_refuses_a_template_without_auto_steps(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text(template_text(), "utf-8")
    result = run_cli("cot", "--template", str(path), "--judge", "scripted", "--store", str(tmp_path / "s.sqlite"))
    assert result.returncode == 2
    assert result.stderr.strip() == f'error: {path}: has no steps = "auto" in its header; nothing to generate'


@pytest.mark.skipif(not (PROMPTS / "topicalchat-naturalness-cot.txt").is_file(), reason="no cot template in prompts/")
def test_the_real_cot_template_asks_for_generated_steps():
    assert load_template(PROMPTS / "topicalchat-naturalness-cot.txt").needs_generated_steps
