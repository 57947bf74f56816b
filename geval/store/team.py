"""The store's tables for a team (schema 13): accounts, annotation queues and who labels what.
A part of `Store` (it inherits these methods); the queues' logic is `geval.labeling.queues`'."""

from __future__ import annotations

import json
import time

import pandas as pd

from geval.accounts import AccountError, check_name, check_role, hash_password, new_secret
from geval.data.labels import FILE_COLUMNS
from geval.errors import StoreError

SESSION_KEY = "session_key"  # the meta row holding the key that signs session cookies
SIGNED_OUT = "signed_out:"  # meta rows "signed_out:<name>": when that account last signed out


class TeamTables:
    """Accounts, queues and assignments: methods of `Store` (which gives `db`, `lock`, `_write` and `path`)."""

    # --- accounts ----------------------------------------------------------------------------------
    def add_user(self, name: str, role: str, password: str, replace: bool = False) -> None:
        """Make an account: `name`, its `role` (`geval.accounts.ROLES`) and the bcrypt hash of `password`
        (the password itself is kept nowhere). An existing name is refused unless `replace`."""
        name, role = check_name(name), check_role(role)
        hashed = hash_password(password)
        with self._write():
            found = self.db.execute("SELECT created FROM users WHERE name = ?", [name]).fetchone()
            if found and not replace:
                raise AccountError(f"user {name} exists already in {self.path}; remove it first, or replace it "
                                   "(geval users add --replace)")
            now = time.time()
            self.db["users"].upsert({"name": name, "role": role, "password_hash": hashed,
                                     "created": found[0] if found else now, "updated": now}, pk="name")

    def remove_user(self, name: str) -> bool:
        """Remove an account (its labels stay, under its name); whether there was one."""
        with self._write():
            return bool(self.db.execute("DELETE FROM users WHERE name = ?", [name.strip().lower()]).rowcount)

    def users(self) -> dict[str, str]:
        """Every account's role, by name (empty: no account, the app needs no sign-in)."""
        with self.lock:
            return dict(self.db.execute("SELECT name, role FROM users ORDER BY name").fetchall())

    def password_hashes(self) -> dict[str, tuple[str, str]]:
        """name -> (role, bcrypt hash of its password): what a sign-in checks a password against."""
        with self.lock:
            rows = self.db.execute("SELECT name, role, password_hash FROM users").fetchall()
        return {name: (role, hashed) for name, role, hashed in rows}

    def session_key(self) -> str:
        """The key that signs this store's session cookies: made once, at random, and kept."""
        with self._write():
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", [SESSION_KEY]).fetchone()
            if row:
                return row[0]
            key = new_secret()
            self.db["meta"].upsert({"key": SESSION_KEY, "value": key}, pk="key")
            return key

    def sign_out(self, name: str) -> None:
        """Note that `name` signs out now: every session cookie made for it before is refused from then on
        (`signed_out`), also where its browser did not delete it."""
        with self._write():
            self.db["meta"].upsert({"key": SIGNED_OUT + name, "value": repr(time.time())}, pk="key")

    def signed_out(self, name: str) -> float:
        """When `name` last signed out (seconds since the epoch; 0.0: never)."""
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", [SIGNED_OUT + name]).fetchone()
        return float(row[0]) if row else 0.0

    # --- queues --------------------------------------------------------------------------------------
    def save_queue(self, queue: dict, assignments: list[dict]) -> None:
        """Store a new queue (a row of `queues`; its JSON fields as Python values) and its assignments
        (item_id, annotator, position) in one transaction; a name taken already is refused."""
        row = {**queue, **{k: json.dumps(queue[k]) for k in ("aspects", "selection")}, "created": time.time()}
        with self._write():
            if self.db["queues"].count_where("name = ?", [queue["name"]]):
                raise StoreError(f"a queue named {queue['name']!r} exists already in {self.path}; choose another name")
            self.db["queues"].insert(row)
            self._assign(queue["name"], assignments)

    def _assign(self, queue: str, assignments: list[dict]) -> None:
        now = time.time()
        self.db["queue_items"].upsert_all([{"queue": queue, "item_id": a["item_id"], "annotator": a["annotator"],
                                            "position": int(a["position"]), "assigned": now} for a in assignments],
                                          pk=("queue", "item_id", "annotator"))

    def reassign(self, queue: str, moved: list[tuple[str, str]], assignments: list[dict]) -> None:
        """In one transaction: drop the assignments `moved` ((item_id, annotator) pairs) of `queue`, and
        add `assignments` (item_id, annotator, position)."""
        with self._write():
            for item_id, annotator in moved:
                self.db.execute("DELETE FROM queue_items WHERE queue = ? AND item_id = ? AND annotator = ?",
                                [queue, item_id, annotator])
            self._assign(queue, assignments)

    def queue(self, name: str) -> dict:
        """A queue's row (its JSON fields read back); StoreError when there is none of that name."""
        with self.lock:
            rows = list(self.db["queues"].rows_where("name = ?", [name]))
        if not rows:
            known = ", ".join(self.queues()) or "none yet"
            raise StoreError(f"no queue named {name!r} in {self.path} (queues: {known}); make it first "
                             "(geval queue create)")
        return {**rows[0], **{k: json.loads(rows[0][k]) for k in ("aspects", "selection")}}

    def queues(self, dataset: str | None = None) -> list[str]:
        """The queues' names (of one dataset), oldest first."""
        where, params = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
        with self.lock:
            return [r[0] for r in self.db.execute(f"SELECT name FROM queues {where} ORDER BY created, name", params)]

    def queues_of(self, annotator: str) -> list[str]:
        """The queues `annotator` has items in, oldest first."""
        with self.lock:
            return [r[0] for r in self.db.execute(
                "SELECT q.name FROM queues q WHERE EXISTS (SELECT 1 FROM queue_items i WHERE i.queue = q.name AND "
                "i.annotator = ?) ORDER BY q.created, q.name", [annotator])]

    def delete_queue(self, name: str) -> bool:
        """Remove a queue and its assignments (the labels given in it stay); whether there was one."""
        with self._write():
            self.db.execute("DELETE FROM queue_items WHERE queue = ?", [name])
            return bool(self.db.execute("DELETE FROM queues WHERE name = ?", [name]).rowcount)

    def assignments(self, queue: str, annotator: str | None = None) -> pd.DataFrame:
        """Who labels which item of `queue` (of one annotator), in order: item_id, annotator, position, assigned."""
        where, params = ("AND annotator = ?", [annotator]) if annotator else ("", [])
        sql = (f"SELECT item_id, annotator, position, assigned FROM queue_items WHERE queue = ? {where} "
               "ORDER BY annotator, position")
        with self.lock:
            return pd.read_sql_query(sql, self.db.conn, params=[queue, *params])

    def queue_labels(self, queue: str, annotator: str | None = None) -> pd.DataFrame:
        """The labels given in `queue` (by one annotator): each assigned annotator's labels of their items,
        every aspect (`geval.labeling.queues` keeps the queue's), with `geval.data.labels.FILE_COLUMNS`."""
        where, params = ("AND q.annotator = ?", [annotator]) if annotator else ("", [])
        columns = ", ".join(f"l.{c}" for c in FILE_COLUMNS)
        sql = (f"SELECT {columns} FROM labels l JOIN queue_items q ON q.item_id = l.item_id AND "
               f"q.annotator = l.annotator WHERE q.queue = ? {where} ORDER BY l.created, l.rowid")
        with self.lock:
            return pd.read_sql_query(sql, self.db.conn, params=[queue, *params])
