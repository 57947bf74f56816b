"""The agreement figures (shared by the Agreement page and the report) and a self-contained
HTML report: tables, figures with plotly.js inline (works offline), signatures, dataset, date.

Every figure takes the frame of `geval.compare.disagreements` (one row per judgment, judge
and human scores also on a common 0-1 scale). Plotly is imported when a figure is built, so
`import geval` stays light. Dataset text goes into hover labels HTML-escaped, and into the
report's tables escaped: an item containing `<script>` shows it literally.
"""

from __future__ import annotations

import datetime as _dt
import html
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from geval.agreement import agreement_table
from geval.compare import disagreements, scored_combos
from geval.loaders.base import Dataset
from geval.stats import LEVELS
from geval.store import Store
from geval.version import __version__

WEBGL_ABOVE = 5000  # points; beyond this the scatter is drawn with WebGL
SNIPPET = 120  # characters of the response shown when hovering a point
JITTER = 0.02  # of each axis' range, so that tied scores do not hide each other
BINS = np.arange(21) / 20  # the histograms' 20 bins of 0.05 (edges as typed: 19 / 20 == 0.95); [0.95, 1] holds 1


# --- tables ---------------------------------------------------------------------------------


def _number(value: float) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.3f}"


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """An agreement table for people: value with its 95% CI as one text column, then n,
    unscored (dropped) and the note. Columns: aspect, human, level, metric, value [95% CI], n,
    unscored, note (plus combo when `table` has it)."""
    shown = pd.DataFrame({
        **({"combo": table["combo"]} if "combo" in table else {}),
        "aspect": table["aspect"], "human": table["human"], "level": table["level"], "metric": table["metric"],
        "value [95% CI]": [f"{_number(v)} [{_number(lo)}, {_number(hi)}]"
                           for v, lo, hi in zip(table["value"], table["low"], table["high"])],
        "n": table["n"].astype(int), "unscored": table["unscored"].astype(int), "note": table["note"].fillna(""),
    })
    return shown.reset_index(drop=True)


