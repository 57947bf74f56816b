"""DSTC9 interactive dialogue evaluation: a dict of parallel lists, scored per dialogue."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from geval.data.items import Item, make_item
from geval.data.reading import alternating_turns, single_score
from geval.errors import DatasetError

NAME = "dstc9"
LISTS = ("contexts", "responses", "scores", "models")
#: The scale of its score, the mean of the annotators' 1-5 ratings.
SCALES = {"overall": (1, 5)}


def detect(data: object) -> bool:
    """{contexts, responses, references, scores, models}: lists of equal length."""
    return isinstance(data, dict) and set(LISTS) <= data.keys()


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter]:
    """One dialogue-level item per dialogue; the human score is the aspect 'overall'."""
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: expected an object of parallel lists {', '.join(LISTS)}")
    for key in LISTS:
        if not isinstance(data.get(key), list):
            raise DatasetError(f"{path}: field '{key}' should be a list")
    lengths = {key: len(data[key]) for key in LISTS}
    if len(set(lengths.values())) != 1:
        raise DatasetError(f"{path}: the lists differ in length: {lengths}")
    skipped: Counter = Counter()
    items = []
    for index, (context, response, score, model) in enumerate(zip(*(data[k] for k in LISTS))):
        if not isinstance(context, list) or not all(isinstance(t, str) for t in context):
            raise DatasetError(f"{path}: contexts[{index}] should be a list of utterances")
        items.append(
            make_item(
                dataset=name,
                level="dialogue",
                context=alternating_turns(context, "User", "System"),
                response=str(response).strip(),
                system=str(model),
                group=f"dlg-{index:04d}",
                human=single_score(score, "overall", skipped),
            )
        )
    return items, skipped


def to_seed001(items: list[Item], with_response_turn: bool) -> list[dict]:
    """Seed 001's `transform_dataset` layout: dialog_id, turns, score, system_id, system_output.

    `with_response_turn` gives transformed_data_dial.json (the response is the last turn);
    without it, transformed_data_response.json (turns are the context only).
    """
    records = []
    for item in items:
        turns = [{"speaker": t.speaker.lower(), "utterance": t.text} for t in item.context]
        if with_response_turn:
            turns.append({"speaker": "system", "utterance": item.response})
        records.append(
            {
                "dialog_id": item.group,
                "turns": turns,
                "score": item.human_mean("overall"),
                "system_id": item.system,
                "system_output": item.response,
            }
        )
    return records


def write_seed001(items: list[Item], folder: Path) -> list[Path]:
    """Write transformed_data_dial.json and transformed_data_response.json into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, with_response in (("transformed_data_dial.json", True), ("transformed_data_response.json", False)):
        target = folder / filename
        target.write_text(json.dumps(to_seed001(items, with_response), indent=1, ensure_ascii=False), "utf-8")
        written.append(target)
    return written
