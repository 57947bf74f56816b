"""The Label page under AppTest, and what your labels change on the Data and Agreement pages: a
table with no human score (12 rows of the Topical-Chat sample in 4 dialogues) stored and scored
by the scripted judge; labels posted as the labeling unit posts them (its component's state: the
changes not answered yet, each naming its item), and what the page sends the unit read from the
component's data. What the unit does in the browser (keys, the item on screen, the next item at once)
is tested in tests/test_e2e_label.py."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from helpers import REPO, run_cli, scripted
from streamlit.testing.v1 import AppTest

import geval
from tests.apptest_helpers import APP, open_app, texts

PAGE = "views/7_label.py"
MAPPING = ["response=response", "context=context", "grounding=fact", "system=system", "group=conversation_id"]


def write_unscored_table(path: Path, n: int = 12, per_group: int = 3) -> Path:
    """A user's CSV with no human score: `n` responses of the bundled Topical-Chat sample, `per_group`
    to a conversation (columns context, fact, response, system, conversation_id)."""
    items = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json").items
    chosen = [item for group in dict.fromkeys(i.group for i in items)
              for item in [i for i in items if i.group == group][:per_group]][:n]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["context", "fact", "response", "system", "conversation_id"])
        for item in chosen:
            writer.writerow(["\n".join(turn.render() for turn in item.context), item.grounding, item.response,
                             item.system, item.group])
    return path


def label_app(monkeypatch, tmp_path: Path, n: int = 12, score: bool = True) -> tuple[AppTest, geval.Store]:
    """The app on the Label page, its dataset "mine" (no human score) stored and, with `score`, scored
    by the scripted judge with the naturalness template."""
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    store = geval.Store(path)
    dataset = geval.load_dataset(write_unscored_table(tmp_path / "mine.csv", n), mapping=MAPPING, store=store)
    if score:
        geval.score(store, dataset.items, geval.Template.load("topicalchat-naturalness"), scripted(), "mine")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": "mine"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at, store


def unit(at: AppTest) -> dict:
    """What the page sent the labeling unit last (its data: the next items, the answer to its changes)."""
    proto = at.get("bidi_component")[0].proto
    return json.loads(proto.json or proto.mixed.json)


def shown_item(at: AppTest) -> str:
    """The item the unit would show now: the first of the next items the page chose."""
    return unit(at)["queue"][0]


def item(at: AppTest, item_id: str) -> dict:
    return next(i for i in unit(at)["items"] if i["id"] == item_id)


def post(at: AppTest, *changes: dict) -> list[int]:
    """`changes` made in the unit, posted as it posts them: the outbox of every change not answered yet
    (those of earlier posts the page has answered dropped), each with its seq, the dataset and the
    annotator the unit was given; then a run. Returns their seqs."""
    data = unit(at)
    outbox = [op for op in (at.session_state["label_unit"] or {}).get("outbox", []) if op["seq"] > data["acked"]] \
        if "label_unit" in at.session_state else []
    start = max([data["acked"], *(op["seq"] for op in outbox)])
    made = [{"dataset": data["dataset"], "annotator": data["annotator"], "aspect": data["aspects"][0]["name"], **change,
             "seq": start + n} for n, change in enumerate(changes, 1)]
    at.session_state["label_unit"] = {"outbox": outbox + made}
    at.run()
    assert not at.exception
    return [op["seq"] for op in made]


def label(item_id: str, score: int, aspect: str | None = None, seconds: float = 2.5) -> dict:
    """A label as the unit posts it (`aspect`: default the first the page gave it)."""
    return {"op": "label", "item": item_id, "score": score, "seconds": seconds} | ({"aspect": aspect} if aspect else {})


def test_a_label_is_stored_on_the_item_it_names_and_answered(monkeypatch, tmp_path):
    """The unit posts a label with its item's id: it is stored at once on that item, with the seconds it
    took, and answered (acked); the item leaves the next items, what is shown once labeled is sent with
    each item (the judge's score, blind until the unit shows it), and an edit replaces the label."""
    at, store = label_app(monkeypatch, tmp_path)
    data = unit(at)
    first = data["queue"][0]
    assert (data["total"], data["done"], data["acked"], data["history"]) == (12, 0, 0, [])
    assert data["aspects"] == [{"name": "Naturalness", "min": 1, "max": 3}] and data["blind"] is True
    assert data["verdict"] is False and data["asked"] == []  # no queue: a reason is never required
    assert re.fullmatch(r"judge \d\.\d\d \(1-3\)", item(at, first)["shown"]["Naturalness"])
    assert item(at, first)["response"] and item(at, first)["place"] == 1
    assert "needs about 385 labels, more than the 12 items the judge scored; all 12 give about ±0.57" in texts(at)

    seqs = post(at, label(first, 2))
    labels = store.labels("mine")
    assert labels[["item_id", "aspect", "score", "annotator", "seconds"]].values.tolist() == [
        [first, "Naturalness", 2.0, "you", 2.5]]
    data = unit(at)
    assert data["acked"] == seqs[0] and data["done"] == 1 and first not in data["queue"] and data["history"] == [first]
    assert item(at, first)["labels"] == {"Naturalness": 2} and item(at, first)["complete"] is True
    assert "1 labeled" in texts(at)

    second = data["queue"][0]
    post(at, label(second, 3), label(first, 1))  # the next item, then a correction of the first
    assert store.labels("mine").set_index("item_id")["score"].to_dict() == {first: 1.0, second: 3.0}


def test_a_reason_typed_after_the_digit_is_stored_with_its_label_sent_back_and_exported(monkeypatch, tmp_path):
    """The unit posts the digit's label, then the same label with the reason typed after it (Tab, text,
    Enter; its seconds then include the typing, or none when it cannot tell: the label's stay); the store
    keeps it with the label, the unit is sent it back with the item, and `geval labels export` writes it."""
    at, store = label_app(monkeypatch, tmp_path)
    first, second = unit(at)["queue"][:2]
    post(at, label(first, 2) | {"reason": ""}, label(first, 2, seconds=6.0) | {"reason": "  friendly, but vague "},
         label(second, 3) | {"reason": ""})
    post(at, label(second, 3, seconds=None) | {"reason": "on topic"})
    labels = store.labels("mine").set_index("item_id")
    assert labels.loc[first, ["score", "seconds", "reason"]].tolist() == [2.0, 6.0, "friendly, but vague"]
    assert labels.loc[second, ["score", "seconds", "reason"]].tolist() == [3.0, 2.5, "on topic"]
    assert item(at, first)["reasons"] == {"Naturalness": "friendly, but vague"} and item(at, first)["labels"] == {
        "Naturalness": 2}
    out = tmp_path / "labels.csv"
    exported = run_cli("labels", "export", "mine", "--out", str(out), "--store", str(tmp_path / "store.sqlite"))
    assert exported.returncode == 0, exported.stderr
    with out.open(encoding="utf-8") as handle:
        rows = {row["item_id"]: row["reason"] for row in csv.DictReader(handle)}
    assert rows == {first: "friendly, but vague", second: "on topic"}


def test_a_label_lands_on_the_item_it_names_whatever_the_page_chose_since(monkeypatch, tmp_path):
    """Labels typed on items the unit held while the server, learning from each label, chose other next
    items (the most informative order refits on every label): each is stored on the item it names, none
    on the items the page now puts first."""
    at, store = label_app(monkeypatch, tmp_path)
    at.selectbox(key="label_order").set_value("informative").run()
    held = unit(at)["queue"][:6]
    values = {i: 1 + n % 3 for n, i in enumerate(held)}
    post(at, *(label(i, v) for i, v in values.items()))
    assert store.labels("mine").set_index("item_id")["score"].to_dict() == values
    data = unit(at)
    assert not set(data["queue"]) & set(held) and data["done"] == 6


def test_a_change_posted_again_is_taken_once_and_an_undo_puts_back_what_its_label_replaced(monkeypatch, tmp_path):
    """The unit sends its outbox again while unanswered (a slow or lost connection): a change the page
    took already is not applied twice (an undo sent twice would take back two labels)."""
    at, store = label_app(monkeypatch, tmp_path)
    first, second = unit(at)["queue"][:2]
    one, two = post(at, label(first, 2), label(second, 3))
    three, = post(at, label(first, 1))  # an edit
    post(at, {"op": "undo", "item": first, "of": three, "previous": 2})
    assert store.labels("mine").set_index("item_id")["score"].to_dict() == {first: 2.0, second: 3.0}
    acked = unit(at)["acked"]
    at.session_state["label_unit"] = {"outbox": [  # everything sent again, as after a reconnect
        label(first, 2) | {"seq": one}, label(second, 3) | {"seq": two},
        {"op": "undo", "item": first, "aspect": "Naturalness", "of": three, "previous": 2, "seq": acked}]}
    at.run()
    assert store.labels("mine").set_index("item_id")["score"].to_dict() == {first: 2.0, second: 3.0}
    post(at, {"op": "undo", "item": second, "of": two, "previous": None})  # a new label undone
    assert store.labels("mine")["item_id"].tolist() == [first] and second in unit(at)["queue"]


def test_a_change_the_store_refuses_is_answered_with_why_and_the_next_ones_are_stored(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    bad, good = post(at, label("0123456789abcdef", 2), label(first, 3))
    data = unit(at)
    assert data["acked"] == good and [f["seq"] for f in data["failed"]] == [bad]
    assert "0123456789abcdef" in data["failed"][0]["why"] and "is not in" in data["failed"][0]["why"]
    assert store.labels("mine")["item_id"].tolist() == [first]


def test_skip_leaves_an_item_unlabeled_and_the_labeled_ones_are_not_offered_again(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    post(at, {"op": "skip", "item": first})
    assert shown_item(at) != first and first not in unit(at)["queue"] and store.labels("mine").empty
    for value in (1, 2, 3):
        post(at, label(shown_item(at), value))
    fresh = AppTest.from_file(APP, default_timeout=120)  # a new session (a reload): the next unlabeled item
    fresh.session_state["dataset_source"] = {"stored": "mine"}
    fresh.run()
    fresh.switch_page(PAGE).run()
    assert shown_item(fresh) == first  # a new session offers the skipped item again
    assert not set(unit(fresh)["queue"]) & set(store.labels("mine")["item_id"])
    assert "3 labeled" in texts(fresh) and unit(fresh)["history"] == store.labels("mine")["item_id"].tolist()


def test_a_saved_version_counts_among_the_templates_that_score_an_aspect_and_is_offered(monkeypatch, tmp_path):
    """A version saved on the Prompts page that scores Fluent: "No template that fits these items scores Fluent"
    (prompts/ files were counted alone), and the Template menu did not offer it."""
    at, store = label_app(monkeypatch, tmp_path, score=False)
    text = geval.Template.load("response-overall").text.replace("Overall", "Fluent")
    fluent = geval.Template.parse(text, source="prompts/response-fluent")
    store.save_template(fluent, comment="fluency")
    at.run()
    assert fluent.label in at.selectbox(key="label_template").options
    at.radio(key="label_from").set_value("Aspects I name").run()
    at.text_input(key="label_aspects").input("Fluent 1-5").run()
    assert not at.exception
    assert "No template that fits these items scores" not in texts(at)


def test_aspects_you_name_get_their_own_scale(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path, score=False)
    at.radio(key="label_from").set_value("Aspects I name").run()
    at.text_input(key="label_aspects").input("Overall 1-5, Fluent 0-1").run()
    assert not at.exception
    assert unit(at)["aspects"] == [{"name": "Overall", "min": 1, "max": 5}, {"name": "Fluent", "min": 0, "max": 1}]
    assert "no judge has scored these items yet" in texts(at)
    assert "No template that fits these items scores Fluent" in texts(at)  # Overall: response-overall scores it
    assert "the Prompts page drafts one from them (\"No template here judges Fluent: draft one\")" in texts(at)
    first = shown_item(at)
    post(at, label(first, 4, "Overall"))
    assert first in unit(at)["queue"] and item(at, first)["complete"] is False  # one aspect of two
    post(at, label(first, 1, "Fluent"))
    assert store.labels("mine").set_index("aspect")["score"].to_dict() == {"Overall": 4.0, "Fluent": 1.0}
    assert first not in unit(at)["queue"] and unit(at)["done"] == 1
    # once labeled, each named aspect's scale is the one people were asked on (issue 43.1)
    assert geval.Store(tmp_path / "store.sqlite").scales("mine") == {"Overall": (1.0, 5.0), "Fluent": (0.0, 1.0)}
    assert "Declared as the scale people were asked on: " in texts(at)
    at.text_input(key="label_aspects").input("Overall 1-10").run()
    assert [e.value for e in at.error] == ["aspect 'Overall' scale 1-10: use whole numbers with 0 <= min < max <= 9, "
                                           "so that one key rates"]


def test_the_data_and_agreement_pages_take_the_labels_as_the_human_side(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path)
    at.switch_page("views/5_agreement.py").run()
    assert not at.error and [i.value for i in at.info] == [
        "mine has no human score to compare the judge with yet: label items yourself, or import labels on the "
        "Data page (or with `python -m geval labels import`)."]
    at.switch_page(PAGE).run()
    post(at, *(label(i, 1 + n % 3) for n, i in enumerate(unit(at)["queue"][:12])))
    assert "All 12 items are labeled." in texts(at) and unit(at)["queue"] == []
    at.switch_page("views/1_data.py").run()
    assert re.search(r"Naturalness: 12 of 12 items labeled \(you; a label took \d+ s \(median\)\)", texts(at))
    at.switch_page("views/5_agreement.py").run()
    assert not at.exception and not at.error
    assert "Compared with: your labels (Naturalness: 12 items labeled by you)" in texts(at).replace("\\", "")
    assert "agree_side" not in [r.key for r in at.radio]  # no people's scores: nothing to choose
    table = at.dataframe[0].value
    item = table[(table["level"] == "item") & (table["metric"] == "pearson")].iloc[0]
    assert (item["human"], item["n"]) == ("Naturalness", 12)
    assert item["value [95% CI]"].endswith("(no interval: 4 groups)")
    assert any(chart for chart in at.get("plotly_chart"))
    curve = next(frame.value for frame in at.dataframe if "fitted combination" in frame.value.columns)
    assert curve["labels"].tolist() == [10, 12]
    said = next(c.value for c in at.caption if "of the judge alone" in c.value).replace("\\", "")  # what it shows
    assert "2 points, from 10 labels (the fewest a combination is fitted on) to 12" in said
    assert "label more to extend it" in said


def test_with_people_and_labels_the_agreement_page_offers_the_choice(monkeypatch, tmp_path):
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    store = geval.Store(path)
    dataset = geval.load_dataset("topicalchat_usr_sample", store=store)
    items = dataset.items[:12]
    geval.score(store, items, geval.Template.load("topicalchat-naturalness"), scripted(), dataset.name)
    for index, item in enumerate(items[:6]):
        store.save_label(item.id, "Natural", 1 + index % 3)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("views/5_agreement.py").run()
    assert at.radio(key="agree_side").value == "people"
    assert at.dataframe[0].value.iloc[0]["n"] == 12
    at.radio(key="agree_side").set_value("you").run()
    assert not at.exception and store.human_side(dataset.name) == "you"
    assert at.dataframe[0].value.iloc[0]["n"] == 6
    at.radio(key="agree_side").set_value("both").run()
    assert at.dataframe[0].value.iloc[0]["n"] == 6 and store.items(dataset.name)[0].human["Natural"][-1] == 1.0
    at.switch_page("views/1_data.py").run()  # its plots are the file's, whatever the side: said so
    assert any(c.value.endswith("The plots below are the file's own scores, without your labels.") for c in at.caption)


def test_each_labeled_aspect_shows_its_own_judge_once_labeled(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path)
    geval.score(store, store.items("mine"), geval.Template.load("topicalchat-coherence"), scripted(), "mine")
    at.run()
    at.radio(key="label_from").set_value("Aspects I name").run()
    at.text_input(key="label_aspects").input("Natural 1-3, Maintains Context 1-3").run()
    shown = item(at, shown_item(at))["shown"]  # shown once each aspect is labeled: its own judge
    assert set(shown) == {"Natural", "Maintains Context"} and shown["Natural"] != shown["Maintains Context"]
    assert all(re.fullmatch(r"judge \d\.\d\d \(1-3(, topicalchat-\w+)?\)", said) for said in shown.values())
    chosen = at.selectbox(key="label_judge").value.split("@")[0]  # the other aspect's judge is named: not the menu's
    assert [said.endswith(")") and "topicalchat-" in said for said in shown.values()].count(True) == 1
    assert all(chosen not in said for said in shown.values())
    post(at, label(shown_item(at), 3), label(shown_item(at), 1, "Maintains Context"))
    assert sorted(store.labels("mine")["aspect"]) == ["Maintains Context", "Natural"]


def test_the_judge_opens_on_the_one_that_scored_most_items_not_a_newer_trial_run(monkeypatch, tmp_path):
    """The embedded judge tried on 2 of 30 items after a judge of all 30: the page opened on the newest, ordering the
    items by 2 scores and saying it "needs about 385 labels, more than the 2 items the judge scored"."""
    at, store = label_app(monkeypatch, tmp_path)
    everyone = at.selectbox(key="label_judge").value
    trial = scripted(name="trial")
    geval.score(store, store.items("mine")[:2], geval.Template.load("topicalchat-naturalness"), trial, "mine")
    at = AppTest.from_file(APP, default_timeout=120)  # a new session
    at.session_state["dataset_source"] = {"stored": "mine"}
    at.run()
    at.switch_page(PAGE).run()
    menu = at.selectbox(key="label_judge")
    assert menu.options[0].endswith("scripted: trial") and menu.value == everyone  # newest first, not chosen


def test_the_judge_menu_offers_the_judges_of_the_aspects_labeled(monkeypatch, tmp_path):
    """The page opened on the newest judge, of another aspect, and showed another judge's score once labeled."""
    at, store = label_app(monkeypatch, tmp_path)
    geval.score(store, store.items("mine"), geval.Template.load("topicalchat-engagingness"), scripted(), "mine")
    at.run()
    menu = at.selectbox(key="label_judge")
    assert unit(at)["aspects"][0]["name"] == "Naturalness" and menu.value.startswith("topicalchat-naturalness@")
    assert not [o for o in menu.options if "engagingness" in o]


def test_on_a_file_of_your_own_an_aspect_is_named_as_the_template_names_it(monkeypatch, tmp_path):
    """A file of your own labeled on topicalchat-coherence: the page named the aspect by USR's "Maintains
    Context" (the template's human = ..., the dataset it was written for); it is the template's Coherence,
    its judge shown beside it once labeled. Labels given under the other name before keep it."""
    at, store = label_app(monkeypatch, tmp_path)
    geval.score(store, store.items("mine"), geval.Template.load("topicalchat-coherence"), scripted(), "mine")
    at.run()
    menu = at.selectbox(key="label_template")
    menu.set_value(next(o for o in menu.options if o.startswith("topicalchat-coherence@"))).run()
    assert unit(at)["aspects"] == [{"name": "Coherence", "min": 1, "max": 3}]
    assert re.fullmatch(r"judge \d\.\d\d \(1-3\)", item(at, shown_item(at))["shown"]["Coherence"])
    store.save_label(shown_item(at), "Maintains Context", 2)
    at.run()
    assert unit(at)["aspects"] == [{"name": "Maintains Context", "min": 1, "max": 3}]


def test_an_item_labeled_on_another_aspect_only_is_next_to_label_not_behind(monkeypatch, tmp_path):
    """Labels of another aspect (another template's, earlier) put the item among those labeled before, behind the
    one on screen: going on never reached it. It is the next to label on this page's aspects."""
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    store.save_label(first, "Engaging", 2)
    at.run()
    assert shown_item(at) == first and first not in unit(at)["history"]
    store.save_label(first, "Naturalness", 3)  # labeled on this page's aspect: behind now
    at.run()
    assert unit(at)["history"] == [first] and first not in unit(at)["queue"]


def test_the_template_menu_offers_only_templates_that_fit_the_items(monkeypatch, tmp_path):
    """A context and a response, no fact: no Topical-Chat template (they need {{fact}}), the generic ones."""
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    table = write_unscored_table(tmp_path / "mine.csv")
    geval.load_dataset(table, mapping=["response=response", "context=context", "group=conversation_id"],
                       store=geval.Store(path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": "mine"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    offered = at.selectbox(key="label_template").options
    assert any(o.startswith("response-naturalness@") for o in offered)
    assert not any(o.startswith(("topicalchat-", "personachat-", "summeval-")) for o in offered), offered
    at.selectbox(key="label_template").set_value(next(o for o in offered if o.startswith("response-naturalness@")))
    at.run()
    assert unit(at)["aspects"] == [{"name": "Naturalness", "min": 1, "max": 3}]
    assert "no judge has scored these items yet" in texts(at)


def test_with_no_template_that_fits_the_page_says_so(monkeypatch, tmp_path):
    import geval.judging.templates as templates

    at, _ = label_app(monkeypatch, tmp_path, score=False)
    at.session_state["template_text"] = geval.Template.load("personachat-naturalness").text  # the editor's: a persona
    empty = tmp_path / "prompts"
    empty.mkdir()
    monkeypatch.setattr(templates, "PROMPTS_DIR", empty)  # and no template in prompts/
    at.run()
    assert not at.exception
    assert any(w.value.startswith("No template in prompts/, nor the editor's, fits mine's items") for w in at.warning)


def test_a_link_with_an_annotator_labels_as_that_annotator_without_a_streamlit_warning(monkeypatch, tmp_path):
    """A link (or a reload) sets the annotator, the aspects and the blind toggle in the session; the widgets
    then take no default of their own (Streamlit logged "label_annotator was created with a default value
    but also had its value set via Session State"), and the saved label shows under the annotator's name."""
    from streamlit.elements.lib import policies

    warned = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    monkeypatch.setattr(policies._LOGGER, "warning", lambda message, *args, **kwargs: warned.append(message % args))
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    store = geval.Store(path)
    geval.load_dataset(write_unscored_table(tmp_path / "mine.csv"), mapping=MAPPING, store=store)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "mine", "annotator": "ann", "label_from": "Aspects I name",
                            "label_aspects": "Natural 1-3", "blind": "False"})
    at.switch_page(PAGE).run()  # a reload of the Label page: the link's values are set in the run that draws it
    assert not at.exception and not warned, warned
    assert unit(at)["annotator"] == "ann" and unit(at)["blind"] is False
    post(at, label(shown_item(at), 2))
    assert store.labels("mine")["annotator"].tolist() == ["ann"]


def test_on_news_summaries_the_template_menu_opens_on_one_written_for_summaries(monkeypatch, tmp_path):
    """An article,summary file opened Label on the editor's Topical-Chat template, listed as fitting."""
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    table = tmp_path / "news.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("article", "summary"), *((f"The council voted on budget {i}. It passed {i} to 3.",
                                                                 f"Budget {i} passed.") for i in range(6))])
    dataset = geval.load_dataset(table, mapping=["response=summary", "grounding=article"], store=geval.Store(path))
    assert dataset.levels == ["summary"]
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": "news"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    menu = at.selectbox(key="label_template")
    assert menu.value.startswith("summeval-") and all(o.startswith("summeval-") for o in menu.options), menu.options


