"""The store's schema, as versioned migrations: every table is created here and nowhere else.

A schema change is a new function here and SCHEMA_VERSION + 1; never edit an old one. Each
migration runs in one transaction with the version bump (`Store._migrate`), so a failed
migration leaves the store as it was.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import sqlite_utils

from geval.store.records import PARSED_AT_A_TIME, most_probable, parsed, score_values


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


def _schema_3(db: sqlite_utils.Database) -> None:
    """Baseline metric scores and OpenAI batches get tables of their own. The baseline cache
    was created on first use by stores of schema 2 (its rows are kept); batch entries were
    kept inside their run's summary JSON, and are copied from there (the summary is left as
    it was)."""
    db["baseline_scores"].create({"key": str, "signature": str, "score": float, "created": float}, pk="key",
                                 if_not_exists=True)
    db["batches"].create(
        {"file": str, "run_id": int, "id": str, "input_file_id": str, "requests": int, "items": str, "imported": int},
        pk="file", if_not_exists=True,
    )
    db["batches"].create_index(["run_id"], if_not_exists=True)
    for run_id, summary in db.execute("SELECT id, summary FROM runs WHERE summary LIKE '%\"batches\"%'").fetchall():
        for entry in json.loads(summary).get("batches", []):
            db["batches"].upsert({"file": entry["file"], "run_id": run_id, "id": entry["id"],
                                  "input_file_id": entry.get("input_file_id") or "", "requests": entry["requests"],
                                  "items": json.dumps(entry["items"]), "imported": int(bool(entry["imported"]))},
                                 pk="file")


def _schema_4(db: sqlite_utils.Database) -> None:
    """A saved template version can carry a comment (what it changes), shown beside its hash.
    Versions saved before have none."""
    db["templates"].add_column("comment", str)


def _schema_5(db: sqlite_utils.Database) -> None:
    """Judgments say what else shaped their prompt (`detail`, JSON: the ids of few-shot
    examples); rows stored before have none."""
    db["judgments"].add_column("detail", str)


def _schema_6(db: sqlite_utils.Database) -> None:
    """Finished prompt searches (`geval tune`) keep their result (JSON: the split, every
    candidate's value per round, the winner and start on the test groups), for reports; one
    row per search path (`key`), so that running a search again replaces it."""
    db["searches"].create({"key": str, "dataset": str, "human": str, "judge": str, "result": str, "created": float},
                          pk="key", if_not_exists=True)


def _schema_7(db: sqlite_utils.Database) -> None:
    """Every prompt search is logged when it starts, whatever becomes of it (`search_log`): its
    settings, its candidates by template version, its tune and test groups, the rounds it
    finished (a search that finished none chose on nothing), whether it reached the test part,
    when it started and ended and how (running, finished, stopped, failed with the reason), its
    process (pid, host) to tell a killed one. Searches run before were not logged (their
    finished results stay in `searches`)."""
    db["search_log"].create(
        {"id": int, "dataset": str, "human": str, "judge": str, "settings": str, "candidates": str,
         "tune_groups": str, "test_groups": str, "winner": str, "rounds": int, "tested": int, "status": str,
         "reason": str, "started": float, "finished": float, "pid": int, "host": str},
        pk="id", if_not_exists=True,
    )
    db["search_log"].create_index(["dataset", "started"], if_not_exists=True)


def _schema_8(db: sqlite_utils.Database) -> None:
    """A baseline metric's scores on a whole set of items are kept as one row (`baseline_results`), keyed
    by a hash of the metric's signature and of what it read of each item, so that a report reads each
    baseline back at once and computes it again only when the signature or the items change. Notes say
    which template version and judge they were written beside (`combo`, the combination's id; notes
    stored before have none and show under every judge)."""
    db["baseline_results"].create({"key": str, "metric": str, "signature": str, "items": int, "scores": str,
                                   "created": float}, pk="key", if_not_exists=True)
    db["notes"].add_column("combo", str)


def _schema_9(db: sqlite_utils.Database) -> None:
    """The user's own labels (the Label page, `geval labels import`): one row per (item, aspect,
    annotator), its score, the seconds it took and when it was first and last written; and each
    dataset's human side (`datasets.human_side`: "people", "you" or "both"; empty: chosen from what
    the dataset has)."""
    db["labels"].create(
        {"id": str, "dataset": str, "item_id": str, "aspect": str, "annotator": str, "score": float,
         "seconds": float, "created": float, "updated": float},
        pk="id", if_not_exists=True,
    )
    db["labels"].create_index(["dataset", "annotator"], if_not_exists=True)
    db["datasets"].add_column("human_side", str)


def _schema_10(db: sqlite_utils.Database) -> None:
    """Annotators kept apart, and judges run elsewhere: an item says who gave each of its human
    scores (`items.annotators`, JSON {aspect: [annotator id, ...]}; empty: by position, "#1" ...) and
    the id its file gave it (`items.source_id`); a dataset names the categories of its categorical
    aspects (`datasets.categories`, JSON {aspect: [category, ...]}). Judge scores imported from a
    file (`geval judge import`) are judgments like any other, their call-less rows signed
    `backend:imported` with the file's SHA-256. Rows stored before have none of these."""
    db["items"].add_column("annotators", str)
    db["items"].add_column("source_id", str)
    db["datasets"].add_column("categories", str)


