"""SummEval (Fabbri et al. 2021) rows: doc_id, system_id, source, system_output, scores."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from geval.errors import DatasetError
from geval.items import Item, make_item
from geval.loaders.base import first_record_has, numeric_scores, require_list_of_dicts, text_field

NAME = "summeval"
FIELDS = {"doc_id", "system_id", "source", "system_output", "scores"}


def detect(data: object) -> bool:
    """A list of records with SummEval's five fields."""
    return first_record_has(data, FIELDS)


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter]:
    """One summary-level item per row; group = document, system = summarizer."""
    records = require_list_of_dicts(path, data, FIELDS)
    skipped: Counter = Counter()
    items = []
    for index, record in enumerate(records):
        where = f"record {index}"
        scores = record["scores"]
        if not isinstance(scores, dict):
            raise DatasetError(f"{path}: {where} field 'scores' should be an object")
        human = {a: numeric_scores(v, skipped, "non-numeric human scores") for a, v in scores.items()}
        items.append(
            make_item(
                dataset=name,
                level="summary",
                context=(),
                response=text_field(path, record, "system_output", where).strip(),
                grounding=text_field(path, record, "source", where).strip(),
                system=text_field(path, record, "system_id", where),
                group=text_field(path, record, "doc_id", where),
                human={a: s for a, s in human.items() if s},
            )
        )
    return items, skipped
