"""A file of pairs (CSV or JSONL): two responses to one context per row, and which one people prefer.

    context, response_a, response_b, model_a, model_b, preference        (CSV: one annotator)
    {"context": [...], "response_a": "...", "response_b": "...", "preference": {"ann1": "A", "ann2": "tie"}}

`response_a` and `response_b` are required (their columns name the layout); `context` (text, one
'Speaker: text' line per turn, or a list of turns), `model_a` / `model_b`, `grounding` (or `fact`),
`group` (or `question_id`: what the rows of one question share; default: rows with the same context),
`id` are optional. Preferences: `preference` holds one label, a list (annotators by position) or
{annotator: label}; or one column per annotator, `preference:NAME`. A label is A, B or tie (or
model_a, model_b, draw ...: `geval.data.pairs.SPELLINGS`); an empty one is no label. A row with a
side missing, the same response twice or an unknown label stops the load with one line naming its
line; nothing is stored."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from geval.data.items import Item, Pair
from geval.data.layouts.table import _turns, shared_groups
from geval.data.pairs import ASPECT, PREFERENCES, pair_item
from geval.data.reading import first_record_has, loads, text_field
from geval.errors import DatasetError

NAME = "pairs"
#: The load is told each record's line in the file, to name it in errors.
READS_LINES = True
#: Each optional role and the columns that may hold it, first found wins.
COLUMNS = {"context": ("context", "conversation", "question", "prompt"), "system_a": ("model_a", "system_a"),
           "system_b": ("model_b", "system_b"), "grounding": ("grounding", "fact", "document"),
           "group": ("group", "question_id", "group_id"), "id": ("id", "pair_id")}
PREFERENCE = "preference"


def detect(data: object) -> bool:
    """A list of records with response_a and response_b."""
    return first_record_has(data, {"response_a", "response_b"})


def load(path: Path, data: object, name: str, lines: list[int] | None = None
         ) -> tuple[list[Item], Counter, dict[str, tuple[str, ...]]]:
    """One pair per record, checked as it is read (`geval.data.pairs.pair_item`); rows of the same
    context in one group when the file names none. Returns the items, what was skipped and the
    preference's categories."""
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a list of pairs")
    items = []
    grouped = False
    for index, record in enumerate(data):
        where = f"{path}:{lines[index]}" if lines else f"{path}: record {index}"
        if not isinstance(record, dict):
            raise DatasetError(f"{where}: not an object with named columns")
        found = {role: next((column for column in columns if column in record), "") for role, columns in
                 COLUMNS.items()}
        value = {role: text_field(path, record, column, where).strip() if column else ""
                 for role, column in found.items()}
        pair = Pair(text_field(path, record, "response_a", where).strip(),
                    text_field(path, record, "response_b", where).strip(), value["system_a"], value["system_b"],
                    question=value["group"])
        context = _turns(record[found["context"]], where) if found["context"] and record[found["context"]] else []
        grouped = grouped or bool(value["group"])
        items.append(pair_item(name, where, pair, context, value["grounding"], value["group"] or f"row-{index:05d}",
                               _preferences(record, where), source_id=value["id"]))
    return (items if grouped else shared_groups(items)), Counter(), {ASPECT: PREFERENCES}


def _preferences(record: dict, where: str) -> dict[str, object]:
    """Each annotator's label in a record: `preference` (a label, a list, or {annotator: label}), or
    the columns `preference:NAME`."""
    named = {key.split(":", 1)[1].strip(): value for key, value in record.items()
             if key.lower().startswith(PREFERENCE + ":")}
    value = record.get(PREFERENCE)
    if isinstance(value, str) and value.strip().startswith(("[", "{")):
        try:
            value = loads(value)
        except ValueError:
            raise DatasetError(f"{where}: preference {value[:40]!r} is neither a label nor a JSON list or object") \
                from None
    if isinstance(value, dict):
        named.update({str(k): v for k, v in value.items()})
    elif isinstance(value, list):
        named.update({f"#{n}": v for n, v in enumerate(value, 1)})
    elif value is not None:
        named["#1"] = value
    return named
