"""A first template for an aspect people scored that no template judges (`Template.draft`): on their scale,
pass/fail words asked as 0/1, shown with what every item of the aspect fills, and compared with them once
scored; `Template.unjudged` says which aspects want one; `geval templates draft` prints one."""

from __future__ import annotations

import json

import pytest

import geval
from tests.helpers import run_cli, scripted


def news(tmp_path, rows: int = 12, **columns) -> geval.Dataset:
    """Summaries of articles labeled faithful yes/no (the yes ones say "true") and rated 1-5 for quality, plus
    `columns` ({name: [value per row]})."""
    path = tmp_path / "news.jsonl"
    path.write_text("".join(json.dumps({"id": f"s{k}", "article": f"Article {k} reports a fact.",
                                        "summary": f"Summary {k} is {'true' if k % 2 else 'made up'}.",
                                        "faithful": ["no", "yes"][k % 2], "quality": 1 + k % 5,
                                        **{name: values[k] for name, values in columns.items()}}) + "\n"
                            for k in range(rows)))
    mapping = ["id=id", "grounding=article", "response=summary", "level=summary", "score:faithful=faithful",
               "score:quality=quality", *(f"score:{name}={name}" for name in columns)]
    return geval.load_dataset(path, mapping=mapping)


def test_a_pass_fail_aspect_is_drafted_on_0_1_and_its_scores_are_compared_with_the_people(tmp_path):
    dataset = news(tmp_path)
    assert geval.Template.unjudged(dataset, geval.Template.known()) == ["faithful", "quality"]
    draft = geval.Template.draft(dataset, "faithful")
    aspect = draft.aspects[0]
    assert (aspect.name, aspect.min, aspect.max, aspect.human, draft.level) == ("faithful", 0, 1, "faithful", "summary")
    assert "1 (yes) if it does, 0 (no) if it does not" in draft.criteria and draft.fits(dataset.items)
    prompt = draft.prompts(dataset.items[1])["faithful"]
    assert "Source Text:\nArticle 1 reports a fact." in prompt and "Summary:\nSummary 1 is true." in prompt
    assert prompt.endswith("- faithful:")
    assert geval.Template.unjudged(dataset, [draft]) == ["quality"]

    def reads(prompt: str, asked) -> dict[int, float]:  # a judge that reads the summary: P(1) high where it is true
        return {0: 0.1, 1: 0.9} if "is true." in prompt.split("Summary:")[1] else {0: 0.8, 1: 0.2}

    store = geval.Store(tmp_path / "s.sqlite")
    store.save_dataset(dataset)
    geval.score(store, dataset.items, draft, scripted(reads), dataset.name)
    table = geval.agree(store, dataset.name)
    row = table[(table["aspect"] == "faithful") & (table["metric"] == "accuracy")].iloc[0]
    assert (row["human"], row["value"], row["n"]) == ("faithful", 1.0, 12)


def test_the_digit_of_a_pass_is_the_index_people_s_pass_is_read_as(tmp_path):
    """Categories read from elsewhere in another order (a labels file's yes first): the criteria follow the index."""
    dataset = news(tmp_path)
    dataset.categories["faithful"] = ("yes", "no")
    assert "0 (yes) if it does, 1 (no) if it does not" in geval.Template.draft(dataset, "faithful").criteria


def test_a_scale_beyond_one_digit_is_asked_on_1_5_and_more_than_two_categories_are_refused(tmp_path):
    dataset = news(tmp_path, grade=[10 * k for k in range(12)], tone=[k % 3 for k in range(12)])
    wide = geval.Template.draft(dataset, "grade")
    assert (wide.aspects[0].min, wide.aspects[0].max) == (1, 5)
    assert "(0-110; a judge answers one digit, so it is asked on 1-5 and read on 0-110)" in wide.text
    dataset.categories["tone"] = ("angry", "calm", "sad")  # as read from a folder of annotations
    with pytest.raises(geval.GevalError, match="tone is labeled with the categories angry, calm, sad; a judge asked "
                                               "by a prompt answers on a scale of digits"):
        geval.Template.draft(dataset, "tone")


