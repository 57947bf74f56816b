"""The figures of how the judge errs (`geval.analysis.judge_errors`), for the Agreement page and the
report: the confusion matrix of the judge against the people's majority, the Bland-Altman plot of
its differences from the people's mean, and its use of the scale beside the people's. Drawn in the
app's colours (`geval.reporting.figures.COLOURS`); names go into hover labels HTML-escaped."""

from __future__ import annotations

import html

import numpy as np

from geval.analysis.label_errors import LabelErrors
from geval.analysis.score_errors import LIMITS, ScoreErrors
from geval.data.labels import MAJORITY_OF
from geval.reporting.figures import JITTER, WEBGL_ABOVE, bubbles, colour, counted_points


def confusion_figure(labels: LabelErrors, title: str, against: str = MAJORITY_OF["people"]):
    """The judge's labels (columns) against the majority of the human side's (rows, named `against`): each cell's
    count, shaded by its share of the row (how the items people gave that label were answered). Labels neither
    side gives are left out."""
    import plotly.graph_objects as go

    counts = labels.confusion
    used = np.flatnonzero((counts.sum(axis=0) + counts.sum(axis=1)) > 0)
    counts = counts[np.ix_(used, used)]
    names = [html.escape(labels.labels[i]) for i in used]
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = counts / counts.sum(axis=1, keepdims=True)
    figure = go.Figure(go.Heatmap(
        z=np.nan_to_num(shares).tolist(), x=names, y=names, text=counts.astype(int).tolist(), texttemplate="%{text}",
        colorscale=[[0, "#ffffff"], [1, colour(0)]], zmin=0, zmax=1, colorbar={"title": {"text": "share of row"}},
        hovertemplate=f"{html.escape(against)}: %{{y}}<br>judge: %{{x}}<br>%{{text}} items (%{{z:.0%}} of the row)"
                      "<extra></extra>"))
    figure.update_layout(
        title={"text": html.escape(title)}, xaxis={"title": "judge", "side": "bottom", "type": "category"},
        yaxis={"title": html.escape(against), "autorange": "reversed", "type": "category"},
        height=max(320, 60 + 34 * len(names)), margin={"t": 50})
    return figure


def bland_altman_figure(scores: ScoreErrors, title: str, per_item: bool = True):
    """Judge − people against the mean of the two, one point per item (the mean jittered a little: tied scores
    do not hide each other; the difference as it is, read against the limits; WebGL without hover labels above
    WEBGL_ABOVE points), with the mean
    difference and the 95% limits of agreement as lines and each one's 95% interval over groups as a band.
    `per_item` False: a bubble per place sized by its items (`counted_points`: a light figure for a report)."""
    import plotly.graph_objects as go

    frame = scores.frame
    span = max(scores.scale[1] - scores.scale[0], 1.0)
    if per_item:
        rng = np.random.default_rng(0)
        jitter = rng.uniform(-JITTER, JITTER, len(frame)) * span
        few = len(frame) <= WEBGL_ABOVE  # beyond, WebGL and no hover labels: megabytes in the browser otherwise
        figure = go.Figure((go.Scatter if few else go.Scattergl)(
            x=frame["mean"].to_numpy() + jitter, y=frame["difference"].to_numpy(), mode="markers",
            marker={"color": colour(0), "size": 6, "opacity": 0.6}, name="items",
            **({"customdata": np.column_stack([frame["item_id"].astype(str).map(html.escape), frame["judge"],
                                                frame["people"]]),
                "hovertemplate": "item %{customdata[0]}<br>judge %{customdata[1]:.2f} · people %{customdata[2]:.2f}"
                                 "<extra></extra>"} if few else {"hoverinfo": "skip"})))
    else:
        figure = go.Figure(bubbles(counted_points(frame["mean"], frame["difference"], (span, 2 * span)),
                                   "mean %{x:.2f} · judge − people %{y:+.2f}"))
    lines = (("mean difference", scores.offset, colour(2), "solid"),
             (f"lower limit (−{LIMITS} sd)", scores.lower, colour(6), "dash"),
             (f"upper limit (+{LIMITS} sd)", scores.upper, colour(6), "dash"))
    shapes, notes = [], []  # set at once: plotly's add_hline and add_hrect re-read every shape at each call
    across = {"xref": "x domain", "x0": 0, "x1": 1, "yref": "y"}
    for name, found, shade, dash in lines:
        if not np.isfinite(found.value):
            continue
        if np.isfinite(found.low) and np.isfinite(found.high):
            shapes.append({"type": "rect", **across, "y0": found.low, "y1": found.high, "fillcolor": shade,
                           "opacity": 0.15, "line": {"width": 0}, "layer": "above"})
        shapes.append({"type": "line", **across, "y0": found.value, "y1": found.value,
                       "line": {"color": shade, "dash": dash}})
        notes.append({"text": html.escape(f"{name}: {found.value:+.2f}"), "xref": "x domain", "x": 0,
                      "xanchor": "left", "yref": "y", "y": found.value, "yanchor": "bottom", "showarrow": False})
    shapes.append({"type": "line", **across, "y0": 0, "y1": 0, "line": {"color": "#888888", "width": 1}})
    figure.update_layout(
        shapes=shapes, annotations=notes,
        title={"text": html.escape(title)}, showlegend=False, height=420, margin={"t": 50},
        xaxis={"title": f"mean of judge and people ({scores.scale[0]:g}-{scores.scale[1]:g}"
                        + (", jittered)" if per_item else ")")},
        yaxis={"title": "judge − people (points)"})  # the longer title was cut at 420 px high
    return figure


def scale_use_figure(scores: ScoreErrors, title: str):
    """The share of the judge's scores (rounded to the scale) and of the people's at each point of the
    scale, side by side, with their 95% intervals over groups."""
    import plotly.graph_objects as go

    shares = scores.shares
    figure = go.Figure()
    for index, (column, name) in enumerate((("judge", "judge (rounded)"), ("people", "people (every score)"))):
        found = shares[column].tolist()
        values = np.array([e.value for e in found])
        # no bar where there is no interval (a cap of no width read as an interval of no width); none at all without
        above = [float(e.high - v) if np.isfinite(e.high) else None for e, v in zip(found, values)]
        below = [float(v - e.low) if np.isfinite(e.low) else None for e, v in zip(found, values)]
        figure.add_trace(go.Bar(
            x=[f"{p:g}" for p in shares["point"]], y=values, name=name, marker_color=colour(2 * index),
            error_y={"type": "data", "array": above, "arrayminus": below,
                     "visible": any(a is not None for a in above)},
            customdata=[e.percent() for e in found],
            hovertemplate=f"{name}: %{{customdata}} of the scores at %{{x}}<extra></extra>"))
    figure.update_layout(title={"text": html.escape(title)}, barmode="group", height=360, margin={"t": 50},
                         xaxis={"title": "scale point", "type": "category"},
                         yaxis={"title": "share of the scores", "tickformat": ".0%", "range": [0, 1]},
                         legend={"orientation": "h", "y": -0.25})
    return figure
