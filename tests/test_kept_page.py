"""The report's page kept in the store until the store changes (`geval.reporting.report_page`)."""

import dataclasses
import re

import pytest
from helpers import make_items, make_template, run_cli, scripted

import geval
from geval.reporting import kept_page

CHOICES = dict(baselines=["length"], n_boot=50)


@pytest.fixture
def scored(tmp_path):
    """A store file with 12 synthetic items scored once."""
    store = geval.Store(tmp_path / "store.sqlite")
    items = make_items(12)
    store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score(store, items, make_template(), scripted(), "synthetic")
    yield store
    store.close()


@pytest.fixture
def made(monkeypatch) -> list:
    """The reports made (not read back), one entry each."""
    calls = []
    real = kept_page.report

    def counted(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(kept_page, "report", counted)
    return calls


def without_time(page: str) -> str:
    return re.sub(r"(<p class=meta>Made [^<]*? on )\S+( with geval )", r"\1…\2", page, count=1)


def test_a_report_asked_for_again_on_an_unchanged_store_is_read_as_it_was_kept_saying_when_it_was_asked(
        scored, made, monkeypatch):
    first = geval.reporting.report_page(scored, "synthetic", command="geval report synthetic --html a.html", **CHOICES)
    monkeypatch.setattr(kept_page, "now", lambda: "2030-01-02T03:04:05+00:00")
    said = []
    again = geval.reporting.report_page(scored, "synthetic", command="geval report synthetic --html <b>.html",
                                        on_progress=said.append, **CHOICES)
    assert len(made) == 1 and said == ["synthetic: the store is unchanged since this report was made: read as it "
                                       "was kept"]
    assert "Made by `geval report synthetic --html &lt;b&gt;.html` on 2030-01-02T03:04:05+00:00 with geval " in again
    assert "2030-01-02" not in first
    assert without_time(again).replace("&lt;b&gt;", "a") == without_time(first)
    assert first.startswith("<!DOCTYPE html>") and "\x00" not in again


def test_a_change_to_the_store_other_choices_or_other_code_make_the_page_again(scored, made, monkeypatch):
    first = geval.reporting.report_page(scored, "synthetic", **CHOICES)
    geval.reporting.report_page(scored, "synthetic", **{**CHOICES, "n_boot": 60})  # other choices
    assert len(made) == 2
    scored.set_note(scored.items("synthetic")[0].id, True, "look at this one")
    flagged = geval.reporting.report_page(scored, "synthetic", **CHOICES)
    assert len(made) == 3 and "look at this one" in flagged and "look at this one" not in first
    monkeypatch.setattr(kept_page, "_code", lambda: "other code")
    geval.reporting.report_page(scored, "synthetic", **CHOICES)
    assert len(made) == 4
    geval.reporting.report_page(scored, "synthetic", **CHOICES)
    assert len(made) == 4


def test_scores_cached_while_the_page_is_made_are_no_change_but_another_processs_write_is(scored, made, monkeypatch,
                                                                                           tmp_path):
    """Baseline scores computed for the page are written to the store as it is made: derived, they do not count
    as a change. A label another process saves meanwhile does: that page is not kept."""
    geval.reporting.report_page(scored, "synthetic", **CHOICES)  # its length scores computed and cached
    geval.reporting.report_page(scored, "synthetic", **CHOICES)
    assert len(made) == 1
    real = kept_page.report

    def written_meanwhile(store, dataset, **kwargs):
        made_page = real(store, dataset, **kwargs)
        other = geval.Store(tmp_path / "store.sqlite")
        other.save_label(store.items("synthetic")[1].id, "Natural", 2.0)
        other.close()
        return made_page

    monkeypatch.setattr(kept_page, "report", written_meanwhile)
    geval.reporting.report_page(scored, "synthetic", **{**CHOICES, "n_boot": 70})
    monkeypatch.setattr(kept_page, "report", lambda *a, **k: pytest.fail("made again"))
    with pytest.raises(pytest.fail.Exception):
        geval.reporting.report_page(scored, "synthetic", **{**CHOICES, "n_boot": 70})


def test_the_store_counts_its_changes_from_every_connection_and_keeps_a_derived_value_until_the_next(tmp_path):
    path = tmp_path / "store.sqlite"
    store, other = geval.Store(path), geval.Store(path)
    start = store.content_version()
    other.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", make_items(3)))
    assert store.content_version() > start
    assert store.keep_derived("k", b"page", store.content_version()) and store.derived("k") == b"page"
    assert not store.keep_derived("stale", b"old page", start) and store.derived("stale") is None
    other.save_baseline_scores("sig", {"a": 1.0})  # a cache: no change of what the store holds
    assert other.derived("k") == b"page"
    other.set_note(other.items("synthetic")[0].id, True, "a note")
    assert store.derived("k") is None
    assert store.keep_derived("k2", b"new", store.content_version())
    assert store.db.execute("SELECT key FROM derived").fetchall() == [("k2",)]  # what was kept before is gone
    store.close()
    other.close()


def test_geval_report_html_run_again_reads_the_page_kept(scored, tmp_path):
    path = str(tmp_path / "store.sqlite")
    pages = []
    for name in ("a.html", "b.html"):
        done = run_cli("report", "synthetic", "--store", path, "--html", str(tmp_path / name), "--baselines", "length",
                       "--bootstrap", "50")
        assert done.returncode == 0, done.stderr
        pages.append((tmp_path / name).read_text())
    assert "read as it was kept" in done.stderr and "leaderboard" not in done.stderr
    assert without_time(pages[0]).replace("a.html", "b.html") == without_time(pages[1])


def test_the_same_file_loaded_again_writes_nothing_and_the_page_stays_kept_a_changed_one_writes(scored, made):
    """A new server loads the session's dataset file again: the same items as stored change nothing."""
    geval.reporting.report_page(scored, "synthetic", **CHOICES)
    version, loaded = scored.content_version(), scored.dataset_loaded("synthetic")
    scored.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", make_items(12)))
    assert (scored.content_version(), scored.dataset_loaded("synthetic")) == (version, loaded)
    geval.reporting.report_page(scored, "synthetic", **CHOICES)
    assert len(made) == 1
    changed = make_items(12)
    changed[3] = dataclasses.replace(changed[3], response="another response")
    scored.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", changed))
    assert scored.content_version() > version and scored.items("synthetic")[3].response == "another response"
    geval.reporting.report_page(scored, "synthetic", **CHOICES)
    assert len(made) == 2


def test_a_write_that_changed_no_row_is_no_change(scored):
    """Some writes look first and write only when they must (the key that signs a team's cookies, made once): read
    on every page, they must not make what is kept stale."""
    scored.session_key()
    version = scored.content_version()
    assert scored.session_key() == scored.session_key() and scored.content_version() == version
    assert scored.mark_crashed_runs() == [] and scored.content_version() == version
