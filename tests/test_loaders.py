"""geval.loaders: the public datasets, the table layout, file errors, and `geval datasets show`."""

from __future__ import annotations

import json
import math
import sys
from functools import cache
from pathlib import Path

import pytest
from helpers import REPO, run_cli

import geval
from geval.data.items import Turn
from geval.data.layouts.dstc9 import write_seed001
from geval.data.layouts.table import ColumnMapping
from geval.data.reading import as_number
from geval.errors import DatasetError

SAMPLE = REPO / "data" / "topicalchat_usr_sample.json"


@cache
def _load(path: Path) -> geval.Dataset:
    """Each shared file is parsed once per session for the count tests."""
    return geval.load_dataset(path)


# --- the public datasets ------------------------------------------------------------------

@pytest.mark.parametrize(
    "filename, layout, items, levels, groups, systems",
    [
        ("tc_usr_data.json", "usr", 360, {"turn": 360}, 60, 6),
        ("pc_usr_data.json", "usr", 300, {"turn": 300}, 60, 5),
        ("fed_data.json", "fed", 500, {"turn": 375, "dialogue": 125}, None, None),
        ("summeval.json", "summeval", 1600, {"summary": 1600}, 100, 16),
        ("dstc9_data.json", "dstc9", 2200, {"dialogue": 2200}, 2200, 11),
    ],
)
def test_shared_dataset_counts(shared_file, filename, layout, items, levels, groups, systems):
    dataset = _load(shared_file(filename))
    assert dataset.layout == layout
    assert len(dataset.items) == items
    assert {level: len(dataset.at_level(level)) for level in dataset.levels} == levels
    if groups is not None:
        assert len(dataset.groups) == groups
    if systems is not None:
        assert len(dataset.systems) == systems
    assert all(math.isfinite(s) for item in dataset.items for scores in item.human.values() for s in scores)


def test_topical_chat_items_hold_six_responses_per_context_with_three_annotators(tc_dataset):
    first_group = [item for item in tc_dataset.items if item.group == tc_dataset.groups[0]]
    assert len(first_group) == 6
    assert len({item.system for item in first_group}) == 6
    item = first_group[0]
    assert item.grounding and item.context and item.response
    assert len(item.human["Natural"]) == 3
    assert 1 <= item.human_mean("Natural") <= 3
    assert set(tc_dataset.aspects) == {"Understandable", "Natural", "Maintains Context", "Engaging",
                                       "Uses Knowledge", "Overall"}


def test_topical_chat_turns_without_a_fact_say_so_in_words(tc_dataset):
    from geval.data.layouts.usr import NO_FACT_TEXT

    groundings = [item.grounding for item in tc_dataset.items]
    assert groundings.count(NO_FACT_TEXT) == 8 * 6  # 8 contexts marked "_nofact" in the file, 6 responses each
    assert not any("_nofact" in g for g in groundings)


def test_fed_skips_free_text_scores_and_counts_them(shared_file):
    path = shared_file("fed_data.json")
    dataset = _load(path)
    raw = json.loads(path.read_text("utf-8"))
    values = [v for record in raw for vs in record["annotations"].values() for v in (vs if isinstance(vs, list) else [vs])]
    numeric = [v for v in values if as_number(v) is not None]
    free_text = [v for v in values if as_number(v) is None]
    assert any(str(v).startswith("N/A") for v in free_text)
    assert sum(dataset.skipped.values()) == len(free_text) > 0
    kept = [s for item in dataset.items for scores in item.human.values() for s in scores]
    assert len(kept) == len(numeric)
    assert sorted(kept) == sorted(float(v) for v in numeric)
    assert "skipped" in dataset.summary() and str(len(free_text)) in dataset.summary()


def test_fed_turns_join_the_group_of_their_dialogue(shared_file):
    dataset = _load(shared_file("fed_data.json"))
    dialogue_groups = {item.group for item in dataset.at_level("dialogue")}
    assert len(dialogue_groups) == 125
    joined = [item for item in dataset.at_level("turn") if item.group in dialogue_groups]
    assert len(joined) > 300  # most turn-level contexts begin a dialogue of the file


@pytest.mark.parametrize("filename", ["tc_usr_data.json", "pc_usr_data.json", "fed_data.json", "summeval.json",
                                      "dstc9_data.json"])
def test_item_ids_are_unique_and_stable_across_loads(shared_file, filename):
    path = shared_file(filename)
    first, second = geval.load_dataset(path), geval.load_dataset(path)
    ids = [item.id for item in first.items]
    assert len(set(ids)) == len(ids)
    assert ids == [item.id for item in second.items]


def test_ids_depend_on_content_not_on_position(tmp_path):
    records = [{"reply": "hi", "overall": 1}, {"reply": "yo", "overall": 2}]
    mapping = ColumnMapping(response="reply", scores={"Overall": "overall"}, group=None)
    forward = tmp_path / "t.json"
    backward = tmp_path / "t2.json"
    forward.write_text(json.dumps(records))
    backward.write_text(json.dumps(records[::-1]))
    ids_f = {i.response: i.id for i in geval.load_dataset(forward, mapping=mapping, name="t").items}
    ids_b = {i.response: i.id for i in geval.load_dataset(backward, mapping=mapping, name="t").items}
    assert ids_f == ids_b


