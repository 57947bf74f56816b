"""The Score page under AppTest: an OpenAI-compatible judge (a stub on 127.0.0.1) scores in the
background, the page reports progress and the result, a rerun is all cached, and the API key
typed in the sidebar is written nowhere."""

import re
import time
from pathlib import Path

import pytest
from openai_stub import OpenAIStub

import geval
from geval.scoring.runner import UNREAD
from studio.state import DEFAULT_TEMPLATE
from studio.text import plain

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
    return any("Run " in s.value and "items" in s.value for s in [*at.success, *at.info])  # a stopped run: blue


@pytest.mark.parametrize("n, items, calls", [(6, "6 items", "6 judge calls"), (1, "1 item", "1 judge call")])
def test_scoring_with_an_openai_compatible_server(monkeypatch, tmp_path, n, items, calls):
    with OpenAIStub() as stub:
        stub.configure("logprobs", distribution={1: 0.1, 2: 0.3, 3: 0.6})
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        at.number_input(key="score_limit").set_value(n).run()
        assert f"{items}: 0 cached, {calls} to make" in texts(at)  # one call is "1 judge call"
        at.button(key="score_start").click().run()
        wait_for(at, _finished)
        assert not at.exception
        summary = next(s.value for s in at.success if s.value.startswith("Run "))
        assert f"{n}/{n} items, 0 cached, {calls}, 0 failed" in summary
        assert stub.count == n and stub.max_in_flight <= 4
        assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in stub.requests)

        at.run()
        assert f"{items}: {n} cached, 0 judge calls to make" in texts(at)

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


def _stopped_after_a_few(monkeypatch, tmp_path, stub):
    """The Score page on 12 items of the stub, stopped after a few of them."""
    stub.configure("logprobs", delay=0.3)
    at = open_app(monkeypatch, tmp_path, PAGE)
    _use_stub(at, stub)
    at.number_input(key="score_limit").set_value(12).run()
    at.button(key="score_start").click().run()
    wait_for(at, lambda at: stub.count >= 2)
    at.button(key="score_stop").click().run()
    wait_for(at, _finished)
    return at


