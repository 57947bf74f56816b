"""Property-based tests (hypothesis) of every dataset loader and of template parsing and
rendering: any input gives items (or a template, or a prompt) or a GevalError whose message is
one line naming the file (and the line or field where there is one) — never another exception.
A dataset that fails to load leaves nothing in the store, and saving a dataset is all or nothing.

Set HYPOTHESIS_PROFILE=thorough to try 20x more examples (minutes instead of seconds).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import tempfile
from pathlib import Path

import pytest
from helpers import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import geval
from geval.data.dataset import Dataset
from geval.data.items import PLACEHOLDERS, Turn, make_item
from geval.data.layouts.table import ColumnMapping
from geval.errors import DatasetError, TemplateError
from geval.judging.templates import load_template, parse_template

settings.register_profile("default-fuzz", max_examples=120, deadline=None, derandomize=bool(os.environ.get("CI")),
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "default-fuzz"))
FOLDER = Path(tempfile.mkdtemp(prefix="geval-fuzz-"))

# --- what every outcome must look like -------------------------------------------------------


def one_line_naming(message: str, name: str) -> None:
    """The message a user sees: one line, not empty, naming `name` (a file or a source)."""
    assert message.strip(), "an empty error message"
    assert "\n" not in message and "\r" not in message, f"a multi-line message: {message!r}"
    assert name in message, f"the message does not name {name}: {message!r}"


def load_or_error(path: Path, mapping: ColumnMapping | None = None) -> geval.Dataset | None:
    """Load `path` into a store; on a GevalError check its message and that the store holds
    nothing. Any other exception escapes and fails the test."""
    store = geval.Store(":memory:")
    try:
        dataset = geval.load_dataset(path, mapping=mapping, store=store)
    except geval.GevalError as exc:
        one_line_naming(str(exc), str(path))
        assert store.db["items"].count == 0 and store.dataset_names() == []
        return None
    assert dataset.items, "a dataset with no items must be an error"
    ids = [item.id for item in dataset.items]
    assert len(set(ids)) == len(ids), "two items share an id"
    assert [item.id for item in store.items(dataset.name)] == ids  # whatever loads is stored (text SQLite takes)
    assert store.items(dataset.name) == dataset.items
    store.close()
    return dataset


def write(name: str, content: str | bytes) -> Path:
    path = FOLDER / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    return path


# --- strategies --------------------------------------------------------------------------------

#: Field names the layouts look for, so random records often come close to a real layout.
KEYS = ["context", "responses", "fact", "annotations", "response", "system", "doc_id", "system_id", "source",
        "system_output", "scores", "dialog_id", "turns", "score", "contexts", "models", "references", "model",
        "speaker", "utterance", "Natural", "Overall"]
ODD_NUMBERS = ["N/A", "nan", "NaN", "inf", "-inf", "1e999", "-7", "3", "2.5", "1_0", " 4 ", "", "0x10", "9" * 5000]
scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
           | st.sampled_from(ODD_NUMBERS) | st.integers(-10**60, 10**60))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5),
                      max_leaves=25)
records = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)
json_shapes = st.lists(records, max_size=6) | records | values


def usr_record(response: str = "a reply", natural: object = 2) -> dict:
    return {"context": "hi\nhello", "fact": "a fact",
            "responses": [{"response": response, "model": "m1", "Natural": natural}]}


# --- every layout, random JSON shapes ------------------------------------------------------------

@FUZZ
@given(data=json_shapes, suffix=st.sampled_from([".json", ".jsonl"]))
def test_random_json_shapes_give_items_or_one_line_errors(data, suffix):
    if suffix == ".jsonl" and isinstance(data, list):
        text = "\n".join(json.dumps(record) for record in data)
    else:
        text = json.dumps(data)
    load_or_error(write(f"shape{suffix}", text))


@FUZZ
@given(layout=st.sampled_from(["usr", "fed", "summeval", "dstc9", "seed001"]), data=st.data())
def test_near_miss_records_of_each_layout(layout, data):
    """Records with exactly a layout's detection fields, each holding a random value."""
    fields = {
        "usr": ["context", "responses", "fact"], "fed": ["context", "annotations", "response", "system"],
        "summeval": ["doc_id", "system_id", "source", "system_output", "scores"],
        "dstc9": ["contexts", "responses", "scores", "models", "references"],
        "seed001": ["dialog_id", "turns", "score", "system_output", "system_id"],
    }[layout]
    if layout == "dstc9":
        record = {key: data.draw(st.lists(values, min_size=1, max_size=3)) for key in fields}
        content = json.dumps(record)
    else:
        rows = data.draw(st.lists(st.fixed_dictionaries({key: values for key in fields}), min_size=1, max_size=4))
        content = json.dumps(rows)
    load_or_error(write(f"{layout}.json", content))


