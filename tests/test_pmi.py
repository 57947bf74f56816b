"""geval.analysis.likelihood and the `pmi` baseline: what a response is read after, the cut to the
context window, NaN where there is no context, one read of each conversation, the cache (old
baselines' keys unchanged). The real GGUF model is used in the tests marked `model`."""

from __future__ import annotations

import math
import re
from importlib import metadata

import numpy as np
import pytest
from helpers import run_cli

import geval
from geval.analysis import likelihood
from geval.analysis.baselines import METRICS, compute_baselines
from geval.analysis.leaderboard import leaderboard
from geval.analysis.likelihood import LanguageModel, fit, label_of, likelihood_gains, prompt_of, reusable_prefix
from geval.data.items import Turn, make_item

LIKELY, UNLIKELY = math.log(0.5), math.log(0.01)


class WordModel(LanguageModel):
    """A stand-in for the GGUF model: a token is a word, likely (1/2) where it was said before (in
    the prompt or earlier in the continuation), else unlikely (1/100). It keeps a KV cache as the
    real model does (and counts what it evaluates) and records every prompt it reads after."""

    def __init__(self, n_ctx: int = 64):
        self.settings = {"model": "words", "ctx": n_ctx}
        self.n_ctx = n_ctx
        self.vocabulary: dict[str, int] = {}
        self.cached: list[int] = []
        self.evaluated_tokens = 0
        self.prompts: list[str] = []

    def tokenize(self, text: str) -> list[int]:
        return [self.vocabulary.setdefault(word, len(self.vocabulary)) for word in text.split()]

    def words(self, tokens: list[int]) -> str:
        names = {index: word for word, index in self.vocabulary.items()}
        return " ".join(names[t] for t in tokens)

    def logprobs(self, prompt: list[int], continuation: list[int]) -> np.ndarray:
        tokens = prompt + continuation
        shared = reusable_prefix(self.cached, prompt, continuation)
        self.evaluated_tokens += len(tokens) - 1 - shared
        self.cached = tokens[:-1]
        self.prompts.append(self.words(prompt))
        return np.array([LIKELY if token in tokens[:len(prompt) + k] else UNLIKELY
                         for k, token in enumerate(continuation)])


def turn(context: list[tuple[str, str]], response: str, **fields):
    return make_item("t", fields.pop("level", "turn"), [Turn(s, t) for s, t in context], response, **fields)


CATS = [("A", "do you like cats"), ("B", "yes i do"), ("A", "why")]


@pytest.mark.parametrize("item, prompt", [
    (turn(CATS, "cats are soft"), "A: do you like cats\nB: yes i do\nA: why\nB:"),  # whoever spoke two turns ago
    (turn([("User", "hi there")], "hello"), "User: hi there\nResponse:"),  # one turn: the next speaker is unknown
    (turn([("", "hi"), ("", "hello")], "how are you"), "hi\nhello\nResponse:"),  # turns without speakers
    (turn([("Dr\nWho", "hi"), ("A", "hello")], "hey"), "Dr\nWho: hi\nA: hello\nDr Who:"),  # a label is one line
    (turn([], "a short summary", level="summary", grounding="the long document"), "the long document\nSummary:"),
    (turn([], "a short summary", level="summary"), ""),  # a summary without its document
    (turn(CATS, "", level="dialogue"), ""),  # a whole dialogue (FED): no response to read
    (turn(CATS, "   "), ""),
    (turn([], "a turn without context"), ""),
])
def test_what_a_response_is_read_after(item, prompt):
    assert prompt_of(item) == prompt
    if prompt:
        assert label_of(prompt) == prompt.split("\n")[-1]


def test_the_conversation_is_cut_from_the_left_and_the_response_keeps_its_start():
    prompt, response = list(range(10)), [100, 101, 102]
    assert fit(prompt, response, 8) == ([5, 6, 7, 8, 9], [100, 101, 102])  # the label (9) stays
    assert fit(prompt, response, 64) == (prompt, response)
    assert fit(prompt, list(range(100, 110)), 8) == ([6, 7, 8, 9], [100, 101, 102, 103])  # half the window each


def test_the_gain_is_summed_over_the_response_and_what_was_cut_is_not_read():
    model = WordModel()
    item = turn(CATS, "cats again and again")
    gain = likelihood_gains([item.response], [prompt_of(item)], model)[0]
    # 'cats' was said in the conversation: likely after it, unlikely after 'B:' alone; the second
    # 'again' is likely in both reads: the gain is the sum over the response's words
    assert gain == pytest.approx(LIKELY - UNLIKELY)
    assert model.prompts == ["A: do you like cats B: yes i do A: why B:", "B:"]
    small = WordModel(n_ctx=10)  # 10 - 4 response words: the conversation keeps its last 6 words, without 'cats'
    assert likelihood_gains([item.response], [prompt_of(item)], small)[0] == pytest.approx(0.0)
    assert small.prompts[0] == "yes i do A: why B:"


