"""The Agreement page's "How the judge errs" under AppTest: for scores (the bundled Topical-Chat sample,
scripted judge) its sentences, the Bland-Altman plot and the use of the scale; for labels (the shared
MT-Bench folder with GPT-4o's labels imported) the confusion matrix as a figure and each label's
precision and recall, equal to scikit-learn's."""

from __future__ import annotations

import html
import json
from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

import geval
from studio.text import plain
from tests.apptest_helpers import APP, texts
from tests.helpers import plotly_array
from tests.test_page_inspect import scored_app

PAGE = "views/5_agreement.py"
sklearn = pytest.importorskip("sklearn.metrics")


def _chart(at, title: str) -> dict:
    """The plotly figure on the page whose title starts with `title`."""
    for chart in at.get("plotly_chart"):
        figure = json.loads(chart.proto.spec)
        if html.unescape(figure["layout"].get("title", {}).get("text", "")).startswith(title):
            return figure
    raise AssertionError(f"no chart titled {title!r}")


def _section(at) -> str:
    return "\n".join(m.value for m in at.markdown if m.value.startswith("- "))


def test_scores_show_their_sentences_the_bland_altman_plot_and_the_use_of_the_scale(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path, n=60)
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert "How the judge errs" in [h.value for h in at.subheader]
    judge = geval.Store(tmp_path / "store.sqlite").combos(dataset.name)["label"].iloc[0]  # named: it follows Item
    assert f"**{plain(judge)}** on Naturalness: the judge and aspect picked under Item by item, above." in \
        [m.value for m in at.markdown]  # by item, which the section's plots never said
    said = _section(at)
    for start in ("Weighted kappa \\(quadratic\\) of the judge's scores", "It spreads its scores",
                  "95% of its differences from the people's mean should lie between",
                  "Its error \\(judge − people\\) against the response's length in words: Spearman"):
        assert start in said, start
    assert any(w in said for w in ("Harsh: it scores", "Lenient: it scores", "Neither harsh nor lenient"))
    bland_altman = _chart(at, "Naturalness: Bland-Altman")
    assert len(bland_altman["data"][0]["customdata"]) == 60  # a point per item
    differences = [float(judge) - float(people) for _, judge, people in bland_altman["data"][0]["customdata"]]
    assert plotly_array(bland_altman["data"][0]["y"]).tolist() == pytest.approx(differences)  # the mean jittered,
    # never the difference read against the limits
    assert {shape["type"] for shape in bland_altman["layout"]["shapes"]} >= {"line", "rect"}  # limits, their bands
    assert bland_altman["layout"]["yaxis"]["title"]["text"] == "judge − people (points)"  # whole at 420 px high
    scale = _chart(at, "Naturalness: use of the scale")
    assert [trace["name"] for trace in scale["data"]] == ["judge (rounded)", "people (every score)"]
    _chart(at, "Naturalness: the judge against the people")  # a 1-3 scale is read as labels too
    tables = {frame.value.columns[1] for frame in [*at.dataframe, *at.table] if len(frame.value.columns) > 1}
    assert "weighted kappa [95% CI]" in tables and "judge (rounded)" in tables


def test_labels_show_the_confusion_matrix_and_precision_and_recall_as_scikit_learn_has_them(monkeypatch, tmp_path,
                                                                                           shared_data):
    folder = shared_data / "alttest" / "mtbench"
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(folder, store=store)
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json", "gpt-4o")
    store.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state["dataset_source"] = {"path": str(folder), "layout": None, "mapping": None, "name": None}
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error, texts(at)[-2000:]
    confusion = _chart(at, "label: the judge against the people's majority")
    cells = confusion["data"][0]
    assert cells["type"] == "heatmap" and cells["x"] == ["model_a", "model_b", "tie"]
    people = json.loads((folder / "human_annotations.json").read_text())
    judge = json.loads((folder / "llm_annotations.json").read_text())["gpt-4o"]
    truth, answer = [], []
    for instance in judge:
        given = Counter(labels[instance] for labels in people.values() if instance in labels).most_common(2)
        if given and (len(given) == 1 or given[0][1] > given[1][1]):
            truth.append(given[0][0])
            answer.append(judge[instance])
    labels = ["model_a", "model_b", "tie"]
    assert cells["text"] == sklearn.confusion_matrix(truth, answer, labels=labels).tolist()
    per_label = next(frame.value for frame in at.table if "precision" in frame.value.columns)
    precision, recall, _, support = sklearn.precision_recall_fscore_support(truth, answer, labels=labels)
    assert list(per_label["label"]) == labels and list(per_label["support (majority)"]) == list(support)
    assert [float(v[:5]) for v in per_label["precision"]] == pytest.approx(precision, abs=5e-4)
    assert [float(v[:5]) for v in per_label["recall"]] == pytest.approx(recall, abs=5e-4)
    said = _section(at)
    kappa = sklearn.cohen_kappa_score(truth, answer, labels=labels)
    assert plain(f"Cohen's kappa of the judge's labels against the people's majority: {kappa:.3f} [") in said
    assert "with a kappa of 0\\.000: kappa counts only agreement beyond chance" in said
    assert not [c for c in at.get("plotly_chart")
                if "Bland" in json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "")]