def test_exact_duplicates_get_numbered_ids(tmp_path):
    path = tmp_path / "dupes.json"
    path.write_text(json.dumps([{"reply": "same", "overall": 1}] * 3))
    mapping = ColumnMapping(response="reply", scores={"Overall": "overall"}, group="reply")
    ids = [item.id for item in geval.load_dataset(path, mapping=mapping).items]
    assert ids[1] == ids[0] + "-2" and ids[2] == ids[0] + "-3"


def test_dstc9_seed001_conversion_round_trips(shared_file, tmp_path):
    original = _load(shared_file("dstc9_data.json"))
    dial, response = write_seed001(original.items, tmp_path / "seed001")
    assert dial.name == "transformed_data_dial.json" and response.name == "transformed_data_response.json"
    for path in (dial, response):
        converted = geval.load_dataset(path)
        assert converted.layout == "seed001"
        assert len(converted.items) == len(original.items) == 2200
        assert [i.response for i in converted.items] == [i.response for i in original.items]
        assert [i.human_mean("overall") for i in converted.items] == [i.human_mean("overall") for i in original.items]
        assert [i.system for i in converted.items] == [i.system for i in original.items]
        assert [i.group for i in converted.items] == [i.group for i in original.items]
        assert [i.context for i in converted.items] == [i.context for i in original.items]
    records = json.loads(dial.read_text("utf-8"))
    assert set(records[0]) == {"dialog_id", "turns", "score", "system_id", "system_output"}
    assert records[0]["turns"][-1] == {"speaker": "system", "utterance": records[0]["system_output"]}


# --- the table layout ---------------------------------------------------------------------

MAPPING = ColumnMapping(
    response="reply", scores={"Overall": "overall", "Natural": "natural"},
    context="history", grounding="fact", system="model", group="dialog",
)


def _check_table(dataset: geval.Dataset) -> None:
    assert dataset.layout == "table"
    assert len(dataset.items) == 3
    first = dataset.items[0]
    assert first.context == (Turn("A", "hi there"), Turn("B", "hello, how are you?"))
    assert first.response == "fine, thanks"
    assert first.grounding == "greetings are polite"
    assert first.system == "m1" and first.group == "d1"
    assert first.human == {"Overall": (4.0, 5.0, 3.0), "Natural": (3.0,)}
    assert dataset.items[1].human == {"Overall": (2.0,)}  # its empty Natural is skipped, not an error
    assert dataset.skipped == {"empty human scores": 1}
    assert dataset.systems == ["m1", "m2"] and dataset.groups == ["d1", "d2"]


ROWS = [
    {"history": ["A: hi there", "B: hello, how are you?"], "reply": "fine, thanks", "fact": "greetings are polite",
     "model": "m1", "dialog": "d1", "overall": [4, 5, 3], "natural": 3},
    {"history": [{"speaker": "A", "text": "what now"}], "reply": "lunch", "fact": "", "model": "m2", "dialog": "d1",
     "overall": 2, "natural": ""},
    {"history": "A: bye", "reply": "see you", "fact": "", "model": "m1", "dialog": "d2", "overall": "1.5",
     "natural": 2},
]


def test_table_csv_with_context_as_a_json_list(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(
        "history,reply,fact,model,dialog,overall,natural\n"
        '"[""A: hi there"", ""B: hello, how are you?""]",fine\u002c thanks,greetings are polite,m1,d1,"[4, 5, 3]",3\n'
        '"[{""speaker"": ""A"", ""text"": ""what now""}]",lunch,,m2,d1,2,\n'
        "A: bye,see you,,m1,d2,1.5,2\n".replace("fine\u002c thanks", '"fine, thanks"'),
        "utf-8",
    )
    _check_table(geval.load_dataset(path, mapping=MAPPING))


@pytest.mark.parametrize("last", ['"a ""quoted"" word",2\n', '"two\nlines",2\n', '"closed at the end",2',
                                  'a "quote inside",2\n', '"",2\n'])
def test_a_csv_whose_quotes_all_close_loads_its_last_row_whole(tmp_path, last):
    path = tmp_path / "quotes.csv"
    path.write_text(f"reply,overall\nhi,1\n{last}", "utf-8")
    dataset = geval.load_dataset(path, mapping=REPLY)
    assert len(dataset.items) == 2 and dataset.items[1].human == {"Overall": (2.0,)}


def test_table_json(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(ROWS))
    _check_table(geval.load_dataset(path, mapping=MAPPING))


def test_table_jsonl_with_context_as_a_json_string(tmp_path):
    rows = [dict(row) for row in ROWS]
    rows[0]["history"] = json.dumps(rows[0]["history"])  # a JSON list inside a string
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n")
    _check_table(geval.load_dataset(path, mapping=MAPPING))


def test_json_file_holding_json_lines_is_read_as_lines(tmp_path):
    path = tmp_path / "lines.json"
    path.write_text("\n".join(json.dumps(row) for row in ROWS))
    _check_table(geval.load_dataset(path, mapping=MAPPING))


#: UniEval's and G-EVAL's meta-evaluation layout: the human scores in a nested object.
NESTED = [{"src": "A: hi\nB: hello", "context": "a fact", "sys": f"s{i % 3}", "doc_id": f"d{i // 3}",
           "system_output": f"reply {i}", "scores": {"naturalness": 1 + i % 3, "coherence": 2.5}} for i in range(9)]


def test_a_dotted_column_reads_a_nested_object(tmp_path):
    path = tmp_path / "unieval.json"
    path.write_text(json.dumps(NESTED))
    dataset = geval.load_dataset(path, mapping=["response=system_output", "context=src", "grounding=context",
                                                "system=sys", "group=doc_id", "score:naturalness=scores.naturalness"])
    assert [item.human for item in dataset.items[:2]] == [{"naturalness": (1.0,)}, {"naturalness": (2.0,)}]
    assert dataset.items[0].context == (Turn("A", "hi"), Turn("B", "hello"))
    assert dataset.items[0].grounding == "a fact" and dataset.groups == ["d0", "d1", "d2"]
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=["response=system_output", "score:x=scores.natural"])
    assert str(error.value) == (f"{path}: row 0: column 'scores.natural' (mapped to score:x) not found; columns are: "
                                "src, context, sys, doc_id, system_output, scores.naturalness, scores.coherence")


