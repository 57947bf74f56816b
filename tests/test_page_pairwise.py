"""A pairwise judge on the pages, under AppTest: a file of 24 pairs (12 questions) judged in both orders by
the scripted judge; Agreement shows its position figures, its agreement with each annotator beside the
people's with each other, and each model's win rate from the judge and the people; Inspect shows the
pair's two sides and both orders' answers and prompts side by side."""

from __future__ import annotations

from pathlib import Path

from helpers import pair_rows, scripted, write_pairs
from streamlit.testing.v1 import AppTest

import geval
from studio.text import plain
from tests.apptest_helpers import texts

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "app.py")


def pairs_app(monkeypatch, tmp_path: Path) -> tuple[AppTest, geval.Dataset]:
    """The app on a store holding the pairs, judged by the scripted judge with dialogue-pairwise."""
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    source = write_pairs(tmp_path / "pairs.csv", pair_rows())
    store = geval.Store(path)
    dataset = geval.load_dataset(source, store=store)
    geval.score(store, dataset.items, geval.Template.load("dialogue-pairwise"), scripted(), dataset.name)
    store.close()
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.session_state["dataset_source"] = {"path": str(source), "layout": None, "mapping": None, "name": None}
    return at, dataset


def table(at: AppTest, column: str):
    """The first table on the page with `column` (AppTest does not keep a table's key)."""
    return next(frame.value for frame in at.dataframe if column in frame.value.columns)


def test_agreement_shows_position_consistency_kappa_with_people_and_win_rates(monkeypatch, tmp_path):
    at, _ = pairs_app(monkeypatch, tmp_path)
    at.switch_page("views/5_agreement.py").run()
    assert not at.exception
    assert "Pairwise: position bias, agreement with people, win rates" in [h.value for h in at.subheader]
    positions = table(at, "").set_index("")  # a row per figure, a column per judge: narrow at any number of judges
    [judge] = positions.columns
    assert positions.loc["pairs", judge] == "24 (12 questions)"
    assert positions.loc["consistent under swap", judge].endswith("]")  # a share with its interval
    agreement = table(at, "accuracy without ties")
    assert list(agreement["with"]) == ["ann1", "ann2", "each annotator, mean", "the people's majority",
                                       "ann2", "each other, mean"]
    assert "kappa" in agreement and "accuracy without ties" in agreement
    wins = table(at, "win rate: judge")
    assert set(wins["model"]) == {"strong", "weak"} and "win rate: people" in wins
    said = texts(at)
    assert ("Agreement with people: the judge against each annotator, their mean and the people's majority (pairs whose "
            "majority is tied left out), then each pair of annotators and their mean; 95% intervals over the "
            "questions.") in [c.value for c in at.caption]
    assert "Asked in both orders, the judge names the same winner on" in said
    assert "two annotators reach" in said and plain("Zheng et al. (NeurIPS 2023) report 65%") in said
    assert plain("The judge's kappa minus the people's: ") in said  # a kappa, not an offset of the scores



def test_on_your_labels_the_section_names_you_and_shows_your_one_row(monkeypatch, tmp_path):
    """With your labels as the human side (you the one annotator), the heading and caption said "people" and the table
    had three rows of one value (you, the mean of you, your majority)."""
    at, dataset = pairs_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    for item in store.items(dataset.name):
        store.save_label(item.id, "preference", int(item.human["preference"][0]))
    store.set_human_side(dataset.name, "you")
    at.switch_page("views/5_agreement.py").run()
    assert not at.exception
    assert "Pairwise: position bias, agreement with your labels, win rates" in [h.value for h in at.subheader]
    assert ("Agreement with you: the judge against your labels, the one annotator; 95% intervals over the questions."
            in [c.value for c in at.caption])
    assert table(at, "accuracy without ties")["with"].tolist() == ["your labels"]
    assert "win rate: you" in table(at, "win rate: judge")

def test_inspect_shows_both_orders_side_by_side(monkeypatch, tmp_path):
    at, dataset = pairs_app(monkeypatch, tmp_path)
    at.switch_page("views/4_inspect.py").run()
    assert not at.exception
    item = next(i for i in dataset.items if i.id == at.session_state["inspect_jump"])
    shown = [str(t.value) for t in at.text]
    assert item.pair.response_a in shown and item.pair.response_b in shown
    headers = [h.value for h in at.subheader]
    assert f"Response A · {item.pair.system_a}" in headers and "Both orders" in headers
    said = texts(at)
    assert "**Order 1** (as given)" in said and "**Order 2** (swapped)" in said
    assert f"A = {item.pair.system_a}, B = {item.pair.system_b}" in said
    assert f"A = {item.pair.system_b}, B = {item.pair.system_a}" in said
    assert plain("The judgment (both orders averaged, order 2 swapped back):") in said
    words = {0: f"prefers {item.pair.system_a}", 1: f"prefers {item.pair.system_b}", 2: "says tie"}
    people = "; ".join(f"{who} {words[int(v)]}" for who, v in item.ratings("preference").items())
    assert plain(f"People: {people}.") in said
    assert plain("Both orders name the same winner.") in said or plain("The orders disagree: order 1 names") in said
    template = geval.Template.load("dialogue-pairwise")
    prompts = [call.prompt for call in template.calls(item)]
    codes = [c.value for c in at.code]
    assert all(prompt in codes for prompt in prompts)  # each order's exact prompt


def test_the_data_page_makes_pairs_of_a_datasets_responses_and_opens_them(monkeypatch, tmp_path):
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()  # the Data page on the bundled Topical-Chat sample: 10 contexts of 6 responses
    assert not at.exception
    at.number_input(key="data_pairs_per").set_value(2)
    at.button(key="data_pairs_make").click().run()
    assert not at.exception
    assert at.session_state["dataset_source"]["path"] == "topicalchat_usr_sample-pairs"
    assert "topicalchat_usr_sample-pairs" in [h.value for h in at.subheader]
    assert [m.value for m in at.metric][:2] == ["20", "10"]  # 2 pairs in each of 10 dialogues
    store = geval.Store(tmp_path / "store.sqlite")
    assert store.categories("topicalchat_usr_sample-pairs") == {"preference": ("model_a", "model_b", "tie")}
