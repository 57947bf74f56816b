"""A dataset: items, with human scores or without (then the user's labels are its human side),
loaded from one file by its layout; where bundled and shared datasets are found. A new layout is
one module in geval/data/layouts plus one line there."""

from __future__ import annotations

import os
import shlex
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from collections.abc import Callable
from typing import ClassVar, Protocol

from geval.bundled import CHECKOUT, bundled_dir
from geval.data.declared import Scale, check_scales, parse_scales
from geval.data import pairs
from geval.data.items import LEVELS, Item, Items
from geval.data.layouts import LAYOUTS, annotations, declared_scales, dstc9, table
from geval.data.layouts.table import ColumnMapping, TablePreview
from geval.data.reading import read_records
from geval.data.selection import select_items
from geval.errors import DatasetError, GevalError, shown
from geval.wording import counted, few

#: The bundled samples: data/ in the checkout, else the copy installed with the package.
DATA_DIR = bundled_dir("data")


#: The full public datasets, beside the repository (or $GEVAL_SHARED_DATA, read at each look-up).
SHARED_DATA_DIR = CHECKOUT.parent / "shared" / "data"


class DatasetStore(Protocol):
    """Where datasets are saved and found by name: what loading a dataset asks of `geval.Store`
    (declared here, so that the data stage needs nothing of the store's)."""

    def dataset_names(self) -> list[str]: ...
    def dataset(self, name: str) -> "Dataset": ...
    def save_dataset(self, dataset: "Dataset") -> None: ...
    def replaced_by(self, dataset: "Dataset") -> dict[str, int]: ...
    def declare_scales(self, name: str, scales: dict[str, Scale]) -> dict[str, Scale]: ...


DATA_SUFFIXES = {".json", ".jsonl", ".csv"}
#: The end of the name of a file that a dataset's loader reads beside it (SummEval's experts), not a dataset.
EXPERTS = "_experts"


def known_datasets() -> dict[str, Path]:
    """Bundled samples (data/), then the full public datasets if ../shared/data exists."""
    found: dict[str, Path] = {}
    for folder in (DATA_DIR, Path(os.environ.get("GEVAL_SHARED_DATA") or SHARED_DATA_DIR)):
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if path.suffix in DATA_SUFFIXES and not path.name.startswith(".") and not path.stem.endswith(EXPERTS):
                    found.setdefault(path.stem, path)
    return found


def dataset_sources(store: DatasetStore | None = None) -> dict[str, str]:
    """Every dataset that can be opened by name, with where it comes from: "sample, data/" (the
    bundled samples), "full, ../shared/data" (the full public datasets), then "yours, in the
    store" (a stored dataset of no such file: an upload, or a file loaded from the CLI)."""
    shared = "$GEVAL_SHARED_DATA" if os.environ.get("GEVAL_SHARED_DATA") else "../shared/data"
    found = {name: "sample, data/" if path.parent == DATA_DIR else f"full, {shared}"
             for name, path in known_datasets().items()}
    for name in store.dataset_names() if store is not None else []:
        found.setdefault(name, "yours, in the store")
    return found


def resolve_dataset(name_or_path: str) -> Path:
    """A dataset file from a path, or from the name of a bundled or shared one."""
    path = Path(name_or_path)
    if path.exists():
        return path
    known = known_datasets()
    if name_or_path in known:
        return known[name_or_path]
    raise DatasetError(f"{name_or_path}: no such file or known dataset; known: {', '.join(known) or 'none'}")