def test_stop_keeps_what_is_done_and_resume_finishes_the_rest(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        at = _stopped_after_a_few(monkeypatch, tmp_path, stub)
        summary = next(s.value for s in at.info if s.value.startswith("Run "))  # blue: neither done nor failed
        assert "stopped; press Resume this run to go on" in summary
        stopped_after = stub.count
        assert 0 < stopped_after < 12
        assert at.button(key="score_start").label == "Resume this run"

        at.button(key="score_start").click().run()
        # planned anew: the items done before the stop are cached, not work left (the ETA counts down the plan)
        assert f"12 items: {stopped_after} cached, {12 - stopped_after} judge calls to make" in texts(at)
        wait_for(at, lambda at: any("12/12 items" in s.value for s in at.success))
        resumed = next(s.value for s in at.success if "12/12 items" in s.value)
        assert f"{stopped_after} cached" in resumed and f"{12 - stopped_after} judge calls" in resumed
        assert stub.count == 12  # nothing was asked twice


def test_after_a_stop_another_selection_starts_anew_and_the_stopped_run_keeps_its_own_resume(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        at = _stopped_after_a_few(monkeypatch, tmp_path, stub)
        stopped_after = stub.count
        assert at.button(key="score_start").label == "Resume this run"

        at.number_input(key="score_limit").set_value(3).run()  # another selection: not the stopped run's
        assert at.button(key="score_start").label == "Start scoring"
        assert at.button(key="score_resume").label == "Resume this run"  # the stopped run's own line
        at.button(key="score_start").click().run()
        wait_for(at, lambda at: any("3/3 items" in s.value for s in at.success))
        assert stub.count == max(stopped_after, 3)  # the first 3 items only: nothing of the stopped run's 12
        resume = [b for b in at.button if (b.key or "").startswith("score_resume_")]
        assert [b.label for b in resume] == ["Resume this run"], "the stopped run is still offered"

        resume[0].click().run()
        wait_for(at, lambda at: any("12/12 items" in s.value for s in at.success))
        assert stub.count == 12  # its own 12 items, nothing asked twice
        assert not [b for b in at.button if (b.key or "").startswith("score_resume")]


def test_an_unparseable_template_in_the_editor_is_said_and_the_others_are_still_offered(monkeypatch, tmp_path):
    """A typo in the editor stopped the page: no prompts/ file nor saved version could be scored meanwhile."""
    at = open_app(monkeypatch, tmp_path)
    at.session_state["template_text"] = "no header at all"
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert any("does not parse, so it is not offered here: mend it on the Prompts page" in w.value for w in at.warning)
    offered = at.multiselect(key="score_templates").options  # as shown: "label (prompts/)"
    assert f"{geval.Template.load('topicalchat-naturalness').label} (prompts/)" in offered
    assert at.multiselect(key="score_templates").value and not at.button(key="score_start").disabled


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


# --- issue 13: versions, render problems, failures, progress -------------------------------------

def _versions():
    import geval

    file_version = geval.Template.load("topicalchat-naturalness")
    edited = geval.Template.parse(file_version.text.replace("naturally written", "natural and fluent"),
                                  source="topicalchat-naturalness")
    return file_version, edited


def test_two_versions_of_one_template_are_scored_in_one_run(monkeypatch, tmp_path):
    import geval

    file_version, edited = _versions()
    with OpenAIStub() as stub:
        at = open_app(monkeypatch, tmp_path, PAGE, state={"template_text": edited.text})
        _use_stub(at, stub)
        assert at.multiselect(key="score_templates").value == [edited.label]
        at.multiselect(key="score_templates").select(file_version.label).run()
        at.number_input(key="score_limit").set_value(3).run()
        assert at.multiselect(key="score_templates").value == [edited.label, file_version.label]  # both kept
        assert sum(": 3 items: 0 cached, 3 judge calls to make" in i.value for i in at.info) == 2
        at.button(key="score_start").click().run()
        wait_for(at, lambda at: sum(s.value.startswith("Run ") for s in at.success) == 2)
        assert not at.exception
    store = geval.Store(tmp_path / "store.sqlite")
    combos = store.combos("topicalchat_usr_sample")
    store.close()
    assert sorted(combos["template_version"]) == sorted([file_version.version, edited.version])
    assert list(combos["ok"]) == [3, 3]


def test_the_menu_offers_the_templates_written_for_these_items_and_says_how_many_it_leaves_out(monkeypatch,
                                                                                                tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)  # Topical-Chat: turns with a fact, no persona, no summary
    offered = at.multiselect(key="score_templates").options
    assert any(o.startswith("topicalchat-coherence@") for o in offered)
    assert not any(o.startswith(("personachat-", "summeval-", "dstc9-")) for o in offered)
    assert re.search(r"\d+ other template versions \(prompts/ files, saved ones\) are not offered", texts(at))


def test_a_dataset_change_drops_the_chosen_templates_that_cannot_render_on_it_and_says_why(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE,  # Topical-Chat, the editor's topicalchat-naturalness (opened by the
                  state={"template_name": "topicalchat-naturalness"})  # user: it stays there on FED) chosen
    coherence = next(o for o in at.multiselect(key="score_templates").options if o.startswith("topicalchat-coherence@"))
    at.multiselect(key="score_templates").select(coherence).run()
    assert len(at.multiselect(key="score_templates").value) == 2
    at.session_state["dataset_source"] = {"path": str(geval_known()["fed_sample"]), "layout": None,
                                          "mapping": None, "name": None}  # chosen on the Data page
    at.run()
    assert not at.exception
    opened = at.multiselect(key="score_templates").value  # neither renders on FED's turns (no fact): one that does,
    fed = geval.load_dataset("fed_sample")  # compared with an aspect FED's people scored
    template = geval.Template.load(opened[0].split("@")[0])
    assert len(opened) == 1 and template.fits(fed.items), opened
    assert {a.human.lower() for a in template.aspects} & {a.lower() for a in fed.aspects}
    assert not at.error  # no red plan for a template of the dataset before
    warning = next(w.value for w in at.warning if w.value.startswith("Dropped from the templates chosen"))
    assert plain("topicalchat-coherence@") in warning and plain("topicalchat-naturalness@") in warning, warning
    assert plain("placeholder {{fact}} of topicalchat-coherence has no value: no grounding") in warning
    offered = at.multiselect(key="score_templates").options
    assert any(o.startswith("fed-turn-engaging@") for o in offered)
    assert any(o.startswith("topicalchat-naturalness@") for o in offered)  # the editor's, offered still
    at.run()  # said until the next change, and nothing more dropped
    assert any(w.value.startswith("Dropped from the templates chosen") for w in at.warning)


def test_the_editors_version_follows_the_editor_in_the_choice(monkeypatch, tmp_path):
    file_version, edited = _versions()
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert at.multiselect(key="score_templates").value == [file_version.label]
    at.session_state["template_text"] = edited.text  # edited on the Prompts page
    at.run()
    assert at.multiselect(key="score_templates").value == [edited.label]
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_template(edited, comment="saved on the Prompts page")
    store.close()
    at.multiselect(key="score_templates").select(file_version.label).run()  # the original beside its saved edit
    at.session_state["template_text"] = file_version.text  # the original opened again on the Prompts page
    at.run()
    assert at.multiselect(key="score_templates").value == [edited.label, file_version.label]  # neither dropped


def test_a_template_that_cannot_render_is_explained_once_before_start(monkeypatch, tmp_path):
    fed = {"path": str(geval_known()["fed_sample"]), "layout": None, "mapping": None, "name": None}
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": fed,  # the user put it in the editor
                                                      "template_name": "topicalchat-naturalness"})
    opened = at.multiselect(key="score_templates").value  # the editor's cannot render here: not chosen first,
    assert len(opened) == 1 and not opened[0].startswith("topicalchat-")  # one that renders is
    at.multiselect(key="score_templates").unselect(opened[0]).run()
    assert plain("The editor's topicalchat-naturalness@") in texts(at)
    editor = next(o for o in at.multiselect(key="score_templates").options if o.startswith("topicalchat-naturalness@"))
    at.multiselect(key="score_templates").select(editor).run()  # chosen anyway
    at.selectbox(key="score_level").set_value("turn").run()
    assert not at.exception
    said = [e.value for e in at.error] + [w.value for w in at.warning]
    assert len([s for s in said if "{{fact}}" in s]) == 1, said
    assert "placeholder {{fact}} in topicalchat-naturalness has no value for 60 of 60 items: no grounding" in \
        at.error[0].value
    assert at.button(key="score_start").disabled


