"""The SQLite store (through sqlite-utils, WAL mode): items, templates, the call cache,
judgments, runs, evaluation steps, notes.

`calls` is the cache: one row per model call, keyed by a hash of the judge settings, the
rendered prompt and the aspects asked; only successful calls are cached. `judgments` is one
row per (item, template version, signature, aspect), pointing at its call; a failed
judgment is stored with its reason and no call, so the next run retries it.

Every write is one transaction (BEGIN IMMEDIATE … COMMIT): a crash or an error leaves either
all of it or none of it. The schema version is in the `meta` table; `MIGRATIONS` brings an
older store forward one version at a time, and a store from a newer version is refused.

A run records the process id and host that started it; a run left 'running' by a process of
this host that is gone (SIGKILL, power loss) is marked 'crashed' when runs are listed or a new
run starts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import sqlite_utils
from platformdirs import user_data_dir
from sqlite_utils.db import jsonify_if_needed, quote_identifier

from geval.errors import StoreError
from geval.items import Item
from geval.judges.base import AspectScore, Judgment
from geval.loaders.base import Dataset
from geval.templates import Template, parse_template


def _schema_1(db: sqlite_utils.Database) -> None:
    """The first schema: datasets, items, templates, steps, calls, judgments, runs, notes."""
    db["datasets"].create(
        {"name": str, "path": str, "layout": str, "n_items": int, "skipped": str, "loaded_at": float},
        pk="name", if_not_exists=True,
    )
    db["items"].create(
        {"id": str, "dataset": str, "position": int, "level": str, "context": str, "response": str,
         "grounding": str, "system": str, "group_id": str, "human": str},
        pk="id", if_not_exists=True,
    )
    db["items"].create_index(["dataset", "position"], if_not_exists=True)
    db["templates"].create(
        {"version": str, "name": str, "text": str, "source": str, "created": float},
        pk="version", if_not_exists=True,
    )
    db["steps"].create(
        {"key": str, "template_version": str, "settings": str, "steps": str, "created": float},
        pk="key", if_not_exists=True,
    )
    db["calls"].create(
        {"key": str, "settings": str, "prompt": str, "aspects": str, "raw": str, "scores": str,
         "prompt_tokens": int, "completion_tokens": int, "cost": float, "latency": float, "created": float},
        pk="key", if_not_exists=True,
    )
    db["judgments"].create(
        {"id": str, "item_id": str, "dataset": str, "aspect": str, "template": str,
         "template_version": str, "signature": str, "signature_json": str, "call_key": str,
         "status": str, "score": float, "distribution": str, "reason": str, "run_id": int,
         "created": float},
        pk="id", if_not_exists=True,
    )
    db["judgments"].create_index(["dataset", "template_version", "signature"], if_not_exists=True)
    db["runs"].create(
        {"id": int, "started": float, "finished": float, "dataset": str, "template": str,
         "signature": str, "signature_json": str, "settings_given": str, "environment": str,
         "n_items": int, "status": str, "summary": str},
        pk="id", if_not_exists=True,
    )
    db["notes"].create({"item_id": str, "flag": int, "note": str, "updated": float}, pk="item_id",
                       if_not_exists=True)


def _schema_2(db: sqlite_utils.Database) -> None:
    """Runs record the process that made them (pid and host), so a killed run can be told
    from a running one. Runs stored before have neither and are left as they are."""
    db["runs"].add_column("pid", int)
    db["runs"].add_column("host", str)


#: version -> the function that brings a store from version - 1 to it. Each runs in one
#: transaction with the version bump, so a failed migration leaves the store as it was.
#: A schema change is a new function here and SCHEMA_VERSION + 1; never edit an old one.
MIGRATIONS: dict[int, Callable[[sqlite_utils.Database], None]] = {1: _schema_1, 2: _schema_2}
SCHEMA_VERSION = 2

#: Keys per `SELECT ... WHERE key IN (...)`: well under SQLite's smallest variable limit (999).
CHUNK = 500
_CALL_COLUMNS = "key, raw, scores, prompt_tokens, completion_tokens, cost, settings"


#: This machine's name, recorded with each run beside its process id.
HOST = socket.gethostname()


def default_store_path() -> Path:
    """$GEVAL_STORE, else geval.sqlite in the user data directory."""
    return Path(os.environ.get("GEVAL_STORE") or Path(user_data_dir("geval-studio")) / "geval.sqlite")


def judgment_id(item_id: str, template_version: str, signature: str, aspect: str) -> str:
    """The identity of one judgment: same item, template, judge and aspect = same row."""
    return hashlib.sha256("\x1f".join((item_id, template_version, signature, aspect)).encode()).hexdigest()[:24]


class Store:
    """One SQLite file. Safe to use from several threads (a lock guards the connection)
    and from several processes (WAL mode and a busy timeout)."""

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
        with self.lock:
            if self.path != ":memory:":
                self.db.enable_wal()
            self._migrate()

    def _migrate(self) -> None:
        """Bring the store forward to SCHEMA_VERSION, one migration (and one transaction) per
        version; a store made by a newer version is refused and left untouched."""
        if "meta" not in self.db.table_names():
            with self._write():  # not a bare CREATE: two first opens at once would race for the lock
                self.db["meta"].create({"key": str, "value": str}, pk="key", if_not_exists=True)
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: made by a newer G-Eval Studio (schema {version}); upgrade this one")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            migration = MIGRATIONS.get(target)
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
    def _write(self) -> Iterator[None]:
        """One write transaction. BEGIN IMMEDIATE takes the write lock up front, so another
        process's writer makes this one wait (up to the busy timeout) instead of failing half-way
        with "database is locked"; any error rolls everything back."""
        with self.lock:
            if self.db.conn.in_transaction:  # inside another write of this thread: a savepoint of it
                with self.db.atomic():
                    yield
                return
            self.db.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.db.conn.execute("COMMIT")
            except BaseException:
                if self.db.conn.in_transaction:
                    self.db.conn.execute("ROLLBACK")
                raise

    # --- datasets and items -------------------------------------------------------------
    def save_dataset(self, dataset: Dataset) -> None:
        """Store a dataset's items in one transaction: all of them or none. Items that a
        reloaded file no longer has are removed (their judgments stay, and are left out)."""
        rows = [{**item.to_row(), "position": i} for i, item in enumerate(dataset.items)]
        with self._write():
            kept = {row["id"] for row in rows}
            stale = [r["id"] for r in self.db["items"].rows_where("dataset = ?", [dataset.name], select="id")
                     if r["id"] not in kept]
            for start in range(0, len(stale), 500):
                chunk = stale[start:start + 500]
                self.db.execute(f"DELETE FROM items WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            self.db["items"].upsert_all(rows, pk="id")
            self.db["datasets"].upsert(
                {"name": dataset.name, "path": dataset.path, "layout": dataset.layout, "n_items": len(rows),
                 "skipped": json.dumps(dict(dataset.skipped)), "loaded_at": time.time()},
                pk="name",
            )

    def dataset_names(self) -> list[str]:
        """Names of the stored datasets."""
        with self.lock:
            return [r["name"] for r in self.db["datasets"].rows_where(order_by="name")]

    def items(self, dataset: str) -> list[Item]:
        """A stored dataset's items, in file order."""
        with self.lock:
            rows = list(self.db["items"].rows_where("dataset = ?", [dataset], order_by="position"))
        return [Item.from_row(r) for r in rows]

    def item(self, item_id: str) -> Item:
        """One item by id."""
        with self.lock:
            rows = list(self.db["items"].rows_where("id = ?", [item_id]))
        if not rows:
            raise StoreError(f"no item with id {item_id} in {self.path}")
        return Item.from_row(rows[0])

    def delete_dataset(self, name: str, dry_run: bool = False) -> dict[str, int]:
        """Delete a stored dataset: its items, its judgments and the notes on its items, in one
        transaction. Other datasets' rows, templates, runs and the call cache (whose answers
        other datasets may share) are never touched. The file on disk is not touched either.

        Returns {"items": n, "judgments": n, "notes": n}; with `dry_run`, only counts them
        (what a confirmation shows). Raises StoreError when nothing is stored under `name`.
        """
        where = {
            "items": ("dataset = ?", [name]),
            "judgments": ("dataset = ?", [name]),
            "notes": ("item_id IN (SELECT id FROM items WHERE dataset = ?)", [name]),
        }
        with self._write():
            counts = {table: self.db[table].count_where(sql, args) for table, (sql, args) in where.items()}
            known = self.db["datasets"].count_where("name = ?", [name])
            if not known and not any(counts.values()):
                stored = ", ".join(r["name"] for r in self.db["datasets"].rows_where(order_by="name")) or "none"
                raise StoreError(f"no dataset named {name!r} in {self.path}; stored: {stored}")
            if not dry_run:
                for table in ("notes", "judgments", "items"):  # notes first: they find items by dataset
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
                self.db.execute("DELETE FROM templates WHERE version = ?", [version])
        return counts

    # --- templates and evaluation steps ---------------------------------------------------
    def save_template(self, template: Template) -> str:
        """Keep a template version (idempotent); returns its version."""
        with self._write():
            if not self.db["templates"].count_where("version = ?", [template.version]):
                self.db["templates"].insert(
                    {"version": template.version, "name": template.name, "text": template.text,
                     "source": template.source, "created": time.time()}
                )
        return template.version

    def template_versions(self, name: str | None = None) -> list[Template]:
        """Stored versions, newest first (optionally of one template name)."""
        where, args = ("name = ?", [name]) if name else (None, [])
        with self.lock:
            rows = list(self.db["templates"].rows_where(where, args, order_by="created desc"))
        return [parse_template(r["text"], source=f"{r['name']}@{r['version']}") for r in rows]

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
        with self._write():
            self.db["calls"].upsert(
                {"key": key, "settings": json.dumps(settings, sort_keys=True), "prompt": prompt,
                 "aspects": json.dumps(aspects), "raw": json.dumps(judgment.raw),
                 "scores": json.dumps({k: asdict(v) for k, v in judgment.scores.items()}),
                 "prompt_tokens": judgment.prompt_tokens, "completion_tokens": judgment.completion_tokens,
                 "cost": judgment.cost, "latency": latency, "created": time.time()},
                pk="key",
            )
            self._upsert_judgments(rows)

    def save_judgments(self, rows: list[dict]) -> None:
        """Write judgment rows (e.g. failures with their reasons), in one transaction."""
        with self._write():
            self._upsert_judgments(rows)

    def _upsert_judgments(self, rows: list[dict]) -> None:
        """Insert or update judgment rows by id with one executemany: a new row gets the
        columns given (others NULL); an existing one has those columns replaced, the rest kept.
        Call inside `_write()`."""
        if not rows:
            return
        columns = list(dict.fromkeys(column for row in rows for column in row))
        if "id" not in columns or any(row.get("id") is None for row in rows):
            raise StoreError("a judgment row has no id; build it with geval.store.judgment_id(...)")
        names = ", ".join(quote_identifier(c) for c in columns)
        updates = ", ".join(f"{quote_identifier(c)} = excluded.{quote_identifier(c)}" for c in columns if c != "id")
        sql = (f"INSERT INTO judgments ({names}) VALUES ({', '.join('?' * len(columns))}) "
               f"ON CONFLICT(id) DO {'UPDATE SET ' + updates if updates else 'NOTHING'}")
        self.db.conn.executemany(sql, ([jsonify_if_needed(row.get(c)) for c in columns] for row in rows))

    def judgments(self, dataset: str | None = None, template_version: str | None = None,
                  signature: str | None = None, status: str | None = None) -> pd.DataFrame:
        """Judgments as a table, joined with their call's prompt, raw answer, usage and
        per-aspect scores (`call_scores`: JSON, with coverage and parsed samples)."""
        clauses, args = [], []
        for column, value in (("j.dataset", dataset), ("j.template_version", template_version),
                              ("j.signature", signature), ("j.status", status)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        sql = f"""SELECT j.*, c.prompt, c.raw, c.scores AS call_scores, c.prompt_tokens, c.completion_tokens,
                         c.cost, c.latency
                  FROM judgments j LEFT JOIN calls c ON c.key = j.call_key {where} ORDER BY j.created"""
        with self.lock:
            return pd.read_sql_query(sql, self.db.conn, params=args)

    def answered(self, judgment_ids: list[str]) -> dict[str, str]:
        """Of these judgments, those answered by a cached call: judgment id -> status ('ok' or
        'unscored'; failed ones and missing ids are left out). One query per CHUNK ids."""
        found: dict[str, str] = {}
        for start in range(0, len(judgment_ids), CHUNK):
            chunk = judgment_ids[start:start + CHUNK]
            sql = f"""SELECT j.id, j.status FROM judgments j JOIN calls c ON c.key = j.call_key
                      WHERE j.id IN ({','.join('?' * len(chunk))}) AND j.status IN ('ok', 'unscored')"""
            with self.lock:
                found.update(self.db.conn.execute(sql, chunk).fetchall())
        return found

    def combos(self, dataset: str) -> pd.DataFrame:
        """Each (template, signature) scored on `dataset`, with counts by status."""
        sql = """SELECT template, template_version, signature, MAX(signature_json) AS signature_json, aspect,
                        SUM(status = 'ok') AS ok, SUM(status = 'unscored') AS unscored,
                        SUM(status = 'failed') AS failed, MIN(created) AS first, MAX(created) AS last
                 FROM judgments WHERE dataset = ? GROUP BY template_version, signature, aspect
                 ORDER BY last DESC"""
        with self.lock:
            return pd.read_sql_query(sql, self.db.conn, params=[dataset])

    # --- runs and notes ----------------------------------------------------------------------
    def start_run(self, **fields) -> int:
        """Record a run's start, with this process's id and host; returns its id. Runs of
        this host whose process is gone are marked crashed first."""
        self.mark_crashed_runs()
        with self._write():
            row = {**fields, "started": time.time(), "status": "running", "pid": os.getpid(), "host": HOST}
            return self.db["runs"].insert(row).last_pk

    def finish_run(self, run_id: int, status: str, summary: dict) -> None:
        """Record how a run ended."""
        with self._write():
            self.db["runs"].update(run_id, {"finished": time.time(), "status": status, "summary": json.dumps(summary)})

    def runs(self, dataset: str | None = None) -> pd.DataFrame:
        """Runs, newest first. A run still 'running' whose process on this host is gone is
        marked and shown as 'crashed' (see `mark_crashed_runs`)."""
        self.mark_crashed_runs()
        where, args = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
        with self.lock:
            return pd.read_sql_query(f"SELECT * FROM runs {where} ORDER BY id DESC", self.db.conn, params=args)

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

    def set_note(self, item_id: str, flag: bool, note: str) -> None:
        """Flag an item and/or keep a note on it."""
        with self._write():
            self.db["notes"].upsert({"item_id": item_id, "flag": int(flag), "note": note, "updated": time.time()},
                                    pk="item_id")

    def notes(self) -> dict[str, tuple[bool, str]]:
        """item id -> (flagged, note)."""
        with self.lock:
            return {r["item_id"]: (bool(r["flag"]), r["note"]) for r in self.db["notes"].rows}

    def close(self) -> None:
        """Close the connection."""
        self.db.conn.close()


def process_alive(pid: int, started_by: float | None = None) -> bool:
    """Whether process `pid` of this host is still running and, when `started_by` (a Unix time)
    is given and the start time can be read, began by then: a later process with a reused pid
    (e.g. after a container restart) is another process. A zombie counts as gone. Where it
    cannot be told (not POSIX), True: the run is left as it is."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    stat = _proc_stat(pid)
    if stat is None:  # no /proc (macOS): alive is all we know
        return True
    state, began = stat
    return state != "Z" and (started_by is None or began <= started_by + 1.0)  # 1 s: /proc's rounding


def _proc_stat(pid: int) -> tuple[str, float] | None:
    """A process's state letter and start time (Unix time) from Linux /proc; None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        booted = _boot_time()
    except (OSError, ValueError):
        return None
    return fields[0], booted + int(fields[19]) / os.sysconf("SC_CLK_TCK")


@functools.cache
def _boot_time() -> float:
    """When this machine booted (Unix time), from /proc/stat."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise ValueError("no btime in /proc/stat")


def _judgment_from_row(raw: str, scores: str, prompt_tokens: int, completion_tokens: int, cost: float,
                       settings: str) -> Judgment:
    """A cached call's stored columns, read back into the Judgment that was saved (with the
    settings that made it)."""
    parsed = {k: AspectScore(**{**v, "distribution": {int(s): p for s, p in v["distribution"].items()}})
              for k, v in json.loads(scores).items()}
    return Judgment(parsed, json.loads(raw), prompt_tokens, completion_tokens, cost, json.loads(settings))


def _steps_key(template: Template, settings: dict) -> str:
    blob = json.dumps({"template": template.version, "settings": settings}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]
