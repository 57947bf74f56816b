"""Any CSV, JSON or JSONL table, read through an explicit column mapping. A column is a key of
the records, or a dotted path into nested objects: `scores.naturalness` reads
record["scores"]["naturalness"] (the layout of UniEval's and G-EVAL's meta-evaluation files).
`preview` shows a file's first records flattened that way, with a suggested mapping."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from geval.data.declared import WORDS, Scale, category_index, parse_scale, two_categories, word
from geval.data.items import LEVELS, Item, Turn, make_item
from geval.data.reading import as_number, loads
from geval.errors import DatasetError, GevalError, shown
from geval.wording import counted

NAME = "table"
SPEAKER = re.compile(r"^([A-Za-z][\w .'-]{0,19}):\s+(.*)$")
#: What a column is called, by role, in the order a suggested mapping prefers (its last dotted part, any case).
ROLE_NAMES = {
    "response": ("response", "reply", "output", "summary", "system_output", "hypothesis", "candidate", "prediction",
                 "generated", "answer", "completion"),
    "context": ("context", "history", "dialogue", "dialog", "conversation", "dialogue_history", "question", "prompt",
                "query", "instruction"),
    "grounding": ("fact", "knowledge", "grounding", "persona", "document", "source", "article"),
    "system": ("system", "sys", "system_id", "model", "model_name", "bot"),
    "group": ("group", "group_id", "doc_id", "document_id", "dialogue_id", "dialog_id", "conversation_id",
              "context_id"),
    "id": ("id", "item_id", "example_id", "instance_id", "uid"),
}
#: What a column's name says it holds, for the level a table is read at (its last dotted part, any case, contains one).
DOCUMENT_NAMES = ("document", "article", "source", "doc", "passage", "story")
DIALOGUE_NAMES = ("dialogue", "dialog", "conversation", "chat", "transcript")
SUMMARY_NAMES = ("summary", "summaries", "abstract", "headline", "highlights")
#: Columns named for human scores: one holding a number and a word is a score column with a typo however short
#: the file (`_not_a_number`).
SCORE_NAMES = ("score", "rating", "overall", "quality", "grade")
#: Numeric columns that are counters or ids, not human scores.
NOT_A_SCORE = re.compile(r"(^|[_.\s-])(id|idx|index|position|row|turn|number|n)$", re.IGNORECASE)
#: A cell of the preview: its first characters.
PREVIEW_CHARS = 200
MISSING = object()


@dataclass
class ColumnMapping:
    """Which column holds what. Every role but `response` is optional (a table without a score
    column is labeled by the user). `level` is a level (turn, dialogue, summary) for every row, a
    column holding each row's, or None: inferred from the columns (`infer_level`). `scales`: the
    scale each aspect was asked on, where declared ("scale:coherence=1-5"). An aspect of several columns
    (score:quality=rater1 and score:quality=rater2) has an annotator each, named by the column."""

    response: str
    scores: dict[str, str | tuple[str, ...]]  # aspect name -> its column, or its annotators' columns
    context: str | None = None
    grounding: str | None = None
    system: str | None = None
    group: str | None = None
    id: str | None = None  # the file's own id of each row: labels and imported judge scores may name items by it
    level: str | None = None
    extra: dict = field(default_factory=dict)
    scales: dict[str, Scale] = field(default_factory=dict)

    @classmethod
    def parse(cls, pairs: list[str]) -> "ColumnMapping":
        """From CLI pairs like 'response=reply', 'score:Overall=overall_1', 'level=turn', 'scale:Overall=1-5'."""
        roles: dict[str, str] = {}
        scores: dict[str, str | tuple[str, ...]] = {}
        scales: dict[str, Scale] = {}
        for pair in pairs:
            role, sep, column = pair.partition("=")
            if not sep or not column:
                raise DatasetError(
                f"mapping '{shown(pair)}' should be ROLE=COLUMN, e.g. response=reply or score:Overall=overall"
            )
            if role.startswith("score:"):  # a second column of an aspect: another annotator of it
                aspect = role.removeprefix("score:")
                scores[aspect] = (*_as_tuple(scores[aspect]), column) if aspect in scores else column
            elif role.startswith("scale:"):
                aspect = role.removeprefix("scale:")
                try:
                    scales[aspect] = parse_scale(column)
                except GevalError:  # said as the Data page's field and the CLI's --scale name it: by its aspect
                    raise DatasetError(f"the scale of {shown(aspect)}, '{shown(column)}', is not one: give the lowest "
                                       "and highest score, e.g. 1-5") from None
            elif role in {"response", "context", "grounding", "system", "group", "id", "level"}:
                roles[role] = column
            else:
                raise DatasetError(
                    f"mapping role '{shown(role)}' is unknown; "
                    "use response, context, grounding, system, group, id, level, score:ASPECT, scale:ASPECT"
                )
        if "response" not in roles:
            raise DatasetError("the mapping needs response=COLUMN (the text being judged)")
        unknown = [aspect for aspect in scales if aspect not in scores]
        if unknown:
            raise DatasetError(f"mapping 'scale:{shown(unknown[0])}=...' names no score column; map it first "
                               f"(score:{shown(unknown[0])}=COLUMN)")
        return cls(scores=scores, scales=scales, **roles)

    def columns(self) -> list[tuple[str, str]]:
        """(role, column) for every mapped column."""
        roles = [(r, getattr(self, r)) for r in ("response", "context", "grounding", "system", "group", "id")]
        roles += [(f"score:{a}", c) for a, columns in self.score_columns().items() for c in columns]
        return [(r, c) for r, c in roles if c]

    def score_columns(self) -> dict[str, tuple[str, ...]]:
        """Each aspect's columns: one, or one per annotator."""
        return {aspect: _as_tuple(columns) for aspect, columns in self.scores.items()}


