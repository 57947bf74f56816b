"""Issue 31's page parts under AppTest: the Agreement page's "Can the judge replace an annotator?"
(the alternative annotator test: a verdict on 30+ items, what is missing below), a judge's scores
and an annotator's labels imported on the Data page, an imported judge on Inspect (its file, no
prompt) and never offered by Score or Prompts, and the Label page's planning line."""

from __future__ import annotations

import json
import re

import geval
from studio.alttest import SAID_ABOVE
from studio.text import plain
from tests.apptest_helpers import open_app, texts
from tests.test_page_inspect import scored_app
from tests.test_page_label import label_app

AGREEMENT, INSPECT, LABEL = "views/5_agreement.py", "views/4_inspect.py", "views/7_label.py"
SAMPLE = "topicalchat_usr_sample"


def _table(at, column: str):
    """The first table on the page with `column` (AppTest does not tell a dataframe's key)."""
    return next(frame.value for frame in at.dataframe if column in frame.value.columns)


def test_on_36_items_the_judge_gets_a_verdict_at_the_epsilon_chosen(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path, n=36)
    at.switch_page(AGREEMENT).run()
    assert not at.exception and not at.error
    # 36 responses of 6 dialogues: too few groups for the t-test over them, and the page says so
    warning = next(w.value for w in at.warning if w.value.startswith("No verdict"))
    assert "fewer than 10 dialogues per annotator \\(most: 6\\)" in warning
    assert "Which test: groups: 6 dialogues (each annotator's t-test over its groups: the items of one are not " \
           "independent)." in [c.value.replace("\\", "") for c in at.caption]
    at.selectbox(key="alttest_by").set_value("items").run()  # the paper's test, asked for
    assert "Which test: items taken as independent, as asked, though they fall in 6 dialogues (its p-values are " \
           "then optimistic)." in [c.value.replace("\\", "") for c in at.caption]
    summary = _table(at, "advantage probability")
    assert list(summary["reading"]).count("a constant") == 1  # the baseline: always the commonest label
    summary = summary[summary["reading"] != "a constant"].reset_index(drop=True)
    assert len(summary) == 1 and summary.iloc[0]["items"] == 36 and summary.iloc[0]["annotators"] == 3
    assert summary.iloc[0]["passed"] in ("yes", "no", "yes, as a constant does")
    assert summary.iloc[0]["reading"] == "mode"
    assert {"advantage probability, read as its mean, rounded", "advantage probability, read as its mean"} <= \
        set(summary.columns)
    shown = next(f for f in at.dataframe if "advantage probability" in f.value.columns).proto.column_order
    assert list(shown[:5]) == ["judge", "aspect", "passed", "winning rate", "advantage probability"]  # in view
    assert at.selectbox(key="alttest_who").format_func("skilled") == "skilled (ε 0.15)"  # whole in its column
    annotators = _table(at, "annotator")
    assert list(annotators["annotator"]) == ["#1", "#2", "#3"] and (annotators["items"] == 36).all()
    verdict = next(e.value for e in [*at.success, *at.info] if "an annotator here" in e.value)
    assert re.search(r"(can replace|cannot be shown to replace) an annotator here: it beats \d of 3 annotators",
                     verdict)
    assert "at epsilon 0\\.15, neg\\-rmse alignment" in verdict and "on 36 items \\(items taken as independent" in verdict
    # the plan beside it: the scripted judge hashes prompts, each person's advantage over it far above epsilon
    assert "No plan for this judge: the test passes it for an annotator only where the person's advantage over it" \
        in texts(at).replace("\\", "")

    at.selectbox(key="alttest_who").set_value("experts").run()
    assert at.number_input(key="alttest_epsilon").value == 0.2 and "at epsilon 0\\.2," in texts(at)
    at.number_input(key="alttest_epsilon").set_value(0.3).run()
    assert "at epsilon 0\\.3," in texts(at) and at.selectbox(key="alttest_who").value == "experts"
    said = ": a larger epsilon lets the judge lose to a person by more and still beat them."
    assert f"The test uses epsilon 0.3, your own, not the 0.2 it advises for experts (it advises 0.1 to 0.2){said}" \
        in [c.value for c in at.caption]
    at.number_input(key="alttest_epsilon").set_value(0.15).run()  # beside "experts (ε 0.2)": which holds, said
    assert f"The test uses epsilon 0.15, the paper's for skilled annotators, not the 0.2 it advises for experts{said}" \
        in [c.value for c in at.caption]
    assert any(c.value.startswith("Per annotator: ") and "#1, #2, #3 are positions, not people" in c.value
               for c in at.caption)  # beside the table, not only in the sidebar
    signature = geval.Store(tmp_path / "store.sqlite").combos(SAMPLE)["signature"].iloc[0]
    assert [c.value for c in at.code] == [signature]  # on one line, to copy: as text, it broke mid-name

    store = geval.Store(tmp_path / "store.sqlite")  # a second judge, imported: ranked beside it, and chosen
    elsewhere = tmp_path / "elsewhere.csv"
    elsewhere.write_text("item_id,natural\n" + "".join(f"{i.id},2\n" for i in store.items(SAMPLE)))
    geval.alttest.import_judge(store, SAMPLE, elsewhere)
    at.run()
    ranked = _table(at, "advantage probability")
    judges = list(ranked["judge"])
    assert len(judges) == 3 and "elsewhere (imported from elsewhere.csv)" in judges  # and the constant baseline
    assert any(judge.startswith("always ") and judge.endswith(" (the best constant in this test: a baseline)") for judge in judges)
    assert list(ranked["advantage probability"]) == sorted(ranked["advantage probability"], reverse=True)
    judges = [judge for judge in judges if not judge.startswith("always ")]  # the baseline is not picked
    assert "Judges are compared on the same items: 2 judges of Natural on the 36 items all of them scored" in \
        texts(at).replace("\\", "")  # the imported one scored 60
    chosen = at.selectbox(key="alttest_pick")
    assert chosen.options == [f"{judge} · Natural" for judge in judges]  # the best first
    chosen.set_value(chosen.options[1]).run()  # the second: its verdict
    assert any(e.value.startswith(plain(judges[1])) for e in [*at.success, *at.info])


