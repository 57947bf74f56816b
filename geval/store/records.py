"""The rows a judgment becomes in the store's judgments table: its identity and its columns."""

from __future__ import annotations

import hashlib
import json
import time

from geval.judging.judgment import Judgment


def judgment_id(item_id: str, template_version: str, signature: str, aspect: str) -> str:
    """The identity of one judgment: same item, template, judge and aspect = same row."""
    return hashlib.sha256("\x1f".join((item_id, template_version, signature, aspect)).encode()).hexdigest()[:24]


def judgment_rows(base: dict, key: str, judgment: Judgment, signed: tuple[str, str]) -> list[dict]:
    """One judgments row per aspect of an answer, `signed` (signature string, JSON text)."""
    now = time.time()
    return [
        {**base, "id": judgment_id(base["item_id"], base["template_version"], signed[0], aspect),
         "signature": signed[0], "signature_json": signed[1], "aspect": aspect, "call_key": key,
         "status": "ok" if s.score is not None else "unscored", "score": s.score,
         "distribution": json.dumps(s.distribution), "reason": s.reason, "created": now}
        for aspect, s in judgment.scores.items()
    ]


def failed_rows(base: dict, aspects, reason: str, signed: tuple[str, str]) -> list[dict]:
    """Failed judgment rows: no call, so the next run asks for them again."""
    now = time.time()
    return [
        {**base, "id": judgment_id(base["item_id"], base["template_version"], signed[0], a.key),
         "signature": signed[0], "signature_json": signed[1], "aspect": a.key, "call_key": None,
         "status": "failed", "score": None, "distribution": "{}", "reason": reason, "created": now}
        for a in aspects
    ]