def test_a_template_compared_with_an_aspect_the_dataset_has_not_is_said_before_start(monkeypatch, tmp_path):
    """A run of a template whose human aspect the dataset has no scores of spent its calls without a word; the
    Agreement page then said its scores are compared with nobody."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    relevant = next(o for o in at.multiselect(key="score_templates").options if o.startswith("fed-turn-relevant@"))
    at.multiselect(key="score_templates").select(relevant).run()
    assert not at.exception
    said = [w.value for w in at.warning if "compared with nobody yet" in w.value]
    assert len(said) == 1 and said[0].startswith(plain("fed-turn-relevant@")) and "Relevant" in said[0], said
    assert "`python -m geval labels import`" in said[0]  # a command shown as code (its backticks were escaped)
    assert not at.button(key="score_start").disabled  # labels may come later: said, not refused


def test_people_s_scores_beyond_the_judge_s_scale_are_said_before_start(monkeypatch, tmp_path):
    """A file's Overall of 5, 9 and -1 (no scale declared) scored with a 1-5 template without a word; Agreement then
    read the judge on -1-9."""
    path = tmp_path / "outscale.csv"
    path.write_text("history,reply,overall\nhi,yo,5\nhey,sup,9\nhello,hi,-1\nbye,ok,3\n", "utf-8")
    store = geval.Store(tmp_path / "store.sqlite")
    geval.load_dataset(path, mapping=["response=reply", "context=history", "score:Overall=overall"], store=store)
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": {"stored": "outscale"}})
    overall = next(o for o in at.multiselect(key="score_templates").options if o.startswith("response-overall@"))
    at.multiselect(key="score_templates").set_value([overall]).run()
    assert not at.exception
    said = [w.value for w in at.warning if "beyond the judge's" in w.value]
    assert said == [plain(f"{overall.split(' ')[0]}: the people's Overall scores run from -1 to 9, beyond the "
                          "judge's 1-5, and no scale is declared for them: the judge's scores will be read on a scale "
                          "from -1 to 9; if people were asked on 1-5, correct their scores outside it; if on another "
                          "scale, declare it: python -m geval datasets load outscale --scale 'Overall=LOW-HIGH', or "
                          "on the Data page") + "."], said


def geval_known():
    import geval

    return geval.Dataset.known()


@pytest.mark.parametrize("behaviour, said, cause", [
    (dict(behaviour="logprobs", fail_first=None, fail_status=500, retry_after="0.01"),
     ["failed: HTTP 500 from the server", "all 2 items failed, nothing was scored"],
     "2 items, 1 of them: HTTP 500 from"),
    (dict(behaviour="text", text=""),  # every call answered, no score in any answer
     [f"failed: {UNREAD}", "0 items failed, 2 answers had no score, nothing was scored",
      "The answers' most common reason: no Naturalness score in the answer ''"],  # the reason itself
     "2 answers with no score: no Naturalness score in the answer ''"),
], ids=["every call failed", "no answer had a score"])
def test_a_run_that_scored_nothing_is_red_and_stored_as_failed(monkeypatch, tmp_path, behaviour, said, cause):
    """... and the runs' table says why (it said "the reason is shown when the run ends", gone after a reload)."""
    import geval

    with OpenAIStub() as stub:
        stub.configure(**behaviour)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        at.number_input(key="score_limit").set_value(2).run()
        at.button(key="score_start").click().run()
        wait_for(at, lambda at: any(e.value.startswith("Run ") for e in at.error))
    assert not at.success and not at.get("progress")  # no green box, no full green bar
    error = next(e.value for e in at.error if e.value.startswith("Run "))
    assert all(part in error for part in said), error
    store = geval.Store(tmp_path / "store.sqlite")
    assert store.runs()["status"].tolist() == ["failed"]
    store.close()
    at.run()
    [table] = [d for d in at.dataframe if "cause" in d.value.columns]
    shown = table.value
    assert shown["cause"].tolist()[0].startswith(cause), shown["cause"].tolist()
    # named for a reader, the items before the wide columns, the times to the second (not "+00:00", "n_items")
    assert list(shown.columns[:5]) == ["id", "status", "n_items", "started", "finished"]
    assert all(part in table.proto.columns for part in ('"label": "items"', '"label": "started (UTC)"',
                                                        '"format": "YYYY-MM-DD HH:mm:ss"')), table.proto.columns


