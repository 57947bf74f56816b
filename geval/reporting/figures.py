"""The agreement figures, shared by the Agreement page and the reports. Every figure takes
the frame of `geval.analysis.disagreement.disagreements` (one row per judgment, judge and human
scores also on a common 0-1 scale). Plotly is imported when a figure is built, so `import geval`
stays light. Dataset text goes into hover labels HTML-escaped: an item containing `<script>`
shows it literally.

Series are drawn in the app's colours (COLOURS), set on every trace: inside Streamlit the default
plotly template is Streamlit's, whose colours are placeholders (#000001, #000002 ...) that only
the app's browser code replaces, so a figure saved to a file would draw every series near-black.
`standalone` gives a figure the template of a page outside the app.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from geval.analysis.categorical import majority
from geval.analysis.correlation import reading
from geval.data.declared import category_word
from geval.data.items import Item
from geval.data.labels import COMPARED_WITH, MAJORITY_OF
from geval.wording import natural_key

WEBGL_ABOVE = 5000  # points; beyond this the scatter is drawn with WebGL


#: Items the Agreement page draws a point each before it draws bubbles unless asked: the figures' JSON
#: (about 130 bytes an item for the scatter) is made at every rerun and sent to the browser.
DRAWN_ONE_BY_ONE_MOST = 100_000


SNIPPET = 120  # characters of the response shown when hovering a point


JITTER = 0.02  # of each axis' range, so that tied scores do not hide each other
#: A name's last note in parentheses, without any inside: " (imported from llms.json)".
SHARED_NOTE = re.compile(r" \([^()]*\)$")


BINS = np.arange(21) / 20  # the histograms' 20 bins of 0.05 (edges as typed: 19 / 20 == 0.95); [0.95, 1] holds 1


#: The app's series colours: Streamlit's categorical palette (light theme), in its order.
COLOURS = ("#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0",
           "#d5dae5")


def colour(index: int) -> str:
    """The app's colour of the `index`-th series."""
    return COLOURS[index % len(COLOURS)]


def standalone(figure):
    """`figure` for a page outside the app (a report): plotly's white template with the app's
    colours, instead of Streamlit's template of placeholder colours. Returns the figure."""
    figure.update_layout(template="plotly_white", colorway=COLOURS)  # by name: not a copy of it validated each time
    return figure


def aspect_rows(frame: pd.DataFrame, aspect: str, human: str | None) -> pd.DataFrame:
    """Rows of one judge aspect (key or name), compared with `human` if given."""
    return frame[_of_aspect(frame, aspect, human)]  # the rows taken once (a million judgments: 0.1 s each)


def _of_aspect(frame: pd.DataFrame, aspect: str, human: str | None) -> np.ndarray:
    """Which rows `aspect_rows` takes."""
    chosen = ((frame["aspect"] == aspect) | (frame["aspect_name"] == aspect)).to_numpy(bool, copy=True)
    if human is not None:
        chosen &= frame["human"].to_numpy(object) == human
    return chosen


def items_drawn(frame: pd.DataFrame, aspect: str, human: str) -> int:
    """How many items `scatter_figure` draws: the aspect's with a judge's and a human score."""
    scored = frame["score"].notna().to_numpy() & frame["human_score"].notna().to_numpy()
    return int((_of_aspect(frame, aspect, human) & scored).sum())


def _scale(rows: pd.DataFrame, low: str, high: str) -> str:
    values = rows[[low, high]].dropna()
    return f"{values[low].iloc[0]:g}-{values[high].iloc[0]:g}" if len(values) else "?"


#: Distinct places a counted figure keeps before it rounds each axis to 1/GRID of its span.
COUNTED_MOST, GRID = 400, 40


def counted_points(x: np.ndarray, y: np.ndarray, spans: tuple[float, float]) -> pd.DataFrame:
    """Points at the same place drawn once, with how many items are there (x, y, items): the scores
    rounded to 2 decimals, or to 1/GRID of each axis' span (`spans`) when more than COUNTED_MOST
    places are distinct (a judge's continuous scores)."""
    points = pd.DataFrame({"x": np.round(np.asarray(x, float), 2), "y": np.round(np.asarray(y, float), 2)}).dropna()
    if len(points.drop_duplicates()) > COUNTED_MOST:
        for column, span in zip(("x", "y"), spans):
            step = (span if span > 0 else 1.0) / GRID
            points[column] = (points[column] / step).round() * step
    return points.groupby(["x", "y"]).size().rename("items").reset_index()


