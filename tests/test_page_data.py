"""The Data page under AppTest: the bundled sample, another dataset, a broken one, a stored upload."""

import json

import geval
from tests.apptest_helpers import open_app, texts


def test_bundled_topicalchat_sample_is_shown(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Items"] == "60"
    assert metrics["Groups"] == "10"
    assert metrics["Systems"] == "6"
    assert "topicalchat_usr_sample" in texts(at)
    assert "last turn" in at.dataframe[0].value.columns
    at.selectbox[0].set_value("summeval_sample").run()  # summaries: no conversation, no empty 'last turn' column
    assert not at.exception and "last turn" not in at.dataframe[0].value.columns


def test_choosing_another_dataset_loads_it(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    at.selectbox[0].set_value("fed_sample").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Items"] == "80"
    assert "turn, dialogue" in metrics["Levels"]
    assert "non-numeric human scores" in texts(at)


def test_a_broken_dataset_shows_one_line_naming_the_file(monkeypatch, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"broken": [1, 2')
    monkeypatch.setenv("GEVAL_SHARED_DATA", str(tmp_path))
    try:
        at = open_app(monkeypatch, tmp_path)
        at.selectbox[0].set_value("broken").run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert any("broken.json:1" in e and "invalid JSON" in e for e in errors), errors
    finally:
        monkeypatch.delenv("GEVAL_SHARED_DATA")
    

def test_the_first_page_shows_the_path_through_the_app(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    links = at.get("page_link")
    assert [link.proto.label for link in links] == [
        "1. Data: pick a dataset", "2. Label: your own scores", "3. Prompts: edit a template",
        "4. Score: run the judge", "5. Inspect: disagreements", "6. Agreement: with people",
        "7. Tune: raise agreement"]
    assert [link.proto.page.split("/")[-1] for link in links] == [
        "data", "label", "prompts", "score", "inspect", "agreement", "tune"]  # Data at its own address, not the root
    assert "Label when your file has no human scores" in texts(at)
    # what to do first, in short sentences: one of 50 words opened the page
    assert at.caption[0].value.startswith("Pick a dataset to judge: a bundled sample, a full public set")


def test_a_stored_upload_stays_listed_labelled_as_yours_and_opens_again(monkeypatch, tmp_path):
    from tests.test_loaders import NESTED

    upload = tmp_path / "uploads" / "unieval.json"  # where the page keeps an upload: beside the store
    upload.parent.mkdir()
    upload.write_text(json.dumps(NESTED))
    store = geval.Store(tmp_path / "store.sqlite")
    geval.load_dataset(upload, mapping=["response=system_output", "score:naturalness=scores.naturalness"], store=store)
    store.close()
    at = open_app(monkeypatch, tmp_path)
    box = at.selectbox(key="data_dataset")
    assert "unieval  (yours, in the store)" in box.options
    assert "topicalchat_usr_sample  (sample, data/)" in box.options
    for name, items in (("unieval", "9"), ("fed_sample", "80"), ("unieval", "9")):  # away and back
        at.selectbox(key="data_dataset").set_value(name).run()
        assert not at.exception and not at.error
        assert at.subheader[0].value == name and {m.label: m.value for m in at.metric}["Items"] == items
    assert "unieval" in at.selectbox(key="data_dataset").value


def test_the_menu_names_the_dataset_loaded_also_after_an_upload_or_a_link(monkeypatch, tmp_path):
    from tests.test_loaders import NESTED

    upload = tmp_path / "uploads" / "unieval.json"
    upload.parent.mkdir()
    upload.write_text(json.dumps(NESTED))
    mapping = ["response=system_output", "score:naturalness=scores.naturalness"]
    at = open_app(monkeypatch, tmp_path)
    at.radio(key="data_source").set_value("Upload a file").run()
    # what the page's upload form does once the mapping is submitted; the menu last held the sample
    at.session_state["dataset_source"] = {"path": str(upload), "layout": None, "mapping": mapping, "name": None}
    at.session_state["data_dataset"] = "topicalchat_usr_sample"
    at.radio(key="data_source").set_value("Bundled or shared dataset").run()
    assert at.subheader[0].value == "unieval" and at.selectbox(key="data_dataset").value == "unieval"
    at.selectbox(key="data_dataset").set_value("topicalchat_usr_sample").run()  # and back: it loads
    assert at.subheader[0].value == "topicalchat_usr_sample"
    at.session_state["dataset_source"] = {"stored": "unieval"}  # an upload opened by a link
    at.run()
    assert at.subheader[0].value == "unieval" and at.selectbox(key="data_dataset").value == "unieval"


def _upload(monkeypatch, tmp_path, name: str, content: bytes):
    """The Data page with `content` uploaded as `name`."""
    at = open_app(monkeypatch, tmp_path)
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader[0].set_value((name, content, "text/csv")).run()
    assert not at.exception
    return at


def test_an_upload_with_an_unclosed_quote_is_refused_before_its_preview(monkeypatch, tmp_path):
    at = _upload(monkeypatch, tmp_path, "malformed.csv",
                 b'context,reply,model,overall\nd0,"hello there,4\nd1,s2,go away,1\n')
    assert [e.value for e in at.error] == [
        'malformed.csv:2: unclosed quote (the field opened on line 2 runs to the end of the file); close it, '
        'or double a quote meant as text ("")']
    assert "Its first" not in texts(at)  # no preview, no mapping form
    assert [i.value for i in at.info] == [  # the dataset below is the one loaded before, and says so
        "malformed.csv was not loaded: every page still works on topicalchat_usr_sample, below."]


def test_an_upload_without_human_scores_loads_and_points_to_the_label_page(monkeypatch, tmp_path):
    at = _upload(monkeypatch, tmp_path, "unscored.csv", b"context,reply,model\nd0,hello,s1\nd1,go away,s2\n")
    assert at.multiselect[0].value == []  # no numeric column: no human score column to suggest
    at.button[0].click().run()  # "Load with this mapping"
    assert not at.exception and not at.error
    assert "unscored" in geval.Store(tmp_path / "store.sqlite").dataset_names()
    assert ("unscored has no human score of its own: label its items on the Label page (or import labels "
            "below), and the judge is compared with your labels.") in texts(at)
    assert any(link.proto.page.endswith("7_label.py") or "label" in link.proto.page for link in at.get("page_link"))
    downloads = [d.proto.label for d in at.get("download_button")]
    assert "Items as CSV" in downloads and not any("people's scores" in label for label in downloads)  # none here
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_label(store.items("unscored")[0].id, "Polite", 2)
    at.run()
    assert "Items and your labels as CSV" in [d.proto.label for d in at.get("download_button")]


def test_a_load_that_fails_after_one_that_worked_shows_the_failure_alone(monkeypatch, tmp_path):
    """Loaded, then the mapping changed to a column that is not a score: the error, and no "is loaded with the
    mapping below" above it (it was left there, green, beside the red line)."""
    at = _upload(monkeypatch, tmp_path, "twice.csv", b"context,reply,model,overall\nd0,hello,s1,3\nd1,go away,s2,1\n")
    assert "Its 2 records (nested fields as dotted paths, e.g. scores.naturalness):" in texts(at)  # not "first"
    at.button[0].click().run()  # "Load with this mapping"
    assert [s.value.split(";")[0] for s in at.success] == ["twice.csv is loaded with the mapping below"]
    at.multiselect[0].set_value(["overall", "model"]).run()
    at.button[0].click().run()
    assert [e.value for e in at.error] == ["twice.csv:2: column 'model' value 's1' is not a number"]
    assert not at.success
    assert [i.value for i in at.info] == ["twice.csv was not loaded with this mapping: it stays as loaded before, and "
                                          "every page works on twice, below."]


def test_a_score_column_with_a_typo_is_named_with_its_line_not_left_out_without_a_word(monkeypatch, tmp_path):
    rows = b"".join(b"d%d,reply %d,s1,%s\n" % (i, i, b"x4" if i == 6 else b"%d" % (1 + i % 5)) for i in range(12))
    at = _upload(monkeypatch, tmp_path, "typo.csv", b"context,reply,model,overall\n" + rows)
    assert at.multiselect[0].value == []  # not a number throughout: not suggested as a score
    assert [w.value for w in at.warning] == [
        "Column overall holds numbers but typo\\.csv:8 reads 'x4': it is left out of the score columns above. Fix "
        "that line to read it as a score."]  # the line, as an error names it (the header is line 1); "\\." shows "."
    at.multiselect[0].set_value(["overall"]).run()  # chosen by hand: no longer "left out", the load names the line
    assert not at.warning
    at.button[0].click().run()
    assert [e.value for e in at.error] == ["typo.csv:8: column 'overall' value 'x4' is not a number"]


def test_an_upload_with_no_response_column_preselects_none_and_says_so(monkeypatch, tmp_path):
    """The trial's noresp.csv (id, context, rating) preselected `id` as both the Response and the Id column, and
    loaded two items whose text judged was "a1" and "a2"."""
    at = _upload(monkeypatch, tmp_path, "noresp.csv", b"id,context,rating\na1,hello there,3\na2,how are you,2\n")
    response = next(box for box in at.selectbox if box.label.startswith("Response or summary"))
    assert response.value is None and next(box for box in at.selectbox if box.label.startswith("Id")).value == "id"
    assert [w.value for w in at.warning] == [
        "No column looks like the text judged (one named response, reply, output, summary …, or a text column not "
        "named for another role): choose the column that holds it."]
    assert at.button[0].disabled and "Level" not in [box.label for box in at.selectbox]
    response.set_value("context").run()  # the user's choice: then it loads
    assert not at.warning and not at.button[0].disabled
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert [item.response for item in geval.Store(tmp_path / "store.sqlite").items("noresp")] == [
        "hello there", "how are you"]


SUMMARIES = (b"article,summary\n"
             b'"The council voted to close the old bridge for repairs. Work starts in May.","The bridge closes."\n'
             b'"A storm cut power to 3,000 homes overnight.","A storm cut power to homes."\n')


def test_a_summary_upload_is_read_at_the_summary_level_shown_with_the_templates_it_makes_fit(monkeypatch, tmp_path):
    at = _upload(monkeypatch, tmp_path, "mine.csv", SUMMARIES)
    level = next(box for box in at.selectbox if box.label == "Level")
    assert level.value == "summary"
    said = texts(at)
    assert "The columns suggest summary: a source document column ('article') and no context: each row is a summary." \
        in said
    fit = next(line for line in said.splitlines() if line.startswith("At the summary level,"))
    assert "summeval-consistency" in fit and "response-naturalness" not in fit and "(at turn: " in fit
    level.set_value("turn").run()  # what the choice changes, before loading
    said = texts(at)
    assert "Chosen by you; the columns suggest summary" in said
    assert "summeval-consistency" not in next(line for line in said.splitlines() if line.startswith("At the turn level,"))
    level = next(box for box in at.selectbox if box.label == "Level")
    level.set_value("summary").run()
    at.button[0].click().run()  # "Load with this mapping"
    assert not at.exception and not at.error
    dataset = geval.Store(tmp_path / "store.sqlite").dataset("mine")
    assert dataset.levels == ["summary"] and dataset.items[0].grounding_kind == "document"
    assert "Read at level summary, inferred: a source document column ('article')" in texts(at)


def test_a_re_upload_that_would_replace_a_stored_dataset_asks_first(monkeypatch, tmp_path):
    at = _upload(monkeypatch, tmp_path, "mine.csv", SUMMARIES)
    at.button[0].click().run()
    store = geval.Store(tmp_path / "store.sqlite")
    first = [item.id for item in store.items("mine")]
    store.save_label(first[0], "Consistency", 4)
    other = SUMMARIES.replace(b"The bridge closes.", b"The bridge stays open.")
    at.file_uploader[0].set_value(("mine.csv", other, "text/csv")).run()
    at.button[0].click().run()
    assert not at.exception
    assert any("The store holds a dataset named mine with items this file does not have (1)" in w.value
               and "1 labels made on them" in w.value for w in at.warning), [w.value for w in at.warning]
    assert [item.id for item in store.items("mine")] == first  # nothing replaced yet
    at.button(key="data_keep").click().run()
    assert [item.id for item in store.items("mine")] == first
    at.button[0].click().run()  # asked again
    at.text_input(key="data_other_name").set_value("mine-edited").run()
    at.button(key="data_rename").click().run()
    assert not at.exception and {"mine", "mine-edited"} <= set(store.dataset_names())
    assert [item.id for item in store.items("mine")] == first
    at.button[0].click().run()  # and once more, now answered by replacing
    at.button(key="data_replace").click().run()
    assert not at.exception and [item.id for item in store.items("mine")] != first
    assert len(store.items("mine")) == 2


def test_an_upload_without_a_group_column_is_grouped_by_its_contexts_and_says_so(monkeypatch, tmp_path):
    rows = "".join(f'"A: question {c}",answer {c}.{r},{1 + r}\n' for c in range(3) for r in range(4))
    at = _upload(monkeypatch, tmp_path, "shared.csv", ("context,reply,overall\n" + rows).encode())
    at.button[0].click().run()  # "Load with this mapping"
    assert not at.exception and not at.error
    assert next(m.value for m in at.metric if m.label == "Groups") == "3"
    assert "Groups: 12 responses in 3 groups by their shared context; map group=COLUMN to set them." in [
        c.value for c in at.caption]


def test_the_items_table_shows_the_files_own_ids_beside_the_content_ids(monkeypatch, tmp_path):
    at = _upload(monkeypatch, tmp_path, "ids.csv", b"id,reply,overall\nx1,hello there,3\nx2,go away,1\n")
    at.button[0].click().run()  # "Load with this mapping"
    assert not at.exception and not at.error
    table = next(frame.value for frame in at.dataframe if "level" in frame.value.columns)  # the items
    assert list(table.columns[:3]) == ["id", "file id", "response"]
    assert list(table["file id"]) == ["x1", "x2"] and list(table["response"]) == ["hello there", "go away"]
    plain = _upload(monkeypatch, tmp_path / "other", "plain.csv", b"reply,overall\nhello there,3\ngo away,1\n")
    plain.button[0].click().run()  # a file without ids of its own: no such column
    table = next(frame.value for frame in plain.dataframe if "level" in frame.value.columns)
    assert list(table["response"]) == ["hello there", "go away"] and "file id" not in table.columns


def test_an_upload_of_a_column_per_annotator_loads_them_as_one_aspects_annotators(monkeypatch, tmp_path):
    """Each score column was an aspect of its own: a file of rater1 and rater2 had one annotator per aspect, so
    neither the annotators' agreement nor the test of replacing one could run."""
    content = b"reply,rater1,rater2\n" + b"".join(f"reply {k},{1 + k % 5},{1 + (k * 3) % 5}\n".encode()
                                                  for k in range(12))
    at = _upload(monkeypatch, tmp_path, "raters.csv", content)
    assert at.multiselect[0].value == ["rater1", "rater2"]
    at.text_input(key="data_one_aspect").set_value("quality").run()
    assert [t.label for t in at.text_input if t.key.startswith("data_scale_")] == ["Scale of quality"]  # one
    at.text_input(key="data_scale_rater1").set_value("1-5").run()
    at.button[0].click().run()  # "Load with this mapping"
    assert not at.exception and not at.error
    store = geval.Store(tmp_path / "store.sqlite")
    first = store.items("raters")[0]
    assert first.human == {"quality": (1.0, 1.0)} and first.annotators == {"quality": ("rater1", "rater2")}
    assert store.scales("raters") == {"quality": (1.0, 5.0)}


def test_an_upload_of_annotators_and_a_pass_fail_column_keeps_the_words_an_aspect_of_their_own(monkeypatch,
                                                                                                 tmp_path):
    """A new user's file of quality_ann1, quality_ann2 and safe (pass/fail): naming the one aspect of the columns
    made safe a third annotator of quality, refused as 'pass' is not a number, and the page had no way to say
    otherwise."""
    content = b"reply,quality_ann1,quality_ann2,safe\n" + b"".join(
        f"reply {k},{1 + k % 5},{1 + (k * 3) % 5},{'pass' if k % 3 else 'fail'}\n".encode() for k in range(12))
    at = _upload(monkeypatch, tmp_path, "mine.csv", content)
    at.text_input(key="data_one_aspect").set_value("quality").run()
    assert at.multiselect[1].label.startswith("quality's annotators")
    assert at.multiselect[1].value == ["quality_ann1", "quality_ann2"]  # the words: an aspect of their own
    assert [t.label for t in at.text_input if t.key.startswith("data_scale_")] == ["Scale of quality"]
    at.text_input(key="data_scale_quality_ann1").set_value("1-5").run()
    at.button[0].click().run()  # "Load with this mapping"
    assert not at.exception and not at.error, [e.value for e in at.error]
    store = geval.Store(tmp_path / "store.sqlite")
    first = store.items("mine")[0]
    assert first.human == {"quality": (1.0, 1.0), "safe": (0.0,)}
    assert first.annotators == {"quality": ("quality_ann1", "quality_ann2")}
    assert store.scales("mine") == {"quality": (1.0, 5.0)} and store.categories("mine") == {"safe": ("fail", "pass")}
    at.multiselect[1].set_value(["quality_ann1", "quality_ann2", "safe"]).run()  # the words among the numbers
    at.button[0].click().run()
    assert [e.value.replace("\\", "") for e in at.error][:1] == [
        "mine.csv: column 'safe' holds fail/pass words, but is mapped to 'quality' with columns of numbers "
        "(quality_ann1, quality_ann2): map it to an aspect of its own"]


def test_an_upload_declares_the_scale_people_were_asked_on_and_a_pass_fail_column_is_two_categories(monkeypatch,
                                                                                                    tmp_path):
    """(Issue 43.1, 42.7) The mapping takes each score column's scale, kept with the dataset; a column of
    pass/fail words is suggested as a score and read as two categories; the people's scales can be declared
    for the dataset shown, too."""
    content = b"reply,overall,verdict\n" + b"".join(f"reply {k},{2 + k % 4},{'pass' if k % 3 else 'fail'}\n".encode()
                                                    for k in range(12))
    at = _upload(monkeypatch, tmp_path, "scaled.csv", content)
    assert at.multiselect[0].value == ["overall", "verdict"]
    assert [t.key for t in at.text_input if t.key.startswith("data_scale_")] == ["data_scale_overall"]  # no verdict's
    at.text_input(key="data_scale_overall").set_value("1-5").run()
    assert not at.success
    at.button[0].click().run()  # "Load with this mapping"
    assert not at.exception and not at.error
    assert at.success[0].value.startswith("scaled.csv is loaded with the mapping below")  # the form stays drawn
    store = geval.Store(tmp_path / "store.sqlite")
    assert store.scales("scaled") == {"overall": (1.0, 5.0)} and store.categories("scaled") == {
        "verdict": ("fail", "pass")}
    assert "The people's scales: overall 1-5, verdict fail/pass" in [e.label for e in at.expander]  # labels named
    at.text_input(key="data_declare_scale").set_value("overall=0-9").run()
    at.button(key="data_declare").click().run()
    assert [s.value for s in at.success][1:] == ["The people's scales: overall 0-9"]  # after the loaded line
    at.text_input(key="data_declare_scale").set_value("overall=3-5").run()
    at.button(key="data_declare").click().run()
    assert [e.value for e in at.error] == [
        "scaled: people's scores of overall run from 2 to 5, outside the 3-5 declared for it; correct those scores, "
        "or declare the scale people were asked on"]
    at.text_input(key="data_declare_scale").set_value("overal=1-5").run()  # a typo is not kept as a new aspect
    at.button(key="data_declare").click().run()
    assert [e.value for e in at.error] == [
        "scaled: no aspect named 'overal' has scores here (its own or labels); its aspects: overall, verdict"]
    assert geval.Store(tmp_path / "store.sqlite").scales("scaled") == {"overall": (0.0, 9.0)}


def test_a_pass_fail_aspect_reads_in_words_in_the_items_table(monkeypatch, tmp_path):
    """The items table showed a pass/fail label as 0 and 1 (its code); it reads pass and fail, and where two
    people differ, each word with its count."""
    table = tmp_path / "verdicts.json"  # a second person's label of r1, which differs
    table.write_text(json.dumps([{"id": f"r{k}", "reply": f"reply {k}",
                                  "verdict": ["pass" if k % 2 else "fail", *(["fail"] if k == 1 else [])]}
                                 for k in range(6)]))
    geval.load_dataset(table, mapping=["id=id", "response=reply", "score:verdict=verdict"],
                       store=geval.Store(tmp_path / "store.sqlite"))
    at = open_app(monkeypatch, tmp_path, state={"dataset_source": {"stored": "verdicts"}})
    assert not at.exception
    items = next(frame.value for frame in at.dataframe if "level" in frame.value.columns).set_index("file id")
    assert items.loc["r0", "verdict"] == "fail" and items.loc["r3", "verdict"] == "pass"
    assert items.loc["r1", "verdict"] == "fail 1, pass 1"  # as many of each: in the categories' order
    assert "The people's scales: verdict fail/pass" in [e.label for e in at.expander]
    assert "Every aspect here is labeled with categories: there is no scale to declare." in [c.value for c in at.caption]
    assert not [t for t in at.text_input if t.key == "data_declare_scale"]  # no "Overall=1-5" to declare
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]  # each item's majority, in the categories' order
    assert [(t["x"], t["y"]) for t in bars] == [(["fail", "pass", "no majority"], [3, 2, 1])]  # r1's a tie