UNREAD_LINE = plain("3 answers had no score, 3 of them: no Naturalness score in the answer ''. Inspect shows each; "
                    "they are cached, so starting again reads them the same way: change the template's form or "
                    "scale, or the judge, to ask again")


def _scored_then_unscored(monkeypatch, tmp_path, stub: OpenAIStub):
    """The page after 2 items are scored, then 5 (3 more) with answers that hold no score."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    _use_stub(at, stub)
    at.number_input(key="score_limit").set_value(2).run()
    at.button(key="score_start").click().run()
    wait_for(at, _finished)
    stub.configure("text", text="")  # answers without a score from now on
    at.number_input(key="score_limit").set_value(5).run()
    at.button(key="score_start").click().run()
    wait_for(at, lambda at: any(w.value.startswith("Run ") for w in at.warning))
    return at


def _run_lines(at) -> list[str]:
    """The lines of the orange box of a run's end."""
    return next(w.value for w in at.warning if w.value.startswith("Run ")).split("  \n")


def test_a_run_with_some_unscored_answers_is_an_orange_warning_with_their_reason(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        at = _scored_then_unscored(monkeypatch, tmp_path, stub)
    assert not at.success and not at.error
    lines = _run_lines(at)
    assert "5/5 items, 2 cached, 3 judge calls, 0 failed, 3 unscored" in lines[0]
    assert lines[1] == UNREAD_LINE


def test_cached_unscored_answers_are_counted_in_the_estimate_and_a_rerun_says_why_again(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        at = _scored_then_unscored(monkeypatch, tmp_path, stub)
        stub.configure("logprobs")  # the server fixed: the unscored answers are cached all the same
        at.run()
        assert ("5 items: 5 cached (3 unscored answers among them: stored, not asked again; change the template's "
                "form or scale, or the judge, to ask again), 0 judge calls to make") in texts(at)
        first = _run_lines(at)[0].split(":")[0] + ":"
        at.button(key="score_start").click().run()
        wait_for(at, lambda at: any(w.value.startswith("Run ") and not w.value.startswith(first) for w in at.warning))
        assert stub.count == 0
    lines = _run_lines(at)
    assert "5/5 items, 5 cached, 0 judge calls, 0 failed, 3 unscored" in lines[0] and lines[1] == UNREAD_LINE


def _shown_job(monkeypatch, tmp_path, progress, done=False, finished=(), labels=("t@1",), plans=(), **fields):
    """The Score page showing a job in the state given (put in the server's job registry), on the
    template of `labels` after those `finished`; `fields`: the job's other fields."""
    from studio import jobs

    job = jobs.Job(id=f"test{len(jobs._registry())}", labels=list(labels), dataset="topicalchat_usr_sample",
                   progress=progress, finished=list(finished), current=labels[min(len(finished), len(labels) - 1)],
                   done=done, plans=list(plans), **fields)
    jobs._registry()[job.id] = job
    return open_app(monkeypatch, tmp_path, PAGE, state={"score_job": job.id})


def test_loading_the_model_is_a_bar_of_its_own_with_its_time_and_the_eta_that_counts_it(monkeypatch, tmp_path):
    from geval.scoring.plan import Pace, Work
    from geval.scoring.runner import Progress

    loading = Progress(total=24, phase="loading the model", load_started=time.time() - 12, load_expected=40.0,
                       planned=Work(24, 0, 24), pace=Pace(per_call=2.0), started=time.time() - 12)
    at = _shown_job(monkeypatch, tmp_path, loading)
    [bar] = at.get("progress")
    shown = re.fullmatch(r"t@1: Loading the model \(about 40 s\): (\d+)s so far, ETA 1 min (\d+)s \(a default pace "
                         r"until the first judgments, which correct it\)", bar.proto.text)  # 1 s a call, stated
    assert shown, bar.proto.text
    so_far, eta = int(shown[1]), 60 + int(shown[2])
    assert 12 <= so_far < 40 and abs(eta - (40 - so_far + 24 * 2.0)) <= 1  # the load left, then 24 calls of 2 s
    assert abs(bar.proto.value - so_far / 40 * 100) <= 3 and not at.status  # the load's own progress
    assert "cannot be reached" not in texts(at) and "No answer" not in texts(at)
    assert at.button(key="score_start").disabled and at.button(key="score_stop")


def test_a_load_longer_than_expected_is_said_without_a_full_bar(monkeypatch, tmp_path):
    """A new user saw the load's bar full while the line read "Loading the model (about 7 s): 11s so far, ETA ?",
    then the bar dropped to 0 as the items began."""
    from geval.scoring.plan import Pace, Work
    from geval.scoring.runner import Progress

    late = Progress(total=24, phase="loading the model", load_started=time.time() - 50, load_expected=40.0,
                    planned=Work(24, 0, 24), pace=Pace(per_call=2.0), started=time.time() - 50)
    at = _shown_job(monkeypatch, tmp_path, late)
    assert not at.get("progress")
    [status] = at.status
    assert re.match(r"t@1: Loading the model \(about 40 s\): 5\ds so far", status.label), status.label


def test_a_stop_asked_for_says_it_is_pending_until_the_run_stops(monkeypatch, tmp_path):
    from geval.scoring.runner import Progress

    at = _shown_job(monkeypatch, tmp_path, Progress(total=6, phase="loading the judge's model"))
    assert at.button(key="score_stop").label == "Stop" and not at.button(key="score_stop").disabled
    at.button(key="score_stop").click().run()  # said in the run of the click, not a second later
    assert at.button(key="score_stop").label == "Stopping…" and at.button(key="score_stop").disabled
    assert "Stopping after the item it is on" in texts(at)


def test_a_running_job_shows_its_eta_and_an_ended_one_its_frozen_time(monkeypatch, tmp_path):
    from geval.scoring.plan import Pace, Work
    from geval.scoring.runner import Progress

    running = Progress(total=24, done=6, started=0.0, called=6, worked=Work(6, 0, 6), judged_seconds=12.0,
                       pace=Pace(per_call=2.0))
    at = _shown_job(monkeypatch, tmp_path, running)
    assert "6/24 items" in at.get("progress")[0].proto.text and "ETA 36s" in at.get("progress")[0].proto.text

    ended = Progress(total=24, done=24, started=time.time() - 500, ended=time.time() - 400, run_id=3,
                     status="finished")
    at = _shown_job(monkeypatch, tmp_path, ended, done=True, finished=[ended])
    assert not at.get("progress") and not at.status
    assert at.success[0].value.startswith("Run 3: 24/24 items") and at.success[0].value.endswith("in 100 s")


def test_the_progress_says_which_template_of_how_many_and_its_eta_covers_the_job(monkeypatch, tmp_path):
    from geval.scoring.plan import Pace, Plan, Work
    from geval.scoring.runner import Progress

    now = time.time()  # 6 of 24 items done in 6 s where the judge's pace said 3 s: the run goes twice as slow
    running = Progress(total=24, done=6, started=now - 8, called=6, planned=Work(24, 0, 24), worked=Work(6, 0, 6),
                       judged_seconds=11.0, pace=Pace(per_call=0.5))
    labels = ("a@1", "b@2", "c@3")
    plans = [Plan(24, calls=n, work=Work(n, 0, n), pace=Pace(per_call=0.5)) for n in (24, 60, 40)]
    at = _shown_job(monkeypatch, tmp_path, running, labels=labels, plans=plans)
    text = at.get("progress")[0].proto.text
    assert text.startswith("a@1 (template 1 of 3): 6/24 items") and text.endswith(
        "ETA 1 min 58s (this template and the 2 after it)")  # (18 + 60 + 40 calls) x 0.5 s x (11 + 5) / (3 + 5)
    at = _shown_job(monkeypatch, tmp_path, running, labels=labels)  # no plans: this template's ETA
    assert at.get("progress")[0].proto.text.endswith("ETA 18s for this template; 2 more to come")
    done = Progress(total=24, done=24, run_id=3, status="finished", ended=1.0, started=0.0)
    at = _shown_job(monkeypatch, tmp_path, Progress(total=24, phase="loading the judge's model"),
                    finished=[done, done], labels=labels)
    assert [s.label for s in at.status] == ["c@3 (template 3 of 3): Loading the judge's model…"]


def test_stop_pressed_as_the_run_ends_offers_resume_only_when_something_is_left(monkeypatch, tmp_path):
    from geval.scoring.runner import Progress
    from studio import jobs

    shown = jobs.selection(geval.load_dataset("topicalchat_usr_sample").items, [geval.Template.load(DEFAULT_TEMPLATE)],
                           {"backend": "embedded", "concurrency": 1, "rpm": None})  # what the page opens on
    for done, stopped, label in ((24, False, "Start scoring"), (20, True, "Resume this run")):
        ended = Progress(total=24, done=done, run_id=3, status="stopped" if stopped else "finished", stopped=stopped,
                         ended=1.0, started=0.0)
        at = _shown_job(monkeypatch, tmp_path, ended, done=True, finished=[ended], selection=shown,
                        again=lambda: None)
        jobs.get(at.session_state["score_job"]).stop.set()  # Stop was pressed
        at.run()
        assert at.button(key="score_start").label == label
        assert not [b for b in at.button if (b.key or "").startswith("score_resume")]  # one Resume button, not two


def test_some_failed_items_are_an_orange_warning_with_their_cause(monkeypatch, tmp_path):
    from geval.scoring.runner import Progress

    partly = Progress(total=10, done=10, failed=3, run_id=4, status="finished", ended=1.0, started=0.0,
                      reasons={"HTTP 503 from the server": 2, "timed out after 5 retries": 1})
    at = _shown_job(monkeypatch, tmp_path, partly, done=True, finished=[partly])
    assert not at.success and "3 of 10 items failed: HTTP 503 from the server" in at.warning[0].value
    assert "2 × HTTP 503 from the server; 1 × timed out after 5 retries" in texts(at)


def test_each_run_s_line_names_its_template(monkeypatch, tmp_path):
    from geval.scoring.runner import Progress

    file_version, edited = _versions()
    scored = Progress(total=3, done=3, run_id=4, template=edited.label, status="finished", ended=1.0, started=0.0)
    failed = Progress(total=3, done=3, failed=3, run_id=5, template=file_version.label, status="failed", ended=1.0,
                      started=0.0, reasons={"HTTP 500 from the server": 3})
    at = _shown_job(monkeypatch, tmp_path, failed, done=True, finished=[scored, failed])
    assert at.success[0].value.startswith(f"Run 4 ({plain(edited.label)}): 3/3 items")
    assert at.error[0].value.startswith(f"Run 5 ({plain(file_version.label)}) failed: HTTP 500 from the server")


def test_a_server_that_is_not_there_is_one_red_line_naming_it_and_what_to_do(monkeypatch, tmp_path):
    from geval.scoring.runner import Progress

    down = Progress(total=3, run_id=6, template="a@1", status="failed", ended=1.0, started=0.0)
    line = ("cannot reach http://127.0.0.1:8699/v1: connection refused; no server listens there: start it, or correct "
            "the base URL (sidebar: Judge settings; command line: --base-url)")
    at = _shown_job(monkeypatch, tmp_path, down, done=True, labels=("a@1", "b@2", "c@3"), error=line,
                    not_started=["b@2", "c@3"])
    assert [e.value for e in at.error] == [f"a@1: {line}  \nb@2, c@3 not started."] and not at.success
    assert at.button(key="score_start").label == "Start scoring"


def test_the_time_is_estimated_before_starting(monkeypatch, tmp_path):
    """From the embedded judge's default before its speed was ever measured on this machine, then
    from the tokens to evaluate at the speed measured here."""
    from geval.judging.backends import embedded
    from geval.judging.native import Speed

    monkeypatch.setattr(embedded, "remembered_speed", lambda model: None)
    at = open_app(monkeypatch, tmp_path, PAGE)
    at.number_input(key="score_limit").set_value(20).run()
    assert ("Time: about 1 min, after about 40 s loading the model (3.0 s per call, a default for this judge, "
            "nothing measured here yet; its speed on this machine is measured when it loads, and the run's ETA uses "
            "it; an estimate)") in texts(at)  # the load was left out: 3 s said, 14 s taken, 7 of them loading
    monkeypatch.setattr(embedded, "remembered_speed", lambda model: Speed(50.0, 10.0, time.time() - 120))
    at.run()
    line = next(text for text in texts(at).splitlines() if text.startswith("Time: "))
    assert re.fullmatch(r"Time: about \d+ min, after about 40 s loading the model \(~[\d,]+ tokens to evaluate at "
                        r"prefill 50 tokens/s, decode 10 tokens/s, measured on this machine 2 min ago; the other "
                        r"~[\d,]+ prompt tokens repeat the prompt before, kept from it; an estimate\)",
                        line), line  # beside the plan's "~47,112 prompt + ~240 answer tokens": why fewer

def test_a_job_that_is_starting_says_so_and_nothing_of_a_server(monkeypatch, tmp_path):
    at = _shown_job(monkeypatch, tmp_path, None, started=time.time() - 12)
    assert [s.label for s in at.status] == ["t@1: starting…"]


def test_calls_begun_and_unanswered_say_the_judge_may_be_retried_and_the_eta_stops_counting_down(monkeypatch,
                                                                                               tmp_path):
    """A server that refuses connections: the bar is up, no answer comes back; the ETA of the
    plan (2 calls of 0.5 s) must not read "ETA 1s" 12 s later, and the page says why it waits."""
    from geval.scoring.plan import Pace, Work
    from geval.scoring.runner import Progress

    waiting = Progress(total=2, started=time.time() - 13, calls_started=time.time() - 12, planned=Work(2, 0, 2),
                       pace=Pace(per_call=0.5), remote=True)
    at = _shown_job(monkeypatch, tmp_path, waiting)
    bar = at.get("progress")[0].proto.text
    assert "0/2 items" in bar and "ETA ?" in bar
    waited = re.search(r"No answer from the judge for (\d+) s: a server that cannot be reached is retried", texts(at))
    assert waited and int(waited.group(1)) >= 12, texts(at)  # 12 s, and the page's own build time on a busy machine
    waiting.remote = False  # a model on this machine reading its first prompt: no server to retry
    at = _shown_job(monkeypatch, tmp_path, waiting)
    assert "ETA ?" in at.get("progress")[0].proto.text and "No answer" not in texts(at)
    fresh = Progress(total=2, started=time.time(), calls_started=time.time(), planned=Work(2, 0, 2),
                     pace=Pace(per_call=30.0), remote=True)
    at = _shown_job(monkeypatch, tmp_path, fresh)  # just begun: an ETA counting down from 60 s, no hint
    assert re.search(r"ETA (1 min 00s|[345]\ds)( \(a default pace[^)]*\))?$", at.get("progress")[0].proto.text)
    assert "No answer" not in texts(at)


def test_a_long_run_says_its_total_time_and_warns_before_it_starts(monkeypatch, tmp_path):
    """"Select all" templates once queued hours of CPU without a word."""
    monkeypatch.setattr("geval.judging.backends.embedded.remembered_speed", lambda *args, **kwargs: None)  # 3 s a call
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert not at.warning and not [m for m in at.markdown if "In all" in m.value]  # one template, 3 min
    everything = at.multiselect(key="score_templates").options
    at.multiselect(key="score_templates").set_value(everything).run()
    assert not at.exception
    total = next(m.value for m in at.markdown if m.value.startswith("**In all: "))
    found = re.fullmatch(r"\*\*In all: (\d+) templates, (\d+) judge calls, about (\d+\.\d) h\*\*", total)
    assert found and int(found.group(1)) == len(everything), total
    assert float(found.group(3)) == pytest.approx(int(found.group(2)) * 3.0 / 3600, abs=0.051)
    assert [w.value for w in at.warning if "would take" in w.value] == [
        f"This run would take about {found.group(3)} h of the judge's time (on the embedded judge: this machine's "
        "CPU, all that time). Fewer templates, or a seeded sample under Items, make it shorter; a stopped run keeps "
        "what it scored."]
    at.number_input(key="score_limit").set_value(10).run()  # 10 items: minutes, said in all, no warning
    assert not [w for w in at.warning if "would take" in w.value]
    assert any(m.value.startswith("**In all: ") and m.value.endswith(" min**") for m in at.markdown)



def test_two_templates_all_cached_say_no_judge_call_in_all(monkeypatch, tmp_path):
    """It read "In all: 2 templates, 0 judge calls, about 1 s"."""
    with OpenAIStub() as stub:
        stub.configure("logprobs", distribution={1: 0.1, 2: 0.3, 3: 0.6})
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        labels = [geval.Template.load(name).label for name in ("topicalchat-naturalness", "topicalchat-coherence")]
        at.multiselect(key="score_templates").set_value(labels)
        at.number_input(key="score_limit").set_value(2).run()
        at.button(key="score_start").click().run()
        wait_for(at, _finished)
        at.run()
        assert "**In all: 2 templates, every item cached: no judge call**" in [m.value for m in at.markdown]


def _own_file(tmp_path: Path, store_path: Path) -> None:
    """A user's context,response CSV (no fact, no score) stored as "mine", as the Data page loads it."""
    import csv

    table = tmp_path / "mine.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("context", "response", "conversation_id"),
                                      *((f"A: hi {i}\nB: hello {i}", f"how are you {i}", f"c{i // 2}")
                                        for i in range(8))])
    geval.load_dataset(table, mapping=["response=response", "context=context", "group=conversation_id"],
                       store=geval.Store(store_path))