def test_a_column_named_with_a_dot_is_read_as_named(tmp_path):
    path = tmp_path / "flat.csv"
    path.write_text("reply,scores.naturalness\nhello,3\n")
    assert geval.load_dataset(path, mapping=["response=reply", "score:n=scores.naturalness"]).items[0].human == \
        {"n": (3.0,)}


def test_the_preview_flattens_nested_records_and_suggests_a_mapping(tmp_path):
    path = tmp_path / "unieval.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in NESTED))
    preview = geval.Dataset.table_preview(path)
    assert preview.columns == ["src", "context", "sys", "doc_id", "system_output", "scores.naturalness",
                               "scores.coherence"]
    assert len(preview.rows) == 5 and preview.rows[1]["scores.naturalness"] == "2"
    assert preview.suggested == {"response": "system_output", "context": "context", "system": "sys",
                                 "group": "doc_id"}  # not the first column; "src" is left to the user
    assert preview.scores == ["scores.naturalness", "scores.coherence"]
    assert preview.mapping("system_output", preview.scores, "turn", context="src") == [
        "response=system_output", "level=turn", "score:naturalness=scores.naturalness",
        "score:coherence=scores.coherence", "context=src"]
    assert geval.Dataset.table_preview(SAMPLE) is None  # a known layout needs no mapping


def test_columns_of_one_aspect_are_its_annotators_named_by_their_columns(tmp_path):
    """score:quality=rater1 and score:quality=rater2 kept rater2 alone, without a word: each column is now an
    annotator of the aspect (an empty cell: one who did not score that row), pass/fail words across them too."""
    path = tmp_path / "raters.csv"
    path.write_text("reply,rater1,rater2,ok1,ok2\nhi,4,5,pass,fail\nyo,2,,fail,fail\nhey,3,3,pass,pass\n")
    dataset = geval.load_dataset(path, mapping=["response=reply", "score:quality=rater1", "score:quality=rater2",
                                                "score:ok=ok1", "score:ok=ok2"])
    first, second = dataset.items[:2]
    assert first.human == {"quality": (4.0, 5.0), "ok": (1.0, 0.0)}
    assert first.annotators == {"quality": ("rater1", "rater2"), "ok": ("ok1", "ok2")}
    assert second.human["quality"] == (2.0,) and second.annotators["quality"] == ("rater1",)
    assert dataset.categories == {"ok": ("fail", "pass")} and "4 annotators by name" in dataset.summary()
    single = geval.load_dataset(path, mapping=["response=reply", "score:quality=rater1", "score:quality=rater2",
                                               "score:ok=ok1"])  # an aspect of one column: no annotator "#1"
    assert single.summary().endswith("; 2 annotators by name: rater1, rater2; elsewhere one human score per item "
                                     "(one annotator's, or a mean: the file does not say)")


def test_a_score_column_with_a_typo_is_named_by_its_line_where_the_file_has_lines_else_by_its_record(tmp_path):
    rows = [{"reply": f"reply {i}", "overall": "x4" if i == 6 else 1 + i % 5} for i in range(12)]
    lines = tmp_path / "typo.jsonl"
    lines.write_text("\n\n".join(json.dumps(row) for row in rows))  # a blank line between records
    preview = geval.Dataset.table_preview(lines)
    assert preview.almost_scores == {"overall": (13, "x4", "numbers")} and preview.where(13, "typo.jsonl") == "typo.jsonl:13"
    whole = tmp_path / "typo.json"
    whole.write_text(json.dumps(rows))
    preview = geval.Dataset.table_preview(whole)
    assert preview.almost_scores == {"overall": (7, "x4", "numbers")} and preview.where(7, "typo.json") == "record 7 of typo.json"
    short = tmp_path / "short.csv"  # two rows: a column named for scores says so too, one of other names does not
    short.write_text("reply,score,mood\nhi,3,1\nyo,great,calm\n")
    assert geval.Dataset.table_preview(short).almost_scores == {"score": (3, "great", "numbers")}
    verdicts = tmp_path / "verdicts.csv"  # pass/fail words but one: it vanished from the score columns unsaid
    verdicts.write_text("reply,verdict\n" + "".join(f"r{i},{'maybe' if i == 4 else 'pass fail'.split()[i % 2]}\n"
                                                    for i in range(8)))
    assert geval.Dataset.table_preview(verdicts).almost_scores == {"verdict": (6, "maybe", "fail/pass words")}


