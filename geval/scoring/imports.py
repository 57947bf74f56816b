"""Judge scores made elsewhere (your own GPT-4o pipeline, a promptfoo or inspect_ai run, a
colleague's script), imported from a file and stored as judge rows like any other, so that they
appear wherever a judge does: agreement, Inspect, the leaderboard, the report, the alternative
annotator test. They are never called and never scored again.

A file gives scores by item, in one of these shapes (.csv, .json or .jsonl):

- rows (CSV, JSON lines, a JSON list): an id column (`item_id`, `id`, `instance_id` or `instance`)
  and a column per aspect, named as the dataset's human aspects (any case); or one `score` (or
  `label`) column for `aspect`, or the dataset's only aspect. With `scale` given, `aspect` may be
  one nobody has scored yet (a judge imported before labelling);
- {item id: score} or {item id: {aspect: score}};
- {judge: {item id: score}}, the layout of the alternative annotator test's `llm_annotations.json`:
  every judge in it is imported (or the one named).

An item id is the item's id in the store, or the id its file gave it (`Item.source_id`: your
file's id column, SummEval's "<doc_id>__<system_id>"), optionally followed by "__<aspect>".
A score is a number on the aspect's scale (`scale`, else the one the dataset's layout declares,
else the range of the people's scores of that aspect), or one of a categorical aspect's
categories; an empty one is stored as unscored.

Each judge is stored as a template version of kind "imported" (its body names the file) and a
signature `backend:imported|model:<name>|file:<file name>|sha256:<12 hex>|imported:<when>|...`:
importing the same file again changes nothing. One transaction: a file with a bad row (an
unknown item, a value off the scale, an item given twice, an unreadable file) stores nothing,
and the error names the row. A file made for more items than the dataset has (the full SummEval
for its sample) is imported with `only_known`: the other items' scores are left out and counted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from geval.data.declared import NOT_A_SCORE, category_index, two_categories
from geval.data.items import Item
from geval.data.reading import as_number, read_records
from geval.errors import DatasetError, GevalError, shown
from geval.judging.templates import Template, TemplateError
from geval.scoring.lookup import scale_text
from geval.store import Store
from geval.store.records import judgment_id
from geval.version import __version__
from geval.wording import few

ID_COLUMNS = ("item_id", "id", "instance_id", "instance")
SCORE_COLUMNS = ("score", "label")
#: Between an item's id and an aspect in an instance id: "<doc>__<system>__coherence".
ASPECT_SEPARATOR = "__"


class JudgeImportError(GevalError):
    """A file of judge scores cannot be imported: unreadable, an unknown item or aspect, a value off
    the aspect's scale, an item given twice. Nothing of the file is stored."""


@dataclass
class Imported:
    """What an import did for one judge: its name, the template version and signature it is stored
    under, the items and aspects it scored, how many scores were empty, and whether the same file
    had been imported before (then nothing was written)."""

    name: str
    template_version: str
    signature: str
    items: int
    aspects: list[str]
    unscored: int
    already: bool = False
    left_out: int = 0  # with `only_known`: scores of items the dataset does not have
    notes: list[str] = field(default_factory=list)  # what to know before reading it (an undeclared scale)


@dataclass
class _Score:
    """One score of the file: the item and aspect it is for, its value as given, where it stood and
    the id the file gave its item."""

    item: Item
    aspect: str
    value: object
    where: str
    key: str