def test_score_opens_on_the_template_last_used_on_an_uploaded_file_never_on_one_that_cannot_render(monkeypatch,
                                                                                                   tmp_path):
    """Labeled with response-naturalness, a context,response file opened Score on the editor's
    topicalchat-naturalness (it needs {{fact}}): a red box and Start disabled until swapped. A reload
    (the templates in the URL, a new session) kept it too."""
    _own_file(tmp_path, tmp_path / "store.sqlite")
    naturalness = geval.Template.load("response-naturalness").label
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": {"stored": "mine"},
                                                      "label_template": naturalness})
    assert not at.exception and not at.error
    assert at.multiselect(key="score_templates").value == [naturalness]  # the Label page's, which renders
    assert not at.button(key="score_start").disabled

    editor = geval.Template.load(DEFAULT_TEMPLATE).label
    at = open_app(monkeypatch, tmp_path, PAGE, params={"dataset": "mine", "templates": editor})  # a link, a reload
    assert not at.exception and not at.error
    opened = at.multiselect(key="score_templates").value
    assert editor not in opened and len(opened) == 1 and geval.Template.load(opened[0].split("@")[0]).fits(
        geval.Store(tmp_path / "store.sqlite").items("mine"))
    assert any(plain(f"{editor}: it cannot render on mine's items: placeholder {{{{fact}}}}") in w.value
               for w in at.warning)
    assert not at.button(key="score_start").disabled


