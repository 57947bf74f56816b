"""geval.reporting.report: one report (HTML and Markdown from one document) and the figures shared with the Agreement page."""

import importlib.util
import io
import json
import math
import re
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, make_items, make_template, plotly_array, scripted

import geval
from geval.analysis.comparison import Comparison
from geval.data.items import Turn, make_item
from geval.errors import StoreError
from geval.judging.templates import parse_template, resolve_template
from geval.reporting.figures import (
    BARS_HEIGHT,
    abs_diff_histogram,
    correlation_bars,
    distribution_figure,
    human_scores_figure,
    judge_distribution_figure,
    scatter_figure,
)
from geval.reporting.summary import CAVEAT
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


def test_the_report_inlines_plotly_cartesian_bundle_a_third_of_the_library_unless_a_figure_needs_more(scored,
                                                                                                     monkeypatch):
    """The page was 4.9 MB, nearly all of it plotly.js: its cartesian bundle (2D traces) draws every
    figure of a report, whose figures count their points (bubbles) however many items there are; a
    document with a WebGL figure needs the whole library."""
    from plotly.offline import get_plotlyjs_version
    import plotly.graph_objects as go

    from geval.reporting.document import Document, Figure
    from geval.reporting.html import render_html

    store, dataset, pair = scored
    monkeypatch.setattr("geval.reporting.figures.WEBGL_ABOVE", 5)  # the app's scatter would be WebGL: not the report's
    report = geval.reporting.report(store, dataset, combos=[pair], n_boot=100, baselines=["length"]).html()
    assert f"* plotly.js (cartesian - minified) v{get_plotlyjs_version()}" in report  # plotly.py's version
    assert len(report.encode()) < 2_000_000 and len(figure_specs(report)) >= 4
    assert not [trace for spec in figure_specs(report) for trace in spec["data"] if trace["type"] == "scattergl"]
    webgl = render_html(Document("t", [Figure(go.Figure(go.Scattergl(x=[1, 2], y=[1, 2])), "webgl")]))
    assert f"* plotly.js v{get_plotlyjs_version()}" in webgl and "(cartesian - minified)" not in webgl


def figure_specs(page: str) -> list[dict]:
    """Every figure a report page holds, as drawn: its data and layout (the JSON beside its place)."""
    return [json.loads(text) for text in
            re.findall(r"<script type='application/json' id='figure-\d+-data'>(.*?)</script>", page, re.DOTALL)]


def test_the_report_is_one_self_contained_html_page(scored):
    store, dataset, pair = scored
    report = geval.reporting.report(store, dataset, combos=[pair], n_boot=100, baselines=["length"]).html()
    assert isinstance(report, str)
    assert report.lstrip().startswith("<!DOCTYPE html>") and "<html" in report and report.rstrip().endswith("</html>")
    assert "Plotly" in report
    assert len(re.findall(r"\* plotly\.js (\(cartesian - minified\) )?v\d", report)) == 1, "plotly.js inlined once"
    assert not re.search(r"<script[^>]*src=[\"']https?://", report), "nothing may be loaded from the network"
    assert "cdn.plot.ly/plotly" not in report
    # overview bars, the scores against people's (bubbles); how the judge errs: confusion, Bland-Altman, use of
    # the scale; the systems' forest of sys0 alone (its 5 items labeled: documents are drawn until a system has 5)
    assert len(figure_specs(report)) == 6 and "left out, fewer than 5 labels: sys1 (4), sys2 (3)" in report
    assert dataset.summary() in report
    assert f"geval {geval.__version__}" in report
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", report)
    assert pair[1].replace("&", "&amp;") in report  # the judge signature
    assert "<th>value [95% CI]</th>" in report and "<td>pearson</td>" in report


def test_item_text_never_appears_raw(scored):
    store, dataset, pair = scored
    report = geval.reporting.report(store, "synthetic", combos=[pair], n_boot=100, baselines=["length"]).html()
    assert "alert('owned')" not in report.replace("&lt;script&gt;alert(&#x27;owned&#x27;)", "")
    assert "<script>alert" not in report
    assert "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt; **bold**" in report  # the worst-items table
    assert "synthetic (table): 12 items" in report


def test_precomputed_tables_are_used(scored):
    store, dataset, pair = scored
    table = geval.agree(store, "synthetic", pair, n_boot=50)
    table.loc[0, "note"] = "precomputed-marker"
    assert "precomputed-marker" in geval.reporting.report(store, dataset, combos=[pair], tables={pair: table},
                                                baselines=[]).html()


def test_a_dataset_of_a_class_reloaded_since_is_reported_as_the_dataset(scored, monkeypatch):
    """The app keeps its Dataset across a code change, on which Streamlit loads the project's modules again: the
    report took the old class's dataset for a name ("Error binding parameter 1: type 'Dataset' is not supported")."""
    store, dataset, pair = scored
    spec = importlib.util.spec_from_file_location("dataset_before_the_change", REPO / "geval" / "data" / "dataset.py")
    before = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, before)  # where its dataclasses look themselves up
    spec.loader.exec_module(before)
    kept = before.Dataset(dataset.name, dataset.path, dataset.layout, dataset.items)
    assert not isinstance(kept, geval.Dataset)
    html = geval.reporting.report(store, kept, combos=[pair], baselines=[], n_boot=50, figures=False).html()
    assert "synthetic: agreement with people" in html and "12 items" in html


