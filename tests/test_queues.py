"""A team's accounts and annotation queues (geval/accounts.py, geval/store/team.py,
geval/decisions/queues.py): hashed passwords, balanced assignment, a late joiner, reasons, the
lead's figures, and many annotators writing at once."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from helpers import REPO, make_items, run_cli, store_bytes

import geval
from geval.accounts import AccountError, password_matches
from geval.decisions.labeling import LabelAspect
from geval.decisions.queues import (
    RATE_FROM,
    Queue,
    add_annotator,
    agreement,
    assign,
    choose_items,
    create,
    disagreements,
    export,
    next_items,
    progress,
    reason_asked,
    reason_needed,
)
from geval.errors import LabelError, StoreError

NATURAL = LabelAspect("Natural", 1, 3)


def stored(store, n: int = 24, per_group: int = 2):
    items = make_items(n, per_group=per_group)
    store.save_dataset(geval.Dataset("synthetic", "s.json", "table", items))
    return items


# --- accounts ------------------------------------------------------------------------------------------
def test_a_password_is_kept_hashed_and_never_in_the_store_file(file_store, tmp_path):
    file_store.add_user("Alice", "lead", "correct horse battery")
    assert file_store.users() == {"alice": "lead"}  # names in lower case, as sign-in reads them
    role, hashed = file_store.password_hashes()["alice"]
    assert hashed.startswith("$2b$") and password_matches("correct horse battery", hashed)
    assert not password_matches("wrong horse battery", hashed)
    file_store.db.conn.execute("PRAGMA wal_checkpoint")
    assert b"correct horse battery" not in store_bytes(tmp_path / "store.sqlite")
    assert file_store.session_key() == file_store.session_key() and len(file_store.session_key()) == 64


def test_accounts_refuse_a_bad_name_role_password_or_a_second_add(store):
    with pytest.raises(AccountError, match="role 'boss' is unknown"):
        store.add_user("bob", "boss", "long enough pw")
    with pytest.raises(AccountError, match="one word"):
        store.add_user("bob smith", "lead", "long enough pw")
    with pytest.raises(AccountError, match="shorter than 8") as short:
        store.add_user("bob", "lead", "pw12345")
    assert "pw12345" not in str(short.value)  # never the password in an error
    store.add_user("bob", "annotator", "long enough pw")
    with pytest.raises(AccountError, match="exists already"):
        store.add_user("bob", "lead", "another password")
    store.add_user("bob", "lead", "another password", replace=True)
    assert store.users() == {"bob": "lead"}
    assert store.remove_user("Bob") and store.users() == {}


def test_cli_users_add_list_remove_and_the_password_stays_out_of_the_output(tmp_path):
    path = str(tmp_path / "s.sqlite")
    assert "no accounts" in run_cli("users", "list", "--store", path).stdout
    added = subprocess.run([sys.executable, "-m", "geval", "users", "add", "Ann", "--role", "annotator",
                            "--password-stdin", "--store", path], input="s3cret-words\n", capture_output=True,
                           text=True, cwd=REPO, timeout=120)
    assert added.returncode == 0, added.stderr
    assert "ann is now an annotator" in added.stdout and "asks everyone to sign in" in added.stdout
    assert "(names are kept in lower case: sign in as ann)" in added.stdout  # "Ann" given: said how to sign in
    assert "s3cret-words" not in added.stdout + added.stderr
    assert run_cli("users", "list", "--store", path).stdout.split() == ["ann", "annotator"]
    assert "no account is left" in run_cli("users", "remove", "ann", "--store", path).stdout
    missing = run_cli("users", "remove", "ann", "--store", path)
    assert missing.returncode == 2 and "no user named 'ann'" in missing.stderr


# --- which items, and who labels each -----------------------------------------------------------
def test_items_all_random_per_system_and_where_a_label_buys_most():
    items = make_items(30, systems=3)
    assert sorted(choose_items(items, "all", seed=1)) == sorted(i.id for i in items)
    assert len(set(choose_items(items, "random", 7))) == 7
    per = Counter(next(i.system for i in items if i.id == x) for x in choose_items(items, "per_system", 4))
    assert per == {"sys0": 4, "sys1": 4, "sys2": 4}
    import pandas as pd
    spread = pd.Series({item.id: float(k) for k, item in enumerate(items)})
    assert choose_items(items, "uncertain", 3, spread=spread) == [items[29].id, items[28].id, items[27].id]
    with pytest.raises(LabelError, match="needs a judge's own uncertainty"):
        choose_items(items, "uncertain", 3)
    with pytest.raises(LabelError, match="takes n"):
        choose_items(items, "random", 0)


@pytest.mark.parametrize("n_items, annotators, overlap", [(40, 4, 2), (37, 5, 3), (100, 10, 2), (9, 2, 2)])
def test_every_share_and_every_pairs_overlap_is_balanced(n_items, annotators, overlap):
    names = [f"a{k}" for k in range(annotators)]
    rows = assign([f"i{k}" for k in range(n_items)], names, overlap, seed=3)
    by_item = Counter(r["item_id"] for r in rows)
    assert set(by_item.values()) == {overlap}
    assert all(len({r["annotator"] for r in rows if r["item_id"] == i}) == overlap for i in by_item)
    shares = Counter(r["annotator"] for r in rows)
    assert max(shares.values()) - min(shares.values()) <= 1
    together = Counter()
    for item in by_item:
        together.update(combinations(sorted(r["annotator"] for r in rows if r["item_id"] == item), 2))
    pairs = [together[p] for p in combinations(names, 2)]
    assert max(pairs) - min(pairs) <= 2, together
    for name in names:  # each annotator's positions number their items 0..n-1
        assert sorted(r["position"] for r in rows if r["annotator"] == name) == list(range(shares[name]))


def test_assignment_refuses_an_overlap_larger_than_the_team():
    with pytest.raises(LabelError, match="overlap 3: each item can go to 1 to 2 of the 2 annotators named"):
        assign(["i"], ["a", "b"], 3)
    with pytest.raises(LabelError) as error:  # it read "1 to 1 of the 1 annotators"
        assign(["i"], ["a"], 2)
    assert str(error.value) == "overlap 2: with one annotator named, each item goes to that one (overlap 1)"


def test_a_late_joiner_takes_unlabeled_items_first_and_nothing_labeled_moves(store):
    items = stored(store, 24)
    queue = create(store, "q", "synthetic", [NATURAL], ["ann", "bob", "cat"], overlap=2, seed=1)
    ann = next_items(store, queue, "ann")
    for item_id in ann[:6]:  # ann labels 6 of her items
        store.save_label(item_id, "Natural", 2, "ann")
    before = store.assignments("q")
    taken = add_annotator(store, queue, "dan")
    after = store.assignments("q")
    shares = after["annotator"].value_counts()
    assert taken == 12 and max(shares) - min(shares) <= 1 and len(after) == len(before) == 48
    labeled = set(ann[:6])
    dan = next_items(store, queue, "dan")
    assert not labeled & set(dan)  # ann's labeled items stay hers
    assert all(((after["item_id"] == i) & (after["annotator"] == "ann")).any() for i in labeled)
    nobody = {i.id for i in items} - labeled
    assert set(dan[:len(dan)]) <= nobody  # items nobody labeled first: here all of them are such items
    with pytest.raises(LabelError, match="already"):
        add_annotator(store, queue, "dan")


def test_a_late_joiner_levels_the_shares_taking_from_the_most_loaded_first(store):
    """20 items, one annotator each, ann 10 and bob 10, ann's first 2 labeled: dan took 4 of ann's and 2 of bob's in
    the items' order (shares 6, 8, 6); now one at a time from the most loaded (7, 7, 6)."""
    stored(store, 20)
    queue = create(store, "q", "synthetic", [NATURAL], ["ann", "bob"], overlap=1, seed=1)
    for item_id in next_items(store, queue, "ann")[:2]:
        store.save_label(item_id, "Natural", 2, "ann")
    assert add_annotator(store, queue, "dan") == 6
    assert store.assignments("q")["annotator"].value_counts().to_dict() == {"ann": 7, "bob": 7, "dan": 6}


