"""The working context in the URL (studio/context.py), under AppTest: a link (a new session with
the URL of another) opens the same dataset, template version, judge, item selection, Inspect
item and Agreement combinations; the page's choices are written back to the URL; the API key
never is; a running job is found again by a new session, with its Stop button."""

from __future__ import annotations

from helpers import OWN_MAPPING, REPO, scored_own_table, scripted, template_text, write_own_table
from openai_stub import OpenAIStub

import geval
from studio.text import plain
from tests.apptest_helpers import open_app, texts, wait_for

SCORE, INSPECT, AGREEMENT = "views/3_score.py", "views/4_inspect.py", "views/5_agreement.py"
KEY = "sk-test-NEVER-IN-THE-URL-51d2"


def own_store(tmp_path):
    """The store of `tmp_path` holding an uploaded table ("mine", read by a column mapping) scored
    with the naturalness template's file version, then an edited version saved with a comment."""
    store = geval.Store(tmp_path / "store.sqlite")
    dataset, file_version, edited = scored_own_table(store, tmp_path)
    combos = store.combos(dataset.name).set_index("template_version")
    store.close()
    (tmp_path / "mine.csv").unlink()  # the link must not need the file: the store has the items
    return dataset, file_version, edited, combos


def url(at) -> dict:
    """The app's URL parameters after its last run, every value as a list."""
    return {name: value if isinstance(value, list) else [value] for name, value in at.query_params.items()}


def test_a_link_opens_the_same_dataset_template_judge_and_selection(monkeypatch, tmp_path):
    _, file_version, edited, _ = own_store(tmp_path)
    link = {"dataset": "mine", "template": edited.label, "backend": "openai", "model": "stub-model",
            "base_url": "http://127.0.0.1:9/v1", "mode": "logprobs", "how": "sample", "sample": "5", "seed": "7",
            "templates": [file_version.label, edited.label]}
    at = open_app(monkeypatch, tmp_path, SCORE, params=link)
    assert not at.exception
    assert at.sidebar.text[0].value.startswith("mine (table): 12 items")
    assert at.session_state["template_text"] == edited.text and at.sidebar.text[1].value == edited.label
    assert at.session_state["judge_options"] == {"backend": "openai", "model": "stub-model", "mode": "logprobs",
                                                 "n": 20, "temperature": 1.0, "base_url": "http://127.0.0.1:9/v1"}
    assert at.radio(key="score_how").value == "Seeded random sample"
    assert (at.number_input(key="score_sample").value, at.number_input(key="score_seed").value) == (5, 7)
    assert at.multiselect(key="score_templates").value == [file_version.label, edited.label]
    assert texts(at).count("5 items: 5 cached") == 0 and texts(at).count(": 5 items: 0 cached, 5 judge calls") == 2
    assert url(at) == {name: value if isinstance(value, list) else [value] for name, value in link.items()}


def test_a_links_template_version_this_store_never_saved_is_said_not_dropped_unsaid(monkeypatch, tmp_path):
    """A link opened on a fresh store (a supervisor's) named a student's saved version: Score's list left it out
    and the URL lost it without a word."""
    _, file_version, _, _ = own_store(tmp_path)
    other = "mine-naturalness@0123456789ab"  # saved in another store
    at = open_app(monkeypatch, tmp_path, SCORE, params={"dataset": "mine", "templates": [file_version.label, other]})
    assert not at.exception
    assert at.multiselect(key="score_templates").value == [file_version.label]
    warning = next(w.value for w in at.warning if w.value.startswith("Dropped from the templates chosen"))
    assert f"- {plain(other)}: never saved in this store, nor a prompts/ file" in warning, warning