def stack_tables(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Agreement tables of several combos as one, with a first column `combo` (the mapping's key)."""
    parts = [table.assign(combo=label)[["combo", *table.columns]] for label, table in tables.items()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["combo"])


def _html_table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --- figures ----------------------------------------------------------------------------------


def _aspect_rows(frame: pd.DataFrame, aspect: str, human: str | None) -> pd.DataFrame:
    """Rows of one judge aspect (key or name), compared with `human` if given."""
    rows = frame[(frame["aspect"] == aspect) | (frame["aspect_name"] == aspect)]
    if human is not None:
        rows = rows[rows["human"] == human]
    return rows


def _scale(rows: pd.DataFrame, low: str, high: str) -> str:
    values = rows[[low, high]].dropna()
    return f"{values[low].iloc[0]:g}-{values[high].iloc[0]:g}" if len(values) else "?"


def scatter_figure(frame: pd.DataFrame, aspect: str, human: str):
    """Judge score against the human mean, one point per item, coloured by system.

    Both axes get a small deterministic jitter (the hover shows the exact scores, the item id,
    the system and the response's first 120 characters); `customdata[0]` of every point is its
    item id, so a selection can open the item. WebGL above 5000 points.
    """
    import plotly.express as px

    rows = _aspect_rows(frame, aspect, human).dropna(subset=["score", "human_score"]).copy()
    name = rows["aspect_name"].iloc[0] if len(rows) else aspect
    rng = np.random.default_rng(0)
    for column, low, high in (("score", "scale_min", "scale_max"), ("human_score", "human_min", "human_max")):
        span = float((rows[high] - rows[low]).max()) if len(rows) else 1.0
        span = span if np.isfinite(span) and span > 0 else 1.0
        rows[f"{column}_jitter"] = rows[column] + rng.uniform(-JITTER, JITTER, len(rows)) * span
    rows["snippet"] = [html.escape(_clip(str(text), SNIPPET)) for text in rows["response"]]
    rows["system_shown"] = [html.escape(str(s) or "(no system)") for s in rows["system"]]
    figure = px.scatter(
        rows, x="human_score_jitter", y="score_jitter", color="system_shown",
        custom_data=["item_id", "system_shown", "snippet", "score", "human_score"],
        render_mode="webgl" if len(rows) > WEBGL_ABOVE else "auto",
        labels={"human_score_jitter":
                f"human: {human} (mean of annotators, {_scale(rows, 'human_min', 'human_max')}, jittered)",
                "score_jitter": f"judge: {name} ({_scale(rows, 'scale_min', 'scale_max')}, jittered)",
                "system_shown": "system"},
        title=f"{name}: judge vs human, {len(rows)} items",
    )
    figure.update_traces(
        marker={"size": 7, "opacity": 0.75},
        hovertemplate=("item %{customdata[0]}<br>system: %{customdata[1]}<br>"
                       "judge %{customdata[3]:.2f} · human %{customdata[4]:.2f}<br>%{customdata[2]}<extra></extra>"),
    )
    figure.update_layout(legend={"orientation": "h", "y": -0.25}, margin={"t": 50})
    return figure


def _histogram(series: Mapping[str, pd.Series], title: str, x_title: str, **layout):
    """Bars of the counts of each named series in the bins of BINS, on the common 0-1 scale.

    Binned here, so the browser gets 20 counts per series whatever the number of items.
    """
    import plotly.graph_objects as go

    edges = np.column_stack([BINS[:-1], BINS[1:]])
    figure = go.Figure([
        go.Bar(x=edges.mean(axis=1), y=np.histogram(values.to_numpy(dtype=float), bins=BINS)[0], name=name,
               customdata=edges, hovertemplate="%{customdata[0]:.2f}–%{customdata[1]:.2f}: %{y} items")
        for name, values in series.items()
    ])
    figure.update_layout(title=title, xaxis={"range": [0, 1], "title": x_title}, yaxis_title="items",
                         margin={"t": 50}, **layout)
    return figure


def abs_diff_histogram(frame: pd.DataFrame, aspect: str, human: str | None = None):
    """Histogram of |judge - human| with both on a common 0-1 scale (judge by its template
    scale, human by the range observed in the dataset): 0 = agree, 1 = opposite ends."""
    rows = _aspect_rows(frame, aspect, human).dropna(subset=["disagreement"])
    name = rows["aspect_name"].iloc[0] if len(rows) else aspect
    median = f", median {rows['disagreement'].median():.2f}" if len(rows) else ""
    return _histogram({"|judge − human|": rows["disagreement"]},
                      f"{name}: absolute difference, {len(rows)} items{median}",
                      "|judge − human| on a common 0–1 scale", bargap=0.05)


def distribution_figure(frame: pd.DataFrame, aspect: str, human: str | None = None):
    """Histograms of the judge's and the people's scores, overlaid, on the common 0-1 scale."""
    rows = _aspect_rows(frame, aspect, human).dropna(subset=["judge_01", "human_01"])
    name = rows["aspect_name"].iloc[0] if len(rows) else aspect
    human_name = human or (rows["human"].iloc[0] if len(rows) else "human")
    figure = _histogram({
        f"judge: {name} ({_scale(rows, 'scale_min', 'scale_max')})": rows["judge_01"],
        f"human: {human_name} (mean, {_scale(rows, 'human_min', 'human_max')})": rows["human_01"],
    }, f"{name}: score distributions, {len(rows)} items", "score on a common 0–1 scale", barmode="overlay",
        bargap=0, legend={"orientation": "h", "y": -0.25})
    figure.update_traces(marker_opacity=0.6)
    return figure


def correlation_bars(table: pd.DataFrame, metric: str = "pearson"):
    """Grouped bars of one metric's correlation per aspect, one colour per combo (template
    version and judge), one panel per level, with the 95% bootstrap CI as error bars.
    `table` is an agreement table, or several stacked by `stack_tables`."""
    import plotly.express as px

    rows = table[table["metric"] == metric].copy()
    if "combo" not in rows:
        rows["combo"] = ""
    rows["above"] = rows["high"] - rows["value"]
    rows["below"] = rows["value"] - rows["low"]
    rows["ci"] = [f"[{_number(lo)}, {_number(hi)}]" for lo, hi in zip(rows["low"], rows["high"])]
    levels = list(dict.fromkeys(rows["level"]))
    figure = px.bar(
        rows, x="aspect", y="value", color="combo", barmode="group", error_y="above", error_y_minus="below",
        facet_col="level" if len(levels) > 1 else None, category_orders={"level": levels},
        hover_data={"human": True, "n": True, "ci": True, "above": False, "below": False},
        labels={"value": metric, "combo": "", "ci": "95% CI"}, title=f"{metric.capitalize()} correlation with people",
    )
    figure.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))  # "level=item" -> "item"
    figure.update_layout(legend={"orientation": "h", "y": -0.3}, margin={"t": 60})
    figure.update_yaxes(range=[min(-0.1, float(np.nanmin(rows["low"].to_numpy(dtype=float), initial=0)) - 0.05), 1])
    return figure


