"""geval.report: one report (HTML and Markdown from one document) and the figures shared with the Agreement page."""

import io
import math
import re

import numpy as np
import pandas as pd
import pytest
from helpers import make_items, make_template, scripted

import geval
from geval.data.items import Turn, make_item
from geval.errors import StoreError
from geval.reporting.figures import (
    abs_diff_histogram,
    correlation_bars,
    distribution_figure,
    judge_distribution_figure,
    scatter_figure,
)
from geval.reporting.tables import agreement_csv, display_table, stack_tables

EVIL = "<script>alert('owned')</script> **bold**"


@pytest.fixture
def scored(store):
    """A store with 12 synthetic items (one response carries HTML and markdown) scored once."""
    items = make_items(11)
    items.append(make_item("synthetic", "turn", [Turn("A", "<b>hi</b>")], EVIL, "a fact", "sys0", "g9",
                           {"Natural": (1.0, 1.0)}))
    dataset = geval.Dataset("synthetic", "synthetic.csv", "table", items)
    store.save_dataset(dataset)
    template = make_template()
    geval.score(store, items, template, scripted(), "synthetic")
    combo = store.combos("synthetic").iloc[0]
    return store, dataset, (combo["template_version"], combo["signature"])


def test_the_report_is_one_self_contained_html_page(scored):
    store, dataset, pair = scored
    report = geval.report(store, dataset, combos=[pair], n_boot=100, baselines=["length"]).html()
    assert isinstance(report, str)
    assert report.lstrip().startswith("<!DOCTYPE html>") and "<html" in report and report.rstrip().endswith("</html>")
    assert "Plotly" in report
    assert len(re.findall(r"\* plotly\.js v\d", report)) == 1, "plotly.js should be inlined exactly once"
    assert not re.search(r"<script[^>]*src=[\"']https?://", report), "nothing may be loaded from the network"
    assert "cdn.plot.ly/plotly" not in report
    assert report.count("Plotly.newPlot(") == 4  # overview bars, scatter, |difference|, distributions
    assert dataset.summary() in report
    assert f"geval {geval.__version__}" in report
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", report)
    assert pair[1].replace("&", "&amp;") in report  # the judge signature
    assert "<th>value [95% CI]</th>" in report and "<td>pearson</td>" in report


def test_item_text_never_appears_raw(scored):
    store, dataset, pair = scored
    report = geval.report(store, "synthetic", combos=[pair], n_boot=100, baselines=["length"]).html()
    assert "alert('owned')" not in report.replace("&lt;script&gt;alert(&#x27;owned&#x27;)", "")
    assert "<script>alert" not in report
    assert "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt; **bold**" in report  # the worst-items table
    assert "synthetic (table): 12 items" in report


def test_precomputed_tables_are_used(scored):
    store, dataset, pair = scored
    table = geval.agree(store, "synthetic", pair, n_boot=50)
    table.loc[0, "note"] = "precomputed-marker"
    assert "precomputed-marker" in geval.report(store, dataset, combos=[pair], tables={pair: table},
                                                baselines=[]).html()


def test_a_pair_that_was_never_scored_is_a_named_error(scored):
    store, dataset, _ = scored
    with pytest.raises(StoreError,
                       match="no judgments for dataset 'synthetic' with these settings; score some items first"):
        geval.report(store, dataset, combos=[("0000", "nope")], baselines=[])


def test_the_scatter_knows_each_point_item(scored):
    store, _, pair = scored
    frame = geval.disagreements(store, "synthetic", pair)
    figure = scatter_figure(frame, "naturalness", "Natural")
    points = [(trace.customdata[i][0], trace.customdata[i][2]) for trace in figure.data
              for i in range(len(trace.customdata))]
    assert sorted(i for i, _ in points) == sorted(frame["item_id"])
    snippets = dict(points)
    evil_id = frame.loc[frame["response"] == EVIL, "item_id"].iloc[0]
    assert snippets[evil_id] == "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt; **bold**"
    assert all(trace.type == "scatter" for trace in figure.data)
    jitter = np.concatenate([np.asarray(t.y) for t in figure.data]) - np.concatenate(
        [np.asarray([c[3] for c in t.customdata]) for t in figure.data])
    assert np.abs(jitter).max() <= 0.02 * 2 + 1e-9  # 2% of the 1-3 scale


def test_the_scatter_switches_to_webgl_for_many_points():
    n = 5001
    frame = pd.DataFrame({
        "item_id": [f"i{k}" for k in range(n)], "aspect": "naturalness", "aspect_name": "Naturalness",
        "human": "Natural", "score": np.linspace(1, 3, n), "human_score": np.linspace(3, 1, n), "scale_min": 1.0,
        "scale_max": 3.0, "human_min": 1.0, "human_max": 3.0, "system": "s", "response": "x" * 500,
    })
    figure = scatter_figure(frame, "naturalness", "Natural")
    assert figure.data[0].type == "scattergl"
    assert len(figure.data[0].customdata[0][2]) == 120  # the response's first 120 characters (with an ellipsis)


