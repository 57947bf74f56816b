"""The app for a team (AppTest): no account, no sign-in; with accounts, a sign-in page; an annotator
sees their queue alone, blind; a lead sees the Queues page with its agreement."""

from __future__ import annotations

import json
import time

import geval
import pytest
from apptest_helpers import open_app, texts, wait_for
from helpers import REPO, scripted
from test_page_label import label, post, unit

from studio import auth


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


def page_places(at) -> list[tuple[int, str]]:
    """The main area's elements from the page's title on: (place, kind)."""
    drawn = [(place, type(node).__name__) for place, node in at.main.children.items()]
    return drawn[next(n for n, (_, kind) in enumerate(drawn) if kind == "Title"):]


@pytest.mark.parametrize("name", ["ann", "lena"])
def test_the_run_that_signs_in_draws_the_page_in_the_places_of_the_next_runs(monkeypatch, tmp_path, team, name):
    """The sign-in form and its cookie's components are above the page in the run that signs in, and gone
    from the next (the cookie's component answers): a fragment (My queue's labeling unit) run between
    them writes to its place in the first, which the browser must still have in the second."""
    at = sign_in(open_app(monkeypatch, tmp_path), name, "lead-password" if name == "lena" else f"{name}-password")
    assert not at.exception and at.title
    first = page_places(at)
    assert page_places(at.run()) == first and not at.exception


def test_an_annotator_labels_their_queue_blind_in_the_labeling_unit_with_a_reason_where_it_is_required(
        monkeypatch, tmp_path, team):
    """My queue draws the labeling unit with her own items in the queue's order, under her name, and
    nothing of the judge, the dataset's scores or the other annotator; a label at the scale's end with no
    reason is not stored and answered why (the unit holds it at once too: "ask"), then stored with it."""
    store, dataset = team
    at = sign_in(open_app(monkeypatch, tmp_path), "ann", "ann-password")
    assert not at.exception
    assert at.title[0].value == "My queue" and "Queue pilot: 0 of 12 items labeled." in texts(at)
    assert not at.metric and not at.dataframe and "Judge" not in texts(at) and "bob" not in texts(at)
    data = unit(at)
    order = store.assignments("pilot", "ann")["item_id"].tolist()
    assert (data["annotator"], data["blind"], data["verdict"], data["total"], data["done"]) == ("ann", True, False,
                                                                                                12, 0)
    assert data["queue"] == order and data["aspects"][0]["ask"].keys() == {"1", "3"}
    assert all(i["shown"] == {} and i["system"] == "" and i["labels"] == {} for i in data["items"])
    assert {key for i in data["items"] for key in i} == {"id", "place", "group", "earlier", "recent", "response",
                                                        "grounding", "captions", "labels", "reasons", "complete",
                                                        "shown", "system"}  # the text, her own labels, no score
    assert "bob" not in json.dumps(data)
    first = order[0]
    asked, = post(at, label(first, 3) | {"reason": ""})  # the scale's end, no reason: not stored, said why
    assert store.queue_labels("pilot").empty
    assert [(a["seq"], a["item"], a["score"]) for a in unit(at)["asked"]] == [(asked, first, 3)]
    assert "end of the scale (1-3)" in unit(at)["asked"][0]["why"]
    post(at, label(first, 3) | {"reason": " a natural, friendly reply "})
    saved = store.queue_labels("pilot")
    assert list(zip(saved["item_id"], saved["annotator"], saved["score"], saved["reason"])) == [
        (first, "ann", 3.0, "a natural, friendly reply")]
    post(at, label(order[1], 2) | {"reason": ""})  # inside the scale: no reason needed
    assert len(store.queue_labels("pilot")) == 2 and "Queue pilot: 2 of 12 items labeled." in texts(at)
    assert unit(at)["queue"] == order[2:] and unit(at)["history"] == order[:2]