def _schema_11(db: sqlite_utils.Database) -> None:
    """A template version saved as an edit of another (the Prompts page's editor) names it
    (`templates.parent`): a prompt search's winner edited by a sentence is still read without the
    groups the search chose it on (`geval.analysis.held_out`). Versions saved before name none."""
    db["templates"].add_column("parent", str)


def _schema_12(db: sqlite_utils.Database) -> None:
    """A dataset keeps the scale each aspect was asked on, where declared (`datasets.scales`, JSON
    {aspect: [low, high]}: its layout's paper's, and the user's, given as the data came in). Datasets
    stored before have none kept: their layout's are read."""
    db["datasets"].add_column("scales", str)


def _schema_13(db: sqlite_utils.Database) -> None:
    """Annotation queues for a team. Accounts (`users`: a name, its role, lead or annotator, and the
    bcrypt hash of its password; never the password); queues (`queues`: the dataset, the aspects with
    their scales (JSON), which items and how they were chosen (JSON), how many annotators see each item,
    when a reason is required, who made it); which annotator labels which item of a queue, in which
    order (`queue_items`); and the reason an annotator gave with a label (`labels.reason`). Labels
    stored before have no reason."""
    db["users"].create({"name": str, "role": str, "password_hash": str, "created": float, "updated": float},
                       pk="name", if_not_exists=True)
    db["queues"].create({"name": str, "dataset": str, "aspects": str, "selection": str, "overlap": int,
                         "reasons": str, "created_by": str, "created": float}, pk="name", if_not_exists=True)
    db["queue_items"].create({"queue": str, "item_id": str, "annotator": str, "position": int, "assigned": float},
                             pk=("queue", "item_id", "annotator"), if_not_exists=True)
    db["queue_items"].create_index(["queue", "annotator", "position"], if_not_exists=True)
    db["labels"].add_column("reason", str)


def _schema_14(db: sqlite_utils.Database) -> None:
    """Pairs: an item that compares two responses to one context keeps both sides (`items.pair`, JSON:
    each response, its system, each side's own turns when they differ, who speaks, the question both
    answer); empty for an item of one response. Items stored before are single responses."""
    db["items"].add_column("pair", str)


def _schema_15(db: sqlite_utils.Database) -> None:
    """The combinations' counts read from an index alone (`Store.combos`: 0.6 s instead of 3 s at a million
    judgments): the judgments' index by dataset, version and signature gets the aspect, status and time too."""
    db["judgments"].create_index(["dataset", "template_version", "signature", "aspect", "status", "created"],
                                 index_name="idx_judgments_combos", if_not_exists=True)
    db.execute("DROP INDEX IF EXISTS idx_judgments_dataset_template_version_signature")  # a prefix of the new one


def _schema_16(db: sqlite_utils.Database) -> None:
    """What a combination's calls cost read from indexes alone (`Store.call_totals`: 0.7 s instead of 5.7 s at a
    million judgments): its judgments' call keys in order (the distinct ones found without sorting them), and each
    call's usage beside its key (its row, which carries its prompt and answer, not read). The keys' index is of the
    judgments that have a call only, so that no other read of a combination's judgments takes it for the
    combinations' index (it would read their rows in the keys' order: twice as slow)."""
    db.execute("CREATE INDEX IF NOT EXISTS idx_judgments_calls ON judgments(dataset, template_version, signature, "
               "call_key) WHERE call_key IS NOT NULL")
    db["calls"].create_index(["key", "prompt_tokens", "completion_tokens", "cost", "latency"],
                             index_name="idx_calls_usage", if_not_exists=True)