def test_with_two_annotators_the_page_says_its_figures_read_one_and_agreement_the_mean(monkeypatch, tmp_path):
    """The Label page's agreement (one annotator's labels) and the Agreement page's (the mean of two)
    differed, unexplained."""
    at, store = label_app(monkeypatch, tmp_path)
    assert "labels of Natural alone" not in texts(at)
    store.save_labels([{"item_id": i.id, "aspect": "Natural", "score": 1 + n % 3, "annotator": "ann"}
                       for n, i in enumerate(store.items("mine")[:6])])
    at.run()
    assert ("The figures here read your labels of Natural alone; the Agreement page compares the judge with the "
            "mean of every annotator's labels of each item (you, ann), so its agreement differs from these.") \
        in texts(at).replace("\\", "")


def test_the_systems_line_says_whose_scores_it_reads(monkeypatch, tmp_path):
    """On PersonaChat's sample with none of the user's own labels the line read "2.63 [2.63, 2.63] with the
    judge, [2.63, 2.63] from your labels alone; all its items are labeled": the dataset's scores, as the user's."""
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    store = geval.Store(path)
    dataset = geval.load_dataset("personachat_usr_sample", store=store)
    geval.score(store, dataset.items, geval.Template.load("topicalchat-naturalness"), scripted(), dataset.name)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": dataset.name}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    line = item(at, shown_item(at))["system"]
    assert "your labels" not in line
    assert re.search(r"'s mean as people would score it \(Natural\): \d\.\d\d, from the dataset's own scores on every "
                     r"one of its 10 items: their own mean, not an estimate\.$", line), line



