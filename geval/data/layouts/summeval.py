"""SummEval (Fabbri et al. 2021) rows: doc_id, system_id, source, system_output, scores.

A row's scores are the mean of three experts'. Their own scores, one by one, are read from the
alternative annotator test's release of SummEval when it lies beside the file (EXPERT_FILES:
`<file>_experts.json` (geval.data.dataset.EXPERTS), or `alttest/summeval/human_annotations.json`, as in ../shared/data), in
its layout {expert: {"<doc_id>__<system_id>__<aspect>": score}}: each aspect then has the three
experts' scores under their names ("e0", "e1", "e2"), where their mean is the row's.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from geval.data.items import Item, make_item
from geval.data.reading import first_record_has, load_records, numeric_scores, text_field
from geval.errors import DatasetError

NAME = "summeval"
FIELDS = {"doc_id", "system_id", "source", "system_output", "scores"}
#: The scale of each aspect, as SummEval's experts were asked it (Fabbri et al. 2021: a Likert scale of 1-5).
SCALES = {"coherence": (1, 5), "consistency": (1, 5), "fluency": (1, 5), "relevance": (1, 5)}


def detect(data: object) -> bool:
    """A list of records with SummEval's five fields."""
    return first_record_has(data, FIELDS)


def expert_file(path: Path) -> Path | None:
    """The experts' own scores beside `path`, if any (module docstring)."""
    for candidate in (path.with_name(f"{path.stem}_experts.json"),
                      path.parent / "alttest" / "summeval" / "human_annotations.json"):
        if candidate.is_file():
            return candidate
    return None


def load(path: Path, data: object, name: str) -> tuple[list[Item], Counter]:
    """One summary-level item per row; group = document, system = summarizer; its id in the file
    (`source_id`) is "<doc_id>__<system_id>", as the experts' release names it."""
    experts = _experts(expert_file(path))

    def summary(index: int, record: dict, where: str, skipped: Counter) -> list[Item]:
        scores = record["scores"]
        if not isinstance(scores, dict):
            raise DatasetError(f"{path}: {where} field 'scores' should be an object")
        key = f"{text_field(path, record, 'doc_id', where)}__{text_field(path, record, 'system_id', where)}"
        human, annotators = {}, {}
        for aspect, value in scores.items():
            found, _ = numeric_scores(value, skipped, "non-numeric human scores")
            own = experts.get(f"{key}__{aspect}", {})
            if found and len(own) > 1 and math.isclose(sum(own.values()) / len(own), sum(found) / len(found),
                                                       abs_tol=1e-6):
                human[aspect], annotators[aspect] = tuple(own.values()), tuple(own)
            elif found:
                human[aspect] = found
                if experts:
                    skipped["aspects without the experts' own scores (their mean only)"] += 1
        return [make_item(
            dataset=name,
            level="summary",
            context=(),
            response=text_field(path, record, "system_output", where).strip(),
            grounding=text_field(path, record, "source", where).strip(),
            system=text_field(path, record, "system_id", where),
            group=text_field(path, record, "doc_id", where),
            human=human,
            annotators=annotators,
            source_id=key,
        )]

    return load_records(path, data, FIELDS, summary)


def _experts(path: Path | None) -> dict[str, dict[str, float]]:
    """{"<doc>__<system>__<aspect>": {expert: score}} from an experts' file, or {} without one."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: the SummEval experts' scores cannot be read ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(scores, dict) for scores in data.values()):
        raise DatasetError(f"{path}: expected {{expert: {{instance: score}}}}")
    found: dict[str, dict[str, float]] = {}
    for expert in sorted(data):
        for instance, score in data[expert].items():
            if isinstance(score, (int, float)) and not isinstance(score, bool):
                found.setdefault(instance, {})[expert] = float(score)
    return found