# --- raw bytes and encodings -------------------------------------------------------------------

@FUZZ
@given(content=st.binary(max_size=400), suffix=st.sampled_from([".json", ".jsonl", ".csv", ".txt", ""]))
def test_random_bytes_give_one_line_errors_or_items(content, suffix):
    path = write(f"bytes{suffix}", content)
    load_or_error(path)
    load_or_error(path, ColumnMapping(response="response", scores={"Overall": "overall"}))


@FUZZ
@given(text=st.text(alphabet=st.characters(max_codepoint=0x2FFF), min_size=1, max_size=40),
       encoding=st.sampled_from(["utf-16", "utf-16-le", "latin-1", "cp1252", "utf-8-sig", "utf-32"]))
def test_files_in_other_encodings(text, encoding):
    rows = [{"response": text, "overall": 2}]
    try:
        content = json.dumps(rows, ensure_ascii=False).encode(encoding)
    except UnicodeEncodeError:
        return  # not representable in this encoding
    dataset = load_or_error(write("encoded.json", content),
                            ColumnMapping(response="response", scores={"Overall": "overall"}))
    if encoding == "utf-8-sig":
        assert dataset is not None and dataset.items[0].response == text.strip()
    if dataset is not None:  # only when the bytes happen to be valid UTF-8 too, and then read as such
        assert dataset.items[0].human == {"Overall": (2.0,)}


@pytest.mark.parametrize("encoding, message", [
    ("utf-16", ":1: not UTF-8 text (byte 0); re-save the file as UTF-8"),
    ("latin-1", ":1: not UTF-8 text (byte 18); re-save the file as UTF-8"),
])
def test_a_non_utf8_file_names_file_line_and_byte(tmp_path, encoding, message):
    path = tmp_path / "caf.json"
    path.write_bytes('[{"response": "café", "overall": 2}]'.encode(encoding))
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=ColumnMapping(response="response", scores={"O": "overall"}))
    assert str(error.value) == f"{path}{message}"


# --- tables through a column mapping: missing and extra columns, odd scores, duplicates -----------

MAPPING = ColumnMapping(response="response", scores={"Overall": "overall"}, context="context",
                              system="system", group="group")
COLUMNS = ["response", "overall", "context", "system", "group", "extra"]
cells = (st.text(max_size=20) | st.sampled_from(ODD_NUMBERS)
         | st.sampled_from(["[1, 2]", '[1, "a"]', "[[1]]", "[", "User: hi\nSystem: yo", '["a", {"speaker": 1}]',
                            "[" * 3000 + "]" * 3000, '"\\ud800"', '["\\udc00"]', "x" * 5000]))


@FUZZ
@given(header=st.lists(st.sampled_from(COLUMNS) | st.text(max_size=6), min_size=1, max_size=6),
       rows=st.lists(st.lists(cells, max_size=8), max_size=6),
       suffix=st.sampled_from([".csv", ".json", ".jsonl"]))