def verdicts_named(monkeypatch, tmp_path: Path) -> AppTest:
    """The Label page on the stored "verdicts" (`scored_verdicts` under `tmp_path`), not blind, its aspects named by
    hand."""
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": "verdicts"}
    at.session_state["label_blind"] = False
    at.run()
    at.switch_page(PAGE).run()
    return at.radio(key="label_from").set_value("Aspects I name").run()

def test_a_pass_fail_aspect_is_labeled_and_shown_in_its_words(monkeypatch, tmp_path):
    """On a pass/fail column the unit showed "you 1 · judge 0.62 (0-1) · people 1.00": codes and a mean of them."""
    from helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 12)
    at = verdicts_named(monkeypatch, tmp_path)
    assert at.text_input(key="label_aspects").value == "verdict 0-1"  # it opened on "Overall 1-5", which this lacks
    at.text_input(key="label_aspects").input("verdict 1-2").run()  # its 1 was shown "fail" and stored as "pass"
    assert [e.value for e in at.error] == ["'verdict 1-2': verdict is labeled with 2 categories: name it verdict 0-1, "
                                           "a digit for each (0 fail, 1 pass)"]
    at.text_input(key="label_aspects").input("verdict 0-1").run()
    assert not at.exception
    sent = unit(at)
    assert sent["aspects"][0]["words"] == ["fail", "pass"]
    shown = {i["id"]: i["shown"]["verdict"] for i in sent["items"]}
    people = {item.id: "pass" if item.human["verdict"][0] else "fail" for item in dataset.items}
    assert all(line.startswith(("judge pass", "judge fail")) and line.endswith(f" · people {people[i]}")
               for i, line in shown.items()), shown
    post(at, label(sent["queue"][0], 1, "verdict"))
    assert not at.exception and "is not declared as the people's" not in texts(at)  # categories: no scale to declare
    line = sent["items"][0]["system"]  # a rate in percent, not "the dataset's mean as people would score it: 0.50"
    assert line.startswith("the dataset's pass rate as people would give it (verdict): 50%, from"), line
    planned = next(str(info.value) for info in at.info if "95% interval" in str(info.value))
    assert "on the judge's accuracy with your verdict labels" in planned and "Pearson" not in planned, planned