def test_the_personachat_sample_opens_on_a_personachat_template(monkeypatch, tmp_path):
    """The editor's default, topicalchat-naturalness, renders on PersonaChat (its {{fact}} takes the persona)
    and Score opened on it; a template written for PersonaChat, judging the same aspect, opens instead."""
    source = {"path": str(geval_known()["personachat_usr_sample"]), "layout": None, "mapping": None, "name": None}
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": source})
    assert not at.exception
    assert [label.split("@")[0] for label in at.multiselect(key="score_templates").value] == ["personachat-naturalness"]
    topical = open_app(monkeypatch, tmp_path / "tc", PAGE)  # Topical-Chat keeps the editor's
    assert [label.split("@")[0] for label in topical.multiselect(key="score_templates").value] == [
        "topicalchat-naturalness"]


@pytest.mark.parametrize("page, params, key, value", [
    (PAGE, {"limit": "3"}, "score_limit", 3),
    (PAGE, {"backend": "openai", "model": "stub-model", "n": "5", "temperature": "0.5"}, "judge_model", "stub-model"),
    ("views/6_tune.py", {"budget": "250", "tune_seed": "4", "share": "0.3"}, "tune_budget", 250)])
def test_fields_a_link_sets_are_drawn_without_a_value_beside_their_state(monkeypatch, tmp_path, page, params, key,
                                                                         value):
    """A link's field set in session state, beside a value given to its widget: Streamlit warned in the server's
    log ("created with a default value but also had its value set via the Session State API")."""
    from streamlit.elements.lib import policies

    warned = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    monkeypatch.setattr(policies._LOGGER, "warning", lambda message, *args, **kwargs: warned.append(message % args))
    from streamlit.testing.v1 import AppTest

    from tests.apptest_helpers import APP

    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(params)
    at.switch_page(page).run()  # the link's page is the session's first
    assert not at.exception and (at.text_input if isinstance(value, str) else at.number_input)(key=key).value == value
    assert warned == []


