"""Agreement tables as people read them: value and interval as one text, several tables
stacked, GitHub Markdown, p-values."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd


def number(value: float | None, digits: int = 3) -> str:
    """A value as tables print it: `digits` decimals, "–" when undefined."""
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """An agreement table for people: value with its 95% CI as one text column, then n,
    unscored (dropped) and the note. Columns: aspect, human, level, metric, value [95% CI], n,
    unscored, note (plus combo when `table` has it)."""
    shown = pd.DataFrame({
        **({"combo": table["combo"]} if "combo" in table else {}),
        "aspect": table["aspect"], "human": table["human"], "level": table["level"], "metric": table["metric"],
        "value [95% CI]": [f"{number(v)} [{number(lo)}, {number(hi)}]"
                           for v, lo, hi in zip(table["value"], table["low"], table["high"])],
        "n": table["n"].astype(int), "unscored": table["unscored"].astype(int), "note": table["note"].fillna(""),
    })
    return shown.reset_index(drop=True)


def stack_tables(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Agreement tables of several combos as one, with a first column `combo` (the mapping's key)."""
    parts = [table.assign(combo=label)[["combo", *table.columns]] for label, table in tables.items()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["combo"])


def html_table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def markdown_table(frame: pd.DataFrame) -> str:
    """A pandas table as GitHub markdown (pipes and newlines in cells escaped)."""
    def cell(value) -> str:
        return str(value).replace("|", "\\|").replace("\n", "<br>")

    head = "| " + " | ".join(cell(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def format_p(p: float) -> str:
    """A p-value as reports print it: "< 0.001" below 0.001 (a bootstrap p of 0 only means below
    1 / resamples), "–" when undefined, else three decimals."""
    if p is None or not math.isfinite(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def verdict(comparison, human: str, a: str = "A", b: str = "B") -> str:
    """A comparison (B minus A, `geval.compare`) in plain words: which agrees better with people
    on `human`, by how much, and whether the 95% interval rules out chance (it excludes 0)."""
    metric = comparison.metric.capitalize()
    d, low, high = comparison.difference, comparison.low, comparison.high
    numbers = f"{d:+.2f} {metric}"
    if not (math.isfinite(low) and math.isfinite(high)):
        why = comparison.note or "the bootstrap gave no interval"
        return f"{b} − {a} = {numbers} on {human}, but no verdict: {why}."
    interval = f"95% CI [{low:+.2f}, {high:+.2f}], p = {format_p(comparison.p_bootstrap)}"
    if low > 0:
        return f"{b} agrees better than {a} with people on {human}: {numbers}, {interval} — unlikely to be chance."
    if high < 0:
        return (f"{a} agrees better than {b} with people on {human}: {b} − {a} = {numbers}, {interval} — "
                "unlikely to be chance.")
    return (f"No clear difference between {a} and {b} on {human}: {numbers}, {interval} — the interval "
            "includes 0, so this could be chance.")