def test_below_30_items_per_annotator_it_says_what_is_missing_instead_of_a_verdict(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path, n=12)
    at.switch_page(AGREEMENT).run()
    assert not at.exception
    assert _table(at, "advantage probability").iloc[0]["passed"] == "no verdict"
    warning = next(w.value for w in at.warning if w.value.startswith("No verdict"))
    assert ("fewer than 30 items per annotator \\(most: 12\\): the t\\-test needs 30 or more; the paper recommends "
            "labeling more items") in warning
    assert set(_table(at, "annotator")["judge beats"]) == {"not tested (fewer than 30 items)"}


def _judge_file(store: geval.Store, rows: int, bad_row: int | None = None) -> bytes:
    ids = [item.id for item in store.items(SAMPLE)[:rows]]
    lines = ["item_id,natural",
             *(f"{'no-such-item' if i == bad_row else item},{1 + i % 3}" for i, item in enumerate(ids))]
    return ("\n".join(lines) + "\n").encode()


def _import_judge(at, name: str, content: bytes, judge: str = "") -> None:
    at.file_uploader(key="import_judge_file").set_value((name, content, "text/csv"))
    at.text_input(key="import_judge_name").set_value(judge)
    at.button(key="import_judge_submit").click().run()
    assert not at.exception


def test_a_judge_imported_on_the_data_page_is_a_judge_row_everywhere_but_never_asked(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    _import_judge(at, "judge.csv", _judge_file(store, 12, bad_row=2))  # a bad row: one line naming it, nothing kept
    assert [e.value for e in at.error] == [plain("judge.csv:4: 'no-such-item' is not an item of the dataset "
                                                 "(neither its id nor the id its file gave it); a file made for more "
                                                 "items than the dataset has is imported with only the dataset's "
                                                 "items asked for (tick 'Only this dataset's items')")]
    assert store.combos(SAMPLE).empty and not list((tmp_path / "uploads").rglob("*.csv"))
    at.checkbox(key="import_judge_only_known").check()  # as the error says: the dataset's items only, the rest counted
    _import_judge(at, "judge.csv", _judge_file(store, 12, bad_row=2), judge="partial")
    assert [s.value for s in at.success] == ['partial: 11 items imported (Natural, 1 scores of other items left out); '
                                             'it is listed as "partial (imported from judge.csv)" on Inspect and '
                                             'Agreement.']
    store.delete_template_version(store.combos(SAMPLE).iloc[0]["template_version"])  # the rest as before
    at.checkbox(key="import_judge_only_known").uncheck()

    _import_judge(at, "judge.csv", _judge_file(store, 12), judge="my gpt-4o")
    assert [s.value for s in at.success] == ['my gpt-4o: 12 items imported (Natural); it is listed as "my gpt-4o '
                                             '(imported from judge.csv)" on Inspect and Agreement.']
    _import_judge(at, "judge.csv", _judge_file(store, 12), judge="my gpt-4o")
    assert [s.value for s in at.success] == ["my gpt-4o: already imported from judge.csv: nothing changed."]
    assert list(store.combos(SAMPLE)["label"]) == ["my gpt-4o (imported from judge.csv)"]

    at.switch_page(INSPECT).run()
    assert not at.exception and at.selectbox(key="inspect_combo").value == "my gpt-4o (imported from judge.csv)"
    origin = next(i.value for i in at.info if i.value.startswith("Imported from")).replace("\\", "")
    assert re.match(r"Imported from judge\.csv \(line \d+\), SHA-256 [0-9a-f]{64}, on \d{4}-\d\d-\d\dT\d\d:\d\dZ "
                    r"\(UTC\)\. G-Eval Studio did not ask this judge: there is no prompt and no raw answer\.$", origin)
    assert not [e for e in at.expander if "prompt" in e.label] and not at.get("plotly_chart")

    at.switch_page(AGREEMENT).run()
    assert not at.exception
    assert sorted(_table(at, "advantage probability")["reading"]) == ["a constant", "as imported"]

    for page, key in (("views/3_score.py", "score_templates"), ("views/2_prompts.py", "prompts_open")):
        at.switch_page(page).run()
        widget = at.multiselect(key=key) if key == "score_templates" else at.selectbox(key=key)
        assert widget.options and not [o for o in widget.options if "imported" in o], page


def _forms(node) -> dict[str, object]:
    """The st.form blocks under `node`, by form id, as their protos."""
    found, proto = {}, getattr(node, "proto", None)
    if type(proto).__name__ == "Block" and proto.WhichOneof("type") == "form":
        found[proto.form.form_id] = proto.form
    children = getattr(node, "children", None) or {}
    for child in children.values() if isinstance(children, dict) else children:
        found.update(_forms(child))
    return found


def test_enter_in_an_import_box_does_not_import_before_the_button(monkeypatch, tmp_path):
    # seen in a browser: Enter after typing the judge's name imported the file before its aspect and scale
    # were chosen, and the button then said "already imported: nothing changed"
    forms = _forms(open_app(monkeypatch, tmp_path).main)
    assert {name: form.enter_to_submit for name, form in forms.items()} == {"import_judge_form": False,
                                                                             "import_labels_form": False}


def test_a_file_of_several_judges_imports_every_one(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    ids = [item.id for item in store.items(SAMPLE)[:4]]
    judges = {"judge-a": {i: 1 + n % 3 for n, i in enumerate(ids)}, "judge-b": {i: 2 for i in ids}}
    for form, what in (("judge", "the judge's scores"), ("labels", "labels")):  # submitted without a file
        at.button(key=f"import_{form}_submit").click().run()
        assert [e.value for e in at.error] == [f"Choose a file of {what} first."]
    at.file_uploader(key="import_judge_file").set_value(("llm_annotations.json", json.dumps(judges).encode(),
                                                         "application/json"))
    at.selectbox(key="import_judge_aspect").set_value("Natural")
    at.button(key="import_judge_submit").click().run()
    assert not at.exception and not at.error
    assert [s.value.split(";")[0] for s in at.success] == ["judge-a: 4 items imported (Natural)",
                                                           "judge-b: 4 items imported (Natural)"]
    assert sorted(store.combos(SAMPLE)["label"]) == ["judge-a (imported from llm_annotations.json)",
                                                     "judge-b (imported from llm_annotations.json)"]


def test_a_judge_is_imported_under_a_new_aspect_typed_with_its_scale(monkeypatch, tmp_path):
    """The Data page offered only the aspects people scored; the command line takes a new one (--aspect, --scale),
    e.g. a judge's fluency scores on items to be labeled later."""
    at = open_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    ids = [item.id for item in store.items(SAMPLE)[:3]]
    table = "item_id,score\n" + "".join(f"{i},{n + 1}\n" for n, i in enumerate(ids))
    at.file_uploader(key="import_judge_file").set_value(("fluent.csv", table.encode(), "text/csv"))
    def typed() -> None:  # the browser sends the text typed, AppTest only an option listed
        box = at.selectbox(key="import_judge_aspect")
        assert "Fluency" not in box.options
        box.options.append("Fluency")
        box.set_value("Fluency")

    typed()
    at.button(key="import_judge_submit").click().run()  # no scale: as the form's fields say it
    assert [e.value.replace("\\", "") for e in at.error] == [
        "fluent.csv:2: aspect 'Fluency' is not one of the dataset's (Understandable, Natural, Maintains Context, "
        "Engaging, Uses Knowledge, Overall); a judge of a new aspect is imported with its scale (its name typed in the "
        "aspect field, and the Scale field)"]
    typed()
    at.text_input(key="import_judge_scale").set_value("1-5")
    at.button(key="import_judge_submit").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [s.value.split(";")[0] for s in at.success] == ["fluent: 3 items imported (Fluency)"]
    read = store.judgments(SAMPLE, columns=("item_id", "aspect", "score"))
    assert sorted(read["score"]) == [1.0, 2.0, 3.0] and set(read["aspect"].str.lower()) == {"fluency"}


def test_an_import_says_in_orange_what_to_know_before_reading_it(monkeypatch, tmp_path):
    """The page dropped `Imported.notes` (an undeclared scale, an aspect nobody scored), which the command line
    prints."""
    monkeypatch.setattr("geval.scoring.imports._undeclared", lambda *args: ["Natural: no scale is declared"])
    at = open_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    ids = [item.id for item in store.items(SAMPLE)[:3]]
    table = "item_id,Natural\n" + "".join(f"{i},{n + 1}\n" for n, i in enumerate(ids))
    at.file_uploader(key="import_judge_file").set_value(("gpt.csv", table.encode(), "text/csv"))
    at.button(key="import_judge_submit").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [s.value.split(";")[0] for s in at.success] == ["gpt: 3 items imported (Natural)"]
    assert [w.value for w in at.warning] == ["Natural: no scale is declared"]


def test_labels_imported_on_the_data_page_are_one_more_annotator(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    ids = [item.id for item in store.items(SAMPLE)[:3]]
    good = "item_id,aspect,score\n" + "".join(f"{i},Natural,{n + 1}\n" for n, i in enumerate(ids))
    bad = good + "nope,Natural,2\n"
    at.file_uploader(key="import_labels_file").set_value(("carol.csv", bad.encode(), "text/csv"))
    at.text_input(key="import_labels_annotator").set_value("carol")
    at.button(key="import_labels_submit").click().run()
    assert [e.value.replace("\\", "") for e in at.error] == [
        f"carol.csv: item nope of dataset '{SAMPLE}' is not in {store.path}; load the dataset the labels were given on "
        "first"] and store.labels(SAMPLE).empty

    at.file_uploader(key="import_labels_file").set_value(("carol.csv", good.encode(), "text/csv"))
    at.button(key="import_labels_submit").click().run()
    assert not at.exception and not at.error
    assert [s.value for s in at.success] == ["carol.csv: 3 labels imported (Natural; annotators carol)."]
    labels = store.labels(SAMPLE)
    assert list(labels["annotator"]) == ["carol"] * 3 and sorted(labels["score"]) == [1.0, 2.0, 3.0]


def test_the_label_page_plans_the_test_once_two_annotators_share_items(monkeypatch, tmp_path):
    at, store = label_app(monkeypatch, tmp_path, n=30)
    items = store.items("mine")
    store.save_labels([{"item_id": i.id, "aspect": "Natural", "score": 1 + n % 3, "annotator": "ann"}
                       for n, i in enumerate(items[:20])])
    at.run()
    assert not at.exception
    assert ("The alternative annotator test needs a second annotator's labels of Natural on the same items: label "
            "them under another name (Annotator, in \"What to label, and in which order\"), or import a colleague's "
            "labels on the Data page.") in texts(at).replace("\\", "")

    def planning() -> str:
        return next(c.value for c in at.caption if "alternative annotator test on" in c.value).replace("\\", "")

    store.save_labels([{"item_id": i.id, "aspect": "Natural", "score": 1 + (n // 2) % 3, "annotator": "bob"}
                       for n, i in enumerate(items[:6])])
    at.run()  # one shared item, or six, is too little to plan from
    assert "test on your labels, each annotator apart: no plan yet: it would rest on 6 items two annotators share " \
           "and the judge scored; it needs 10 or more." in planning()
    store.save_labels([{"item_id": i.id, "aspect": "Natural", "score": 1 + (n // 2) % 3, "annotator": "bob"}
                       for n, i in enumerate(items[:20])])
    copying = tmp_path / "copying.csv"  # a judge that gives ann's labels: better than chance, so planned
    copying.write_text("item_id,natural\n" + "".join(f"{i.id},{1 + n % 3}\n" for n, i in enumerate(items[:20])))
    geval.alttest.import_judge(store, "mine", copying)
    at.run()
    at.selectbox(key="label_judge").set_value("copying (imported from copying.csv)").run()
    line = planning()  # two annotators: what it assumes of a third, and that 20 shared items are few
    assert "test on your labels, each annotator apart: if a third annotator labeled like your two (35% exact " \
           "agreement) and all three labeled every item, " in line
    assert re.search(r"(about \d+ items give|even 1,000 items give) a judge like this one", line)
    assert line.endswith("It rests on only 20 items two annotators share: a rough guide until there are 30. The test "
                         "itself: the Agreement page.")

    at.switch_page(AGREEMENT).run()  # the epsilon chosen there is the plan's
    at.number_input(key="alttest_epsilon").set_value(0.3).run()
    at.switch_page(LABEL).run()
    at.run()  # a rerun of the Label page alone
    line = next(c.value for c in at.caption if "alternative annotator test on" in c.value).replace("\\", "")
    assert "(epsilon 0.3, neg-rmse, over groups;" in line  # the dialogues of the file

    at.switch_page(INSPECT).run()  # each annotator by name beside the judge
    assert not at.exception and list(at.table[0].value.columns) == ["mean", "ann", "bob"]


def test_a_pass_a_constant_matches_is_drawn_in_caution_and_the_rank_plan_says_it_is_neg_rmse(monkeypatch, tmp_path):
    """Three annotators who all give 2 on 36 items, and a judge imported that gives 2 as well: it passes,
    and so does a judge that always answers 2. That pass "says little": once drawn as a green success."""
    at, store = label_app(monkeypatch, tmp_path, n=36, score=False)
    items = store.items("mine")
    store.save_labels([{"item_id": i.id, "aspect": "Natural", "score": 2 if (n + k) % 12 else 3, "annotator": who}
                       for k, who in enumerate(("ann", "bob", "carol")) for n, i in enumerate(items)])
    elsewhere = tmp_path / "elsewhere.csv"
    elsewhere.write_text("item_id,natural\n" + "".join(f"{i.id},2\n" for i in items))
    geval.alttest.import_judge(store, "mine", elsewhere)
    other = tmp_path / "other.csv"  # a judge that does not pass
    other.write_text("item_id,natural\n" + "".join(f"{i.id},{2 + n % 2}\n" for n, i in enumerate(items)))
    geval.alttest.import_judge(store, "mine", other)
    at.switch_page(AGREEMENT).run()
    assert not at.exception
    assert at.selectbox(key="alttest_pick").options == [  # the menu, by advantage probability, says so too
        "elsewhere (imported from elsewhere.csv) · Natural (passes, as a constant does)",
        "other (imported from other.csv) · Natural"]
    ranked = _table(at, "advantage probability").set_index("judge")["passed"]  # its row too: a bare "yes" read as a
    assert ranked["elsewhere (imported from elsewhere.csv)"] == "yes, as a constant does"  # pass, the caveat below
    assert ranked["other (imported from other.csv)"] in ("no", "no verdict")
    assert ranked[next(j for j in ranked.index if j.startswith("always "))] == "yes"  # the constant itself
    at.selectbox(key="alttest_pick").set_value("elsewhere (imported from elsewhere.csv) · Natural").run()
    verdict = next(w.value for w in at.warning if "an annotator here" in w.value)
    assert "can replace an annotator here" in verdict and "this pass says little" in verdict
    assert verdict.startswith("A judge that always answers 2 passes the test on Natural too")  # before the pass
    assert not any("an annotator here" in s.value for s in at.success)
    planned = [i.value for i in at.info if i.icon == ":material/groups:"]  # the caveat said once, not twice
    assert planned == [plain(SAID_ABOVE)] and "this pass says little" not in planned[0], planned
    at.selectbox(key="alttest_alignment").set_value("rank").run()
    assert "The plan simulates neg-rmse: rank alignment is not simulated, so this count is for neg-rmse, an estimate " \
           "for rank." in [c.value for c in at.caption]