def test_a_queue_is_refused_before_anything_is_stored(store):
    stored(store, 6)
    with pytest.raises(LabelError, match="reason rule"):
        create(store, "q", "synthetic", [NATURAL], ["a", "b"], reasons="always")
    create(store, "q", "synthetic", [NATURAL], ["a", "b"])
    with pytest.raises(StoreError, match="exists already"):
        create(store, "q", "synthetic", [NATURAL], ["a", "b"])
    with pytest.raises(StoreError, match="no queue named 'r'"):
        Queue.read(store, "r")


# --- reasons --------------------------------------------------------------------------------------------
def test_a_reason_is_required_at_the_ends_or_where_a_label_differs_by_two():
    ends = Queue("q", "d", (LabelAspect("Overall", 1, 5),), {}, 2, "ends", "")
    differs = Queue("q", "d", (LabelAspect("Overall", 1, 5),), {}, 2, "differs", "")
    overall = ends.aspects[0]
    assert reason_needed(ends, overall, 1, []) and reason_needed(ends, overall, 5, [])
    assert not reason_needed(ends, overall, 3, [1.0])
    assert "differs from another annotator's label" in reason_needed(differs, overall, 3, [1.0])
    assert not reason_needed(differs, overall, 3, [2.0, 4.0])
    assert not reason_needed(Queue("q", "d", (overall,), {}, 2, "none", ""), overall, 5, [1.0])