def test_choices_on_the_pages_go_into_the_url_and_the_key_never_does(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, SCORE)
    assert url(at) == {"dataset": ["topicalchat_usr_sample"],
                       "template": [at.sidebar.text[1].value], "templates": [at.sidebar.text[1].value]}
    at.radio(key="judge_backend").set_value("openai").run()
    at.text_input(key="api_key").set_value(KEY).run()
    at.radio(key="score_how").set_value("By system").run()
    at.multiselect(key="score_systems").set_value(["Original Ground Truth", "Argmax Decoding"]).run()
    at.number_input(key="score_limit").set_value(3).run()
    assert not at.exception
    shown = url(at)
    assert shown["backend"] == ["openai"] and shown["how"] == ["system"] and shown["limit"] == ["3"]
    assert shown["systems"] == ["Original Ground Truth", "Argmax Decoding"]
    assert KEY not in str(at.query_params) and "api_key" not in shown
    at.radio(key="score_how").set_value("All").run()
    assert "systems" not in url(at) and "how" not in url(at)  # what no longer applies leaves the URL


def test_a_link_opens_inspect_on_its_combination_aspect_and_item(monkeypatch, tmp_path):
    dataset, file_version, _, combos = own_store(tmp_path)
    older = combos.loc[file_version.version]
    item = dataset.items[7].id
    at = open_app(monkeypatch, tmp_path, params={"dataset": "mine", "combo": older["id"], "item": item,
                                                 "aspect": "Naturalness"})
    at.switch_page(INSPECT).run()
    assert not at.exception
    assert at.session_state["inspect_combo"] == older["label"]
    assert at.session_state["inspect_jump"] == item
    assert dataset.items[7].response in [t.value for t in at.text]
    assert url(at)["combo"] == [older["id"]] and url(at)["item"] == [item]
    at.button(key="inspect_next").click().run()
    assert url(at)["item"] == [at.session_state["inspect_jump"]] != [item]


def test_a_reload_keeps_inspects_filters_order_and_item(monkeypatch, tmp_path):
    own_store(tmp_path)
    at = open_app(monkeypatch, tmp_path, params={"dataset": "mine"})
    at.switch_page(INSPECT).run()
    systems = at.multiselect(key="inspect_systems").options
    at.multiselect(key="inspect_systems").set_value(systems[:1])
    at.slider(key="inspect_range").set_value((1.5, 3.0))
    at.radio(key="inspect_order").set_value("Smallest disagreement first")
    at.checkbox(key="inspect_unscored").uncheck().run()
    at.button(key="inspect_next").click().run()
    assert not at.exception
    shown = [m.value for m in at.markdown if " of " in m.value and m.value.startswith("**")]
    reloaded = open_app(monkeypatch, tmp_path, params=dict(at.query_params))  # a reload: a new session, this URL
    reloaded.switch_page(INSPECT).run()
    assert not reloaded.exception and not reloaded.warning
    assert reloaded.multiselect(key="inspect_systems").value == systems[:1]
    assert reloaded.slider(key="inspect_range").value == (1.5, 3.0)
    assert reloaded.radio(key="inspect_order").value == "Smallest disagreement first"
    assert reloaded.checkbox(key="inspect_unscored").value is False
    assert reloaded.session_state["inspect_jump"] == at.session_state["inspect_jump"]
    assert [m.value for m in reloaded.markdown if " of " in m.value and m.value.startswith("**")] == shown


def test_a_link_opens_agreement_on_its_combinations(monkeypatch, tmp_path):
    _, file_version, edited, combos = own_store(tmp_path)
    both = [combos.loc[edited.version, "id"], combos.loc[file_version.version, "id"]]
    at = open_app(monkeypatch, tmp_path, params={"dataset": "mine", "agree": both})
    at.switch_page(AGREEMENT).run()
    assert not at.exception
    labels = [combos.loc[edited.version, "label"], combos.loc[file_version.version, "label"]]
    assert at.multiselect(key="agree_combos").value == labels
    assert "(fluent wording)" in labels[0]  # the version's comment names it, beside its hash
    table = at.dataframe[0].value
    assert {combo.replace(" ", f"@{version} ", 1) for combo, version in zip(table["combo"], table["version"])} \
        == set(labels)  # named by template and comment, the version's hash beside
    assert url(at)["agree"] == both
    at.selectbox(key="agree_plot_combo").set_value(labels[1]).run()  # Item by item's judge: in the URL, and a
    assert url(at)["plot"] == [both[1]]  # link opens on it (a fresh browser opened on the judge worth most labels)
    again = open_app(monkeypatch, tmp_path, params={"dataset": "mine", "agree": both, "plot": both[1]})
    again.switch_page(AGREEMENT).run()
    assert not again.exception and again.selectbox(key="agree_plot_combo").value == labels[1]


