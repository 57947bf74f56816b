"""Annotations as the alternative annotator test's authors release them (Calderon, Reichart & Dror,
ACL 2025): `human_annotations.json`, {annotator: {instance: label}}, one aspect ("label") per file,
each annotator by name; the texts optional, in `prompts.json` beside it ({instance: {text_id,
str_prompt, ...}}; MT-Bench's has both conversations: each of its instances is then a pair, `Item.pair`, of
the two models' answers at the instance's turn, each after its own conversation). A folder holding these files loads as this
layout, named after the folder; `llm_annotations.json` beside them ({llm: {instance: label}}) is
not part of the dataset: it is judges' scores, imported as such (`geval judge import`).

Labels are numbers (a score) or categories (MT-Bench's model_a / model_b / tie). A categorical
aspect keeps its categories, sorted, in the dataset (`Dataset.categories`); each label is stored
as its category's index. The categories are every label found in the folder's annotations,
people's and the LLMs' (an LLM may answer with one no person chose, e.g. WAX's
"None-of-the-above"), so that the LLMs' files import.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

from geval.data.items import Item, Pair, Turn, make_item
from geval.errors import DatasetError, shown

NAME = "annotations"
HUMAN_FILE, LLM_FILE, TEXTS_FILE = "human_annotations.json", "llm_annotations.json", "prompts.json"
#: The one aspect of a file of this layout.
ASPECT = "label"
SCALAR = (str, int, float, type(None))


def detect(data: object) -> bool:
    """{name: {instance: label}}: an object of objects whose values are single labels."""
    return (isinstance(data, dict) and bool(data) and all(isinstance(v, dict) for v in data.values())
            and any(data.values())
            and all(isinstance(label, SCALAR) for v in data.values() for label in v.values()))


def is_number(label: object) -> bool:
    """A numeric label (a bool is not one)."""
    return isinstance(label, (int, float)) and not isinstance(label, bool)


def categories_of(labels: list[object]) -> tuple[str, ...]:
    """The categories of an aspect whose labels are not all numbers (sorted), else () for a score."""
    found = [label for label in labels if label is not None]
    return () if all(map(is_number, found)) else tuple(sorted({str(label) for label in found}))


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter, dict[str, tuple[str, ...]]]:
    """One item per instance, with every annotator's label under the annotator's name; the texts
    from `prompts.json` beside the file when there is one (else the item's text is its instance
    id), its group the instance's `text_id` there, or a pair's question (MT-Bench's pairs of one question are
    read together, as the pairwise section reads them: its `text_id` names the instance). Returns the items,
    what was skipped, and the categories of a categorical aspect."""
    if not detect(data):
        raise DatasetError(f"{path}: expected {{annotator: {{instance: label}}}}, the layout of {HUMAN_FILE}")
    skipped: Counter = Counter()
    llms = _beside(path, LLM_FILE)
    categories = categories_of([label for scores in (*data.values(), *llms.values()) for label in scores.values()])
    code = {category: float(index) for index, category in enumerate(categories)}
    rated: dict[str, dict[str, float]] = {}
    for annotator, scores in data.items():
        for instance, label in scores.items():
            if label is None:
                skipped["empty labels"] += 1
            else:
                rated.setdefault(str(instance), {})[str(annotator)] = code[str(label)] if categories else float(label)
    texts = _beside(path, TEXTS_FILE)
    items = []
    for instance, labels in rated.items():
        text = texts.get(instance, {}) if isinstance(texts.get(instance), dict) else {}
        pair = _pair(text, instance)
        items.append(make_item(
            dataset=name, level="turn", context=(), response=_text(text) or instance,
            group=pair.question if pair is not None else str(text.get("text_id") or instance),
            human={ASPECT: tuple(labels.values())}, annotators={ASPECT: tuple(labels)}, source_id=instance,
            pair=pair,
        ))
    return items, skipped, ({ASPECT: categories} if categories else {})


def _beside(path: Path, file_name: str) -> dict:
    """The JSON object of a file of this layout beside `path` ({} when there is none)."""
    other = path.with_name(file_name)
    if other == path or not other.is_file():
        return {}
    try:
        data = json.loads(other.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{other}: cannot be read as JSON ({shown(str(exc), 120)})") from None
    return data if isinstance(data, dict) else {}


def _text(record: dict) -> str:
    """An instance's text: its two conversations (a pairwise comparison), else its prompt."""
    if record.get("conversation_a") and record.get("conversation_b"):
        return "\n\n".join(f"Conversation {side}:\n" + _conversation(record[f"conversation_{side.lower()}"])
                           for side in ("A", "B"))
    return str(record.get("str_prompt") or "")


def _pair(record: dict, instance: str) -> Pair | None:
    """MT-Bench's instance ("<question>__<model_a>__<model_b>__<turn>") as a pair: each model's answer at
    that turn, after its own conversation up to it; None when the record has no two conversations."""
    sides = [_turns(record.get(f"conversation_{side}")) for side in ("a", "b")]
    parts = instance.split("__")
    if not all(sides) or len(parts) != 4 or not parts[3].isdigit():
        return None
    answers = [[n for n, turn in enumerate(turns) if turn.speaker == "assistant"] for turns in sides]
    turn = int(parts[3])
    if not all(len(found) >= turn >= 1 for found in answers):
        return None
    cut = [found[turn - 1] for found in answers]
    return Pair(sides[0][cut[0]].text, sides[1][cut[1]].text, parts[1], parts[2], tuple(sides[0][:cut[0]]),
                tuple(sides[1][:cut[1]]), speaker="assistant", question=parts[0])


def _turns(value: object) -> list[Turn]:
    """A conversation given as a list of {role, content} (or its Python text) as turns ([] when unread)."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            return []
    if not isinstance(value, list):
        return []
    return [Turn(str(turn.get("role", "")), str(turn.get("content", ""))) for turn in value if isinstance(turn, dict)]


def _conversation(value: object) -> str:
    """A conversation given as a list of {role, content} (or its Python text) as 'role: content' lines."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            return value
    if not isinstance(value, list):
        return str(value)
    return "\n".join(Turn(str(turn.get("role", "")), str(turn.get("content", ""))).render()
                     for turn in value if isinstance(turn, dict))