def _as_tuple(columns: str | tuple[str, ...]) -> tuple[str, ...]:
    return (columns,) if isinstance(columns, str) else tuple(columns)


def infer_level(response: str, context: str | None = None, grounding: str | None = None) -> tuple[str, str]:
    """The level a table's rows are read at, from what its mapped columns are called, and why: a
    context column makes each row a dialogue turn; a source document's column (document, article,
    source ...) without one, or a text judged named as a summary, a summary; a text judged named as
    a whole dialogue (dialogue, conversation ...), a dialogue; else a turn."""
    if context:
        return "turn", f"a context column ('{shown(context)}'): each row is a response to the dialogue so far"
    if grounding and _says(grounding, DOCUMENT_NAMES):
        return "summary", f"a source document column ('{shown(grounding)}') and no context: each row is a summary"
    if _says(response, SUMMARY_NAMES):
        return "summary", f"the text judged ('{shown(response)}') is named as a summary and there is no context"
    if _says(response, DIALOGUE_NAMES):
        return "dialogue", (f"the text judged ('{shown(response)}') is named as a whole dialogue and there is no "
                            "context: each row is a dialogue, judged as a whole")
    return "turn", "no context, document or dialogue column: each row is read as one response"


def _says(column: str, names: tuple[str, ...]) -> bool:
    last = column.rsplit(".", 1)[-1].lower()
    return any(name in last for name in names)


@dataclass(frozen=True)
class LevelChoice:
    """The level of a table's rows: `value` for every row, or each row's own from `column`; `line`
    says which, and why."""

    value: str = ""
    column: str = ""
    line: str = ""

    def of(self, row: dict, where: str) -> str:
        """The level of one row."""
        if not self.column:
            return self.value
        level = _text(value_at(row, self.column)).lower()
        if level not in LEVELS:
            raise DatasetError(f"{where}: column '{shown(self.column)}' (the level) holds {shown(repr(level))}; "
                               f"each row's level should be one of {', '.join(LEVELS)}")
        return level


def choose_level(mapping: ColumnMapping, first: dict) -> LevelChoice:
    """How the rows' level is read: `mapping.level` as a level (a level's name is always taken as
    the value, even when a column has that name), else as the column of the rows (`first` is a
    row), else inferred from the mapped columns (`infer_level`)."""
    given = mapping.level
    if given is None:
        level, why = infer_level(mapping.response, mapping.context, mapping.grounding)
        return LevelChoice(level, "", f"level {level}, inferred: {why} (to read it otherwise: the Data "
                                      "page's Level; CLI: --map level=turn, dialogue, summary or COLUMN)")
    if given in LEVELS:
        beside = value_at(first, given) is not MISSING
        also = f"; the column '{shown(given)}' is not read as the level" if beside else ""
        return LevelChoice(given, "", f"level {given}, the value given, for every row{also}")
    if value_at(first, given) is not MISSING:
        return LevelChoice("", given, f"level read from column '{shown(given)}' on each row")
    raise DatasetError(f"level '{shown(given)}' is neither a level ({', '.join(LEVELS)}) nor a column of the file; "
                       f"columns are: {', '.join(shown(key, 40) for key in flatten(first))}")


