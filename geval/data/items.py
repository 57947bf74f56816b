"""One item model for dialogue and summarization data, with human scores."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import cache
from collections.abc import Iterable, Sequence
from typing import Literal

Level = Literal["turn", "dialogue", "summary"]
LEVELS: tuple[str, ...] = ("turn", "dialogue", "summary")
#: How each line of a PersonaChat persona starts.
PERSONA_LINE = "your persona:"

#: Template placeholders an item can fill, and what each one means.
PLACEHOLDERS: dict[str, str] = {
    "context": "the dialogue so far, one 'Speaker: text' line per turn",
    "response": "the response (turn level) or system output being judged",
    "dialogue": "the whole dialogue: context turns plus the response",
    "fact": "the grounding knowledge, whatever it is (Topical-Chat fact, persona, or source document)",
    "persona": "the persona (PersonaChat's 'your persona: ...' lines); an error on any other grounding",
    "document": "the source document of a summary; an error on any other item",
    "summary": "the summary being judged; same text as {{response}}",
    "response_a": "a pair's first response (the one shown first: the two swap places in the second order)",
    "response_b": "a pair's second response",
    "conversation_a": "a pair's first side as a conversation: its turns before the response, then the response "
                      "(MT-Bench's second turn: both questions and that side's own first answer)",
    "conversation_b": "a pair's second side as a conversation",
}


@dataclass(frozen=True, slots=True)
class Turn:
    """One dialogue turn."""

    speaker: str
    text: str

    def render(self) -> str:
        """'Speaker: text', or the bare text when the speaker is unknown."""
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


@dataclass(frozen=True, slots=True)
class Pair:
    """Two responses to one context, compared (which is better?). `turns_a` and `turns_b` are each
    side's own conversation before its response when the sides' differ (MT-Bench's second turn follows
    each model's own first answer); empty, both follow the item's context. `speaker` is who gives the
    responses ("assistant"), `question` what both answer, as an id: the unit pairs are grouped by when
    an item is a group of its own (MT-Bench's question number)."""

    response_a: str
    response_b: str
    system_a: str = ""
    system_b: str = ""
    turns_a: tuple[Turn, ...] = ()
    turns_b: tuple[Turn, ...] = ()
    speaker: str = ""
    question: str = ""

    def swapped(self) -> "Pair":
        """The same pair with its sides in the other order (B shown first)."""
        return Pair(self.response_b, self.response_a, self.system_b, self.system_a, self.turns_b, self.turns_a,
                    self.speaker, self.question)

    def shared(self, context: tuple[Turn, ...]) -> tuple[Turn, ...]:
        """What both sides were given: `context` (the item's), else the turns both sides' own
        conversations hold at the same place (MT-Bench's second turn: both questions)."""
        if context or not self.turns_a:
            return context
        return tuple(a for a, b in zip(self.turns_a, self.turns_b) if a == b)

    def conversation(self, side: str, context: tuple[Turn, ...]) -> str:
        """Side "a" or "b" as 'Speaker: text' lines: its own turns (else `context`), then its response."""
        turns = (self.turns_a if side == "a" else self.turns_b) or context
        response = self.response_a if side == "a" else self.response_b
        speaker = self.speaker or (turns[-2].speaker if len(turns) >= 2 else "")
        return "\n".join(turn.render() for turn in (*turns, Turn(speaker, response)))

    def to_json(self) -> str:
        """The pair as stored (`items.pair`)."""
        fields = {"response_a": self.response_a, "response_b": self.response_b, "system_a": self.system_a,
                  "system_b": self.system_b, "turns_a": [[t.speaker, t.text] for t in self.turns_a],
                  "turns_b": [[t.speaker, t.text] for t in self.turns_b], "speaker": self.speaker,
                  "question": self.question}
        return json.dumps(fields, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | None) -> "Pair | None":
        """Inverse of `to_json`; None for an item that is no pair ("" or NULL)."""
        if not text:
            return None
        fields = json.loads(text)
        turns = {side: tuple(Turn(s, t) for s, t in fields.pop(side, [])) for side in ("turns_a", "turns_b")}
        return cls(**fields, **turns)


#: The columns of an item as stored (`Item.to_row`), in the order of its fields.
STORED = ("id", "dataset", "level", "context", "response", "grounding", "system", "group_id", "human", "annotators",
          "source_id", "pair")


@dataclass(frozen=True, slots=True)
class Item:
    """One thing a human scored: a response in context, a whole dialogue, or a summary.

    `human` maps an aspect name (as the dataset spells it) to every annotator's score;
    `annotators` names who gave each of them, in the same order (an aspect it lacks: position k is
    annotator "#k", as in files that list scores without names, e.g. USR's). `source_id` is the id
    the file gives the item (its id column, SummEval's document and system), "" when it gives none.
    `pair`: the two responses of a pair (its `response` is both, as people read them), None for one response.
    """

    id: str
    dataset: str
    level: str
    context: tuple[Turn, ...]
    response: str
    grounding: str = ""
    system: str = ""
    group: str = ""
    human: dict[str, tuple[float, ...]] = field(default_factory=dict)
    annotators: dict[str, tuple[str, ...]] = field(default_factory=dict)
    source_id: str = ""
    pair: Pair | None = None

    def ratings(self, aspect: str) -> dict[str, float]:
        """Each annotator's score for `aspect`, by annotator id (empty when there is none)."""
        scores = self.human.get(aspect, ())
        return dict(zip(self.annotators.get(aspect) or positional(len(scores)), scores))

    def human_mean(self, aspect: str) -> float:
        """Mean of the annotators' scores for `aspect`, NaN when there are none."""
        scores = self.human.get(aspect, ())
        return sum(scores) / len(scores) if scores else math.nan

    @property
    def grounding_kind(self) -> str:
        """What the grounding is: "document" (a summary's source), "persona" (PersonaChat's "your
        persona: ..." lines), else "fact"; "" when there is none. Only the placeholder of its kind (and
        {{fact}}, which names any grounding) is filled, so that a template written for another
        dataset fails with an error instead of reading the wrong text."""
        if not self.grounding:
            return ""
        if self.level == "summary":
            return "document"
        lines = [line for line in self.grounding.splitlines() if line.strip()]
        return "persona" if lines and all(line.lower().startswith(PERSONA_LINE) for line in lines) else "fact"

    def fields(self) -> dict[str, str]:
        """The text of every placeholder this item can fill ('' where it has nothing)."""
        context = "\n".join(turn.render() for turn in self.context)
        # Speakers alternate, so the response comes from whoever spoke two turns ago.
        answering = self.context[-2].speaker if len(self.context) >= 2 else ""
        final = Turn(answering, self.response).render() if self.response else ""
        dialogue = "\n".join(part for part in (context, final) if part)
        pair = self.pair
        if pair is not None and not context:
            context = "\n".join(turn.render() for turn in pair.shared(self.context))
        return {
            "context": context,
            "response": self.response,
            "dialogue": dialogue,
            "fact": self.grounding,
            "persona": self.grounding if self.grounding_kind == "persona" else "",
            "document": self.grounding if self.grounding_kind == "document" else "",
            "summary": self.response,
            "response_a": pair.response_a if pair else "",
            "response_b": pair.response_b if pair else "",
            "conversation_a": pair.conversation("a", self.context) if pair else "",
            "conversation_b": pair.conversation("b", self.context) if pair else "",
        }

    @property
    def scored_text(self) -> str:
        """The text people scored: the response (or summary), or the whole dialogue when the item
        is a dialogue with no separate response (FED's dialogue level)."""
        return self.response or self.fields()["dialogue"]

    def to_row(self) -> dict:
        """A flat dict for storage and tables (context and human scores as JSON)."""
        return {
            "id": self.id,
            "dataset": self.dataset,
            "level": self.level,
            "context": json.dumps([[t.speaker, t.text] for t in self.context]),
            "response": self.response,
            "grounding": self.grounding,
            "system": self.system,
            "group_id": self.group,
            "human": json.dumps({k: list(v) for k, v in self.human.items()}),
            "annotators": json.dumps({k: list(v) for k, v in self.annotators.items()}),
            "source_id": self.source_id,
            "pair": self.pair.to_json() if self.pair else "",
        }

    @classmethod
    def from_row(cls, row: dict, read: dict | None = None) -> "Item":
        """Inverse of `to_row`. `read`: for rows read together, what each context, human scores' and annotators'
        text read as, so that a text many items share (a dialogue's context for each of its responses) is read
        once and held once."""
        return cls.from_values([row.get(column) for column in STORED], read)

    @classmethod
    def from_values(cls, values: Sequence, read: dict | None = None) -> "Item":
        """`from_row` of a row's values in the order of STORED (a query's row, without a dict made of it)."""
        return cls.from_rows([values], read)[0]

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence], read: dict | None = None) -> list["Item"]:
        """`from_values` of many rows. The items made with one `read` share each repeated text (dataset, level,
        grounding, system, group, source id) and parsed JSON: a million items read from the store hold 374 MB
        instead of 736. Each is made as a `_Fields` (the same slots, set as any object's attributes) whose class
        is then switched to Item: a frozen dataclass sets each field through `object.__setattr__` (a million items
        read from the store took 3.8 s of CPU instead of 5.6, their rows' fetch 2.9 s of it, on a loaded machine)."""
        read = {} if read is None else read
        shared, made = read.setdefault, []
        for item_id, dataset, level, context, response, grounding, system, group, human, annotators, source_id, \
                pair in rows:
            item = _Fields(item_id, shared(dataset, dataset), shared(level, level), _once(read, "context", context),
                           response, shared(grounding, grounding), shared(system, system), shared(group, group),
                           _once(read, "human", human), _once(read, "annotators", annotators or "{}"),
                           shared(source_id or "", source_id or ""), Pair.from_json(pair) if pair else None)
            item.__class__ = cls
            made.append(item)
        return made


