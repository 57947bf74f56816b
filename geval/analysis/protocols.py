"""The meta-evaluation protocols, as data: which items a protocol uses (their level), which
human aspect each scored aspect is compared with, at which levels the correlation is taken
(`geval.analysis.correlation`), and which metric the papers report. `geval.analysis.agreement`
applies any of them; GENERIC is the Agreement page's table (every level, every item).

| protocol | items | correlation |
|---|---|---|
| `topicalchat-turn`, `personachat-turn` | USR responses (turn) | over all responses; Natural, Maintains Context, Engaging, Uses Knowledge, Overall ↔ naturalness, coherence, engagingness, groundedness, overall (G-EVAL, UniEval) |
| `fed-turn`, `fed-dialogue` | FED turns / whole dialogues | over all turns / dialogues, per FED aspect |
| `summeval-summary` | SummEval summaries | per document over its summaries, then the mean over documents (G-EVAL's summary level: Spearman and Kendall) |
| `summeval-system` | SummEval summaries | mean score of each of the 16 systems, then across systems |
| `dstc9-dialogue`, `dstc9-system` | DSTC9 dialogues | over all dialogues / over the 11 system means |
| `generic` | every item | item, group and system level, for any dataset |
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from geval.analysis.correlation import LEVELS, METRICS, MIN_GROUP_ITEMS, MIN_GROUPS, MIN_SYSTEMS
from geval.errors import GevalError


class ProtocolError(GevalError):
    """A protocol cannot be applied: unknown name, no items of its level, or no score maps to its aspects."""


@dataclass(frozen=True)
class Protocol:
    """What a protocol compares, and how. `aspects` maps the protocol's aspect names to the
    dataset's human aspects; `levels` are `geval.analysis.correlation` levels; `item_level` ""
    takes every item."""

    name: str
    title: str
    item_level: str
    aspects: dict[str, str]
    levels: tuple[str, ...]
    metrics: tuple[str, ...]
    primary: str
    reference: str
    overall: str = ""
    layouts: tuple[str, ...] = field(default=())

    def human_for(self, column: str, human_aspects: list[str]) -> str | None:
        """The human aspect a score column is compared with: the protocol's mapping, else a
        human aspect of the same name (any case); None when neither is there."""
        wanted = {k.lower(): v for k, v in self.aspects.items()}.get(column.lower(), column)
        return next((h for h in human_aspects if h.lower() == wanted.lower()), None)

    def aspect_for(self, human: str) -> str:
        """The protocol's name for a human aspect (the human name, lower case, when unmapped)."""
        return next((a for a, h in self.aspects.items() if h.lower() == human.lower()), human.lower())

    @property
    def for_every_item(self) -> bool:
        """True when the protocol takes items of every level (GENERIC)."""
        return not self.item_level


USR_ASPECTS = {"naturalness": "Natural", "coherence": "Maintains Context", "engagingness": "Engaging",
               "groundedness": "Uses Knowledge", "overall": "Overall"}


FED_TURN_ASPECTS = {a.lower(): a for a in ("Interesting", "Engaging", "Specific", "Relevant", "Correct",
                                            "Semantically appropriate", "Understandable", "Fluent", "Overall")}


FED_DIALOGUE_ASPECTS = {a.lower(): a for a in ("Coherent", "Error recovery", "Consistent", "Diverse", "Depth",
                                                "Likeable", "Understanding", "Flexible", "Informative",
                                                "Inquisitive", "Overall")}


SUMMEVAL_ASPECTS = {a: a for a in ("coherence", "consistency", "fluency", "relevance")}


PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("topicalchat-turn", "Topical-Chat USR, turn level", "turn", USR_ASPECTS, ("item",), METRICS, "pearson",
             "G-EVAL (Liu et al. 2023) Table 2, after UniEval: correlation over all responses (360 in the full file)",
             "Overall",
             ("usr",)),
    Protocol("personachat-turn", "PersonaChat USR, turn level", "turn", USR_ASPECTS, ("item",), METRICS, "pearson",
             "USR (Mehri & Eskenazi 2020): correlation over all responses (300 in the full file)", "Overall", ("usr",)),
    Protocol("fed-turn", "FED, turn level", "turn", FED_TURN_ASPECTS, ("item",), METRICS, "spearman",
             "FED (Mehri & Eskenazi 2020): correlation over all annotated turns", "Overall", ("fed",)),
    Protocol("fed-dialogue", "FED, dialogue level", "dialogue", FED_DIALOGUE_ASPECTS, ("item",), METRICS,
             "spearman", "FED (Mehri & Eskenazi 2020): correlation over all annotated dialogues", "Overall",
             ("fed",)),
    Protocol("summeval-summary", "SummEval, summary level", "summary", SUMMEVAL_ASPECTS, ("group",),
             ("spearman", "kendall", "pearson"), "spearman",
             "G-EVAL (Liu et al. 2023) Table 1: per document over its 16 summaries, then averaged", "",
             ("summeval",)),
    Protocol("summeval-system", "SummEval, system level", "summary", SUMMEVAL_ASPECTS, ("system",), METRICS,
             "kendall", "SummEval (Fabbri et al. 2021): the 16 systems' mean scores", "", ("summeval",)),
    Protocol("dstc9-dialogue", "DSTC9, dialogue level", "dialogue", {"overall": "overall"}, ("item",), METRICS,
             "spearman", "DSTC9 track 3 interactive evaluation: over all dialogues", "", ("dstc9",)),
    Protocol("dstc9-system", "DSTC9, system level", "dialogue", {"overall": "overall"}, ("system",), METRICS,
             "spearman", "DSTC9 track 3: the 11 systems' mean scores", "", ("dstc9",)),
)}

#: Every item at every level, each score column compared with the human aspect of its name
#: (or as mapped): the Agreement page's table and `geval agree`; `generic(levels)` for fewer levels.
GENERIC = Protocol("generic", "every item, at the item, group and system levels", "", {}, LEVELS, METRICS, "pearson",
                   "correlation over all items, inside each group (then the mean), and over system means")


def generic(levels: tuple[str, ...] = LEVELS) -> Protocol:
    """GENERIC at these levels only."""
    unknown = [level for level in levels if level not in LEVELS]
    if unknown:
        raise ProtocolError(f"level '{unknown[0]}' is unknown; use one of {', '.join(LEVELS)}")
    return GENERIC if tuple(levels) == LEVELS else Protocol(**{**GENERIC.__dict__, "levels": tuple(levels)})


def why_not_computable(protocol: Protocol, items) -> str:
    """Why none of the protocol's levels can be computed on these items ("" when one can): the group
    level needs MIN_GROUPS groups of MIN_GROUP_ITEMS items of its level, the system level MIN_SYSTEMS
    systems, the item level two items (e.g. one summary per document, by one system, has neither a
    per-document nor a system-level correlation)."""
    level_items = list(items) if protocol.for_every_item else [i for i in items if i.level == protocol.item_level]
    reasons = []
    for level in protocol.levels:
        if level == "item" and len(level_items) >= 2:
            return ""
        if level == "group":
            sizes = Counter(item.group or item.id for item in level_items)
            big = sum(size >= MIN_GROUP_ITEMS for size in sizes.values())
            if big >= MIN_GROUPS:
                return ""
            reasons.append(f"{big} of its {len(sizes)} groups have {MIN_GROUP_ITEMS} or more items (the group level "
                           f"needs {MIN_GROUPS})")
        if level == "system":
            systems = len({item.system for item in level_items if item.system})
            if systems >= MIN_SYSTEMS:
                return ""
            reasons.append(f"{systems} system{'s' if systems != 1 else ''} (the system level needs {MIN_SYSTEMS})")
    return "; ".join(reasons) or f"{len(level_items)} items"


def computable_levels(items) -> tuple[str, ...]:
    """The levels of GENERIC that can be computed on these items (item, then group and system where
    the data allows)."""
    return tuple(level for level in LEVELS if not why_not_computable(generic((level,)), items))


def get_protocol(name: str) -> Protocol:
    """The protocol called `name` (a published one, or `generic`)."""
    if name == GENERIC.name:
        return GENERIC
    if name not in PROTOCOLS:
        raise ProtocolError(f"protocol '{name}' is unknown; use one of {', '.join([*PROTOCOLS, GENERIC.name])}")
    return PROTOCOLS[name]


def protocols_for(layout: str, dataset: str = "", levels: list[str] | None = None) -> list[Protocol]:
    """The protocols that apply to a dataset of this loader layout (and name, for USR:
    PersonaChat when the name says so, else Topical-Chat), limited to its item levels."""
    found = [p for p in PROTOCOLS.values() if layout in p.layouts]
    if layout == "usr":
        persona = any(word in dataset.lower() for word in ("persona", "pc_"))
        found = [p for p in found if p.name == ("personachat-turn" if persona else "topicalchat-turn")]
    if levels is not None:
        found = [p for p in found if p.item_level in levels]
    return found