def bubbles(points: pd.DataFrame, hover: str, index: int = 0):
    """`counted_points` as one trace of bubbles, each sized by its items (the area following the count);
    `hover`: what a bubble's label says before its count ("people %{x:.2f} · judge %{y:.2f}")."""
    import plotly.graph_objects as go

    most = max(int(points["items"].max()), 1) if len(points) else 1
    return go.Scatter(x=points["x"], y=points["y"], mode="markers", customdata=points["items"], name="items",
                      marker={"color": colour(index), "opacity": 0.7, "line": {"width": 0},
                              "size": (5 + 25 * np.sqrt(points["items"] / most)).round(1)},
                      hovertemplate=f"{hover}: %{{customdata}} items<extra></extra>")


def scatter_figure(frame: pd.DataFrame, aspect: str, human: str, per_item: bool = True, words: Sequence[str] = (),
                   side: str = "people"):
    """Judge score against the human mean, one point per item, coloured by system; `per_item` False:
    a bubble per pair of scores sized by its items (`counted_points`: a light figure for a report). On an
    aspect labeled with the categories `words`, against the majority label of the human `side` (named: "your
    labels" on yours), its words on the axis (items whose labels tie have none, and no point).

    Both axes get a small deterministic jitter. The hover shows the item id, the system, the
    exact scores and, up to WEBGL_ABOVE points, the response's first 120 characters (beyond, the
    texts would weigh megabytes in the browser: a click opens the item in Inspect). The
    `customdata` of every point is its item id, so a selection can open the item. WebGL above
    WEBGL_ABOVE points.
    """
    import plotly.graph_objects as go

    rows = aspect_rows(frame, aspect, human).dropna(subset=["score", "human_score"])
    name = rows["aspect_name"].iloc[0] if len(rows) else aspect
    if not per_item:
        return _counted_scatter(rows, name, human, words, side)
    rng = np.random.default_rng(0)
    jittered, ranges = {}, {}
    for column, low, high in (("score", "scale_min", "scale_max"), ("human_score", "human_min", "human_max")):
        span = float((rows[high] - rows[low]).max()) if len(rows) else 1.0
        span = span if np.isfinite(span) and span > 0 else 1.0
        jittered[column] = rows[column].to_numpy(dtype=float) + rng.uniform(-JITTER, JITTER, len(rows)) * span
        bounds = (rows[low].min(), rows[high].max()) if len(rows) else (np.nan, np.nan)
        if all(np.isfinite(bounds)):  # the whole scale, so that scores bunched together look bunched
            ranges[column] = [bounds[0] - 2 * JITTER * span, bounds[1] + 2 * JITTER * span]
    ids = rows["item_id"].to_numpy(dtype=object)
    shown_as = {}  # each system's name as shown, escaped once per system rather than once per row
    systems = np.array([shown_as[s] if s in shown_as else shown_as.setdefault(s, html.escape(str(s) or "(no system)"))
                        for s in rows["system"].tolist()], dtype=object)
    snippets = len(rows) <= WEBGL_ABOVE
    said = [category_word(people, words) for people in rows["human_score"].tolist()] if words else \
        [f"{people:.2f}" for people in rows["human_score"].tolist()]
    hover = np.array([f"item {item}<br>system: {system}<br>judge {judge:.2f} · human {people}"
                      + (f"<br>{html.escape(clip(str(text), SNIPPET))}" if snippets else "")
                      for item, system, judge, people, text in
                      zip(escaped(ids), systems, rows["score"].tolist(), escaped(said) if words else said,
                          rows["response"].tolist() if snippets else [""] * len(rows))], dtype=object)
    trace = go.Scattergl if len(rows) > WEBGL_ABOVE else go.Scatter
    series = [(index, system, np.flatnonzero(systems == system))  # the legend's order: M2 before M10
              for index, system in enumerate(sorted(set(systems), key=natural_key))]
    figure = go.Figure([  # the texts set after: a figure deep-copies its traces' arrays of objects one by one
        trace(x=jittered["human_score"][shown], y=jittered["score"][shown], customdata=ids[:0], text=hover[:0],
              mode="markers", name=system, legendgroup=system,
              marker={"color": colour(index), "size": 7, "opacity": 0.75}, hovertemplate="%{text}<extra></extra>")
        for index, system, shown in series
    ])
    for drawn, (_, _, shown) in zip(figure.data, series):
        drawn.customdata, drawn.text = ids[shown], hover[shown]
    figure.update_layout(
        title=f"{name}: judge vs human, {len(rows)} items",
        xaxis={"title": f"{_human_axis(rows, human, words, side)}, jittered", "range": ranges.get("human_score"),
               **_label_ticks(words)},
        yaxis={"title": f"judge: {name} ({_scale(rows, 'scale_min', 'scale_max')}, jittered)",
               "range": ranges.get("score"), **_judge_ticks(rows, words)},
        legend={"title": {"text": "system"}, "orientation": "h", "y": -0.25}, margin={"t": 50})
    return figure