class _Fields:
    """An Item's slots, set as a plain object's (`Item.from_rows` switches its class to Item after): the same
    layout, so that the switch is allowed, and nothing else."""

    __slots__ = Item.__slots__

    def __init__(self, item_id, dataset, level, context, response, grounding, system, group, human, annotators,
                 source_id, pair):
        self.id = item_id
        self.dataset = dataset
        self.level = level
        self.context = context
        self.response = response
        self.grounding = grounding
        self.system = system
        self.group = group
        self.human = human
        self.annotators = annotators
        self.source_id = source_id
        self.pair = pair


def _once(read: dict, kind: str, text: str):
    """A context's, human scores' or annotators' JSON `text` as an Item holds it, parsed the first time it is met
    in `read` (items with the same scores share them: nothing changes an item's)."""
    found = read.get((kind, text))
    if found is None:
        parsed = json.loads(text)
        found = read[kind, text] = tuple(Turn(s, t) for s, t in parsed) if kind == "context" else {
            k: tuple(v) for k, v in parsed.items()}
    return found


class Items(list):
    """A list of items that knows where its columns are kept (`geval.data.columns`): the lists a store
    gives of one read of a dataset's items share them, found at once instead of by comparing every
    object, and the `digest` of the rows they were read from. A copy or slice of it is a plain list."""

    def __init__(self, items: Sequence[Item] = (), shared: dict | None = None):
        super().__init__(items)
        self.shared = {} if shared is None else shared  # "columns" -> ItemColumns, once made

    @property
    def digest(self) -> str | None:
        """A digest of the stored rows these items were read from (`Store.items`), None when not known: results
        on them can be kept under it instead of their texts (`geval.analysis.baselines`)."""
        return self.shared.get("digest")

    def __reduce__(self):
        return list, (list(self),)  # pickled as the items alone


