"""Seed 001's converted DSTC9 layout: [{dialog_id, turns, score, system_id, system_output}]."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from geval.data.items import Item, Turn, make_item
from geval.data.reading import first_record_has, load_records, single_score, text_field
from geval.errors import DatasetError

NAME = "seed001"
FIELDS = {"dialog_id", "turns", "score", "system_output"}


def detect(data: object) -> bool:
    """A list of records with dialog_id and turns."""
    return first_record_has(data, FIELDS)


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter]:
    """Dialogue-level items; a final non-user turn equal to system_output is the response, not context."""

    def dialogue(index: int, record: dict, where: str, skipped: Counter) -> list[Item]:
        if not isinstance(record["turns"], list):
            raise DatasetError(f"{path}: {where} field 'turns' should be a list")
        turns = []
        for t_index, turn in enumerate(record["turns"]):
            if not isinstance(turn, dict):
                raise DatasetError(f"{path}: {where} turn {t_index} should be an object")
            turns.append(Turn(str(turn.get("speaker", "")).title(), text_field(path, turn, "utterance", where)))
        response = text_field(path, record, "system_output", where)
        # the response file's context may end with a user turn that repeats the response: keep it
        if turns and turns[-1].text == response and turns[-1].speaker.lower() != "user":
            turns.pop()
        return [make_item(dataset=name, level="dialogue", context=turns, response=response,
                          system=str(record.get("system_id", "")), group=str(record["dialog_id"]),
                          human=single_score(record["score"], "overall", skipped))]

    return load_records(path, data, FIELDS, dialogue)