@pytest.mark.parametrize("header, row, response, scores", [
    ("id,turn,context,reply,overall,engaging", "7,2,A: hi,hello,4,3", "reply", ["overall", "engaging"]),
    ("hypothesis,reference,human", 'a cat,the cat,"[3, 4]"', "hypothesis", ["human"]),
    ("text,label,score", "nice,x,0.5", "text", ["score"]),  # no column named like a response: the first text one
    ("model_output,a.x,b.x", "yes,1,2", "model_output", ["a.x", "b.x"]),
    ("context,turn_text,rating", "A: hi,hello,2", "turn_text", ["rating"]),  # not the column named context
])
def test_suggested_response_and_scores(tmp_path, header, row, response, scores):
    path = tmp_path / "mine.csv"
    path.write_text(f"{header}\n{row}\n")
    preview = geval.Dataset.table_preview(path)
    assert (preview.suggested["response"], preview.scores) == (response, scores)
    if scores == ["a.x", "b.x"]:  # two scores of one last name keep their whole path as the aspect
        assert preview.mapping(response, scores)[1:] == ["score:a.x=a.x", "score:b.x=b.x"]


@pytest.mark.parametrize("header, row, suggested", [
    ("id,context,rating", "a1,hello there,3", {"context": "context", "id": "id"}),  # the trial's noresp.csv
    ("uid,history,persona,score", "u1,A: hi,i like cats,2", {"context": "history", "grounding": "persona", "id": "uid"}),
])
def test_the_id_or_another_roles_column_is_never_suggested_as_the_response(tmp_path, header, row, suggested):
    """A CSV of id, context and rating loaded with its id as the text judged ("a1", "a2"): the Data page
    preselected `id` as both the response and the id, and the CLI suggested `--map response=id ... --map id=id`."""
    path = tmp_path / "noresp.csv"
    path.write_text(f"{header}\n{row}\n")
    preview = geval.Dataset.table_preview(path)
    assert preview.suggested == suggested
    assert preview.unsuggested == ("no column looks like the text judged (one named response, reply, output, "
                                   "summary …, or a text column not named for another role)")
    assert preview.suggestion()[0] == "response=COLUMN"
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path)
    assert str(error.value).endswith(f"--map id={suggested['id']}; no column looks like the text judged (one named "
                                     "response, reply, output, summary …, or a text column not named for another "
                                     "role): name it in response=COLUMN")
    assert "response=id" not in str(error.value) and "response=uid" not in str(error.value)


# --- the level a table is read at -------------------------------------------------------------

# (the file's header, a row, the suggested mapping's level, what its reason names)
INFERRED_LEVELS = [
    ("article,summary", "The cat sat on the mat.,A cat sat.", "summary", "a source document column ('article')"),
    ("doc_id,source,system_output", "d1,The cat sat.,A cat sat.", "summary", "a source document column ('source')"),
    ("document,summary,consistency", "The cat sat.,A cat sat.,4", "summary", "a source document column ('document')"),
    ("summary,fluency", "A cat sat.,3", "summary", "the text judged ('summary') is named as a summary"),
    ("context,response", "A: hi,hello", "turn", "a context column ('context')"),
    ("context,fact,response,overall", "A: hi,a fact,hello,4", "turn", "a context column ('context')"),
    ("dialogue,overall", '"User: hi\nSystem: hello",3', "dialogue", "named as a whole dialogue"),
    ("reply,overall", "hello,3", "turn", "no context, document or dialogue column"),
]


@pytest.mark.parametrize("header, row, level, why", INFERRED_LEVELS, ids=[c[0] for c in INFERRED_LEVELS])
def test_the_level_is_inferred_from_the_columns_and_said(tmp_path, header, row, level, why):
    path = tmp_path / "mine.csv"
    path.write_text(f"{header}\n{row}\n")
    preview = geval.Dataset.table_preview(path)
    roles = {role: preview.suggested.get(role) for role in ("response", "context", "grounding")}
    inferred, reason = preview.level_for(**roles)
    assert inferred == level and why in reason
    mapping = preview.mapping(roles.pop("response"), preview.scores, **roles)  # no level: the loader infers it
    dataset = geval.load_dataset(path, mapping=mapping)
    assert dataset.levels == [level]
    assert dataset.notes == [f"level {level}, inferred: {reason} (to read it otherwise: the Data page's "
                             "Level; CLI: --map level=turn, dialogue, summary or COLUMN)"]
    assert [item.level for item in preview.items(mapping)] == [level]  # what the Data page offers templates for


