"""The user's own labels (geval/data/labels.py and the store's labels): written at once, edited,
undone, read and written as CSV and JSON lines keyed by item id, and set beside or instead of a
dataset's human scores (the human side every analysis reads through `Store.items`)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace

import pandas as pd
import pytest
from helpers import REPO, make_items, make_template, run_cli, scripted

import geval
from geval.data.labels import HUMAN_SIDES, chosen_side, read_labels, with_labels, write_labels
from geval.errors import LabelError


@pytest.fixture
def loaded(store, tmp_path):
    """make_items' 10 items (human aspect 'Natural', two annotators each) stored as dataset 'synthetic'."""
    items = make_items(10)
    store.save_dataset(geval.Dataset("synthetic", "synthetic.json", "table", items))
    return items


def test_a_label_is_written_at_once_and_an_edit_returns_the_label_it_replaced(store, loaded):
    item = loaded[0]
    assert store.save_label(item.id, "Natural", 2, seconds=3.5) is None
    first = store.labels("synthetic").iloc[0]
    assert (first["item_id"], first["aspect"], first["score"], first["annotator"], first["seconds"]) == \
        (item.id, "Natural", 2.0, "you", 3.5)
    previous = store.save_label(item.id, "natural", 3, seconds=1.0)  # the same label, any case: replaced
    assert previous["score"] == 2.0 and previous["seconds"] == 3.5
    labels = store.labels("synthetic")
    assert len(labels) == 1 and labels.iloc[0]["score"] == 3.0
    assert labels.iloc[0]["created"] == first["created"]  # its first time kept
    store.save_labels([previous])  # an undo puts it back
    assert store.labels("synthetic").iloc[0][["score", "seconds"]].tolist() == [2.0, 3.5]
    assert store.delete_label(item.id, "Natural") and not store.delete_label(item.id, "Natural")
    assert store.labels("synthetic").empty


def test_labels_of_another_annotator_are_their_own(store, loaded):
    store.save_label(loaded[0].id, "Natural", 1)
    store.save_label(loaded[0].id, "Natural", 3, annotator="alice")
    assert sorted(store.labels("synthetic")["annotator"]) == ["alice", "you"]
    assert store.labels("synthetic", annotator="alice")["score"].tolist() == [3.0]


def test_a_label_of_an_item_not_in_the_store_is_refused_and_nothing_is_written(store, loaded):
    with pytest.raises(LabelError) as error:
        store.save_labels([{"item_id": loaded[0].id, "aspect": "Natural", "score": 2},
                           {"item_id": "nope", "aspect": "Natural", "score": 2},
                           {"item_id": "nada", "aspect": "Natural", "score": 1}])
    assert str(error.value) == (f"item nope is not in {store.path} (nor are 1 more); load the dataset the labels "
                                "were given on first")
    assert store.labels().empty


# --- the human side ---------------------------------------------------------------------------


@pytest.mark.parametrize("side, first, unlabeled", [
    ("people", (1.0, 1.0), (2.0, 2.0)),      # the dataset's own scores; labels left out
    ("you", (3.0, 2.0), None),               # the labels, annotators in name order ("alice", "you")
    ("both", (1.0, 1.0, 3.0, 2.0), None),    # the labels as more annotators, on the labeled items only
])
def test_the_human_side_sets_labels_beside_or_instead_of_the_dataset_scores(store, loaded, side, first, unlabeled):
    store.save_label(loaded[0].id, "natural", 2)  # matched with the dataset's aspect 'Natural' in any case
    store.save_label(loaded[0].id, "Natural", 3, annotator="alice")
    store.set_human_side("synthetic", side)
    items = store.items("synthetic")
    assert store.human_side("synthetic") == side
    assert items[0].human == {"Natural": first}
    assert items[1].human == ({"Natural": unlabeled} if unlabeled else {})
    assert store.item(loaded[0].id).human == {"Natural": first}  # one item by id: the same side