@dataclass
class Dataset:
    """Items loaded from one file, with what the loader had to skip. `Dataset.LEVELS` are the
    item levels, `Dataset.LAYOUTS` the file layouts recognized."""

    LEVELS: ClassVar[tuple[str, ...]] = LEVELS
    LAYOUTS: ClassVar[tuple[str, ...]] = tuple(LAYOUTS)

    name: str
    path: str
    layout: str
    items: list[Item]
    skipped: Counter = field(default_factory=Counter)
    #: A categorical aspect's categories (its labels are their indexes); aspects not named are scores.
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # how the loader read the file (a table's level, and why)
    #: The scale each aspect was asked on, where declared: by its layout's paper, or by the user (`load_dataset`).
    scales: dict[str, Scale] = field(default_factory=dict)

    def __post_init__(self):
        self.items = Items(self.items)  # its columns made once (`geval.data.columns`): a dataset is not changed

    @property
    def levels(self) -> list[str]:
        """The levels present, in first-seen order."""
        return _columns(self.items).first_seen("levels")

    @property
    def aspects(self) -> list[str]:
        """Every human-scored aspect, in first-seen order."""
        return list(_columns(self.items).human_aspects)

    @property
    def annotators(self) -> list[str]:
        """Every annotator who scored an item, by id, in first-seen order ("#k": the k-th score of
        each item, in a file that does not name them)."""
        return list(_columns(self.items).annotators)

    @property
    def groups(self) -> list[str]:
        """Distinct group ids (dialogue or document)."""
        return _columns(self.items).first_seen("group_ids")

    @property
    def systems(self) -> list[str]:
        """Distinct system ids."""
        return [system for system in _columns(self.items).first_seen("systems") if system]

    @property
    def models(self) -> list[str]:
        """The models a dataset of pairs compares (each pair's two sides, named), first seen; [] for single responses."""
        return list(dict.fromkeys(name for item in self.items if item.pair is not None
                                  for name in (item.pair.system_a, item.pair.system_b) if name))

    def at_level(self, level: str) -> list[Item]:
        """The items of one level."""
        return [item for item in self.items if item.level == level]

    def select(self, level: str | None = None, systems: list[str] | None = None, groups: list[str] | None = None,
               sample: int | None = None, seed: int = 0, limit: int | None = None,
               sample_groups: int | None = None) -> list[Item]:
        """Items by level, system or group, then a seeded random sample of whole groups and/or of
        items, then the first `limit` (`geval.data.selection.select_items`)."""
        return select_items(self.items, level, systems, groups, sample, seed, limit, sample_groups)

    def pairs(self, aspect: str | None = None, per_context: int | None = None, seed: int = 0,
              name: str | None = None) -> "Dataset":
        """A dataset of pairs of this one's responses to one context, to judge which is better: every
        pair, or `per_context` drawn (seeded) per context; each annotator's preference the response they
        scored higher on `aspect` (default: Overall, else the first human aspect; a tie when equal)."""
        aspects = self.aspects
        if aspect is None:
            aspect = next((a for a in aspects if a.lower() == "overall"), aspects[0] if aspects else "")
        if aspect not in aspects and aspects:
            raise DatasetError(f"{self.name}: no human aspect {shown(aspect)}; it has {', '.join(aspects)}")
        name = name or f"{self.name}-pairs"
        items = pairs.pairs_from(self.items, name, aspect, per_context, seed)
        said = "every pair of responses to one context" if per_context is None else \
            f"up to {per_context} pairs of responses per context (seed {seed})"
        notes = [f"{said} of {self.name}" + (f"; each annotator prefers the response they scored higher on {aspect}"
                                             if aspects else "; no human scores, so no preferences")]
        return Dataset(name=name, path=self.path, layout=LAYOUTS["pairs"].NAME, items=_unique(items),
                       categories={pairs.ASPECT: pairs.PREFERENCES}, notes=notes)

    def to_seed001(self, folder: Path) -> list[Path]:
        """Write seed 001's transformed_data_dial.json and transformed_data_response.json (DSTC9 only)."""
        if self.layout != "dstc9":
            raise DatasetError(f"{self.path}: seed 001's files are made from a DSTC9 file (this one is {self.layout})")
        return dstc9.write_seed001(self.items, folder)

    @staticmethod
    def known() -> dict[str, Path]:
        """Bundled samples (data/), then the full public datasets of ../shared/data if it is there."""
        return known_datasets()

    @staticmethod
    def sources(store: DatasetStore | None = None) -> dict[str, str]:
        """Every dataset that can be opened by name (bundled, shared, and with a store the stored
        ones), with where it comes from (`dataset_sources`)."""
        return dataset_sources(store)

    @staticmethod
    def table_preview(path: str | Path, rows: int = 5) -> TablePreview | None:
        """The first `rows` records of a file of no known layout, flattened (nested objects as
        dotted columns: scores.naturalness), with a suggested column mapping; None when the
        file's layout is recognized (`geval.data.layouts.table.preview`)."""
        return table_preview(path, rows)

    def replacing(self, store: DatasetStore) -> str:
        """What saving this dataset into `store` would leave out of the stored dataset of its name, in
        words naming the file ("" when nothing would: no such dataset, or this one has all its items)."""
        left = store.replaced_by(self)
        if not left["items"]:
            return ""
        return (f"{self.path}: the store already holds a dataset named {self.name} with {left['items']} items this "
                f"file does not have ({left['judgments']} judgments and {left['labels']} labels on them, which would "
                "be left out)")

    def summary(self) -> str:
        """One line: counts of items per level, groups, systems and skipped values."""
        per_level = ", ".join(f"{int((_columns(self.items).levels == lv).sum())} {lv}" for lv in self.levels)
        systems = self.systems
        models = [] if systems else self.models  # pairs: the models their two sides compare (walked once)
        text = (
            f"{self.name} ({self.layout}): {counted(len(self.items), 'item')} ({per_level}), "
            f"{counted(len(self.groups), 'group')}, "
            + (f"{counted(len(models), 'model')} compared in pairs" if models else counted(len(systems), 'system'))
        )
        if self.skipped:
            text += "; skipped " + ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        return text + annotators_note(self.annotators)