def test_with_your_labels_chosen_a_systems_line_is_the_rate_as_you_would_give_it(monkeypatch, tmp_path):
    """With your labels as the human side, the line beside an item read "pass rate as people would give it" of a
    rate estimated from your labels; with too few of them, "This system's mean as people would score it" of a rate,
    and of a dataset without systems."""
    from helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 12)
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_label(dataset.items[0].id, "verdict", 1)
    store.set_human_side(dataset.name, "you")
    at = verdicts_named(monkeypatch, tmp_path)
    at.text_input(key="label_aspects").input("verdict 0-1").run()
    assert not at.exception
    line = unit(at)["items"][0]["system"]
    assert line.startswith("The dataset's pass rate as you would give it: too few labels"), line  # no systems
    for item in dataset.items[1:6]:
        store.save_label(item.id, "verdict", 0)
    at.run()
    line = unit(at)["items"][0]["system"]
    assert line.startswith("the dataset's pass rate as you would give it (verdict): "), line

def test_the_learning_curve_opens_on_the_label_page_and_reads_accuracy_on_pass_fail_labels(monkeypatch, tmp_path):
    """Opening "How many labels buy how much" on Label raised StreamlitDuplicateElementKey (the expander and its
    figure were both keyed "label_curve"): the figure and its table were never drawn there."""
    from helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 30)
    store = geval.Store(tmp_path / "store.sqlite")
    for k, item in enumerate(dataset.items[:24]):
        store.save_label(item.id, "verdict", int(k * 7 % 3 == 0))
    store.close()
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": "verdicts"}
    at.session_state["label_from"] = "Aspects I name"
    at.run()
    at.switch_page(PAGE).run()
    at.session_state["label_curve_open"] = True  # the expander opened
    at.run()
    assert not at.exception
    figure = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "How many labels" in c.proto.spec)
    assert figure["layout"]["yaxis"]["title"]["text"] == "accuracy against the labels"
    assert any(c.value.startswith("The accuracy against the verdict labels") for c in at.caption)


