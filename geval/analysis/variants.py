"""Score variants of one run, read from what is stored: no model is queried again.

| variant | score of a judgment |
|---|---|
| `wmean` | G-EVAL's probability-weighted mean sum p(s) * s: the stored score |
| `argmax` | the most probable score of the stored distribution (the lowest of tied ones): what a greedy answer would say |
| `samples` | the mean of the parsed sampled answers (seed 001, G-EVAL with n = 20), optionally of the first `k` only; sampled judges only (`--judge openai --mode samples`) |

For a sampled judgment the stored distribution is the samples' relative frequency, so
`wmean` is already the n-sample mean; `samples` with `k` shows what fewer samples give.
Unscored and failed judgments stay NaN in every variant.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from geval.errors import GevalError
from geval.store import Store
from geval.store.records import most_probable

VARIANTS = {
    "wmean": "probability-weighted mean (G-EVAL; the stored score)",
    "argmax": "most probable score of the stored distribution",
    "samples": "mean of the sampled answers (sampled judges only)",
}


#: The OpenAI modes whose judgments may hold sampled answers (`auto`: when logprobs are refused).
SAMPLED_MODES = ("samples", "auto")


def readable(signature_json: str) -> tuple[str, ...]:
    """The variants a judge's stored judgments can be read in, from its signature's fields: `samples` only for a
    judge that samples; an imported judge's point distributions read the same score in `wmean` and `argmax`."""
    fields = json.loads(signature_json or "{}")
    return tuple(v for v in VARIANTS if v != "samples" or fields.get("mode") in SAMPLED_MODES)


class VariantError(GevalError):
    """A score variant is unknown, or cannot be read from these judgments (e.g. no samples)."""


def with_samples(store: Store, frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with a column `samples`: each judgment's parsed sampled scores, read from the
    call cache ([] for judgments read from logits, unscored or failed ones)."""
    calls: dict[str, object] = {}
    samples = []
    for key, aspect in zip(frame["call_key"], frame["aspect"]):
        if not isinstance(key, str) or not key:
            samples.append([])
            continue
        if key not in calls:
            calls[key] = store.cached_call(key)
        judgment = calls[key]
        score = judgment.scores.get(aspect) if judgment is not None else None
        samples.append(list(score.samples) if score is not None else [])
    return frame.assign(samples=samples)


def variant_scores(frame: pd.DataFrame, variant: str = "wmean", k: int | None = None) -> pd.Series:
    """One score per judgment (row) of `frame` in the chosen variant, NaN where unscored.

    `frame` is a judgments table (`Store.judgments`, `geval.scored_items`); `samples` needs
    its column `samples` (`with_samples`). Raises VariantError when the variant is unknown,
    or `samples` is asked of judgments that were not sampled.
    """
    if variant not in VARIANTS:
        raise VariantError(f"score variant '{variant}' is unknown; use one of {', '.join(VARIANTS)}")
    scored = frame["status"] == "ok" if "status" in frame else frame["score"].notna()
    if variant == "wmean":
        return frame["score"].astype(float).where(scored)
    if variant == "argmax":
        kept = frame["most_probable"].to_numpy(float) if "most_probable" in frame else \
            most_probable(frame["distribution"].tolist())  # kept beside each distribution since schema 19
        return pd.Series(np.where(scored, kept, math.nan), index=frame.index, dtype=float)
    if "samples" not in frame:
        raise VariantError("the 'samples' variant needs each judgment's samples: pass the frame through "
                           "geval.analysis.variants.with_samples(store, frame) first")
    if k is not None and k < 1:
        raise VariantError(f"k = {k}: take at least one sample")
    sampled = [bool(s) for s, ok in zip(frame["samples"], scored) if ok]
    if not any(sampled):
        signature = frame["signature"].iloc[0] if "signature" in frame and len(frame) else "?"
        raise VariantError(
            f"the judgments of {signature} hold no samples (their distributions were read from logits or "
            f"logprobs): the n-sample mean needs a sampled judge, e.g. --judge openai --mode samples"
        )
    return pd.Series([float(np.mean(s[:k])) if ok and s else math.nan for s, ok in zip(frame["samples"], scored)],
                     index=frame.index, dtype=float)