def _schema_17(db: sqlite_utils.Database) -> None:
    """One combination's judgments read in their order with the columns the agreement reads (item, aspect, score,
    status) from an index alone (`Store.judgments`: 0.3 s instead of 0.5 s at 100,000 judgments): its judgments by
    time, then aspect and status (the order `ORDER BY created` gave them, read through the combinations' index), with
    the item and score beside."""
    db["judgments"].create_index(["dataset", "template_version", "signature", "created", "aspect", "status", "item_id",
                                  "score"], index_name="idx_judgments_read", if_not_exists=True)


def _schema_18(db: sqlite_utils.Database) -> None:
    """A baseline's scores kept as numbers too (`baseline_results.score_values`: float64, little-endian, NaN where
    the metric gave none, in the order of the JSON's items), read without parsing a million items' JSON
    (`Store.baseline_values`). Rows stored before are given theirs from their JSON."""
    db["baseline_results"].add_column("score_values", bytes)
    for (key,) in db.execute("SELECT key FROM baseline_results").fetchall():  # one row's JSON at a time
        scores = db.execute("SELECT scores FROM baseline_results WHERE key = ?", [key]).fetchone()[0]
        db.execute("UPDATE baseline_results SET score_values = ? WHERE key = ?",
                   [score_values(parsed(scores).values()), key])


def _schema_19(db: sqlite_utils.Database) -> None:
    """Each judgment's most probable score kept beside its distribution (`judgments.most_probable`, NULL for none;
    written with it by `Store._upsert_judgments`): the `argmax` variant and the alternative annotator test read a
    number per judgment instead of parsing a million distributions' text (80 MB). Rows stored before are given
    theirs from their distribution, PARSED_AT_A_TIME at a time. Schema 17's index of a combination's judgments in
    their order holds it too, so that it is read from the index alone beside the scores (a million judgments' rows
    each fetched from the table took 2 s, as their distributions' text did)."""
    db["judgments"].add_column("most_probable", float)
    db.execute("DROP INDEX IF EXISTS idx_judgments_read")
    last = -1
    while True:
        rows = db.execute("SELECT rowid, distribution FROM judgments WHERE rowid > ? ORDER BY rowid LIMIT ?",
                          [last, PARSED_AT_A_TIME]).fetchall()
        if not rows:
            break
        values = most_probable([distribution for _, distribution in rows]).tolist()
        db.conn.executemany("UPDATE judgments SET most_probable = ? WHERE rowid = ?",  # NaN (no score) left NULL
                            [(value, rowid) for (rowid, _), value in zip(rows, values) if not math.isnan(value)])
        last = rows[-1][0]
    db["judgments"].create_index(["dataset", "template_version", "signature", "created", "aspect", "status", "item_id",
                                  "score", "most_probable"], index_name="idx_judgments_read", if_not_exists=True)


def _schema_20(db: sqlite_utils.Database) -> None:
    """Results derived from what the store holds, kept until it changes (`Store.keep_derived`: the report's page,
    zlib-compressed), each with the `Store.content_version` it was made at; a digest of a dataset's item rows, so
    that the same file loaded again writes nothing (`Store.save_dataset`: a new server loads it again)."""
    db["derived"].create({"key": str, "content_version": int, "value": bytes, "created": float}, pk="key")
    db["datasets"].add_column("digest", str)


def _schema_21(db: sqlite_utils.Database) -> None:
    """A baseline's result on a stored dataset's items filed under a second key too (`baseline_aliases`): made of
    the digest of the dataset's rows (schema 20) and the items' ids instead of every item's texts, so that a report
    finds it without reading a million items' texts; with the kind of reference the texts were compared with."""
    db["baseline_aliases"].create({"alias": str, "key": str, "reference": str, "created": float}, pk="alias")


#: version -> the function that brings a store from version - 1 to it.
MIGRATIONS: dict[int, Callable[[sqlite_utils.Database], None]] = {1: _schema_1, 2: _schema_2, 3: _schema_3,
                                                                  4: _schema_4, 5: _schema_5, 6: _schema_6,
                                                                  7: _schema_7, 8: _schema_8,
                                                                  9: _schema_9, 10: _schema_10, 11: _schema_11,
                                                                  12: _schema_12, 13: _schema_13, 14: _schema_14,
                                                                  15: _schema_15, 16: _schema_16,
                                                                  17: _schema_17, 18: _schema_18,
                                                                  19: _schema_19, 20: _schema_20,
                                                                  21: _schema_21}
SCHEMA_VERSION = 21
