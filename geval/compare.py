"""Judge against people item by item, and two judges (or template versions) against each other.

- `disagreements`: one row per judgment with the judge and the human score on a common 0-1
  scale (judge by its template scale, human by the range observed in the dataset) and their
  absolute difference, for finding the items where the judge is most wrong;
- `paired_difference`: does template/judge B agree with people better than A on the *same*
  items? The difference of the two correlations with a paired bootstrap over groups
  (dialogues, documents), a 95% CI and a bootstrap p-value, plus Williams' test;
- `williams_test`: Williams' t for two dependent correlations that share the human variable
  (Steiger 1980, eq. 7).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from geval.agreement import human_aspect_for, normalized, scored_items
from geval.errors import StoreError, TemplateError
from geval.items import Item
from geval.stats import LEVELS as AGREEMENT_LEVELS
from geval.stats import METRICS, MIN_GROUPS, correlate, group_members, interval_note
from geval.store import Store
from geval.templates import Template

MIN_COMMON_ITEMS = 3
__all__ = ["AGREEMENT_LEVELS", "Comparison", "compare_combos", "disagreements", "human_ranges", "mapped_humans",
           "paired_difference", "scored_combos", "template_for", "williams_test"]


@dataclass(frozen=True)
class Comparison:
    """B minus A: how much better (positive) or worse B's scores correlate with the human ones.

    `a` and `b` are the two correlations on the common items, `difference` = b - a with its
    paired-bootstrap 95% CI [`low`, `high`] and two-sided bootstrap p-value. `williams_t` is
    signed like `difference` (positive when B agrees better); Williams' test treats items as
    independent, so with several items per group its p-value is optimistic; trust the
    bootstrap, which resamples whole groups. Both are NaN where undefined (Kendall, n < 4).
    """

    metric: str
    a: float
    b: float
    difference: float
    low: float
    high: float
    p_bootstrap: float
    williams_t: float
    williams_p: float
    n_items: int
    n_groups: int
    note: str = ""  # why the interval and p-value are missing, when they are


def format_p(p: float) -> str:
    """A p-value as reports print it: "< 0.001" below 0.001 (a bootstrap p of 0 only means below
    1 / resamples), "–" when undefined, else three decimals."""
    if p is None or not math.isfinite(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Williams' t and its two-sided p (df = n - 3) for H0: r12 = r13 (Steiger 1980, eq. 7).

    Variable 1 is shared: r12 = corr(human, A), r13 = corr(human, B), r23 = corr(A, B).
    t > 0 when A correlates more with the human scores than B. NaN when n < 4 or an input is NaN.

        t = (r12 - r13) * sqrt((n - 1)(1 + r23))
            / sqrt(2 (n - 1)/(n - 3) |R| + rbar^2 (1 - r23)^3)
        |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,   rbar = (r12 + r13) / 2
    """
    nan = float("nan")
    if n < 4 or not all(math.isfinite(r) for r in (r12, r13, r23)):
        return nan, nan
    if r12 == r13:
        return 0.0, 1.0
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    denominator = 2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3
    if not denominator > 0:
        return nan, nan
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denominator)
    return float(t), float(2 * stats.t.sf(abs(t), n - 3))


