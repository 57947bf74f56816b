"""The default judge: a local GGUF model through llama-cpp-python, read from its logits.

The model runs in a worker process (geval/judging/worker.py; the model's side is
`embedded_model.JudgeModel`): prompts go in, score distributions come out, and a crash, a kill or
a hang in llama.cpp ends the run with one line (`WorkerDied`) instead of the caller's process.
One worker per model and context size serves every judge of this process, one call at a time;
its KV cache keeps the prefix prompts share (items of one dialogue, aspects of one form).

The worker measures the model's speed on this machine when it first starts here (prefill and decode
tokens per second), and the time each load takes; a run measures its own judgments' pace and tells it
to the judge (`note_speed`). Estimates use the newest of these, remembered for estimates made before
the model is loaded again (geval/judging/native.py); a model whose speed is remembered loads without
measuring it again (a few seconds saved on every load, more on a busy machine).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from geval.errors import JudgeError
from geval.judging import build as llama_build
from geval.judging import checkup
from geval.judging.judgment import Judgment, approx_tokens
from geval.judging.native import Speed, remember_speed, remembered_speed
from geval.judging.aspects import Aspect
from geval.judging.weights import gguf_model
from geval.judging.worker import Worker, end, running, worker

TARGET = "geval.judging.backends.embedded_model:JudgeModel"
#: Seconds a call may take beyond its estimate before the worker counts as hung.
HANG_SECONDS = 120.0
#: How many times its estimate a call may take before the worker counts as hung (a busy machine
#: is slower than the speed measured when the model was loaded).
HANG_FACTOR = 20.0


class EmbeddedJudge:
    """A GGUF model on this machine. Default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M from PyPI parts."""

    #: Seconds a call takes, for estimates before its speed was measured on this machine.
    seconds_per_call = 3.0
    #: Seconds loading the model takes (its worker started), before it was measured on this machine.
    seconds_to_load = 40.0
    name = "the embedded judge"

    def __init__(self, model_path: str | Path | None = None, n_ctx: int = 8192):
        self.path, name, weights = gguf_model(model_path, JudgeError)
        self.n_ctx = n_ctx
        self.settings = {"backend": "embedded", "model": name, "weights": weights, "mode": "logits"}
        self._options = {"path": str(self.path), "n_ctx": n_ctx, "model": self.model_key}

    @property
    def worker(self) -> Worker:
        """The worker process holding the model (started, and the model loaded, on first use)."""
        found = worker(TARGET, self._options, self.name, "judge")
        if not found.info.get("remembered"):  # its speed as measured now, or as known, with this load's time
            measured = found.info.get("speed")
            speed = Speed(**measured) if measured else remembered_speed(self.model_key)
            if speed is not None:
                remember_speed(self.model_key, replace(speed, load=found.load_seconds))
            found.info["remembered"] = True
        return found

    @property
    def model_key(self) -> str:
        """The model as its speed is remembered: name@weights."""
        return f"{self.settings['model']}@{self.settings['weights']}"

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded already (in a live worker of this process)."""
        return running(TARGET, self._options) is not None

    def load(self) -> None:
        """Start the worker and load the model now (it is otherwise loaded by the first call)."""
        _ = self.worker

    def unload(self) -> bool:
        """End the worker now, freeing the model's memory (the next call loads it again; it otherwise
        stays loaded until idle for a while); False when it was not loaded or is in a call."""
        return end(TARGET, self._options)

    @property
    def speed(self) -> Speed | None:
        """The model's speed on this machine, as last measured here: by the running worker as it
        loaded the model, or over a run's judgments since (None when it was never measured here)."""
        live = running(TARGET, self._options)
        measured = [Speed(**live.info["speed"])] if live is not None and live.info.get("speed") else []
        known = remembered_speed(self.model_key)
        return max([*measured, *([known] if known else [])], key=lambda speed: speed.measured, default=None)

    def note_speed(self, speed: Speed) -> None:
        """Keep the speed a run measured over its judgments: the newest estimate of this model's pace
        here (with the load time last measured, when `speed` has none)."""
        known = remembered_speed(self.model_key)
        remember_speed(self.model_key, speed if speed.load or known is None else replace(speed, load=known.load))

    @property
    def load_seconds(self) -> float:
        """The time loading the model takes here: as last measured on this machine, else the stated default."""
        known = remembered_speed(self.model_key)
        return known.load if known is not None and known.load else self.seconds_to_load

    def call_seconds(self, new_tokens: float, aspects: int, speed: Speed | None = None) -> float:
        """The time a call takes that evaluates `new_tokens` tokens its prompt does not share with
        the one before, reading `aspects` scores (one forward pass each), at `speed` (this model's
        on this machine; the stated default per call when it was never measured)."""
        speed = speed or self.speed
        return self.seconds_per_call if speed is None else speed.seconds(new_tokens, aspects)

    def _limit(self, prompt: str, aspects: int) -> float:
        """Seconds a call may take before the worker counts as hung."""
        return HANG_SECONDS + HANG_FACTOR * self.call_seconds(approx_tokens(prompt), aspects)

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        """Each aspect's score distribution, read from the next-token logits after 'Aspect: '."""
        return self.worker.call("judge", prompt, aspects, seconds=self._limit(prompt, len(aspects)))

    def generate(self, prompt: str, max_tokens: int = 256) -> str:
        """Greedy free text, e.g. the evaluation steps of auto chain-of-thought."""
        return self.worker.call("generate", prompt, max_tokens, seconds=self._limit(prompt, max_tokens))

    def counters(self) -> dict[str, int]:
        """Tokens the model was given and evaluated since it was loaded (prefix reuse's saving)."""
        return self.worker.call("counters", seconds=HANG_SECONDS)

    def prompt_tokens(self, prompt: str) -> int:
        """How many tokens the chat-formatted prompt is, by this model's tokenizer."""
        return self.worker.call("prompt_tokens", prompt, seconds=HANG_SECONDS)

    def check(self, on_step: checkup.OnStep = checkup.ignore) -> checkup.Checkup:
        """Whether this judge works on this machine: versions, CPU and llama.cpp build, the model
        file, a test judgment in its worker and the speed measured (`python -m geval doctor`);
        `on_step` hears each step as it begins. The model stays loaded for the runs after it."""
        return checkup.embedded(self, on_step)

    def build(self, start: bool = False) -> llama_build.Build:
        """The llama.cpp build this judge runs on, as it stands (a new machine builds it in the
        background: geval/judging/build.py); with `start`, its build started if it is not installed."""
        return llama_build.start() if start else llama_build.status()

    def forget(self) -> None:
        """Empty the model's KV cache: the next prompt is evaluated from its first token."""
        self.worker.call("forget", seconds=HANG_SECONDS)
