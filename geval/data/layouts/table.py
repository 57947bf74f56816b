"""Any CSV, JSON or JSONL table, read through an explicit column mapping."""

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


@dataclass
class ColumnMapping:
    """Which column holds what. Every role but `response` and one score is optional."""

    response: str
    scores: dict[str, str]  # aspect name -> column
    context: str | None = None
    grounding: str | None = None
    system: str | None = None
    group: str | None = None
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
            elif role in {"response", "context", "grounding", "system", "group", "level"}:
                roles[role] = column
            else:
                raise DatasetError(
                    f"mapping role '{shown(role)}' is unknown; "
                    "use response, context, grounding, system, group, level, score:ASPECT"
                )
        if "response" not in roles:
            raise DatasetError("the mapping needs response=COLUMN (the text being judged)")
        if not scores:
            raise DatasetError("the mapping needs at least one score:ASPECT=COLUMN (a human score)")
        return cls(scores=scores, **roles)

    def columns(self) -> dict[str, str]:
        """role -> column for every mapped column."""
        roles = {r: getattr(self, r) for r in ("response", "context", "grounding", "system", "group")}
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
            if column not in row:
                available = ", ".join(shown(key, 40) for key in row)
                raise DatasetError(
                    f"{where}: column '{shown(column)}' (mapped to {shown(role)}) not found; columns are: {available}"
                )
        human = {}
        for aspect, column in mapping.scores.items():
            scores = _scores(row[column], where, column)
            if scores:
                human[aspect] = scores
            else:
                skipped["empty human scores"] += 1
        items.append(
            make_item(
                dataset=name,
                level=mapping.level,
                context=_turns(row.get(mapping.context, "") if mapping.context else "", where),
                response=_text(row[mapping.response]),
                grounding=_text(row.get(mapping.grounding, "")) if mapping.grounding else "",
                system=_text(row.get(mapping.system, "")) if mapping.system else "",
                group=_text(row.get(mapping.group, "")) if mapping.group else f"row-{index:05d}",
                human=human,
            )
        )
    return items, skipped


def _text(value: object) -> str:
    if value is None:
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
