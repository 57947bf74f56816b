"""geval.judging.backends.base (and the scripted judge): parsing, weighted means, signatures, cache keys."""

from __future__ import annotations

import json

import pytest
from helpers import FULL_ITEM

import geval
from geval.errors import JudgeError, TemplateError
from geval.judging.answers import distribution_from_samples, parse_scores, scores_from_samples
from geval.judging.backends.scripted import ScriptedJudge
from geval.judging.judgment import AspectScore, cache_key, weighted_mean
from geval.scoring.lookup import signature
from geval.judging.templates import Aspect, parse_template

NAT = Aspect("Naturalness", 1, 3, "Natural")
COH = Aspect("Coherence", 1, 5)
ZERO_ONE = Aspect("Uses Knowledge", 0, 1)


@pytest.mark.parametrize(
    "text, aspects, expected",
    [
        ("Naturalness: 3", [NAT], {"naturalness": 3}),
        ("- Naturalness: 2", [NAT], {"naturalness": 2}),
        ("**Naturalness**: 1", [NAT], {"naturalness": 1}),
        ("naturalness:3", [NAT], {"naturalness": 3}),
        ("Naturalness - 2", [NAT], {"naturalness": 2}),
        ("Naturalness:\n\n2", [NAT], {"naturalness": 2}),
        ("Naturalness: 2.0", [NAT], {"naturalness": 2}),
        ("3", [NAT], {"naturalness": 3}),
        ("I would say 2 out of 3", [NAT], {"naturalness": 2}),
        ("Naturalness: 7", [NAT], {"naturalness": "Naturalness score 7 is outside the scale 1-3"}),
        ("Naturalness: 0", [NAT], {"naturalness": "Naturalness score 0 is outside the scale 1-3"}),
        ("Naturalness: -1", [NAT], {"naturalness": "Naturalness score -1 is outside the scale 1-3"}),
        ("Naturalness: 2.5", [NAT], {"naturalness": "Naturalness score 2.5 is outside the scale 1-3"}),
        ("no idea", [NAT], {"naturalness": "no Naturalness score in the answer 'no idea'"}),
        ("", [NAT], {"naturalness": "no Naturalness score in the answer ''"}),
        ("Uses Knowledge: 0", [ZERO_ONE], {"uses knowledge": 0}),
        ("Naturalness: 3\nCoherence: 5", [NAT, COH], {"naturalness": 3, "coherence": 5}),
        ("- Naturalness: 2\n- Coherence: 4\n", [NAT, COH], {"naturalness": 2, "coherence": 4}),
        ("Coherence: 4, Naturalness: 1", [NAT, COH], {"naturalness": 1, "coherence": 4}),
        ("- Naturalness: 2\n- Coherence: 9", [NAT, COH],
         {"naturalness": 2, "coherence": "Coherence score 9 is outside the scale 1-5"}),
        ("Coherence: 4", [NAT, COH],
         {"naturalness": "no Naturalness score in the answer 'Coherence: 4'", "coherence": 4}),
        # with several aspects a lone number belongs to none of them
        ("3", [NAT, COH], {"naturalness": "no Naturalness score in the answer '3'",
                           "coherence": "no Coherence score in the answer '3'"}),
    ],
)
def test_parse_scores(text, aspects, expected):
    assert parse_scores(text, aspects) == expected


COH3 = Aspect("Coherence", 1, 3)


@pytest.mark.parametrize(
    "text, aspects, expected",
    [  # the score that answers the form: after the label's colon, never inside a parenthesised scale
        ("2", [COH3], {"coherence": 2}),
        ("Coherence: 2", [COH3], {"coherence": 2}),
        ("Coherence (1-3): 2", [COH3], {"coherence": 2}),
        ("- Coherence (1-3): 2", [COH3], {"coherence": 2}),
        ("Coherence [1-3]: 3", [COH3], {"coherence": 3}),
        ("Coherence: 2/3", [COH3], {"coherence": 2}),
        ("**Coherence**: 2", [COH3], {"coherence": 2}),
        ("**Coherence (1-3):** 1", [COH3], {"coherence": 1}),
        ("Coherence is 3", [COH3], {"coherence": 3}),
        ("I would rate it 2.", [COH3], {"coherence": 2}),
        ("On a scale from 1 to 3, I give it 2.", [COH3], {"coherence": 2}),
        ("Score (1-3): 3", [COH3], {"coherence": 3}),
        ("Incoherence: 1. Coherence: 3", [COH3], {"coherence": 3}),
        ("Coherence (1-3):", [COH3], {"coherence": "no Coherence score in the answer 'Coherence (1-3):'"}),
        ("The response rambles.", [COH3], {"coherence": "no Coherence score in the answer 'The response rambles.'"}),
        ("- Naturalness (1-3): 2\n- Coherence (1-5): 4", [NAT, COH], {"naturalness": 2, "coherence": 4}),
        ("**Naturalness** (1-3): 3\n**Coherence** (1-5): 1", [NAT, COH], {"naturalness": 3, "coherence": 1}),
        ("Naturalness (1-3): 2", [NAT, COH],
         {"naturalness": 2, "coherence": "no Coherence score in the answer 'Naturalness (1-3): 2'"}),
    ],
)
def test_parse_scores_reads_the_answer_not_the_scale(text, aspects, expected):
    assert parse_scores(text, aspects) == expected


