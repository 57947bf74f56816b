"""geval.catalog: finding bundled and shared datasets and templates by name or path."""

from __future__ import annotations

import pytest
from helpers import PROMPTS, template_text

from geval.data.dataset import known_datasets, resolve_dataset
from geval.errors import DatasetError, TemplateError
from geval.judging.templates import resolve_template


def test_known_datasets_include_the_shared_ones(shared_data):
    known = known_datasets()
    for name in ("tc_usr_data", "fed_data", "summeval", "dstc9_data"):
        assert known[name] == shared_data / f"{name}.json"
    assert resolve_dataset("tc_usr_data") == shared_data / "tc_usr_data.json"


def test_a_path_is_taken_as_is(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("a\n1\n")
    assert resolve_dataset(str(path)) == path


def test_an_unknown_dataset_names_the_known_ones():
    with pytest.raises(DatasetError) as error:
        resolve_dataset("no-such-dataset")
    assert str(error.value).startswith("no-such-dataset: no such file or known dataset; known: ")


def test_templates_by_path_file_stem_and_name(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text(template_text(name="from-a-path"), "utf-8")
    assert resolve_template(str(path)).name == "from-a-path"
    first = sorted(PROMPTS.glob("*.txt"))[0]
    by_stem = resolve_template(first.stem)
    assert by_stem.text == first.read_text("utf-8")
    assert resolve_template(by_stem.name).version == by_stem.version
    with pytest.raises(TemplateError, match="^nope: no such template file or name; known: "):
        resolve_template("nope")