def test_a_link_to_what_this_store_does_not_hold_says_so(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, params={"dataset": "gone", "template": "topicalchat-naturalness@000000000000",
                                                 "sample": "many"})
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any("dataset 'gone' is neither bundled, shared nor in this store" in w for w in warnings)
    assert any("template version topicalchat-naturalness@000000000000 was never saved in this store" in w
               for w in warnings)
    assert any("sample='many' is not a int" in w for w in warnings)
    assert url(at)["dataset"] == ["topicalchat_usr_sample"]


def _use_stub(at, stub) -> None:
    at.radio(key="judge_backend").set_value("openai").run()
    at.text_input(key="judge_model").set_value("stub-model")
    at.text_input(key="judge_base_url").set_value(stub.url)
    at.selectbox(key="judge_mode").set_value("logprobs").run()


def test_a_running_job_is_found_again_by_a_new_session_with_its_stop_button(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", delay=0.4)
        at = open_app(monkeypatch, tmp_path, SCORE)
        _use_stub(at, stub)
        at.number_input(key="score_concurrency").set_value(1)
        at.number_input(key="score_limit").set_value(30).run()
        running = at.multiselect(key="score_templates").value[0]
        planned = [i.value for i in at.info if "judge call" in i.value]
        at.button(key="score_start").click().run()
        wait_for(at, lambda at: stub.count >= 2)
        assert "job" in url(at)

        # a new session whose editor holds a template these items cannot render: the top shows the running
        # run's estimate, not a red plan for that template (as it once did after a reload mid-run)
        summeval = (REPO / "prompts" / "summeval-consistency.txt").read_text()
        other = open_app(monkeypatch, tmp_path, SCORE, state={"template_text": summeval})
        assert not other.exception and not other.error
        assert f"A run is going on (below): {plain(running)} on 30 items. Its estimate when it started:" in \
            [c.value for c in other.caption]
        assert [i.value for i in other.info if "judge call" in i.value] == planned

        reloaded = open_app(monkeypatch, tmp_path, SCORE, params=dict(at.query_params))  # the same URL
        assert not reloaded.exception
        assert reloaded.button(key="score_start").disabled
        assert reloaded.button(key="score_stop")
        assert reloaded.number_input(key="score_limit").value == 30
        assert reloaded.number_input(key="score_concurrency").value == 1  # as the run was started, not the default 4
        assert any("/30 items" in p.proto.text for p in reloaded.get("progress"))

        by_dataset = open_app(monkeypatch, tmp_path, SCORE)  # no job in its URL: found by its dataset
        assert by_dataset.button(key="score_start").disabled and by_dataset.button(key="score_stop")

        elsewhere = open_app(monkeypatch, tmp_path, SCORE, params={"dataset": "personachat_usr_sample"})
        assert not elsewhere.get("progress") and not elsewhere.button(key="score_start").disabled
        assert not [b for b in elsewhere.button if b.key == "score_stop"]  # another dataset's run: not here
        at.session_state["dataset_source"] = elsewhere.session_state["dataset_source"]  # switched in this session
        at.run()
        assert not at.get("progress") and not [b for b in at.button if b.key == "score_stop"]

        reloaded.button(key="score_stop").click().run()
        wait_for(reloaded, lambda at: any("stopped; press Resume this run" in s.value for s in at.info))
        assert stub.count < 30
        again = open_app(monkeypatch, tmp_path, SCORE, params=dict(reloaded.query_params))  # reloaded once stopped
        assert any("stopped; press Resume this run" in s.value for s in again.info)
        assert again.button(key="score_start").label == "Resume this run"
        assert not [b for b in again.button if (b.key or "").startswith("score_resume")]  # one Resume button


def test_a_reload_after_editing_on_prompts_scores_the_editors_new_version(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, SCORE)
    assert at.multiselect(key="score_templates").value == [at.sidebar.text[1].value]
    at.switch_page("views/2_prompts.py").run()
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("naturally written", "natural and fluent")).run()
    at.button(key="prompts_save").click().run()
    edited = at.sidebar.text[1].value
    reloaded = open_app(monkeypatch, tmp_path, SCORE, params=dict(at.query_params))  # the same URL, a new session
    assert reloaded.sidebar.text[1].value == edited
    assert reloaded.multiselect(key="score_templates").value == [edited]  # not the version before the edit