def annotators_note(annotators: list[str]) -> str:
    """How a dataset's annotators are told apart, for its summary ("" when none scored): by name, by position
    ("#k": the k-th score of each item), or both (an aspect of named columns beside one of a single column)."""
    named = [who for who in annotators if not who.startswith("#")]
    unnamed = len(annotators) - len(named)
    by_position = ("one human score per item (one annotator's, or a mean: the file does not say)" if unnamed == 1
                   else f"{unnamed} annotators by position: the k-th score of each item is annotator #k (the file "
                        "does not name them)")
    if not named:
        return f"; {by_position}" if unnamed else ""
    listed = ", ".join(named[:6]) + (", …" if len(named) > 6 else "")
    return f"; {len(named)} annotators by name: {listed}" + (f"; elsewhere {by_position}" if unnamed else "")


def detect_layout(data: object) -> str | None:
    """The name of the first layout that recognizes `data`, or None."""
    return next((name for name, module in LAYOUTS.items() if module.detect(data)), None)


def load_dataset(
    path: str | Path,
    layout: str | None = None,
    mapping: ColumnMapping | list[str] | None = None,
    name: str | None = None,
    store: DatasetStore | None = None,
    replace: bool = True,
    scales: dict[str, Scale] | list[str] | None = None,
) -> Dataset:
    """Load a dataset file (a path, or the name of a bundled or shared dataset): by `mapping`
    if given (a ColumnMapping, or "role=column" texts such as "response=reply" and
    "score:Overall=overall"), else by `layout`, else by auto-detection.

    Items need no human score: a file without any loads, and the user's labels are then its
    human side (`geval.data.labels`). With a `store`, the items are saved into it once the whole
    file has loaded (in one transaction): a file that fails to load leaves the store as it was. With a `store`, `path`
    may also be the name of a dataset stored there (e.g. an upload): it is read from the store.
    `replace=False` refuses (DatasetError) to save over a stored dataset of the same name whose
    items this file does not all have (`Store.replaced_by`); by default they are left out.
    A table's level is inferred from its columns unless the mapping names it; `Dataset.notes` says how.
    `scales`: the scale each aspect was asked on ({aspect: (low, high)}, or "ASPECT=LOW-HIGH" texts, a
    bare "LOW-HIGH" for every aspect people scored; beside a mapping's "scale:ASPECT=LOW-HIGH" and
    over what the layout's paper declares: `Dataset.scales`); a DatasetError when people's scores
    fall outside one. A stored dataset named with `scales` keeps them (`DatasetStore.declare_scales`).
    """
    path = Path(path)
    if _is_folder(path):  # the alternative annotator test's release: a folder of annotations
        folder, path = path, path / annotations.HUMAN_FILE
        if not path.is_file():
            raise DatasetError(f"{folder}: a folder is read as annotations ({annotations.HUMAN_FILE}, "
                               f"{annotations.LLM_FILE}, {annotations.TEXTS_FILE}); it has no {annotations.HUMAN_FILE}")
        name, layout = name or folder.name, layout or annotations.NAME
    if path.suffix == "" and path.name == str(path) and not path.exists():  # a name
        if path.name in known_datasets():  # a bundled or shared dataset
            path = known_datasets()[path.name]
        elif store is not None and path.name in store.dataset_names():
            if scales:
                stored = store.dataset(path.name)
                store.declare_scales(path.name, given_scales(scales, stored.items, stored.categories))
            return store.dataset(path.name)
        elif store is not None:
            raise DatasetError(f"{path}: no such file, known dataset ({', '.join(known_datasets()) or 'none'}) or "
                               f"dataset in the store ({', '.join(store.dataset_names()) or 'none'})")
        else:  # no store read: none named as if it were empty
            raise DatasetError(f"{path}: no such file or known dataset ({', '.join(known_datasets()) or 'none'})")
    data, lines = read_records(path)
    name = name or path.stem
    if mapping is not None and not isinstance(mapping, ColumnMapping):
        mapping = ColumnMapping.parse(list(mapping))
    notes = []
    if mapping is not None:
        mapping, own_ids = table.with_own_ids(mapping, data)
        layout, load, args = table.NAME, table.load, (path, data, name, mapping, lines)
        first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
        notes += [table.choose_level(mapping, first).line, *filter(None, [own_ids])]
    else:
        layout = layout or detect_layout(data)
        if layout is None:
            raise DatasetError(f"{path}: unknown layout (known: {', '.join(LAYOUTS)}); {_mapping_hint(data)}")
        if layout not in LAYOUTS:
            raise DatasetError(f"{path}: layout '{shown(layout)}' is unknown; use one of {', '.join(LAYOUTS)}")
        load, args = LAYOUTS[layout].load, (path, data, name)
        if getattr(LAYOUTS[layout], "READS_LINES", False):  # names each record's line in its errors
            args += (lines,)
    try:
        items, skipped, *categories = load(*args)
    except RecursionError:  # e.g. a context cell holding JSON nested thousands deep
        raise DatasetError(f"{path}: a value is nested too deeply to read") from None
    except UnicodeEncodeError:  # a lone surrogate escape inside JSON held in a CSV cell
        raise DatasetError(f"{path}: a value holds half of a UTF-16 pair (e.g. \\ud800), which is not text") from None
    if not items:
        raise DatasetError(f"{path}: no items found")
    if mapping is not None:
        notes += filter(None, [table.groups_note(mapping, items), table.inline_turns_note(items)])
    categories = categories[0] if categories else {}
    given = {**(mapping.scales if mapping is not None else {}), **given_scales(scales, items, categories)}  # checked
    seen = seen_scales(items)
    rows = lines if mapping is not None and lines is not None and len(lines) == len(items) else None  # a row each
    checked = check_scales(given, seen, str(path), categories, located=_outside(items, rows))
    unknown = [aspect for aspect in checked if aspect not in seen]
    if unknown:  # a typo: stored, it was listed among "the people's scales"
        raise DatasetError(f"{path}: a scale is declared for {shown(unknown[0])}, which people did not score in it"
                           f" (they scored {', '.join(seen) or 'nothing with numbers'}); name one of those")
    dataset = Dataset(name=name, path=str(path), layout=layout, items=_unique(items), skipped=skipped,
                      categories=categories, notes=notes, scales={**declared_scales(layout), **checked})
    if store is not None:
        if not replace:
            _refuse_to_replace(store, dataset)
        store.save_dataset(dataset)
    return dataset