def paired_difference(judge_a, judge_b, human, groups, metric: str = "pearson", n_boot: int = 2000,
                      seed: int = 0) -> Comparison:
    """Correlation of B with `human` minus that of A, on the items where all three are scored.

    Rows with NaN in any of the three are dropped first. The bootstrap resamples groups with
    replacement and recomputes both correlations on the same draw (paired); the CI is the
    2.5-97.5 percentile of the differences; the p-value is twice the share of draws whose
    difference is zero or of the opposite sign to the observed one, capped at 1 (its
    resolution is 1 / n_boot: 0.0 means "below that"). Williams' test uses the same
    correlations (Pearson, or Pearson on ranks for Spearman; NaN for Kendall).

    Raises StoreError when fewer than 3 items are scored by both, or a correlation is undefined.
    """
    if metric not in METRICS:
        raise ValueError(f"metric '{metric}' is unknown; use one of {', '.join(METRICS)}")
    a, b, h = (np.asarray(v, dtype=float) for v in (judge_a, judge_b, human))
    g = np.asarray(groups).astype(str)
    if not len(a) == len(b) == len(h) == len(g):
        raise ValueError(f"judge_a, judge_b, human and groups must be equally long "
                         f"(got {len(a)}, {len(b)}, {len(h)}, {len(g)})")
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(h))
    a, b, h, g = a[keep], b[keep], h[keep], g[keep]
    if len(a) < MIN_COMMON_ITEMS:
        raise StoreError(
            f"only {len(a)} item(s) are scored by both and by people; a comparison needs at least "
            f"{MIN_COMMON_ITEMS}: score the same items with both template versions / judges"
        )
    r_a, r_b = correlate(metric, a, h), correlate(metric, b, h)
    for name, value, scores in (("A", r_a, a), ("B", r_b, b)):
        if math.isnan(value):
            what = "its scores are constant" if np.ptp(scores) == 0 else "the human scores are constant"
            raise StoreError(
                f"the {metric} correlation of {name} with the human scores is undefined on the {len(a)} common "
                f"items ({what}); score more items"
            )
    members = group_members(g)
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(n_boot if len(members) >= MIN_GROUPS else 0):
        draw = np.concatenate([members[i] for i in rng.integers(0, len(members), len(members))])
        diffs.append(_boot_corr(metric, b[draw], h[draw]) - _boot_corr(metric, a[draw], h[draw]))
    diffs = np.asarray(diffs, dtype=float)
    diffs = diffs[np.isfinite(diffs)]
    difference = r_b - r_a
    note = interval_note(g)
    if len(diffs) < max(10, n_boot // 2):
        low = high = p_boot = float("nan")
        note = note or "no interval: the bootstrap differences are undefined in most resamples"
    else:
        low, high = (float(v) for v in np.percentile(diffs, [2.5, 97.5]))
        if difference == 0:
            p_boot = 1.0
        else:
            against = np.mean(diffs <= 0) if difference > 0 else np.mean(diffs >= 0)
            p_boot = float(min(1.0, 2 * against))
    if metric == "kendall":
        t, p = float("nan"), float("nan")
    else:
        r_ab = correlate(metric, a, b)
        t, p = williams_test(r_a, r_b, r_ab if math.isfinite(r_ab) else 0.0, len(a))
        t = -t if math.isfinite(t) and t != 0 else t  # signed like B - A
    return Comparison(metric, float(r_a), float(r_b), float(difference), low, high, p_boot, t, p,
                      int(len(a)), len(members), note)


def _boot_corr(metric: str, x: np.ndarray, y: np.ndarray) -> float:
    """`correlate`, with Pearson and Spearman computed directly (the bootstrap calls it thousands of times)."""
    if metric == "kendall":
        return correlate(metric, x, y)
    if metric == "spearman":
        x, y = stats.rankdata(x), stats.rankdata(y)
    xm, ym = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float(xm @ xm) * float(ym @ ym))
    return float(xm @ ym) / denominator if denominator > 1e-12 else float("nan")


# --- from the store -------------------------------------------------------------------------


def template_for(store: Store, version: str) -> Template:
    """The stored template version `version`."""
    for template in store.template_versions():
        if template.version == version:
            return template
    raise StoreError(f"template version {version} is not in {store.path}; score with it first")


def scored_combos(store: Store, dataset: str) -> pd.DataFrame:
    """Each (template version, judge signature) scored on `dataset`, most recent first.

    Columns: template, template_version, signature, model, label (short, for menus),
    aspects (list), ok, unscored, failed, first and last (times of the first and latest
    judgment). Empty when nothing is scored.
    """
    combos = store.combos(dataset)
    columns = ["template", "template_version", "signature", "model", "label", "aspects", "ok", "unscored",
               "failed", "first", "last"]
    if combos.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (version, sig), part in combos.groupby(["template_version", "signature"], sort=False):
        fields = json.loads(part["signature_json"].iloc[0] or "{}")
        model = judge_name(fields) if "backend" in fields else sig[:40]
        rows.append({
            "template": part["template"].iloc[0], "template_version": version, "signature": sig, "model": model,
            "aspects": list(part["aspect"]), "ok": int(part["ok"].sum()), "unscored": int(part["unscored"].sum()),
            "failed": int(part["failed"].sum()), "first": float(part["first"].min()), "last": float(part["last"].max()),
        })
    frame = pd.DataFrame(rows).sort_values("last", ascending=False, ignore_index=True)
    frame["label"] = [f"{t} · {m}" for t, m in zip(frame["template"], frame["model"])]
    duplicated = frame["label"].duplicated(keep=False)
    frame.loc[duplicated, "label"] = [f"{label} · {hashlib.sha256(s.encode()).hexdigest()[:8]}" for label, s in
                                      zip(frame.loc[duplicated, "label"], frame.loc[duplicated, "signature"])]
    return frame[columns]


def judge_name(fields: dict) -> str:
    """A judge as menus name it: backend and model, and how an OpenAI-compatible judge read
    its scores ("openai: gpt-4o-mini, samples")."""
    name = f"{fields.get('backend', '?')}: {fields.get('model') or 'default'}"
    return f"{name}, {fields['mode']}" if fields.get("backend") == "openai" and fields.get("mode") else name


def human_ranges(items: list[Item]) -> dict[str, tuple[float, float]]:
    """Each human aspect's observed (min, max) over every annotator's score in `items`."""
    seen: dict[str, list[float]] = {}
    for item in items:
        for aspect, scores in item.human.items():
            seen.setdefault(aspect, []).extend(s for s in scores if s is not None and math.isfinite(s))
    return {aspect: (min(v), max(v)) for aspect, v in seen.items() if v}


