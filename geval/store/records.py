"""The rows a judgment becomes in the store's judgments table: its identity and its columns."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Iterable, Sequence

import numpy as np
import orjson

from geval.judging.judgment import AspectScore, Judgment
from geval.processes import cycles_uncollected


def judgment_id(item_id: str, template_version: str, signature: str, aspect: str) -> str:
    """The identity of one judgment: same item, template, judge and aspect = same row."""
    return hashlib.sha256("\x1f".join((item_id, template_version, signature, aspect)).encode()).hexdigest()[:24]


def judgment_rows(base: dict, key: str, judgment: Judgment, signed: tuple[str, str],
                  keep: Iterable[tuple[str, str]] | None = None, detail: str = "") -> list[dict]:
    """The item's rows of an answer, `signed` (signature string, JSON text): for each (answer
    key, stored key) of `keep` (default: every aspect answered, under its own key), one row."""
    pairs = keep if keep is not None else [(aspect, aspect) for aspect in judgment.scores]
    return [_row(base, stored, judgment.scores[asked], key, signed, detail) for asked, stored in pairs]


def score_rows(base: dict, scores: dict[str, AspectScore], keys: dict[str, str | None], signed: tuple[str, str],
               detail: str = "") -> list[dict]:
    """Rows of scores made from several answers (a checklist's aspects, a batch's orders):
    `keys` gives each one's first answer's call key (None when it has none)."""
    return [_row(base, stored, score, keys.get(stored), signed, detail) for stored, score in scores.items()]


def failed_rows(base: dict, keys: Iterable[str], reason: str, signed: tuple[str, str], detail: str = "") -> list[dict]:
    """Failed judgment rows, one per stored key: no call, so the next run asks for them again."""
    now = time.time()
    return [
        {**base, "id": judgment_id(base["item_id"], base["template_version"], signed[0], key),
         "signature": signed[0], "signature_json": signed[1], "aspect": key, "call_key": None,
         "status": "failed", "score": None, "distribution": "{}", "reason": reason, "detail": detail, "created": now}
        for key in keys
    ]


def _row(base: dict, stored: str, score: AspectScore, key: str | None, signed: tuple[str, str], detail: str) -> dict:
    return {**base, "id": judgment_id(base["item_id"], base["template_version"], signed[0], stored),
            "signature": signed[0], "signature_json": signed[1], "aspect": stored, "call_key": key,
            "status": "ok" if score.score is not None else "unscored", "score": score.score,
            "distribution": json.dumps(score.distribution), "reason": score.reason, "detail": detail,
            "created": time.time()}


def parsed(text: str):
    """Stored JSON text read (a baseline's scores on a million items, a million distributions joined): by orjson,
    twice as fast as `json.loads` and the same values; by `json` where orjson refuses the text (NaN or Infinity,
    which `json.dumps` writes). The cycle collector paused meanwhile (`cycles_uncollected`: a million dicts made,
    each full collection walked every object alive: 2.9 s to 1.0 s of a million distributions' most probable
    scores, a report's dataset read)."""
    with cycles_uncollected():
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return json.loads(text)


#: Distributions `most_probable` parses at a time (a million at once: their texts, a dict each, 550 MB for a moment).
PARSED_AT_A_TIME = 50_000


def most_probable(texts: Sequence[str | None]) -> np.ndarray:
    """The most probable score of each stored distribution (JSON text; the lowest of tied ones), NaN for none:
    what `judgments.most_probable` keeps beside it. PARSED_AT_A_TIME of them at a time, each part parsed in one go,
    then read as a matrix (a row per text, a column per score)."""
    return np.concatenate([np.zeros(0), *(_most_probable(list(texts[start:start + PARSED_AT_A_TIME]))
                                          for start in range(0, len(texts), PARSED_AT_A_TIME))])


def _most_probable(texts: list[str | None]) -> np.ndarray:
    distributions = parsed(f"[{','.join(text or '{}' for text in texts)}]")
    points = sorted(set().union(*distributions), key=int)  # lowest score first: the first maximum is the lowest
    if not points:                                          # of tied ones
        return np.full(len(texts), math.nan)
    values = np.array([[found.get(point, math.nan) for found in distributions] for point in points], dtype=float).T
    known = ~np.isnan(values)
    best = np.where(known, values, -np.inf).max(axis=1, keepdims=True)
    first = np.argmax(known & (values == best), axis=1)
    return np.where(known.any(axis=1), np.array([int(p) for p in points], dtype=float)[first], math.nan)


#: How `baseline_results.score_values` keeps a baseline's scores: float64, little-endian.
SCORE_VALUES = np.dtype("<f8")


def score_values(scores: Iterable[float | None]) -> bytes:
    """A baseline's scores as `baseline_results.score_values` keeps them, in their order (None: NaN)."""
    return np.array([math.nan if score is None else score for score in scores], dtype=SCORE_VALUES).tobytes()
