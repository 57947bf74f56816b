"""The embedded judge's model as it runs in its worker process (geval/judging/worker.py): a GGUF
model through llama-cpp-python, read from its logits.

The chat template is rendered, "<Aspect>: " is prefilled as the start of the answer, and the
next-token logits are softmaxed over the score tokens: the exact distribution, no sampling. A
labelled scale (a checklist question's No/Yes) is read at the answer's first token, with nothing
prefilled, over every one-token spelling of each label, added up. Further aspects of a
multi-aspect form are read by appending the most likely score and the next "<Aspect>: ". The KV
cache is reused across prompts that share a prefix (items of one dialogue, aspects of one form).

When it is built, the model measures its speed on this machine (`info["speed"]`): a prompt
evaluated from an empty context (prefill) and single tokens (decode), for the estimates. When a
speed of this model on this machine is remembered already (geval/judging/native.py: the last load's,
or the last run's pace over its judgments), it is not measured again: `info["speed"]` is None.

Reading logits after a reused prefix gives the same distribution as a fresh evaluation up to the
rounding of llama.cpp's quantized kernels, which differs with how many tokens a forward pass
takes (a pass of one token, a leftover row of a block, a row of a block of four): up to about
0.02 in a score's probability, the same spread two fresh evaluations split differently show
(tests/test_embedded_model.py; bench/README.md has what it does to agreement).
"""

from __future__ import annotations

import os
import time

import numpy as np

from geval.errors import JudgeError, JudgmentFailed
from geval.judging.judgment import AspectScore, Judgment
from geval.judging.native import build_problems, build_features, cpu, remembered_speed, system_info
from geval.judging.aspects import Aspect

SENTINEL = "\u0000GEVAL-CONTENT\u0000"
#: The warm-up's prompt (prefill speed) and single tokens (decode speed), as tokens.
WARM_UP_TOKENS = 192
WARM_UP_STEPS = 8


class JudgeModel:
    """One llama.cpp model and context, with the token bookkeeping for prefix reuse."""

    def __init__(self, path: str, n_ctx: int, model: str = ""):
        """`model`: its name@weights, under which its speed here is remembered (measured when none is)."""
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise JudgeError("the embedded judge needs llama-cpp-python: `python -m geval doctor --build` builds it") from None
        system = system_info()
        problems = build_problems(build_features(system), cpu())
        if problems:
            raise JudgeError(problems[0])
        started = time.perf_counter()
        try:
            self.llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=cpu().cpus, n_batch=512, verbose=False)
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
        self.name = os.path.basename(path)
        self.rendered_tokens = 0
        self.evaluated_tokens = 0
        loaded = time.perf_counter() - started
        known = remembered_speed(model) if model else None
        self.info = {"speed": None if known else self._warm_up(), "load_seconds": loaded, "system": system}

    def _warm_up(self) -> dict:
        """Measure prefill and decode speed on this machine (about 3 s), then forget the tokens."""
        llm = self.llm
        text = " ".join(f"The judge reads item {n} and weighs its score." for n in range(WARM_UP_TOKENS))
        tokens = self.tokens(text, False)[:WARM_UP_TOKENS]
        llm.reset()
        llm.eval(tokens[:1])  # the weights' pages are read in once, outside the timing
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        prefill = len(tokens) / (time.perf_counter() - started)
        started = time.perf_counter()
        for token in tokens[:WARM_UP_STEPS]:
            llm.eval([token])
        decode = WARM_UP_STEPS / (time.perf_counter() - started)
        llm.reset()
        return {"prefill": prefill, "decode": decode, "measured": time.time()}

    def tokens(self, text: str, special: bool) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def score_ids(self, aspect: Aspect) -> list[list[int]]:
        """The token ids of each score of the aspect's scale (`score_token_ids`)."""
        return score_token_ids(lambda text: self.tokens(text, False), aspect, self.name)

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

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        """Read each aspect's score distribution from the next-token logits after 'Aspect: '."""
        tokens = self.chat_tokens(prompt)
        n_prompt = len(tokens)
        scores, filled = {}, []
        for aspect in aspects:
            # a form line is prefilled ("Naturalness: "); a labelled answer (Yes/No) is the answer's first word
            tokens = tokens + self.tokens("" if aspect.labels else f"{aspect.name}: ", False)
            logits = self.next_logits(tokens).astype(np.float64)
            weights = np.exp(logits - logits.max())
            mass = np.array([weights[ids].sum() for ids in self.score_ids(aspect)])
            result = AspectScore.from_distribution(dict(zip(aspect.scale, (mass / mass.sum()).tolist())))
            result.coverage = float(mass.sum() / weights.sum())
            scores[aspect.key] = result
            best = aspect.answer(aspect.scale[int(np.argmax(mass))])
            filled.append(f"{aspect.name}: {best}")
            tokens = tokens + self.tokens(f"{best}\n", False)
        return Judgment(scores, ["\n".join(filled)], prompt_tokens=n_prompt, completion_tokens=len(aspects))

    def generate(self, prompt: str, max_tokens: int) -> str:
        """Greedy free text, e.g. the evaluation steps of auto chain-of-thought."""
        answer = self.llm.create_chat_completion(
            messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0.0
        )
        return answer["choices"][0]["message"]["content"] or ""

    def counters(self) -> dict[str, int]:
        """Tokens rendered and evaluated so far (evaluated / rendered: what prefix reuse saved)."""
        return {"rendered": self.rendered_tokens, "evaluated": self.evaluated_tokens}

    def prompt_tokens(self, prompt: str) -> int:
        """How many tokens the chat-formatted prompt is."""
        return len(self.chat_tokens(prompt))

    def forget(self) -> None:
        """Forget every cached token: the next prompt is evaluated from its first token."""
        self.llm.reset()


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