def id_column(columns: list[str]) -> str | None:
    """The column named as each row's own id: exactly one of ROLE_NAMES["id"], any case ("video_id" is not it)."""
    return next((c for name in ROLE_NAMES["id"] for c in columns if c.lower() == name), None)


def with_own_ids(mapping: ColumnMapping, data: object) -> tuple[ColumnMapping, str]:
    """`mapping` reading the file's own id column (`id_column`) when it names none and that column's
    values are all different, and the note that says what was done ("" when the file has no such column)."""
    records = [row for row in data if isinstance(row, dict)] if isinstance(data, list) else []
    column = None if mapping.id or not records else id_column(list(flatten(records[0])))
    if column is None:
        return mapping, ""
    ids = [_text(value_at(row, column)) for row in records]
    repeated = next((value for value, count in Counter(i for i in ids if i).items() if count > 1), None)
    if repeated is not None:
        return mapping, (f"item ids: the column '{shown(column)}' is not read as the items' own ids, since it gives "
                         f"{shown(repr(repeated))} to more than one row (to read another column: id=COLUMN)")
    return replace(mapping, id=column), (f"item ids: the file's own, from its column '{shown(column)}' (labels and "
                                         "judge scores may name items by them; to read another column: id=COLUMN)")


def detect(data: object) -> bool:
    """Never auto-detected: a table needs an explicit mapping."""
    return False


def load(path: Path, data: object, name: str, mapping: ColumnMapping,
         lines: list[int] | None) -> tuple[list[Item], Counter, dict[str, tuple[str, ...]]]:
    """One item per row. Empty scores are skipped; non-numeric ones are an error naming the row, but
    for a column of two-category words (pass/fail, yes/no, true/false: `geval.data.declared`), read
    as a categorical aspect of those two categories. Without a group column, rows of the same
    context (a summary: of the same document) are one group (`shared_groups`). Returns the items,
    what was skipped and the categories of each categorical aspect."""
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a table: a list of rows")
    levels = choose_level(mapping, data[0] if isinstance(data[0], dict) else {})
    columns, scored = mapping.columns(), mapping.score_columns()
    categories = {aspect: pair for aspect, named in scored.items()
                  if (pair := two_categories([v for column in named for v in _values(data, column)])) is not None}
    for aspect, named in scored.items():  # pass/fail words among an aspect's numbers: refused below, value by value
        worded = {c: pair for c in named if aspect not in categories and (pair := two_categories(_values(data, c)))}
        if worded and len(worded) < len(named):
            column, pair = next(iter(worded.items()))
            numbers = ", ".join(shown(c) for c in named if c not in worded)
            raise DatasetError(f"{path}: column '{shown(column)}' holds {'/'.join(pair)} words, but is mapped to "
                               f"'{shown(aspect)}' with columns of numbers ({numbers}): map it to an aspect of its own")
    skipped: Counter = Counter()
    items = []
    for index, row in enumerate(data):
        where = f"{path}:{lines[index]}" if lines else f"{path}: row {index}"
        if not isinstance(row, dict):
            raise DatasetError(f"{where}: row is not an object with named columns")
        for role, column in columns:
            if value_at(row, column) is MISSING:
                available = ", ".join(shown(key, 40) for key in flatten(row))
                if path.suffix.lower() == ".csv":  # every row has the header's columns: the header is what lacks it
                    raise DatasetError(f"{path}:1: the header has no column '{shown(column)}' (mapped to "
                                       f"{shown(role)}); its columns are: {available}")
                raise DatasetError(
                    f"{where}: column '{shown(column)}' (mapped to {shown(role)}) not found; columns are: {available}"
                )
        human, annotators = {}, {}
        for aspect, named in scored.items():
            scores, who = [], []
            for column in named:  # several: an annotator each, an empty cell one who did not score this row
                found = _scores(value_at(row, column), where, column, categories.get(aspect, ()))
                scores += found
                who += [column] if len(found) == 1 else [f"{column} #{k}" for k in range(1, len(found) + 1)]
            if scores:
                human[aspect] = tuple(scores)
                if len(named) > 1:
                    annotators[aspect] = tuple(who)
            else:
                skipped["empty human scores"] += 1
        level = levels.of(row, where)
        context, response = value_at(row, mapping.context) if mapping.context else "", value_at(row, mapping.response)
        if level == "dialogue" and not mapping.context:  # the text judged is the whole dialogue: its turns
            context, response = _text(response), ""
        items.append(
            make_item(
                dataset=name,
                level=level,
                context=_turns(context, where),
                response=_text(response),
                grounding=_text(value_at(row, mapping.grounding)) if mapping.grounding else "",
                system=_text(value_at(row, mapping.system)) if mapping.system else "",
                group=_text(value_at(row, mapping.group)) if mapping.group else f"row-{index:05d}",
                human=human,
                annotators=annotators,
                source_id=_text(value_at(row, mapping.id)) if mapping.id else "",
            )
        )
    return (items if mapping.group else shared_groups(items)), skipped, categories