def test_the_histograms_use_the_common_scale(scored):
    store, _, pair = scored
    frame = geval.disagreements(store, "synthetic", pair)
    histogram = abs_diff_histogram(frame, "Naturalness", "Natural")
    centres = np.asarray(histogram.data[0].x, dtype=float)
    assert sum(histogram.data[0].y) == 12 and ((0 <= centres) & (centres <= 1)).all()
    assert tuple(histogram.layout.xaxis.range) == (0, 1)
    overlaid = distribution_figure(frame, "naturalness", "Natural")
    assert [t.name.split(":")[0] for t in overlaid.data] == ["judge", "human"]
    assert overlaid.layout.barmode == "overlay"


def _disagreement_frame(values: list[float]) -> pd.DataFrame:
    """A frame of `disagreements` with one judgment per value (as |difference|, judge and human on 0-1)."""
    return pd.DataFrame({"aspect": "naturalness", "aspect_name": "Naturalness", "human": "Natural",
                         "disagreement": values, "judge_01": values, "human_01": values, "scale_min": 1.0,
                         "scale_max": 3.0, "human_min": 1.0, "human_max": 3.0})


@pytest.mark.parametrize("values, counts", [
    ([0.0, 0.049, 0.05, 0.5], {0: 2, 1: 1, 10: 1}),
    ([0.95, 0.999, 1.0], {19: 3}),  # 1 is in the last bin, not in one past the axis
    ([float("nan"), 0.2], {4: 1}),  # unscored: left out
])
def test_the_histograms_send_binned_counts(values, counts):
    frame = _disagreement_frame(values)
    expected = [counts.get(b, 0) for b in range(20)]
    for figure in (abs_diff_histogram(frame, "naturalness"), distribution_figure(frame, "naturalness")):
        for trace in figure.data:
            assert trace.type == "bar"
            assert list(trace.x) == pytest.approx([0.025 + 0.05 * b for b in range(20)])
            assert list(trace.y) == expected


def test_correlation_bars_carry_the_confidence_intervals(store):
    items = make_items(24)  # 12 groups: enough for an interval
    geval.score(store, items, make_template(), scripted(), "synthetic")
    store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", items))
    pair = tuple(store.combos("synthetic").iloc[0][["template_version", "signature"]])
    table = geval.agree(store, "synthetic", pair, n_boot=50)
    stacked = stack_tables({"v1": table, "v2": table})
    figure = correlation_bars(stacked, "pearson")
    assert {t.name for t in figure.data} == {"v1", "v2"}
    item = table[(table["metric"] == "pearson") & (table["level"] == "item")].iloc[0]
    trace = figure.data[0]
    assert math.isfinite(item["high"])
    assert trace.error_y.array[0] == pytest.approx(item["high"] - item["value"])
    assert trace.error_y.arrayminus[0] == pytest.approx(item["value"] - item["low"])


NAN = float("nan")


@pytest.mark.parametrize("level, value, low, high, n, groups, shown", [
    ("item", 0.41234, 0.1, 0.7, 60, 10, "0.412 [0.100, 0.700]"),
    ("item", 0.512, NAN, NAN, 24, 5, "0.512 (no interval: 5 groups)"),  # the interval withheld
    ("item", 0.412, 0.1, NAN, 60, 12, "0.412 (no interval)"),  # undefined in most resamples
    ("group", NAN, NAN, NAN, 2, 8, "n/a (2 groups)"),  # the value withheld: 2 groups of 3 or more items
    ("group", NAN, NAN, NAN, 1, 8, "n/a (1 group)"),
    ("system", NAN, NAN, NAN, 2, 8, "n/a (2 systems)"),
    ("item", NAN, NAN, NAN, 30, 12, "n/a (undefined)"),  # constant scores
])
def test_display_table_shows_value_and_interval_in_one_column_or_why_not(level, value, low, high, n, groups, shown):
    table = pd.DataFrame({"aspect": ["a"], "human": ["H"], "level": [level], "metric": ["pearson"],
                          "value": [value], "low": [low], "high": [high], "n": [n], "groups": [groups], "note": [""],
                          "unscored": [2]})
    assert display_table(table).loc[0, "value [95% CI]"] == shown
    assert list(display_table(table).columns) == ["aspect", "human", "level", "metric", "value [95% CI]", "n",
                                                  "unscored", "note"]
    csv = pd.read_csv(io.StringIO(agreement_csv(table)))
    assert csv.loc[0, "value [95% CI]"] == shown and list(csv.columns)[4:6] == ["value [95% CI]", "value"]


def test_the_judge_distribution_figure_covers_the_whole_scale():
    figure = judge_distribution_figure({2: 0.25, 3: 0.75}, 1, 5, 2.75)
    assert list(figure.data[0].x) == [1, 2, 3, 4, 5]
    assert list(figure.data[0].y) == [0, 0.25, 0.75, 0, 0]