@cache  # a few distinct n, asked once per item and aspect
def positional(n: int) -> tuple[str, ...]:
    """The ids of `n` scores a file lists without naming who gave them: "#1" ... "#n"."""
    return tuple(f"#{k}" for k in range(1, n + 1))


def named(annotators: Sequence[str]) -> bool:
    """Whether `annotators` are named ("you", "expert_1"), not counted by position as a file without names gives
    them ("#1", "#2"; `positional`)."""
    return tuple(annotators) != positional(len(annotators))


def without_item(reason: str, item_id: str, dataset: str) -> str:
    """A reason with the item it names taken out ("item X (dataset): ...", "item X: ..."), so
    that the same reason met on many items reads as one."""
    for prefix in (f"item {item_id} ({dataset}): ", f"item {item_id}: "):
        if reason.startswith(prefix):
            return reason[len(prefix):]
    return reason


def content_id(*parts: object) -> str:
    """A stable 16-hex id from the JSON of `parts`."""
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def make_item(
    dataset: str,
    level: str,
    context: list[Turn] | tuple[Turn, ...],
    response: str,
    grounding: str = "",
    system: str = "",
    group: str = "",
    human: dict[str, tuple[float, ...]] | None = None,
    annotators: dict[str, tuple[str, ...]] | None = None,
    source_id: str = "",
    pair: Pair | None = None,
) -> Item:
    """Build an Item whose id is derived from its content (not from file position); `annotators`
    only for aspects whose scores are not simply "#1" ... "#n" in order. A pair's `response` holds
    both its sides, so its id does too."""
    context = tuple(context)
    ident = content_id(dataset, level, [[t.speaker, t.text] for t in context], response, grounding, system)
    human = dict(human or {})
    by_name = {a: tuple(ids) for a, ids in (annotators or {}).items() if a in human and named(ids)}
    return Item(ident, dataset, level, context, response, grounding, system, group, human, by_name, source_id, pair)
