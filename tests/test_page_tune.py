"""The Tune page under AppTest: a small search with an OpenAI-compatible judge (a stub on
127.0.0.1) runs in the background, shows its split and rounds, reports the winner on the test
groups, and saves it as a template version; a reloaded session finds the running search."""

from openai_stub import OpenAIStub

import geval
from studio.text import plain
from tests.apptest_helpers import open_app, texts, wait_for
from tests.test_page_score import _use_stub

PAGE = "views/6_tune.py"


def _small_search(at, budget: int = 70, human: str = "Natural") -> None:
    at.selectbox(key="tune_aspect").set_value(human)
    at.number_input(key="tune_budget").set_value(budget)
    at.multiselect(key="tune_variants").set_value([]).run()  # the template to beat and its argmax read


def test_a_small_search_reports_the_winner_on_the_test_groups_and_saves_it(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", hashed=True)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        _small_search(at)
        assert not at.exception and "At most 70 judge calls in all" in texts(at)
        assert "a default for this judge, nothing measured here yet" in texts(at)
        at.button(key="tune_start").click().run()
        wait_for(at, lambda a: any(h.value == "Result" for h in a.subheader))
        assert not at.exception and not at.error
        page = texts(at)
        assert "Split (seeded, by group): 5 groups to tune on, 5 to test on; 2 variants tried" in page
        assert "Winner on the tune groups:" in page
        rounds = at.dataframe[0].value
        start = f"start: {geval.Template.load('topicalchat-naturalness').label}"  # a saved edit read alike
        assert {start, f"{start} [argmax read]"} <= set(rounds["candidate"])
        assert (rounds["groups"] == 3).all()  # round 1: three of the five tune groups
        calls = stub.count
        assert 0 < calls <= 70  # the budget caps every call: 30 kept for the test part's 30 responses
        assert "Winner on the 5 test groups" in [m.label for m in at.metric]
        held_out = next(m.value for m in at.metric if m.label == "Winner on the 5 test groups")
        at.run()  # the calls counted before are kept, and timed at the pace the search's calls measured
        assert "s per call measured over" in texts(at) and "nothing measured here yet" not in texts(at)

        reloaded = open_app(monkeypatch, tmp_path, PAGE, params=dict(at.query_params))  # a reload: the same URL
        assert "search" in at.query_params and not reloaded.exception
        assert any(h.value == "Result" for h in reloaded.subheader)  # the finished search, not an empty form
        assert next(m.value for m in reloaded.metric if m.label == "Winner on the 5 test groups") == held_out
        assert stub.count == calls

        # the template to beat or its argmax read won: nothing new to save (saving it renamed the user's version)
        assert "tune_save" not in [b.key for b in at.button]
        assert "there is no new wording to save; pick that version on the Score page" in texts(at)

        again = open_app(monkeypatch, tmp_path, PAGE)  # nothing new to call: every judgment is stored
        _use_stub(again, stub)
        _small_search(again)
        again.button(key="tune_start").click().run()
        wait_for(again, lambda a: any(h.value == "Result" for h in a.subheader))
        assert stub.count == calls


def test_a_winner_with_new_wording_is_saved_named_after_the_search_and_a_users_comment_on_it_is_kept(monkeypatch,
                                                                                                      tmp_path):
    """Saving a winner replaced the comment a user had given that version with the search's figure."""
    with OpenAIStub() as stub:
        stub.configure("logprobs", hashed=True)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        _small_search(at, budget=200)
        at.multiselect(key="tune_variants").set_value(["few-shot examples (k 2 and 4)"]).run()
        at.button(key="tune_start").click().run()
        wait_for(at, lambda a: any(h.value == "Result" for h in a.subheader))
        winner = next(e.label for e in at.expander if e.label.startswith("The winner's template: ")).split(": ", 1)[1]
        assert "~k" in winner  # a few-shot variant, not the template to beat
        store = geval.Store(tmp_path / "store.sqlite")
        version = winner.rsplit("@", 1)[1]
        at.button(key="tune_save").click().run()
        assert any(s.value.startswith(f"Saved as {winner}") for s in at.success)
        assert store.template_comments()[version].startswith("tune winner on Natural (topicalchat_usr_sample, 5 test "
                                                             "groups: ")
        store.save_template(store.template(version), comment="mine: four examples")
        at.button(key="tune_save").click().run()
        assert store.template_comments()[version] == "mine: four examples"
        store.close()


def test_a_search_where_no_candidate_has_a_correlation_names_no_winner(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", distribution={1: 0.2, 2: 0.5, 3: 0.3})  # the same score for every response
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        _small_search(at)
        at.button(key="tune_start").click().run()
        wait_for(at, lambda a: any(h.value == "Result" for h in a.subheader))
        assert [e.value for e in at.error] == ["tune topicalchat_usr_sample, Natural: no candidate has a correlation on "
                                               "the tune groups (the note column says why): there is no winner, and the "
                                               "test part was not scored"]
        assert "Winner on the tune groups" not in texts(at) and not at.metric


def test_a_winner_chosen_on_one_group_is_said_to_be_mostly_luck(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", hashed=True)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        _small_search(at, budget=40)  # the template (and its argmax read) on one dialogue, and the test part
        at.button(key="tune_start").click().run()
        wait_for(at, lambda a: any(h.value == "Result" for h in a.subheader))
        assert (at.dataframe[0].value["groups"] == 1).all()
        # 5 test groups give no interval of the difference: not decided, said as a warning (it read "cannot be told
        # apart" where a winner at -.27 stood beside a start at .76)
        assert at.warning[-1].value.startswith("Not decided: 5 test groups give no interval of the difference (it "
                                               "needs 10)")
        assert not any("cannot be told apart" in i.value for i in at.info)
        assert [i.value for i in at.info if i.value.startswith("the winner was chosen on")] == [plain(
            "the winner was chosen on 1 tune group (6 items): so few that the choice is mostly luck; a budget of 48 "
            "lets every candidate see 3")]


def test_a_search_that_cannot_start_says_why(monkeypatch, tmp_path):
    """Before Start: a human aspect no template compares, or a budget below one round's calls (the search started,
    then stopped with the error, before)."""
    with OpenAIStub() as stub:
        stub.configure("logprobs", hashed=True)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        _small_search(at, human="Overall")  # no one-aspect template in prompts/ is compared with Overall
        assert at.button(key="tune_start").disabled  # said before Start, not by the search started
        assert at.error[0].value.startswith("no one-aspect template in the prompts folder named topicalchat-* is "
                                            "compared with 'Overall'")
        assert "response-overall" in at.error[0].value and "choose it under Template to beat" in at.error[0].value
        assert stub.count == 0

        _small_search(at, budget=30)  # one round on one tune group takes 6 calls, the test part 30: 36 at least
        assert not at.exception and at.button(key="tune_start").disabled
        assert at.error[0].value == ("A budget of 30 judge calls does not cover one round of the 2 candidates on one "
                                     "tune group and the test part: give at least 36, or try fewer variants.")
        _small_search(at, budget=40)  # a round, on fewer than three tune groups
        assert not at.error and not at.button(key="tune_start").disabled
        assert at.warning[0].value == ("With 40 judge calls the winner is chosen on fewer than 3 tune groups, mostly "
                                       "luck: a budget of 48 lets every candidate see 3.")
        at.button(key="tune_start").click().run()
        wait_for(at, lambda a: any(h.value == "Result" for h in a.subheader))
        assert not at.error and 0 < stub.count <= 40
        _small_search(at, human="Overall")  # settings no search can start with: the search run stays shown
        assert at.error[0].value.startswith("no one-aspect template") and at.button(key="tune_start").disabled
        assert any(h.value == "Result" for h in at.subheader)


def test_a_stopped_search_says_so_and_resumes_without_asking_twice(monkeypatch, tmp_path):
    with OpenAIStub() as stub:
        stub.configure("logprobs", hashed=True, delay=0.3)
        at = open_app(monkeypatch, tmp_path, PAGE)
        _use_stub(at, stub)
        _small_search(at)
        at.button(key="tune_start").click().run()
        wait_for(at, lambda a: stub.count >= 3 and any(b.key == "tune_stop" for b in a.button))
        at.button(key="tune_stop").click().run()
        wait_for(at, lambda a: any(h.value == "Result" for h in a.subheader))
        assert any("stopped before a candidate had a correlation" in w.value for w in at.warning), texts(at)
        stopped_after = stub.count
        assert stopped_after < 48
        reloaded = open_app(monkeypatch, tmp_path, PAGE, params=dict(at.query_params))  # the page's settings reset:
        _use_stub(reloaded, stub)  # every variant ticked, which the stopped search did not try
        assert reloaded.button(key="tune_start").label == "Resume" and reloaded.button(key="tune_new")
        reloaded.button(key="tune_start").click().run()
        wait_for(reloaded, lambda a: any(m.label == "Winner on the 5 test groups" for m in a.metric))
        assert stub.count == 48  # the same search as one run straight through: nothing asked twice, nothing added


def test_the_human_aspect_is_the_one_the_editors_template_is_compared_with(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path, PAGE)  # the editor holds topicalchat-naturalness
    assert at.selectbox(key="tune_aspect").value == "Natural"


def test_the_variants_chosen_stay_after_a_visit_to_another_page(monkeypatch, tmp_path):
    """After a trip to Prompts all three variants came back, the budget line asking for more than the search run."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    chosen = at.multiselect(key="tune_variants").options[:2]
    at.multiselect(key="tune_variants").set_value(chosen).run()
    at.switch_page("views/2_prompts.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception and at.multiselect(key="tune_variants").value == chosen


def test_a_saved_version_compared_with_the_aspect_is_offered_as_the_template_to_beat(monkeypatch, tmp_path):
    """Saved versions compared with the aspect could be beaten only once opened in the editor, and the page's
    error sent its user to a command-line flag."""
    at = open_app(monkeypatch, tmp_path, PAGE)  # the editor holds topicalchat-naturalness
    text = geval.Template.load("topicalchat-naturalness").text.replace("Evaluation Steps:", "Evaluation steps:")
    saved = geval.Template.parse(text, source="prompts/topicalchat-naturalness")
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_template(saved, comment="lower case")
    store.close()
    variant = geval.Template.parse(text.replace('name = "topicalchat-naturalness"',
                                                'name = "topicalchat-naturalness~k4-random"'), source="search")
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_template(variant)  # as a search's run keeps the variants it scored: not a version you saved
    store.close()
    at.run()
    assert f"Saved: {saved.label}" in at.radio(key="tune_beat").options
    assert f"Saved: {variant.label}" not in at.radio(key="tune_beat").options
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_template(variant, comment="tune winner on Natural")  # saved as the winner: then offered
    store.close()
    at.run()
    assert f"Saved: {variant.label}" in at.radio(key="tune_beat").options
    at.radio(key="tune_beat").set_value(f"Saved: {saved.label}").run()
    assert not at.exception and not at.error
    assert "--template" not in texts(at)


def test_the_templates_to_beat_name_the_prompts_file_and_tell_the_files_from_the_versions_you_saved(monkeypatch,
                                                                                                    tmp_path):
    """Once scored, the prompts/ file read 'Saved: topicalchat-naturalness@e91757c96132' beside 'The one-aspect
    template for it in prompts/', the same template twice, and the editor holding it a third time."""
    from tests.helpers import scripted

    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset("topicalchat_usr_sample", store=store)
    shipped, other = geval.Template.load("topicalchat-naturalness"), geval.Template.load("response-naturalness")
    for template in (shipped, other):
        geval.score(store, dataset.items[:3], template, scripted(), dataset.name)
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE)  # the editor holds topicalchat-naturalness
    at.selectbox(key="tune_aspect").set_value("Natural").run()
    assert at.radio(key="tune_beat").options == [f"The one-aspect template for it in prompts/: {shipped.label}",
                                                 f"In prompts/: {other.label}"]


def test_the_editors_template_is_the_one_to_beat_when_prompts_has_none_for_the_aspect(monkeypatch, tmp_path):
    """With the editor's own template for Overall (none in prompts/ named topicalchat-*), the page opened on a red
    'no one-aspect template in the prompts folder' with the editor's option beside it, not chosen."""
    at = open_app(monkeypatch, tmp_path, "views/2_prompts.py")
    text = geval.Template.load("topicalchat-naturalness").text
    mine = text.replace('name = "topicalchat-naturalness"', 'name = "my-overall"').replace(
        'name = "Naturalness"', 'name = "Overall"').replace('human = "Natural"', 'human = "Overall"').replace(
        "- Naturalness:", "- Overall:")
    at.text_area(key="template_text").set_value(mine).run()
    at.switch_page(PAGE).run()
    assert at.selectbox(key="tune_aspect").value == "Overall"
    assert at.radio(key="tune_beat").options == [f"The editor's: {geval.Template.parse(mine, source='x').label}"]
    assert not at.exception and not at.error and not at.button(key="tune_start").disabled


def test_a_search_made_elsewhere_is_listed_and_its_result_shown(monkeypatch, tmp_path):
    """A search run with `python -m geval tune` (or in an earlier server) left the page on its empty form: nothing
    said one was kept, or what it found."""
    from tests.helpers import scripted

    store = geval.Store(tmp_path / "store.sqlite")
    geval.load_dataset("topicalchat_usr_sample", store=store)
    found = geval.tune(store, "topicalchat_usr_sample", scripted(), "Natural", 70, others=[], few_shot=[],
                       ensemble=False)
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert not at.exception and not any(h.value == "Result" for h in at.subheader)
    kept = next(d.value for d in at.dataframe if "winner on the test groups" in d.value.columns)
    assert kept["winner (chosen on the tune groups)"].tolist() == [found.winner]
    at.selectbox(key="tune_kept").set_value(0).run()
    assert not at.exception and any(h.value == "Result" for h in at.subheader)
    assert f"Split (seeded, by group): {len(found.tune_groups)} groups to tune on" in texts(at)
    assert next(m.value for m in at.metric if m.label == f"Winner on the {len(found.test_groups)} test groups") == \
        geval.reporting.number(found.test["winner"])


def test_a_budget_too_small_for_every_candidate_to_see_enough_groups_is_set_right_with_one_click(monkeypatch,
                                                                                                  tmp_path):
    """The page opened warning "a budget of 420 lets every candidate see 3" and left the user to type it."""
    at = open_app(monkeypatch, tmp_path, PAGE)
    warning = next(w.value for w in at.warning if "mostly luck" in w.value)
    enough = int(warning.split("a budget of ")[1].split()[0])
    at.button(key="tune_budget_enough").click().run()
    assert at.number_input(key="tune_budget").value == enough
    assert not any("mostly luck" in w.value for w in at.warning)
    assert "tune_budget_enough" not in [button.key for button in at.button]