def test_a_judge_of_an_aspect_only_your_labels_have_says_to_read_them_not_to_label_it(store, loaded):
    """The page said "label Overall on the Label page" with 9 Overall labels there: the dataset was compared with
    its own scores, which have none."""
    for item in loaded[:4]:
        store.save_label(item.id, "Overall", 3)
    template = make_template(name="test-overall", aspects=(("Overall", 1, 5, "Overall"),))
    geval.score(store, loaded, template, scripted(), "synthetic")
    with pytest.raises(geval.GevalError) as error:
        geval.agree(store, "synthetic")
    assert "your labels of Overall are not read: compare the judge with them" in str(error.value)
    said = str(error.value)
    assert "labels side synthetic both" in said and "label Overall on the Label page" not in said
    store.set_human_side("synthetic", "both")
    assert geval.agree(store, "synthetic", n_boot=20)["human"].tolist()[0] == "Overall"  # read, as it says


def test_with_no_side_chosen_a_dataset_without_human_scores_takes_the_labels(store):
    bare = [replace(item, human={}) for item in make_items(4, dataset="bare")]
    store.save_dataset(geval.Dataset("bare", "bare.csv", "table", bare))
    assert store.human_side("bare") == "you" and not any(item.human for item in store.items("bare"))
    store.save_label(bare[2].id, "Overall", 4)
    assert [item.human for item in store.items("bare")] == [{}, {}, {"Overall": (4.0,)}, {}]
    assert store.dataset("bare").items[2].human == {}  # the dataset as loaded keeps its own (none)


def test_chosen_side_and_an_unknown_side():
    assert chosen_side("", make_items(2)) == "people" and chosen_side("both", []) == "both"
    assert chosen_side("", []) == "you"
    with pytest.raises(LabelError, match="human side 'mine' is unknown; use one of people, you, both"):
        with_labels([], [], "mine")
    assert list(HUMAN_SIDES) == ["people", "you", "both"]


def test_the_side_is_kept_across_a_reload_of_the_dataset_and_changes_the_stamp(store, loaded):
    before = store.human_stamp("synthetic")
    store.set_human_side("synthetic", "you")
    assert store.human_stamp("synthetic") != before
    store.save_dataset(geval.Dataset("synthetic", "synthetic.json", "table", loaded))
    assert store.human_side("synthetic") == "you"
    stamp = store.human_stamp("synthetic")
    store.save_label(loaded[3].id, "Natural", 2)
    assert store.human_stamp("synthetic") != stamp
    with pytest.raises(LabelError, match="human side 'x' is unknown"):
        store.set_human_side("synthetic", "x")


def test_deleting_a_dataset_deletes_its_labels(store, loaded):
    store.save_label(loaded[0].id, "Natural", 2)
    assert store.delete_dataset("synthetic", dry_run=True)["labels"] == 1
    store.delete_dataset("synthetic")
    assert store.labels().empty


# --- files ------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_labels_written_to_a_file_read_back_the_same(store, loaded, tmp_path, suffix):
    store.save_label(loaded[0].id, "Natural", 2, seconds=4.25)
    store.save_label(loaded[1].id, "Overall", 5, annotator="alice")
    path = write_labels(store.labels("synthetic").to_dict("records"), tmp_path / f"labels{suffix}")
    read = read_labels(path)
    assert [(r["item_id"], r["aspect"], r["score"], r["annotator"], r.get("seconds")) for r in read] == \
        [(loaded[0].id, "Natural", 2.0, "you", 4.25), (loaded[1].id, "Overall", 5.0, "alice", None)]