def test_a_summary_file_mapped_by_its_columns_only_fits_the_summeval_templates(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("article,summary\nThe cat sat on the mat. It was warm.,A cat sat.\nDogs bark.,Dogs are loud.\n")
    dataset = geval.load_dataset(path, mapping=["response=summary", "grounding=article"])
    assert dataset.levels == ["summary"] and dataset.items[0].grounding_kind == "document"
    consistency = geval.Template.load("summeval-consistency")
    assert consistency.fits(dataset.items) and "{{document}}" not in consistency.render(dataset.items[0])


def test_level_takes_a_level_as_the_value_even_beside_a_column_of_that_name(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("article,summary\nThe cat sat.,A cat sat.\n")
    dataset = geval.load_dataset(path, mapping=["response=summary", "grounding=article", "level=turn"])
    assert dataset.levels == ["turn"]
    assert dataset.notes == ["level turn, the value given, for every row"]
    dataset = geval.load_dataset(path, mapping=["response=summary", "grounding=article", "level=summary"])
    assert dataset.notes == ["level summary, the value given, for every row; the column 'summary' is not read as "
                             "the level"]


def test_level_names_a_column_that_holds_each_rows_level(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text('kind,text,context\nturn,hello,A: hi\nDialogue,"A: hi\nB: hello",\n')
    dataset = geval.load_dataset(path, mapping=["response=text", "level=kind"])
    assert dataset.notes == ["level read from column 'kind' on each row"]
    turn, whole = dataset.items
    assert (turn.level, turn.response) == ("turn", "hello")
    # a whole dialogue with no context column: its turns are the dialogue, and there is no separate response
    assert (whole.level, whole.response, whole.context) == ("dialogue", "", (Turn("A", "hi"), Turn("B", "hello")))
    path.write_text("kind,text\nturn,hello\nparagraph,hi\n")
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=["response=text", "level=kind"])
    assert str(error.value) == (f"{path}:3: column 'kind' (the level) holds 'paragraph'; each row's level should be "
                                "one of turn, dialogue, summary")
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=["response=text", "level=sort"])
    assert str(error.value) == ("level 'sort' is neither a level (turn, dialogue, summary) nor a column of the file; "
                                "columns are: kind, text")


def test_a_load_that_would_leave_stored_items_out_is_refused_unless_it_replaces(tmp_path, store):
    path = tmp_path / "mine.csv"
    path.write_text("article,summary\nThe cat sat.,A cat sat.\nDogs bark.,Dogs are loud.\n")
    first = geval.load_dataset(path, mapping=["response=summary", "grounding=article"], store=store)
    store.save_label(first.items[0].id, "Consistency", 4)
    again = geval.load_dataset(path, mapping=["response=summary", "grounding=article"], store=store, replace=False)
    assert [i.id for i in again.items] == [i.id for i in first.items]  # the same items: nothing to ask
    as_turns = geval.load_dataset(path, mapping=["response=summary", "grounding=article", "level=turn"])
    assert store.replaced_by(as_turns) == {"items": 2, "judgments": 0, "labels": 1}
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=["response=summary", "grounding=article", "level=turn"], store=store,
                           replace=False)
    assert str(error.value) == (
        f"{path}: the store already holds a dataset named mine with 2 items this file does not have (0 judgments "
        "and 1 labels on them, which would be left out); load the file under another name, or replace the stored "
        "one (CLI: --name NAME or --replace)")
    assert store.dataset("mine").levels == ["summary"]  # left as it was
    geval.load_dataset(path, mapping=["response=summary", "grounding=article", "level=turn"], store=store,
                       name="mine-as-turns", replace=False)
    assert store.dataset_names() == ["mine", "mine-as-turns"]
    geval.load_dataset(path, mapping=["response=summary", "grounding=article", "level=turn"], store=store)
    assert store.dataset("mine").levels == ["turn"]


def test_a_stored_dataset_opens_by_name_and_is_listed_as_yours(tmp_path, store):
    path = tmp_path / "unieval.json"
    path.write_text(json.dumps(NESTED))
    loaded = geval.load_dataset(path, mapping=["response=system_output", "score:n=scores.naturalness"], store=store)
    path.unlink()  # an upload need not stay on disk: the store has it
    again = geval.load_dataset("unieval", store=store)
    assert (again.name, again.layout, again.items, again.path) == ("unieval", "table", loaded.items, str(path))
    sources = geval.Dataset.sources(store)
    assert sources["unieval"] == "yours, in the store"
    assert sources["topicalchat_usr_sample"] == "sample, data/"
    with pytest.raises(DatasetError, match=r"^unieval: no such file or known dataset \(dstc9_sample, .*\)$"):
        geval.load_dataset("unieval")  # without the store it is a name of nothing (no store read: none named empty)
    with pytest.raises(DatasetError, match=r"^nosuch: no such file, known dataset .* or dataset in the store "
                                           r"\(unieval\)$"):
        geval.load_dataset("nosuch", store=store)


def test_shared_datasets_are_labelled_full(shared_data):
    sources = geval.Dataset.sources()
    assert sources["tc_usr_data"] == "full, ../shared/data" and sources["fed_sample"] == "sample, data/"


def test_column_mapping_from_cli_pairs():
    mapping = ColumnMapping.parse(["response=reply", "score:Overall=overall", "context=history", "level=dialogue"])
    assert mapping.response == "reply" and mapping.context == "history" and mapping.level == "dialogue"
    assert ColumnMapping.parse(["response=reply"]).level is None  # inferred when the file is read
    assert mapping.scores == {"Overall": "overall"}
    assert mapping.columns() == [("response", "reply"), ("context", "history"), ("score:Overall", "overall")]


@pytest.mark.parametrize(
    "pairs, message",
    [
        (["response"], "mapping 'response' should be ROLE=COLUMN, e.g. response=reply or score:Overall=overall"),
        (["reply=x", "score:O=o"], "mapping role 'reply' is unknown; use response, context, grounding, system, group, "
                                   "id, level, score:ASPECT, scale:ASPECT"),
        (["score:O=o"], "the mapping needs response=COLUMN (the text being judged)"),
        (["response=r", "score:O=o", "scale:O=5-1"], "the scale of O, '5-1', is not one: give the lowest and "
                                                     "highest score, e.g. 1-5"),  # named as the Data page's field
        (["response=r", "scale:O=1-5"], "mapping 'scale:O=...' names no score column; map it first (score:O=COLUMN)"),
    ],
)
def test_column_mapping_errors(pairs, message):
    with pytest.raises(DatasetError) as error:
        ColumnMapping.parse(pairs)
    assert str(error.value) == message


# --- file errors ----------------------------------------------------------------------------

REPLY = ColumnMapping(response="reply", scores={"Overall": "overall"})