def test_whether_a_label_needs_a_reason_is_read_on_the_server_from_the_items_other_labels_in_the_queue(store):
    items = stored(store, 4)
    wide = LabelAspect("Natural", 1, 5)
    queue = create(store, "q", "synthetic", [wide], ["ann", "bob"], overlap=2, reasons="differs")
    store.save_label(items[0].id, "Natural", 5, "bob")
    store.save_label(items[0].id, "Natural", 1, "cat")  # not in the queue: not read
    assert "differs from another annotator's label" in reason_asked(store, queue, items[0].id, "natural", 3, "ann")
    assert not reason_asked(store, queue, items[0].id, "Natural", 4, "ann")
    assert not reason_asked(store, queue, items[1].id, "Natural", 2, "ann")
    assert "end of the scale" in reason_asked(store, queue, items[1].id, "Natural", 5, "ann")
    assert not reason_asked(store, create(store, "free", "synthetic", [wide], ["ann", "bob"]), items[0].id, "Natural",
                            1, "ann")
    with pytest.raises(LabelError, match="queue q asks for Natural, not 'Overall'"):
        reason_asked(store, queue, items[0].id, "Overall", 3, "ann")


def test_a_reason_is_kept_with_its_label_and_exported(store):
    items = stored(store, 4)
    create(store, "q", "synthetic", [NATURAL], ["ann", "bob"], overlap=2)
    queue = Queue.read(store, "q")
    store.save_label(items[0].id, "Natural", 1, "ann", 3.0, "the reply ignores the question")
    store.save_label(items[0].id, "Natural", 1, "ann", 2.0)  # changed without a reason: the reason stays
    store.save_label(items[0].id, "Natural", 3, "bob", 4.0, "")
    frame = export(store, queue)
    assert list(frame.columns) == ["item_id", "aspect", "annotator", "score", "reason", "seconds", "created",
                                   "updated"]
    row = frame[frame["annotator"] == "ann"].iloc[0]
    assert row["reason"] == "the reply ignores the question" and row["score"] == 1
    split = disagreements(store, queue, NATURAL)
    assert split.iloc[0]["range"] == 2 and split.iloc[0]["ann"] == "1: the reply ignores the question"


# --- the lead's figures ----------------------------------------------------------------------------------
def test_progress_counts_done_items_and_labels_per_hour(store):
    items = stored(store, 12)
    queue = create(store, "q", "synthetic", [NATURAL], ["ann", "bob"], overlap=2)
    for item_id in next_items(store, queue, "ann")[:RATE_FROM]:
        store.save_label(item_id, "Natural", 2, "ann", seconds=30.0)
    for item_id in next_items(store, queue, "bob")[:RATE_FROM - 1]:  # one short of a rate
        store.save_label(item_id, "Natural", 2, "bob", seconds=1.0)
    table = progress(store, queue).set_index("annotator")
    assert table.loc["ann", "items"] == 12 and table.loc["ann", "done"] == RATE_FROM
    assert table.loc["ann", "labels per hour"] == pytest.approx(120.0)
    assert table.loc["bob", "done"] == RATE_FROM - 1 and math.isnan(table.loc["bob", "labels per hour"])
    assert len(items) == 12


