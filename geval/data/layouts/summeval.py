"""SummEval (Fabbri et al. 2021) rows: doc_id, system_id, source, system_output, scores."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from geval.data.items import Item, make_item
from geval.data.reading import first_record_has, load_records, numeric_scores, text_field
from geval.errors import DatasetError

NAME = "summeval"
FIELDS = {"doc_id", "system_id", "source", "system_output", "scores"}


def detect(data: object) -> bool:
    """A list of records with SummEval's five fields."""
    return first_record_has(data, FIELDS)


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter]:
    """One summary-level item per row; group = document, system = summarizer."""

    def summary(index: int, record: dict, where: str, skipped: Counter) -> list[Item]:
        scores = record["scores"]
        if not isinstance(scores, dict):
            raise DatasetError(f"{path}: {where} field 'scores' should be an object")
        human = {a: numeric_scores(v, skipped, "non-numeric human scores") for a, v in scores.items()}
        return [make_item(
            dataset=name,
            level="summary",
            context=(),
            response=text_field(path, record, "system_output", where).strip(),
            grounding=text_field(path, record, "source", where).strip(),
            system=text_field(path, record, "system_id", where),
            group=text_field(path, record, "doc_id", where),
            human={a: s for a, s in human.items() if s},
        )]

    return load_records(path, data, FIELDS, summary)