def test_tables_with_missing_and_extra_columns_and_odd_scores(header, rows, suffix):
    if suffix == ".csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(header)
        writer.writerows(rows)
        content = buffer.getvalue()
    else:
        table = [dict(zip(header, row)) for row in rows]
        content = json.dumps(table) if suffix == ".json" else "\n".join(json.dumps(row) for row in table)
    dataset = load_or_error(write(f"table{suffix}", content), MAPPING)
    if dataset is not None:
        assert len(dataset.items) == len([row for row in rows if row or suffix != ".csv"])  # CSV skips blank lines
        for item in dataset.items:  # human scores are finite numbers, never text, NaN or infinity
            assert all(isinstance(s, float) and abs(s) < float("inf") for s in item.human.get("Overall", ()))


@FUZZ
@given(rows=st.lists(st.sampled_from(["same reply", "other reply"]), min_size=1, max_size=12))
def test_duplicate_rows_get_distinct_ids_and_are_all_kept(rows):
    content = "response,overall\n" + "".join(f"{row},2\n" for row in rows)
    dataset = load_or_error(write("dupes.csv", content), ColumnMapping(response="response",
                                                                            scores={"Overall": "overall"}))
    assert dataset is not None and len(dataset.items) == len(rows)
    base = {item.id.split("-")[0] for item in dataset.items}
    assert len(base) == len(set(rows))  # the same text, the same id stem; '-2', '-3' … set them apart


@pytest.mark.parametrize("value, expected", [
    ("-7", (-7.0,)), ("11", (11.0,)), ("1e6", (1e6,)), ("[1, 5, 99]", (1.0, 5.0, 99.0)), ("", ()),
])
def test_out_of_range_human_scores_are_kept_as_given(tmp_path, value, expected):
    """A loader does not know the scale: numbers are kept as written (the Agreement page
    compares on each side's own scale); only what is not a finite number is refused."""
    path = tmp_path / "range.csv"
    path.write_text(f'response,overall\nhi,"{value}"\nyo,2\n')  # a second row scored: an empty score loads
    dataset = geval.load_dataset(path, mapping=ColumnMapping(response="response", scores={"O": "overall"}))
    assert dataset.items[0].human.get("O", ()) == expected


@pytest.mark.parametrize("value", ["nan", "inf", "1e999", "great", "[1, \"x\"]", "9" * 5000])
def test_non_numeric_human_scores_in_a_table_name_line_and_column(tmp_path, value):
    path = tmp_path / "scores.csv"
    path.write_text(f'response,overall\nhi,2\nyo,"{value.replace(chr(34), chr(34) * 2)}"\n')
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=ColumnMapping(response="response", scores={"O": "overall"}))
    message = str(error.value)
    assert message.startswith(f"{path}:3: column 'overall' value ")
    assert message.endswith("is not a number") and len(message) < len(str(path)) + 160


def test_non_numeric_human_scores_in_a_known_layout_are_skipped_and_counted(tmp_path):
    path = tmp_path / "usr.json"
    path.write_text(json.dumps([usr_record("a", ["N/A", 2, "nan", 1e999]), usr_record("b", "9" * 5000)]))
    dataset = geval.load_dataset(path)
    assert [item.human for item in dataset.items] == [{"Natural": (2.0,)}, {}]
    assert dataset.skipped == {"non-numeric human scores": 4}


# --- the bugs these tests found, pinned down ---------------------------------------------------

CONTEXT = ColumnMapping(response="response", scores={"O": "overall"}, context="context")