def test_at_most_a_few_items_says_they_are_a_dialogue_or_two_and_points_to_a_sample(monkeypatch, tmp_path):
    """"At most 12" took the first 12 items, 2 of the sample's dialogues, and every figure then read "no interval
    (2 groups)" with no word on the Score page of why."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    at.number_input(key="score_limit").set_value(12).run()
    assert not at.exception
    said = [c.value for c in at.caption if c.value.startswith("At most 12")]
    assert len(said) == 1 and re.match(r"At most 12 takes the first items: 2 of the dataset's \d\d groups\. "
                                       r"Agreement gives no interval from fewer than 10 groups: .*Seeded random "
                                       r"sample\.", said[0]), said
    at.radio(key="score_how").set_value("Seeded random sample").run()
    assert [c.value for c in at.caption if c.value.startswith("At most")] == [  # which of the two counts
        "At most 12 of the sample of 20: its first 12 items, in the file's order (set At most to 0 to score the whole "
        "sample)."]
    at.number_input(key="score_limit").set_value(0).run()
    assert not [c.value for c in at.caption if c.value.startswith("At most")]


def test_a_sample_that_spans_too_few_groups_for_an_interval_says_so(monkeypatch, tmp_path):
    """20 of SummEval's 80 summaries at seed 0 span 9 of its 10 documents: Agreement then gave no interval anywhere,
    while the page had just advised a seeded sample "for a quick look across groups"."""
    at = open_app(monkeypatch, tmp_path, PAGE, params={"dataset": "summeval_sample"})
    at.radio(key="score_how").set_value("Seeded random sample").run()
    at.number_input(key="score_sample").set_value(20).run()
    assert not at.exception
    said = [c.value for c in at.caption if c.value.startswith("These 20 items span")]
    assert said == ["These 20 items span 9 of the dataset's 10 groups: Agreement gives no interval from fewer than "
                    "10 groups (a larger sample, or another seed, spans more)."], said
    at.number_input(key="score_seed").set_value(3).run()  # this one spans all 10
    assert not [c.value for c in at.caption if c.value.startswith("These 20 items span")]