def counted_scatter_figure(frame: pd.DataFrame, aspect: str, human: str, words: Sequence[str] = (),
                           side: str = "people"):
    """`scatter_figure` as bubbles, one per pair of scores sized by its items (a report's, and the
    Agreement page's above DRAWN_ONE_BY_ONE_MOST items unless asked for each item)."""
    return scatter_figure(frame, aspect, human, per_item=False, words=words, side=side)


def _human_axis(rows: pd.DataFrame, human: str, words: Sequence[str], side: str) -> str:
    """The scatter's human axis: the mean of the annotators on their scale, or the majority label of the `side`."""
    if words:
        return f"human: {human} ({MAJORITY_OF[side]})"
    return f"human: {human} (mean of annotators, {_scale(rows, 'human_min', 'human_max')})"


def _label_ticks(words: Sequence[str]) -> dict:
    """An axis of label indexes named by their words (none for scores)."""
    return {"tickvals": list(range(len(words))), "ticktext": list(words)} if words else {}


def _judge_ticks(rows: pd.DataFrame, words: Sequence[str]) -> dict:
    """The judge's axis named by the labels' `words` where its scale has a point for each, read as the analyses read
    it (point i is the i-th word: 0 fail, 1 pass; a pairwise judge's A, B, tie); a score between two points is its
    probability-weighted mean. None for scores, or a scale of other points."""
    if not words or rows.empty:
        return {}
    low, high = float(rows["scale_min"].min()), float(rows["scale_max"].max())
    if not low.is_integer() or high - low + 1 != len(words):
        return {}
    return {"tickvals": [low + i for i in range(len(words))], "ticktext": list(words)}


def _counted_scatter(rows: pd.DataFrame, name: str, human: str, words: Sequence[str], side: str):
    """The judge against the human mean (or majority label) as bubbles, one per pair of scores, sized by its items."""
    import plotly.graph_objects as go

    spans = tuple(float((rows[high] - rows[low]).max()) if len(rows) else 1.0
                  for low, high in (("human_min", "human_max"), ("scale_min", "scale_max")))
    points = counted_points(rows["human_score"], rows["score"], spans)
    figure = go.Figure(bubbles(points, "judge %{y:.2f}" if words else "people %{x:.2f} · judge %{y:.2f}"))
    figure.update_layout(
        title=f"{name}: judge vs human, {len(rows)} items (a bubble per pair of scores, sized by its items)",
        xaxis={"title": _human_axis(rows, human, words, side), **_label_ticks(words)},
        yaxis={"title": f"judge: {name} ({_scale(rows, 'scale_min', 'scale_max')})", **_judge_ticks(rows, words)},
        showlegend=False,
        margin={"t": 50})
    return figure


def _histogram(series: Mapping[str, pd.Series], title: str, x_title: str, **layout):
    """Bars of the counts of each named series in the bins of BINS, on the common 0-1 scale.

    Binned here, so the browser gets 20 counts per series whatever the number of items.
    """
    import plotly.graph_objects as go

    edges = np.column_stack([BINS[:-1], BINS[1:]])
    figure = go.Figure([
        go.Bar(x=edges.mean(axis=1), y=np.histogram(values.to_numpy(dtype=float), bins=BINS)[0], name=name,
               customdata=edges, hovertemplate="%{customdata[0]:.2f}–%{customdata[1]:.2f}: %{y} items",
               marker_color=colour(index))
        for index, (name, values) in enumerate(series.items())
    ])
    figure.update_layout(title=title, xaxis={"range": [0, 1], "title": x_title}, yaxis_title="items",
                         margin={"t": 50}, **layout)
    return figure


