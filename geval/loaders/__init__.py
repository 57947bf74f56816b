"""Dataset loaders, auto-detected by layout. A new layout is one module plus one line in LAYOUTS."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from geval.errors import DatasetError, shown
from geval.loaders import dstc9, fed, summeval, table, transformed, usr
from geval.loaders.base import Dataset, read_records
from geval.loaders.table import ColumnMapping

if TYPE_CHECKING:
    from geval.store import Store

LAYOUTS = {module.NAME: module for module in (usr, fed, summeval, dstc9, transformed)}


def detect_layout(data: object) -> str | None:
    """The name of the first layout that recognizes `data`, or None."""
    return next((name for name, module in LAYOUTS.items() if module.detect(data)), None)


def load_dataset(
    path: str | Path,
    layout: str | None = None,
    mapping: ColumnMapping | None = None,
    name: str | None = None,
    store: "Store | None" = None,
) -> Dataset:
    """Load a dataset file: by `mapping` if given, else by `layout`, else by auto-detection.

    With a `store`, the items are saved into it once the whole file has loaded (in one
    transaction): a file that fails to load leaves the store as it was.
    """
    path = Path(path)
    data, lines = read_records(path)
    name = name or path.stem
    if mapping is not None:
        layout, load, args = table.NAME, table.load, (path, data, name, mapping, lines)
    else:
        layout = layout or detect_layout(data)
        if layout is None:
            raise DatasetError(
                f"{path}: unknown layout (known: {', '.join(LAYOUTS)}); "
                "for your own table pass a column mapping, e.g. --map response=reply --map score:Overall=overall"
            )
        if layout not in LAYOUTS:
            raise DatasetError(f"{path}: layout '{shown(layout)}' is unknown; use one of {', '.join(LAYOUTS)}")
        load, args = LAYOUTS[layout].load, (path, data, name)
    try:
        items, skipped = load(*args)
    except RecursionError:  # e.g. a context cell holding JSON nested thousands deep
        raise DatasetError(f"{path}: a value is nested too deeply to read") from None
    except UnicodeEncodeError:  # a lone surrogate escape inside JSON held in a CSV cell
        raise DatasetError(f"{path}: a value holds half of a UTF-16 pair (e.g. \\ud800), which is not text") from None
    if not items:
        raise DatasetError(f"{path}: no items found")
    dataset = Dataset(name=name, path=str(path), layout=layout, items=_unique(items), skipped=skipped)
    if store is not None:
        store.save_dataset(dataset)
    return dataset


def _unique(items: list) -> list:
    """Exact duplicates get '-2', '-3' … appended to their id, so that no two items share one."""
    seen: dict[str, int] = {}
    result = []
    for item in items:
        count = seen.get(item.id, 0) + 1
        seen[item.id] = count
        if count > 1:
            item = replace(item, id=f"{item.id}-{count}")
        result.append(item)
    return result




def table_columns(path: str | Path) -> list[str] | None:
    """Column names to offer in a mapping form, or None when the layout is auto-detected."""
    data, _ = read_records(Path(path))
    if detect_layout(data) is not None:
        return None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return [str(column) for column in data[0]]
    raise DatasetError(f"{path}: neither a known layout nor a table of records with named columns")


__all__ = ["ColumnMapping", "Dataset", "LAYOUTS", "detect_layout", "load_dataset", "table_columns"]