def test_a_page_opened_by_its_plain_address_opens_on_the_dataset_the_store_loaded_last(monkeypatch, tmp_path):
    """Seen as a new user: after uploading a file, /inspect typed in the address bar (a new session, no dataset in
    the URL) opened the bundled sample and said nothing was scored on it."""
    open_app(monkeypatch, tmp_path)  # the sample, stored first
    own_store(tmp_path)  # then an upload, scored
    at = open_app(monkeypatch, tmp_path, INSPECT)
    assert not at.exception and url(at)["dataset"] == ["mine"]
    assert "Nothing is scored" not in texts(at)
    linked = open_app(monkeypatch, tmp_path, INSPECT, params={"dataset": "topicalchat_usr_sample"})
    assert url(linked)["dataset"] == ["topicalchat_usr_sample"]  # a link still names its own


def test_the_editor_opens_on_the_saved_version_last_scored_on_an_upload_not_a_generic_file(monkeypatch, tmp_path):
    """Seen as a new user: a file scored from the command line with templates of its own (saved in the store) opened
    with response-coherence in the editor, which people did not score; those that fit came last in the menu."""
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(write_own_table(tmp_path / "mine.csv"), mapping=OWN_MAPPING, store=store)
    own = geval.Template.parse(template_text("my-quality", aspects=(("Quality", 1, 5, "Natural"),)), source="mine")
    store.save_template(own)
    geval.score(store, dataset.items[:4], own, scripted(), dataset.name)
    store.close()
    at = open_app(monkeypatch, tmp_path, INSPECT)
    assert not at.exception and at.sidebar.text[1].value == own.label


def test_the_dataset_a_session_opened_on_stays_when_another_session_loads_one_and_the_data_page_names_it(
        monkeypatch, tmp_path):
    """The dataset a page opens on is the store's newest when it opens; a load in another tab does not move a session
    already open, and the Data page's menu names the dataset the sidebar shows."""
    open_app(monkeypatch, tmp_path)  # the sample, stored
    store = geval.Store(tmp_path / "store.sqlite")
    geval.load_dataset("summeval_sample", store=store)  # loaded last: a new session opens on it
    at = open_app(monkeypatch, tmp_path)
    assert at.sidebar.text[0].value.startswith("summeval_sample ")
    assert at.selectbox(key="data_dataset").value == "summeval_sample"  # not the sample the menu used to name
    geval.load_dataset(REPO / "data" / "personachat_usr_sample.json", store=store)  # another tab loads one
    store.close()
    at.run()
    assert at.sidebar.text[0].value.startswith("summeval_sample ")


def test_an_upload_of_summaries_scored_for_consistency_opens_on_the_template_that_judges_only_that(monkeypatch,
                                                                                                   tmp_path):
    """Seen as a new user: a file of summaries with people's consistency opened with summeval-batch in the editor
    (four aspects, three of them scored by nobody: three orange warnings), not summeval-consistency."""
    import csv

    path = tmp_path / "news.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["doc_id", "article", "summary", "model", "rater1"])
        writer.writeheader()
        writer.writerows({"doc_id": f"d{k // 3}", "article": f"Article {k // 3} says the bridge opened on Monday.",
                          "summary": f"Summary {k}: the bridge opened.", "model": f"sys{k % 3}", "rater1": 1 + k % 5}
                         for k in range(12))
    store = geval.Store(tmp_path / "store.sqlite")
    geval.load_dataset(path, mapping=["group=doc_id", "grounding=article", "response=summary", "system=model",
                                      "score:consistency=rater1"], store=store)
    store.close()
    at = open_app(monkeypatch, tmp_path)
    assert not at.exception and at.sidebar.text[1].value.startswith("summeval-consistency@")