def import_judge(store: Store, dataset: str, path: str | Path, name: str | None = None, aspect: str | None = None,
                 scale: tuple[float, float] | None = None, only_known: bool = False) -> list[Imported]:
    """Import the scores of one judge (`name`), or of every judge of a {judge: {item: score}} file,
    into `dataset` of `store`; returns what each judge's import did. Raises JudgeImportError naming
    the file and row of the first bad value; nothing is stored then. `only_known`: leave out the
    scores of items the dataset does not have (counted in `Imported.left_out`) instead."""
    path = Path(path)
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise JudgeImportError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data, lines = read_records(path)
    except DatasetError as exc:
        raise JudgeImportError(str(exc)) from None
    items = store.items(dataset)
    if not items:
        raise JudgeImportError(f"no dataset named {dataset!r} in the store: load it first")
    if scale is not None and not all(float(end).is_integer() for end in scale):
        raise JudgeImportError(f"scale {scale[0]:g}-{scale[1]:g}: its ends are whole numbers (scores between 0 and "
                               "1: 0-1)")
    worded = two_categories(_leaves(data, aspect))
    keys = _Keys(items, store.categories(dataset), only_known, store.scales(dataset),
                 new_aspect=aspect if scale is not None or worded else None, words=worded)
    judges = _judges(path, data, lines, keys, name, aspect)
    left_out = {judge: sum(score is None for score in scores) for judge, scores in judges.items()}
    for judge, scores in judges.items():
        if left_out[judge] == len(scores):
            raise JudgeImportError(f"{path}: {judge}: none of its {len(scores)} items is an item of {dataset!r}: is "
                                   "it the dataset the scores were made on?")
    sha = hashlib.sha256(blob).hexdigest()
    made = [(judge, *_rows(path, sha, judge, [s for s in scores if s is not None], keys, scale))
            for judge, scores in judges.items()]
    known = set(store.combos(dataset)["template_version"])
    done = []
    for judge, template, signature, rows, unscored in made:
        named = {aspect.key: aspect.name for aspect in template.aspects}  # as the people's ("Natural"), not the key
        done.append(Imported(judge, template.version, signature,
                             len({row["item_id"] for row in rows}),
                             list(dict.fromkeys(named.get(r["aspect"], r["aspect"]) for r in rows)),
                             unscored, already=template.version in known, left_out=left_out[judge],
                             notes=[*_undeclared(template, keys, dataset), *_scored_by_nobody(template, keys)]))
    new = {a.name: a.categories for _, template, *_ in made for a in template.aspects
           if a.categories and a.name not in keys.given_categories}
    if new:  # a judge's two-category words on an aspect nobody has labeled yet: its categories
        store.declare_categories(dataset, new)
    store.save_imported([(template, rows) for (_, template, _, rows, _), result in zip(made, done)
                         if not result.already])
    return done


def _undeclared(template: Template, keys: _Keys, dataset: str) -> list[str]:
    """A line for each aspect of an imported judge whose scale is not the whole-number range of the
    people's scores while no scale is declared for theirs: which scale the judge is read against then
    depends on a guess (`geval.analysis.scales`), and declaring it settles it."""
    notes = []
    for aspect in template.aspects:
        found = [s for item in keys.items for s in item.human.get(aspect.name, ())]
        if aspect.categories or aspect.name in keys.declared or not found:
            continue
        seen = (math.floor(min(found)), math.ceil(max(found)))
        if seen != (aspect.min, aspect.max):
            notes.append(f"{aspect.name}: no scale is declared for the people's scores (they gave {min(found):g}-"
                         f"{max(found):g}) beside this judge's {aspect.min}-{aspect.max}: declare the one they were "
                         f"asked on (python -m geval datasets load {dataset} --scale '{aspect.name}=LOW-HIGH'), and "
                         "the judge is mapped onto it; until then each verdict says which reading it took")
    return notes


def _scored_by_nobody(template: Template, keys: _Keys) -> list[str]:
    """A line for each aspect of an imported judge that no person scored on these items (`--aspect naturalness`
    where people scored Natural): compared with nobody until it is labeled, and chosen on Agreement for nothing."""
    people = sorted({name for item in keys.items for name, scores in item.human.items() if scores})
    return [f"{aspect.name}: nobody scored it on these items (people scored {', '.join(people) or 'nothing yet'}): "
            "it is compared with people once they label it; to compare it with one of theirs, import it again naming that "
            "aspect" for aspect in template.aspects
            if (aspect.human or aspect.name).lower() not in {name.lower() for name in people}]