def judge_distribution_figure(distribution: Mapping[int, float], low: int, high: int, score: float | None = None):
    """The judge's probability for every score of the scale low..high (0 where it put none),
    with its weighted-mean score marked."""
    import plotly.graph_objects as go

    scale = list(range(int(low), int(high) + 1))
    figure = go.Figure(go.Bar(x=scale, y=[float(distribution.get(s, 0.0)) for s in scale],
                              hovertemplate="score %{x}: p = %{y:.3f}<extra></extra>"))
    if score is not None and np.isfinite(score):
        figure.add_vline(x=score, line_dash="dash", annotation_text=f"mean {score:.2f}")
    figure.update_layout(xaxis={"tickmode": "array", "tickvals": scale, "title": "score"},
                         yaxis={"title": "probability", "range": [0, 1]}, height=220,
                         margin={"t": 20, "b": 40, "l": 50, "r": 10})
    return figure


# --- the report -------------------------------------------------------------------------------

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
    labels = scored_combos(store, name).set_index(["template_version", "signature"])["label"].to_dict()
    scored = []
    for version, sig in combos:
        frame = disagreements(store, name, version, sig)
        table = given.get((version, sig))
        if table is None:
            table = agreement_table(store, name, version, sig, levels=levels, n_boot=n_boot)
        scored.append((labels.get((version, sig), f"{version} · {sig}"), sig, frame, table))
    figures: list[str] = []

    def embed(figure) -> str:
        figures.append(figure.to_html(full_html=False, include_plotlyjs=plotlyjs if not figures else False, config={"displaylogo": False}))
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
                  "<h3>Agreement with people</h3>", _html_table(display_table(table))]
        pairs = frame.dropna(subset=["human"]).drop_duplicates("aspect")[["aspect", "aspect_name", "human"]]
        for aspect, aspect_name, human in pairs.itertuples(index=False):
            parts += [f"<h3>{html.escape(aspect_name)} (judge) vs {html.escape(human)} (people)</h3>",
                      embed(scatter_figure(frame, aspect, human)),
                      embed(abs_diff_histogram(frame, aspect, human)),
                      embed(distribution_figure(frame, aspect, human))]
            worst = _aspect_rows(frame, aspect, human).dropna(subset=["disagreement"]).nlargest(top, "disagreement")
            parts += [f"<h4>The {len(worst)} items with the largest disagreement</h4>", _html_table(pd.DataFrame({
                "item": worst["item_id"], "system": worst["system"], "judge": worst["score"].map(_number),
                "human": worst["human_score"].map(_number), "|difference| (0-1)": worst["disagreement"].map(_number),
                "response": [_clip(str(t), 300) for t in worst["response"]],
            }))]
    now = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head><meta charset='utf-8'>"
        f"<title>G-Eval Studio report: {html.escape(name)}</title><style>{_CSS}</style></head>\n<body>\n"
        f"<h1>G-Eval Studio report</h1>\n<p class='meta'>{html.escape(now)} · geval {html.escape(__version__)}</p>\n"
        f"<h2>Dataset</h2><p>{html.escape(summary)}</p>\n" + "\n".join(parts) + "\n</body>\n</html>\n"
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
