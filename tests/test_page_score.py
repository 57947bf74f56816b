"""The Score page under AppTest: an OpenAI-compatible judge (a stub on 127.0.0.1) scores in the
background, the page reports progress and the result, a rerun is all cached, and the API key
typed in the sidebar is written nowhere."""

from pathlib import Path

from openai_stub import OpenAIStub

from tests.apptest_helpers import open_app, texts, wait_for

PAGE = "views/3_score.py"
KEY = "sk-test-NEVER-STORE-7f3a9c"


def _use_stub(at, stub: OpenAIStub) -> None:
    """Point the sidebar's judge at the stub, as a user would."""
    at.radio(key="judge_backend").set_value("openai").run()
    at.text_input(key="judge_model").set_value("stub-model")
    at.text_input(key="judge_base_url").set_value(stub.url)
    at.text_input(key="api_key").set_value(KEY)
    at.selectbox(key="judge_mode").set_value("logprobs").run()


def _finished(at) -> bool:
    return any("Run " in s.value and "items" in s.value for s in at.success)


def test_scoring_with_an_openai_compatible_server(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", distribution={1: 0.1, 2: 0.3, 3: 0.6})
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        at.number_input(key="score_limit").set_value(6).run()
        assert "6 items: 0 cached, 6 judge calls to make" in texts(at)
        at.button(key="score_start").click().run()
        wait_for(at, _finished)
        assert not at.exception
        summary = next(s.value for s in at.success if s.value.startswith("Run "))
        assert "6/6 items, 0 cached, 6 judge calls, 0 failed" in summary
        assert stub.count == 6 and stub.max_in_flight <= 4
        assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in stub.requests)

        at.run()
        assert "6 items: 6 cached, 0 judge calls to make" in texts(at)

    written = [p for p in Path(tmp_path).rglob("*") if p.is_file()]
    assert written, "the store was not written"
    for path in written:
        assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"


def test_parallel_requests_setting_bounds_the_calls_in_flight(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", delay=0.2)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        at.number_input(key="score_concurrency").set_value(3).run()
        at.number_input(key="score_limit").set_value(9).run()
        at.button(key="score_start").click().run()
        wait_for(at, _finished)
        assert any("9/9 items" in s.value for s in at.success)
        assert 1 < stub.max_in_flight <= 3


def test_stop_keeps_what_is_done_and_resume_finishes_the_rest(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", delay=0.3)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        at.number_input(key="score_limit").set_value(12).run()
        at.button(key="score_start").click().run()
        wait_for(at, lambda at: stub.count >= 2, timeout=30)
        at.button(key="score_stop").click().run()
        wait_for(at, _finished)
        summary = next(s.value for s in at.success if s.value.startswith("Run "))
        assert "stopped; press Resume to go on" in summary
        stopped_after = stub.count
        assert 0 < stopped_after < 12
        assert at.button(key="score_start").label == "Resume"

        at.button(key="score_start").click().run()
        wait_for(at, lambda at: any("12/12 items" in s.value for s in at.success))
        resumed = next(s.value for s in at.success if "12/12 items" in s.value)
        assert f"{stopped_after} cached" in resumed and f"{12 - stopped_after} judge calls" in resumed
        assert stub.count == 12  # nothing was asked twice


def test_an_unparseable_template_stops_the_page_with_a_pointer(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path)
    at.session_state["template_text"] = "no header at all"
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any("does not parse" in e.value for e in at.error)


def test_a_per_aspect_template_makes_one_call_per_aspect(monkeypatch, tmp_path):
    shared = (Path(__file__).parent.parent / "prompts" / "topicalchat-shared.txt").read_text()
    with OpenAIStub() as stub:
        stub.configure("logprobs", distribution={0: 0.2, 1: 0.8})
        at = open_app(monkeypatch, tmp_path, PAGE, state={"template_text": shared})
        _use_stub(at, stub)
        at.number_input(key="score_limit").set_value(3).run()
        assert "3 items: 0 cached, 12 judge calls to make" in texts(at)
        at.button(key="score_start").click().run()
        wait_for(at, _finished)
        assert not at.exception
        summary = next(s.value for s in at.success if s.value.startswith("Run "))
        assert "3/3 items, 0 cached, 12 judge calls, 0 failed" in summary
        assert stub.count == 12
        endings = sorted(r["body"]["messages"][-1]["content"].rsplit("\n", 1)[1] for r in stub.requests)
        assert endings == [f"- {name}:" for name in ("Coherence", "Engagingness", "Groundedness", "Naturalness")
                           for _ in range(3)]