@pytest.mark.parametrize("name, content, message", [
    ("a.csv", "item_id,aspect,score\nx,Natural,2\ny,Natural,\n", "{path}:3: no score; a label needs item_id, aspect, score"),
    ("b.csv", "item_id,aspect,score\nx,Natural,good\n", "{path}:2: score 'good' is not a number; a score is a "
     "number, or for every label of an aspect one of two words (pass/fail, yes/no, true/false); other categories are "
     "read from a folder of annotations (human_annotations.json, {{annotator: {{item: label}}}}: python -m geval "
     "datasets load FOLDER)"),
    ("c.csv", "item_id,aspect,score\nx,Verdict,pass\ny,Verdict,2\n", "{path}:2: score 'pass' is not a number; a "
     "score is a number, or for every label of an aspect one of two words (pass/fail, yes/no, true/false); other "
     "categories are read from a folder of annotations (human_annotations.json, {{annotator: {{item: label}}}}: "
     "python -m geval datasets load FOLDER)"),
    ("c.jsonl", '{"item_id": "x", "score": 2}\n', "{path}:1: no aspect; a label needs item_id, aspect, score"),
    ("d.jsonl", '{"item_id": "x", "aspect": "A", "score": 2, "seconds": "long"}\n',
     "{path}:1: seconds 'long' is not a number"),
    ("e.json", '{"item_id": "x"}', "{path}: expected a list of labels (rows with item_id, aspect, score)"),
])
def test_a_bad_labels_file_names_the_file_and_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, "utf-8")
    with pytest.raises(LabelError) as error:
        read_labels(path)
    assert str(error.value) == message.format(path=path)


def test_labels_are_written_only_as_csv_or_jsonl(tmp_path):
    with pytest.raises(LabelError, match=r"labels\.txt: labels are written as \.csv or \.jsonl"):
        write_labels([], tmp_path / "labels.txt")


# --- the command line -------------------------------------------------------------------------


def test_cli_labels_export_then_import_into_another_store_round_trips(tmp_path):
    first, second = tmp_path / "first.sqlite", tmp_path / "second.sqlite"
    for path in (first, second):
        store = geval.Store(path)
        geval.load_dataset("topicalchat_usr_sample", store=store)
        store.close()
    store = geval.Store(first)
    items = store.items("topicalchat_usr_sample")
    store.save_label(items[0].id, "Natural", 1, seconds=2.0)
    store.save_label(items[5].id, "Natural", 3, seconds=7.5)
    store.save_label(items[5].id, "Overall", 4, annotator="alice")
    store.close()
    for suffix in (".csv", ".jsonl"):
        out = tmp_path / f"labels{suffix}"
        exported = run_cli("labels", "export", "topicalchat_usr_sample", "--out", str(out), "--store", str(first))
        assert exported.returncode == 0, exported.stderr
        assert exported.stdout.strip() == f"wrote 3 labels of topicalchat_usr_sample to {out}"
        imported = run_cli("labels", "import", str(out), "--store", str(second))
        assert imported.returncode == 0, imported.stderr
        assert imported.stdout.strip() == f"imported 3 labels from {out} (topicalchat_usr_sample: 3)"
    columns = ["item_id", "aspect", "score", "annotator", "seconds", "created"]
    a, b = (geval.Store(p).labels("topicalchat_usr_sample")[columns] for p in (first, second))
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 3 and a["seconds"].isna().sum() == 1