# (file name, content, mapping, expected message with {path} for the file's path)
BAD_FILES = [
    ("missing.json", None, None, "{path}: no such file"),
    ("empty.json", "  \n\n", None, "{path}: the file is empty"),
    ("broken.json", '[\n{"a": 1},\n{"a": 2,,}\n]', None,
     "{path}:3:9: invalid JSON (Expecting property name enclosed in double quotes); correct it there and load the "
     "file again"),
    ("broken.jsonl", '{"a": 1}\n{"a": 2}\n{oops}\n', None,
     "{path}:3: invalid JSON line (Expecting property name enclosed in double quotes); correct or remove that line "
     "and load the file again"),
    ("unclosed.jsonl", '{"a": 1}\n{"a": "two\n', None,  # the message read "(Unterminated string starting at)"
     "{path}:2: invalid JSON line (Unterminated string starting at column 7); correct or remove that line and load "
     "the file again"),
    ("latin1.csv", b"reply,overall\nhi,2\ncaf\xe9,3\n", None,
     "{path}:3: not UTF-8 text (byte 22); re-save the file as UTF-8"),
    ("unknown.json", '[{"question": "q", "answer": "a"}]', None,
     "{path}: unknown layout (known: usr, fed, summeval, dstc9, seed001, annotations, pairs); read it as your own table with "
     "a column mapping, e.g. --map response=answer --map context=question"),  # the Data page's suggestion (it took
    # the question for the text judged)
    ("cols.csv", "reply,overall\nhi,2\n", ColumnMapping(response="reply", scores={"Overall": "overal"}),
     "{path}:1: the header has no column 'overal' (mapped to score:Overall); its columns are: reply, overall"),
    ("score.csv", "reply,overall\nhi,2\nyo,great\n", REPLY,
     "{path}:3: column 'overall' value 'great' is not a number"),
    ("score.jsonl", '{"reply": "hi", "overall": 2}\n{"reply": "yo", "overall": [1, "x"]}\n', REPLY,
     "{path}:2: column 'overall' value 'x' is not a number"),
    ("wide.csv", "reply,overall\nhi,2\nyo,3,4\n", REPLY, "{path}:3: more fields than the header has columns"),
    ("narrow.csv", "reply,overall,system\nhi,2,s1\nyo,3\n", REPLY,
     "{path}:3: 2 fields where the header has 3 columns; give each row every column (an empty one as ,,)"),
    ("header.csv", "reply,overall\n", REPLY, "{path}: a header but no rows"),
    ("unclosed.csv", 'context,reply,model,overall\nd0,"hello there,4\nd1,s2,go away,1\n', REPLY,
     '{path}:2: unclosed quote (the field opened on line 2 runs to the end of the file); close it, or double a '
     'quote meant as text ("")'),
    ("unclosed-header.csv", '"reply,overall\nhi,2\n', REPLY,
     '{path}:1: unclosed quote (the field opened on line 1 runs to the end of the file); close it, or double a '
     'quote meant as text ("")'),
    ("runon.csv", 'context,reply,overall\n"A: hi there,hello,3\nB: fine,"good, thanks",4\n', REPLY,  # one record
     "{path}:3: a quoted field's closing quote is followed by text, not a comma (its record starts on line 2); "
     'write a quote meant as text twice ("") or close the field where it ends'),
    ("dupes.csv", "reply,reply\nhi,2\n", REPLY, "{path}:1: duplicate column names ['reply']"),
    ("usr.json", '[{"context": "hi", "responses": [{"text": "x"}]}]', None,
     "{path}: record 0 response 0 lacks field 'response'"),
    ("fed.json", '[{"context": "hi", "annotations": [1, 2]}]', None,
     "{path}: record 0 field 'annotations' should be an object"),
    ("dstc9.json", '{"contexts": [["a"]], "responses": ["b", "c"], "scores": [1], "models": ["m"]}', None,
     "{path}: the lists differ in length: {{'contexts': 1, 'responses': 2, 'scores': 1, 'models': 1}}"),
]


def _write_bad(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, "utf-8")
    return path


@pytest.mark.parametrize("name, content, mapping, message", BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_bad_files_raise_a_dataset_error_naming_file_and_line(tmp_path, name, content, mapping, message):
    path = _write_bad(tmp_path, name, content)
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=mapping)
    assert str(error.value) == message.format(path=path)


# (file name, content, mapping, skipped): files with no human score load; the user labels them
UNSCORED_FILES = [
    ("unscored.csv", "reply,overall\nhi,\nyo, \n", REPLY, {"empty human scores": 2}),
    ("no-score-column.csv", "reply,context\nhi,A: hello\nyo,A: hey\n", ColumnMapping(response="reply", scores={}),
     {}),
    ("unscored.json", '[{"context": "hi", "responses": [{"response": "x", "Natural": ["N/A", "nan"]}]}]', None,
     {"non-numeric human scores": 2}),
]


@pytest.mark.parametrize("name, content, mapping, skipped", UNSCORED_FILES, ids=[c[0] for c in UNSCORED_FILES])
def test_a_file_with_no_human_score_loads_and_counts_what_it_skipped(tmp_path, store, name, content, mapping,
                                                                     skipped):
    dataset = geval.load_dataset(_write_bad(tmp_path, name, content), mapping=mapping, store=store)
    assert dataset.items and not any(item.human for item in dataset.items)
    assert dict(dataset.skipped) == skipped
    assert store.dataset_names() == [dataset.name] and store.human_side(dataset.name) == "you"