def test_nan_without_a_context_or_a_response():
    gains = likelihood_gains(["cats", "", "cats"], ["A: cats\nB:", "A: cats\nB:", ""], WordModel())
    assert gains[0] == pytest.approx(LIKELY - UNLIKELY) and np.isnan(gains[1]) and np.isnan(gains[2])


def test_the_responses_of_one_conversation_are_read_one_after_the_other():
    other = [("A", "the weather is bad"), ("B", "very bad"), ("A", "rain")]
    items = [turn(CATS, "cats"), turn(other, "rain again"), turn(CATS, "dogs"), turn(other, "sun")]
    model = WordModel()
    gains = likelihood_gains([i.response for i in items], [prompt_of(i) for i in items], model)
    conversations = [p for p in model.prompts if p != "B:"]
    assert conversations == [prompt_of(items[0]).replace("\n", " ")] * 2 + [prompt_of(items[1]).replace("\n", " ")] * 2
    # the first conversation's 12 words (the last response word is never evaluated: nothing follows it), then
    # its second response costs 1 (the conversation's last word, re-read for its logits); the second
    # conversation shares only 'A:' with the first: 10 words + 'rain', then 1; then each response after 'B:'
    assert model.evaluated_tokens == 12 + 1 + 11 + 1 + (1 + 1 + 2 + 1)
    alone = [likelihood_gains([i.response], [prompt_of(i)], WordModel())[0] for i in items]
    assert gains == pytest.approx(alone)


def test_the_reads_say_the_tokens_to_evaluate_first_then_how_far_they_are_with_an_eta(monkeypatch):
    """A likelihood gain takes minutes on a slow machine (60 responses: 8 min on a 2-core VM, once without a
    line between the first and the last): it says the tokens it will evaluate (the count the model then
    evaluates), then how far it is, every SAY_EVERY seconds, with the time left at its pace."""
    monkeypatch.setattr(likelihood, "SAY_EVERY", 0.0)
    other = [("A", "the weather is bad"), ("B", "very bad"), ("A", "rain")]
    items = [turn(CATS, "cats"), turn(other, "rain again"), turn(CATS, "dogs"), turn(other, "sun")]
    model, said = WordModel(), []
    likelihood_gains([i.response for i in items], [prompt_of(i) for i in items], model, said.append)
    assert said[0] == ("likelihood gain: 4 responses to read after 2 contexts and after their speaker's label "
                       f"alone: about {model.evaluated_tokens} tokens to evaluate")
    assert [line.split(",")[0] for line in said[1:-1]] == [f"likelihood gain: {k} of 8 reads" for k in range(1, 8)]
    assert all(re.search(r"of about 30 tokens evaluated, \ds elapsed, ETA (\ds|\?)$", line) for line in said[1:-1])
    assert said[-1].startswith("likelihood gain: 4 responses after 2 contexts: 30 tokens evaluated in ")
    said.clear()  # the same model again (the app's, kept): this call's tokens, not the model's since it was made
    likelihood_gains([i.response for i in items], [prompt_of(i) for i in items], model, said.append)
    assert said[-1].startswith("likelihood gain: 4 responses after 2 contexts: 30 tokens evaluated in ")


def test_the_pmi_baseline_signature_reference_and_nan_rules(store):
    items = [turn(CATS, "cats are soft", group="d1"), turn(CATS, "trains go fast", group="d1"),
             turn(CATS, "", level="dialogue", group="d1")]
    result = compute_baselines(items, ["pmi"], layout="fed", store=store, language_model=WordModel())[0]
    assert result.signature == ("likelihood-gain|model:words|read:sum-logprob-gain|"
                                "format:speaker-lines+next-label,no-chat-template|cut:conversation-left|ctx:64|"
                                "ref:context")
    assert result.signature_json["read"] == "sum-logprob-gain" and result.reference == "context"
    assert result.note.startswith("log P(response | context) - log P(response | speaker label), summed")
    assert result.scores.iloc[0] == pytest.approx(LIKELY - UNLIKELY) and result.scores.iloc[1] == 0.0
    assert np.isnan(result.scores.iloc[2])
    summaries = [turn([], "the cat sat", level="summary", grounding="a cat sat on a mat")]
    result = compute_baselines(summaries, ["pmi"], layout="summeval", language_model=WordModel())[0]
    assert result.reference == "document" and result.signature.endswith("|ref:document")
    assert result.scores.iloc[0] == pytest.approx(2 * (LIKELY - UNLIKELY))  # 'cat' and 'sat' were in the document