@pytest.mark.parametrize(
    "text, expected",
    [  # one aspect asked: a lone score counts, unless it is labelled with another name
        ("Fluency: 3", "the answer scores 'Fluency', not Naturalness: 'Fluency: 3'"),
        ("- **Fluency** (1-3): 3", "the answer scores 'Fluency', not Naturalness: '- **Fluency** (1-3): 3'"),
        ("It reads well. Uses Knowledge: 1", "the answer scores 'Uses Knowledge', not Naturalness: "
                                             "'It reads well. Uses Knowledge: 1'"),
        ("Overall:\n2", "the answer scores 'Overall', not Naturalness: 'Overall:\\n2'"),
        ("Fluency: 1\nNaturalness: 3", 3),
        ("Score (1-3): 3", 3),
        ("My rating: 2", 2),
        ("Final score = 1", 1),
        ("Naturalness score: 2", 2),
        ("Natural: 2", 2),  # the human aspect's word, or the name's stem: the aspect asked
        ("naturally fluent: 1", 1),
        ("I would rate it 2.", 2),
        # a number that counts something is not the score the sentence gives
        ("The response mentions 3 facts. I'd give it a 2.", 2),
        ("It has 3 turns; I rated it 1.", 1),
        ("With 3 facts, a score of 2 fits.", 2),
    ],
)
def test_a_score_labelled_with_another_name_is_unscored_naming_it(text, expected):
    assert parse_scores(text, [NAT]) == {"naturalness": expected}


def test_parse_scores_clips_long_answers_in_the_reason():
    reason = parse_scores("blah " * 100, [NAT])["naturalness"]
    assert reason.startswith("no Naturalness score in the answer 'blah blah")
    assert len(reason) < 130 and "…" in reason


@pytest.mark.parametrize(
    "distribution, expected",
    [
        ({1: 0.1, 2: 0.3, 3: 0.6}, 2.5),
        ({5: 1.0}, 5.0),
        ({0: 0.5, 1: 0.5}, 0.5),
        ({1: 0.25, 2: 0.25, 3: 0.25, 4: 0.25}, 2.5),
        ({}, 0.0),
    ],
)
def test_weighted_mean(distribution, expected):
    assert weighted_mean(distribution) == pytest.approx(expected, abs=1e-12)


def test_from_distribution_normalizes_and_takes_the_weighted_mean():
    score = AspectScore.from_distribution({3: 2.0, 1: 1.0, 2: 1.0})
    assert score.distribution == {1: 0.25, 2: 0.25, 3: 0.5}
    assert list(score.distribution) == [1, 2, 3]
    assert score.score == pytest.approx(2.25)
    assert score.reason == ""


@pytest.mark.parametrize("distribution", [{}, {1: 0.0, 2: 0.0}, {1: float("nan")}])
def test_from_distribution_without_mass_is_unscored_not_zero(distribution):
    score = AspectScore.from_distribution(distribution)
    assert score.score is None
    assert score.reason == "no probability on any score of the scale"


def test_distribution_from_samples():
    assert distribution_from_samples([3, 3, 2, 3], NAT) == {2: 0.25, 3: 0.75}
    assert distribution_from_samples([], NAT) == {}


def test_scores_from_samples_drops_unparseable_answers():
    texts = ["Naturalness: 3", "no idea", "Naturalness: 2", "Naturalness: 9", "3"]
    result = scores_from_samples(texts, [NAT])["naturalness"]
    assert result.samples == [3, 2, 3]
    assert result.distribution == pytest.approx({2: 1 / 3, 3: 2 / 3})
    assert result.score == pytest.approx(8 / 3)


def test_scores_from_samples_with_no_parseable_answer_is_unscored():
    result = scores_from_samples(["no idea", "no idea", "Naturalness: 9"], [NAT])["naturalness"]
    assert result.score is None
    assert result.reason == "none of 3 answers could be parsed: no Naturalness score in the answer 'no idea'"
    assert scores_from_samples([], [NAT])["naturalness"].reason == "none of 0 answers could be parsed: no answers"