@pytest.mark.parametrize("rows, read", [
    ("x1,hello,3\nx2,hi,2\n", True),
    ("x1,hello,3\nx1,hi,2\n", False),  # the same id twice: not the rows' own ids
])
def test_a_tables_own_id_column_is_read_unless_mapped_and_said(tmp_path, rows, read):
    """A mapping that names no id reads the file's column named `id` as each item's own id (labels and judge
    files name items by it), and the load says so; when that column repeats a value it says why it is not read."""
    path = tmp_path / "mine.csv"
    path.write_text("ID,reply,overall\n" + rows)
    dataset = geval.load_dataset(path, mapping=["response=reply", "score:Overall=overall"])
    assert [item.source_id for item in dataset.items] == (["x1", "x2"] if read else ["", ""])
    said = [note for note in dataset.notes if note.startswith("item ids: ")]
    assert said == ["item ids: the file's own, from its column 'ID' (labels and judge scores may name items by "
                    "them; to read another column: id=COLUMN)"] if read else \
        ["item ids: the column 'ID' is not read as the items' own ids, since it gives 'x1' to more than one row (to "
         "read another column: id=COLUMN)"]
    mapped = geval.load_dataset(path, mapping=["response=reply", "id=reply"])
    assert [item.source_id for item in mapped.items] == ["hello", "hi"] and not any(
        note.startswith("item ids: ") for note in mapped.notes)


def test_a_mapping_needs_no_score_column():
    assert ColumnMapping.parse(["response=r"]).scores == {}


def test_a_folder_without_annotations_is_not_a_dataset(tmp_path):
    with pytest.raises(DatasetError, match="a folder is read as annotations .* it has no human_annotations.json"):
        geval.load_dataset(tmp_path)


def _map_args(mapping: ColumnMapping | None) -> list[str]:
    if mapping is None:
        return []
    pairs = [f"{role}={column}" for role, column in mapping.columns()]
    return [arg for pair in pairs for arg in ("--map", pair)]


@pytest.mark.parametrize("name, content, mapping, message", BAD_FILES, ids=[case[0] for case in BAD_FILES])
def test_cli_datasets_show_prints_one_error_line_and_exits_2(tmp_path, name, content, mapping, message):
    path = _write_bad(tmp_path, name, content)
    result = run_cli("datasets", "show", str(path), *_map_args(mapping))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert name in lines[0]
    if content is not None:  # a missing file is reported by name resolution, with the known names
        assert lines[0] == "error: " + message.format(path=path)


def test_cli_datasets_show_prints_counts(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(ROWS))
    result = run_cli("datasets", "show", str(path), *_map_args(MAPPING))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("mine (table): 3 items (3 turn), 2 groups, 2 systems; skipped 1 empty human scores")
    assert "human aspects: Overall, Natural" in result.stdout


