"""geval.store.kept: a dataset's judgments in one file and back (`judgments export` / `import`), what the
shipped reports are made again from (reports/make.sh)."""

from __future__ import annotations

import json
import lzma

import pandas as pd
import pytest
from helpers import make_items, make_template, run_cli, scripted

import geval
from geval.data.dataset import Dataset
from geval.errors import StoreError

COLUMNS = ["id", "item_id", "aspect", "template_version", "signature", "signature_json", "call_key", "status", "score",
           "distribution", "reason"]


def _scored(path) -> geval.Store:
    store = geval.Store(path)
    items = make_items(12, dataset="mine")
    store.save_dataset(Dataset("mine", "mine.json", "table", items))
    geval.score(store, items, make_template(), scripted(), "mine")
    geval.score(store, items[:6], make_template(name="five", aspects=(("Naturalness", 1, 5, "Natural"),)), scripted(), "mine")
    return store


def _loaded(path) -> geval.Store:
    store = geval.Store(path)
    store.save_dataset(Dataset("mine", "mine.json", "table", make_items(12, dataset="mine")))
    return store


def _judgments(store: geval.Store) -> pd.DataFrame:
    return store.judgments("mine")[[*COLUMNS, "prompt", "raw"]].sort_values("id").reset_index(drop=True)


def test_judgments_read_back_from_their_file_are_the_same_rows_with_their_calls_and_runs(tmp_path):
    first = _scored(tmp_path / "a.sqlite")
    written = first.export_judgments("mine", tmp_path / "mine.jsonl.xz")
    assert (written["judgments"], written["templates"], written["runs"]) == (18, 2, 2)
    second = _loaded(tmp_path / "b.sqlite")
    read = second.import_judgments(tmp_path / "mine.jsonl.xz")
    assert read == written
    pd.testing.assert_frame_equal(_judgments(first), _judgments(second))
    assert len(second.runs("mine")) == 2
    assert set(second.judgments("mine")["run_id"]) == set(second.runs("mine")["id"])
    again = second.import_judgments(tmp_path / "mine.jsonl.xz")  # a second read changes nothing
    assert again == written and len(second.judgments("mine")) == 18 and len(second.runs("mine")) == 2
    pd.testing.assert_frame_equal(geval.agree(second, "mine"), geval.agree(first, "mine"))


def test_a_judgment_read_back_is_a_cache_hit_for_the_next_run(tmp_path):
    _scored(tmp_path / "a.sqlite").export_judgments("mine", tmp_path / "mine.jsonl.xz")
    second = _loaded(tmp_path / "b.sqlite")
    second.import_judgments(tmp_path / "mine.jsonl.xz")
    judge = scripted()
    geval.score(second, second.items("mine"), make_template(), judge, "mine")
    assert judge.calls == []


def test_the_cli_loads_the_dataset_its_file_names_then_reads_the_judgments(tmp_path):
    store = geval.Store(tmp_path / "a.sqlite")
    sample = geval.load_dataset("personachat_usr_sample", store=store)
    geval.score(store, sample.items[:4], make_template(), scripted(), sample.name)
    out = run_cli("judgments", "export", sample.name, "--out", str(tmp_path / "k.jsonl.xz"),
                  "--store", str(tmp_path / "a.sqlite"))
    assert out.returncode == 0 and "wrote 4 judgments, 4 cached calls, 1 run, 1 template version" in out.stdout
    read = run_cli("judgments", "import", str(tmp_path / "k.jsonl.xz"), "--store", str(tmp_path / "fresh.sqlite"))
    assert read.returncode == 0, read.stderr
    assert "read 4 judgments, 4 cached calls, 1 run, 1 template version of personachat_usr_sample" in read.stdout
    assert len(geval.Store(tmp_path / "fresh.sqlite").judgments(sample.name)) == 4


def _file(path, *records) -> str:
    with lzma.open(path, "wt") as out:
        out.write("".join(json.dumps(r) + "\n" if not isinstance(r, str) else r + "\n" for r in records))
    return str(path)


HEADER = {"format": "geval-judgments", "version": 1, "dataset": "mine"}


@pytest.mark.parametrize("records, said", [
    ((), "empty; expected a file written by `geval judgments export`"),
    (({"format": "something else", "dataset": "mine"},), "line 1: not a file of kept judgments"),
    (({**HEADER, "version": 99},), "written by a newer G-Eval Studio (format 99)"),
    ((HEADER, "{not json"), "line 2: not JSON"),
    ((HEADER, {"table": "labels", "row": {}}), "no table 'labels' among the kept judgments'"),
    ((HEADER, {"table": "calls", "row": {"key": "k", "colour": "red"}}), "has a column this store does not know (colour)"),
    ((HEADER, [1, 2]), "line 2: expected a JSON object"),
])
def test_a_bad_file_is_refused_with_its_line_and_nothing_is_read(tmp_path, records, said):
    store = _loaded(tmp_path / "b.sqlite")
    with pytest.raises(StoreError, match=said.replace("(", r"\(").replace(")", r"\)")):
        store.import_judgments(_file(tmp_path / "bad.jsonl.xz", *records))
    assert store.db["calls"].count == 0


def test_a_file_that_is_not_xz_or_whose_dataset_is_not_loaded_says_what_to_do(tmp_path):
    store = geval.Store(tmp_path / "b.sqlite")
    (tmp_path / "plain.jsonl").write_text(json.dumps(HEADER) + "\n")
    with pytest.raises(StoreError, match="not an xz-compressed file of kept judgments"):
        store.import_judgments(tmp_path / "plain.jsonl")
    with pytest.raises(StoreError, match=r"keeps judgments of 'mine', which .* does not hold; load it first"):
        store.import_judgments(_file(tmp_path / "k.jsonl.xz", HEADER))
    with pytest.raises(StoreError, match="mine: no judgments to keep"):
        _loaded(tmp_path / "c.sqlite").export_judgments("mine", tmp_path / "none.jsonl.xz")
    assert not (tmp_path / "none.jsonl.xz").exists()