@pytest.mark.parametrize("name, content, mapping, message", [
    ("deep.json", "[" * 50_000 + "]" * 50_000, None,
     "{path}:1:1: invalid JSON (nested too deeply to read); correct it there and load the file again"),
    ("deep.jsonl", '{"a": 1}\n' + "[" * 50_000 + "]" * 50_000, CONTEXT,
     "{path}:2: invalid JSON line (nested too deeply to read); correct or remove that line and load the file "
     "again"),
    ("surrogate.json", '[\n{"context": "hi", "responses": [{"response": "\\ud800"}]}\n]', None,
     "{path}:2: the escape \\ud800 is half of a UTF-16 pair, not a character; remove it or re-save the file "
     "from a tool that writes valid UTF-8"),
    ("surrogate.jsonl", '{"response": "ok", "overall": 1}\n{"response": "\\udc00 x", "overall": 1}', CONTEXT,
     "{path}:2: the escape \\udc00 is half of a UTF-16 pair, not a character; remove it or re-save the file "
     "from a tool that writes valid UTF-8"),
    ("surrogate.csv", 'response,overall,context\nok,1,"[""\\ud800""]"\n', CONTEXT,
     "{path}: a value holds half of a UTF-16 pair (e.g. \\ud800), which is not text"),
])
def test_inputs_that_used_to_raise_other_exceptions(tmp_path, name, content, mapping, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=mapping)
    assert str(error.value) == message.format(path=path)


def test_a_paired_surrogate_escape_is_a_character(tmp_path):
    path = tmp_path / "emoji.json"
    path.write_text(json.dumps([usr_record("smile \U0001F600")]))  # written as \ud83d\ude00
    assert "\\ud83d\\ude00" in path.read_text()
    assert geval.load_dataset(path).items[0].response == "smile \U0001F600"


def test_huge_integers_and_huge_fields_load(tmp_path):
    big = "x" * 300_000  # longer than the csv module's default field limit (131072)
    csv_path = tmp_path / "big.csv"
    csv_path.write_text(f"response,overall,id\n{big},2,{'9' * 5000}\n")
    [item] = geval.load_dataset(csv_path, mapping=ColumnMapping(response="response", scores={"O": "overall"},
                                                                      group="id")).items
    assert item.response == big and item.group == "9" * 5000
    json_path = tmp_path / "big.json"  # an id of 5000 digits: more than Python turns into an int
    json_path.write_text('[{"dialog_id": ' + "7" * 5000 + f', "turns": [], "score": 3, "system_output": "{big}"}}]')
    [item] = geval.load_dataset(json_path).items
    assert item.group == "7" * 5000 and item.response == big


def test_a_line_separator_inside_a_jsonl_string_is_not_a_line_break(tmp_path):
    path = tmp_path / "u2028.jsonl"
    path.write_text(json.dumps({"response": "one\u2028two", "overall": 2}, ensure_ascii=False) + "\n")
    dataset = geval.load_dataset(path, mapping=ColumnMapping(response="response", scores={"O": "overall"}))
    assert dataset.items[0].response == "one\u2028two"


def test_a_file_name_too_long_for_the_system_is_a_dataset_error(tmp_path):
    path = tmp_path / ("a" * 300 + ".json")
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path)
    assert str(error.value) == f"{path}: cannot be read (File name too long)"


def test_a_column_name_with_a_line_break_is_quoted_in_the_message(tmp_path):
    path = tmp_path / "cols.csv"
    path.write_text('"re\nply",overall\nhi,2\n')
    with pytest.raises(DatasetError) as error:
        geval.load_dataset(path, mapping=ColumnMapping(response="reply", scores={"O": "overall"}))
    assert str(error.value) == (f"{path}:1: the header has no column 'reply' (mapped to response); "
                                "its columns are: 're\\nply', overall")


# --- nothing is stored for a failed load; a save is all or nothing ------------------------------