def test_the_app_never_loads_its_modules_again_when_a_file_changes():
    """The reload behind the test above also made the judge's aspects unpicklable for its worker ("Can't pickle
    <class 'geval.judging.aspects.Aspect'>: it's not the same object"): the app watches no file (Streamlit reads
    .streamlit/config.toml so; a misspelt option would be ignored silently)."""
    probe = ("from streamlit import config; config.get_config_options(force_reparse=True); "
             "print(config.get_option('server.fileWatcherType'))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["none"], result.stderr


def test_a_pair_that_was_never_scored_is_a_named_error(scored):
    store, dataset, _ = scored
    with pytest.raises(StoreError,
                       match="no judgments for dataset 'synthetic' with these settings; score some items first"):
        geval.reporting.report(store, dataset, combos=[("0000", "nope")], baselines=[])



def test_a_judge_not_comparable_with_people_here_is_left_out_of_the_report_and_said_not_its_end(scored):
    """`geval report mydata` exited 2 and wrote nothing when one template scored there compared an aspect the
    dataset has no scores of (the app's report, made of the judges the page could read, was fine)."""
    store, dataset, _ = scored
    other = make_template(name="test-overall", aspects=(("Overall", 1, 5, "Overall"),))
    geval.score(store, dataset.items, other, scripted(), "synthetic")
    made = geval.reporting.report(store, dataset, baselines=[], n_boot=50, figures=False, alttest_epsilon=None)
    judged = _Page(made.html()).text["What was judged"]
    assert "Left out of this report, not comparable with people here:" in judged
    assert "test-overall" in judged and "no score or label of that name" in judged
    assert "test-overall" not in _Page(made.html()).text["Template versions and judges compared"]
    combos = store.combos("synthetic")
    pair = tuple(combos.loc[combos["template_version"] == other.version, ["template_version", "signature"]].iloc[0])
    with pytest.raises(StoreError, match="no judge aspect of test-overall"):  # named: it must be read
        geval.reporting.report(store, dataset, combos=[pair], baselines=[])


# --- the supervisor's report: two versions on a 40-item sample, flagged items with notes ------------------------------

SAMPLE = REPO / "data" / "topicalchat_usr_sample.json"


def _second_version() -> geval.Template:
    """The naturalness template with one line changed: another version, other scripted scores."""
    text = resolve_template("topicalchat-naturalness").text
    return parse_template(text.replace("Evaluation Form (scores ONLY):", "Evaluation Form (numbers ONLY):"),
                          source="v2")


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """The Topical-Chat sample (60 items, 10 dialogues), 40 of them drawn at random and scored with two
    versions of the naturalness template; one item flagged with a note holding markup, one with a note only.
    Plotly's default template is Streamlit's, as in the app that offers the report for download."""
    import streamlit  # noqa: F401  (sets plotly's default template to Streamlit's placeholders #000001 ...)

    store = geval.Store(tmp_path_factory.mktemp("report") / "store.sqlite")
    dataset = geval.load_dataset(SAMPLE, store=store)
    items = dataset.select(sample=40, seed=1)
    first, second = resolve_template("topicalchat-naturalness"), _second_version()
    for template in (first, second):
        geval.score(store, items, template, scripted(), dataset.name)
    store.set_note(items[3].id, True, "judge <b>too kind</b> & sure")
    store.set_note(items[5].id, False, "read again")
    made = geval.reporting.report(store, dataset.name, n_boot=200, baselines=["length"])
    yield store, dataset, items, (first, second), made, made.html()
    store.close()


class _Page(HTMLParser):
    """A report page as text by section (h2), and its tables' cells by section."""

    def __init__(self, page: str):
        super().__init__()
        self.section, self.text, self.cells, self._in = "", {}, {}, []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self._in.append(tag)
        if tag == "h2":
            self.section = ""

    def handle_endtag(self, tag):
        if self._in:
            self._in.pop()

    def handle_data(self, data):
        if "script" in self._in or "style" in self._in:
            return
        if self._in and self._in[-1] == "h2":
            self.section += data
            return
        self.text[self.section] = self.text.get(self.section, "") + data + "\n"
        if self._in and self._in[-1] == "td":
            self.cells.setdefault(self.section, []).append(data)


def test_the_report_draws_each_series_in_its_own_colour_never_streamlits_placeholders(compared):
    *_, items, _, _, page = compared
    figures = [(spec["data"], spec["layout"]) for spec in figure_specs(page)]
    # overview bars; per version: its scores against people's; the systems' forest; per version, how it errs:
    # confusion, Bland-Altman, scale
    assert len(figures) == 10
    placeholder = re.compile(r"#0000[0-4][0-9]\b")
    assert not placeholder.search(json.dumps(figures)), "a Streamlit placeholder colour went into the page"
    assert "template" not in json.dumps([layout for _, layout in figures])  # the page's one, set as each is drawn
    template = json.loads(re.search(r"<script type='application/json' id='plotly-template'>(.*?)</script>", page,
                                    re.DOTALL).group(1))
    assert template["layout"]["colorway"] == list(geval.reporting.COLOURS)  # the app's colours
    forest = [data for data, _ in figures if any(trace.get("name") == "people only" for trace in data)]
    assert len(forest) == 1 and len({trace["marker"]["color"] for trace in forest[0]}) == len(forest[0])
    bars = [data for data, _ in figures if data not in forest][0]
    combos = {trace["name"]: trace["marker"]["color"] for trace in bars}
    assert len(combos) == 2 and len(set(combos.values())) == 2, combos
    scatters = [data for data, layout in figures if "judge vs human" in layout.get("title", {}).get("text", "")]
    assert len(scatters) == 2
    for [bubbles] in scatters:  # a bubble per pair of scores, sized by its items: light whatever the items
        assert plotly_array(bubbles["customdata"]).sum() == len(items)


def test_the_report_says_what_was_judged_compares_the_versions_and_shows_notes_and_templates(compared):
    store, dataset, items, (first, second), made, page = compared
    parsed = _Page(page)
    judged = parsed.text["What was judged"]
    assert judged.strip().startswith("40 of 60 items judged")  # first what was judged, then the dataset's size
    assert parsed.cells["What was judged"].count("40 of 60") == 2
    comparison = parsed.text["Template versions and judges compared"]
    sentence = next(line for line in comparison.splitlines() if "Natural" in line and "B − A" in line
                    and line.startswith(("A (", "B (", "No clear difference", "Not decided")))
    readable = {t: f"topicalchat-naturalness, version {t.version} · scripted: hashed" for t in (first, second)}
    assert readable[first] in sentence and readable[second] in sentence  # alike but for the version: told apart
    expected = geval.compare(store, dataset.name, *(tuple(store.combos(dataset.name).set_index("template").loc[t.label][
        ["template_version", "signature"]]) for t in (first, second)), "Natural")
    assert f"{expected.difference:+.3f} [{expected.low:+.3f}, {expected.high:+.3f}]" in sentence
    assert f"p {'' if geval.reporting.format_p(expected.p).startswith('<') else '= '}" \
           f"{geval.reporting.format_p(expected.p)}" in sentence
    assert "-Evaluation Form (scores ONLY):\n+Evaluation Form (numbers ONLY):" in comparison  # the diff
    flagged = parsed.cells["Flagged items and notes"]
    assert [items[3].id, "yes", "judge <b>too kind</b> & sure"] == flagged[:3]  # shown as text
    assert items[5].id in flagged and "read again" in flagged
    assert "judge &lt;b&gt;too kind&lt;/b&gt; &amp; sure" in page and "<b>too kind" not in page
    for template in (first, second):
        assert template.text.strip() in parsed.text["Each template version and judge"]
    assert "Leaderboard" in parsed.text and "length" in parsed.cells["Leaderboard"]
    markdown = made.markdown()  # the same content, as Markdown
    assert "40 of 60 items judged" in markdown and sentence.strip() in markdown.replace("&lt;", "<")
    assert "judge &lt;b&gt;too kind&lt;/b&gt; &amp; sure" in markdown and first.text.strip() in markdown


def test_the_report_compares_as_the_agreement_pages_compare_does_when_given_its_a_and_b(compared):
    """The page's Compare read A = the second version, B = the first (B − A = −0.087); the report built from that
    page read them the other way round (+0.087), the original as A."""
    store, dataset, _, (first, second), _, _ = compared
    combos = store.combos(dataset.name).set_index("template")
    a, b = (tuple(combos.loc[t.label][["template_version", "signature"]]) for t in (second, first))
    made = geval.reporting.report(store, dataset.name, n_boot=50, baselines=[], alttest_epsilon=None, figures=False,
                                  ceiling=False, compared=(a, b))
    cells = _Page(made.html()).cells["Template versions and judges compared"]
    expected = geval.compare(store, dataset.name, a, b, "Natural")
    at = cells.index("Natural")
    assert cells[at + 1:at + 3] == [f"topicalchat-naturalness, version {t.version} · scripted: hashed"
                                    for t in (second, first)], cells[:12]
    assert f"{expected.difference:+.3f}" in cells[at + 5], cells[at:at + 7]


#: Lines of this project's own goals and seed comparisons: in a report only when asked for.
OWN_GOALS = ("goal for the embedded", "seed 000")


def test_the_projects_goals_and_seed_comparisons_are_left_out_unless_asked_for(compared):
    store, dataset, *_, made, page = compared
    for text in (page, made.markdown()):
        assert not [line for line in OWN_GOALS if line in text]
    asked = geval.reporting.report(store, dataset.name, n_boot=100, baselines=["length"], figures=False, goals=True)
    for text in (asked.html(), asked.markdown()):
        assert all(line in text for line in OWN_GOALS)
        assert "Against the goals (Topical-Chat USR, Pearson)" in text


def test_the_report_opens_with_the_summary_a_supervisor_reads_first(compared):
    store, dataset, items, (first, second), made, page = compared
    sections = re.findall(r"<h2>(.*?)</h2>", page)
    assert sections[:4] == ["Bottom line", "Summary", "What was judged", "Leaderboard"]  # then the main tables
    folded = re.findall(r"<details class=section><summary><h2>(.*?)</h2></summary>", page)
    assert folded == sections[1:]  # the bottom line open, every other part an appendix opened on demand
    markdown = made.markdown()
    assert re.findall(r"^## (.*)$", markdown, re.MULTILINE)[:2] == ["Bottom line", "Summary"]
    summary = _Page(page).text["Summary"]
    opened = _Page(page).text["Bottom line"]  # the one part open: the main correlation and the comparison there too
    assert next(line for line in summary.splitlines() if line.startswith("Main result: ")) in opened.splitlines()
    assert "No clear difference on Natural between A (" in opened
    assert "What was judged: 40 of 60 items of topicalchat_usr_sample" in summary
    assert "compared with the mean of 3 annotators per item" in summary
    main = next(line for line in summary.splitlines() if line.startswith("Main result: "))
    assert re.search(r"agrees with people at pearson -?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\] on ", main)
    assert "Protocol: Topical-Chat USR, turn level; read at the item level, on 40 items in 10 groups." in main
    assert re.search(r"Its 95% interval (lies above 0|lies below 0|holds 0)", summary)  # the verdict in words
    assert "No clear difference on Natural between A (" in summary  # the comparison's verdict, too
    assert "The human ceiling is how well one annotator agrees with the mean of the others" in summary
    assert CAVEAT in summary
    assert "(below one annotator)" in summary or "(above one annotator)" in summary or "within one" in summary
    long_listings = re.findall(r"<details><summary>(.*?)</summary>", page)
    assert any("items of largest disagreement" in title for title in long_listings)  # folded, not in the way
    assert any("its judge signature and template" in title for title in long_listings)
    assert markdown.index("## A1. ") > markdown.index("## Signatures")  # the listings at the end of the Markdown


def test_the_scatter_knows_each_point_item(scored):
    store, _, pair = scored
    frame = geval.disagreements(store, "synthetic", pair)
    figure = scatter_figure(frame, "naturalness", "Natural")
    points = [(trace.customdata[i], trace.text[i]) for trace in figure.data for i in range(len(trace.customdata))]
    assert sorted(i for i, _ in points) == sorted(frame["item_id"])
    hovers = dict(points)
    evil_id = frame.loc[frame["response"] == EVIL, "item_id"].iloc[0]
    assert hovers[evil_id].endswith("<br>&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt; **bold**")
    assert all(trace.type == "scatter" for trace in figure.data)
    score = frame.drop_duplicates("item_id").set_index("item_id")["score"]
    for trace in figure.data:
        for item, y, hover in zip(trace.customdata, trace.y, trace.text):
            assert abs(y - score[item]) <= 0.02 * 2 + 1e-9  # jittered by at most 2% of the 1-3 scale
            assert f"judge {score[item]:.2f} · human " in hover  # the exact score in the hover
    # the axes span the scales (1-3 both, and the jitter), so that bunched scores look bunched, not spread out
    assert list(figure.layout.yaxis.range) == list(figure.layout.xaxis.range) == pytest.approx([0.92, 3.08])


def test_the_scatters_legend_lists_systems_as_read_m2_before_m10():
    """The legend listed M1, M11, M12, M2 (by first item: ids sorted as text)."""
    systems = ["M1", "M11", "M12", "M2", "M10", "M3"]
    frame = pd.DataFrame({
        "item_id": [f"i{k}" for k in range(6)], "aspect": "naturalness", "aspect_name": "Naturalness",
        "human": "Natural", "score": 2.0, "human_score": 2.0, "scale_min": 1.0, "scale_max": 3.0, "human_min": 1.0,
        "human_max": 3.0, "system": systems, "response": "x",
    })
    figure = scatter_figure(frame, "naturalness", "Natural")
    assert [trace.name for trace in figure.data] == ["M1", "M2", "M3", "M10", "M11", "M12"]
    assert [trace.customdata.tolist() for trace in figure.data][:2] == [["i0"], ["i3"]]


def test_the_scatter_switches_to_webgl_for_many_points():
    for n in (5000, 5001):
        frame = pd.DataFrame({
            "item_id": [f"i{k}" for k in range(n)], "aspect": "naturalness", "aspect_name": "Naturalness",
            "human": "Natural", "score": np.linspace(1, 3, n), "human_score": np.linspace(3, 1, n), "scale_min": 1.0,
            "scale_max": 3.0, "human_min": 1.0, "human_max": 3.0, "system": "s", "response": "x" * 500,
        })
        [trace] = scatter_figure(frame, "naturalness", "Natural").data
        assert trace.type == ("scattergl" if n > 5000 else "scatter") and trace.customdata[0] == "i0"
        assert trace.text[0] == "item i0<br>system: s<br>judge 1.00 · human 3.00" + (
            "" if n > 5000 else "<br>" + "x" * 119 + "…")  # the response's first 120 characters, up to 5000 points



def test_a_pairwise_judges_axis_names_its_labels_and_a_scale_of_other_points_keeps_its_numbers():
    """A pairwise judge's score is its label's index (0, 1, 2): the scatter's judge axis showed those codes. Where the
    judge's scale has a point per label, its axis names them; a 1-5 scale against two labels keeps its numbers."""
    words = ("model_a", "model_b", "tie")
    frame = pd.DataFrame({"item_id": ["p0", "p1", "p2"], "aspect": "preference", "aspect_name": "Preference",
                          "human": "preference", "score": [0.0, 1.0, 2.0], "human_score": [0.0, 1.0, 1.0],
                          "scale_min": 0.0, "scale_max": 2.0, "human_min": 0.0, "human_max": 2.0, "system": "",
                          "response": "x"})
    for figure in (scatter_figure(frame, "preference", "preference", words=words),
                   scatter_figure(frame, "preference", "preference", per_item=False, words=words)):
        assert (list(figure.layout.yaxis.tickvals), list(figure.layout.yaxis.ticktext)) == ([0, 1, 2], list(words))
    other = scatter_figure(frame.assign(scale_min=1.0, scale_max=5.0), "preference", "preference", words=words)
    assert other.layout.yaxis.tickvals is None and list(other.layout.xaxis.ticktext) == list(words)

def test_the_histograms_use_the_common_scale(scored):
    store, _, pair = scored
    frame = geval.disagreements(store, "synthetic", pair)
    histogram = abs_diff_histogram(frame, "Naturalness", "Natural")
    centres = np.asarray(histogram.data[0].x, dtype=float)
    assert sum(histogram.data[0].y) == 12 and ((0 <= centres) & (centres <= 1)).all()
    assert tuple(histogram.layout.xaxis.range) == (0, 1)
    both = distribution_figure(frame, "naturalness", "Natural")
    assert [t.name.split(":")[0] for t in both.data] == ["judge", "human"]
    assert both.layout.barmode == "group"  # side by side: overlaid, bars of two blues hid each other


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


def _scored_by_three(means: list[float]) -> list:
    """Items whose three annotators' scores have the given means (on thirds)."""
    return [make_item("d", "turn", (), f"r{n}", human={"Natural": (mean,) * 3}) for n, mean in enumerate(means)]


def test_people_s_scores_on_thirds_get_a_bar_each_at_its_score_of_one_width():
    means = [1.0] * 3 + [4 / 3] * 5 + [5 / 3] * 2 + [2.0] * 4 + [3.0]  # 2.33 and 2.67 scored by nobody
    figure = human_scores_figure(_scored_by_three(means), "Natural")
    (bars,) = figure.data
    assert list(bars.x) == pytest.approx([1.0, 4 / 3, 5 / 3, 2.0, 3.0])  # at the scores: none cut by a bin's edge
    assert list(bars.y) == [3, 5, 2, 4, 1]
    assert bars.width is None  # one width, plotly's: the scores' smallest distance (a third)
    assert figure.layout.title.text == "Natural (15 items)" and figure.layout.xaxis.range is None
    declared = human_scores_figure(_scored_by_three(means[3:]), "Natural", (1.0, 5.0))  # nobody gave 1; asked 1-5
    assert list(declared.layout.xaxis.range) == pytest.approx([1 - 1 / 6, 5 + 1 / 6])  # the empty 1 shown


def test_people_s_scores_of_many_values_get_twenty_even_bins_over_their_range():
    means = [1 + n / 99 for n in range(100)]  # 100 distinct scores from 1 to 2
    (bars,) = human_scores_figure(_scored_by_three(means), "Natural").data
    assert len(bars.x) == 20 and sum(bars.y) == 100
    assert bars.width == pytest.approx(0.05) and bars.x[0] == pytest.approx(1.025)


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


@pytest.mark.parametrize("difference, low, high, p, start", [
    (0.12, 0.031, 0.208, 0.004, "B (v2) agrees better with people on Natural than A (v1): B − A = +0.120 "
                                "[+0.031, +0.208], p = 0.004 (pearson 0.412 against 0.292; jackknife over 12 groups, 40 "
                                "items)."),
    (-0.12, -0.208, -0.031, 0.0, "A (v1) agrees better with people on Natural than B (v2): B − A = -0.120 "
                                 "[-0.208, -0.031], p < 0.001 ("),
    (0.05, -0.1, 0.2, 0.41, "No clear difference on Natural between A (v1) and B (v2): the interval holds 0; B − A = "
                            "+0.050 [-0.100, +0.200], p = 0.410 ("),
    (0.5, NAN, NAN, NAN, "Not decided on Natural: B − A = +0.500 on 40 items in 12 groups, but the bootstrap "
                         "differences are undefined in most resamples."),
    (-0.0002, NAN, NAN, NAN, "Not decided on Natural: B − A = +0.000 on 40 items"),  # as the metric reads: not -0.000
])
def test_a_comparison_reads_as_a_verdict(difference, low, high, p, start):
    note = "" if math.isfinite(low) else "the bootstrap differences are undefined in most resamples"
    c = Comparison("pearson", 0.292, 0.412, difference, low, high, p, 1.0, 0.3, 40, 12, note)
    assert geval.reporting.verdict(c, "v1", "v2", "Natural").startswith(start)


def test_a_verdict_from_too_few_groups_says_to_score_more():
    c = Comparison("pearson", 0.292, 0.412, 0.12, NAN, NAN, NAN, 1.0, 0.3, 20, 6, "no interval: fewer than 10 groups")
    assert geval.reporting.verdict(c, "v1", "v2", "Natural") == (
        "Not decided on Natural: B − A = +0.120 on 20 items in 6 groups, but with fewer than 10 groups there is no "
        "interval to judge it by; score more groups.")
    one = Comparison("pearson", 0.865, -0.588, -1.453, NAN, NAN, NAN, NAN, NAN, 4, 1, "")
    assert "on 4 items in 1 group, but" in geval.reporting.verdict(one, "v1", "v2", "Natural")


def test_a_verdict_where_one_side_has_no_correlation_does_not_ask_for_more_groups():
    c = Comparison("pearson", NAN, 0.412, NAN, NAN, NAN, NAN, NAN, NAN, 60, 10, "")
    assert geval.reporting.verdict(c, "v1", "v2", "Natural") == (
        "Not decided on Natural: A has no pearson correlation on these 60 items (the same score for every item, "
        "or fewer than 3 scored), so there is no difference to judge.")


def test_bars_leave_out_what_is_withheld_and_say_why():
    """The group level from 2 groups: no bar; an item level without an interval (5 groups): a bar with no error
    bar; the panels' titles say which, and the hover reads like the table."""
    table = pd.DataFrame({
        "aspect": ["naturalness"] * 3 + ["coherence"], "human": ["Natural"] * 3 + ["Maintains Context"],
        "level": ["item", "group", "system", "item"], "metric": "pearson",
        "value": [0.512, NAN, 0.3, 0.4], "low": [NAN, NAN, 0.1, 0.2], "high": [NAN, NAN, 0.6, 0.6],
        "n": [24, 2, 6, 24], "groups": [5, 5, 12, 12], "unscored": 0, "note": "",
    })
    figure = correlation_bars(table)
    bars = [(trace.xaxis, x, y, trace.error_y) for trace in figure.data for x, y in zip(trace.x, trace.y)]
    assert [(axis, x, y) for axis, x, y, _ in bars] == [("x", "Maintains Context", 0.4), ("x", "Natural", 0.512),
                                                        ("x2", "Natural", None), ("x3", "Natural", 0.3)]
    errors = {(axis, x): error.visible is not False for axis, x, _, error in bars}
    assert errors == {("x", "Maintains Context"): True, ("x", "Natural"): False, ("x2", "Natural"): False,
                      ("x3", "Natural"): True}
    faint = {(trace.xaxis, x): (trace.marker.opacity, trace.marker.pattern.shape) for trace in figure.data
             for x in trace.x}  # a value without its interval is drawn faint and hatched, not as a finding
    assert faint[("x", "Natural")] == (0.4, "/") and faint[("x", "Maintains Context")] == (1.0, "")
    assert [a.text for a in figure.layout.annotations] == ["item", "group", "system"]  # a panel's notes overlapped
    assert figure.layout.title.subtitle.text == ("item: no interval (5 groups), no error bar: Natural<br>"  # the
                                                 "group: n/a (2 of 5 groups, 10 needed), no bar: Natural")  # above
    hovers = [row[2] for trace in figure.data for row in trace.customdata]
    assert "0.512 (no interval: 5 groups)" in hovers and "n/a (2 of 5 groups, 10 needed)" in hovers
    two = pd.concat([table.assign(combo="v1 · gpt-4o"),  # two judges: a note that holds for one names it
                     table.assign(combo="v2 · gpt-4o-mini", low=[0.3, NAN, 0.1, 0.2], high=[0.7, NAN, 0.6, 0.6])])
    assert correlation_bars(two).layout.title.subtitle.text == (
        "item: no interval (5 groups), no error bar: Natural (v1 · gpt-4o)<br>"
        "group: n/a (2 of 5 groups, 10 needed), no bar: Natural")
    crossed = pd.DataFrame({  # coherence left out for one judge, naturalness for the other: "no bar: Maintains
        "aspect": ["coherence", "naturalness"] * 2, "human": ["Maintains Context", "Natural"] * 2,  # Context, Natural"
        "level": "group", "metric": "pearson", "value": [NAN, 0.3, 0.4, NAN],  # read as no judge's bar on either
        "low": [NAN, 0.1, 0.2, NAN], "high": [NAN, 0.5, 0.6, NAN], "n": 2, "groups": 2, "unscored": 0, "note": "",
        "combo": ["v1 · gpt-4o"] * 2 + ["v2 · gpt-4o-mini"] * 2})
    assert correlation_bars(crossed).layout.title.subtitle.text == \
        "group: n/a (2 groups, 10 needed), no bar: Maintains Context (v1 · gpt-4o); Natural (v2 · " \
        "gpt-4o-mini)"
    long = two.assign(combo=lambda t: t["combo"] + " · a judge of a long name, " + "a" * 30)
    notes = correlation_bars(long).layout.title.subtitle.text.split("<br>")  # wrapped to the figure's width
    assert len(notes) == 3 and notes[1].startswith("  ") and max(map(len, notes)) <= 110, notes
    # the notes and a legend of seven judges add to the figure's height: the bars keep theirs (they were left 50 px)
    seven = pd.concat([table.assign(combo=f"judge {k} (imported from summeval_sample_llms.json)") for k in range(7)])
    for figure in (correlation_bars(table), correlation_bars(long), correlation_bars(seven)):
        layout = figure.layout
        assert layout.height - layout.margin.t - layout.margin.b == BARS_HEIGHT, (layout.height, layout.margin)
    assert correlation_bars(seven).layout.margin.b > correlation_bars(table).layout.margin.b
    imported = pd.concat([two.assign(combo=lambda t: t["combo"] + " (imported from summeval_sample_llms.json)"),
                          table.assign(combo="v3 · gpt-4.1 (imported from summeval_sample_llms.json)")])
    assert correlation_bars(imported).layout.title.subtitle.text.startswith(  # the note all share: in the legend
        "item: no interval (5 groups), no error bar: Natural (v1 · gpt-4o, v3 · gpt-4.1)<br>"), "cut at 60 characters"


def test_bars_stand_by_the_aspect_people_scored():
    """Two judges asking Natural by other names ("natural", "naturalness") stand side by side on the axis, the hover
    naming each judge's own; one judge comparing two of its aspects with Natural keeps them apart."""
    table = pd.DataFrame({"aspect": ["natural", "naturalness", "coherence"], "level": "item", "metric": "pearson",
                          "human": ["Natural", "Natural", "Maintains Context"], "value": [0.5, 0.4, 0.3],
                          "low": [0.4, 0.3, 0.2], "high": [0.6, 0.5, 0.4], "n": 24, "groups": 12, "unscored": 0,
                          "note": "", "combo": ["gpt-x", "v1 · scripted", "v1 · scripted"]})
    figure = correlation_bars(table)
    assert {trace.name: list(trace.x) for trace in figure.data} == {"gpt-x": ["Natural"],
                                                                   "v1 · scripted": ["Natural", "Maintains Context"]}
    assert [row[3] for trace in figure.data for row in trace.customdata] == ["natural", "naturalness", "coherence"]
    one = correlation_bars(table.assign(combo="v1 · scripted"))
    assert list(one.data[0].x) == ["Natural (natural)", "Natural (naturalness)", "Maintains Context"]


@pytest.mark.parametrize("level, value, low, high, n, groups, shown", [
    ("item", 0.41234, 0.1, 0.7, 60, 10, "0.412 [0.100, 0.700]"),
    ("item", 0.512, NAN, NAN, 24, 5, "0.512 (no interval: 5 groups)"),  # the interval withheld
    ("system", 0.4, NAN, NAN, 12, 5, "0.400 (no interval: 5 groups to resample)"),  # n counts systems
    ("system", 1.0, NAN, NAN, 5, 60, "1.000 (no interval: 5 systems)"),  # fewer than 10 systems
    ("item", 0.412, 0.1, NAN, 60, 12, "0.412 (no interval)"),  # undefined in most resamples
    ("group", NAN, NAN, NAN, 2, 2, "n/a (2 groups, 10 needed)"),  # the value withheld
    ("group", NAN, NAN, NAN, 1, 1, "n/a (1 group, 10 needed)"),
    ("group", NAN, NAN, NAN, 2, 10, "n/a (2 of 10 groups, 10 needed)"),  # "2 groups" on 10: 8 of one judge score
    ("system", NAN, NAN, NAN, 2, 8, "n/a (2 systems, 3 needed)"),
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


def test_what_was_judged_says_what_each_way_of_asking_cost(store):
    dataset = geval.load_dataset("topicalchat_usr_sample")
    store.save_dataset(dataset)
    dialogues = list(dict.fromkeys(item.group for item in dataset.items))[:2]
    items = [item for item in dataset.items if item.group in dialogues]
    for name in ("topicalchat-batch", "topicalchat-naturalness"):
        geval.score(store, items, resolve_template(name), scripted(), dataset.name)
    markdown = geval.reporting.report(store, dataset.name, figures=False, baselines=(), ceiling=False).markdown()
    header = next(line for line in markdown.splitlines() if line.startswith("| row | template version | judge |"))
    assert header.split(" | ")[-4:] == ["judge calls", "prompt tokens per call", "judge time per item", "cost |"]
    calls = {name: next(line for line in markdown.splitlines() if line.startswith(f"| {name} · ")).split(" | ")[-4]
             for name in ("topicalchat-batch", "topicalchat-naturalness")}
    assert len(items) == 12 and calls == {"topicalchat-batch": "16",  # 2 dialogues x 4 aspects x 2 orders, shared
                                          "topicalchat-naturalness": "12"}  # one per item


def test_a_judge_of_no_known_price_costs_unknown_in_the_report_as_in_the_app(store):
    from openai_stub import OpenAIStub

    from geval.judging.backends.openai import OpenAIJudge

    dataset = geval.load_dataset("topicalchat_usr_sample")
    store.save_dataset(dataset)
    template = resolve_template("topicalchat-naturalness")
    with OpenAIStub() as stub:
        judge = OpenAIJudge("stub-model", base_url=stub.url, api_key="sk-test", mode="logprobs", max_retries=0)
        geval.score(store, dataset.items[:4], template, judge, dataset.name)
    geval.score(store, dataset.items[:4], template, scripted(), dataset.name)
    markdown = geval.reporting.report(store, dataset.name, figures=False, baselines=(), ceiling=False).markdown()
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| row | template version | judge |")) + 2
    rows = [line.split(" | ") for line in lines[start:start + 2]]
    costs = {row[2]: row[-1].rstrip(" |") for row in rows}
    assert costs == {next(judge for judge in costs if "stub-model" in judge): "cost unknown (no price for this model)",
                     "scripted: hashed": "$0.0000"}, costs


def test_one_summary_per_document_falls_back_to_the_item_level_and_says_so(store, tmp_path):
    """QAGS-CNN's layout, read as SummEval's: one summary per document by one system, so neither the
    per-document nor the system-level protocol can be computed; the report reads the item level instead."""
    rng = np.random.default_rng(0)
    rows = [{"doc_id": f"doc{d}", "system_id": "bart", "source": f"document {d} " + "word " * d,
             "system_output": f"summary {d} " + "token " * int(rng.integers(1, 30)),
             "scores": {"consistency": float(rng.integers(1, 6))}} for d in range(30)]
    path = tmp_path / "qags_like.json"
    path.write_text(json.dumps(rows), "utf-8")
    dataset = geval.load_dataset(path, store=store)
    assert dataset.layout == "summeval"
    geval.score(store, dataset.items, resolve_template("summeval-consistency"), scripted(), dataset.name)
    board = geval.leaderboard(store, dataset.name, baselines=["length"], n_boot=100, ceiling=False)
    [said] = board.fallback
    assert said.startswith("qags_like: its own protocols cannot be computed on these items (SummEval, summary level: "
                           "0 of its 30 groups have 3 or more items") and "1 system (the system level needs 3)" in said
    assert said.endswith("read at the level that can be instead: item (the generic protocol)")
    assert set(board.cells["level"]) == {"item"} and board.cells["value"].notna().all()
    markdown = geval.reporting.report(store, dataset.name, baselines=["length"], n_boot=100, figures=False).markdown()
    assert "Read at other levels than the dataset's own protocol, which cannot be computed here:" in markdown
    leaderboard = markdown.split("## Leaderboard", 1)[1].split("\n## ", 1)[0]
    assert "n/a (no group" not in leaderboard and "n/a (1 system, 3 needed)" not in leaderboard


def test_items_as_csv_have_their_ids_and_each_annotators_score_beside_the_mean():
    """No way in the app to export item ids with their human scores: the Data page's CSV."""
    items = [make_item("mine", "turn", [Turn("A", "hi")], "hello", "a fact", "s1", "g1", {"Natural": (1.0, 3.0)},
                       annotators={"Natural": ("ann", "bob")}, source_id="row-7"),
             make_item("mine", "turn", [], "bye", "", "s2", "g2", {"Natural": (2.0,)}, annotators={"Natural": ("bob",)})]
    table = pd.read_csv(io.StringIO(geval.reporting.items_csv(items)))
    assert list(table.columns) == ["id", "file id", "group", "system", "level", "context", "response", "grounding",
                                   "Natural", "Natural [ann]", "Natural [bob]"]
    assert table["id"].tolist() == [item.id for item in items] and table.loc[0, "file id"] == "row-7"
    assert table.loc[0, ["Natural", "Natural [ann]", "Natural [bob]"]].tolist() == [2.0, 1.0, 3.0]
    assert math.isnan(table.loc[1, "Natural [ann]"]) and table.loc[1, "Natural"] == 2.0


def test_items_as_csv_read_a_pass_fail_aspect_in_words():
    """The CSV gave a pass/fail label as 0 and 1 (its code): each annotator's word, and the item's labels in
    words in the aspect's column (the word when they agree, each word with its count when not)."""
    items = [make_item("mine", "turn", [], "hi", "", "s1", "g1", {"Verdict": (1.0, 0.0, 1.0)},
                       annotators={"Verdict": ("ann", "bob", "cy")}),
             make_item("mine", "turn", [], "bye", "", "s1", "g2", {"Verdict": (0.0,)}, annotators={"Verdict": ("bob",)})]
    table = pd.read_csv(io.StringIO(geval.reporting.items_csv(items, {"Verdict": ("fail", "pass")})))
    assert table.loc[0, ["Verdict", "Verdict [ann]", "Verdict [bob]", "Verdict [cy]"]].tolist() == [
        "pass 2, fail 1", "pass", "fail", "pass"]
    assert table.loc[1, "Verdict"] == "fail" and table.loc[1, "Verdict [bob]"] == "fail"
    assert pd.isna(table.loc[1, "Verdict [ann]"])


def test_one_split_of_labels_has_one_name_whoever_gave_which():
    """Two people split "pass 1, fail 1" or "fail 1, pass 1" by who came first: one name, ties in the categories'
    order (a histogram of the splits showed one split as two bars)."""
    words = ("fail", "pass")
    assert geval.reporting.labels_in_words([1.0, 0.0], words) == geval.reporting.labels_in_words([0.0, 1.0], words) \
        == "fail 1, pass 1"
    assert geval.reporting.labels_in_words([0.0, 1.0, 1.0], words) == "pass 2, fail 1"


def test_hover_texts_are_escaped_in_one_pass_as_one_by_one():
    """`escaped` (the scatter's item ids in one pass) gives `html.escape(str(...))` of each value, also
    when a text holds its separator."""
    import html

    from geval.reporting.figures import escaped

    values = ["a<b", 'say "hi" & go', "it's", 7, "", "plain"]
    assert escaped(values) == [html.escape(str(v)) for v in values]
    assert escaped(["x\x00<y", "z"]) == ["x\x00&lt;y", "z"]
    assert escaped([]) == []


def test_what_a_report_reads_again_of_a_judge_stays_kept_at_a_million_judgments(file_store):
    """At 1,000,000 judgments a report read its judge's judgments twice (4.6 s each): its disagreements alone held
    22 million cells of the 20 million kept. What it keeps of a judge, per judgment, times a million, fits."""
    from geval.store.store import CELLS_KEPT_AGAIN

    items = make_items(40)
    file_store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score(file_store, items, make_template(), scripted(), "synthetic")
    judged = int(file_store.combos("synthetic")["ok"].sum())
    geval.reporting.report(file_store, "synthetic", figures=False, n_boot=50, baselines=["length"])
    per_judgment = sum(frame.size for _, frame in file_store._reads.values() if frame.size >= judged) / judged
    assert 20 < per_judgment and per_judgment * 1_000_000 <= CELLS_KEPT_AGAIN


def test_a_report_of_a_dataset_nothing_judged_says_so_before_its_baselines(file_store):
    """A report of a dataset no judge has scored holds the baselines and the people's agreement: it says so
    before the baselines start (the likelihood gain alone took 8 minutes of a 2-core machine, unannounced)."""
    items = make_items(12)
    file_store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", items))
    said = []
    geval.reporting.report(file_store, "synthetic", figures=False, n_boot=50, baselines=["length"],
                           on_progress=said.append)
    nothing = "synthetic: nothing is judged yet: the report holds the baselines and the people's own agreement"
    announced = [place for place, line in enumerate(said) if line.startswith(nothing)]
    assert announced and announced[0] < said.index("synthetic: leaderboard"), said


def test_the_report_says_each_of_its_steps_once(file_store):
    """`geval report` printed "can the judge replace an annotator?" twice: before the test and again as its section
    was written from it."""
    items = make_items(40)
    file_store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score(file_store, items, make_template(), scripted(), "synthetic")
    said = []
    geval.reporting.report(file_store, "synthetic", figures=False, n_boot=50, baselines=["length"],
                           on_progress=said.append)
    assert "synthetic: can the judge replace an annotator?" in said
    assert len(said) == len(set(said)), said


def test_where_the_protocol_reads_no_judge_the_main_result_is_the_agreement_tables(tmp_path):
    """SummEval's protocols read per document and per system: 18 summaries of 9 documents, two each, have neither a
    document of 3 nor enough systems. The report's bottom line said "No correlation with people to report yet" above
    a table (and a page) with the item level's Pearson."""
    store = geval.Store(tmp_path / "s.sqlite")
    dataset = geval.load_dataset("summeval_sample", store=store)
    documents = sorted({item.group for item in dataset.items})[:9]
    items = [item for group in documents for item in [i for i in dataset.items if i.group == group][:2]]
    template = geval.Template.load("summeval-coherence")
    geval.score(store, items, template, scripted(), dataset.name)
    summary = geval.reporting.report(store, dataset.name, n_boot=50, baselines=["length"], figures=False).markdown()
    main = next(line for line in summary.splitlines() if line.startswith("Main result: "))
    assert "agree with people" in main and " on coherence" in main, main
    assert ("From the agreement tables, as the protocol (SummEval, summary level) reads no judge here (see the "
            "leaderboard below for why); read at the item level, on 18 items in 9 groups.") in main, main
    assert "No correlation with people to report yet" not in summary