def test_scores_from_samples_per_aspect():
    texts = ["Naturalness: 3\nCoherence: 5", "Naturalness: 1\nCoherence: oops", "Naturalness: 2\nCoherence: 4"]
    result = scores_from_samples(texts, [NAT, COH])
    assert result["naturalness"].score == pytest.approx(2.0)
    assert result["coherence"].samples == [5, 4]
    assert result["coherence"].score == pytest.approx(4.5)


# --- signatures -------------------------------------------------------------------------------

TEMPLATE_TEXT = (
    '+++\nname = "test-naturalness"\ntask = "Rate the response."\n[[aspects]]\nname = "Naturalness"\nmin = 1\n'
    'max = 3\nhuman = "Natural"\n[[aspects]]\nname = "Coherence"\nmin = 1\nmax = 5\n+++\nContext:\n{{context}}\n\n'
    "Fact:\n{{fact}}\n\nResponse:\n{{response}}\n\nForm:\n- Naturalness:\n- Coherence:\n"
)
TEMPLATE_VERSION = "0f4244be953e"  # sha256(TEMPLATE_TEXT)[:12]


def test_signature_string_is_exact():
    template = parse_template(TEMPLATE_TEXT)
    assert template.version == TEMPLATE_VERSION
    text, fields = signature(ScriptedJudge().settings, template, list(template.aspects))
    assert text == (
        "backend:scripted|model:hashed|template:test-naturalness@0f4244be953e"
        f"|scale:naturalness=1-3,coherence=1-5|agg:wmean|version:{geval.__version__}"
    )
    assert fields == {
        "backend": "scripted", "model": "hashed", "template": "test-naturalness@0f4244be953e",
        "scale": "naturalness=1-3,coherence=1-5", "agg": "wmean", "version": geval.__version__,
    }
    assert list(fields)[-1] == "version"
    assert json.loads(json.dumps(fields)) == fields


def test_signature_json_keeps_values_with_colons_and_skips_empty_ones():
    template = parse_template(TEMPLATE_TEXT)
    settings = {"backend": "openai", "model": "llama3:8b", "base_url": "http://127.0.0.1:11434/v1",
                "temp": None, "n": None, "top_logprobs": 20}
    text, fields = signature(settings, template, list(template.aspects[:1]))
    assert text == (
        "backend:openai|model:llama3:8b|base_url:http://127.0.0.1:11434/v1|top_logprobs:20"
        f"|template:test-naturalness@0f4244be953e|scale:naturalness=1-3|agg:wmean|version:{geval.__version__}"
    )
    assert fields["model"] == "llama3:8b" and fields["base_url"] == "http://127.0.0.1:11434/v1"
    assert fields["temp"] is None  # the JSON form keeps every setting, even unset ones


def test_signature_changes_with_the_template_text():
    one = parse_template(TEMPLATE_TEXT)
    two = parse_template(TEMPLATE_TEXT.replace("Rate the response.", "Rate it."))
    settings = ScriptedJudge().settings
    assert signature(settings, one, list(one.aspects))[0] != signature(settings, two, list(two.aspects))[0]


# --- cache keys -------------------------------------------------------------------------------

SETTINGS = {"backend": "openai", "model": "m", "base_url": "http://x/v1", "mode": "logprobs", "max_tokens": 16}


def test_cache_key_is_stable_for_the_same_input():
    key = cache_key(SETTINGS, "prompt", [NAT])
    assert key == cache_key(dict(reversed(list(SETTINGS.items()))), "prompt", [NAT])  # key order does not matter
    assert len(key) == 64 and int(key, 16) >= 0


@pytest.mark.parametrize(
    "settings, prompt, aspects",
    [
        (SETTINGS, "prompt ", [NAT]),
        (SETTINGS, "Prompt", [NAT]),
        ({**SETTINGS, "model": "m2"}, "prompt", [NAT]),
        ({**SETTINGS, "base_url": "http://y/v1"}, "prompt", [NAT]),
        ({**SETTINGS, "max_tokens": 17}, "prompt", [NAT]),
        ({**SETTINGS, "temp": 0.5}, "prompt", [NAT]),
        (SETTINGS, "prompt", [Aspect("Naturalness", 1, 5)]),
        (SETTINGS, "prompt", [Aspect("Fluency", 1, 3)]),
        (SETTINGS, "prompt", [NAT, COH]),
    ],
)
def test_cache_key_changes_with_what_changes_the_output(settings, prompt, aspects):
    assert cache_key(settings, prompt, aspects) != cache_key(SETTINGS, "prompt", [NAT])