def _leaves(data: object, aspect: str | None) -> list[object]:
    """The values a judge file gives as scores of `aspect`: a row's score (or label, or `aspect`)
    column, every value of {item: score}, of {item: {aspect: score}} and of {judge: {item: score}}."""
    if isinstance(data, list):
        columns = {*SCORE_COLUMNS, (aspect or "").lower()}
        return [value for row in data if isinstance(row, dict) for column, value in row.items()
                if str(column).lower() in columns]
    if isinstance(data, dict):
        return [leaf for value in data.values()
                for leaf in (_leaves(value, aspect) if isinstance(value, dict) else [value])]
    return []


class _Keys:
    """Finds the item (and aspect) an id of the file names."""

    def __init__(self, items: list[Item], categories: dict[str, tuple[str, ...]], only_known: bool = False,
                 declared: dict[str, tuple[float, float]] | None = None, new_aspect: str | None = None,
                 words: tuple[str, str] | None = None):
        """`new_aspect`: an aspect taken as the dataset's though nobody has scored it yet (its scale is
        given, or its scores are two-category `words`: then its categories)."""
        self.only_known = only_known
        self.declared = declared or {}  # the scale of each aspect where the dataset's layout says it
        self.by_id = {item.id: item for item in items}
        self.by_id.update((item.source_id, item) for item in items if item.source_id)
        self.aspects = {a.lower(): a for item in items for a in item.human} | {a.lower(): a for a in categories}
        self.given_categories = dict(categories)
        self.categories = dict(categories)
        if new_aspect and new_aspect.lower() not in self.aspects:  # a judge imported before anyone labels
            self.aspects[new_aspect.lower()] = new_aspect
            if words:
                self.categories[new_aspect] = words
        self.items = items

    def find(self, key: object) -> tuple[Item, str | None] | None:
        """(item, aspect named in the id or None) for an id, None when no item has it."""
        key = str(key).strip()
        if key in self.by_id:
            return self.by_id[key], None
        head, sep, tail = key.rpartition(ASPECT_SEPARATOR)
        if sep and head in self.by_id and tail.lower() in self.aspects:
            return self.by_id[head], self.aspects[tail.lower()]
        return None

    def aspect(self, name: str | None, where: str) -> str:
        """The dataset's aspect called `name` (any case); with none, the dataset's only aspect."""
        if name is None:
            if len(self.aspects) == 1:
                return next(iter(self.aspects.values()))
            raise JudgeImportError(f"{where}: which aspect are these scores of? The dataset has "
                                   f"{', '.join(self.aspects.values()) or 'none yet'}: name one (--aspect)")
        if name.lower() not in self.aspects:
            raise JudgeImportError(f"{where}: aspect {shown(name)!r} is not one of the dataset's "
                                   f"({', '.join(self.aspects.values()) or 'none yet'}); a judge of a new aspect is "
                                   "imported with its scale (--aspect NAME --scale LOW-HIGH)")
        return self.aspects[name.lower()]


def _judges(path: Path, data: object, lines: list[int] | None, keys: _Keys, name: str | None,
            aspect: str | None) -> dict[str, list[_Score | None]]:
    """Every judge's scores in the file, by the file's shape (module docstring); None for a score of
    an item the dataset does not have, with `keys.only_known`."""
    if isinstance(data, list):
        return {_named(path, name): _from_rows(path, data, lines, keys, aspect)}
    if not isinstance(data, dict) or not data:
        raise JudgeImportError(f"{path}: expected rows with an item id, or an object keyed by item id")
    if any(keys.find(key) for key in data):  # keyed by item
        scores = []
        for key, value in data.items():
            where = f"{path}: item {shown(key)!r}"
            if isinstance(value, dict):
                scores += [_score(keys, key, name_, value_, where, aspect) for name_, value_ in value.items()]
            else:
                scores.append(_score(keys, key, None, value, where, aspect))
        return {_named(path, name): scores}
    if all(isinstance(value, dict) for value in data.values()):  # {judge: {item: score}}
        chosen = {str(judge): value for judge, value in data.items() if name is None or str(judge) == name}
        if not chosen:
            judges = any(keys.find(key) for value in data.values() for key in value)  # its values are keyed by item
            raise JudgeImportError(f"{path}: no judge named {shown(name)!r}; it has {few(data)}" + ("" if judges else (
                " (if those are item ids, none is an item's id in the dataset: load the dataset with the column that "
                "holds them mapped to id, e.g. --map id=COLUMN)")))
        return {judge: [_score(keys, key, None, value, f"{path}: {judge}, item {shown(key)!r}", aspect)
                        for key, value in scores.items()] for judge, scores in chosen.items()}
    first = next(iter(data))
    raise JudgeImportError(f"{path}: item {shown(first)!r} is not an item of the dataset (neither its id nor the id "
                           "its file gave it)")