def test_a_draft_shows_only_what_every_item_fills_and_a_sample_s_unjudged_aspect(tmp_path):
    """A file whose replies have a conversation before them on odd rows only: the draft shows none (a prompt
    would fail on the even rows)."""
    path = tmp_path / "replies.csv"
    path.write_text("before,reply,ok\n" + "".join(f"{'hello' if k % 2 else ''},reply {k},{k % 3}\n" for k in range(9)))
    dataset = geval.load_dataset(path, mapping=["context=before", "response=reply", "score:ok=ok"])
    draft = geval.Template.draft(dataset, "ok")
    assert draft.task == "You will be given one response." and draft.placeholders == ["response"]
    assert "1. Read the response." in draft.text and (draft.aspects[0].min, draft.aspects[0].max) == (0, 2)
    sample = geval.load_dataset("topicalchat_usr_sample")  # USR's Understandable (0-1): no template of ours
    assert geval.Template.unjudged(sample, geval.Template.known()) == ["Understandable"]
    turn = geval.Template.draft(sample, "Understandable")
    assert turn.placeholders == ["context", "fact", "response"] and turn.fits(sample.items)
    assert "1. Read the conversation, the fact and the response." in turn.text and "\nFact:\n{{fact}}" in turn.text
    personas = geval.load_dataset("personachat_usr_sample")  # its grounding shown as what it is
    assert geval.Template.draft(personas, "Understandable").placeholders == ["context", "persona", "response"]


def test_the_cli_prints_a_draft_that_parses_and_names_the_aspects_it_has(tmp_path):
    news(tmp_path)
    args = ["templates", "draft", str(tmp_path / "news.jsonl"), "FAITHFUL", "--map", "id=id", "--map",
            "grounding=article", "--map", "response=summary", "--map", "level=summary", "--map",
            "score:faithful=faithful", "--store", str(tmp_path / "none.sqlite")]
    printed = run_cli(*args)
    assert printed.returncode == 0, printed.stderr
    assert geval.Template.parse(printed.stdout).aspects[0].human == "faithful"
    assert not (tmp_path / "none.sqlite").exists()  # a command that only prints makes no store
    wrong = run_cli(*args[:3], "Nope", *args[4:])
    assert wrong.returncode == 2
    assert "news has no human aspect 'Nope' in people's scores or labels; it has faithful" in wrong.stderr


def test_an_aspect_only_labeled_here_is_offered_and_drafted_on_the_scale_declared_for_the_labels(tmp_path):
    """Label's "Aspects I name": quality is the people's, Helpful only labeled (on 1-5, given 2-4); a label of
    Quality is the people's aspect, not one more."""
    dataset = news(tmp_path)
    store = geval.Store(tmp_path / "s.sqlite")
    store.save_dataset(dataset)
    for k, item in enumerate(dataset.items[:6]):
        store.save_label(item.id, "Helpful", 2 + k % 3)
        store.save_label(item.id, "Quality", 3)
    store.declare_scales(dataset.name, {"Helpful": (1, 5)})
    labeled = store.dataset(dataset.name, side="you")
    assert geval.Template.unjudged(dataset, geval.Template.known(), labeled) == ["faithful", "quality", "Helpful"]
    draft = geval.Template.draft(labeled, "Helpful")
    assert (draft.aspects[0].min, draft.aspects[0].max, draft.aspects[0].human) == (1, 5, "Helpful")
    assert geval.Template.unjudged(dataset, [draft], labeled) == ["faithful", "quality"]
    printed = run_cli("templates", "draft", dataset.name, "helpful", "--store", str(tmp_path / "s.sqlite"))
    assert printed.returncode == 0, printed.stderr
    assert geval.Template.parse(printed.stdout).text == draft.text
    wrong = run_cli("templates", "draft", dataset.name, "Nope", "--store", str(tmp_path / "s.sqlite"))
    assert "no human aspect 'Nope' in people's scores or labels; it has faithful, quality, Helpful" in wrong.stderr
    misspelled = run_cli("templates", "draft", "nws", "Helpful", "--store", str(tmp_path / "s.sqlite"))
    assert misspelled.returncode == 2 and "or dataset in " in misspelled.stderr and "(news)" in misspelled.stderr
