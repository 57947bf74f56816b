"""A self-contained HTML report of scored combinations on a dataset: tables, figures with
plotly.js inline (works offline), signatures, dataset, date. All text is HTML-escaped."""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Iterable, Mapping

import pandas as pd

from geval.analysis.agreement import agree
from geval.analysis.correlation import LEVELS
from geval.analysis.disagreement import disagreements
from geval.data.dataset import Dataset
from geval.reporting.figures import (
    abs_diff_histogram,
    aspect_rows,
    clip,
    correlation_bars,
    distribution_figure,
    scatter_figure,
)
from geval.reporting.tables import display_table, html_table, number, stack_tables
from geval.store import Store
from geval.version import __version__

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; padding: 0 1rem; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } code, .sig { font-family: ui-monospace, monospace; font-size: 0.85rem; }
.sig { white-space: pre-wrap; word-break: break-all; background: #f7f7f7; padding: 0.4rem; display: block; }
.meta { color: #666; }
"""


def html_report(store: Store, dataset: str | Dataset, combos: Iterable[tuple[str, str]],
                tables: Mapping[tuple[str, str], pd.DataFrame] | None = None, levels: tuple[str, ...] = LEVELS,
                n_boot: int = 1000, metric: str = "pearson", top: int = 10, plotlyjs: bool | str = True) -> str:
    """One self-contained HTML page for the (template version, signature) pairs `combos`
    scored on `dataset`: the dataset summary, each pair's signature and agreement table, the
    figures (plotly.js inline once, so the file works offline), the `top` items where judge
    and people disagree most, the date and the geval version. All text is HTML-escaped.
    `plotlyjs="directory"` loads plotly.js from a `plotly.min.js` beside the page instead
    (several reports in one folder then share it).

    `tables` may hold agreement tables already computed (keyed by the pair) to save time.
    Raises StoreError when a pair has no judgments on the dataset.
    """
    combos = list(combos)
    if isinstance(dataset, Dataset):
        name, summary = dataset.name, dataset.summary()
    else:
        name, summary = dataset, Dataset(dataset, "", "stored", store.items(dataset)).summary()
    given = dict(tables or {})
    labels = store.combos(name).set_index(["template_version", "signature"])["label"].to_dict()
    scored = []
    for version, sig in combos:
        frame = disagreements(store, name, (version, sig))
        table = given.get((version, sig))
        if table is None:
            table = agree(store, name, (version, sig), levels=levels, n_boot=n_boot)
        scored.append((labels.get((version, sig), f"{version} · {sig}"), sig, frame, table))
    figures: list[str] = []

    def embed(figure) -> str:
        figures.append(figure.to_html(full_html=False, include_plotlyjs=plotlyjs if not figures else False,
                                      config={"displaylogo": False}))
        return figures[-1]

    parts = []
    stacked = stack_tables({label: table for label, _, _, table in scored})
    if len(stacked) and (stacked["metric"] == metric).any():
        parts += ["<h2>Overview</h2>", embed(correlation_bars(stacked, metric))]
    for label, sig, frame, table in scored:
        parts += [f"<h2>{html.escape(label)}</h2>",
                  f"<p>Judge signature:</p><code class='sig'>{html.escape(sig)}</code>",
                  f"<p class='meta'>{frame['item_id'].nunique()} items judged; "
                  f"{int((frame['status'] == 'unscored').sum())} unscored and "
                  f"{int((frame['status'] == 'failed').sum())} failed judgments, left out of the statistics.</p>",
                  "<h3>Agreement with people</h3>", html_table(display_table(table))]
        pairs = frame.dropna(subset=["human"]).drop_duplicates("aspect")[["aspect", "aspect_name", "human"]]
        for aspect, aspect_name, human in pairs.itertuples(index=False):
            parts += [f"<h3>{html.escape(aspect_name)} (judge) vs {html.escape(human)} (people)</h3>",
                      embed(scatter_figure(frame, aspect, human)),
                      embed(abs_diff_histogram(frame, aspect, human)),
                      embed(distribution_figure(frame, aspect, human))]
            worst = aspect_rows(frame, aspect, human).dropna(subset=["disagreement"]).nlargest(top, "disagreement")
            parts += [f"<h4>The {len(worst)} items with the largest disagreement</h4>", html_table(pd.DataFrame({
                "item": worst["item_id"], "system": worst["system"], "judge": worst["score"].map(number),
                "human": worst["human_score"].map(number), "|difference| (0-1)": worst["disagreement"].map(number),
                "response": [clip(str(t), 300) for t in worst["response"]],
            }))]
    now = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head><meta charset='utf-8'>"
        f"<title>G-Eval Studio report: {html.escape(name)}</title><style>{_CSS}</style></head>\n<body>\n"
        f"<h1>G-Eval Studio report</h1>\n<p class='meta'>{html.escape(now)} · geval {html.escape(__version__)}</p>\n"
        f"<h2>Dataset</h2><p>{html.escape(summary)}</p>\n" + "\n".join(parts) + "\n</body>\n</html>\n"
    )