def _from_rows(path: Path, rows: list, lines: list[int] | None, keys: _Keys,
               aspect: str | None) -> list[_Score | None]:
    """The scores of a table: an id column, and an aspect's column or a score column."""
    scores = []
    for index, row in enumerate(rows):
        where = f"{path}:{lines[index]}" if lines else f"{path}: row {index + 1}"
        if not isinstance(row, dict):
            raise JudgeImportError(f"{where}: a row should be an object with an id and scores")
        id_column = next((c for c in row if str(c).lower() in ID_COLUMNS), None)
        if id_column is None:
            raise JudgeImportError(f"{where}: no id column ({', '.join(ID_COLUMNS)})")
        named = {c: keys.aspects[str(c).lower()] for c in row if str(c).lower() in keys.aspects}
        plain = [c for c in row if str(c).lower() in SCORE_COLUMNS and c not in named]
        if not named and not plain:
            raise JudgeImportError(f"{where}: no score column: name it as an aspect of the dataset "
                                   f"({', '.join(keys.aspects.values())}), or 'score' and say its aspect "
                                   "(--aspect: one of those, or a new one with --scale LOW-HIGH)")
        scores += [_score(keys, row[id_column], found, row[column], where, None) for column, found in named.items()]
        scores += [_score(keys, row[id_column], None, row[column], where, aspect) for column in plain]
    return scores


def _score(keys: _Keys, key: object, aspect: str | None, value: object, where: str,
           default: str | None) -> _Score | None:
    """One score, its item found and its aspect settled (named by its column or key, in the id, or
    the default); an unknown item is an error naming it, or None with `keys.only_known`."""
    found = keys.find(key)
    if found is None:
        if keys.only_known:
            return None
        raise JudgeImportError(f"{where}: {shown(str(key))!r} is not an item of the dataset (neither its id nor the "
                               "id its file gave it); a file made for more items than the dataset has is imported "
                               "with only the dataset's items asked for (--only-known)")
    item, in_id = found
    return _Score(item, keys.aspect(aspect or in_id or default, where), value, where, str(key).strip())


def _named(path: Path, name: str | None) -> str:
    """The judge's name: `name`, else the file's name."""
    return name or path.stem


def _rows(path: Path, sha: str, judge: str, scores: list[_Score], keys: _Keys,
          scale: tuple[float, float] | None) -> tuple[Template, str, list[dict], int]:
    """One judge's template, signature and judgment rows; raises JudgeImportError on a duplicate
    or a value off its aspect's scale."""
    seen: dict[tuple[str, str], str] = {}
    for score in scores:
        earlier = seen.setdefault((score.item.id, score.aspect), score.where)
        if earlier != score.where:
            raise JudgeImportError(f"{score.where}: {judge} scores item {score.key} on "
                                   f"{score.aspect} a second time (first at {earlier.rsplit(': ', 1)[-1]})")
    aspects = list(dict.fromkeys(score.aspect for score in scores))
    scales = {aspect: _scale(aspect, keys, scale) for aspect in aspects}
    template = _template(path, sha, judge, aspects, scales, keys.categories)
    fields = {"backend": "imported", "model": judge, "file": path.name, "sha256": sha[:12],
              "imported": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "template": template.label,
              "scale": ",".join(scale_text(a.lower(), f"{low:g}-{high:g}", keys.categories.get(a, ()))
                                for a, (low, high) in scales.items()),
              "version": __version__}
    signature = "|".join(f"{k}:{v}" for k, v in fields.items())
    rows, unscored, now = [], 0, time.time()
    for score in scores:
        value = _value(score, scales[score.aspect], keys.categories.get(score.aspect, ()))
        unscored += value is None
        key = score.aspect.lower()
        rows.append({
            "id": judgment_id(score.item.id, template.version, signature, key), "item_id": score.item.id,
            "dataset": score.item.dataset, "aspect": key, "template": template.name,
            "template_version": template.version, "signature": signature, "signature_json": json.dumps(fields),
            "call_key": None, "status": "unscored" if value is None else "ok", "score": value,
            "distribution": json.dumps({int(value): 1.0} if value is not None and value == int(value) else {}),
            "reason": "the file gives no score" if value is None else "",
            "detail": json.dumps({"file": str(path), "sha256": sha, "row": score.where.rsplit(": ", 1)[-1]}),
            "created": now,
        })
    return template, signature, rows, unscored


