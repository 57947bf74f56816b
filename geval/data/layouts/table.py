"""Any CSV, JSON or JSONL table, read through an explicit column mapping. A column is a key of
the records, or a dotted path into nested objects: `scores.naturalness` reads
record["scores"]["naturalness"] (the layout of UniEval's and G-EVAL's meta-evaluation files).
`preview` shows a file's first records flattened that way, with a suggested mapping."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from geval.data.items import LEVELS, Item, Turn, make_item
from geval.data.reading import as_number, loads
from geval.errors import DatasetError, shown

NAME = "table"
SPEAKER = re.compile(r"^([A-Za-z][\w .'-]{0,19}):\s+(.*)$")
#: What a column is called, by role, in the order a suggested mapping prefers (its last dotted part, any case).
ROLE_NAMES = {
    "response": ("response", "reply", "output", "summary", "system_output", "hypothesis", "candidate", "prediction",
                 "generated"),
    "context": ("context", "history", "dialogue", "dialog", "conversation", "dialogue_history"),
    "grounding": ("fact", "knowledge", "grounding", "persona", "document", "source", "article"),
    "system": ("system", "sys", "system_id", "model", "model_name", "bot"),
    "group": ("group", "group_id", "doc_id", "document_id", "dialogue_id", "dialog_id", "conversation_id",
              "context_id"),
    "id": ("id", "item_id", "example_id", "instance_id", "uid"),
}
#: Numeric columns that are counters or ids, not human scores.
NOT_A_SCORE = re.compile(r"(^|[_.\s-])(id|idx|index|position|row|turn|number|n)$", re.IGNORECASE)
#: A cell of the preview: its first characters.
PREVIEW_CHARS = 200
MISSING = object()


@dataclass
class ColumnMapping:
    """Which column holds what. Every role but `response` is optional (a table without a score
    column is labeled by the user)."""

    response: str
    scores: dict[str, str]  # aspect name -> column
    context: str | None = None
    grounding: str | None = None
    system: str | None = None
    group: str | None = None
    id: str | None = None  # the file's own id of each row: labels and imported judge scores may name items by it
    level: str = "turn"
    extra: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, pairs: list[str]) -> "ColumnMapping":
        """From CLI pairs like 'response=reply', 'score:Overall=overall_1', 'level=turn'."""
        roles: dict[str, str] = {}
        scores: dict[str, str] = {}
        for pair in pairs:
            role, sep, column = pair.partition("=")
            if not sep or not column:
                raise DatasetError(
                f"mapping '{shown(pair)}' should be ROLE=COLUMN, e.g. response=reply or score:Overall=overall"
            )
            if role.startswith("score:"):
                scores[role.removeprefix("score:")] = column
            elif role in {"response", "context", "grounding", "system", "group", "id", "level"}:
                roles[role] = column
            else:
                raise DatasetError(
                    f"mapping role '{shown(role)}' is unknown; "
                    "use response, context, grounding, system, group, id, level, score:ASPECT"
                )
        if "response" not in roles:
            raise DatasetError("the mapping needs response=COLUMN (the text being judged)")
        return cls(scores=scores, **roles)

    def columns(self) -> dict[str, str]:
        """role -> column for every mapped column."""
        roles = {r: getattr(self, r) for r in ("response", "context", "grounding", "system", "group", "id")}
        roles.update({f"score:{a}": c for a, c in self.scores.items()})
        return {r: c for r, c in roles.items() if c}


def detect(data: object) -> bool:
    """Never auto-detected: a table needs an explicit mapping."""
    return False


def load(path: Path, data: object, name: str, mapping: ColumnMapping, lines: list[int] | None) -> tuple[list[Item], Counter]:
    """One item per row. Empty scores are skipped; non-numeric ones are an error naming the row."""
    if mapping.level not in LEVELS:
        raise DatasetError(f"level '{shown(mapping.level)}' is unknown; use one of {', '.join(LEVELS)}")
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a table: a list of rows")
    columns = mapping.columns()
    skipped: Counter = Counter()
    items = []
    for index, row in enumerate(data):
        where = f"{path}:{lines[index]}" if lines else f"{path}: row {index}"
        if not isinstance(row, dict):
            raise DatasetError(f"{where}: row is not an object with named columns")
        for role, column in columns.items():
            if value_at(row, column) is MISSING:
                available = ", ".join(shown(key, 40) for key in flatten(row))
                raise DatasetError(
                    f"{where}: column '{shown(column)}' (mapped to {shown(role)}) not found; columns are: {available}"
                )
        human = {}
        for aspect, column in mapping.scores.items():
            scores = _scores(value_at(row, column), where, column)
            if scores:
                human[aspect] = scores
            else:
                skipped["empty human scores"] += 1
        items.append(
            make_item(
                dataset=name,
                level=mapping.level,
                context=_turns(value_at(row, mapping.context) if mapping.context else "", where),
                response=_text(value_at(row, mapping.response)),
                grounding=_text(value_at(row, mapping.grounding)) if mapping.grounding else "",
                system=_text(value_at(row, mapping.system)) if mapping.system else "",
                group=_text(value_at(row, mapping.group)) if mapping.group else f"row-{index:05d}",
                human=human,
                source_id=_text(value_at(row, mapping.id)) if mapping.id else "",
            )
        )
    return items, skipped


def value_at(row: dict, column: str) -> object:
    """The value of `column` in a record: its key, else a dotted path into nested objects
    (`scores.naturalness` reads row["scores"]["naturalness"]); MISSING when neither is there."""
    if column in row:
        return row[column]
    value: object = row
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def flatten(record: dict, prefix: str = "") -> dict[str, object]:
    """A record with its nested objects as dotted columns: {"scores": {"naturalness": 3}} ->
    {"scores.naturalness": 3}. Lists stay values."""
    flat: dict[str, object] = {}
    for key, value in record.items():
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@dataclass
class TablePreview:
    """A table file's first records, flattened (nested objects as dotted columns), and a
    suggested mapping: `suggested` names a column per role (response, context, grounding,
    system, group, id) where one is named like it (the response: else the first text column not named
    like another role),
    `scores` the numeric columns left."""

    columns: list[str]
    rows: list[dict[str, str]]
    suggested: dict[str, str]
    scores: list[str]

    def mapping(self, response: str, scores: list[str], level: str = "turn", **roles: str | None) -> list[str]:
        """The mapping as "role=column" texts (`ColumnMapping.parse`); each score's aspect is the
        last part of its dotted column (scores.naturalness -> naturalness) unless two share it."""
        last = [column.rsplit(".", 1)[-1] for column in scores]
        pairs = [f"response={response}", f"level={level}"]
        pairs += [f"score:{name if last.count(name) == 1 else column}={column}" for name, column in zip(last, scores)]
        return pairs + [f"{role}={column}" for role, column in roles.items() if column]


def preview(data: list, rows: int = 5, scan: int = 50) -> TablePreview:
    """The first `rows` records of `data` as text, their columns (from the first `scan`
    records, nested objects flattened) and a suggested mapping."""
    records = [flatten(record) for record in data[:scan] if isinstance(record, dict)]
    columns = list(dict.fromkeys(column for record in records for column in record))
    texts = [c for c in columns if not _numeric(records, c)]
    named_for_others = {_named(texts, names) for role, names in ROLE_NAMES.items() if role != "response"}
    suggested: dict[str, str] = {}
    for role, names in ROLE_NAMES.items():
        if role == "id":  # numbers or text, named exactly so ("video_id" is not the row's id)
            found = next((c for name in names for c in columns if c.lower() == name), None)
            suggested.update({role: found} if found else {})
            continue
        free = [c for c in texts if c not in suggested.values()]
        found = _named(free, names)
        if found is None and role == "response":  # the first text column not named like another role
            found = next((c for c in free if c not in named_for_others), free[0] if free else None)
        if found:
            suggested[role] = found
    scores = [c for c in columns if c not in suggested.values() and _numeric(records, c) and not NOT_A_SCORE.search(c)]
    shown_rows = [{c: _cell(record.get(c)) for c in columns} for record in records[:rows]]
    return TablePreview(columns, shown_rows, suggested, scores)


def _named(columns: list[str], names: tuple[str, ...]) -> str | None:
    """The column named like the first of `names` that one is named like: the same last dotted
    part (any case), else one that contains it."""
    last = {c: c.rsplit(".", 1)[-1].lower() for c in columns}
    for name in names:
        for column in columns:
            if last[column] == name:
                return column
    return next((c for name in names for c in columns if name in last[c]), None)


def _numeric(records: list[dict], column: str) -> bool:
    """Whether every value of `column` given is a number, a numeric text or a list of numbers
    (or its JSON text, as a CSV holds it), and one is given."""
    values = [r[column] for r in records if r.get(column) not in (None, "")]
    return bool(values) and all(_numbers(value) for value in values)


def _numbers(value: object) -> bool:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = loads(value)
        except (json.JSONDecodeError, RecursionError):
            return False
    values = value if isinstance(value, list) else [value]
    return len(values) > 0 and all(as_number(v) is not None for v in values)


def _cell(value: object) -> str:
    text = value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _text(value: object) -> str:
    if value is None or value is MISSING:
        return ""
    return value.strip() if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _turns(value: object, where: str) -> list[Turn]:
    """Context from a newline-joined string, or a list of strings or {speaker, text} objects."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = loads(value)
        except json.JSONDecodeError:
            pass
    if isinstance(value, list):
        turns = []
        for turn in value:
            if isinstance(turn, dict):
                turns.append(Turn(str(turn.get("speaker", "")), _text(turn.get("text", turn.get("utterance", "")))))
            else:
                turns.append(_split_speaker(_text(turn)))
        return turns
    if not isinstance(value, str):
        raise DatasetError(f"{where}: the context should be text or a list of turns, not {type(value).__name__}")
    return [_split_speaker(line) for line in value.split("\n") if line.strip()]


def _split_speaker(line: str) -> Turn:
    match = SPEAKER.match(line.strip())
    return Turn(match.group(1), match.group(2)) if match else Turn("", line.strip())


def _scores(value: object, where: str, column: str) -> tuple[float, ...]:
    """A number, a numeric string, or a list (or JSON list) of numbers; empty means none."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ()
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = loads(value)
        except json.JSONDecodeError:
            raise DatasetError(
                f"{where}: column '{shown(column)}' value {shown(repr(value))} is not a number or a list of numbers"
            ) from None
    values = value if isinstance(value, list) else [value]
    numbers = []
    for v in values:
        number = as_number(v)
        if number is None:
            raise DatasetError(f"{where}: column '{shown(column)}' value {shown(repr(v))} is not a number")
        numbers.append(number)
    return tuple(numbers)
