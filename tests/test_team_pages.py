"""The app for a team (AppTest): no account, no sign-in; with accounts, a sign-in page; an annotator
sees their queue alone, blind; a lead sees the Queues page with its agreement."""

from __future__ import annotations

import geval
import pytest
from apptest_helpers import open_app, texts
from helpers import REPO


@pytest.fixture
def team(tmp_path):
    """A store with the Topical-Chat sample, a lead, two annotators and a queue of 12 items, overlap 2."""
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json", store=store)
    store.add_user("lena", "lead", "lead-password")
    for name in ("ann", "bob"):
        store.add_user(name, "annotator", f"{name}-password")
    geval.labeling.queues.create(store, "pilot", dataset.name, geval.labeling.parse_aspects("Natural 1-3"),
                                 ["ann", "bob"], "random", 12, 2, "ends", seed=1, created_by="lena")
    return store, dataset


def sign_in(at, name: str, password: str):
    at.text_input[0].input(name)
    at.text_input[1].input(password)
    at.button[0].click().run()
    return at


def test_with_no_account_the_app_opens_as_before(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    assert not at.exception
    assert "Sign in" not in texts(at) and at.title[0].value == "Data"


def test_with_accounts_a_sign_in_page_comes_first_and_a_wrong_password_is_refused(monkeypatch, tmp_path, team):
    at = open_app(monkeypatch, tmp_path)
    assert not at.exception
    assert not at.title and "sign in with the name and password" in texts(at)
    sign_in(at, "ann", "not-her-password")
    assert "do not match an account" in texts(at) and "not-her-password" not in texts(at)


def test_an_annotator_sees_their_queue_blind_and_labels_with_a_reason(monkeypatch, tmp_path, team):
    store, dataset = team
    at = sign_in(open_app(monkeypatch, tmp_path), "ann", "ann-password")
    assert not at.exception
    assert at.title[0].value == "My queue" and "0 of 12 items labeled" in texts(at)
    shown = texts(at)  # nothing of the judge, the dataset's scores or the other annotator
    assert not at.metric and not at.dataframe and "Judge" not in shown and "bob" not in shown
    assert not [e for e in at.sidebar if getattr(e, "label", "") in ("Check the judge",)]
    at.radio[0].set_value(3)
    first = store.assignments("pilot", "ann")["item_id"].iloc[0]
    save = next(b for b in at.button if b.label == "Save")
    save.click().run()  # no reason for a 3, the scale's end: asked for, nothing saved
    assert "end of the scale" in texts(at) and store.queue_labels("pilot").empty
    at.text_input[0].input("a natural, friendly reply")
    next(b for b in at.button if b.label == "Save").click().run()
    saved = store.queue_labels("pilot")
    assert list(zip(saved["item_id"], saved["annotator"], saved["score"], saved["reason"])) == [
        (first, "ann", 3.0, "a natural, friendly reply")]
    assert "1 of 12 items labeled" in texts(at)


def test_an_annotators_link_to_a_lead_page_is_refused_in_one_line(monkeypatch, tmp_path, team):
    at = sign_in(open_app(monkeypatch, tmp_path, params={"combo": "x", "annotator": "bob"}), "bob", "bob-password")
    assert not at.exception
    assert "link's settings (annotator, combo) are for the lead's pages" in texts(at)
    assert not at.query_params


def test_a_lead_reads_the_queues_alpha_and_kappa(monkeypatch, tmp_path, team):
    store, dataset = team
    items = store.assignments("pilot")
    for row in items.itertuples():  # ann and bob agree on every item they share
        store.save_label(row.item_id, "Natural", 2 + sum(map(ord, row.item_id)) % 2, row.annotator, 5.0, "")
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    at.switch_page("views/8_queues.py").run()
    assert not at.exception
    shown = texts(at)
    assert "Krippendorff's alpha (ordinal)" in [m.label for m in at.metric]
    assert at.metric[0].value.startswith("1.000") and at.metric[1].value.startswith("1.000")
    assert "12 items labeled by two or more" in shown


def test_a_lead_makes_a_queue_on_the_page(monkeypatch, tmp_path, team):
    store, dataset = team
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    at.switch_page("views/8_queues.py").run()
    at.text_input(key="queue_name").input("second")
    at.multiselect(key="queue_who").set_value(["ann", "bob"])
    at.selectbox(key="queue_how").set_value("per_system")
    at.number_input(key="queue_n").set_value(1)
    next(b for b in at.button if b.label == "Make the queue").click().run()
    assert not at.exception and "Queue second is made: 6 items, each to 2 of 2 annotators." in texts(at)
    assert store.queues(dataset.name) == ["pilot", "second"]
    assert sorted(store.assignments("second")["annotator"].value_counts()) == [6, 6]
