"""The Prompts page under AppTest: live validation, preview, saving versions, diff."""

import geval
from tests.apptest_helpers import open_app, texts
from tests.helpers import REPO

PAGE = "views/2_prompts.py"


def test_preview_renders_the_template_on_a_real_item(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert not at.exception
    assert "From and To are the same version" in texts(at)  # not a diff reading "(identical)" of the editor to itself
    assert "topicalchat-naturalness@" in at.success[0].value
    preview = at.code[0].value
    assert "Conversation History:" in preview and "{{context}}" not in preview


def test_a_per_aspect_template_previews_the_aspect_chosen(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    at.selectbox(key="prompts_open").set_value("topicalchat-shared").run()
    assert not at.exception
    assert at.code[0].value.endswith("- Naturalness:")
    at.selectbox(key="prompts_aspect").set_value("Groundedness").run()
    after_response = at.code[0].value.split("Response:\n")[1]
    assert after_response.endswith("\n\n- Groundedness:") and "Naturalness" not in after_response
    assert any("{{aspect}}" in row for row in at.table[0].value["placeholder"])


def test_an_unknown_placeholder_is_an_inline_error(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("{{response}}", "{{nope}}")).run()
    assert not at.exception
    assert any("unknown placeholder {{nope}}" in e.value for e in at.error)
    # beside the editor too, where the preview was: below the 520 px editor, the error was out of view at 1400x900
    [preview] = [i.value for i in at.info if i.value.startswith("Fix the template to see the preview: ")]
    assert "unknown placeholder" in preview and "nope" in preview


def test_a_known_name_in_single_braces_is_an_error_not_text_sent_as_written(monkeypatch, tmp_path):
    """'{document}' parsed ('placeholders: summary'): every prompt was sent without its article."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("{{response}}", "{response}", 1)).run()
    assert not at.success
    assert any("{response} has single braces, so it would be sent as written" in e.value for e in at.error)


def test_a_form_asking_for_another_aspect_or_for_none_is_an_inline_error(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    editor = at.text_area(key="template_text")
    original = editor.value
    editor.set_value(original.replace("- Naturalness:", "- Fluency:")).run()
    assert not at.exception and not at.success
    assert [e.value for e in at.error] == [
        "topicalchat-naturalness:41: the form asks for 'Fluency', which is not one of its aspects (Naturalness)"]
    at.text_area(key="template_text").set_value(original.replace("\n\n- Naturalness:", "")).run()
    assert [e.value for e in at.error] == ["topicalchat-naturalness:39: no form line for aspect 'Naturalness' "
                                           "(e.g. '- Naturalness:' at the end of the body)"]


def test_saving_an_edit_makes_a_new_version_that_can_be_diffed(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    original = at.success[0].value.split(" ")[0]
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("naturally written", "natural and fluent")).run()
    edited = at.success[0].value.split(" ")[0]
    assert edited != original and edited.startswith("topicalchat-naturalness@")
    at.button(key="prompts_save").click().run()
    assert any(f"Saved {edited}" in s.value for s in at.success)
    at.selectbox(key="prompts_diff_old").set_value(original).run()
    at.selectbox(key="prompts_diff_new").set_value(edited).run()
    diff = at.code[-1].value
    assert "-Naturalness (1-3) Is the response naturally written?" in diff
    assert "+Naturalness (1-3) Is the response natural and fluent?" in diff
    assert edited in texts(at)


def test_a_saved_edit_names_the_version_it_was_edited_from(monkeypatch, tmp_path):
    """Its lineage, kept with it: an edit of a search's winner is read without the groups the search chose it on
    (geval.analysis.held_out), through every edit saved from it."""

    at = open_app(monkeypatch, tmp_path, PAGE)
    original = geval.Template.load("topicalchat-naturalness").version
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("naturally written", "natural and fluent")).run()
    at.button(key="prompts_save").click().run()
    first = at.success[-1].value.split(" ")[1].rstrip(".").split("@")[1]
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("natural and fluent", "fluent")).run()
    at.button(key="prompts_save").click().run()
    second = at.success[-1].value.split(" ")[1].rstrip(".").split("@")[1]
    parents = geval.Store(tmp_path / "store.sqlite").template_parents()
    assert not at.exception and parents == {first: original, second: first}


def _diff(at) -> tuple[str, str, str]:
    return at.selectbox(key="prompts_diff_old").value, at.selectbox(key="prompts_diff_new").value, at.code[-1].value


def test_after_an_edit_the_diff_compares_the_editor_with_the_version_it_started_from(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    original = at.success[0].value.split(" ")[0]
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("2. Judge whether", "2. Decide whether")).run()
    old, new, diff = _diff(at)
    assert not at.exception and (old, new) == (original, "(editor)")
    assert "-2. Judge whether" in diff and "+2. Decide whether" in diff
    at.button(key="prompts_save").click().run()  # saved: the next edit starts from the saved version
    saved = at.success[-1].value.split(" ")[1].rstrip(".")
    assert _diff(at)[:2] == (original, "(editor)")
    at.selectbox(key="prompts_diff_new").set_value(saved).run()  # a pair chosen by hand stays
    assert _diff(at)[:2] == (original, saved)
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("3. Rate the response", "3. Score the response")).run()
    old, new, diff = _diff(at)
    assert (old, new) == (saved, "(editor)")
    assert "+3. Score the response" in diff and "-2. Judge whether" not in diff  # from the saved edit


def test_opening_the_original_after_saving_an_edit_diffs_the_original_to_the_edit(monkeypatch, tmp_path):
    """The original opened again after an edit was saved from it: the diff still reads from the
    original to the edit, so that the edit's new line is "+", not "-"."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    original = at.success[0].value.split(" ")[0]
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("2. Judge whether", "2. Decide whether")).run()
    at.button(key="prompts_save").click().run()
    saved = at.success[-1].value.split(" ")[1].rstrip(".")
    at.selectbox(key="prompts_open").set_value("topicalchat-naturalness").run()
    old, new, diff = _diff(at)
    assert (old, new) == ("(editor)", saved) and at.success[0].value.startswith(original)
    assert "-2. Judge whether" in diff and "+2. Decide whether" in diff
    at.selectbox(key="prompts_open").set_value(saved).run()  # the edit opened again: from the original to it
    old, new, diff = _diff(at)
    assert (old, new) == (original, "(editor)") and "+2. Decide whether" in diff


def test_generating_evaluation_steps_with_the_chosen_judge(monkeypatch, tmp_path):
    from openai_stub import OpenAIStub

    with OpenAIStub() as stub:
        stub.configure("text", text="1. Read the conversation.\n2. Judge how natural the response sounds.")
        at = open_app(monkeypatch, tmp_path, PAGE, state={"judge_backend": "openai", "judge_model": "stub-model",
                                                          "judge_base_url": stub.url, "api_key": "sk-test"})
        at.selectbox(key="prompts_open").set_value("topicalchat-naturalness-cot").run()
        assert any("steps = \"auto\"" in w.value for w in at.warning)
        at.button(key="prompts_generate").click().run()
        assert not at.exception
        assert "2. Judge how natural the response sounds." in texts(at)
        assert "2. Judge how natural the response sounds." in at.code[0].value  # in the preview
        assert stub.count == 1 and "Evaluation Steps:" in stub.requests[0]["body"]["messages"][0]["content"]


def test_the_open_menu_names_the_version_in_the_editor(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert at.selectbox(key="prompts_open").value == "topicalchat-naturalness"
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("naturally written", "natural and fluent")).run()
    edited = at.success[0].value.split(" ")[0]
    assert at.selectbox(key="prompts_open").value is None  # an unsaved edit: no entry of the menu is it
    at.text_input(key="prompts_comment").set_value("fluent wording")
    at.button(key="prompts_save").click().run()
    assert any(s.value.startswith(f"Saved {edited} (fluent wording).") for s in at.success)
    assert at.selectbox(key="prompts_open").value == edited  # now a saved version: the menu names it
    at.selectbox(key="prompts_open").set_value("topicalchat-coherence").run()
    assert at.selectbox(key="prompts_open").value == "topicalchat-coherence"
    at.selectbox(key="prompts_open").set_value(edited).run()
    assert "natural and fluent" in at.text_area(key="template_text").value
    assert at.selectbox(key="prompts_open").value == edited
    assert "(saved: fluent wording)" in at.selectbox(key="prompts_open").format_func(edited)
    assert at.selectbox(key="prompts_diff_old").format_func(edited) == f"{edited} (fluent wording)"


def test_the_page_says_when_the_checks_and_preview_update(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert any("update when you press Ctrl+Enter or click outside the editor" in c.value for c in at.caption)


def test_opening_another_template_over_an_unsaved_edit_asks_first(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    editor = at.text_area(key="template_text")
    edited_text = editor.value.replace("naturally written", "natural and fluent")
    editor.set_value(edited_text).run()
    at.selectbox(key="prompts_open").set_value("topicalchat-coherence").run()
    assert not at.exception
    assert any("that is not saved. Opening topicalchat-coherence replaces it." in w.value for w in at.warning)
    assert at.text_area(key="template_text").value == edited_text  # nothing lost while it asks
    at.button(key="prompts_pending_keep").click().run()
    assert at.text_area(key="template_text").value == edited_text and "prompts_pending_keep" not in \
        [b.key for b in at.button]
    at.selectbox(key="prompts_open").set_value("topicalchat-coherence").run()
    at.text_input(key="prompts_comment").set_value("fluent wording")
    at.button(key="prompts_pending_save").click().run()  # saved with its comment, then the other opened
    assert at.selectbox(key="prompts_open").value == "topicalchat-coherence"
    assert "- Coherence:" in at.text_area(key="template_text").value
    assert at.text_input(key="prompts_comment").value == ""
    saved = geval.Store(tmp_path / "store.sqlite").template_versions("topicalchat-naturalness")
    assert [t.text for t in saved] == [edited_text]
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value + "\n").run()
    at.selectbox(key="prompts_open").set_value("topicalchat-naturalness").run()
    at.button(key="prompts_pending_drop").click().run()  # dropped: the file's text, unchanged
    assert at.selectbox(key="prompts_open").value == "topicalchat-naturalness" and "naturally written" in \
        at.text_area(key="template_text").value


def test_saving_a_text_unchanged_says_there_is_no_new_version(monkeypatch, tmp_path):
    """"Save as a new version" on a prompts/ file's text as it is said "Saved ...: its version is the hash of its
    text", as if a version were made; the comment given went onto the file's version."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    shown = at.success[0].value.split(" ")[0]
    at.button(key="prompts_save").click().run()
    assert [s.value for s in at.success if "version" in s.value] == [
        f"No new version: the editor holds {shown} unchanged (a prompts/ file's text); edit it to save a new one."]
    at.text_input(key="prompts_comment").set_value("the bundled one")
    at.button(key="prompts_save").click().run()
    assert [s.value for s in at.success if "version" in s.value] == [
        f"No new version: the editor holds {shown} unchanged (a prompts/ file's text); its comment is now 'the "
        "bundled one'."]


def test_the_comment_field_starts_empty_for_each_template_opened_and_after_a_save(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    at.text_input(key="prompts_comment").set_value("a comment for the naturalness edit").run()
    at.selectbox(key="prompts_open").set_value("topicalchat-coherence").run()
    assert at.text_input(key="prompts_comment").value == ""
    editor = at.text_area(key="template_text")
    editor.set_value(editor.value.replace("Coherence", "Coherence ", 1)).run()
    at.text_input(key="prompts_comment").set_value("a space")
    at.button(key="prompts_save").click().run()
    assert any("(a space)" in s.value for s in at.success) and at.text_input(key="prompts_comment").value == ""


def test_the_diff_reads_from_the_prompts_file_even_when_a_run_stored_it_after_the_edit(monkeypatch, tmp_path):
    """A prompts/ file is the origin of its edits: stored by a run after an edit was saved from it
    (both scored in one run), it is still the diff's From side."""

    store = geval.Store(tmp_path / "store.sqlite")
    original = geval.Template.load("topicalchat-naturalness")
    edit = geval.Template.parse(original.text.replace("2. Judge whether", "2. Decide whether"), source="edit")
    store.save_template(edit)
    store.save_template(original)  # later, as a run scoring both stores it
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE, state={"template_text": edit.text})
    old, new, diff = _diff(at)
    assert (old, new) == (original.label, "(editor)"), (old, new)
    assert "-2. Judge whether" in diff and "+2. Decide whether" in diff


def test_a_batch_or_checklist_template_previews_each_prompt_the_judge_is_sent(monkeypatch, tmp_path):
    """The preview rendered a batch template without the item's group: a red "placeholder {{responses}} ... has no
    value" on SummEval, where the editor then held summeval-batch; it said "4 prompts per item" where Score asks 8."""
    summeval = {"path": str(REPO / "data" / "summeval_sample.json"), "layout": None, "mapping": None, "name": None}
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": summeval})
    at.selectbox(key="prompts_open").set_value("summeval-batch").run()
    assert not at.exception and not at.error
    menu = at.selectbox(key="prompts_aspect")
    assert menu.label == ("Prompt: 8 prompts judge this item together with the 7 other items of its group (one call "
                          "serves them all)") and menu.value == "Coherence · order 1"  # 80 calls for 80 items, not 640
    first = at.code[0].value
    assert "Response 1:" in first and "Response 2:" in first and "{{" not in first  # the document's summaries
    menu.set_value("Coherence · order 2").run()
    assert at.code[0].value != first and sorted(at.code[0].value.split()) == sorted(first.split())  # other order
    at.selectbox(key="prompts_open").set_value("summeval-checklist").run()
    assert not at.exception and not at.error and at.selectbox(key="prompts_aspect").value.startswith("Coherence · question 1: ")
    question = "Does the summary read as one connected account rather than a heap of unrelated facts?"
    at.selectbox(key="prompts_aspect").set_value(f"Coherence · question 4: {question}").run()
    assert f"4. Coherence · question 4: {question}" in [c.value for c in at.caption]  # the menu cuts it off
    at.selectbox(key="prompts_open").set_value("summeval-coherence").run()  # one prompt: no menu
    assert not at.exception and not at.error and not [s for s in at.selectbox if s.key == "prompts_aspect"]


def test_a_template_for_another_level_is_previewed_with_why_score_will_not_choose_it(monkeypatch, tmp_path):
    """The preview showed a dialogue-level template on turn-level items without a word; Score did not choose it."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert not at.warning  # the editor's template fits the dataset
    at.selectbox(key="prompts_open").set_value("fed-dialogue-overall").run()
    assert not at.exception and at.code
    assert [w.value.replace("\\", "") for w in at.warning] == [  # markdown's escapes taken out
        "This template does not fit topicalchat_usr_sample: fed-dialogue-overall is written for the dialogue level "
        "and these items are at the turn level: pick a template written for the turn level. Score lists it while it "
        "is in the editor, but does not choose it for you."]


def test_a_template_compared_with_an_aspect_people_did_not_score_says_so_before_a_run(monkeypatch, tmp_path):
    """Seen as a new user: Prompts opened FED's relevance template on the Topical-Chat sample (which has no
    Relevant) without a word; only Score said its scores would be compared with nobody."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    at.selectbox(key="prompts_open").set_value("fed-turn-relevant").run()
    assert not at.exception and at.code  # previewed
    [said] = [w.value.replace("\\", "") for w in at.warning]
    assert said.startswith("Its scores on topicalchat_usr_sample would be compared with nobody yet: fed-turn-relevant "
                           "compares Relevance with 'Relevant'"), said


