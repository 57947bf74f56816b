"""The Label page under AppTest, and what your labels change on the Data and Agreement pages: a
table with no human score (12 rows of the Topical-Chat sample in 4 dialogues) stored and scored
by the scripted judge; labels given with the scale's buttons (the keys are the buttons'
shortcuts: tests/test_e2e_label.py presses them in a browser)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from helpers import REPO, scripted
from streamlit.testing.v1 import AppTest

import geval
from tests.apptest_helpers import APP, texts

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


def shown_item(at: AppTest) -> str:
    """The item the Label page shows (its line is drawn by the component that hears the keys)."""
    return at.session_state["label_session"].current


def button(at: AppTest, name: str):
    """The button `name` ("Natural_3", "next", "back", "skip") of the item shown: each item's buttons are its own."""
    return at.button(key=f"label_{shown_item(at)}_{name}")


def rate(at: AppTest, value: int, aspect: str = "Natural") -> None:
    button(at, f"{aspect}_{value}").click().run()
    assert not at.exception


def type_keys(at: AppTest, *keys: str, on: str | None = None, seen: int | None = None) -> None:
    """`keys` typed as the page's key component sends them: the log of the keys not taken yet, in the
    order typed, each with the item its line showed (`on`, default the item shown now) and the count of
    keys not taken the page said meanwhile (`seen`, default the count it said last), then a rerun."""
    item = on or shown_item(at)
    send(at, [(key, item, seen) for key in keys])


def send(at: AppTest, typed: list[tuple[str, str, int | None]]) -> None:
    """The log of keys as the component sends it: (key, the item its line showed, the count of keys not
    taken the page said as it was pressed; None: the count it said last), then a rerun."""
    taken, said = at.session_state["label_keys_taken"]["seq"], at.session_state["label_session"].said
    at.session_state["label_keys"] = {"log": [{"seq": taken + 1 + n, "key": key, "item": item,
                                               "seen": said if seen is None else seen}
                                              for n, (key, item, seen) in enumerate(typed)]}
    at.run()
    assert not at.exception


