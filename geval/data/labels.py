"""The user's own labels: a score an annotator (by default "you") gave an item on an aspect,
read from and written to CSV or JSON lines keyed by item id, and set beside (or instead of) a
dataset's human scores: the human side every analysis reads.

The human side of a dataset is one of HUMAN_SIDES:

- "people": the dataset's own scores (the annotators' mean); labels are left out;
- "you": the labels alone, each annotator's under their name (items without a label have no human score);
- "both": the labels as more annotators, under their names, beside the dataset's, on the items that have a label.

With no side chosen it is "people" when an item has a human score of its own, else "you".
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from geval.data.declared import NOT_A_SCORE, category_index, two_categories
from geval.data.items import Item
from geval.data.reading import as_number, read_records
from geval.errors import LabelError, shown

DEFAULT_ANNOTATOR = "you"
HUMAN_SIDES = {"people": "the people: the dataset's own scores (each item's mean, or its majority label)",
               "you": "your labels",
               "both": "you as one more annotator (on the items you labeled)"}
#: Whom the judge is compared with, by the human side in force (`chosen_side`): in a title ("correlation with
#: people"), and on an aspect labeled with categories, the label each item is read by (the majority of its labels).
COMPARED_WITH = {"people": "people", "you": "your labels", "both": "people and you"}
MAJORITY_OF = {"people": "the people's majority", "you": "your labels", "both": "the majority of people and you"}
#: Who gives the scores the systems' means estimate, and what those scores are, by the human side in force.
SCORERS = {"people": ("people", "the people's scores"), "you": ("you", "your labels"),
           "both": ("people and you", "the scores of people and you")}
#: A labels file's columns, in the order they are written; item_id, aspect and score are required.
FILE_COLUMNS = ("item_id", "dataset", "aspect", "score", "annotator", "seconds", "created", "updated", "reason")
REQUIRED = ("item_id", "aspect", "score")


def chosen_side(stored: str, items: Iterable[Item]) -> str:
    """The human side in force: `stored` when it is one of HUMAN_SIDES, else "people" when an
    item has a human score of its own, else "you"."""
    if stored in HUMAN_SIDES:
        return stored
    return "people" if any(item.human for item in items) else "you"


def with_labels(items: list[Item], labels: Iterable[Mapping], side: str) -> list[Item]:
    """`items` with their human scores as the human `side` says (module docstring). `labels`
    are rows with item_id, aspect, annotator and score; a label's aspect is matched with the
    dataset's human aspect of the same name in any case (and keeps its own spelling otherwise).
    Each label's score is kept under its annotator's name (`Item.annotators`), after the dataset's own."""
    if side not in HUMAN_SIDES:
        raise LabelError(f"human side '{shown(side)}' is unknown; use one of {', '.join(HUMAN_SIDES)}")
    if side == "people":
        return list(items)
    spelled = {aspect.lower(): aspect for item in items for aspect in item.human}
    given: dict[str, dict[str, dict[str, float]]] = {}  # item -> aspect -> annotator -> score
    for label in labels:
        aspect = spelled.get(str(label["aspect"]).lower(), str(label["aspect"]))
        given.setdefault(label["item_id"], {}).setdefault(aspect, {})[label["annotator"]] = float(label["score"])
    merged = []
    for item in items:
        mine = given.get(item.id, {})
        if side == "you":
            rated = {aspect: dict(sorted(scores.items())) for aspect, scores in mine.items()}
        else:
            rated = {aspect: {**item.ratings(aspect), **dict(sorted(scores.items()))} for aspect, scores in mine.items()}
        human = {aspect: tuple(scores.values()) for aspect, scores in rated.items()}
        annotators = {aspect: tuple(scores) for aspect, scores in rated.items()}
        same = human == item.human and all(tuple(item.ratings(a)) == who for a, who in annotators.items())
        merged.append(item if same else replace(item, human=human, annotators=annotators))
    return merged


def read_labels(path: str | Path) -> list[dict]:
    """The labels of a .csv, .jsonl or .json file (a list of objects): item_id, aspect and score
    required; annotator (default "you"), dataset (where item_id is the id your file gave the item),
    seconds, created, updated and reason (why the annotator gave it) optional; other columns ignored. A
    score is a number or, for every label of an aspect, a two-category word (pass/fail, yes/no, true/false, any case): then its index
    in the pair (negative first) with the pair as `categories`, read as a categorical aspect. Raises
    LabelError naming the file and line of the first bad value."""
    path = Path(path)
    data, lines = read_records(path)
    if not isinstance(data, list) or not data:
        raise LabelError(f"{path}: expected a list of labels (rows with {', '.join(REQUIRED)})")
    worded = _worded_aspects(data)
    labels = []
    for index, record in enumerate(data):
        where = f"{path}:{lines[index]}" if lines else f"{path}: label {index}"
        if not isinstance(record, dict):
            raise LabelError(f"{where}: a label is an object with {', '.join(REQUIRED)}")
        missing = [column for column in REQUIRED if record.get(column) in (None, "")]
        if missing:
            raise LabelError(f"{where}: no {' or '.join(missing)}; a label needs {', '.join(REQUIRED)}")
        aspect = str(record["aspect"]).strip()
        pair = worded.get(aspect.lower())
        score = category_index(record["score"], pair) if pair else as_number(record["score"])
        if score is None:
            raise LabelError(f"{where}: score {shown(record['score'])!r} is not a number; {NOT_A_SCORE}")
        label = {"item_id": str(record["item_id"]).strip(), "aspect": aspect, "score": score,
                 "annotator": str(record.get("annotator") or DEFAULT_ANNOTATOR).strip(),
                 **({"categories": pair} if pair else {})}
        if str(record.get("dataset") or "").strip():
            label["dataset"] = str(record["dataset"]).strip()
        if str(record.get("reason") or "").strip():
            label["reason"] = str(record["reason"]).strip()
        for column in ("seconds", "created", "updated"):
            value = record.get(column)
            if value not in (None, ""):
                number = as_number(value)
                if number is None:
                    raise LabelError(f"{where}: {column} {shown(value)!r} is not a number")
                label[column] = number
        labels.append(label)
    return labels


def _worded_aspects(records: list) -> dict[str, tuple[str, str]]:
    """The aspects (in lower case) whose every score is a two-category word, with their pair."""
    scores: dict[str, list] = {}
    for record in records:
        if isinstance(record, dict) and record.get("aspect") not in (None, ""):
            scores.setdefault(str(record["aspect"]).strip().lower(), []).append(record.get("score"))
    return {aspect: pair for aspect, values in scores.items() if (pair := two_categories(values)) is not None}


def write_labels(labels: Iterable[Mapping], path: str | Path) -> Path:
    """Write labels (rows with FILE_COLUMNS) to a .csv, or .jsonl (one object a line); returns the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise LabelError(f"{path}: labels are written as .csv or .jsonl; name the file so")
    rows = [{column: _plain(label.get(column)) for column in FILE_COLUMNS} for label in labels]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        if suffix == ".csv":
            writer = csv.DictWriter(handle, fieldnames=FILE_COLUMNS)
            writer.writeheader()
            writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
        else:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return path


def _plain(value: object) -> object:
    """A value as a file holds it: None for a missing number (NaN), plain Python numbers otherwise."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value