def _values(data: list, column: str) -> list[object]:
    """Every value of `column` in the rows (a list's each, a JSON list's in a CSV cell too)."""
    found = []
    for row in data:
        value = value_at(row, column) if isinstance(row, dict) else MISSING
        if isinstance(value, str) and value.strip().startswith("["):
            try:
                value = loads(value)
            except json.JSONDecodeError:
                pass
        found += value if isinstance(value, list) else [] if value is MISSING else [value]
    return found


#: The group of rows that share what they answer, by what they share (`shared_groups`).
SHARED = {"context": "ctx", "document": "doc"}


def shared_of(item: Item) -> tuple[str, str] | None:
    """What `item` answers, by which its group is read when the file names none: its context (the
    dialogue so far), else a summary's document; None when it has neither (a row of its own)."""
    if item.context:
        return "context", json.dumps([[turn.speaker, turn.text] for turn in item.context], ensure_ascii=False)
    if item.level == "summary" and item.grounding:
        return "document", item.grounding
    return None


def shared_groups(items: list[Item]) -> list[Item]:
    """`items` (one per row, each its own group) with the rows of the same context, or the summaries of
    the same document, in one group ("ctx-00001", "doc-00001", in order of first appearance): the
    responses to one dialogue are not independent, and every interval is over groups."""
    found: dict[tuple[str, str], str] = {}
    made: Counter = Counter()  # groups made of each kind
    grouped = []
    for item in items:
        shared = shared_of(item)
        if shared is None:
            grouped.append(item)
            continue
        if shared not in found:
            made[shared[0]] += 1
            found[shared] = f"{SHARED[shared[0]]}-{made[shared[0]]:05d}"
        grouped.append(replace(item, group=found[shared]))
    return grouped


def groups_note(mapping: ColumnMapping, items: list[Item]) -> str:
    """How a table's rows were grouped when no group column is mapped, for the load's notes ("" when
    a column is, or no two rows share a context or document)."""
    if mapping.group:
        return ""
    shared = [item for item in items if not item.group.startswith("row-")]
    groups = {item.group for item in shared}
    if len(groups) == len(shared):
        return ""
    kinds = {item.group.split("-", 1)[0] for item in shared}
    what = " or ".join(kind for kind, prefix in SHARED.items() if prefix in kinds)
    nouns = {"turn": ("response", None), "summary": ("summary", "summaries")}
    levels = {item.level for item in shared}
    noun, plural = nouns.get(levels.pop(), ("item", None)) if len(levels) == 1 else ("item", None)
    alone = len(items) - len(shared)
    return (f"groups: {counted(len(shared), noun, plural)} in {counted(len(groups), 'group')} by their shared {what}"
            + (f" ({counted(alone, 'other row')} each a group of its own)" if alone else "")
            + "; map group=COLUMN to set them")


#: A speaker's tag inside a turn's text ("... B: hello"): a capitalised word of up to 12 letters or digits.
INLINE_SPEAKER = re.compile(r"\s([A-Z][A-Za-z0-9]{0,11}):\s")