def test_a_dataset_that_fails_to_load_leaves_the_store_unchanged(tmp_path):
    path = tmp_path / "half.jsonl"
    path.write_text('{"response": "fine", "overall": 1}\n{"response": "bad", "overall": "great"}\n')
    store = geval.Store(tmp_path / "store.sqlite")
    with pytest.raises(DatasetError, match=":2: column 'overall' value 'great' is not a number"):
        geval.load_dataset(path, mapping=ColumnMapping(response="response", scores={"O": "overall"}),
                           store=store)
    assert store.db["items"].count == 0 and store.dataset_names() == []
    run = run_cli("score", str(path), "--map", "response=response", "--map", "score:O=overall", "-t",
                  "topicalchat-naturalness", "--dry-run", "--store", str(tmp_path / "cli.sqlite"))
    assert run.returncode == 2 and "is not a number" in run.stderr
    cli_store = geval.Store(tmp_path / "cli.sqlite")
    assert cli_store.db["items"].count == 0 and cli_store.dataset_names() == []  # the CLI's path stores nothing
    cli_store.close()
    store.close()


def test_saving_a_dataset_is_all_or_nothing(tmp_path):
    """The datasets row is written after the items: make it fail, and no item may stay."""
    store = geval.Store(tmp_path / "store.sqlite")
    store.db.execute("CREATE TRIGGER refuse BEFORE INSERT ON datasets BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    items = [make_item("mine", "turn", [Turn("A", "hi")], f"reply {i}") for i in range(50)]
    with pytest.raises(sqlite3.IntegrityError, match="disk full"):
        store.save_dataset(Dataset("mine", "mine.csv", "table", items))
    assert store.db["items"].count == 0 and store.dataset_names() == []
    assert not store.db.conn.in_transaction
    store.db.execute("DROP TRIGGER refuse")
    store.save_dataset(Dataset("mine", "mine.csv", "table", items))
    assert len(store.items("mine")) == 50
    store.close()


# --- templates ---------------------------------------------------------------------------------

HEADER_KEYS = ["name", "task", "criteria", "steps", "aspects", "level", "dataset", "colour"]
toml_values = st.sampled_from(['"t"', '""', "1", "true", "[1, 2]", '"auto"', '"""multi\nline"""', "{a = 1}",
                               "1979-05-27", '"a\\nb"', "[" * 600 + "]" * 600, "= broken", '"\\u0000"'])
aspect_lines = st.lists(st.tuples(st.sampled_from(['"Naturalness"', '"A"', '""', '"a\\nb"', "3", '"Naturalness"']),
                                  st.sampled_from(["0", "1", "3", "-1", "1.5", '"1"', "true"]),
                                  st.sampled_from(["1", "3", "5", "9", "10", "99999999999999999999"])),
                        max_size=3)
placeholders = st.sampled_from(["{{context}}", "{{response}}", "{{ Response }}", "{{steps}}", "{{fact}}",
                                "{{dialogue}}", "{{summary}}", "{{nope}}", "{{\nresponse}}", "{{\nnope\n}}", "{{",
                                "}}", "{{}}", "{{{response}}}", "text", "\n", "+++", "- Naturalness:", "\n- A:"])


@st.composite
def template_texts(draw) -> str:
    lines = [draw(st.sampled_from(["+++", "+++ ", "++", ""]))]
    for key in draw(st.lists(st.sampled_from(HEADER_KEYS), max_size=4, unique=True)):
        if key != "aspects":
            lines.append(f"{key} = {draw(toml_values)}")
    for name, low, high in draw(aspect_lines):
        lines += ["[[aspects]]", f"name = {name}", f"min = {low}", f"max = {high}"]
    lines.append(draw(st.sampled_from(["+++", "", "+++\n\n"])))
    lines.append("".join(draw(st.lists(placeholders | st.text(max_size=10), max_size=10))))
    return "\n".join(lines)


items_for_templates = st.builds(
    make_item, dataset=st.just("fuzz"), level=st.sampled_from(["turn", "dialogue", "summary"]),
    context=st.lists(st.builds(Turn, st.text(max_size=5), st.text(max_size=20)), max_size=3),
    response=st.text(max_size=30), grounding=st.text(max_size=30),
)


def parse_or_error(text: str, source: str = "fuzz.txt") -> geval.Template | None:
    try:
        return parse_template(text, source=source)
    except TemplateError as exc:
        one_line_naming(str(exc), source)
        return None


@FUZZ
@given(text=st.text(max_size=300))
def test_any_text_parses_or_gives_a_one_line_template_error(text):
    parse_or_error(text)


@FUZZ
@given(text=template_texts(), item=items_for_templates, steps=st.none() | st.text(max_size=30))
def test_templates_parse_and_render_or_give_one_line_errors(text, item, steps):
    template = parse_or_error(text)
    if template is None:
        return
    assert template.aspects and all(a.name.strip() and 0 <= a.min < a.max <= 9 for a in template.aspects)
    assert set(template.placeholders) <= set(PLACEHOLDERS) | {"steps"}
    try:
        prompt = template.render(item, steps)
    except TemplateError as exc:
        one_line_naming(str(exc), "fuzz.txt")
        return
    if "response" in template.placeholders:
        assert item.response in prompt


@FUZZ
@given(content=st.binary(max_size=300))
def test_template_files_of_any_bytes(content):
    path = write("template.txt", content)
    try:
        load_template(path)
    except TemplateError as exc:
        one_line_naming(str(exc), str(path))


@pytest.mark.parametrize("body, message", [
    ("Say {{\nnope}} now", "fuzz.txt:8: unknown placeholder '{{\\nnope}}'; known: "),
    ("line 8\n{{ re\nsponse }}", "fuzz.txt:9: unknown placeholder '{{ re\\nsponse }}'; known: "),
    ("line 8\nJudge {{response now", "fuzz.txt:9: a placeholder's braces are not closed ('{{response now\\n{{response}}'); "
                                      "write it as {{name}}, e.g. {{response}}"),  # it was taken as text: one prompt
    ("Answer: {{response}} }}", "fuzz.txt:8: a placeholder's braces are not closed ('}}\\n{{response}}')"),
    # one brace each side: it was sent as written, every prompt without the text it named, and the page said "parses"
    ("line 8\nSource: { Document }", "fuzz.txt:9: { Document } has single braces, so it would be sent as written, "
                                      "not replaced by the document; write it as {{document}}"),
])
def test_a_placeholder_broken_over_two_lines_is_checked_too(body, message):
    header = '+++\nname = "t"\n[[aspects]]\nname = "A"\nmin = 1\nmax = 3\n+++\n'
    with pytest.raises(TemplateError) as error:
        parse_template(header + body + "\n{{response}}", source="fuzz.txt")
    assert str(error.value).startswith(message)


@pytest.mark.parametrize("header, message", [
    ('name = "t"\n"a\\nb" = 1', "fuzz.txt: unknown header key(s) 'a\\nb'; known: "),
    ('name = "t"\n[[aspects]]\nname = ""\nmin = 1\nmax = 3', "fuzz.txt: aspect 1 name '' should be one line of text"),
    ('name = "t"\n[[aspects]]\nname = "A\\nB"\nmin = 1\nmax = 3',
     "fuzz.txt: aspect 1 name 'A\\nB' should be one line of text"),
    ('name = "t"\n[[aspects]]\nname = 3\nmin = 1\nmax = 3', "fuzz.txt: aspect 1 name 3 should be one line of text"),
    ('name = "t"\nx = ' + "[" * 5000 + "]" * 5000, "fuzz.txt: bad header: nested too deeply to read"),
    ('name = "t"\nbad = \nok = 1', "fuzz.txt: bad header: Invalid value (at line 3, column 7)"),
])
def test_template_header_errors_are_one_line_with_file_lines(header, message):
    with pytest.raises(TemplateError) as error:
        parse_template("+++\n" + header + "\n+++\n{{response}}", source="fuzz.txt")
    assert str(error.value).startswith(message)


def test_a_template_file_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes(b'+++\nname = "caf\xe9"\n+++\n')
    with pytest.raises(TemplateError) as error:
        load_template(path)
    assert str(error.value) == f"{path}:2: not UTF-8 text (byte 15); re-save the file as UTF-8"