def test_an_edit_that_does_not_parse_after_opening_a_template_keeps_its_text_and_says_why(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)
    at.selectbox(key="prompts_open").set_value("topicalchat-coherence").run()
    editor = at.text_area(key="template_text")
    typo = editor.value.replace("max = 3", "max = 3x")
    editor.set_value(typo).run()
    assert not at.exception
    assert at.text_area(key="template_text").value == typo  # not replaced by the dataset's default
    assert at.error and not at.success
    at.run()  # and on the next run too
    assert at.text_area(key="template_text").value == typo
    opened = geval.Template.load("topicalchat-coherence").label  # a reload opens what the edit started from
    assert at.query_params["template"] == opened, at.query_params
    assert any(f"a reload or a link opens {opened} without this edit" in c.value for c in at.caption)
    at.selectbox(key="prompts_open").set_value("topicalchat-naturalness").run()  # asks first, and says why not saved
    pending = at.button(key="prompts_pending_save")
    assert pending.disabled and pending.help.startswith("An edit that does not parse cannot be saved")


def test_an_aspect_no_template_judges_is_drafted_into_the_editor_and_once_saved_is_judged(monkeypatch, tmp_path):
    """Replies labeled pass/fail: no template judged "verdict", and writing one meant knowing the header by heart.
    The draft comes into the editor on 0-1 (not over an unsaved edit), previews on the file's items, and once
    saved judges the aspect: the offer goes."""
    table = tmp_path / "verdicts.csv"
    table.write_text("context,reply,verdict,fluent\n" + "".join(
        f"hello {k},reply {k},{'pass' if k % 2 else 'fail'},{1 + k % 3}\n" for k in range(8)))
    geval.load_dataset(table, mapping=["response=reply", "context=context", "score:verdict=verdict",
                                       "score:fluent=fluent"], store=geval.Store(tmp_path / "store.sqlite"))
    at = open_app(monkeypatch, tmp_path, PAGE, params={"dataset": "verdicts"})
    offered = [e.label for e in at.expander if "draft" in e.label]
    assert offered == ["No template here judges verdict, fluent: draft one"]
    at.selectbox(key="prompts_draft_aspect").set_value("fluent").run()
    at.button(key="prompts_draft").click().run()  # a draft, untouched: another replaces it without a word
    assert "min = 1\nmax = 3" in at.text_area(key="template_text").value
    at.selectbox(key="prompts_draft_aspect").set_value("verdict").run()
    editor = at.text_area(key="template_text")
    original = editor.value
    editor.set_value(original.replace("+++\n", "+++\n# my note\n", 1)).run()
    at.button(key="prompts_draft").click().run()
    assert "The editor holds an edit that is not saved: save it" in texts(at)
    assert "# my note" in at.text_area(key="template_text").value  # the edit is kept
    at.text_area(key="template_text").set_value(original).run()  # the fluent draft, untouched again
    at.button(key="prompts_draft").click().run()
    assert not at.exception and 'name = "verdicts-verdict"' in at.text_area(key="template_text").value
    assert at.success[0].value.startswith("verdicts-verdict@") and "verdict 0-1 (human: verdict)" in at.success[0].value
    preview = at.code[0].value
    assert "Response:\nreply 0" in preview and "1 (pass) if it does, 0 (fail) if it does not" in preview
    at.button(key="prompts_save").click().run()
    at.selectbox(key="prompts_open").set_value("response-overall").run()  # the saved draft, out of the editor
    assert not at.exception
    assert [e.label for e in at.expander if "draft" in e.label] == ["No template here judges fluent: draft one"]


