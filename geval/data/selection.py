"""Choosing which items to score: by level, system or group, a seeded sample, a limit."""

from __future__ import annotations

import random

from geval.data.items import Item
from geval.errors import DatasetError


def select_items(
    items: list[Item],
    level: str | None = None,
    systems: list[str] | None = None,
    groups: list[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    limit: int | None = None,
    sample_groups: int | None = None,
) -> list[Item]:
    """Filter, then keep a seeded random sample of `sample_groups` groups (dialogues, documents:
    all their items), then a seeded random sample of `sample` items, then the first `limit`.

    The order is the dataset's, so `limit` N always means the same first N items.
    """
    chosen = [
        item for item in items
        if (level is None or item.level == level)
        and (not systems or item.system in systems)
        and (not groups or item.group in groups)
    ]
    if not chosen:
        raise DatasetError(
            f"no items match level={level or 'any'}, systems={systems or 'any'}, groups={groups or 'any'}"
        )
    if sample_groups is not None:
        names = list(dict.fromkeys(item.group or item.id for item in chosen))
        keep = set(random.Random(seed).sample(names, min(sample_groups, len(names))))
        chosen = [item for item in chosen if (item.group or item.id) in keep]
    if sample is not None and sample < len(chosen):
        keep = set(random.Random(seed).sample(range(len(chosen)), sample))
        chosen = [item for i, item in enumerate(chosen) if i in keep]
    return chosen[:limit] if limit is not None else chosen