def given_scales(scales: dict[str, Scale] | list[str] | None, items: list[Item],
            categories: dict[str, tuple[str, ...]]) -> dict[str, Scale]:
    """`scales` as {aspect: (low, high)}: "ASPECT=LOW-HIGH" texts read, a bare "LOW-HIGH" for every
    aspect people scored with numbers (a DatasetError naming the text it cannot read)."""
    if not isinstance(scales, list):
        return dict(scales or {})
    scored = [a for a in dict.fromkeys(a for item in items for a in item.human) if a not in categories]
    try:
        return parse_scales(scales, scored)
    except GevalError as exc:
        raise DatasetError(str(exc)) from None


def _columns(items: list[Item]):
    """`geval.data.columns.columns` (imported when first asked for: it brings numpy and pandas)."""
    from geval.data.columns import columns

    return columns(items)


def seen_scales(items: list[Item]) -> dict[str, Scale]:
    """Each human aspect's lowest and highest score people gave on `items`."""
    found = _columns(items)
    return {aspect: seen for aspect in found.human_aspects if (seen := found.range(aspect)) is not None}


def _mapping_hint(data: object) -> str:
    """What to pass for a file of no known layout: the mapping the Data page suggests for it, as CLI options."""
    if isinstance(data, list) and data and isinstance(data[0], dict):
        found = table.preview(data)
        pairs = " ".join("--map " + (shlex.quote(p) if p.isprintable() else shown(p)) for p in found.suggestion())
        return f"read it as your own table with a column mapping, e.g. {pairs}" + (
            f"; {found.unsuggested}: name it in response=COLUMN" if found.unsuggested else "")
    return "for your own table pass a column mapping, e.g. --map response=reply --map score:Overall=overall"