def test_an_aspect_only_labeled_is_offered_and_drafted_from_the_labels(monkeypatch, tmp_path):
    """Replies with no people's scores, labeled on an aspect named on the Label page (its scale declared then):
    the offer names it, and its draft asks on that scale."""
    table = tmp_path / "plain.csv"
    table.write_text("context,reply\n" + "".join(f"hello {k},reply {k}\n" for k in range(6)))
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(table, mapping=["response=reply", "context=context"], store=store)
    for k, item in enumerate(dataset.items):
        store.save_label(item.id, "Polite", 1 + k % 2)
    store.declare_scales(dataset.name, {"Polite": (1, 3)})
    at = open_app(monkeypatch, tmp_path, PAGE, params={"dataset": "plain"})
    assert [e.label for e in at.expander if "draft" in e.label] == ["No template here judges Polite: draft one"]
    at.button(key="prompts_draft").click().run()
    assert not at.exception and "min = 1\nmax = 3\nhuman = \"Polite\"" in at.text_area(key="template_text").value
    # not diffed with, nor saved as a child of, the template open before (the whole text "changed")
    assert (at.selectbox(key="prompts_diff_old").value, at.selectbox(key="prompts_diff_new").value) == ("(editor)",) * 2
    at.button(key="prompts_save").click().run()
    saved = geval.Store(tmp_path / "store.sqlite").template_versions("plain-polite")
    assert len(saved) == 1 and saved[0].version not in store.template_parents()
    store.save_label(dataset.items[0].id, "Kind", 1)  # labeled after the page was drawn: offered on its next run
    at.run()
    assert [e.label for e in at.expander if "draft" in e.label] == ["No template here judges Kind: draft one"]