def _scale(aspect: str, keys: _Keys, given: tuple[float, float] | None) -> tuple[float, float]:
    """The scale a score of `aspect` must be on: its categories' indexes, `given`, the scale the
    dataset declares for it, or the whole-number range of the people's scores of it."""
    if aspect in keys.categories:
        return 0.0, float(len(keys.categories[aspect]) - 1)
    if given is not None:
        return float(given[0]), float(given[1])
    if aspect in keys.declared:
        return float(keys.declared[aspect][0]), float(keys.declared[aspect][1])
    found = [s for item in keys.items for s in item.human.get(aspect, ())]
    if not found:
        raise JudgeImportError(f"no one has scored {aspect} yet, so its scale is not known: give it (--scale 1-5)")
    return float(math.floor(min(found))), float(math.ceil(max(found)))


def _value(score: _Score, scale: tuple[float, float], categories: tuple[str, ...]) -> float | None:
    """A score as stored: a number on the scale, a category's index, None when the file gives none."""
    if score.value is None or (isinstance(score.value, str) and not score.value.strip()):
        return None
    if categories:
        index = float(categories.index(str(score.value))) if str(score.value) in categories else \
            category_index(score.value, categories)
        if index is None:
            raise JudgeImportError(f"{score.where}: {shown(str(score.value))!r} is not one of {score.aspect}'s "
                                   f"categories ({', '.join(categories)})")
        return index
    number = as_number(score.value)
    if number is None:
        raise JudgeImportError(f"{score.where}: {shown(str(score.value))!r} is not a number "
                               f"(a score of {score.aspect}); {NOT_A_SCORE}")
    if not scale[0] <= number <= scale[1]:
        raise JudgeImportError(f"{score.where}: {number:g} is off {score.aspect}'s scale {scale[0]:g}-{scale[1]:g}"
                               " (the people's; a judge on a scale of its own is imported with it: --scale LOW-HIGH, "
                               "e.g. 1-10, 0-100, 0-1)")
    return number


def _template(path: Path, sha: str, judge: str, aspects: list[str], scales: dict[str, tuple[float, float]],
              categories: dict[str, tuple[str, ...]]) -> Template:
    """The record of an imported judge, as a template version of kind "imported"."""
    slug = re.sub(r"[^\w.-]+", "-", judge).strip("-") or "judge"
    header = [f"name = {json.dumps('imported-' + slug)}", 'kind = "imported"',
              f"task = {json.dumps(f'Scores of {judge}, made elsewhere and imported from {path.name}.')}"]
    for aspect in aspects:
        low, high = scales[aspect]
        header += ["[[aspects]]", f"name = {json.dumps(aspect)}", f"min = {int(low)}", f"max = {int(high)}",
                   f"human = {json.dumps(aspect)}"]
        if aspect in categories:
            header.append(f"categories = {json.dumps(list(categories[aspect]))}")
    body = (f"No prompt: G-Eval Studio did not ask this judge. The scores of {judge} were imported from {path.name} "
            f"(SHA-256 {sha}).")
    try:
        return Template.parse("\n".join(["+++", *header, "+++", body]), source=f"{path.name} ({judge})")
    except TemplateError as exc:  # a scale a template cannot hold (e.g. 0-100)
        raise JudgeImportError(f"{path}: {judge}: {exc}") from None