def abs_diff_histogram(frame: pd.DataFrame, aspect: str, human: str | None = None):
    """Histogram of |judge - human| with both on a common 0-1 scale (judge by its template
    scale, human by the range observed in the dataset): 0 = agree, 1 = opposite ends."""
    rows = aspect_rows(frame, aspect, human).dropna(subset=["disagreement"])
    name = rows["aspect_name"].iloc[0] if len(rows) else aspect
    median = f", median {rows['disagreement'].median():.2f}" if len(rows) else ""
    return _histogram({"|judge − human|": rows["disagreement"]},
                      f"{name}: absolute difference, {len(rows)} items{median}",
                      "|judge − human| on a common 0–1 scale", bargap=0.05)


def distribution_figure(frame: pd.DataFrame, aspect: str, human: str | None = None):
    """Histograms of the judge's and the people's scores side by side in each bin, on the common 0-1 scale (overlaid,
    half-transparent, bars of two blues hid each other)."""
    rows = aspect_rows(frame, aspect, human).dropna(subset=["judge_01", "human_01"])
    name = rows["aspect_name"].iloc[0] if len(rows) else aspect
    human_name = human or (rows["human"].iloc[0] if len(rows) else "human")
    return _histogram({
        f"judge: {name} ({_scale(rows, 'scale_min', 'scale_max')})": rows["judge_01"],
        f"human: {human_name} (mean, {_scale(rows, 'human_min', 'human_max')})": rows["human_01"],
    }, f"{name}: score distributions, {len(rows)} items", "score on a common 0–1 scale", barmode="group",
        bargap=0.1, legend={"orientation": "h", "y": -0.25})


def labels_figure(frame: pd.DataFrame, aspect: str, human: str | None, words: Sequence[str], side: str = "people"):
    """On an aspect labeled with the categories `words`, how many items the judge gives each label (its nearest
    category) beside how many have it as the majority of the human `side`'s labels, both on the items that have
    such a majority (not those unlabeled, or whose labels tie): what the histograms of differences and of scores
    on a 0-1 scale read for scores, where categories are no scale."""
    import plotly.graph_objects as go

    rows = aspect_rows(frame, aspect, human)
    name = rows["aspect_name"].iloc[0] if len(rows) else aspect
    rows = rows[np.isfinite(rows["human_01"].to_numpy(dtype=float))]  # the judge counted on the same items
    top, against = len(words) - 1, MAJORITY_OF[side]
    codes = {who: np.rint(rows[column].to_numpy(dtype=float) * top) for who, column in
             (("judge: its nearest label", "judge_01"), (against, "human_01"))}
    figure = go.Figure([go.Bar(x=list(words), y=[int((found == k).sum()) for k in range(len(words))], name=who,
                               marker_color=colour(index), hovertemplate="%{x}: %{y} items<extra>" + who + "</extra>")
                        for index, (who, found) in enumerate(codes.items())])
    figure.update_layout(title=html.escape(f"{name}: the judge's labels and {against}, on the {len(rows)} items with a "
                                           "majority label"),
                         barmode="group", xaxis_title="label", yaxis_title="items", margin={"t": 50},
                         legend={"orientation": "h", "y": -0.25})
    return figure


def majority_figure(items: Sequence[Item], aspect: str, categories: Sequence[str]):
    """On an aspect labeled with `categories`: how many items have each as the people's majority label, in the
    categories' order, and how many have none (people tied), instead of a histogram of label codes or of
    mixed readings ("model_a 1, tie 1")."""
    import plotly.graph_objects as go

    words = [category_word(found, categories) if not math.isnan(found) else "no majority" for found in
             (majority(item.human[aspect]) for item in items if item.human.get(aspect))]
    shown = [*categories, *(["no majority"] if "no majority" in words else [])]
    figure = go.Figure(go.Bar(x=shown, y=[words.count(word) for word in shown], marker_color=colour(0),
                              hovertemplate="%{x}: %{y} items<extra></extra>"))
    figure.update_layout(title=html.escape(f"{aspect}: each item's majority label"), xaxis_title="label",
                         yaxis_title="items", xaxis_type="category")
    return figure


#: Distinct scores up to which people's scores are drawn a bar per score (means of a few annotators on a few
#: points: 1, 1.33, 1.67 …); beyond, in 20 even bins over their range.
BAR_PER_SCORE_MOST = 40