def test_cli_labels_import_of_an_unknown_item_is_one_line_and_writes_nothing(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("item_id,aspect,score\nnot-an-item,Natural,2\n", "utf-8")
    result = run_cli("labels", "import", str(path), "--store", str(tmp_path / "s.sqlite"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("error: item not-an-item is not in ")


def test_a_label_off_the_declared_scale_is_refused_and_nothing_is_written(store, loaded, tmp_path):
    """A 9 on quality declared 1-5 came in (judge import refused the same); every verdict then read it on 1-5."""
    store.declare_scales("synthetic", {"Natural": (1.0, 3.0)})
    with pytest.raises(LabelError) as refused:
        store.save_labels([{"item_id": loaded[0].id, "aspect": "Natural", "score": 2},
                           {"item_id": loaded[1].id, "aspect": "natural", "score": 9}], on_scale=True)
    assert str(refused.value) == (f"the label of item {loaded[1].id} on natural, 9, is off the scale 1-3 declared for "
                                  "it in synthetic: fix the label, or declare the scale people were asked on (--scale)")
    assert store.labels("synthetic").empty
    store.save_labels([{"item_id": loaded[1].id, "aspect": "Natural", "score": 3}], on_scale=True)  # on it: kept
    store.save_labels([{"item_id": loaded[1].id, "aspect": "Engaging", "score": 9}], on_scale=True)  # none declared
    assert len(store.labels("synthetic")) == 2
    disk = geval.Store(tmp_path / "s.sqlite")  # through the command line: one line, exit 2
    disk.save_dataset(geval.Dataset("synthetic", "synthetic.json", "table", loaded))
    disk.declare_scales("synthetic", {"Natural": (1.0, 3.0)})
    disk.close()
    labels = tmp_path / "labels.csv"
    labels.write_text(f"item_id,aspect,score\n{loaded[2].id},Natural,7\n", "utf-8")
    refused = run_cli("labels", "import", str(labels), "--store", str(tmp_path / "s.sqlite"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().startswith(f"error: the label of item {loaded[2].id} on Natural, 7, is off the scale")


def test_labels_keyed_by_the_id_column_of_your_own_file_import(tmp_path):
    data = tmp_path / "mine.csv"
    data.write_text("id,context,response\nq1,A: hi,hello there\nq2,A: bye,see you\n", "utf-8")
    other = tmp_path / "other.csv"
    other.write_text("id,context,response\nq1,A: yo,hey\n", "utf-8")
    store_path = str(tmp_path / "s.sqlite")
    for path in (data, other):
        loaded = run_cli("datasets", "load", str(path), "--map", "response=response", "--map", "context=context",
                         "--map", "id=id", "--store", store_path)
        assert loaded.returncode == 0, loaded.stderr
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,aspect,score,annotator\nq1,Natural,3,ann\nq2,Natural,1,ann\n", "utf-8")
    ambiguous = run_cli("labels", "import", str(labels), "--store", store_path)
    assert ambiguous.returncode == 2
    assert ambiguous.stderr.strip() == "error: item id q1 names items of several datasets (mine, other): say which " \
                                       "(--dataset, or a dataset column)"
    imported = run_cli("labels", "import", str(labels), "--dataset", "mine", "--store", store_path)
    assert imported.returncode == 0, imported.stderr
    store = geval.Store(store_path)
    by_text = {item.response: item.ratings("Natural") for item in store.items("mine")}
    assert by_text == {"hello there": {"ann": 3.0}, "see you": {"ann": 1.0}}


def test_cli_labels_side_and_show(tmp_path):
    path = tmp_path / "s.sqlite"
    store = geval.Store(path)
    items = geval.load_dataset("topicalchat_usr_sample", store=store).items
    store.save_label(items[0].id, "Natural", 1)
    store.close()
    chosen = run_cli("labels", "side", "topicalchat_usr_sample", "you", "--store", str(path))
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout.strip() == "topicalchat_usr_sample: the human side is now your labels"
    shown = run_cli("labels", "show", "topicalchat_usr_sample", "--store", str(path))
    assert shown.returncode == 0, shown.stderr
    assert "human side: your labels" in shown.stdout and "Natural: 1 of 60 items labeled (you)" in shown.stdout


# --- a label survives the process that wrote it -----------------------------------------------


def test_a_label_is_in_the_store_after_a_sigkill_right_after_it_was_saved(tmp_path):
    path = tmp_path / "store.sqlite"
    store = geval.Store(path)
    items = geval.load_dataset("topicalchat_usr_sample", store=store).items
    store.close()
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        import geval
        store = geval.Store({str(path)!r})
        store.save_label({items[0].id!r}, "Natural", 2, seconds=1.5)
        print("saved", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL and done.stdout.strip() == "saved"
    labels = geval.Store(path).labels("topicalchat_usr_sample")
    assert json.loads(labels[["item_id", "score"]].to_json(orient="values")) == [[items[0].id, 2.0]]


def test_as_one_more_annotator_you_are_in_the_annotator_table_and_alpha(store, loaded):
    from geval.analysis.annotators import annotator_agreement

    for index, item in enumerate(loaded[:8]):
        store.save_label(item.id, "Natural", 3 - index % 3)  # the other way round from both annotators
    people = annotator_agreement(store.items("synthetic"), n_boot=50)
    store.set_human_side("synthetic", "both")
    with_you = annotator_agreement(store.items("synthetic"), n_boot=50)
    alpha = with_you[with_you["statistic"] == "alpha (interval)"].iloc[0]
    assert (alpha["items"], alpha["annotators"]) == (8, 3)
    assert people[people["statistic"] == "alpha (interval)"].iloc[0]["annotators"] == 2
    assert alpha["value"] != people[people["statistic"] == "alpha (interval)"].iloc[0]["value"]


def test_cli_agree_and_report_take_the_labels_as_the_human_side(tmp_path):
    from test_page_label import MAPPING, write_unscored_table

    path = tmp_path / "store.sqlite"
    store = geval.Store(path)
    dataset = geval.load_dataset(write_unscored_table(tmp_path / "mine.csv", 20, 2), mapping=MAPPING, store=store)
    geval.score(store, dataset.items, geval.Template.load("topicalchat-naturalness"), scripted(), "mine")
    for index, item in enumerate([*dataset.items[::2], *dataset.items[1:4:2]]):  # 12 labels in all 10 conversations
        store.save_label(item.id, "Natural", 1 + index % 3)
    store.close()
    agreed = run_cli("agree", "mine", "--store", str(path), "--levels", "item", "--bootstrap", "200")
    assert agreed.returncode == 0, agreed.stderr
    assert "human side: your labels (12 labels)" in agreed.stdout
    assert re.search(r"naturalness\s+Natural\s+item\s+pearson\s+[+-]\d\.\d{3}\s+\[[^]]+\]\s+12\s", agreed.stdout), \
        agreed.stdout
    reported = run_cli("report", "mine", "--store", str(path), "--out", str(tmp_path / "reports"), "--baselines",
                       "none", "--no-plots", "--bootstrap", "100")
    assert reported.returncode == 0, reported.stderr
    text = (tmp_path / "reports" / "mine.md").read_text("utf-8")
    assert "## Your labels" in text and "The human side of this report: your labels." in text
    assert text.startswith("# mine: agreement with your labels\n")  # not "with people": no one else scored it
    assert re.search(r"Main result: .* (agrees with your labels at|does not agree with your labels:) ", text)
    assert "Labeled: Natural 12 of 20 items (you)." in text
    assert "### How many labels buy how much: Natural" in text
    assert "| naturalness | Natural | item | pearson |" in text


def test_cli_labels_show_items_lists_each_labeled_item_with_the_files_own_id(tmp_path):
    path, people = tmp_path / "s.sqlite", tmp_path / "mine.csv"
    people.write_text("id,reply\nq1,hello there\nq2,see you\nq3,bye\n")
    store = geval.Store(path)
    items = {item.source_id: item.id for item in
             geval.load_dataset(people, mapping=["response=reply"], store=store).items}
    store.save_label(items["q2"], "Natural", 3)
    store.save_label(items["q2"], "Overall", 2.5)
    store.save_label(items["q1"], "Natural", 1)
    store.close()
    shown = run_cli("labels", "show", "mine", "--items", "--store", str(path))
    assert shown.returncode == 0, shown.stderr
    table = [line.split() for line in shown.stdout.splitlines()[-3:]]
    assert table == [["id", "file", "id", "Natural", "Overall"], [items["q2"], "q2", "3", "2.5"],
                     [items["q1"], "q1", "1"]]
    store = geval.Store(path)
    store.save_label(items["q1"], "Natural", 2, annotator="ann")  # a second annotator: each label says whose
    listed = geval.labeling.labeled_items(store, "mine")
    assert listed.set_index("file id").loc["q1", "Natural"] == "1 (you), 2 (ann)"
    assert "q3" not in set(listed["file id"])
    assert "q1" not in run_cli("labels", "show", "mine", "--store", str(path)).stdout  # without --items: counts only


def test_most_scores_counts_one_items_scores_of_one_aspect_and_tells_no_people_apart():
    items = make_items(6)  # two scores of Natural each
    assert geval.labeling.most_scores(items) == 2
    one = [replace(item, human={"Natural": item.human["Natural"][:1]}) for item in items]
    assert geval.labeling.most_scores(one) == 1
    one[3] = replace(one[3], human={"Natural": (1.0,), "Engaging": (2.0, 3.0, 1.0)})
    assert geval.labeling.most_scores(one) == 3
    assert geval.labeling.most_scores([replace(item, human={}) for item in items]) is None
    assert geval.labeling.most_scores([replace(item, human={"Natural": ()}) for item in items]) == 0