def test_my_queue_refuses_a_label_naming_another_annotator_or_an_item_not_hers(monkeypatch, tmp_path, team):
    """The annotator is the server's identity, never the browser's echo."""
    store, dataset = team
    at = sign_in(open_app(monkeypatch, tmp_path), "ann", "ann-password")
    order = store.assignments("pilot", "ann")["item_id"].tolist()
    elsewhere = next(i.id for i in dataset.items if i.id not in set(store.assignments("pilot")["item_id"]))
    posted = post(at, label(order[0], 2) | {"annotator": "bob"}, label(elsewhere, 2),
                  label(order[0], 2, "Overall") | {"reason": "an aspect the queue does not ask for"}, label(order[1], 2))
    failed = {f["seq"]: f["why"] for f in unit(at)["failed"]}
    assert "names annotator bob, but you are signed in as ann" in failed[posted[0]]
    assert f"item {elsewhere} is not in your queue pilot" in failed[posted[1]]
    assert "queue pilot asks for Natural, not 'Overall'" in failed[posted[2]]
    saved = store.labels(dataset.name)
    assert list(zip(saved["item_id"], saved["annotator"])) == [(order[1], "ann")]


def test_where_a_label_differs_from_anothers_by_two_the_server_asks_a_reason_without_saying_the_other(
        monkeypatch, tmp_path, team):
    store, dataset = team
    queue = geval.labeling.queues.create(store, "wide", dataset.name, geval.labeling.parse_aspects("Natural 1-5"),
                                         ["ann", "bob"], "random", 4, 2, "differs", seed=3, created_by="lena")
    first = store.assignments("wide", "ann")["item_id"].iloc[0]
    store.save_label(first, "Natural", 5, "bob", 3.0, "bob's own reason")
    at = sign_in(open_app(monkeypatch, tmp_path), "ann", "ann-password")
    at.selectbox(key="my_queue").set_value("wide").run()
    data = unit(at)
    assert data["verdict"] is True and data["aspects"][0]["ask"].keys() == {"1", "5"}
    assert "bob" not in json.dumps(data) and data["queue"][0] == first
    asked, = post(at, label(first, 2) | {"reason": ""})  # 3 from bob's: asked, the other label not said
    why = unit(at)["asked"][-1]
    assert (why["seq"], why["score"]) == (asked, 2) and "differs from another annotator's label" in why["why"]
    assert "5" not in why["why"] and store.queue_labels("wide", "ann").empty
    post(at, label(first, 4) | {"reason": ""})  # 1 from bob's: stored without a reason
    assert store.queue_labels("wide", "ann")[["score", "reason"]].values.tolist() == [[4.0, ""]]
    assert queue.reasons == "differs"


def test_an_item_of_a_queue_labeled_on_some_of_its_aspects_is_next_not_behind(monkeypatch, tmp_path, team):
    """An item with a label of one of the queue's two aspects was sent among those labeled before: the unit never
    went on to it. It is the next to label, with the label it has."""
    store, dataset = team
    geval.labeling.queues.create(store, "both", dataset.name, geval.labeling.parse_aspects("Natural 1-3, Engaging 1-3"),
                                 ["ann", "bob"], "random", 4, 2, "none", seed=3, created_by="lena")
    first = store.assignments("both", "ann")["item_id"].iloc[0]
    store.save_label(first, "Natural", 2, "ann")
    at = sign_in(open_app(monkeypatch, tmp_path), "ann", "ann-password")
    at.selectbox(key="my_queue").set_value("both").run()
    data = unit(at)
    assert data["queue"][0] == first and first not in data["history"]
    assert next(i for i in data["items"] if i["id"] == first)["labels"] == {"Natural": 2}


def test_a_leads_link_opens_its_page_after_sign_in_also_where_the_next_run_names_no_page(monkeypatch, tmp_path,
                                                                                       team):
    """A lead who followed a link to Label signs in: Label opens, and stays open in the run after it, which on a busy
    machine may name no page (the cookie's component answered before the browser had heard of Label): the browser
    test of a team was shown Data there once."""
    monkeypatch.setattr(auth, "_url_page", lambda: "label")  # the link's address, which AppTest gives no page
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    assert not at.exception and at.title[0].value == "Label"
    at._page_hash = at._finished_page_script_hash = ""  # the next run names the page the signed-out runs had: none
    at.run()
    assert not at.exception and at.title[0].value == "Label"
    at.switch_page("views/1_data.py").run()  # then the pages the lead picks
    assert at.title[0].value == "Data"
    at._page_hash = at._finished_page_script_hash = ""
    assert at.run().title[0].value == "Data"  # a run naming no page after that: the app's root, Data