def human_scores_figure(items: Sequence[Item], aspect: str, scale: tuple[float, float] | None = None):
    """How many items have each mean human score of `aspect`: a bar per score where the scores take few values, each
    bar at its score and all of one width (bins of a chosen width cut a lattice of thirds unevenly: 1.33 and 1.67
    falling in bins of different offsets, some bins holding two scores), else 20 even bins over their range. The
    axis spans the `scale` people were asked on, when declared: a 1-5 scale nobody gave a 1 on shows its empty 1."""
    import plotly.graph_objects as go

    scores = pd.Series([item.human_mean(aspect) for item in items if item.human.get(aspect)], dtype=float).dropna()
    counts = scores.round(6).value_counts().sort_index()
    low, high = (min(scale[0], scores.min()), max(scale[1], scores.max())) if scale and len(scores) else (None, None)
    if len(counts) <= BAR_PER_SCORE_MOST:
        bars = go.Bar(x=counts.index, y=counts.to_numpy(), marker_color=colour(0),
                      hovertemplate="%{x:.2f}: %{y} items<extra></extra>")
        half = float(np.diff(counts.index).min()) / 2 if len(counts) > 1 else 0.5  # a bar's half width
    else:
        found, edges = np.histogram(scores.to_numpy(), bins=20, range=(low, high) if low is not None else None)
        bars = go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=found, width=edges[1] - edges[0], marker_color=colour(0),
                      customdata=np.column_stack([edges[:-1], edges[1:]]),
                      hovertemplate="%{customdata[0]:.2f}–%{customdata[1]:.2f}: %{y} items<extra></extra>")
        half = 0.0
    figure = go.Figure(bars)
    figure.update_layout(title=html.escape(f"{aspect} ({len(scores)} items)"), xaxis_title="people's mean score",
                         yaxis_title="items")
    if low is not None:
        figure.update_xaxes(range=[low - half, high + half])
    return figure


#: The height of the correlation bars' plot area in pixels, whatever the notes above it and the legend below.
BARS_HEIGHT = 300


