"""A dataset's judgments kept in one file and read back into a store: the shipped reports are made
again from such files (reports/kept/, `bash reports/make.sh`), and a study can be handed to a
colleague without its store (`Store.export_judgments`, `Store.import_judgments`: the SQL is the store's,
the file is this module's). The file is xz-compressed JSON lines: a header naming the dataset,
then one line per row of the tables the judgments rest on (`Store.kept_rows`): template versions,
evaluation steps, the cached calls with their prompts and answers, and the judgment rows."""

from __future__ import annotations

import json
import lzma
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from geval.errors import StoreError
from geval.version import __version__

FORMAT = "geval-judgments"
VERSION = 1


def write(rows: Iterable[tuple[str, dict]], dataset: str, path: str | Path) -> Counter:
    """Write `rows` (`Store.kept_rows(dataset)`) to `path` (.jsonl.xz) under a header naming `dataset`.
    Returns how many rows of each table were written; a file with no judgment is not left behind."""
    written: Counter = Counter()
    header = {"format": FORMAT, "version": VERSION, "dataset": dataset, "geval": __version__}
    with lzma.open(path, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as out:
        out.write(json.dumps(header) + "\n")
        for table, row in rows:
            out.write(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
            written[table] += 1
    if not written["judgments"]:
        Path(path).unlink()
        raise StoreError(f"{dataset}: no judgments to keep; score it or import a judge first")
    return written


def dataset_of(path: str | Path) -> str:
    """The name of the dataset whose judgments `path` keeps (its header's), to load before `read`."""
    return _header(path)["dataset"]


def read(path: str | Path) -> Iterator[tuple[str, dict]]:
    """The rows of a file `write` made, as (table, row), after its header (`dataset_of`)."""
    _header(path)
    yield from _rows(path)


def _header(path: str | Path) -> dict:
    lines = _lines(path)
    try:
        number, line = next(lines)
    except StopIteration:
        raise StoreError(f"{path}: empty; expected a file written by `geval judgments export`") from None
    finally:
        lines.close()
    header = _parsed(path, number, line)
    if header.get("format") != FORMAT or not isinstance(header.get("dataset"), str):
        raise StoreError(f"{path}, line 1: not a file of kept judgments (written by `geval judgments export`)")
    if header.get("version", 0) > VERSION:
        raise StoreError(f"{path}: written by a newer G-Eval Studio (format {header['version']}); upgrade this one")
    return header


def _rows(path: str | Path) -> Iterator[tuple[str, dict]]:
    lines = _lines(path)
    next(lines)  # the header, read by `_header`
    for number, line in lines:
        record = _parsed(path, number, line)
        if not isinstance(record.get("table"), str) or not isinstance(record.get("row"), dict):
            raise StoreError(f"{path}, line {number}: expected {{\"table\": ..., \"row\": {{...}}}}")
        yield record["table"], record["row"]


def _lines(path: str | Path) -> Iterator[tuple[int, str]]:
    try:
        with lzma.open(path, "rt", encoding="utf-8") as kept:
            yield from ((number, line) for number, line in enumerate(kept, 1) if line.strip())
    except FileNotFoundError:
        raise StoreError(f"{path}: no such file") from None
    except (lzma.LZMAError, EOFError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: not an xz-compressed file of kept judgments ({exc})") from None


def _parsed(path: str | Path, number: int, line: str) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise StoreError(f"{path}, line {number}: not JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise StoreError(f"{path}, line {number}: expected a JSON object")
    return record