def test_an_annotators_link_to_a_lead_page_is_refused_in_one_line(monkeypatch, tmp_path, team):
    at = sign_in(open_app(monkeypatch, tmp_path, params={"combo": "x", "annotator": "bob"}), "bob", "bob-password")
    assert not at.exception
    said = [toast.value for toast in at.toast]  # a toast: a line stayed above the queue through every label
    assert len(said) == 1 and "link's settings (annotator, combo) are for the lead's pages" in said[0], said
    assert "lead's pages" not in texts(at) and not at.query_params


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
    assert "They gave the same label to every item two or more of them labeled." in shown  # no table of 0 ranges


def test_a_lead_reads_no_labels_per_hour_from_an_annotators_first_few_labels(monkeypatch, tmp_path, team):
    store, _ = team
    rows = store.assignments("pilot")
    mine = rows[rows["annotator"] == "ann"]["item_id"].tolist()
    theirs = rows[rows["annotator"] == "bob"]["item_id"].tolist()
    for item_id in mine:
        store.save_label(item_id, "Natural", 2, "ann", 30.0, "")
    for item_id in theirs[:3]:  # three quick first keys: no rate of 1,800 an hour
        store.save_label(item_id, "Natural", 2, "bob", 6.0, "")
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    at.switch_page("views/8_queues.py").run()
    assert not at.exception
    table = at.dataframe[0].value.set_index("annotator")
    assert table.loc["ann", "labels per hour"] == 120 and table.loc["bob", "labels per hour"] != \
        table.loc["bob", "labels per hour"]  # NaN
    assert geval.labeling.queues.RATE_NOTE in texts(at)


def test_the_queues_judge_menu_opens_on_a_judge_of_its_aspect(monkeypatch, tmp_path, team):
    """It opened on the newest judge, one of Maintains Context, beside "the judge scores no aspect compared with
    Natural" for a queue on Natural."""
    store, dataset = team
    geval.score(store, dataset.items[:6], geval.Template.load("topicalchat-naturalness"), scripted(), dataset.name)
    geval.score(store, dataset.items[:6], geval.Template.load("topicalchat-coherence"), scripted(), dataset.name)
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    at.switch_page("views/8_queues.py").run()
    assert not at.exception
    menu = at.selectbox(key="queue_judge")
    assert menu.value.startswith("topicalchat-naturalness@") and all("coherence" not in o for o in menu.options)


def test_a_queues_kappa_on_too_few_shared_items_says_why_it_has_none(monkeypatch, tmp_path, team):
    """With 3 items labeled by both, the mean kappa read "n/a (undefined)" beside a pair's 0.000: it says why."""
    store, dataset = team
    shared = store.assignments("pilot", "ann")["item_id"].tolist()[:3]
    for k, item in enumerate(shared):
        store.save_label(item, "Natural", 1 + k, "ann", 5.0, "")
        store.save_label(item, "Natural", 2 + k % 2, "bob", 5.0, "")
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    at.switch_page("views/8_queues.py").run()
    assert not at.exception
    kappa = next(m.value for m in at.metric if m.label == "Mean pairwise weighted kappa")
    assert kappa == "n/a (undefined: no two annotators labeled 10 items together)"
    alpha = next(m.value for m in at.metric if m.label == "Krippendorff's alpha (ordinal)")  # no figure of 3 either
    assert alpha == "n/a (undefined: 3 items labeled by two or more, fewer than 10)"
    assert "3 items labeled by two or more" in texts(at)