def inline_turns_note(items: list[Item]) -> str:
    """A note when contexts read as one turn seem to hold several on one line ("A: hi B: hello": each turn is read
    from a line of its own), naming how many and the first; "" otherwise. The judge reads the text either way."""
    def inline(item: Item) -> bool:
        if len(item.context) != 1 or not item.context[0].speaker:
            return False
        speaker = item.context[0].speaker
        return any(tag != speaker and (len(tag) <= 2) == (len(speaker) <= 2)  # "A"/"B", "User"/"System"
                   for tag in INLINE_SPEAKER.findall(item.context[0].text))

    found = [item for item in items if inline(item)]
    if not found:
        return ""
    first = found[0].context[0].render()
    return (f"the context of {counted(len(found), 'item')} is one line that seems to hold several turns (the "
            f"first: '{shown(first[:60])}{'…' if len(first) > 60 else ''}'): put each turn on a line of its own, or "
            "give a JSON list of turns, to have them shown turn by turn (the judge reads the text as it is either way)")


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
    like another role, else one named as a whole dialogue, never the id column; none when there is no
    such column: `unsuggested` says so),
    `scores` the numeric columns left."""

    columns: list[str]
    rows: list[dict[str, str]]
    suggested: dict[str, str]
    scores: list[str]
    records: list[dict] = field(default_factory=list, repr=False)  # the first records, as read
    #: Columns of numbers, or of two-category words (pass/fail), but for a value or two (a typo), left out of
    #: `scores`: each with the first record (counted from 1; its line in the file where `by_line`) whose value is
    #: not one, that value, and what the column holds ("numbers", "pass/fail words").
    almost_scores: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    by_line: bool = False  # a CSV or JSON lines file: `almost_scores` names lines

    def where(self, number: int, name: str) -> str:
        """Where a record of `almost_scores` is in the file `name`, as errors name it: "file.csv:8" (a line), else
        "record 7 of file.json"."""
        return f"{name}:{number}" if self.by_line else f"record {number} of {name}"

    def mapping(self, response: str, scores: list[str], level: str | None = None,
                scales: dict[str, str] | None = None, *, aspect: str | None = None,
                annotators: Sequence[str] | None = None, **roles: str | None) -> list[str]:
        """The mapping as "role=column" texts (`ColumnMapping.parse`); each score's aspect is the
        last part of its dotted column (scores.naturalness -> naturalness) unless two share it, or with `aspect`,
        that one aspect, each of the score columns `annotators` (all when not given) an annotator of it.
        Without a `level`, the loader infers it (`infer_level`). `scales`: the scale each score
        column's aspect was asked on ({column: "1-5"}; empty: not declared)."""
        last = [column.rsplit(".", 1)[-1] for column in scores]
        joined = set(scores if annotators is None else annotators) if aspect and aspect.strip() else set()
        named = {column: aspect.strip() if column in joined else name if last.count(name) == 1 else column
                 for name, column in zip(last, scores)}
        pairs = [f"response={response}"] + ([f"level={level}"] if level else [])
        pairs += [f"score:{aspect}={column}" for column, aspect in named.items()]
        pairs += list(dict.fromkeys(f"scale:{named[column]}={text.strip()}" for column, text in (scales or {}).items()
                                    if column in named and text and text.strip()))
        return pairs + [f"{role}={column}" for role, column in roles.items() if column]

    @staticmethod
    def level_for(response: str, context: str | None = None, grounding: str | None = None) -> tuple[str, str]:
        """The level rows mapped this way are read at, and why (`infer_level`)."""
        return infer_level(response, context, grounding)

    def suggestion(self) -> list[str]:
        """The mapping the Data page suggests for this file ("role=column" texts): the suggested
        column of each role (the response: "COLUMN" when none is suggested), every score column, the level inferred."""
        roles = {role: column for role, column in self.suggested.items() if role != "response"}
        return self.mapping(self.suggested.get("response") or "COLUMN", self.scores, **roles)

    @property
    def unsuggested(self) -> str:
        """Why no column is suggested as the text judged, in words ("" when one is)."""
        if "response" in self.suggested:
            return ""
        return (f"no column looks like the text judged (one named {', '.join(ROLE_NAMES['response'][:4])} …, or a "
                "text column not named for another role)")

    def scaled(self, columns: list[str]) -> list[str]:
        """Of score `columns`, those with a scale to declare: not the columns of two-category words (pass/fail,
        yes/no, true/false), read as two categories."""
        return [column for column in columns if two_categories(_values(self.records, column)) is None]

    def items(self, mapping: list[str]) -> list[Item]:
        """The items the first records make under `mapping` ("role=column" texts): what templates
        are given, to say which fit before the whole file is loaded."""
        return load(Path("the first rows"), self.records, "preview", ColumnMapping.parse(mapping), None)[0]