def correlation_bars(table: pd.DataFrame, metric: str = "pearson", side: str = "people"):
    """Grouped bars of one metric's correlation (or the accuracy of an aspect labeled with categories) per
    aspect people scored (`_axis_aspects`: judges that name it otherwise side by side), one colour per combo (template
    version and judge), one panel per level, with the 95% bootstrap CI as error bars. `table` is an agreement table,
    or several stacked by `stack_tables`; `side` the human side it was read against (`geval.labeling.COMPARED_WITH`),
    named in the title.

    A value withheld (e.g. the group level from fewer than 10 groups) gets no bar, and an
    interval withheld no error bar and a faint, hatched bar: each panel's title says which, as the tables do
    ("n/a (2 groups, 10 needed)", "no interval (5 groups)"), and the hover reads like the table."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows = table[table["metric"] == metric].copy()
    if "combo" not in rows:
        rows["combo"] = ""
    rows["reading"] = [reading(v, lo, hi, level, n, g) for v, lo, hi, level, n, g in
                       zip(rows["value"], rows["low"], rows["high"], rows["level"], rows["n"],
                           rows["groups"] if "groups" in rows else [None] * len(rows))]
    value = rows["value"].to_numpy(dtype=float)
    rows["interval"] = np.isfinite(value) & np.isfinite(rows["low"].to_numpy(dtype=float)) & \
        np.isfinite(rows["high"].to_numpy(dtype=float))
    rows["bar"] = np.where(np.isfinite(value), value, None)
    rows["x"] = _axis_aspects(rows)
    levels, combos = list(dict.fromkeys(rows["level"])), list(dict.fromkeys(rows["combo"]))
    # what a panel leaves out, under the title the figure's width: a panel's own title overlapped its neighbour's
    short = _without_shared_note(combos)
    said = [line for level in levels for line in _withheld(rows[rows["level"] == level], level, short)]
    figure = make_subplots(rows=1, cols=max(1, len(levels)), shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=[html.escape(level) for level in levels] or None)
    for index, combo in enumerate(combos):
        for column, level in enumerate(levels, 1):
            part = rows[(rows["combo"] == combo) & (rows["level"] == level)]
            for with_interval in (True, False):  # one offset group: error bars only where there is an interval
                some = part[part["interval"] == with_interval]
                if some.empty:
                    continue
                error = {"type": "data", "array": some["high"] - some["value"],
                         "arrayminus": some["value"] - some["low"]} if with_interval else {"visible": False}
                figure.add_trace(go.Bar(
                    x=some["x"], y=some["bar"], name=combo or metric, legendgroup=combo, offsetgroup=str(index),
                    showlegend=not any(t.legendgroup == combo for t in figure.data), marker_color=colour(index),
                    # a value without an interval (3 systems) faint and hatched: read with care, as its panel says
                    marker_opacity=1.0 if with_interval else 0.4, marker_pattern_shape="" if with_interval else "/",
                    error_y=error, customdata=some[["human", "n", "reading", "aspect"]].to_numpy(),
                    hovertemplate=f"%{{customdata[3]}} vs %{{customdata[0]}} ({html.escape(level)} level)<br>"
                                  f"{html.escape(metric)} %{{customdata[2]}}<br>n = %{{customdata[1]}}"
                                  f"<extra>{html.escape(str(combo))}</extra>"), row=1, col=column)
    low = np.nanmin(np.where(rows["interval"], rows["low"].to_numpy(dtype=float), value), initial=0)
    lines = [part for line in said for part in textwrap.wrap(line, 110, subsequent_indent="  ", break_long_words=False)]
    # the notes above and the legend below add to the figure's height, not take from its bars' (ten notes and seven
    # judges left the bars 50 px): the legend at the foot of the figure, two judges' names a row
    top, bottom = 80 + 16 * len(lines), 60 + 24 * math.ceil(len(combos) / 2)
    figure.update_layout(barmode="group", height=BARS_HEIGHT + top + bottom, margin={"t": top, "b": bottom},
                         legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
                         title={"text": f"Accuracy against {MAJORITY_OF[side]}" if metric == "accuracy" else
                                f"{metric.capitalize()} correlation with {COMPARED_WITH[side]}", "y": 0.98,
                                "yanchor": "top", "subtitle": {"text": "<br>".join(lines)}})
    figure.update_yaxes(range=[min(-0.1, float(low) - 0.05), 1])
    figure.update_yaxes(title_text=metric, row=1, col=1)
    return figure


def _axis_aspects(rows: pd.DataFrame) -> pd.Series:
    """Where each row of an agreement table (`rows`, with combo) stands on an axis of aspects: the aspect people
    scored ("Natural"), so that judges asking it by other names ("natural", "naturalness") stand side by side; the
    judge's own name where people scored none; "Natural (naturalness)" where one judge compares two of its aspects
    with it."""
    people = rows["human"].where(rows["human"].notna() & (rows["human"].astype(str) != ""), rows["aspect"]).astype(str)
    shared = rows.assign(x=people).groupby(["combo", "x"])["aspect"].transform("nunique") > 1
    return people.where(~shared, people + " (" + rows["aspect"].astype(str) + ")")


def _without_shared_note(combos: list[str]) -> dict[str, str]:
    """Each of `combos` without the note in parentheses that every one of them ends with ("gpt-4o" for "gpt-4o
    (imported from llms.json)" beside "mistral (imported from llms.json)"): the legend names them in full."""
    notes = {found.group(0) if (found := SHARED_NOTE.search(combo)) else None for combo in combos}
    if len(combos) < 2 or len(notes) != 1 or None in notes:
        return {combo: combo for combo in combos}
    return {combo: combo[:-len(next(iter(notes)))] for combo in combos}


def _withheld(rows: pd.DataFrame, level: str, short: Mapping[str, str]) -> list[str]:
    """Lines saying which bars (or error bars) the panel of `level` leaves out and why, by the aspects on its axis
    (`_axis_aspects`), e.g. "group: n/a (2 groups, 10 needed), no bar: Natural, Maintains Context",
    naming the judges (combos) of an aspect when it is not all of the aspect's in the panel, by their `short` names:
    "item: no interval (5 groups), no error bar: Natural (gpt-4o)"; HTML-escaped."""
    found: dict[str, dict[str, list[str]]] = {}  # why -> aspect -> its judges left out so
    for aspect, value, shown, interval, combo in zip(rows["x"], rows["value"], rows["reading"], rows["interval"],
                                                     rows["combo"]):
        if interval:
            continue
        if np.isfinite(value):  # "0.512 (no interval: 5 groups)" -> "no interval (5 groups), no error bar"
            why = shown.split("(", 1)[1].rstrip(")").replace(": ", " (", 1)
            why = (why + ")" if "(" in why else why) + ", no error bar"
        else:
            why = f"{shown}, no bar"
        found.setdefault(why, {}).setdefault(str(aspect), []).append(str(combo))
    every = rows.groupby(rows["x"].astype(str))["combo"].agg(lambda combos: set(map(str, combos)))
    lines = []
    for why, aspects in found.items():
        by_judges: dict[str, list[str]] = {}  # the judges named ("" for all the aspect's) -> their aspects
        for aspect, combos in aspects.items():
            named = "" if set(combos) == every[aspect] else \
                f" ({clip(', '.join(dict.fromkeys(short.get(c, c) for c in combos)), 60)})"
            by_judges.setdefault(named, []).append(aspect)
        lines.append(html.escape(f"{level}: {why}: " + "; ".join(clip(", ".join(named_aspects), 60) + named
                                                                 for named, named_aspects in by_judges.items())))
    return lines


def judge_distribution_figure(distribution: Mapping[int, float], low: int, high: int, score: float | None = None,
                              labels: Sequence[str] = ()):
    """The judge's probability for every score of the scale low..high (0 where it put none),
    with its weighted-mean score marked; with `labels` (a categorical aspect's, one per score of the
    scale), each bar named by its label and no mean marked (a mean of labels' codes is no label)."""
    import plotly.graph_objects as go

    scale = list(range(int(low), int(high) + 1))
    named = len(labels) == len(scale)
    which = "%{customdata}" if named else "score %{x}"
    figure = go.Figure(go.Bar(x=scale, y=[float(distribution.get(s, 0.0)) for s in scale],
                              customdata=list(labels) if named else scale,
                              hovertemplate=which + ": p = %{y:.3f}<extra></extra>"))
    if score is not None and np.isfinite(score) and not named:
        figure.add_vline(x=score, line_dash="dash", annotation_text=f"mean {score:.2f}")
    figure.update_layout(xaxis={"tickmode": "array", "tickvals": scale, "title": "label" if named else "score",
                                **({"ticktext": list(labels)} if named else {})},
                         yaxis={"title": "probability", "range": [0, 1]}, height=220,
                         margin={"t": 20, "b": 40, "l": 50, "r": 10})
    return figure


def learning_curve_figure(curve):
    """A learning curve (`geval.labeling.LearningCurve`): the Pearson correlation (or on labels the accuracy) of the
    judge alone and of the combination fitted on the labels against the number of labels, each with
    its 95% interval as a band where there is one, and the labels at which the combination
    beats the judge (paired interval above 0) marked."""
    import plotly.graph_objects as go

    points = curve.points
    figure = go.Figure()
    for index, (column, name) in enumerate((("judge", "judge alone"), ("combined", "combination fitted on the labels"))):
        band = points.dropna(subset=[f"{column}_low", f"{column}_high"])
        if len(band):
            figure.add_trace(go.Scatter(
                x=[*band["labels"], *band["labels"][::-1]], y=[*band[f"{column}_high"], *band[f"{column}_low"][::-1]],
                fill="toself", fillcolor=colour(2 * index + 1), opacity=0.35, line={"width": 0}, hoverinfo="skip",
                showlegend=False, legendgroup=column))
        figure.add_trace(go.Scatter(
            x=points["labels"], y=points[column], mode="lines+markers", name=name, legendgroup=column,
            line={"color": colour(2 * index)}, customdata=points[["groups", "note"]].to_numpy(),
            hovertemplate=f"{name}: %{{y:.3f}} after %{{x}} labels (%{{customdata[0]}} groups)"
                          "<br>%{customdata[1]}<extra></extra>"))
    if curve.beats_at is not None:
        figure.add_vline(x=curve.beats_at, line_dash="dot",
                         annotation_text=f"beats the judge from {curve.beats_at} labels")
    figure.update_layout(title={"text": html.escape(f"How many labels buy how much: {curve.aspect}")},
                         xaxis={"title": "labels"}, height=360,
                         yaxis={"title": "accuracy against the labels" if curve.metric == "accuracy" else
                                "Pearson with the labels"},
                         legend={"orientation": "h", "y": -0.25}, margin={"t": 50, "b": 40, "l": 50, "r": 10})
    return figure


def escaped(values) -> list[str]:
    """`html.escape(str(value))` of each of `values`, escaped in one pass over them all joined."""
    texts = [str(value) for value in values]
    joined = "\x00".join(texts)
    if joined.count("\x00") != max(len(texts) - 1, 0):  # a text holds the separator: one by one
        return [html.escape(text) for text in texts]
    return html.escape(joined).split("\x00") if texts else []


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
