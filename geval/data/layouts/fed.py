"""FED (Mehri & Eskenazi 2020): turn-level and dialogue-level records in one file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from geval.data.items import Item, Turn, make_item
from geval.data.reading import first_record_has, numeric_scores, require_list_of_dicts, text_field
from geval.errors import DatasetError

NAME = "fed"
#: Who gave which score: the file lists each item's scores without naming the annotators.
ANNOTATORS = ("position k of each list of scores is annotator #k (the file does not name them; a free-text "
              "value skipped keeps its position)")
#: The scale of each aspect as the file codes it (FED's paper asks 3 answers, or 2, or 5 for Overall, from 0).
SCALES = {**dict.fromkeys(("Interesting", "Engaging", "Specific", "Relevant", "Correct", "Semantically appropriate",
                           "Fluent", "Coherent", "Error recovery", "Diverse", "Depth", "Likeable", "Understanding",
                           "Flexible", "Informative", "Inquisitive"), (0, 2)),
          "Understandable": (0, 1), "Consistent": (0, 1), "Overall": (0, 4)}


def detect(data: object) -> bool:
    """A list of {context, [response], system, annotations} records."""
    return first_record_has(data, {"context", "annotations"})


def parse_turn(line: str) -> Turn:
    """'User: hi' -> Turn('User', 'hi'); a line with no known speaker keeps an empty one."""
    speaker, sep, text = line.partition(":")
    if sep and speaker.strip() in {"User", "System"}:
        return Turn(speaker.strip(), text.strip())
    return Turn("", line.strip())


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter]:
    """Records with a response are turn level; the rest are whole dialogues.

    A turn-level item joins the group of the dialogue whose context it begins.
    """
    records = require_list_of_dicts(path, data, {"context", "annotations"})
    skipped: Counter = Counter()
    dialogues: list[tuple[str, str]] = []  # (context text, group id)
    pending = []
    for index, record in enumerate(records):
        where = f"record {index}"
        context = text_field(path, record, "context", where)
        annotations = record["annotations"]
        if not isinstance(annotations, dict):
            raise DatasetError(f"{path}: {where} field 'annotations' should be an object")
        rated = {a: numeric_scores(v, skipped, "non-numeric human scores (e.g. 'N/A')") for a, v in annotations.items()}
        level = "turn" if "response" in record else "dialogue"
        response = parse_turn(text_field(path, record, "response", where)).text if level == "turn" else ""
        if level == "dialogue":
            dialogues.append((context, f"dlg-{len(dialogues):03d}"))
        pending.append((index, level, context, response, str(record.get("system", "")), rated))
    items = []
    for index, level, context, response, system, rated in pending:
        group = next((g for text, g in dialogues if text.startswith(context)), f"rec-{index:03d}")
        turns = [parse_turn(line) for line in context.split("\n") if line.strip()]
        items.append(
            make_item(name, level, turns, response, "", system, group,
                      {a: scores for a, (scores, _) in rated.items() if scores}, {a: who for a, (_, who) in rated.items()},
                      source_id=str(index))
        )
    return items, skipped