def preview(data: list, rows: int = 5, scan: int = 50, lines: list[int] | None = None) -> TablePreview:
    """The first `rows` records of `data` as text, their columns (from the first `scan`
    records, nested objects flattened) and a suggested mapping; `lines`: each record's line in its file."""
    records = [flatten(record) for record in data[:scan] if isinstance(record, dict)]
    columns = list(dict.fromkeys(column for record in records for column in record))
    words = {c for c in columns if two_categories(_values(records, c)) is not None  # pass/fail: a score, not a text,
             and not any(_named([c], names) for names in ROLE_NAMES.values())}  # unless named for a role
    texts = [c for c in columns if not _numeric(records, c) and c not in words]
    named_for_others = {_named(texts, names) for role, names in ROLE_NAMES.items() if role != "response"}
    suggested: dict[str, str] = {}
    for role, names in ROLE_NAMES.items():
        if role == "id":  # numbers or text, named exactly so
            found = id_column(columns)
            suggested.update({role: found} if found else {})
            continue
        free = [c for c in texts if c not in suggested.values()]
        found = _named(free, names)
        if found is None and role == "response":  # the first text column not named like another role, nor the id;
            # else one named as a whole dialogue (dialogue, conversation ...): judged whole
            found = next((c for c in free if c not in named_for_others and c != id_column(columns)),
                         next((c for c in free if c.rsplit(".", 1)[-1].lower() in DIALOGUE_NAMES), None))
        if found:
            suggested[role] = found
    scores = [c for c in columns if c not in suggested.values() and not NOT_A_SCORE.search(c)
              and (_numeric(records, c) or c in words)]
    shown_rows = [{c: _cell(record.get(c)) for c in columns} for record in records[:rows]]
    almost = {c: found for c in texts if c not in suggested.values()
              and (found := _not_a_number(records, c) or _not_a_word(records, c))}
    if lines:  # records counted among dicts only, as `records` holds them
        numbered = [line for record, line in zip(data[:scan], lines) if isinstance(record, dict)]
        almost = {c: (numbered[record - 1], value, held) for c, (record, value, held) in almost.items()}
    return TablePreview(columns, shown_rows, suggested, scores, [r for r in data[:scan] if isinstance(r, dict)],
                        almost, by_line=bool(lines))


def _not_a_number(records: list[dict], column: str) -> tuple[int, str, str] | None:
    """The first record (from 1) of `column` whose value is not a number, that value and "numbers", where at most one
    in ten of its values given (three or more) is not, or the column is named for scores (SCORE_NAMES) and holds a
    number (a typo in a column of scores); None otherwise."""
    given = _given(records, column)
    bad = [(k, value) for k, value in given if not _numbers(value)]
    named = _named([column], SCORE_NAMES) is not None and len(bad) < len(given)
    if not bad or not named and not _a_typo(bad, given):
        return None
    return bad[0][0], _cell(bad[0][1]), "numbers"


def _not_a_word(records: list[dict], column: str) -> tuple[int, str, str] | None:
    """As `_not_a_number`, for a column of one pair of two-category words (pass/fail) but for at most one value in
    ten (of three or more given): its first record that is not one of them, that value, and "fail/pass words"."""
    given = _given(records, column)
    pairs = {WORDS.get(word(value)) for _, value in given} - {None}
    bad = [(k, value) for k, value in given if word(value) not in WORDS]
    if len(pairs) != 1 or not _a_typo(bad, given):
        return None
    return bad[0][0], _cell(bad[0][1]), "/".join(pairs.pop()) + " words"


def _given(records: list[dict], column: str) -> list[tuple[int, object]]:
    """(record number from 1, value) of each record that gives `column` a value."""
    return [(k, r[column]) for k, r in enumerate(records, 1) if r.get(column) not in (None, "")]


def _a_typo(bad: list, given: list) -> bool:
    """Whether the `bad` values are a typo's few among the `given`: some, and at most one in ten of three or more."""
    return bool(bad) and len(given) >= 3 and len(bad) <= max(1, len(given) // 10)


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


def _scores(value: object, where: str, column: str, categories: tuple[str, ...] = ()) -> tuple[float, ...]:
    """A number, a numeric string, or a list (or JSON list) of numbers; with `categories`, each
    one's index instead; empty means none."""
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
        number = category_index(v, categories) if categories else as_number(v)
        if number is None:
            raise DatasetError(f"{where}: column '{shown(column)}' value {shown(repr(v))} is not a number")
        numbers.append(number)
    return tuple(numbers)