def disagreements(store: Store, dataset: str, template_version: str | None = None,
                  signature: str | None = None) -> pd.DataFrame:
    """One row per judgment, with the judge and human scores on a common 0-1 scale.

    The judge score is normalized by its template aspect's scale, the human mean by the
    min/max observed for that human aspect in the whole dataset; `disagreement` is
    |judge_01 - human_01| (NaN when unscored or when no human aspect matches). Columns:
    item_id, aspect, aspect_name, human, score, human_score, judge_01, human_01, disagreement,
    scale_min, scale_max, human_min, human_max, status, reason, distribution, prompt, raw,
    system, group, level, response, template_version, signature, coverage, parsed
    (`answer_details`).
    Raises StoreError when nothing is scored on `dataset`.
    """
    frame = scored_items(store, dataset, template_version, signature)
    if frame.empty:
        raise StoreError(f"no judgments for dataset '{dataset}' with these settings; score some items first")
    template = template_for(store, frame["template_version"].iloc[0])
    items = {item.id: item for item in store.items(dataset)}
    ranges = human_ranges(list(items.values()))
    human_aspects = list(ranges)
    frame = frame.reset_index(drop=True)
    out = frame[["item_id", "aspect", "score", "status", "reason", "distribution", "prompt", "raw", "system",
                 "group", "level", "template_version", "signature"]].copy()
    out["aspect_name"] = out["aspect"]
    for column in ("human", "human_score", "judge_01", "human_01", "scale_min", "scale_max", "human_min",
                   "human_max"):
        out[column] = np.nan if column != "human" else None
    for key, rows in out.groupby("aspect").groups.items():
        try:
            aspect = template.aspect(key)
        except TemplateError:  # an aspect the stored template no longer has: leave it unnormalized
            continue
        human = human_aspect_for(template, key, human_aspects)
        out.loc[rows, "aspect_name"] = aspect.name
        out.loc[rows, "scale_min"], out.loc[rows, "scale_max"] = aspect.min, aspect.max
        out.loc[rows, "judge_01"] = normalized(out.loc[rows, "score"], aspect.min, aspect.max)
        if human is None:
            continue
        low, high = ranges[human]
        values = frame.loc[rows, f"human:{human}"].to_numpy(dtype=float)
        out.loc[rows, "human"] = human
        out.loc[rows, "human_score"] = values
        out.loc[rows, "human_min"], out.loc[rows, "human_max"] = low, high
        out.loc[rows, "human_01"] = normalized(values, low, high)
    out["disagreement"] = (out["judge_01"] - out["human_01"]).abs()
    out["response"] = [items[i].response for i in out["item_id"]]
    details = [answer_details(scores, aspect, raw) for scores, aspect, raw in
               zip(frame["call_scores"], frame["aspect"], frame["raw"])]
    out["coverage"] = [coverage for coverage, _ in details]
    out["parsed"] = [parsed for _, parsed in details]
    return out


def answer_details(call_scores: str | None, aspect: str, raw: str | None) -> tuple[float, str]:
    """From a judgment's call: the probability the judge put on the scale's scores at all
    (logits or top_logprobs; NaN when it was sampled or failed), and for sampled answers
    "k of n answers parsed" ("" otherwise)."""
    score = json.loads(call_scores).get(aspect, {}) if isinstance(call_scores, str) else {}
    coverage = score.get("coverage")
    samples = score.get("samples") or []
    answers = json.loads(raw) if isinstance(raw, str) and raw else []
    parsed = f"{len(samples)} of {len(answers)} answers parsed" if samples or len(answers) > 1 else ""
    return (float(coverage) if coverage is not None else math.nan), parsed


def compare_combos(store: Store, dataset: str, a: tuple[str, str], b: tuple[str, str], human: str,
                   metric: str = "pearson", n_boot: int = 2000, seed: int = 0) -> Comparison:
    """`paired_difference` of two scored (template version, signature) pairs against the human
    aspect `human`, each through its judge aspect mapped to it, on the items both scored."""
    columns = []
    for side, (version, sig) in (("A", a), ("B", b)):
        frame = disagreements(store, dataset, version, sig)
        frame = frame[frame["human"] == human]
        if frame.empty:
            raise StoreError(
                f"{side} ({version}) has no judge aspect compared with the human aspect '{human}'; "
                f"pick a human aspect both templates map to (human = \"...\" in the template header)"
            )
        columns.append(frame.drop_duplicates("item_id").set_index("item_id"))
    b_scores = columns[1][["score"]].rename(columns={"score": "score_b"})
    joined = columns[0][["score", "human_score", "group"]].join(b_scores, how="inner")
    return paired_difference(joined["score"], joined["score_b"], joined["human_score"], joined["group"],
                             metric=metric, n_boot=n_boot, seed=seed)


def mapped_humans(store: Store, dataset: str, template_version: str, signature: str) -> list[str]:
    """The human aspects the judge aspects of this scored pair are compared with, in template order."""
    template = template_for(store, template_version)
    items = store.items(dataset)
    human_aspects = list(dict.fromkeys(a for item in items for a in item.human))
    found = [human_aspect_for(template, a.key, human_aspects) for a in template.aspects]
    return list(dict.fromkeys(h for h in found if h))
