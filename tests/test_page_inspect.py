"""The Inspect page under AppTest, on a temporary store holding 12 items of the Topical-Chat
sample scored by the scripted judge: items in order of disagreement, Previous/Next, filters,
an item opened from another page, notes kept in the store, dataset text shown literally."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import scripted
from streamlit.testing.v1 import AppTest

import geval
from geval.data.dataset import SHARED_DATA_DIR
from geval.judging.templates import load_template
from geval.reporting.names import Names
from studio.text import plain
from tests.apptest_helpers import open_app, texts

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "app.py")
PAGE = "views/4_inspect.py"
SAMPLE = REPO / "data" / "topicalchat_usr_sample.json"
TEMPLATE = REPO / "prompts" / "topicalchat-naturalness.txt"
EVIL = "<script>alert('owned')</script> **bold** <b>tag</b>"


def dataset_file() -> Path:
    """The bundled Topical-Chat sample, else the full USR file in ../shared/data."""
    if SAMPLE.is_file():
        return SAMPLE
    full = SHARED_DATA_DIR / "tc_usr_data.json"
    if not full.is_file():
        pytest.skip("neither data/topicalchat_usr_sample.json nor ../shared/data/tc_usr_data.json is there")
    return full


def scored_app(monkeypatch, tmp_path: Path, n: int = 12, source: Path | None = None, judge=None,
               templates: tuple = (), score: bool = True) -> tuple[AppTest, geval.Dataset]:
    """The app on a store in `tmp_path` that holds `source` (default: the sample) with `n` of its items,
    spread over its dialogues, scored by the scripted judge with the naturalness template (and any
    extra `templates`). Run once on the default page; switch pages next."""
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    source = source or dataset_file()
    dataset = geval.load_dataset(source)
    store = geval.Store(path)
    store.save_dataset(dataset)
    items = dataset.items[:: max(1, len(dataset.items) // n)][:n]
    if score:
        for template in (load_template(TEMPLATE), *templates):
            geval.score(store, items, template, judge or geval.make_judge("scripted"), dataset.name)
    store.close()
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    if source != SAMPLE:  # after the Data page's first run, which picks the bundled sample
        at.session_state["dataset_source"] = {"path": str(source), "layout": None, "mapping": None, "name": None}
    return at, dataset


def expected_order(tmp_path: Path, dataset: str) -> list[str]:
    """Item ids by disagreement, largest first, as geval computes it."""
    store = geval.Store(tmp_path / "store.sqlite")
    try:
        frame = geval.disagreements(store, dataset)
    finally:
        store.close()
    return list(frame.sort_values("disagreement", ascending=False, kind="stable")["item_id"])


def shown_texts(at: AppTest) -> list[str]:
    return [str(t.value) for t in at.text]


def test_items_come_largest_disagreement_first_and_next_moves_on(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    assert not at.exception
    order = expected_order(tmp_path, dataset.name)
    items = {item.id: item for item in dataset.items}
    assert at.session_state["inspect_jump"] == order[0]
    assert items[order[0]].response in shown_texts(at)
    assert any("1 of 12" in m.value for m in at.markdown)
    assert all(turn.text in shown_texts(at) for turn in items[order[0]].context)
    assert len(at.chat_message) == len(items[order[0]].context)

    at.button(key="inspect_next").click().run()
    assert not at.exception
    assert at.session_state["inspect_jump"] == order[1]
    assert items[order[1]].response in shown_texts(at)
    assert items[order[0]].response not in shown_texts(at)
    assert any("2 of 12" in m.value for m in at.markdown)

    at.button(key="inspect_previous").click().run()
    assert at.session_state["inspect_jump"] == order[0]

    at.selectbox(key="inspect_jump").select(order[5]).run()
    assert any("6 of 12" in m.value for m in at.markdown)
    assert items[order[5]].response in shown_texts(at)


def test_compared_with_your_labels_the_human_metric_is_named_yours_not_people(monkeypatch, tmp_path):
    """With the judge compared with your labels, Inspect read "People 2.00" for your one label."""
    at, dataset = scored_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    for item in dataset.items:
        store.save_label(item.id, "Natural", 2.0)
    store.set_human_side(dataset.name, "you")
    store.close()
    at.switch_page(PAGE).run()
    assert not at.exception
    labels = {m.label: m.value for m in at.metric}
    assert "People" not in labels and labels["Your labels"] == "2.00"


def test_the_item_shows_scores_prompt_and_raw_answer(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    item = next(i for i in dataset.items if i.id == at.session_state["inspect_jump"])
    labels = {m.label: m.value for m in at.metric}
    assert labels["People"] == f"{item.human_mean('Natural'):.2f}"
    assert "Judge (1-3)" in labels and "|diff.| (0-1)" in labels
    difference = next(m for m in at.metric if m.label == "|diff.| (0-1)")
    assert "each put on 0-1 by its own scale (the judge's 1-3;" in difference.proto.help  # read as 0-1 of what?
    points = next(float(c.value.split()[0]) for c in at.caption if c.value.endswith(" on the judge's 1-3"))
    assert abs(points - float(difference.value) * 2) <= 0.011  # a gap of 0.51 beside 2.49 and 3.00 read "0.26" alone
    assert f"Natural, every annotator: {', '.join(f'{s:g}' for s in item.human['Natural'])}" in shown_texts(at)
    people = at.table[0].value  # every aspect, every annotator: a static table hides no column
    assert set(people.index) == set(item.human)
    width = max(len(scores) for scores in item.human.values())
    assert list(people.columns) == ["mean", *[f"#{i}" for i in range(1, width + 1)]]
    assert [people.loc["Natural", f"#{i + 1}"] for i in range(len(item.human["Natural"]))] == \
        [f"{s:g}" for s in item.human["Natural"]]
    codes = [c.value for c in at.code]
    assert load_template(TEMPLATE).render(item) in codes  # the exact prompt
    assert any(c.startswith("Naturalness: ") for c in codes)  # the scripted judge's raw answer
    assert at.get("plotly_chart"), "the judge's score distribution is drawn"


def test_filters_narrow_the_list(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    system = at.multiselect(key="inspect_systems").options[0]
    at.multiselect(key="inspect_systems").select(system).run()
    assert not at.exception
    shown = at.selectbox(key="inspect_jump").options
    items = {item.id: item for item in dataset.items}
    ids = [option.split(". ", 1)[1].split(" · ")[0] for option in shown]
    assert ids and all(items[i].system == system for i in ids)
    assert any(f"1 of {len(ids)}" in m.value for m in at.markdown)

    at.multiselect(key="inspect_systems").set_value([]).run()
    at.slider(key="inspect_range").set_range(2.0, 3.0).run()
    assert not at.exception
    store = geval.Store(tmp_path / "store.sqlite")
    scores = geval.disagreements(store, dataset.name).set_index("item_id")["score"]
    store.close()
    ids = [option.split(". ", 1)[1].split(" · ")[0] for option in at.selectbox(key="inspect_jump").options]
    assert sorted(ids) == sorted(scores[scores >= 2.0].index)


def test_an_item_opened_from_another_page_wins_over_the_filters(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    order = expected_order(tmp_path, dataset.name)
    at.switch_page(PAGE).run()
    last = order[-1]
    other = next(s for s in at.multiselect(key="inspect_systems").options
                 if s != next(i.system for i in dataset.items if i.id == last))
    at.multiselect(key="inspect_systems").select(other).run()
    at.session_state["inspect_item"] = last
    at.run()
    assert not at.exception
    assert at.session_state["inspect_jump"] == last
    assert at.multiselect(key="inspect_systems").value == []
    assert any("12 of 12" in m.value for m in at.markdown)
    assert "inspect_item" not in at.session_state


def test_the_place_is_kept_across_pages(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    order = expected_order(tmp_path, dataset.name)
    at.switch_page(PAGE).run()
    at.button(key="inspect_next").click().run()
    at.button(key="inspect_next").click().run()
    at.radio(key="inspect_order").set_value("Smallest disagreement first").run()
    assert at.session_state["inspect_jump"] == order[2]
    at.switch_page("views/5_agreement.py").run()
    assert not at.exception
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.session_state["inspect_jump"] == order[2]
    assert at.radio(key="inspect_order").value == "Smallest disagreement first"
    assert any("10 of 12" in m.value for m in at.markdown)


def test_a_saved_note_is_in_the_store(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    item_id = at.session_state["inspect_jump"]
    at.checkbox(key=f"inspect_flag_{item_id}").check()
    at.text_area(key=f"inspect_note_{item_id}").input("the reply ignores the **question**")
    at.button(key="inspect_save").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Saved."]
    store = geval.Store(tmp_path / "store.sqlite")
    assert store.notes()[item_id] == (True, "the reply ignores the **question**")
    store.close()
    assert "the reply ignores the **question**" in shown_texts(at)

    at.button(key="inspect_next").click().run()
    at.button(key="inspect_previous").click().run()
    assert at.checkbox(key=f"inspect_flag_{item_id}").value is True
    assert at.text_area(key=f"inspect_note_{item_id}").value == "the reply ignores the **question**"


def test_a_note_typed_then_next_clicked_without_save_is_kept(monkeypatch, tmp_path):
    """A new user typed a note and clicked Next: back on the item, the box was empty and nothing was stored."""
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    item_id = at.session_state["inspect_jump"]
    at.text_area(key=f"inspect_note_{item_id}").input("summary repeats itself")  # sent with the click, as browsers do
    at.button(key="inspect_next").click().run()
    assert not at.exception and at.session_state["inspect_jump"] != item_id
    store = geval.Store(tmp_path / "store.sqlite")
    assert store.notes()[item_id] == (False, "summary repeats itself")
    store.close()
    at.button(key="inspect_previous").click().run()
    assert at.text_area(key=f"inspect_note_{item_id}").value == "summary repeats itself"
    at.checkbox(key=f"inspect_flag_{item_id}").check().run()  # a flag, too, kept as it is ticked
    assert geval.Store(tmp_path / "store.sqlite").notes()[item_id] == (True, "summary repeats itself")


def test_dataset_text_is_shown_literally(monkeypatch, tmp_path):
    records = json.loads(dataset_file().read_text("utf-8"))
    records[0]["responses"][0]["response"] = EVIL
    records[0]["context"] = "# not a heading\n" + records[0]["context"]
    evil_file = tmp_path / "tc_evil.json"
    evil_file.write_text(json.dumps(records[:3]), "utf-8")
    at, dataset = scored_app(monkeypatch, tmp_path, n=18, source=evil_file)
    evil = next(item for item in dataset.items if item.response == EVIL)
    at.switch_page(PAGE).run()
    at.session_state["inspect_item"] = evil.id
    at.run()
    assert not at.exception
    assert at.session_state["inspect_jump"] == evil.id
    assert EVIL in shown_texts(at)
    assert "# not a heading" in shown_texts(at)
    rendered = [m.value for m in at.markdown] + [c.value for c in at.caption] + [w.value for w in at.warning]
    assert not any("alert(" in value or "not a heading" in value for value in rendered)


def test_an_unscored_judgment_shows_its_reason_and_the_raw_answer(monkeypatch, tmp_path):
    judge = scripted(lambda prompt, aspect: "I would say <b>great</b>, **really**", name="garbage")
    at, _ = scored_app(monkeypatch, tmp_path, n=3, judge=judge)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any("unscored" in w.value for w in at.warning)
    codes = [c.value for c in at.code]
    assert "I would say <b>great</b>, **really**" in codes
    assert any("no Naturalness score in the answer" in c for c in codes)
    labels = {m.label: m.value for m in at.metric}
    assert labels["Judge (1-3)"] == "–"


def test_an_empty_answer_says_so_instead_of_an_empty_box(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path, n=3, judge=scripted(lambda prompt, aspect: "", name="silent"))
    at.switch_page(PAGE).run()
    assert not at.exception
    assert "(an empty answer: '')" in [t.value for t in at.text]
    assert "" not in [c.value for c in at.code]


def test_an_empty_store_points_to_the_score_page(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path, score=False)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any("Nothing is scored" in i.value and "Score page" in i.value for i in at.info)
    assert "Previous" not in texts(at)


def test_coverage_and_parsed_samples_are_shown(monkeypatch, tmp_path, stub):
    from geval.judging.backends.openai import OpenAIJudge

    stub.configure("logprobs", other=0.2)  # 20% of the probability off the scale's scores
    at, dataset = scored_app(monkeypatch, tmp_path, n=3, judge=OpenAIJudge(
        "stub-model", base_url=stub.url, api_key="sk-test", mode="logprobs", max_retries=0))
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any(c.value.startswith("Coverage: 80.0% of the judge's probability") for c in at.caption)
    stub.configure("no-logprobs", cycle=[3, 2])
    store = geval.Store(tmp_path / "store.sqlite")
    geval.score(store, [dataset.items[0]], load_template(TEMPLATE), OpenAIJudge(
        "stub-model", base_url=stub.url, api_key="sk-test", mode="samples", n=4, max_retries=0), dataset.name)
    sampled = geval.disagreements(store, dataset.name)  # the newest combination: the sampled one
    store.close()
    assert sampled["parsed"].iloc[0] == "4 of 4 answers parsed" and sampled["coverage"].isna().all()
    at.switch_page(PAGE).run()
    at.selectbox(key="inspect_combo").select_index(0).run()
    assert any(c.value == "Sampled: 4 of 4 answers parsed (the score is the mean over the parsed ones)."
               for c in at.caption)


def test_answer_details_count_the_parsed_samples():
    from geval.analysis.disagreement import answer_details

    scores = json.dumps({"naturalness": {"samples": [3, 2, 3], "coverage": None}})
    assert answer_details(scores, "naturalness", json.dumps(["3", "2", "3", "no idea", ""])) == (
        pytest.approx(float("nan"), nan_ok=True), "3 of 5 answers parsed")
    logits = json.dumps({"naturalness": {"samples": [], "coverage": 0.93}})
    assert answer_details(logits, "naturalness", json.dumps(["Naturalness: 3"])) == (0.93, "")
    assert answer_details(None, "naturalness", None)[1] == ""  # a failed judgment has no call


def _down(prompt, aspect):
    """A judge script for a server that is not there."""
    from geval.errors import JudgmentFailed

    raise JudgmentFailed("cannot reach http://127.0.0.1:9/v1: is the server running? (connection refused, 5 retries)")


def add_failed_combo(tmp_path: Path, dataset: geval.Dataset) -> list[str]:
    """Score three items with a judge whose server is down (the newest combination: nothing scored);
    returns the labels of the combinations, newest first."""
    store = geval.Store(tmp_path / "store.sqlite")
    geval.score(store, dataset.items[:3], load_template(TEMPLATE), scripted(_down, name="down"), dataset.name)
    labels = list(store.combos(dataset.name)["label"])
    store.close()
    return labels


def test_a_combination_with_nothing_scored_is_listed_but_never_opened_first(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    failed, ok = add_failed_combo(tmp_path, dataset)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.session_state["inspect_combo"] == ok
    menu = at.selectbox(key="inspect_combo")
    assert menu.format_func(failed) == f"{failed} — nothing scored (3 failed, 0 unscored)"
    menu.set_value(failed).run()
    assert not at.exception
    assert any(w.value.startswith(f"Nothing is scored with {failed}: 3 judgments failed and 0 could not be read "
                                  "(cannot reach http://127.0.0.1:9/v1: is the server running?") for w in at.warning)


def test_the_response_is_beside_the_scores_and_a_long_dialogue_scrolls_below_it(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    long = max(dataset.items[::5][:12], key=lambda item: len(item.context))
    assert len(long.context) > 6
    at.switch_page(PAGE).run()
    at.session_state["inspect_item"] = long.id
    at.run()
    shown = [t.value for t in at.text]
    assert shown.index(long.response) < shown.index(long.context[0].text)  # the judged text first
    assert any(c.value.startswith(f"{len(long.context)} turns; the box opens on the last ones") for c in at.caption)


def test_a_note_says_which_judge_it_was_written_beside_when_shown_under_another(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    items = dataset.items[:: max(1, len(dataset.items) // 12)][:12]
    geval.score(store, items, load_template(TEMPLATE), scripted(name="other"), dataset.name)
    first, second = store.combos(dataset.name)["label"].tolist()[::-1]  # the first judge, then the newer one
    store.close()
    at.switch_page(PAGE).run()
    at.selectbox(key="inspect_combo").select(first).run()
    item_id = at.session_state["inspect_jump"]
    at.text_area(key=f"inspect_note_{item_id}").input("too kind")
    at.button(key="inspect_save").click().run()
    assert not any("written beside" in c.value for c in at.caption)  # under the judge it was written beside

    at.selectbox(key="inspect_combo").select(second).run()
    at.session_state["inspect_jump"] = item_id
    at.run()
    assert not at.exception
    assert any(f"written beside {plain(first)}" in c.value for c in at.caption), [c.value for c in at.caption]
    store = geval.Store(tmp_path / "store.sqlite")
    report = geval.reporting.report(store, dataset.name, n_boot=50, baselines=[], figures=False, ceiling=False).markdown()
    readable = Names(store.combos(dataset.name), store.template_comments())  # as the report names its rows
    store.close()
    assert f"| {item_id} |  | too kind | {readable(first)} |" in report and readable(first) != first


def test_no_human_score_yet_is_told_apart_from_no_matching_aspect(monkeypatch, tmp_path):
    """A file of your own with no human score, scored with a template whose header has human = "Natural"."""
    from test_page_label import write_unscored_table

    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GEVAL_STORE", str(path))
    store = geval.Store(path)
    table = write_unscored_table(tmp_path / "mine.csv")
    items = geval.load_dataset(table, mapping=["response=response", "context=context", "grounding=fact"],
                               store=store).items
    geval.score(store, items, load_template(TEMPLATE), geval.make_judge("scripted"), "mine")
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["dataset_source"] = {"stored": "mine"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    said = " ".join(w.value for w in at.warning)
    assert plain("Items are in dataset order: 'mine' has no human score or label yet: label Naturalness on the "
                 "Label page") in said, said
    assert "`python -m geval labels import`" in said  # a command shown as code, its backticks not escaped
    assert "set human" not in said.lower()  # the header has it: the labels are what is missing
    store.save_label(items[0].id, "Overall", 3)  # a label of another aspect
    at.run()
    said = " ".join(w.value for w in at.warning)
    assert plain("topicalchat-naturalness compares Naturalness with 'Natural' (its human = \"Natural\"), and 'mine' "
                 "has no score or label of that name (it has Overall): label Naturalness") in said, said
    for item in items[:3]:
        store.save_label(item.id, "Natural", 2)
    at.run()
    assert not any("Items are in dataset order" in w.value for w in at.warning)
    store.close()


def test_flagged_items_are_marked_in_jump_to_and_can_be_shown_alone(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    at.checkbox(key="inspect_flagged").check().run()
    assert [i.value for i in at.info] == ["No item is flagged here yet: flag one under Your note, or clear "
                                          "Flagged only."]
    at.checkbox(key="inspect_flagged").uncheck().run()
    order = at.selectbox(key="inspect_jump").options
    item_id = at.session_state["inspect_jump"]
    at.checkbox(key=f"inspect_flag_{item_id}").check()
    at.button(key="inspect_save").click().run()
    jump = at.selectbox(key="inspect_jump")
    marked = [option for option in jump.options if "⚑" in option]
    assert len(marked) == 1 and item_id in marked[0] and len(jump.options) == len(order)  # marked at once
    at.button(key="inspect_next").click().run()
    at.checkbox(key="inspect_flagged").check().run()
    assert not at.exception
    assert at.selectbox(key="inspect_jump").options == marked and at.session_state["inspect_jump"] == item_id
    assert any("1 of 1" in m.value for m in at.markdown)


def test_a_pass_fail_label_is_shown_in_its_words_not_as_0_and_1(monkeypatch, tmp_path):
    from helpers import scored_verdicts

    scored_verdicts(tmp_path, 8)
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": {"stored": "verdicts"}})
    assert not at.exception
    shown = shown_texts(at)
    assert any(t in ("verdict, every annotator: pass", "verdict, every annotator: fail") for t in shown), shown
    cells = at.table[0].value.to_numpy().ravel().tolist()
    assert ("pass" in cells or "fail" in cells) and "1" not in cells and "0" not in cells
    assert at.table[0].value.loc["verdict", "mean"] in ("0% pass", "100% pass")  # one annotator: not "1.00"
    metrics = {m.label: m.value for m in at.metric}  # labels, never means: the judge's nearest against the majority
    assert metrics["Judge"] in ("pass", "fail") and metrics["People"] in ("pass", "fail")
    assert list(metrics) == ["Judge", "People"]  # two wide enough for "model_a"; the disagreement said below them
    captions = [c.value for c in at.caption]
    assert any(t.startswith("Disagreement ") and ": 0 where the judge's label is the people's majority" in t
               for t in captions), captions
    assert any(t.startswith(f"The judge's distribution over its labels (its label, {metrics['Judge']}: the nearest")
               for t in captions), captions
    jump = at.selectbox(key="inspect_jump").options[0]
    assert (" · judge pass · disagreement " in jump or " · judge fail · disagreement " in jump), jump
    frame = geval.disagreements(geval.Store(tmp_path / "store.sqlite"), "verdicts")
    judged = np.floor(frame["score"] + 0.5)
    assert (frame["disagreement"] == (judged != frame["human_score"]).astype(float)).all()  # 0 or 1, by label
    # the distribution by label, no "mean" of codes marked; a filter by the judge's label, not a slider of codes
    figure = json.loads(next(c.proto.spec for c in at.get("plotly_chart") if "probability" in c.proto.spec))
    assert figure["layout"]["xaxis"]["ticktext"] == ["fail", "pass"] and not figure["layout"].get("shapes"), figure
    assert not [s for s in at.slider if s.key == "inspect_range"]
    at.multiselect(key="inspect_labels").set_value(["pass"]).run()
    assert not at.exception
    options = at.selectbox(key="inspect_jump").options
    assert len(options) == int((judged == 1).sum()) and all(" · judge pass · " in option for option in options)


def test_the_filters_start_afresh_on_another_dataset_even_one_with_the_same_labels(monkeypatch, tmp_path):
    """The judge's-label filter chosen on one pass/fail table stayed on for the next one (the same two words), which
    then listed some of its items, the chip alone saying why."""
    from helpers import make_template, scripted, scored_verdicts

    scored_verdicts(tmp_path, 8)
    store = geval.Store(tmp_path / "store.sqlite")
    (tmp_path / "other.csv").write_text((tmp_path / "verdicts.csv").read_text().replace("reply", "answer"))
    other = geval.load_dataset(tmp_path / "other.csv", mapping=["response=answer", "context=context",
                                                                "score:verdict=verdict"], store=store)
    geval.score(store, other.items, make_template(aspects=(("Verdict", 0, 1, "verdict"),),
                                                  body="Response:\n{{response}}\n\nForm:\n- Verdict:"),
                scripted(), other.name)
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": {"stored": "verdicts"}})
    at.multiselect(key="inspect_labels").set_value(["pass"]).run()
    assert at.multiselect(key="inspect_labels").value == ["pass"]
    at.session_state["dataset_source"] = {"stored": other.name}
    at.run()
    assert not at.exception and at.multiselect(key="inspect_labels").value == []
    assert len(at.selectbox(key="inspect_jump").options) == 8  # every item of the other table


def test_jump_to_sends_its_label_again_when_the_item_keeps_its_place_in_the_menu_but_not_its_number(monkeypatch,
                                                                                                   tmp_path):
    """Seen in chromium: the judge switched, the page showed item 30 of 48, and Jump to went on reading "1. ..., judge
    2.05" (the item's place and scores under the judge before): the browser shows the label it holds until it is sent
    another."""
    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    first = at.session_state["inspect_jump"]
    at.radio(key="inspect_order").set_value("Smallest disagreement first").run()
    assert not at.exception and at.session_state["inspect_jump"] == first  # the same item, now last
    box = at.selectbox(key="inspect_jump")
    assert box.proto.set_value and box.proto.raw_value.startswith(f"{len(box.options)}. ")



def test_an_aspect_of_one_unnamed_column_beside_named_annotators_is_not_an_annotator_1(monkeypatch, tmp_path):
    """Seen as a new user: raters in two named columns and a pass/fail column of its own; Inspect's table of every
    aspect had the columns rater1, rater2 and "#1", an anonymous third annotator."""
    from helpers import make_template

    table = tmp_path / "raters.csv"
    table.write_text("reply,rater1,rater2,verdict\n" + "".join(f"reply {k},{1 + k % 5},{1 + k % 4},"
                                                              f"{'pass' if k % 2 else 'fail'}\n" for k in range(8)))
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(table, mapping=["response=reply", "score:quality=rater1", "score:quality=rater2",
                                                 "score:ok=verdict"], store=store)
    template = make_template(aspects=(("Quality", 1, 5, "quality"),),
                             body="Response:\n{{response}}\n\nForm:\n- Quality:")
    geval.score(store, dataset.items, template, scripted(), dataset.name)
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": {"stored": "raters"}})
    assert not at.exception
    table = at.table[0].value
    assert list(table.columns) == ["mean", "rater1", "rater2"]  # no column "one score (unnamed)" for ok's one
    assert table.loc["ok", "mean"] in ("fail", "pass") and table.loc["ok", "rater1"] == "–"  # its one label