def test_cli_datasets_convert_writes_seed001_files(tmp_path, shared_file):
    result = run_cli("datasets", "convert", str(shared_file("dstc9_data.json")), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "(2200 dialogues)" in result.stdout
    assert len(json.loads((tmp_path / "transformed_data_response.json").read_text("utf-8"))) == 2200


def _grouped_csv(tmp_path: Path, header: str, rows: list[str]) -> Path:
    path = tmp_path / "grouped.csv"
    path.write_text(header + "\n" + "".join(row + "\n" for row in rows), "utf-8")
    return path


def _groups_notes(dataset: geval.Dataset) -> list[str]:
    return [note for note in dataset.notes if note.startswith("groups: ")]


def test_rows_of_a_shared_context_are_one_group_when_no_group_column_is_mapped(tmp_path):
    """The trial's CSV (3 dialogues, 4 responses to each, no group column) made 12 groups of one row each:
    the alternative annotator test then took the items as independent."""
    rows = [f'"A: question {c}\nB: hm?",answer {c}.{r},{1 + (c + r) % 5}' for c in range(3) for r in range(4)]
    dataset = geval.load_dataset(_grouped_csv(tmp_path, "context,reply,overall", rows),
                                 mapping=["response=reply", "context=context", "score:Overall=overall"])
    assert len(dataset.items) == 12 and len(dataset.groups) == 3
    assert [len({i.group for i in dataset.items if i.context[0].text == f"question {c}"}) for c in range(3)] == [1] * 3
    assert _groups_notes(dataset) == ["groups: 12 responses in 3 groups by their shared context; map group=COLUMN "
                                      "to set them"]
    ids = {item.response: item.id for item in dataset.items}  # the group is not part of an item's id
    again = geval.load_dataset(dataset.path, mapping=["response=reply", "context=context", "group=reply"])
    assert {item.response: item.id for item in again.items} == ids


def test_a_mapped_group_column_keeps_its_groups_and_says_nothing_of_them(tmp_path):
    rows = [f"A: question {c},answer {c}.{r},g{r},{1 + r}" for c in range(3) for r in range(4)]
    dataset = geval.load_dataset(_grouped_csv(tmp_path, "context,reply,dialog,overall", rows),
                                 mapping=["response=reply", "context=context", "group=dialog", "score:Overall=overall"])
    assert dataset.groups == ["g0", "g1", "g2", "g3"] and not _groups_notes(dataset)


def test_rows_without_a_context_stay_groups_of_their_own(tmp_path):
    rows = ["hello,3", "hello there,2", "bye,4"]
    dataset = geval.load_dataset(_grouped_csv(tmp_path, "reply,overall", rows),
                                 mapping=["response=reply", "score:Overall=overall"])
    assert len(dataset.groups) == len(dataset.items) == 3 and not _groups_notes(dataset)
    mixed = geval.load_dataset(_grouped_csv(tmp_path, "context,reply,overall",
                                            ["A: hi,hello,3", "A: hi,hey,2", ",alone,1", ",also alone,2"]),
                               mapping=["response=reply", "context=context", "score:Overall=overall"])
    assert len(mixed.groups) == 3 and _groups_notes(mixed) == [
        "groups: 2 responses in 1 group by their shared context (2 other rows each a group of its own); map "
        "group=COLUMN to set them"]


def test_summaries_of_the_same_document_are_one_group(tmp_path):
    rows = [f'"Document {d}: the council met.",summary {d}.{s},{1 + s}' for d in range(2) for s in range(3)]
    dataset = geval.load_dataset(_grouped_csv(tmp_path, "article,summary,overall", rows),
                                 mapping=["response=summary", "grounding=article", "score:Overall=overall"])
    assert dataset.levels == ["summary"] and len(dataset.groups) == 2
    assert {item.group for item in dataset.items if "Document 0" in item.grounding} == {dataset.groups[0]}
    assert _groups_notes(dataset) == ["groups: 6 summaries in 2 groups by their shared document; map group=COLUMN "
                                      "to set them"]


def test_the_bundled_samples_are_what_make_samples_cuts_from_the_shared_data(shared_data, tmp_path):
    """data/make_samples.py rebuilds every file of data/ (the judges' file too) byte for byte."""
    sys.path.insert(0, str(REPO / "data"))
    try:
        import make_samples
    finally:
        sys.path.remove(str(REPO / "data"))
    written = make_samples.build(shared_data, tmp_path)
    assert {path.relative_to(tmp_path).as_posix() for path in written} >= {"summeval_sample.json",
                                                                          "judges/summeval_sample_llms.json"}
    for path in written:
        assert path.read_bytes() == (REPO / "data" / path.relative_to(tmp_path)).read_bytes(), path.name


def test_a_score_outside_the_declared_scale_is_named_by_its_line_or_item(tmp_path):
    """"people's scores of helpful run 1-7, outside the 1-5 declared for it" named no line: the 7 was on line 4."""
    path = tmp_path / "mine.csv"
    path.write_text("id,response,helpful\na,x,2\nb,\"y\nz\",5\nc,w,7\nd,v,9\n", "utf-8")
    with pytest.raises(DatasetError) as refused:
        geval.load_dataset(path, mapping=["response=response", "score:helpful=helpful"], scales=["helpful=1-5"])
    assert str(refused.value) == (f"{path}: people's scores of helpful run from 2 to 9, outside the 1-5 declared for "
                                  "it (line 5 has 7, line 6 has 9); correct those scores, or declare the scale people "
                                  "were asked on")  # it named the first alone, and told one who had just declared it to
    usr = tmp_path / "usr.json"  # a layout of its own: the item, by its id
    usr.write_text(json.dumps([{"context": "hi", "fact": "", "responses": [
        {"model": "m", "response": "yo", "Overall": [1, 6, 2]}]}]), "utf-8")
    with pytest.raises(DatasetError, match=r"outside the 1-5 declared for it \(item \S+ has 6\)"):
        geval.load_dataset(usr, scales=["Overall=1-5"])


def test_a_scale_declared_for_an_aspect_the_file_does_not_score_is_refused(tmp_path):
    """`--scale nosuch=1-5` was stored and listed among the people's scales; `--scale 1-1` on a file of pass/fail
    words said to name the aspect ("the data names no aspect yet") where 1-1 is no scale."""
    from geval.data.declared import parse_scales

    path = tmp_path / "mine.csv"
    path.write_text("id,response,quality\na,x,2\nb,y,5\n", "utf-8")
    with pytest.raises(DatasetError) as refused:
        geval.load_dataset(path, mapping=["response=response", "score:quality=quality"], scales=["nosuch=1-5"])
    assert str(refused.value) == (f"{path}: a scale is declared for nosuch, which people did not score in it (they "
                                  "scored quality); name one of those")
    assert geval.load_dataset(path, mapping=["response=response", "score:quality=quality"],
                              scales=["Quality=1-5"]).scales == {"quality": (1.0, 5.0)}  # any case
    with pytest.raises(geval.GevalError, match="scale '1-1': give the lowest and highest score"):
        parse_scales(["1-1"], [])


def test_turns_on_one_line_are_noted_with_what_to_do(tmp_path):
    """A context column holding "A: hi B: hello" on one line was read as one turn of A, shown so on Inspect, with
    nothing said: the load notes it (turns are read from lines of their own), and leaves a speaker's colon alone."""
    import csv

    def loaded(contexts: list[str]) -> geval.Dataset:
        path = tmp_path / "inline.csv"
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["context", "response", "q"])
            writer.writeheader()
            writer.writerows({"context": c, "response": f"reply {k}", "q": 1 + k % 3} for k, c in enumerate(contexts))
        return geval.load_dataset(path, mapping=["context=context", "response=response", "score:q=q"])

    contexts = ["A: I went hiking at the lake. B: Oh nice, how was it?", "A: hello there\nB: hi",
                "User: my plan: go home System: ok", "A: I like Python: it is fun"]
    dataset = loaded(contexts)
    assert [len(item.context) for item in dataset.items] == [1, 2, 1, 1]
    [note] = [n for n in dataset.notes if "several turns" in n]
    assert note.startswith("the context of 2 items is one line that seems to hold several turns (the first: 'A: I "
                           "went hiking at the lake. B: Oh nice, how was it?'): put each turn on a line of its own")
    assert not [n for n in loaded(["A: hi", *contexts[1:2], "User: ok", contexts[3]]).notes if "several turns" in n]