def test_pmi_is_offered_wherever_baselines_are_and_is_not_fast():
    from geval.analysis.baselines import FAST

    assert "pmi" in geval.OPTIONS.baselines and "pmi" not in FAST
    assert METRICS["pmi"].title == "likelihood-gain"
    for command in ("leaderboard", "report"):
        done = run_cli(command, "--help")
        said = " ".join(done.stdout.split())
        assert done.returncode == 0 and ",embedding,bertscore,pmi, or 'none' (default: rouge-l,bleu,chrf,length," in said
        # offered, not run unasked: the model-based ones ran the embedded model over every response by default


def test_old_baselines_are_served_from_their_old_cache_keys(store):
    """The keys the baselines were cached under before `pmi` (hard-coded): served, not recomputed."""
    from test_baselines import BagOfWords

    context = [("A", "do you like cats"), ("B", "yes i do")]
    items = [turn(context, "cats are great pets", grounding="cats are mammals", group="d1"),
             turn(context, "i prefer dogs", grounding="cats are mammals", group="d1")]
    store.save_baseline_scores("length|unit:words|tok:whitespace", {
        "f3ed8e00109538156c4ffe3c28a82e770ce192cbb37504aef0b3b88d43500281": 40.0,
        "f801edaf94754e5b604f9da3b6a2a12e99b410bde41c794d4505ebdb50680fca": 30.0})
    store.save_baseline_scores("embedding-cosine|model:bag-of-words|dim:64|ref:fact", {
        "b41924e1324604fa80da00c212142f4259f4f6040f0233bf59ae1a885a66971d": 0.25,
        "c78ce0c6190187af9aecd0d5532f38862711bb1342d8576df4935dda0665eb5d": 0.5})
    embedder = BagOfWords()
    length, embedding = compute_baselines(items, ["length", "embedding"], store=store, embedder=embedder)
    assert length.scores.tolist() == [40.0, 30.0] and embedding.scores.tolist() == [0.25, 0.5]
    assert embedder.seen == []


def test_the_leaderboard_has_a_pmi_row(tmp_path):
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset("topicalchat_usr_sample")
    store.save_dataset(dataset)
    board = leaderboard(store, dataset.name, baselines=["pmi"], ceiling=False, n_boot=30, language_model=WordModel())
    row = board.rows.set_index("row").loc["likelihood-gain (vs context)"]
    assert row["signature"].startswith("likelihood-gain|model:words|") and row["reference"] == "context"
    values = board.values("pearson").loc["likelihood-gain (vs context)"]
    assert np.isfinite(values[["Natural", "Maintains Context", "Engaging", "Uses Knowledge"]]).all()
    store.close()


# --- the real model ------------------------------------------------------------------------------------------------


QUESTION = [("A", "Hello, I have a geography question."), ("B", "Sure, what is it?"),
            ("A", "What is the capital of France?")]


@pytest.mark.model
@pytest.mark.timeout(600)
def test_a_response_that_continues_the_conversation_gains_more(tmp_path, monkeypatch):
    items = [turn(QUESTION, "Paris is the capital of France.", group="d1"),
             turn(QUESTION, "My favourite band is playing tonight.", group="d1"),
             turn(QUESTION[-1:], "Paris is the capital of France.", group="d2"),
             turn(QUESTION[-1:], "My favourite band is playing tonight.", group="d2")]
    store = geval.Store(tmp_path / "store.sqlite")
    messages = []
    result = compute_baselines(items, ["pmi"], store=store, on_progress=messages.append)[0]
    assert result.signature == (
        "likelihood-gain|model:qwen2.5-coder-1.5b-instruct-q4_k_m|weights:cc324af070c2|read:sum-logprob-gain|"
        "format:speaker-lines+next-label,no-chat-template|cut:conversation-left|ctx:2048|"
        f"llama-cpp-python:{metadata.version('llama-cpp-python')}|ref:context")
    paris, band, paris_alone, band_alone = result.scores
    assert paris > band + 5 and paris_alone > band_alone + 5 and paris > 5
    assert messages[-1].startswith("likelihood gain: 4 responses after 2 contexts: ")
    # read one by one (no prefix shared with the previous read), the gains are the same but for the noise
    # of llama.cpp's quantized kernels, which differ with the tokens of a batch (up to ~0.25 per token)
    model = likelihood.GGUFLanguageModel()
    for item, gain in zip(items, result.scores):
        model.forget()  # no prefix is shared with the read before
        assert likelihood_gains([item.response], [prompt_of(item)], model)[0] == pytest.approx(gain, abs=1.0)

    def no_model(*args):
        raise AssertionError("the model was loaded although every score was cached")

    monkeypatch.setattr(likelihood, "worker", no_model)
    again = compute_baselines(items, ["pmi"], store=store)[0]
    assert again.scores.equals(result.scores) and again.signature == result.signature
    store.close()