def test_a_lead_measures_the_queues_reasons_with_an_openai_compatible_judge_that_drafts_no_rubric(
        monkeypatch, tmp_path, team, stub):
    """The Queues page's Measure in the background, the sidebar's judge the stub (it answers scores only:
    once the whole measurement failed on the rubric it could not draft): the gain on held-out groups,
    and why no rubric was tried."""
    store, dataset = team
    geval.score(store, dataset.items, geval.Template.load("topicalchat-naturalness"), scripted(), dataset.name)
    for row in store.assignments("pilot").itertuples():  # the people's own score, far from this judge's on many
        store.save_label(row.item_id, "Natural", round(store.item(row.item_id).human_mean("Natural")), row.annotator,
                         5.0, f"{row.annotator} says why")
    stub.configure("logprobs", distribution={1: 0.2, 2: 0.5, 3: 0.3}, hashed=True)
    at = sign_in(open_app(monkeypatch, tmp_path, state={"judge_backend": "openai", "judge_model": "stub-model",
                                                        "judge_base_url": stub.url, "api_key": "sk-test"}),
                 "lena", "lead-password")
    at.switch_page("views/8_queues.py").run()
    at.number_input(key="queue_reasons_budget").set_value(200)
    at.button(key="queue_reasons_go").click().run()
    assert not at.exception
    wait_for(at, lambda a: "Gain on" in texts(a) or a.error)
    shown = texts(at)
    assert not at.error, shown[-1500:]
    assert "Not adopted" in shown or "Adopted" in shown
    assert "No rubric was tried" in shown and "the corrected examples were measured alone" in shown
    assert stub.count > 10


def test_a_lead_makes_a_queue_on_the_page(monkeypatch, tmp_path, team):
    store, dataset = team
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    at.switch_page("views/8_queues.py").run()
    assert at.text_input(key="queue_aspects").value == "Understandable 0-1"  # the scale it was asked on, not 1-3
    assert "queue_n" not in [box.key for box in at.number_input]  # every item: no n to give
    at.selectbox(key="queue_how").set_value("per_system").run()  # above the form: the form then asks for n
    at.text_input(key="queue_name").input("second")
    assert at.multiselect(key="queue_who").options[-1] == "lena"  # My queue tells a lead to be among them
    at.multiselect(key="queue_who").set_value(["ann", "bob"])
    at.number_input(key="queue_n").set_value(1)
    next(b for b in at.button if b.label == "Make the queue").click().run()
    assert not at.exception and "Queue second is made: 6 items, each to 2 of 2 annotators." in texts(at)
    assert store.queues(dataset.name) == ["pilot", "second"]
    assert sorted(store.assignments("second")["annotator"].value_counts()) == [6, 6]
    at.switch_page("views/7_label.py").run()  # a lead signed in labels under her own name
    assert not at.exception and at.text_input(key="label_annotator").value == "lena"


def test_a_session_cookie_made_before_its_account_signed_out_is_refused(tmp_path, team):
    """"Sign out" ends the session on the server (`Store.sign_out`): a cookie made before it, which a browser
    may keep when its deleting component never ran, no longer signs anyone in; one made after it does."""
    import jwt

    store, _ = team

    def cookie(made: float, name: str = "ann") -> str:
        return jwt.encode({"username": name, "exp_date": made + auth.COOKIE_DAYS * 86400}, store.session_key(),
                          algorithm="HS256")

    before = cookie(time.time() - 60)
    assert auth.cookie_user(store, before) == "ann"
    store.sign_out("ann")
    assert auth.cookie_user(store, before) is None and auth.cookie_user(store, cookie(time.time() - 60, "bob")) == "bob"
    assert auth.cookie_user(store, cookie(time.time() + 1)) == "ann"
    assert auth.cookie_user(store, cookie(time.time() - auth.COOKIE_DAYS * 86400 - 1)) is None  # expired
    elsewhere = jwt.encode({"username": "ann", "exp_date": time.time() + 60}, "another store's key, 32 bytes or more",
                           algorithm="HS256")
    assert auth.cookie_user(store, elsewhere) is None


def test_a_lead_with_no_queue_of_their_own_is_told_to_make_one_not_to_ask_the_lead(monkeypatch, tmp_path, team):
    """The lead's My queue said "the lead makes one on the Queues page"; an annotator's still says so."""
    at = sign_in(open_app(monkeypatch, tmp_path), "lena", "lead-password")
    at.switch_page("views/9_my_queue.py").run()
    assert not at.exception
    assert [i.value for i in at.info] == ["lena, no queue holds items for you yet: make one on the Queues page, with "
                                          "you among its annotators."]
    team[0].add_user("cid", "annotator", "cid-password")
    at = sign_in(open_app(monkeypatch, tmp_path), "cid", "cid-password")
    assert [i.value for i in at.info] == ["cid, no queue holds items for you yet: the lead makes one on the Queues "
                                          "page."]
