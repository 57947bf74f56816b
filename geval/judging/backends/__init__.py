"""Judge backends, registered by name and imported lazily. A new backend is one module + one line."""

from __future__ import annotations

import importlib

from geval.errors import JudgeError
from geval.judging.judgment import Judge

BACKENDS = {
    "embedded": ("geval.judging.backends.embedded", "EmbeddedJudge"),
    "openai": ("geval.judging.backends.openai", "OpenAIJudge"),
    "scripted": ("geval.judging.backends.scripted", "ScriptedJudge"),
}


def make_judge(backend: str = "embedded", **options) -> Judge:
    """Create a judge by backend name; `options` go to its constructor (e.g. model, base_url)."""
    if backend not in BACKENDS:
        raise JudgeError(f"judge backend '{backend}' is unknown; use one of {', '.join(BACKENDS)}")
    module_name, class_name = BACKENDS[backend]
    cls = getattr(importlib.import_module(module_name), class_name)
    try:
        return cls(**{k: v for k, v in options.items() if v is not None})
    except TypeError as exc:
        raise JudgeError(f"judge backend '{backend}': {exc}") from None