def test_alpha_and_kappa_of_a_queue_read_perfect_agreement_and_chance(store):
    items = stored(store, 40, per_group=2)
    queue = create(store, "q", "synthetic", [NATURAL], ["ann", "bob"], overlap=2)
    rng = np.random.default_rng(0)
    for item in items:  # the same label from both: perfect agreement
        score = int(rng.integers(1, 4))
        store.save_label(item.id, "Natural", score, "ann")
        store.save_label(item.id, "Natural", score, "bob")
    found = agreement(store, queue, NATURAL)
    assert found.items == 40 and found.alpha.value == pytest.approx(1.0) and found.kappa.value == pytest.approx(1.0)
    for item in items:  # bob answers at random: about chance
        store.save_label(item.id, "Natural", int(rng.integers(1, 4)), "bob")
    found = agreement(store, queue, NATURAL)
    assert abs(found.kappa.value) < 0.45 and found.kappa.low < 0 < found.kappa.high
    assert math.isfinite(found.alpha.low) and found.alpha.low < found.alpha.value < found.alpha.high
    assert found.pairs.iloc[0]["pair"] == "ann and bob" and found.pairs.iloc[0]["items"] == 40


def test_cli_queue_create_show_join_export(tmp_path):
    path = tmp_path / "s.sqlite"
    store = geval.Store(path)
    items = stored(store, 15)
    made = run_cli("queue", "create", "pilot", "--dataset", "synthetic", "--aspects", "Natural 1-3",
                   "--annotators", "ann,bob,cat", "--overlap", "2", "--reasons", "ends", "--store", str(path))
    assert made.returncode == 0, made.stderr
    assert "15 items of synthetic, each to 2 of 3 annotators (ann 10, bob 10, cat 10)" in made.stdout
    for item in items:
        store.save_label(item.id, "Natural", 2, "ann", 10.0, "fine")
    shown = run_cli("queue", "show", "pilot", "--store", str(path))
    assert "Krippendorff's alpha (ordinal)" in shown.stdout and "ann" in shown.stdout
    rows = {line.split()[0]: line.split() for line in shown.stdout.splitlines()[2:5]}  # a row per annotator
    assert rows["ann"][3] == "100%" and rows["ann"][5] == "360" and rows["ann"][7].startswith("20")  # a date
    assert rows["bob"][3:] == ["0%", "0", "–", "0", "–"], rows  # read as numbers and words, not 0.000000 and NaT
    assert f"Labels per hour are read from {RATE_FROM} timed labels on" in shown.stdout  # why bob's is "–"
    joined = run_cli("queue", "join", "pilot", "dan", "--store", str(path))
    assert "dan joins queue pilot with 6 items" in joined.stdout  # ann labeled hers: bob and cat give 3 each
    out = tmp_path / "labels.csv"
    assert "wrote 10 labels" in run_cli("queue", "export", "pilot", "--out", str(out), "--store", str(path)).stdout
    assert out.read_text().splitlines()[0] == "item_id,aspect,annotator,score,reason,seconds,created,updated"


def test_a_queue_of_a_pass_fail_aspect_is_named_on_its_categories_indexes(tmp_path):
    from helpers import scored_verdicts

    scored_verdicts(tmp_path, 12)
    made = run_cli("queue", "create", "pilot", "--dataset", "verdicts", "--aspects", "verdict 1-2",
                   "--annotators", "ann,bob", "--store", str(tmp_path / "store.sqlite"))
    assert made.returncode != 0
    assert "verdict is labeled with 2 categories: name it verdict 0-1, a digit for each (0 fail, 1 pass)" in made.stderr


# --- many at once ----------------------------------------------------------------------------------------
def test_ten_annotators_writing_at_once_lose_and_double_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    setup = geval.Store(path)
    stored(setup, 30)
    queue = create(setup, "q", "synthetic", [NATURAL], [f"a{k}" for k in range(10)], overlap=3)
    setup.close()
    errors = []

    def annotate(name: str) -> None:
        own = geval.Store(path)  # a connection of its own, as each server session's
        try:
            for position, item_id in enumerate(next_items(own, Queue.read(own, "q"), name)):
                own.save_label(item_id, "Natural", 1 + position % 3, name, 1.0, f"{name} on {item_id}")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=annotate, args=(f"a{k}",)) for k in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    check = geval.Store(path)
    labels = check.queue_labels("q")
    assert len(labels) == 90 and not labels.duplicated(["item_id", "annotator"]).any()
    assert all(reason == f"{who} on {item}" for who, item, reason in
               zip(labels["annotator"], labels["item_id"], labels["reason"]))
    assert queue.overlap == 3
