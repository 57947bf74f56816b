"""The shared sidebar (app.py): it shows the dataset, template version and judge, and its judge
settings are what the pages use."""

import geval
from studio.text import plain
from tests.apptest_helpers import open_app, wait_for
from tests.helpers import REPO


def test_sidebar_shows_current_dataset_template_and_judge(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    shown = [t.value for t in at.sidebar.text]
    assert shown[0].startswith("topicalchat_usr_sample (usr): 60 items")
    assert shown[1].startswith("topicalchat-naturalness@")
    assert shown[2] == "embedded: Qwen2.5-Coder-1.5B, bundled"
    # the judge that new scores come from: Inspect and Agreement show the judges that scored the dataset
    assert [c.value for c in at.sidebar.caption][:3] == ["Dataset", "Template in the editor", "Judge for new scores"]


def test_an_embedded_judge_of_another_gguf_file_is_named_by_its_file(monkeypatch, tmp_path):
    """Two GGUF files read alike, "embedded: Qwen2.5-Coder-1.5B (embedded)", and shared the judge check's result."""
    at = open_app(monkeypatch, tmp_path, state={"judge_model_path": "/models/other-3b-q4_k_m.gguf"})
    assert at.sidebar.text[-1].value == "embedded: other-3b-q4_k_m.gguf"


def test_switching_the_judge_to_an_openai_compatible_server(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, state={"judge_backend": "openai", "judge_base_url": "http://127.0.0.1:9/v1"})
    assert not at.exception
    assert at.session_state["judge_options"] == {
        "backend": "openai", "model": "gpt-4o-mini", "mode": "auto", "n": 20, "temperature": 1.0,
        "base_url": "http://127.0.0.1:9/v1",
    }
    assert at.sidebar.text[-1].value == "openai: gpt-4o-mini at 127.0.0.1:9"  # where it runs: two servers read apart
    assert at.text_input(key="api_key").proto.type == at.text_input(key="api_key").proto.PASSWORD


def test_openai_without_a_key_says_the_calls_will_be_refused(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = open_app(monkeypatch, tmp_path, state={"judge_backend": "openai"})
    assert any("No API key: api.openai.com will refuse the calls" in c.value for c in at.sidebar.caption)
    at.text_input(key="api_key").set_value("sk-test").run()
    assert not any("No API key" in c.value for c in at.sidebar.caption)
    local = open_app(monkeypatch, tmp_path, state={"judge_backend": "openai", "judge_base_url": "http://127.0.0.1:9/v1"})
    assert not any("No API key" in c.value for c in local.sidebar.caption)  # a local server may need none


def test_checking_a_server_that_is_not_there_names_it_and_what_to_do_with_its_address_as_written(monkeypatch,
                                                                                               tmp_path):
    at = open_app(monkeypatch, tmp_path, state={"judge_backend": "openai", "judge_base_url": "http://127.0.0.1:9/v1"})
    at.sidebar.button(key="judge_check").click().run()
    wait_for(at, lambda at: at.sidebar.error)
    line = ("cannot reach http://127.0.0.1:9/v1: connection refused; no server listens there: start it, or correct the "
            "base URL (sidebar: Judge settings; command line: --base-url)")
    assert [e.value for e in at.sidebar.error] == [f"The judge cannot work: the test judgment: {line}"]
    shown = [m.value for m in at.sidebar.markdown if "test judgment" in m.value]
    assert shown and "http://127.0.0.1:9/v1:" in shown[0]  # no `127\.0\.0\.1`: a Markdown link shows escapes
    assert plain("see http://127.0.0.1:9/v1: a_b. (1.) http://x.org/*a*") == \
        "see http://127.0.0.1:9/v1: a\\_b\\. \\(1\\.\\) http://x.org/*a*"


def test_a_sessions_first_run_says_what_it_does_before_the_page_draws(monkeypatch, tmp_path):
    """The main area stayed blank for seconds on first open, while the engine was imported and the sidebar read the
    dataset: it says so until the page draws (here the run is stopped there, so that the line stays to be read)."""
    import streamlit as st

    import studio.memory
    import studio.state

    monkeypatch.setattr(studio.state, "sidebar", st.stop)
    at = open_app(monkeypatch, tmp_path)
    assert [c.value for c in at.main.caption] == ["Opening G-Eval Studio: reading the dataset…"]
    monkeypatch.setattr(studio.memory, "freed_blocks_returned", st.stop)  # the engine's imports, seconds at first
    at = open_app(monkeypatch, tmp_path)
    assert [c.value for c in at.main.caption] == ["Opening G-Eval Studio…"]
    monkeypatch.undo()
    at = open_app(monkeypatch, tmp_path)  # once drawn, the page alone
    assert not any("Opening G-Eval Studio" in c.value for c in at.main.caption) and at.title[0].value == "Data"


def test_the_editors_template_follows_the_dataset_until_the_user_puts_one_there(monkeypatch, tmp_path):
    """On SummEval the sidebar named the editor's topicalchat-naturalness, which cannot judge a summary: until
    the user opens or edits a template, the editor holds one for the dataset (the one Score opens on)."""
    summeval = {"path": str(REPO / "data" / "summeval_sample.json"), "layout": None, "mapping": None, "name": None}
    at = open_app(monkeypatch, tmp_path, state={"dataset_source": summeval})
    assert not at.exception
    shown = at.sidebar.text[1].value
    assert shown.startswith("summeval-") and geval.Template.load(shown.split("@")[0]).kind == "form", shown  # no batch
    at.switch_page("views/3_score.py").run()
    assert at.multiselect(key="score_templates").value == [shown]  # the one Score opens on
    at.switch_page("views/2_prompts.py").run()  # the Prompts page names it as its own, previews it with no error
    name = shown.split("@")[0]  # the editor's errors name it too (they named topicalchat-naturalness)
    assert at.selectbox(key="prompts_open").value == name == at.session_state["template_name"] and not at.error
    at.session_state["dataset_source"] = {**summeval, "path": str(REPO / "data" / "topicalchat_usr_sample.json")}
    at.run()
    assert at.sidebar.text[1].value.startswith("topicalchat-naturalness@")  # back: the default again
    at.switch_page("views/2_prompts.py").run()
    at.selectbox(key="prompts_open").select("topicalchat-engagingness").run()  # the user's choice ...
    at.session_state["dataset_source"] = summeval
    at.run()
    assert at.sidebar.text[1].value.startswith("topicalchat-engagingness@")  # ... stays, on any dataset


def test_a_plain_address_opens_on_the_openai_judge_that_scored_the_dataset_so_its_answers_are_cached(monkeypatch,
                                                                                                    tmp_path):
    """Scored from the command line on a local server, the app opened on the embedded judge: the Score page said
    "0 cached" for what was stored. A session opened without a context starts on that judge; a link keeps its own."""
    from tests.apptest_helpers import texts
    from tests.helpers import scripted

    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset("topicalchat_usr_sample", store=store)
    judge = scripted()
    judge.settings = {"backend": "openai", "model": "served-model", "base_url": "http://127.0.0.1:9/v1",
                      "mode": "logprobs", "temp": None, "n": None, "top_logprobs": 20, "max_tokens": 16}
    geval.score(store, dataset.items[:6], geval.Template.load("topicalchat-naturalness"), judge, dataset.name)
    store.close()
    at = open_app(monkeypatch, tmp_path, "views/3_score.py")
    assert at.session_state["judge_options"] == {
        "backend": "openai", "model": "served-model", "mode": "auto", "n": 20, "temperature": 1.0,
        "base_url": "http://127.0.0.1:9/v1"}
    assert at.sidebar.text[-1].value == "openai: served-model at 127.0.0.1:9"
    assert "60 items: 6 cached, 54 judge calls to make" in texts(at)
    linked = open_app(monkeypatch, tmp_path, "views/3_score.py", params={"dataset": "topicalchat_usr_sample"})
    assert linked.session_state["judge_options"] == {"backend": "embedded"}