def test_labeling_pairs_blind_hides_which_model_wrote_each_response(monkeypatch, tmp_path):
    """Blind labeling hid the judge's scores but showed "Response A (weak): ... Response B (strong): ..." of a pair:
    the models' names, which sway a preference. Blind, the two responses are A and B alone; not blind, named."""
    from helpers import pair_rows, write_pairs

    store = geval.Store(tmp_path / "store.sqlite")
    geval.load_dataset(write_pairs(tmp_path / "pairs.csv", pair_rows()), store=store)
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": "pairs"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception and at.toggle(key="label_blind").value
    responses = [i["response"] for i in unit(at)["items"]]
    assert responses and all(r.startswith("Response A:\n") and "\n\nResponse B:\n" in r for r in responses), responses
    assert not any("strong" in r or "weak" in r for r in responses)
    session = unit(at)["session"]
    at.toggle(key="label_blind").set_value(False).run()
    assert unit(at)["session"] != session  # the unit starts afresh: the item on screen is drawn with the names
    named = [i["response"] for i in unit(at)["items"]]
    assert all(re.match(r"Response A \((strong|weak)\):\n", r) for r in named), named
    from studio import labeling  # a team queue's unit, always blind, reads its items the same way
    assert labeling.payload(store.items("pairs")[0], 1, {}, False, {}, blind=True)["response"].startswith(
        "Response A:\n")


def test_the_settings_are_folded_under_a_header_that_names_them_so_the_item_comes_first(monkeypatch, tmp_path):
    """A first visit opened the panel of settings, which put the item to label below the fold: now folded, its
    header says what is labeled, by whom and in which order, and follows a change."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    panel = next(e for e in at.expander if e.label.startswith("What to label"))
    assert not panel.proto.expanded
    assert panel.label == "What to label, and in which order: Natural 1\\-3 · as you · seeded random · blind"
    at.selectbox(key="label_order").set_value("stratified").run()
    at.text_input(key="label_annotator").set_value("ann").run()
    panel = next(e for e in at.expander if e.label.startswith("What to label"))
    assert panel.label.endswith("Natural 1\\-3 · as ann · stratified by the judge's score · blind")
