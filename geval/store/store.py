"""The SQLite store (through sqlite-utils, WAL mode): datasets and items, templates, the call
cache, judgments, runs, evaluation steps, notes, the user's labels, baseline scores and batches.
The only code that speaks SQL: everything else asks a method.

`items` and `item` give the items with their dataset's human side (`geval.data.labels`): the
dataset's own scores, the user's labels, or both; every analysis reads people through them.

`calls` is the cache: one row per model call, keyed by a hash of the judge settings, the
rendered prompt, the aspects asked and the code version; only successful calls are cached.
`judgments` is one row per (item, template version, signature, aspect), pointing at its
call; a failed judgment is stored with its reason and no call, so the next run retries it.

Every write is one transaction (BEGIN IMMEDIATE … COMMIT): a crash or an error leaves either
all of it or none of it. The schema version is in the `meta` table; `geval.store.schema`
brings an older store forward one version at a time, and a store from a newer version is
refused.

A run records the process id and host that started it; a run left 'running' by a process of
this host that is gone (SIGKILL, power loss) is marked 'crashed' when runs are listed or a new
run starts (`geval.processes`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import sqlite3
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import sqlite_utils
from platformdirs import user_data_dir
from sqlite_utils.db import jsonify_if_needed, quote_identifier

from geval.data.dataset import Dataset, given_scales, seen_scales
from geval.data.declared import category_index, check_scales
from geval.data.layouts import declared_scales
from geval.data.items import STORED, Item, Items, content_id, without_item
from geval.data.labels import DEFAULT_ANNOTATOR, FILE_COLUMNS, HUMAN_SIDES, chosen_side, with_labels
from geval.errors import DatasetError, LabelError, StoreError
from geval.judging.aspects import VARIANT
from geval.judging.judgment import AspectScore, Judgment, judge_name, told_apart
from geval.judging.templates import PROMPTS_DIR, Template, list_templates, parse_template
from geval.processes import HOST, cycles_uncollected, made_to_last, process_alive
from geval.store import kept, schema
from geval.store.records import SCORE_VALUES, most_probable, parsed, score_values
from geval.store.team import TeamTables
from geval.wording import counted

#: Keys per `SELECT ... WHERE key IN (...)`: well under SQLite's smallest variable limit (999).
CHUNK = 500
#: Results of reads kept until the next write (`Store._kept`): judgments of a combination, tables derived from
#: them (two judges' on the Agreement page: a control changed reads none again); reads of at most SMALL_READ cells
#: (the combinations, a signature) are kept beside these, not counted.
READS_KEPT, SMALL_READ = 8, 10_000
#: While `Store.reading_again` (work that reads the same tables again and again: a report): results kept, and the
#: cells they may hold in all (a judge's disagreements, its judgments and its scores at 1,000,000 judgments: 32 million).
READS_KEPT_AGAIN, CELLS_KEPT_AGAIN = 64, 40_000_000
#: Rows `read_table` turns into columns at a time (a million judgments' Python tuples and strings at once rose
#: 460 MB above the table they made, and left much of it to the process).
ROWS_AT_A_TIME = 50_000
_CALL_COLUMNS = "key, raw, scores, prompt_tokens, completion_tokens, cost, settings"
#: The tables a dataset's judgments rest on (`Store.kept_rows`), each with its primary key.
#: The judgments' columns made from the others when written (`_upsert_judgments`), left out of what is kept in a file.
DERIVED = ("most_probable",)
KEPT_TABLES = {"templates": "version", "steps": "key", "calls": "key", "runs": "id", "judgments": "id"}


def default_store_path() -> Path:
    """$GEVAL_STORE, else geval.sqlite in the user data directory."""
    return Path(os.environ.get("GEVAL_STORE") or Path(user_data_dir("geval-studio")) / "geval.sqlite")


class Store(TeamTables):
    """One SQLite file. Safe to use from several threads (a lock guards the connection)
    and from several processes (WAL mode and a busy timeout). `Store()` opens the default
    file (`Store.default_path()`), `Store(":memory:")` a store that lives in memory. A team's accounts
    and queues are methods of `TeamTables` (geval/store/team.py)."""

    default_path = staticmethod(default_store_path)

    def __init__(self, path: str | Path | None = None):
        self.path = ":memory:" if path == ":memory:" else Path(path or default_store_path())
        if self.path != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=60, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the store ({exc})") from None
        conn.execute("PRAGMA busy_timeout = 60000")
        self.db = sqlite_utils.Database(conn)
        self.lock = threading.RLock()
        self._items: dict[str, tuple[float, list[Item], str | None]] = {}  # dataset -> `_own`
        self._sided: dict[str, tuple[tuple, list[Item]]] = {}  # dataset -> (`human_stamp`, items with the human side)
        self._reads: dict[tuple, tuple[tuple[int, int], pd.DataFrame]] = {}  # `_kept`: key -> (data version, frame)
        self._again = 0  # `reading_again` blocks open
        with self.lock:
            if self.path != ":memory:":
                self._enable_wal()
            self._migrate()

    def _enable_wal(self) -> None:
        """Switch the file to WAL mode. SQLite does not wait on its busy timeout for this switch
        when other connections are opening the same new file, so retry for up to a minute."""
        deadline = time.monotonic() + 60
        while True:
            try:
                self.db.enable_wal()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise StoreError(f"{self.path}: cannot switch the store to WAL mode ({exc})") from None
                time.sleep(0.05)

    def _migrate(self) -> None:
        """Bring the store forward to schema.SCHEMA_VERSION, one migration (and one transaction) per
        version; a store made by a newer version is refused and left untouched."""
        if "meta" not in self.db.table_names():
            with self._write():  # not a bare CREATE: two first opens at once would race for the lock
                self.db["meta"].create({"key": str, "value": str}, pk="key", if_not_exists=True)
        version = self.schema_version()
        if version > schema.SCHEMA_VERSION:
            raise StoreError(f"{self.path}: made by a newer G-Eval Studio (schema {version}); upgrade this one")
        for target in range(version + 1, schema.SCHEMA_VERSION + 1):
            migration = schema.MIGRATIONS.get(target)
            if migration is None:
                raise StoreError(f"{self.path}: no migration to schema {target}; reinstall G-Eval Studio")
            with self._write():
                if self.schema_version() >= target:  # another process migrated it meanwhile
                    continue
                try:
                    migration(self.db)
                except sqlite3.Error as exc:
                    raise StoreError(
                        f"{self.path}: migrating from schema {target - 1} to {target} failed ({exc}); "
                        f"the store is unchanged at schema {target - 1}"
                    ) from None
                self.db["meta"].upsert({"key": "schema_version", "value": str(target)}, pk="key")

    def schema_version(self) -> int:
        """The schema version written in the store (0 for a new file)."""
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    @contextmanager
    def _write(self, derived: bool = False) -> Iterator[None]:
        """One write transaction. BEGIN IMMEDIATE takes the write lock up front, so another
        process's writer makes this one wait (up to the busy timeout) instead of failing half-way
        with "database is locked"; any error rolls everything back. A write that changed rows counts as a
        change of what the store holds (`content_version`) unless it writes only what is `derived` from that (a
        cache); one that looked and wrote nothing does not."""
        with self.lock:
            changes = self.db.conn.total_changes
            if self.db.conn.in_transaction:  # inside another write of this thread: a savepoint of it
                with self.db.atomic():
                    yield
                    self._count_change(derived, changes)
                return
            self.db.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._count_change(derived, changes)
                self.db.conn.execute("COMMIT")
            except BaseException:
                if self.db.conn.in_transaction:
                    self.db.conn.execute("ROLLBACK")
                raise

    def _count_change(self, derived: bool, changes: int) -> None:
        """Move `content_version` on, unless the write is of what is `derived` or changed no row since `changes`."""
        if not derived and self.db.conn.total_changes != changes:
            self.db.execute("INSERT INTO meta (key, value) VALUES ('content_version', '1') ON CONFLICT(key) "
                            "DO UPDATE SET value = CAST(value AS INTEGER) + 1")

    def content_version(self) -> int:
        """A number that grows with every write to what the store holds (by any process), not with a write of
        what is derived from it (`keep_derived`, baseline scores): what a kept result was made from."""
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'content_version'").fetchone()
        return int(row[0]) if row else 0

    def derived(self, key: str) -> bytes | None:
        """What `keep_derived` kept under `key`, if the store has not changed since (else None)."""
        with self.lock:
            row = self.db.execute("SELECT value FROM derived WHERE key = ? AND content_version = ?",
                                  [key, self.content_version()]).fetchone()
        return zlib.decompress(row[0]) if row else None

    def keep_derived(self, key: str, value: bytes, made_at: int) -> bool:
        """Keep `value`, derived from what the store held at `content_version` `made_at`, under `key` until the
        store changes; not when it changed meanwhile (False). What was kept before a change is dropped."""
        with self._write(derived=True):
            version = self.content_version()
            if version != made_at:
                return False
            self.db.execute("DELETE FROM derived WHERE content_version != ?", [version])
            self.db.execute("INSERT OR REPLACE INTO derived (key, content_version, value, created) VALUES (?, ?, ?, ?)",
                            [key, version, zlib.compress(value), time.time()])
        return True

    def _kept(self, key: tuple, read: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """`read()`, or what it gave the last time with this key when nothing has been written to
        the file since, by this connection or any other (the connection's change count and SQLite's
        data_version); READS_KEPT results are kept. A shallow copy: a caller's changes stay its own."""
        with self.lock:
            version = self._data_version()
            found = self._reads.pop(key, None)
            if found is None or found[0] != version:
                found = (version, read())
            self._reads = self._room([*self._reads.items(), (key, found)])  # the newest last
            return found[1].copy(deep=False)

    def _data_version(self) -> tuple[int, int]:
        """What changes when anything is written to the file, by this connection or any other (`_kept`)."""
        return self.db.conn.total_changes, self.db.execute("PRAGMA data_version").fetchone()[0]

    def remembered(self, key: tuple, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """`compute()`, a table derived from what the store holds, kept as its reads are (`_kept`): given back
        until the next write to the file, while it is among the last kept (a shallow copy each time)."""
        return self._kept(("remembered", *key), compute)

    def _room(self, reads: list) -> dict:
        """The most recently used of `reads` that may be kept: READS_KEPT of more than SMALL_READ cells, or while
        `reading_again` up to READS_KEPT_AGAIN of them holding CELLS_KEPT_AGAIN cells in all; small ones beside
        them (READS_KEPT_AGAIN in all)."""
        kept, large, cells = [], 0, 0
        for key, found in reversed(reads[-READS_KEPT_AGAIN:]):
            size = found[1].size
            if size > SMALL_READ:
                large, cells = large + 1, cells + size
                if kept and (cells > CELLS_KEPT_AGAIN if self._again else large > READS_KEPT):
                    continue
            kept.append((key, found))
        return dict(reversed(kept))

    @contextmanager
    def reading_again(self):
        """Keep more reads while inside (`_room`), for work that reads the same judgments and combinations
        many times over (a report's sections); back to READS_KEPT after."""
        with self.lock:
            self._again += 1
        try:
            yield self
        finally:
            with self.lock:
                self._again -= 1
                if not self._again:
                    self._reads = self._room(list(self._reads.items()))

    # --- datasets and items -------------------------------------------------------------
    def save_dataset(self, dataset: Dataset) -> None:
        """Store a dataset's items in one transaction: all of them or none. Items that a
        reloaded file no longer has are removed (their judgments stay, and are left out). The same items
        saved again as they are stored (a digest of their rows) write nothing."""
        rows = [{**item.to_row(), "position": i} for i, item in enumerate(dataset.items)]
        described = {"path": dataset.path, "layout": dataset.layout, "n_items": len(rows),
                     "skipped": json.dumps(dict(dataset.skipped)),
                     "categories": json.dumps({a: list(c) for a, c in dataset.categories.items()}),
                     "scales": json.dumps({a: list(s) for a, s in dataset.scales.items()}),
                     "digest": hashlib.sha256(orjson.dumps(rows, default=str, option=orjson.OPT_SORT_KEYS
                                                           | orjson.OPT_NON_STR_KEYS)).hexdigest()}
        with self.lock:  # the same file loaded again (a new server): nothing written, nothing kept made stale
            same = self.db.execute(f"SELECT loaded_at FROM datasets WHERE name = ? AND "
                                   f"{' AND '.join(f'{column} IS ?' for column in described)}",
                                   [dataset.name, *described.values()]).fetchone()
            if same:
                self._items[dataset.name] = (float(same[0]), list(dataset.items), described["digest"])
                return
        with self._write():
            kept = {row["id"] for row in rows}
            stale = [r["id"] for r in self.db["items"].rows_where("dataset = ?", [dataset.name], select="id")
                     if r["id"] not in kept]
            for start in range(0, len(stale), 500):
                chunk = stale[start:start + 500]
                self.db.execute(f"DELETE FROM items WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            self.db["items"].upsert_all(rows, pk="id")
            loaded = time.time()
            self.db["datasets"].upsert({"name": dataset.name, **described, "loaded_at": loaded}, pk="name")
            self._items[dataset.name] = (loaded, list(dataset.items), described["digest"])  # as `items` reads them

    def replaced_by(self, dataset: Dataset) -> dict[str, int]:
        """What saving `dataset` would leave out of the one stored under its name: {"items": the
        stored items it does not have, "judgments": and "labels": those made on them}. All 0 when
        nothing of that name is stored, or the new items include every stored one."""
        kept = {item.id for item in dataset.items}
        with self.lock:
            stale = [r["id"] for r in self.db["items"].rows_where("dataset = ?", [dataset.name], select="id")
                     if r["id"] not in kept]
            counts = {"items": len(stale), "judgments": 0, "labels": 0}
            for start in range(0, len(stale), 500):
                chunk = stale[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for table in ("judgments", "labels"):
                    counts[table] += self.db.execute(f"SELECT COUNT(*) FROM {table} WHERE item_id IN ({marks})",
                                                     chunk).fetchone()[0]
        return counts

    def dataset_layout(self, name: str) -> str:
        """The layout a stored dataset was loaded with ("" when it is not stored)."""
        with self.lock:
            row = self.db.execute("SELECT layout FROM datasets WHERE name = ?", [name]).fetchone()
        return (row[0] or "") if row else ""

    def dataset_loaded(self, name: str) -> float:
        """When a stored dataset was last loaded (0.0 when it is not stored): what changes when its items do."""
        with self.lock:
            row = self.db.execute("SELECT loaded_at FROM datasets WHERE name = ?", [name]).fetchone()
        return float(row[0] or 0.0) if row else 0.0

    def dataset_names(self) -> list[str]:
        """Names of the stored datasets."""
        with self.lock:
            return [r["name"] for r in self.db["datasets"].rows_where(order_by="name")]

    def not_stored(self, name: str) -> StoreError:
        """The error for a dataset `name` that is not stored here, naming those that are (to raise)."""
        return StoreError(f"dataset '{name}' is not in {self.path}; load or score it first "
                          f"(stored: {', '.join(self.dataset_names()) or 'none'})")

    def dataset(self, name: str, side: str = "people") -> Dataset:
        """A stored dataset, read back from its items (an upload whose file or column mapping is not at hand), their
        human scores those of `side` (`geval.data.labels.HUMAN_SIDES`; by default their own, whatever side is in
        force). Raises StoreError when nothing is stored under `name`."""
        with self.lock:
            row = self.db.execute("SELECT path, layout, skipped FROM datasets WHERE name = ?", [name]).fetchone()
        items = self._own_items(name) if row else []
        if not items:
            raise StoreError(f"no dataset named {name!r} in {self.path}; load its file first")
        if side != "people":
            items = with_labels(items, self._label_rows(name), side)
        return Dataset(name=name, path=row[0] or "", layout=row[1] or "", items=items,
                       skipped=Counter(json.loads(row[2] or "{}")), categories=self.categories(name),
                       scales=self.scales(name))

    def categories(self, name: str) -> dict[str, tuple[str, ...]]:
        """The categories of a stored dataset's categorical aspects ({} when it has none, or is not stored)."""
        with self.lock:
            row = self.db.execute("SELECT categories FROM datasets WHERE name = ?", [name]).fetchone()
        return {aspect: tuple(found) for aspect, found in json.loads((row and row[0]) or "{}").items()}

    def scales(self, name: str) -> dict[str, tuple[float, float]]:
        """The scale each aspect of a stored dataset was asked on, where declared: its layout's paper's
        (`geval.data.layouts.declared_scales`), and over them those kept with it (`Dataset.scales`,
        `declare_scales`); {} when none is, or the dataset is not stored."""
        with self.lock:
            row = self.db.execute("SELECT scales, layout FROM datasets WHERE name = ?", [name]).fetchone()
        if row is None:
            return {}
        return {**declared_scales(row[1] or ""),
                **{aspect: (float(low), float(high)) for aspect, (low, high) in json.loads(row[0] or "{}").items()}}

    def declare_categories(self, name: str, categories: dict[str, tuple[str, ...]]) -> None:
        """Keep `categories` ({aspect: its categories}) as the stored dataset's categorical aspects,
        beside those it has (a labels or judge file's two-category words: pass/fail, ...). Raises
        LabelError when one of them is categorical with other categories already, or people gave it
        numbers."""
        with self._write():
            known = self.categories(name)
            seen = seen_scales(self._own_items(name))
            lowered = {aspect.lower(): aspect for aspect in known}
            for aspect, found in categories.items():
                before = known.get(lowered.get(aspect.lower(), aspect))
                if before is not None and sorted(c.lower() for c in before) != sorted(c.lower() for c in found):
                    raise LabelError(f"{name}: {aspect} has the categories {', '.join(before)}, not "
                                     f"{', '.join(found)}; give its labels in those")
                if before is None and any(a.lower() == aspect.lower() for a in seen):
                    raise LabelError(f"{name}: people scored {aspect} with numbers; its labels cannot be "
                                     f"{' or '.join(found)} (give them as numbers, or as another aspect)")
                if before is None:
                    known[aspect] = tuple(found)
            self.db.execute("UPDATE datasets SET categories = ? WHERE name = ?",
                            [json.dumps({a: list(c) for a, c in known.items()}), name])

    def declare_scales(self, name: str, scales: dict[str, tuple[float, float]] | list[str]
                       ) -> dict[str, tuple[float, float]]:
        """Keep the scale each aspect of `scales` ({aspect: (low, high)}, in any case; or "ASPECT=LOW-HIGH"
        texts, a bare "LOW-HIGH" for every aspect scored with numbers) was asked on with the stored
        dataset `name`, beside those it has; returns them all. Raises StoreError when it is not stored,
        DatasetError when people's scores (its own, or your labels) fall outside one, the aspect is
        categorical, or neither people nor labels give it here (a misspelled name is not kept as a new aspect)."""
        if name not in self.dataset_names():
            raise StoreError(f"no dataset named {name!r} in {self.path}; load its file first")
        own, categories = self._own_items(name), self.categories(name)
        scored = [*own, *with_labels(own, self._label_rows(name), "you")]
        scales, seen = given_scales(scales, scored, categories), seen_scales(scored)
        known = {aspect.lower(): aspect for aspect in [*seen, *categories]}
        unknown = [aspect for aspect in scales if aspect.lower() not in known]
        if unknown:
            raise DatasetError(f"{name}: no aspect named {unknown[0]!r} has scores here (its own or labels); its "
                               f"aspects: {', '.join(known.values()) or 'none yet: label items first'}")
        checked = check_scales({known.get(a.lower(), a): s for a, s in scales.items()}, seen, name, categories)
        with self._write():
            kept = {**self.scales(name), **checked}
            self.db.execute("UPDATE datasets SET scales = ? WHERE name = ?",
                            [json.dumps({a: list(s) for a, s in kept.items()}), name])
        return kept

    def items(self, dataset: str) -> list[Item]:
        """A stored dataset's items, in file order, their human scores the dataset's human side
        (`human_side`: its own scores, the user's labels, or both). Read again only when the
        dataset is reloaded or its labels or side change."""
        with self.lock:
            stamp = self.human_stamp(dataset)
            known = self._sided.get(dataset)
            if known is None or known[0] != stamp:
                _, own, digest = self._own(dataset)
                sided = with_labels(own, self._label_rows(dataset), chosen_side(stamp[1], own))
                known = self._sided[dataset] = (stamp, Items(sided, {"digest": digest}))
        return Items(known[1], known[1].shared)  # a copy, that shares the items' columns (`geval.data.columns`)

    def _own_items(self, dataset: str) -> list[Item]:
        """A stored dataset's items with their own human scores, in file order (`_own`)."""
        return list(self._own(dataset)[1])

    def _own(self, dataset: str) -> tuple[float, list[Item], str | None]:
        """A stored dataset's load time, its items with their own human scores in file order and the digest of their
        rows (None for rows saved before schema 20), read in one snapshot once per load of the dataset: items are
        immutable, and a reload or deletion changes `dataset_loaded`."""
        with self.lock:
            known = self._items.get(dataset)
            if known is None or known[0] != self.dataset_loaded(dataset):
                with self._snapshot():
                    row = self.db.execute("SELECT loaded_at, digest FROM datasets WHERE name = ?",
                                          [dataset]).fetchone() or (0.0, None)
                    found = self.db.conn.execute(f"SELECT {', '.join(STORED)} FROM items WHERE dataset = ? "
                                                 "ORDER BY position", [dataset])
                    read = {}  # contexts shared, read once
                    with made_to_last():
                        known = self._items[dataset] = (float(row[0] or 0.0), Item.from_rows(found, read), row[1])
        return known

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Reads inside see the file as it was at the first (one read transaction; as they are inside a write)."""
        if self.db.conn.in_transaction:
            yield
            return
        self.db.conn.execute("BEGIN")
        try:
            yield
        finally:
            if self.db.conn.in_transaction:
                self.db.conn.execute("COMMIT")

    def item(self, item_id: str) -> Item:
        """One item by id, its human scores its dataset's human side (as `items` gives them)."""
        with self.lock:
            rows = list(self.db["items"].rows_where("id = ?", [item_id]))
        if not rows:
            raise StoreError(f"no item with id {item_id} in {self.path}")
        item = Item.from_row(rows[0])
        with self.lock:
            labels = list(self.db["labels"].rows_where("item_id = ?", [item_id]))
        side = self.human_side(item.dataset) if labels or not item.human else "people"
        return with_labels([item], labels, side)[0]

    def delete_dataset(self, name: str, dry_run: bool = False) -> dict[str, int]:
        """Delete a stored dataset: its items, its judgments, the notes on its items, the labels
        given to them and the searches made on it, in one transaction. Other datasets' rows,
        templates, runs and the call cache (whose answers other datasets may share) are never
        touched. The file on disk is not touched either.

        Returns {"items": n, "judgments": n, "notes": n, "labels": n, "searches": n}; with
        `dry_run`, only counts them (what a confirmation shows). Raises StoreError when nothing is
        stored under `name`.
        """
        where = {
            "items": ("dataset = ?", [name]),
            "judgments": ("dataset = ?", [name]),
            "notes": ("item_id IN (SELECT id FROM items WHERE dataset = ?)", [name]),
            "labels": ("dataset = ?", [name]),
            "searches": ("dataset = ?", [name]),
        }
        with self._write():
            counts = {table: self.db[table].count_where(sql, args) for table, (sql, args) in where.items()}
            known = self.db["datasets"].count_where("name = ?", [name])
            if not known and not any(counts.values()):
                stored = ", ".join(r["name"] for r in self.db["datasets"].rows_where(order_by="name")) or "none"
                raise StoreError(f"no dataset named {name!r} in {self.path}; stored: {stored}")
            if not dry_run:
                for table in ("notes", "judgments", "labels", "items", "searches"):  # notes first: they find items
                    self.db.execute(f"DELETE FROM {table} WHERE {where[table][0]}", where[table][1])
                self.db.execute("DELETE FROM datasets WHERE name = ?", [name])
        return counts

    def delete_template_version(self, version: str, dry_run: bool = False) -> dict[str, int]:
        """Delete a saved template version and the judgments made with it (on any dataset), in
        one transaction. Other versions of the same template, generated steps and the call
        cache stay.

        Returns {"templates": n, "judgments": n}; with `dry_run`, only counts them. Raises
        StoreError when neither the version nor any judgment made with it is stored.
        """
        with self._write():
            counts = {"templates": self.db["templates"].count_where("version = ?", [version]),
                      "judgments": self.db["judgments"].count_where("template_version = ?", [version])}
            if not any(counts.values()):
                raise StoreError(f"no template version {version!r} in {self.path}")
            if not dry_run:
                self.db.execute("DELETE FROM judgments WHERE template_version = ?", [version])
                self.db.execute("UPDATE templates SET parent = (SELECT parent FROM templates WHERE version = ?) "
                                "WHERE parent = ?", [version, version])  # its edits keep their lineage
                self.db.execute("DELETE FROM templates WHERE version = ?", [version])
        return counts

    # --- templates and evaluation steps ---------------------------------------------------
    def save_template(self, template: Template, comment: str = "", parent: str = "") -> str:
        """Keep a template version (idempotent); returns its version. A non-empty `comment` (what
        this version changes) is kept with it, replacing an earlier one; an empty one keeps it.
        `parent`: the version this one was edited from (`template_parents`), kept unless one is kept."""
        comment = " ".join(comment.split())
        parent = "" if parent == template.version else parent
        with self._write():
            if not self.db["templates"].count_where("version = ?", [template.version]):
                self.db["templates"].insert(
                    {"version": template.version, "name": template.name, "text": template.text,
                     "source": template.source, "created": time.time(), "comment": comment, "parent": parent}
                )
            else:
                if comment:
                    self.db["templates"].update(template.version, {"comment": comment})
                if parent:
                    self.db.execute("UPDATE templates SET parent = ? WHERE version = ? AND COALESCE(parent, '') = ''",
                                    [parent, template.version])
        return template.version

    def template_parents(self) -> dict[str, str]:
        """version -> the version it was saved as an edit of, for the versions that name one."""
        with self.lock:
            rows = self.db.execute("SELECT version, parent FROM templates WHERE COALESCE(parent, '') != ''").fetchall()
        return dict(rows)

    def save_imported(self, judges: list[tuple[Template, list[dict]]]) -> None:
        """Keep judges imported from a file (`geval.scoring.imports`): each one's template version
        of kind "imported" and its judgment rows, all in one transaction."""
        with self._write():
            for template, rows in judges:
                self.save_template(template)
                self._upsert_judgments(rows)

    def kept_rows(self, dataset: str) -> Iterator[tuple[str, dict]]:
        """Every row a dataset's judgments rest on, as (table, row): the template versions they were
        made with, those versions' evaluation steps, the cached calls they point at, and the
        judgment rows themselves (`geval.store.kept` writes them to a file; `keep_rows` reads them back)."""
        with self.lock:
            judgments = [{k: v for k, v in r.items() if k not in DERIVED}  # made again from the rest when read back
                         for r in self.db["judgments"].rows_where("dataset = ?", [dataset], order_by="id")]
            versions = sorted({row["template_version"] for row in judgments})
            keys = sorted({row["call_key"] for row in judgments if row["call_key"]})
            marks = ",".join("?" * len(versions))
            templates = list(self.db["templates"].rows_where(f"version IN ({marks})", versions, order_by="version"))
            steps = list(self.db["steps"].rows_where(f"template_version IN ({marks})", versions, order_by="key"))
            run_ids = sorted({row["run_id"] for row in judgments if row["run_id"] is not None})
            runs = list(self.db["runs"].rows_where(f"id IN ({','.join('?' * len(run_ids))})", run_ids, order_by="id"))
        yield from (("templates", row) for row in templates)
        yield from (("steps", row) for row in steps)
        yield from (("runs", row) for row in runs)
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start:start + CHUNK]
            with self.lock:
                calls = list(self.db["calls"].rows_where(f"key IN ({','.join('?' * len(chunk))})", chunk,
                                                          order_by="key"))
            yield from (("calls", row) for row in calls)
        yield from (("judgments", row) for row in judgments)

    def keep_rows(self, rows: Iterable[tuple[str, dict]]) -> Counter:
        """Write rows that `kept_rows` gave (another store's, or a file's) in one transaction: a
        template version, steps or call already here is kept as it is, a judgment row replaced by
        id. Returns how many rows of each table were read."""
        written: Counter = Counter()
        judgments: list[dict] = []
        run_ids: dict[int, int] = {}  # the kept run's id -> its id here (a new one, or the same run read before)
        with self._write():
            for table, row in rows:
                if table not in KEPT_TABLES:
                    raise StoreError(f"no table {table!r} among the kept judgments' ({', '.join(KEPT_TABLES)})")
                unknown = set(row) - set(self.db[table].columns_dict)
                if unknown:
                    raise StoreError(f"a kept {table} row has a column this store does not know ({sorted(unknown)[0]}): "
                                     "made by a newer G-Eval Studio; upgrade this one")
                if table == "judgments":
                    judgments.append({**row, "run_id": run_ids.get(row.get("run_id"))})
                elif table == "runs":
                    run_ids[row["id"]] = self._kept_run({k: v for k, v in row.items() if k != "id"})
                else:
                    self.db[table].insert(row, pk=KEPT_TABLES[table], ignore=True)
                written[table] += 1
            self._upsert_judgments(judgments)
        return written

    def _kept_run(self, run: dict) -> int:
        """The id of a kept run here: the same run (started at the same time with the same signature)
        when it was read before, else a new row. Call inside `_write()`."""
        found = self.db.execute("SELECT id FROM runs WHERE started = ? AND signature = ?",
                                [run.get("started"), run.get("signature")]).fetchone()
        return found[0] if found else self.db["runs"].insert(run).last_pk

    def export_judgments(self, dataset: str, path: str | Path) -> Counter:
        """Write every judgment of `dataset`, with the templates, steps and calls it rests on, to one
        xz-compressed file (`geval.store.kept`); returns the rows written per table."""
        return kept.write(self.kept_rows(dataset), dataset, path)

    def import_judgments(self, path: str | Path) -> Counter:
        """Read a file `export_judgments` wrote into this store, whose dataset must be loaded here
        (`kept_dataset(path)` names it); returns the rows read per table."""
        dataset = kept.dataset_of(path)
        if dataset not in self.dataset_names():
            raise StoreError(f"{path}: keeps judgments of {dataset!r}, which {self.path} does not hold; load it first "
                             f"(python -m geval datasets load {dataset})")
        return self.keep_rows(kept.read(path))

    kept_dataset = staticmethod(kept.dataset_of)

    def template_comments(self) -> dict[str, str]:
        """version -> comment, for the saved versions that have one."""
        with self.lock:
            rows = self.db.execute("SELECT version, comment FROM templates WHERE comment != ''").fetchall()
        return dict(rows)

    def template_versions(self, name: str | None = None) -> list[Template]:
        """Stored versions, newest first (optionally of one template name), read as they were stored."""
        where, args = ("name = ?", [name]) if name else (None, [])
        with self.lock:
            rows = list(self.db["templates"].rows_where(where, args, order_by="created desc"))
        return [parse_template(r["text"], source=f"{r['name']}@{r['version']}", check_form=False) for r in rows]

    def template(self, version: str) -> Template:
        """The stored template version `version` (12 hex digits). Raises StoreError when it is not stored."""
        with self.lock:
            row = self.db.execute("SELECT name, text FROM templates WHERE version = ?", [version]).fetchone()
        if row is None:
            raise StoreError(f"template version {version} is not in {self.path}; score with it first")
        return parse_template(row[1], source=f"{row[0]}@{version}", check_form=False)

    def steps(self, template: Template, settings: dict) -> str | None:
        """Generated evaluation steps for this template and judge, if any."""
        with self.lock:
            rows = list(self.db["steps"].rows_where("key = ?", [_steps_key(template, settings)]))
        return rows[0]["steps"] if rows else None

    def save_steps(self, template: Template, settings: dict, steps: str) -> None:
        """Keep generated evaluation steps for reuse."""
        with self._write():
            self.db["steps"].upsert(
                {"key": _steps_key(template, settings), "template_version": template.version,
                 "settings": json.dumps(settings, sort_keys=True), "steps": steps, "created": time.time()},
                pk="key",
            )

    # --- the call cache and judgments ------------------------------------------------------
    def cached_call(self, key: str) -> Judgment | None:
        """The stored answer to a call, or None."""
        return self.cached_calls([key]).get(key)

    def cached_calls(self, keys: list[str]) -> dict[str, Judgment]:
        """The stored answers to many calls at once: cache key -> Judgment, for the keys that
        are cached (missing keys are left out; repeated keys are looked up once). One query
        per CHUNK keys, straight through the connection."""
        unique = list(dict.fromkeys(keys))
        found: dict[str, Judgment] = {}
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start:start + CHUNK]
            sql = f"SELECT {_CALL_COLUMNS} FROM calls WHERE key IN ({','.join('?' * len(chunk))})"
            with self.lock:
                rows = self.db.conn.execute(sql, chunk).fetchall()
            found.update((row[0], _judgment_from_row(*row[1:])) for row in rows)
        return found

    def save_call(self, key: str, settings: dict, prompt: str, aspects: list[str], judgment: Judgment,
                  latency: float, rows: list[dict]) -> None:
        """Cache a successful call (`settings`: those that made it) and write its judgments, in
        one transaction."""
        self.save_calls([(key, settings, prompt, aspects, judgment, latency)], rows)

    def save_calls(self, calls: Iterable[tuple[str, dict, str, list[str], Judgment, float]], rows: list[dict]) -> None:
        """Cache many successful calls, each (key, settings, prompt, aspects, judgment, latency) as
        `save_call` takes them, and write judgment `rows`, all in one transaction (a batch's answers
        imported a few thousand at a time)."""
        now = time.time()
        with self._write():
            self._upsert("calls", "key", [
                {"key": key, "settings": json.dumps(settings, sort_keys=True), "prompt": prompt,
                 "aspects": json.dumps(aspects), "raw": json.dumps(judgment.raw),
                 "scores": json.dumps({k: asdict(v) for k, v in judgment.scores.items()}),
                 "prompt_tokens": judgment.prompt_tokens, "completion_tokens": judgment.completion_tokens,
                 "cost": judgment.cost, "latency": latency, "created": now}
                for key, settings, prompt, aspects, judgment, latency in calls])
            self._upsert_judgments(rows)

    def save_judgments(self, rows: list[dict]) -> None:
        """Write judgment rows (e.g. failures with their reasons), in one transaction."""
        with self._write():
            self._upsert_judgments(rows)

    def _upsert_judgments(self, rows: list[dict]) -> None:
        """Insert or update judgment rows by id (`_upsert`). Call inside `_write()`."""
        if any(row.get("id") is None for row in rows):
            raise StoreError("a judgment row has no id; build it with geval.store.records.judgment_id(...)")
        values = iter(most_probable([jsonify_if_needed(row["distribution"]) for row in rows
                                     if "distribution" in row]).tolist())
        self._upsert("judgments", "id", [{**row, "most_probable": _or_none(next(values))} if "distribution" in row
                                         else row for row in rows])  # kept beside its distribution (schema 19)

    def _upsert(self, table: str, key: str, rows: list[dict]) -> None:
        """Insert or update rows of `table` by its primary `key` with one executemany: a new row gets the
        columns given (others NULL); an existing one has those columns replaced, the rest kept. Call
        inside `_write()`."""
        if not rows:
            return
        columns = tuple(dict.fromkeys(column for row in rows for column in row))
        self.db.conn.executemany(_upsert_sql(table, key, columns),
                                 ([jsonify_if_needed(row.get(c)) for c in columns] for row in rows))

    def judgments(self, dataset: str | None = None, template_version: str | None = None,
                  signature: str | None = None, status: str | None = None, columns: Sequence[str] | None = None,
                  limit: int | None = None) -> pd.DataFrame:
        """Judgments as a table, joined with their call's prompt, raw answer, usage and
        per-aspect scores (`call_scores`: JSON, with coverage and parsed samples); or only the
        judgments' own `columns` (faster: no prompt is read); the first `limit` of them."""
        sql, args = self._judgments_sql(dataset, template_version, signature, status, columns, limit)
        return self._kept((sql, *args), lambda: read_table(self.db.conn, sql, args))

    def judgments_beside(self, read: pd.DataFrame, dataset: str, template_version: str, signature: str,
                         column: str) -> pd.DataFrame:
        """`read` (`judgments(dataset, template_version, signature, columns=...)` with item_id and aspect) and the
        judgments' `column` beside it, read now and not kept as `judgments` keeps its reads: for a table made of it
        once and kept in its place, e.g. the most probable scores of a million judgments.
        `column` alone is read when `read` is what `judgments` read last of them and nothing was written since (their
        order is the same: `_judgments_sql`); else `read`'s item and aspect are read beside it and the two joined row
        for row when the judgments read are `read`'s in its order (one judgment per item and aspect); else (a write
        between the reads) `read`'s columns and `column` read again, in one go."""
        with self.lock:
            if self._read_last(read, dataset, template_version, signature):
                sql, args = self._judgments_sql(dataset, template_version, signature, columns=(column,))
                return read.assign(**{column: read_table(self.db.conn, sql, args)[column].array})
            sql, args = self._judgments_sql(dataset, template_version, signature, columns=("item_id", "aspect", column))
            found = read_table(self.db.conn, sql, args)
            if found["item_id"].equals(read["item_id"]) and found["aspect"].equals(read["aspect"]):
                return read.assign(**{column: found[column].array})
            sql, args = self._judgments_sql(dataset, template_version, signature, columns=(*read.columns, column))
            return read_table(self.db.conn, sql, args)

    def _read_last(self, read: pd.DataFrame, dataset: str, template_version: str, signature: str) -> bool:
        """Whether `read` is the judgments of this combination as `judgments(..., columns=read.columns)` keeps them,
        read since the last write to the file (the same rows in the same order as a read now)."""
        sql, args = self._judgments_sql(dataset, template_version, signature, columns=tuple(read.columns))
        found = self._reads.get((sql, *args))
        return (found is not None and found[0] == self._data_version() and len(found[1]) == len(read)
                and found[1]["item_id"].equals(read["item_id"]) and found[1]["aspect"].equals(read["aspect"]))

    def _judgments_sql(self, dataset: str | None = None, template_version: str | None = None,
                       signature: str | None = None, status: str | None = None,
                       columns: Sequence[str] | None = None, limit: int | None = None) -> tuple[str, list]:
        """The statement and arguments of `judgments`."""
        clauses, args = [], []
        for column, value in (("j.dataset", dataset), ("j.template_version", template_version),
                              ("j.signature", signature), ("j.status", status)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        # One combination's: by time, then as its judgments of one time came through the combinations' index
        # (schema 15: by aspect, status and row), which `ORDER BY created` kept: in full, so that two reads of it
        # give the same order (`judgments_beside`), from schema 17's index sorted within a time only.
        order = "ORDER BY j.created" + (", j.aspect, j.status, j.rowid" if None not in (dataset, template_version,
                                                                                      signature) else "")
        if columns is not None:
            known = self.db["judgments"].columns_dict  # the table's columns read once (a PRAGMA each time)
            unknown = [c for c in columns if c not in known]
            if unknown:
                raise StoreError(f"judgments have no column '{unknown[0]}'")
            sql = f"SELECT {', '.join('j.' + c for c in columns)} FROM judgments j {where} {order}"
        else:
            sql = f"""SELECT j.*, c.prompt, c.raw, c.scores AS call_scores, c.prompt_tokens, c.completion_tokens,
                             c.cost, c.latency
                      FROM judgments j LEFT JOIN calls c ON c.key = j.call_key {where} {order}"""
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return sql, args

    def call_totals(self, dataset: str, template_version: str, signature: str) -> dict[str, float]:
        """The cached calls behind a combination's judgments, each once (a batch's call serves
        several items): calls, prompt_tokens, completion_tokens, cost and seconds (their latencies
        summed, as measured when each was made)."""
        sql = """SELECT COUNT(*), SUM(c.prompt_tokens), SUM(c.completion_tokens), SUM(c.cost), SUM(c.latency)
                 FROM (SELECT DISTINCT call_key FROM judgments INDEXED BY idx_judgments_calls
                       WHERE dataset = ? AND template_version = ? AND signature = ? AND call_key IS NOT NULL) k
                 JOIN calls c INDEXED BY idx_calls_usage ON c.key = k.call_key"""
        # from schema 16's indexes alone, the keys distinct in their index's order (a million: 1.0 s, not 1.5 s
        # for a list of them that each call is looked up in)
        with self.lock:
            row = self.db.execute(sql, [dataset, template_version, signature]).fetchone()
        names = ("calls", "prompt_tokens", "completion_tokens", "cost", "seconds")
        return {name: float(value or 0) for name, value in zip(names, row)}

    def seconds_per_call(self, settings: list[dict], last: int = 200) -> tuple[float, int] | None:
        """The median time a cached call made with any of these judge `settings` took (seconds),
        over its `last` calls, and how many that is; None when none was made in this store."""
        texts = [json.dumps(s, sort_keys=True) for s in settings]
        if not texts:
            return None
        sql = (f"SELECT latency FROM calls WHERE settings IN ({','.join('?' * len(texts))}) AND latency IS NOT NULL "
               "ORDER BY created DESC LIMIT ?")
        with self.lock:
            latencies = sorted(row[0] for row in self.db.conn.execute(sql, [*texts, last]).fetchall())
        if not latencies:
            return None
        middle = len(latencies) // 2
        median = latencies[middle] if len(latencies) % 2 else (latencies[middle - 1] + latencies[middle]) / 2
        return float(median), len(latencies)

    def failure_reasons(self, dataset: str, template_version: str, signature: str) -> dict[str, int]:
        """Why the judgments of one combination failed or could not be read: each reason (without
        the item it names) -> judgments, most common first."""
        sql = """SELECT reason, item_id FROM judgments WHERE dataset = ? AND template_version = ? AND signature = ?
                 AND status != 'ok' AND reason IS NOT NULL"""
        with self.lock:
            rows = self.db.conn.execute(sql, [dataset, template_version, signature]).fetchall()
        return dict(Counter(without_item(reason, item, dataset) for reason, item in rows).most_common())

    def answered(self, judgment_ids: list[str]) -> dict[str, tuple[str, str]]:
        """Of these judgments, those answered by a cached call: judgment id -> (status, reason):
        ('ok', '') or ('unscored', why no score was read); failed ones and missing ids are left
        out. One query per CHUNK ids."""
        found: dict[str, tuple[str, str]] = {}
        for start in range(0, len(judgment_ids), CHUNK):
            chunk = judgment_ids[start:start + CHUNK]
            sql = f"""SELECT j.id, j.status, COALESCE(j.reason, '') FROM judgments j JOIN calls c ON c.key = j.call_key
                      WHERE j.id IN ({','.join('?' * len(chunk))}) AND j.status IN ('ok', 'unscored')"""
            with self.lock:
                found.update((i, (status, reason)) for i, status, reason in self.db.conn.execute(sql, chunk))
        return found

    def combos(self, dataset: str) -> pd.DataFrame:
        """Each (template version, judge signature) scored on `dataset`, most recent first (see
        `_combos`; kept until the next write)."""
        return self._kept(("combos", dataset), lambda: self._combos(dataset))

    def _combos(self, dataset: str) -> pd.DataFrame:
        """Each (template version, judge signature) scored on `dataset`, most recent first.

        Parts of aspects (a checklist's questions, a batch's orders: keys with "#") are not counted.
        Columns: id (the template version and a short hash of the signature: stable, for links),
        template, template_version, signature, signature_json, model (the judge, as menus name it),
        label (template version, its comment when it has one, and judge; unique: where two would
        read alike, followed by the judge settings that differ, e.g. the base URL, or a short hash
        of the signature), aspects (list), ok, unscored, failed,
        first and last (times of the first and latest judgment), searched (a prompt search's variant), origin
        (0 for the original: the text of a file in prompts/ before any saved version, then saved versions by
        when they were saved, then by their first judgment; what a comparison reads as A, its edit as B). Empty
        when nothing is scored.
        """
        sql = """SELECT template_version, signature, aspect, SUM(status = 'ok') AS ok, SUM(status = 'unscored') AS unscored,
                        SUM(status = 'failed') AS failed, MIN(created) AS first, MAX(created) AS last
                 FROM judgments WHERE dataset = ? AND aspect NOT LIKE '%#%'
                 GROUP BY template_version, signature, aspect"""  # from the index idx_judgments_combos alone
        named = """SELECT template, signature_json FROM judgments WHERE dataset = ? AND template_version = ?
                   AND signature = ? LIMIT 1"""
        columns = ["id", "template", "template_version", "signature", "signature_json", "model", "label", "aspects",
                   "ok", "unscored", "failed", "first", "last", "searched", "origin"]
        with self.lock:
            per_aspect = pd.read_sql_query(sql, self.db.conn, params=[dataset])
        if per_aspect.empty:
            return pd.DataFrame(columns=columns)
        rows = []
        for (version, sig), part in per_aspect.groupby(["template_version", "signature"], sort=False):
            with self.lock:  # a judgment of it: every one made with one signature has its JSON
                template, signature_json = self.db.execute(named, [dataset, version, sig]).fetchone()
            fields = json.loads(signature_json or "{}")
            rows.append({
                "template": template, "template_version": version, "signature": sig,
                "signature_json": signature_json or "{}",
                "model": judge_name(fields) if "backend" in fields else sig[:40], "aspects": list(part["aspect"]),
                "ok": int(part["ok"].sum()), "unscored": int(part["unscored"].sum()),
                "failed": int(part["failed"].sum()), "first": float(part["first"].min()),
                "last": float(part["last"].max()),
            })
        frame = pd.DataFrame(rows).sort_values("last", ascending=False, ignore_index=True)
        short = [hashlib.sha256(s.encode()).hexdigest()[:8] for s in frame["signature"]]
        frame["id"] = [f"{version}-{h}" for version, h in zip(frame["template_version"], short)]
        comments = self.template_comments()
        names = [f"{t} ({comments[v]})" if v in comments else t for t, v in zip(frame["template"],
                                                                            frame["template_version"])]
        frame["label"] = [f"{n} · {m}" for n, m in zip(names, frame["model"])]
        fields = [json.loads(text) for text in frame["signature_json"]]
        frame["label"] = [f"{f['model']} (imported from {f.get('file', 'a file')})" if f.get("backend") == "imported"
                          else label for label, f in zip(frame["label"], fields)]
        frame["label"] = told_apart(list(frame["label"]), fields, short)
        frame["searched"] = frame["template"].str.contains(VARIANT, regex=False)  # a prompt search's variant
        files = {t.version for t in list_templates(PROMPTS_DIR)}
        with self.lock:
            saved = dict(self.db.execute("SELECT version, created FROM templates").fetchall())
        age = [(version not in files, saved.get(version, float("inf")), first)
               for version, first in zip(frame["template_version"], frame["first"])]
        order = sorted(range(len(age)), key=lambda i: age[i])
        frame["origin"] = [order.index(i) for i in range(len(age))]
        return frame[columns]

    # --- runs ---------------------------------------------------------------------------------
    def start_run(self, **fields) -> int:
        """Record a run's start, with this process's id and host; returns its id. Runs of
        this host whose process is gone are marked crashed first."""
        self.mark_crashed_runs()
        with self._write():
            row = {**fields, "started": time.time(), "status": "running", "pid": os.getpid(), "host": HOST}
            return self.db["runs"].insert(row).last_pk

    def finish_run(self, run_id: int, status: str, summary: dict | None = None) -> None:
        """Record how a run ended (its summary is kept when none is given)."""
        with self._write():
            fields = {"finished": time.time(), "status": status}
            if summary is not None:
                fields["summary"] = json.dumps(summary)
            self.db["runs"].update(run_id, fields)

    def run(self, run_id: int) -> dict:
        """One run's row. Raises StoreError when there is no such run."""
        with self.lock:
            rows = list(self.db["runs"].rows_where("id = ?", [run_id]))
        if not rows:
            raise StoreError(f"no run {run_id} in {self.path}")
        return rows[0]

    def runs(self, dataset: str | None = None) -> pd.DataFrame:
        """Runs, newest first, with the `judge` each asked, as menus name it, and for a run stopped or crashed
        the id of the run that `went_on` with it (the next of the same dataset, template, judge and settings as
        asked, and number of items: a Resume, or the same command again), else None, and the commonest reason its
        items failed, or else its answers held no score, as `cause` ("40 items: placeholder {{fact}} ...", "2 items,
        1 of them: HTTP 500 ..."; "" for neither). A run still 'running' whose process on this host is gone is marked
        and shown as 'crashed' (see `mark_crashed_runs`)."""
        self.mark_crashed_runs()
        where, args = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
        with self.lock:
            runs = pd.read_sql_query(f"SELECT * FROM runs {where} ORDER BY id DESC", self.db.conn, params=args)
        fields = [json.loads(text) if isinstance(text, str) and text else {} for text in runs["signature_json"]]
        runs["judge"] = [judge_name(f) if "backend" in f else "" for f in fields]
        same = runs.groupby(["dataset", "template", "signature", "n_items"], dropna=False, sort=False)["id"]
        went_on = same.shift(1).where(runs["status"].isin(["stopped", "crashed"]))
        runs["went_on"] = pd.Series([None if pd.isna(run) else int(run) for run in went_on], runs.index, object)
        runs["cause"] = [_cause(summary) for summary in runs["summary"]]
        return runs

    def mark_crashed_runs(self) -> list[int]:
        """Mark as 'crashed' the runs still 'running' whose process is gone (same host, pid not
        alive: killed, or the machine restarted); returns their ids. Runs of other hosts, and
        runs stored before pids were recorded (schema 1), are left as they are."""
        with self.lock:
            candidates = self.db.conn.execute(
                "SELECT id, pid, started FROM runs WHERE status = 'running' AND host = ? AND pid IS NOT NULL", [HOST]
            ).fetchall()
        gone = [(run_id, pid) for run_id, pid, started in candidates if not process_alive(pid, started)]
        if not gone:
            return []
        with self._write():
            for run_id, pid in gone:
                note = json.dumps({"crashed": f"process {pid} on {HOST} ended without finishing the run "
                                              "(killed?); start the same run again to resume it"})
                self.db.conn.execute("UPDATE runs SET status = 'crashed', summary = ? "
                                     "WHERE id = ? AND status = 'running'", [note, run_id])
        return [run_id for run_id, _ in gone]

    # --- prompt searches ----------------------------------------------------------------------
    def save_search(self, dataset: str, human: str, judge: str, result: str) -> None:
        """Keep a finished search's result (JSON, `TuneResult.to_json`) unless the same search
        (same judge, split and candidates' values) is kept already: a rerun served from the
        store spends no calls, and the first run's calls and cost are what the search cost."""
        path = {k: v for k, v in json.loads(result).items() if k not in ("calls", "cost")}
        key = hashlib.sha256(json.dumps([dataset, human, judge, path], sort_keys=True).encode()).hexdigest()[:16]
        with self._write():
            self.db["searches"].insert({"key": key, "dataset": dataset, "human": human, "judge": judge,
                                        "result": result, "created": time.time()}, pk="key", ignore=True)

    def searches(self, dataset: str) -> list[dict]:
        """The searches kept for `dataset`, oldest first: the result's fields
        (`TuneResult.to_json`) with the judge and when it was kept (`created`)."""
        with self.lock:
            rows = list(self.db["searches"].rows_where("dataset = ?", [dataset], order_by="created"))
        return [{**json.loads(row["result"]), "judge": row["judge"], "created": row["created"]} for row in rows]

    def log_search(self, dataset: str, human: str, judge: str, settings: dict, candidates: list[dict],
                   tune_groups: list[str], test_groups: list[str]) -> int:
        """Log a prompt search as it starts, before any judge call (`candidates`: name, template
        version and read of each); returns its id for `update_search`."""
        with self._write():
            return self.db["search_log"].insert({
                "dataset": dataset, "human": human, "judge": judge, "settings": json.dumps(settings, sort_keys=True),
                "candidates": json.dumps(candidates), "tune_groups": json.dumps(tune_groups),
                "test_groups": json.dumps(test_groups), "winner": "", "rounds": 0, "tested": 0, "status": "running",
                "reason": "", "started": time.time(), "pid": os.getpid(), "host": HOST}).last_pk

    def update_search(self, search_id: int, **fields) -> None:
        """Record how far a logged search went (rounds, winner, tested) or how it ended (status:
        finished, stopped or failed, with a reason; the end time is set then)."""
        if "status" in fields:
            fields["finished"] = time.time()
        if "tested" in fields:
            fields["tested"] = int(fields["tested"])
        with self._write():
            self.db["search_log"].update(search_id, fields)

    def search_log(self, dataset: str) -> list[dict]:
        """Every search logged on `dataset`, oldest first, lists and settings parsed; one left
        'running' by a process of this host that is gone reads 'failed' (killed)."""
        with self.lock:
            rows = list(self.db["search_log"].rows_where("dataset = ?", [dataset], order_by="started, id"))
        for row in rows:
            for key in ("settings", "candidates", "tune_groups", "test_groups"):
                row[key] = json.loads(row[key] or "null")
            if row["status"] == "running" and row["host"] == HOST and not process_alive(row["pid"], row["started"]):
                row["status"], row["reason"] = "failed", f"process {row['pid']} ended without finishing the search"
        return rows

    # --- batches ------------------------------------------------------------------------------
    def save_batch(self, file: str, run_id: int, batch_id: str, input_file_id: str, requests: int,
                   items: list[str], imported: bool = False) -> None:
        """Record (or update) the batch written to `file` by run `run_id`: its id (local until submitted)."""
        with self._write():
            self.db["batches"].upsert({"file": file, "run_id": run_id, "id": batch_id, "input_file_id": input_file_id,
                                       "requests": requests, "items": json.dumps(items), "imported": int(imported)},
                                      pk="file")

    def batches(self, run_id: int | None = None) -> list[dict]:
        """Recorded batches (of one run), in the order they were written; `items` as a list."""
        where, args = ("run_id = ?", [run_id]) if run_id is not None else (None, [])
        with self.lock:
            rows = list(self.db["batches"].rows_where(where, args, order_by="rowid"))
        return [_batch_record(row) for row in rows]

    def find_batch(self, batch_id: str) -> dict | None:
        """The recorded batch with this id, or None."""
        with self.lock:
            row = next(self.db["batches"].rows_where("id = ?", [batch_id], order_by="rowid", limit=1), None)
        return None if row is None else _batch_record(row)

    # --- baseline scores ------------------------------------------------------------------------
    def baseline_scores(self, keys: list[str]) -> dict[str, float]:
        """Cached baseline metric scores: key -> score, for the keys that are cached."""
        unique = list(dict.fromkeys(keys))
        found: dict[str, float] = {}
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start:start + CHUNK]
            with self.lock:
                found.update(self.db.execute(
                    f"SELECT key, score FROM baseline_scores WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall())
        return found

    def save_baseline_scores(self, signature: str, scores: dict[str, float]) -> None:
        """Cache baseline scores (key -> score) computed under `signature`, in one transaction."""
        now = time.time()
        with self._write(derived=True):
            self.db["baseline_scores"].upsert_all(
                [{"key": key, "signature": signature, "score": score, "created": now} for key, score in scores.items()],
                pk="key")

    def baseline_result(self, key: str) -> dict[str, float] | None:
        """A baseline's stored scores on a whole set of items (item id -> score, None where the metric gave none:
        NaN to pandas), or None (`compute_baselines` makes the key from the metric's signature and what it read of
        each item)."""
        with self.lock:
            row = self.db.execute("SELECT scores FROM baseline_results WHERE key = ?", [key]).fetchone()
        return parsed(row[0]) if row else None

    def baseline_values(self, key: str) -> np.ndarray | None:
        """`baseline_result`'s scores alone, as numbers in the order of its items (NaN where the metric gave none),
        read from those kept beside the JSON (schema 18: a million items' without parsing their JSON), else from
        the JSON; None when no result is stored under `key`."""
        with self.lock:
            row = self.db.execute("SELECT score_values FROM baseline_results WHERE key = ?", [key]).fetchone()
        if row is None:
            return None
        if row[0] is None:  # a row written without them
            return np.array(list(self.baseline_result(key).values()), dtype=float)
        return np.frombuffer(row[0], dtype=SCORE_VALUES).astype(float)

    def baseline_alias(self, alias: str) -> tuple[str, str] | None:
        """The reference kind and the key of a baseline's result filed under `alias` (`save_baseline_alias`), or
        None."""
        with self.lock:
            row = self.db.execute("SELECT reference, key FROM baseline_aliases WHERE alias = ?", [alias]).fetchone()
        return (row[0], row[1]) if row else None

    def save_baseline_alias(self, alias: str, key: str, reference: str) -> None:
        """File the baseline result kept under `key` (`save_baseline_result`), compared with texts of the kind
        `reference`, under `alias` too (`geval.analysis.baselines`: a key made without reading the items' texts)."""
        with self._write(derived=True):
            self.db["baseline_aliases"].upsert({"alias": alias, "key": key, "reference": reference,
                                                "created": time.time()}, pk="alias")

    def save_baseline_result(self, key: str, metric: str, signature: str, scores: dict[str, float]) -> None:
        """Keep a baseline's scores on a set of items (NaN, a score it could not give, is kept as null in the JSON),
        and as numbers beside it (`baseline_values`)."""
        blob = json.dumps({item: None if math.isnan(score) else score for item, score in scores.items()})
        with self._write(derived=True):
            self.db["baseline_results"].upsert({"key": key, "metric": metric, "signature": signature,
                                                "items": len(scores), "scores": blob,
                                                "score_values": score_values(scores.values()), "created": time.time()},
                                               pk="key")

    # --- the user's labels and the human side ---------------------------------------------------
    def save_label(self, item_id: str, aspect: str, score: float, annotator: str = DEFAULT_ANNOTATOR,
                   seconds: float | None = None, reason: str | None = None) -> dict | None:
        """Write one label at once, in its own transaction (a crash right after loses nothing): the
        `annotator`'s `score` of the item on `aspect`, the `seconds` it took and the `reason` given
        (None: the seconds or the reason given before stay). A label the annotator gave the item on
        that aspect before is replaced (its first time kept), and returned (None for a new one): what
        `save_labels([it])` puts back, for an undo."""
        with self._write():
            previous = self._label(item_id, aspect, annotator)
            before = previous or {}
            self._upsert_labels([{"item_id": item_id, "aspect": aspect, "score": score, "annotator": annotator,
                                  "seconds": before.get("seconds") if seconds is None else seconds,
                                  "created": before.get("created"),
                                  "reason": (before.get("reason") if reason is None else reason) or ""}])
        return previous

    def save_labels(self, labels: list[dict], dataset: str | None = None, on_scale: bool = False) -> dict[str, int]:
        """Write many labels (rows as `geval.data.labels.read_labels` gives them: item_id, aspect,
        score, annotator, optional dataset, seconds and created) in one transaction: all or none;
        each is `updated` now. An item_id is an item's id in the store, or the id its file gave it
        (`Item.source_id`: your file's id column), within `dataset` (or the label's own) when given.
        Raises LabelError, before writing anything, naming the first item id this store does not
        have (or that names items of several datasets), and with `on_scale` (a file's labels) the first off the
        scale declared for its aspect. Returns how many were written per dataset."""
        with self._write():
            if on_scale:
                self._on_declared_scales(self._as_categories(self._by_store_ids(labels, dataset)))
            return self._upsert_labels(labels, dataset)

    def _upsert_labels(self, labels: list[dict], dataset: str | None = None) -> dict[str, int]:
        """Insert or replace labels by (item, aspect, annotator); each takes its item's dataset.
        Returns how many per dataset. Call inside `_write()`."""
        labels = self._by_store_ids(labels, dataset)
        labels = self._as_categories(labels)
        now = time.time()
        rows = []
        for label in labels:
            annotator = label.get("annotator") or DEFAULT_ANNOTATOR
            rows.append({"id": _label_id(label["item_id"], label["aspect"], annotator),
                         "dataset": label["dataset"], "item_id": label["item_id"],
                         "aspect": label["aspect"], "annotator": annotator, "score": float(label["score"]),
                         "seconds": label.get("seconds"), "created": label.get("created") or now,
                         "updated": now, "reason": label.get("reason") or ""})
        self.db["labels"].upsert_all(rows, pk="id", alter=False)
        return dict(Counter(row["dataset"] for row in rows))

    def _on_declared_scales(self, labels: list[dict]) -> None:
        """LabelError naming the first label off the scale declared for its aspect (`scales`; not a category's
        index), before anything is written: a 9 on a declared 1-5 came in and every verdict read it on 1-5."""
        declared = {name: {a.lower(): s for a, s in self.scales(name).items()}
                    for name in dict.fromkeys(label["dataset"] for label in labels)}
        for label in labels:
            scale = declared[label["dataset"]].get(label["aspect"].lower())
            if scale and not label.get("categories") and not scale[0] <= float(label["score"]) <= scale[1]:
                raise LabelError(f"the label of item {label['given']} on {label['aspect']}, {float(label['score']):g}, "
                                 f"is off the scale {scale[0]:g}-{scale[1]:g} declared for it in {label['dataset']}: "
                                 "fix the label, or declare the scale people were asked on (--scale)")

    def _as_categories(self, labels: list[dict]) -> list[dict]:
        """`labels` with a label given as a category (`categories`: the pair of two-category words its
        `score` indexes, `geval.data.labels.read_labels`) scored as its index among its dataset's
        categories of the aspect, which it declares where the dataset has none yet. Call inside `_write()`."""
        worded = [label for label in labels if label.get("categories")]
        for dataset in dict.fromkeys(label["dataset"] for label in worded):
            self.declare_categories(dataset, {label["aspect"]: tuple(label["categories"])
                                              for label in worded if label["dataset"] == dataset})
        out = []
        for label in labels:
            if label.get("categories"):
                known = self.categories(label["dataset"])
                aspect = next((a for a in known if a.lower() == label["aspect"].lower()), label["aspect"])
                label = {**label, "aspect": aspect,
                         "score": category_index(label["categories"][int(label["score"])], known[aspect])}
            out.append(label)
        return out

    def _by_store_ids(self, labels: list[dict], dataset: str | None) -> list[dict]:
        """`labels` with each item_id the store's own and the item's dataset (a file's own id
        resolved through `items.source_id`); LabelError for one that names no item, or several."""
        wanted = [(label["item_id"], dataset or label.get("dataset") or None) for label in labels]
        ids = list(dict.fromkeys(item for item, _ in wanted))
        found: dict[str, list[tuple[str, str]]] = {}  # a given id -> [(store id, dataset)]
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            marks = ",".join("?" * len(chunk))
            for given, item, owner in self.db.execute(
                    f"SELECT id, id, dataset FROM items WHERE id IN ({marks}) UNION ALL "
                    f"SELECT source_id, id, dataset FROM items WHERE source_id IN ({marks})", chunk + chunk):
                found.setdefault(given, []).append((item, owner))
        resolved = []
        for label, (given, within) in zip(labels, wanted):
            matches = list(dict.fromkeys(m for m in found.get(given, []) if within is None or m[1] == within))
            if len(matches) > 1:
                raise LabelError(f"item id {given} names items of several datasets "
                                 f"({', '.join(sorted({m[1] for m in matches}))}): say which (--dataset, or a "
                                 "dataset column)")
            if not matches:
                missing = {i for i, w in wanted if not [m for m in found.get(i, []) if w is None or m[1] == w]}
                more = f" (nor are {len(missing) - 1} more)" if len(missing) > 1 else ""
                where = f" of dataset {within!r}" if within else ""
                raise LabelError(f"item {given}{where} is not in {self.path}{more}; load the dataset the labels were "
                                 "given on first")
            resolved.append({**label, "item_id": matches[0][0], "dataset": matches[0][1], "given": given})
        return resolved

    def _label(self, item_id: str, aspect: str, annotator: str) -> dict | None:
        rows = list(self.db["labels"].rows_where("id = ?", [_label_id(item_id, aspect, annotator)]))
        return {column: rows[0][column] for column in FILE_COLUMNS} if rows else None

    def delete_label(self, item_id: str, aspect: str, annotator: str = DEFAULT_ANNOTATOR) -> bool:
        """Remove the `annotator`'s label of an item on `aspect`; whether there was one."""
        with self._write():
            gone = self.db.execute("DELETE FROM labels WHERE id = ?",
                                   [_label_id(item_id, aspect, annotator)]).rowcount
        return bool(gone)

    def labels(self, dataset: str | None = None, annotator: str | None = None) -> pd.DataFrame:
        """The labels (of one dataset, of one annotator), in the order they were first given: one
        row each, with the columns of `geval.data.labels.FILE_COLUMNS`."""
        clauses = [(c, v) for c, v in (("dataset", dataset), ("annotator", annotator)) if v is not None]
        where = ("WHERE " + " AND ".join(f"{c} = ?" for c, _ in clauses)) if clauses else ""
        sql = f"SELECT {', '.join(FILE_COLUMNS)} FROM labels {where} ORDER BY created, rowid"
        with self.lock:
            return pd.read_sql_query(sql, self.db.conn, params=[v for _, v in clauses])

    def _label_rows(self, dataset: str) -> list[dict]:
        with self.lock:
            return list(self.db["labels"].rows_where("dataset = ?", [dataset],
                                                     select="item_id, aspect, annotator, score"))

    def set_human_side(self, dataset: str, side: str) -> None:
        """Keep the stored dataset's human side: one of `geval.data.labels.HUMAN_SIDES`, or "" to
        let what the dataset has choose (its own scores when it has any, else the labels)."""
        if side and side not in HUMAN_SIDES:
            raise LabelError(f"human side '{side}' is unknown; use one of {', '.join(HUMAN_SIDES)} (or '' for "
                             "the dataset's own scores when it has any, else your labels)")
        with self._write():
            if not self.db["datasets"].count_where("name = ?", [dataset]):
                raise StoreError(f"no dataset named {dataset!r} in {self.path}; load its file first")
            self.db["datasets"].update(dataset, {"human_side": side})

    def human_side(self, dataset: str) -> str:
        """The dataset's human side in force: the one kept (`set_human_side`), else "people" when
        its items have human scores of their own, else "you" (`geval.data.labels.chosen_side`)."""
        return chosen_side(self.human_stamp(dataset)[1], self._own_items(dataset))

    def human_stamp(self, dataset: str) -> tuple:
        """What changes when the dataset's human side does: when it was loaded, the side kept, its
        labels' count, latest write and sum, and the scales and categories declared for its aspects (for
        caches of what is computed from it)."""
        with self.lock:
            row = self.db.execute("SELECT human_side, scales, categories FROM datasets WHERE name = ?",
                                  [dataset]).fetchone()
            count, latest, total = self.db.execute(
                "SELECT COUNT(*), MAX(updated), SUM(score) FROM labels WHERE dataset = ?", [dataset]).fetchone()
        return (self.dataset_loaded(dataset), (row[0] or "") if row else "", int(count), float(latest or 0.0),
                float(total or 0.0), ((row[1] or "") + (row[2] or "")) if row else "")

    # --- notes ---------------------------------------------------------------------------------
    def set_note(self, item_id: str, flag: bool, note: str, beside: str = "") -> None:
        """Flag an item and/or keep a note on it; `beside`: the id of the combination (`combos`' id) whose
        score it was written beside, "" for none."""
        with self._write():
            self.db["notes"].upsert({"item_id": item_id, "flag": int(flag), "note": note, "updated": time.time(),
                                     "combo": beside}, pk="item_id")

    def notes(self) -> dict[str, tuple[bool, str]]:
        """item id -> (flagged, note)."""
        with self.lock:
            return {r["item_id"]: (bool(r["flag"]), r["note"]) for r in self.db["notes"].rows}

    def notes_beside(self) -> dict[str, str]:
        """item id -> the id of the combination its note was written beside (notes written beside one)."""
        with self.lock:
            return dict(self.db.execute("SELECT item_id, combo FROM notes WHERE combo != ''").fetchall())

    def close(self) -> None:
        """Close the connection."""
        self.db.conn.close()


def read_table(conn: sqlite3.Connection, sql: str, args: list) -> pd.DataFrame:
    """`pd.read_sql_query`, ROWS_AT_A_TIME rows made into columns at a time and the parts joined (the same table:
    read again at once when a column's type differs between parts, e.g. a part's scores all NULL), with the cycle
    collector paused (`cycles_uncollected`): a million rows' tuples are made and freed meanwhile, and each
    collection walked them, promoted them, and at last walked every object alive (a million items among them:
    1.1 s of a report at 1,000,000 judgments)."""
    with cycles_uncollected():
        parts = list(pd.read_sql_query(sql, conn, params=args, chunksize=ROWS_AT_A_TIME))
        if len(parts) == 1:
            return parts[0]
        if any(not part.dtypes.equals(parts[0].dtypes) for part in parts[1:]):
            del parts
            return pd.read_sql_query(sql, conn, params=args)
        return _joined(parts)


def _joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """`parts` (of the same columns and types) as one table, each Arrow text column in one piece as a read in one go
    makes it (in pieces, a million judgments' ids took a fifth longer to factorize)."""
    table = pd.concat(parts, ignore_index=True)
    for position, values in enumerate([values for _, values in table.items()]):
        if isinstance(values.array, pd.arrays.ArrowStringArray):
            table.isetitem(position, pd.arrays.ArrowStringArray(values.array.__arrow_array__().combine_chunks(),
                                                                dtype=values.dtype))
    return table


def _cause(summary: str | None) -> str:
    """The commonest reason a run's items failed, from its stored summary, with how many; where none failed, why its
    answers held no score ("" where all did)."""
    found = json.loads(summary) if isinstance(summary, str) and summary else {}
    for key, what in (("reasons", "item"), ("unread", "answer")):
        counts = found.get(key) or {}
        if counts:
            why, total = max(counts, key=counts.get), sum(counts.values())
            share = f", {counts[why]} of them" if counts[why] < total else ""
            return f"{counted(total, what)}{' with no score' if key == 'unread' else ''}{share}: {why}"
    return ""


@functools.lru_cache(maxsize=64)
def _or_none(value: float) -> float | None:
    """A number as a REAL column keeps it: NaN as NULL."""
    return None if math.isnan(value) else value


def _upsert_sql(table: str, key: str, columns: tuple[str, ...]) -> str:
    """`Store._upsert`'s statement for these columns."""
    names = ", ".join(quote_identifier(c) for c in columns)
    updates = ", ".join(f"{quote_identifier(c)} = excluded.{quote_identifier(c)}" for c in columns if c != key)
    return (f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))}) "
            f"ON CONFLICT({key}) DO {'UPDATE SET ' + updates if updates else 'NOTHING'}")


def _batch_record(row: dict) -> dict:
    """A batches row as `Store.batches` gives it: `items` as a list, `imported` as a bool."""
    return {**row, "items": json.loads(row["items"]), "imported": bool(row["imported"])}


def _judgment_from_row(raw: str, scores: str, prompt_tokens: int, completion_tokens: int, cost: float,
                       settings: str) -> Judgment:
    """A cached call's stored columns, read back into the Judgment that was saved (with the
    settings that made it)."""
    parsed = {k: AspectScore(**{**v, "distribution": {int(s): p for s, p in v["distribution"].items()}})
              for k, v in json.loads(scores).items()}
    return Judgment(parsed, json.loads(raw), prompt_tokens, completion_tokens, cost, json.loads(settings))


def _label_id(item_id: str, aspect: str, annotator: str) -> str:
    """A label's id: one label per item, aspect (any case) and annotator."""
    return content_id(item_id, aspect.lower(), annotator)


def _steps_key(template: Template, settings: dict) -> str:
    blob = json.dumps({"template": template.version, "settings": settings}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]
