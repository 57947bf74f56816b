"""Named exceptions. Every message names the bad value and says what to do."""

from __future__ import annotations


class GevalError(Exception):
    """Base class: anything the user can fix, shown as one line without a traceback."""


class DatasetError(GevalError):
    """A dataset file is missing, malformed, or does not match the requested layout."""


class TemplateError(GevalError):
    """A prompt template has a bad header or an unknown or missing placeholder."""


class JudgeError(GevalError):
    """A judge could not be created or could not answer (after its retries)."""


class StoreError(GevalError):
    """The SQLite store is missing something that was asked for."""


class LabelError(GevalError):
    """A label or a labels file is malformed, or names an item or aspect that is not there."""


class WeightsError(GevalError):
    """A model's weights (the judge's GGUF, the sentence encoder's) could not be found, assembled or verified."""


class BaselineError(GevalError):
    """A baseline metric is unknown, or its package or model is missing."""


class WorkerDied(GevalError):
    """A native model's worker process crashed, was killed or hung (geval/judging/worker.py): the
    message names which and what to do. What was finished before is stored; the next call starts
    a fresh worker."""


class JudgmentFailed(GevalError):
    """One judgment could not be made (timeout, rate limit, server error after retries,
    a prompt too long). It is recorded as failed with this reason and the run goes on."""


class JudgeUnreachable(JudgeError):
    """The judge's server is not there (connection refused, host not found): every call would
    fail the same way, so the run stops at the first (stored as failed, with this line)."""


def shown(value: object, limit: int = 80) -> str:
    """A value as it goes into a one-line message: text as is when it is one printable line,
    else its repr; clipped to `limit` characters either way."""
    text = value if isinstance(value, str) and value.isprintable() else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