def test_cache_key_keeps_the_aspect_name_as_written():
    # the embedded judge prefills the name as written: "coherence: " and "Coherence: " are two questions
    assert cache_key(SETTINGS, "p", [Aspect("coherence", 1, 3)]) != cache_key(SETTINGS, "p", [COH3])


def test_cache_key_names_the_version_of_the_code_like_the_signature(monkeypatch):
    import geval.judging.judgment as base

    key = cache_key(SETTINGS, "p", [NAT])
    monkeypatch.setattr(base, "__version__", "9.9.9")
    assert cache_key(SETTINGS, "p", [NAT]) != key  # an answer cached by other code is not served as this code's


def test_cache_key_ignores_the_human_aspect_name():
    # `human` only says what the score is compared with; the judge never sees it
    assert cache_key(SETTINGS, "p", [Aspect("Naturalness", 1, 3, "Other")]) == cache_key(SETTINGS, "p", [NAT])


# --- the scripted judge -------------------------------------------------------------------------

def test_scripted_judge_parses_text_answers_like_a_model():
    answers = {"naturalness": "Naturalness: 2", "coherence": "I cannot say"}
    judge = ScriptedJudge(lambda prompt, aspect: answers[aspect.key], name="fixed")
    judgment = judge.judge("p", [NAT, COH])
    assert judgment.scores["naturalness"].score == 2.0
    assert judgment.scores["coherence"].score is None
    assert judgment.scores["coherence"].reason == "no Coherence score in the answer 'I cannot say'"
    assert judgment.raw == ["Naturalness: 2", "I cannot say"]
    assert judge.calls == ["p"]
    assert judge.settings == {"backend": "scripted", "model": "fixed"}


def test_a_judge_answering_for_another_aspect_leaves_the_asked_one_unscored():
    template = geval.Template.load("topicalchat-naturalness")
    judge = ScriptedJudge(lambda prompt, aspect: "Fluency: 3", name="fixed")
    [call] = template.calls(FULL_ITEM)
    score = judge.judge(call.prompt, list(call.aspects)).scores["naturalness"]
    assert score.score is None and score.reason == "the answer scores 'Fluency', not Naturalness: 'Fluency: 3'"


def test_scripted_judge_default_is_deterministic_per_prompt():
    judge = ScriptedJudge()
    one, again, other = judge.judge("p", [NAT]), judge.judge("p", [NAT]), judge.judge("q", [NAT])
    assert one.scores["naturalness"].distribution == again.scores["naturalness"].distribution
    assert one.scores["naturalness"].distribution != other.scores["naturalness"].distribution
    assert sum(one.scores["naturalness"].distribution.values()) == pytest.approx(1.0)
    assert len(judge.calls) == 3


def test_make_judge_by_backend_name():
    assert geval.make_judge("scripted").settings["backend"] == "scripted"
    with pytest.raises(JudgeError) as error:
        geval.make_judge("nope")
    assert str(error.value) == "judge backend 'nope' is unknown; use one of embedded, openai, scripted"
    with pytest.raises(JudgeError, match="judge backend 'scripted': "):
        geval.make_judge("scripted", colour="red")


@pytest.mark.parametrize("low, high", [(1, 10), (0, 100), (-1, 3), (3, 3), (1.0, 3)])
def test_an_aspect_built_in_code_is_refused_like_one_in_a_file(low, high):
    with pytest.raises(TemplateError, match=r"must be whole numbers with 0 <= min < max <= 9$"):
        Aspect("Coherence", low, high)


def test_the_embedded_judge_refuses_scores_that_are_not_one_token_each():
    from geval.judging.backends.embedded_model import score_token_ids

    def spm_like(text):  # "3" -> a space token then the digit, as SentencePiece-style vocabularies do
        return [29871, 48 + int(text)]

    model = "llama-2-7b.Q4_K_M.gguf"
    with pytest.raises(JudgeError) as error:
        score_token_ids(spm_like, COH3, model)
    assert str(error.value).startswith("llama-2-7b.Q4_K_M.gguf: the scores of Coherence (1-3) are not one distinct "
                                       "token each in this model's vocabulary ('1' -> [29871, 49]")
    with pytest.raises(JudgeError, match="not one distinct token each"):
        score_token_ids(lambda text: [7], COH3, model)  # one token, but the same for every score
    assert score_token_ids(lambda text: [100 + int(text)], COH3, model) == [[101], [102], [103]]