def _refuse_to_replace(store: DatasetStore, dataset: Dataset) -> None:
    """A DatasetError when saving `dataset` would leave stored items out of the dataset of its name."""
    said = dataset.replacing(store)
    if said:
        raise DatasetError(f"{said}; load the file under another name, or replace the stored one (CLI: --name NAME "
                           "or --replace)")


def _is_folder(path: Path) -> bool:
    """Whether `path` is a folder (False for a name the system cannot hold: reading it says so)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _outside(items: list[Item], lines: list[int] | None) -> Callable[[str, Scale], str]:
    """Where people's scores of an aspect outside a scale are, the first three ("line 22 has 7, line 30 has 0 and 2
    more"): each one's line where each item is a row of the file read on that line (`lines`), else its item."""
    def located(aspect: str, scale: Scale) -> str:
        found = []
        for index, item in enumerate(items):
            outside = [score for score in item.human.get(aspect, ()) if not scale[0] <= score <= scale[1]]
            if outside:
                at = f"line {lines[index]}" if lines is not None else f"item {shown(item.source_id or item.id)}"
                found.append(f"{at} has {outside[0]:g}")
        return few(found)
    return located


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


def table_preview(path: str | Path, rows: int = 5) -> TablePreview | None:
    """The first records of a table file and a suggested mapping, or None when the layout is auto-detected."""
    data, lines = read_records(Path(path))
    if detect_layout(data) is not None:
        return None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return table.preview(data, rows, lines=lines)
    raise DatasetError(f"{path}: neither a known layout nor a table of records with named columns")
