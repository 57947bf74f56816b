"""USR Topical-Chat and PersonaChat (Mehri & Eskenazi 2020): contexts with scored responses."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from geval.data.items import Item, make_item
from geval.data.reading import alternating_turns, first_record_has, load_records, numeric_scores, text_field
from geval.errors import DatasetError

NAME = "usr"
NOT_ASPECTS = {"response", "model"}
#: Topical-Chat's marker for a turn written without a knowledge snippet, and what the judge reads instead.
NO_FACT, NO_FACT_TEXT = "_nofact", "(none: this turn was written without a fact)"
#: The scale of each aspect, as USR's paper asks it (Mehri & Eskenazi 2020, table 1).
SCALES = {"Understandable": (0, 1), "Natural": (1, 3), "Maintains Context": (1, 3), "Engaging": (1, 3),
          "Uses Knowledge": (0, 1), "Overall": (1, 5)}


def detect(data: object) -> bool:
    """A list of {context, fact, responses: [...]} records."""
    return first_record_has(data, {"context", "responses"})


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter]:
    """One turn-level item per response; the group is the context it answers. Its id in the file
    (`source_id`) is "<context>/<response>", both counted from 0."""

    def responses(index: int, record: dict, where: str, skipped: Counter) -> list[Item]:
        turns = alternating_turns(text_field(path, record, "context", where).split("\n"), "A", "B")
        fact = text_field(path, record, "fact", where).strip()
        fact = NO_FACT_TEXT if fact == NO_FACT else fact
        if not isinstance(record["responses"], list):
            raise DatasetError(f"{path}: {where} field 'responses' should be a list")
        items = []
        for r_index, scored in enumerate(record["responses"]):
            if not isinstance(scored, dict) or "response" not in scored:
                raise DatasetError(f"{path}: {where} response {r_index} lacks field 'response'")
            rated = {aspect: numeric_scores(values, skipped, "non-numeric human scores")
                     for aspect, values in scored.items() if aspect not in NOT_ASPECTS}
            items.append(make_item(
                dataset=name,
                level="turn",
                context=turns,
                response=text_field(path, scored, "response", f"{where} response {r_index}").strip(),
                grounding=fact,
                system=str(scored.get("model", "")),
                group=f"ctx-{index:03d}",
                human={a: scores for a, (scores, _) in rated.items() if scores},
                annotators={a: who for a, (_, who) in rated.items()},
                source_id=f"{index}/{r_index}",
            ))
        return items

    return load_records(path, data, {"context", "responses"}, responses)