def test_a_label_is_saved_at_once_with_its_seconds_and_the_scores_show_only_after_it(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    assert not re.search(r"judge \d", texts(at))  # blind: nothing shown before the label
    assert "needs about 385 labels, more than the 12 items here; all 12 give about ±0.57" in texts(at)

    type_keys(at, "2")  # a digit rates
    labels = store.labels("mine")
    assert labels[["item_id", "aspect", "score", "annotator"]].values.tolist() == [[first, "Natural", 2.0, "you"]]
    assert labels["seconds"].iloc[0] >= 0
    assert re.search(r"you 2 · judge \d\.\d\d \(1-3\)", texts(at))  # shown beside the label, once it is saved
    assert shown_item(at) == first  # Enter goes on, not the digit

    type_keys(at, "3")  # labeled: a digit changes nothing, and says so
    assert store.labels("mine")["score"].tolist() == [2.0] and "This item is labeled: 3 changed nothing" in texts(at)

    type_keys(at, "Enter")
    second = shown_item(at)
    assert second != first and not re.search(r"judge \d", texts(at))
    type_keys(at, "5")  # not on the scale
    assert "5 is not on the scale of Natural (1-3): nothing was saved." in texts(at) and len(store.labels("mine")) == 1
    rate(at, 3)  # a click rates too
    type_keys(at, "u")  # u: the last label is taken back
    assert store.labels("mine")["item_id"].tolist() == [first]
    assert shown_item(at) == second
    type_keys(at, "←")  # ←: the item before, its label shown and editable
    assert shown_item(at) == first and "you 2" in texts(at)
    rate(at, 1)
    assert store.labels("mine")["score"].tolist() == [1.0]
    at.button(key="label_undo").click().run()  # an edit undone gets its earlier score back
    assert store.labels("mine")["score"].tolist() == [2.0]


def test_keys_typed_ahead_of_the_page_land_on_the_item_they_were_typed_on_or_are_refused_and_said(monkeypatch,
                                                                                                  tmp_path):
    """A practiced annotator types "2, Enter, 3, Enter" while the page still shows the first item (each
    key a rerun of a second on a loaded machine): the 2 is the first item's, the rest were typed on an
    item already left. Never saved on the item shown since (once, a 5 meant for item 3 landed on item 2):
    refused, and said; the keys typed once the next item shows are its own."""
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    type_keys(at, "2", "Enter", "3", "Enter", "1", on=first)
    second = shown_item(at)
    assert second != first and store.labels("mine")[["item_id", "score"]].values.tolist() == [[first, 2.0]]
    assert [w.value for w in at.warning] == [
        f"3 keys not taken so far in this session: typed on an item you had already left. The latest: 3, Enter, 1 "
        f"on item {first} (after you had left it). A key goes to the item shown as it is pressed: the keys now go "
        "to this item."]
    type_keys(at, "3", "Enter")  # typed on the second item, as shown after the page said so: its own
    third = shown_item(at)
    type_keys(at, "s")  # the third, skipped
    assert store.labels("mine").set_index("item_id")["score"].to_dict() == {first: 2.0, second: 3.0}
    assert not at.warning and at.session_state["label_session"].skipped == {third}
    type_keys(at, "s", on=first)  # a skip typed on an item left long ago skips nothing
    assert at.warning[0].value.startswith("4 keys not taken so far in this session: typed on an item you had "
                                          f"already left. The latest: s on item {first} (after you had left it).")
    rate(at, 1)  # a click on the buttons of the item shown
    assert len(store.labels("mine")) == 3


def test_keys_not_taken_are_counted_for_the_session_and_said_until_a_label_typed_after_or_a_dismiss(monkeypatch,
                                                                                                   tmp_path):
    """Typing blind, 50-200 ms apart, ahead of the page: the page once said only the keys refused since
    the item shown now, so that a burst whose last keys landed said nothing of the 14 keys refused on
    the first item, and the next burst replaced the notice. The count runs for the session; the notice
    stays until a label typed after the page said it (not one typed blind in the same burst), or a
    dismiss, and is left behind on another page."""
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    send(at, [("2", first, 0), ("Enter", first, 0), ("3", first, 0), ("Enter", first, 0)])
    second = shown_item(at)
    send(at, [("1", first, 0), ("3", second, 0), ("Enter", second, 0)])  # the page drew the second item meanwhile
    third = shown_item(at)
    assert third not in (first, second) and len(store.labels("mine")) == 2
    notice = [w.value for w in at.warning]
    assert len(notice) == 1 and notice[0].startswith(
        "3 keys not taken so far in this session: typed on an item you had already left. The latest: 3, Enter, 1 on "
        f"item {first} (after you had left it)."), notice  # the label of the second item, typed blind, clears none

    type_keys(at, "2", seen=0)  # typed before the page said so: the notice stays
    type_keys(at, "2")  # on the third, labeled: a digit that saves nothing counts, and says why
    assert at.warning[0].value.startswith("4 keys not taken so far in this session: 3 typed on an item you had already "
                                          "left; 1 a digit on an item already labeled (u undoes, a click changes a "
                                          f"label). The latest: 3, Enter, 1 on item {first} (after you had left it); "
                                          f"2 on item {third} (labeled already).")
    assert "This item is labeled: 2 changed nothing" in texts(at)
    type_keys(at, "Enter")
    type_keys(at, "5", "Enter")  # off the scale; then Enter on an item still to label
    assert "6 keys not taken so far" in at.warning[0].value
    assert at.warning[0].value.endswith(f"5 on item {shown_item(at)} (not on its scale); Enter on item "
                                        f"{shown_item(at)} (not labeled yet). A key goes to the item shown as it is "
                                        "pressed: the keys now go to this item.")
    type_keys(at, "1")  # a label typed after the page said them: behind the user
    assert not at.warning and len(store.labels("mine")) == 4

    type_keys(at, "s", on=first)
    assert at.warning[0].value.startswith("7 keys not taken so far in this session: ")  # the count runs on
    assert "The latest: s on item" in at.warning[0].value  # the latest: those not behind the user
    at.button(key="label_refusals_dismiss").click().run()
    assert not at.warning
    type_keys(at, "Enter", on=second)
    assert at.warning[0].value.startswith("8 keys not taken so far")
    at.switch_page("views/5_agreement.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception and not at.warning  # not carried back from another page
    type_keys(at, "→", on=first)
    assert at.warning[0].value.startswith("9 keys not taken so far in this session: ")


def test_skip_leaves_an_item_unlabeled_and_the_labeled_ones_are_not_offered_again(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    button(at, "skip").click().run()
    assert shown_item(at) != first and store.labels("mine").empty
    for value in (1, 2, 3):
        rate(at, value)
        button(at, "next").click().run()
    fresh = AppTest.from_file(APP, default_timeout=120)  # a new session (a reload): the next unlabeled item
    fresh.session_state["dataset_source"] = {"stored": "mine"}
    fresh.run()
    fresh.switch_page(PAGE).run()
    assert shown_item(fresh) not in set(store.labels("mine")["item_id"])
    assert "3 labeled" in texts(fresh)


def test_aspects_you_name_get_their_own_scale(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path, score=False)
    at.radio(key="label_from").set_value("Aspects I name").run()
    at.text_input(key="label_aspects").input("Overall 1-5, Fluent 0-1").run()
    assert not at.exception
    item = shown_item(at)
    keys = {b.key for b in at.button}
    assert {f"label_{item}_Overall_{v}" for v in range(1, 6)} | {f"label_{item}_Fluent_0", f"label_{item}_Fluent_1"} <= keys
    assert "no judge has scored these items yet" in texts(at)
    assert "No template that fits these items scores Fluent" in texts(at)  # Overall: response-overall scores it
    type_keys(at, "4")
    assert "**Fluent** (0-1) ← the keys rate this" in texts(at)  # the keys move to the next aspect
    type_keys(at, "1")
    assert store.labels("mine").set_index("aspect")["score"].to_dict() == {"Overall": 4.0, "Fluent": 1.0}
    at.run()  # once labeled, each named aspect's scale is the one people were asked on (issue 43.1)
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
    for index in range(12):
        rate(at, 1 + index % 3)
        button(at, "next").click().run()
    assert "All 12 items are labeled." in texts(at)
    at.switch_page("views/1_data.py").run()
    assert re.search(r"Natural: 12 of 12 items labeled \(you; a label took \d+ s \(median\)\)", texts(at))
    at.switch_page("views/5_agreement.py").run()
    assert not at.exception and not at.error
    assert "Compared with: your labels (Natural: 12 items labeled by you)" in texts(at).replace("\\", "")
    assert "agree_side" not in [r.key for r in at.radio]  # no people's scores: nothing to choose
    table = at.dataframe[0].value
    item = table[(table["level"] == "item") & (table["metric"] == "pearson")].iloc[0]
    assert (item["human"], item["n"]) == ("Natural", 12)
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


def test_each_labeled_aspect_shows_its_own_judge_once_labeled(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path)
    geval.score(store, store.items("mine"), geval.Template.load("topicalchat-coherence"), scripted(), "mine")
    at.run()
    at.radio(key="label_from").set_value("Aspects I name").run()
    at.text_input(key="label_aspects").input("Natural 1-3, Maintains Context 1-3").run()
    rate(at, 3)
    assert len(re.findall(r"judge \d\.\d\d \(1-3\)", texts(at))) == 1  # the second aspect is not labeled yet
    rate(at, 1, "Maintains Context")
    assert len(re.findall(r"judge \d\.\d\d \(1-3\)", texts(at))) == 2
    assert sorted(store.labels("mine")["aspect"]) == ["Maintains Context", "Natural"]


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
    assert f"label_{shown_item(at)}_Natural_3" in {b.key for b in at.button}
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


def test_enter_on_an_item_without_a_label_keeps_it_and_says_why(monkeypatch, tmp_path):
    """Enter goes on from a labeled item only: a digit Streamlit dropped on its way (the Enter's rerun
    overtook it) never leaves an item unlabeled unnoticed; s skips on purpose."""
    at, store = label_app(monkeypatch, tmp_path)
    first = shown_item(at)
    button(at, "next").click().run()
    assert shown_item(at) == first and store.labels("mine").empty
    assert "No label of Natural for this item yet: a digit gives it, s skips the item." in texts(at)
    rate(at, 2)
    button(at, "next").click().run()
    assert shown_item(at) != first and store.labels("mine")["item_id"].tolist() == [first]


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
    type_keys(at, "2")
    assert store.labels("mine")["annotator"].tolist() == ["ann"] and "ann 2" in texts(at) and "you 2" not in texts(at)


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
    line = next(c.value for c in at.caption if "mean as people would score it" in c.value)
    assert "your labels" not in line
    assert re.search(r"'s mean as people would score it \(Natural\): \d\.\d\d, from the dataset's own scores on every "
                     r"one of its 10 items: their own mean, not an estimate\.$", line), line
