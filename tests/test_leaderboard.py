"""geval.leaderboard, `geval leaderboard`, `geval report` and the Agreement page's Leaderboard:
G-EVAL beside ROUGE-L, BLEU, chrF, length, an embedding metric and BERTScore, each with a CI."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, run_cli, scripted, template_text
from test_baselines import BagOfWords
from test_pmi import WordModel

import geval
from geval.analysis.agreement import MEAN_OF_ASPECTS, correlations, mean_of_aspects
from geval.analysis.baselines import compute_baselines
from geval.analysis.calibration import group_folds
from geval.analysis.comparison import paired_difference
from geval.analysis.leaderboard import CEILING, Row, leaderboard, with_baselines
from geval.analysis.protocols import get_protocol
from geval.judging.backends.scripted import ScriptedJudge
from geval.analysis.variants import VariantError
from geval.data.dataset import resolve_dataset
from geval.errors import GevalError, StoreError
from geval.judging.templates import parse_template, resolve_template
from geval.reporting.names import Names
from geval.reporting.tables import markdown_table

SAMPLE = REPO / "data" / "topicalchat_usr_sample.json"
SINGLE = ("topicalchat-naturalness", "topicalchat-coherence", "topicalchat-engagingness", "topicalchat-groundedness")
ASPECTS = ["Natural", "Maintains Context", "Engaging", "Uses Knowledge"]
N_BOOT = 100
GEVAL_ROW = "G-EVAL, one prompt per aspect (topicalchat-*) · scripted: hashed"
VS = "(vs fact, else context)"  # 2 of the sample's 10 contexts have no fact ('_nofact')
BASELINE_ROWS = [f"ROUGE-L {VS}", f"BLEU {VS}", f"chrF {VS}", "length", f"embedding-cosine {VS}", f"BERTScore-F1 {VS}",
                 "likelihood-gain (vs context)"]


def scored_store(path, templates=SINGLE, items: int | None = None) -> tuple[geval.Store, geval.Dataset]:
    store = geval.Store(path)
    dataset = geval.load_dataset(SAMPLE)
    store.save_dataset(dataset)
    for name in templates:
        geval.score(store, dataset.items[:items], resolve_template(name), scripted(), dataset.name)
    return store, dataset


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    store, dataset = scored_store(tmp_path_factory.mktemp("lb") / "store.sqlite")
    yield leaderboard(store, dataset.name, embedder=BagOfWords(), language_model=WordModel(), n_boot=N_BOOT), \
        store, dataset
    store.close()


def test_geval_is_listed_beside_the_baselines_each_with_a_ci(board):
    board, _, _ = board
    assert set(board.rows["row"]) == {GEVAL_ROW, *BASELINE_ROWS, CEILING}
    assert board.rows["row"].iloc[-1] == CEILING
    values = board.values()
    assert list(values.columns) == [*ASPECTS, "Overall", "average", "mean of aspects → Overall"]
    cells = board.cells[board.cells["metric"] == "pearson"]
    for row in [GEVAL_ROW, *BASELINE_ROWS]:
        for aspect in ASPECTS:
            cell = cells[(cells["row"] == row) & (cells["column"] == aspect)].iloc[0]
            assert math.isfinite(cell["value"]) and cell["low"] <= cell["value"] <= cell["high"], (row, aspect)
            assert cell["n"] == 60 and cell["protocol"] == "topicalchat-turn"
    wide = board.wide().set_index("row")
    assert wide.loc[f"BLEU {VS}", "Natural"].count("[") == 1
    assert wide.loc[GEVAL_ROW, "Overall"] == "–"  # the judge has no Overall aspect: its mean of aspects instead
    assert wide.loc[GEVAL_ROW, "mean of aspects → Overall"] not in ("", "–")
    assert "– where a row has no such cell" in geval.reporting.dataset_report.cells_note(wide)  # said, not left blank
    assert wide.loc["length", "reference"] == "-" and wide.loc[f"ROUGE-L {VS}", "reference"] == "fact, else context"


def test_every_row_carries_its_signatures(board):
    board, _, _ = board
    rows = board.rows.set_index("row")
    geval_signatures = rows.loc[GEVAL_ROW, "signature"].split("\n")
    assert len(geval_signatures) == 4
    assert all(s.startswith("backend:scripted|model:hashed|template:topicalchat-") for s in geval_signatures)
    blobs = json.loads(rows.loc[GEVAL_ROW, "signature_json"])
    assert sorted(b["template"].split("@")[0] for b in blobs) == sorted(SINGLE)
    assert [f"template:{b['template']}|" in s for b, s in zip(blobs, geval_signatures)] == [True] * 4
    assert rows.loc[f"BLEU {VS}", "signature"].startswith("BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp")
    assert rows.loc[f"embedding-cosine {VS}", "signature"] == \
        "embedding-cosine|model:bag-of-words|dim:64|ref:fact, else context"
    assert rows.loc[CEILING, "signature"] == ""


def test_an_average_over_fewer_aspects_than_the_other_rows_is_withheld_and_says_why(tmp_path):
    """Two of the four aspects scored: their mean is not the baselines' average of four, so the
    cell reads n/a with the count, the note names what it lacks, and the row ranks below."""
    store, dataset = scored_store(tmp_path / "store.sqlite", templates=SINGLE[:2])
    board = leaderboard(store, dataset.name, baselines=["rouge-l", "length"], n_boot=N_BOOT, ceiling=False)
    wide = board.wide().set_index("row")
    assert wide.loc[GEVAL_ROW, "average"] == "n/a (over 2 of 4 aspects)"
    assert wide.loc["length", "average"].startswith("0.")
    cell = board.cells[(board.cells["row"] == GEVAL_ROW) & (board.cells["aspect"] == "average")].iloc[0]
    assert math.isnan(cell["value"]) and "without Engaging, Uses Knowledge" in cell["note"]
    assert list(board.rows["row"])[-1] == GEVAL_ROW
    assert wide.loc[GEVAL_ROW, "Natural"].startswith(("0.", "-0."))  # its aspects still read
    store.close()


def test_the_average_and_mean_of_aspects_agree_with_the_protocols(board):
    board, store, dataset = board
    cells = board.cells[(board.cells["row"] == GEVAL_ROW) & (board.cells["metric"] == "pearson")]
    per_aspect = cells[cells["column"].isin(ASPECTS)]["value"]
    average = cells[cells["column"] == "average"].iloc[0]
    assert average["value"] == pytest.approx(per_aspect.mean(), abs=1e-12)
    scores = pd.DataFrame({name.split("-")[1]: _scores(store, dataset, name) for name in SINGLE})
    scales = {"naturalness": (1, 3), "coherence": (1, 3), "engagingness": (1, 3), "groundedness": (0, 1)}
    mean = correlations(mean_of_aspects(scores, scales).to_frame(), dataset.items, get_protocol("topicalchat-turn"),
                        {MEAN_OF_ASPECTS: "Overall"}, n_boot=N_BOOT)
    expected = mean[mean["metric"] == "pearson"]["value"].iloc[0]
    assert cells[cells["column"] == "mean of aspects → Overall"]["value"].iloc[0] == pytest.approx(expected)


def _scores(store, dataset, name) -> pd.Series:
    template = resolve_template(name)
    frame = store.judgments(dataset.name, template.version)
    return frame.set_index("item_id")["score"]


def test_a_second_version_of_an_aspect_and_a_multi_aspect_template_get_rows_of_their_own(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE[:2] + ("topicalchat-multi",))
    other = parse_template(resolve_template(SINGLE[0]).text.replace("scores ONLY", "numbers ONLY"),
                                 source="v2")
    geval.score(store, dataset.items, other, scripted(), dataset.name)
    board = leaderboard(store, dataset.name, baselines=["length"], ceiling=False, n_boot=N_BOOT)
    labels = list(board.rows["row"])
    assert GEVAL_ROW in labels
    assert f"G-EVAL {resolve_template('topicalchat-multi').label} · scripted: hashed" in labels
    older = resolve_template(SINGLE[0]).label
    assert f"G-EVAL {older} · scripted: hashed" in labels  # the newer version joined the merged row
    merged = board.rows.set_index("row").loc[GEVAL_ROW, "signature"]
    assert other.label in merged and older not in merged
    assert board.skipped == []


def test_a_second_version_compared_with_another_human_aspect_does_not_join_the_first_in_the_merged_row(tmp_path):
    """Two versions of one template, one compared with another human aspect (human = "Engaging"): both joined
    the one-prompt-per-aspect row, whose two columns of one name left it empty ("no score column (natural,
    natural) maps to a human aspect")."""
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE[:2])
    text = resolve_template(SINGLE[0]).text
    assert 'human = "Natural"' in text
    other = parse_template(text.replace('human = "Natural"', 'human = "Engaging"'), source="v2")
    geval.score(store, dataset.items, other, scripted(), dataset.name)
    board = leaderboard(store, dataset.name, baselines=["length"], ceiling=False, n_boot=N_BOOT)
    merged = board.rows.set_index("row").loc[GEVAL_ROW, "signature"]
    assert other.label in merged and resolve_template(SINGLE[0]).label not in merged  # the newest version alone
    assert f"G-EVAL {resolve_template(SINGLE[0]).label} · scripted: hashed" in list(board.rows["row"])
    assert board.skipped == [] and board.wide().set_index("row").loc[GEVAL_ROW, "Engaging"] != ""


def test_score_variants_are_rows_and_samples_of_a_logits_judge_is_left_out_with_a_reason(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE, items=12)
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT,
                        variants=["wmean", "argmax", "samples"])
    assert set(board.rows["row"]) == {GEVAL_ROW, f"{GEVAL_ROW} [argmax]"}
    assert len(board.skipped) == 1 and "hold no samples" in board.skipped[0]
    with pytest.raises(VariantError, match="score variant 'mode' is unknown"):
        leaderboard(store, dataset.name, baselines=[], variants=["mode"])


def test_baselines_and_people_rest_on_the_items_the_judge_scored(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE, items=12)
    board = leaderboard(store, dataset.name, baselines=["length"], n_boot=N_BOOT)
    assert set(board.cells[board.cells["column"] == "Natural"]["n"]) == {12}


def test_calibrated_rows_are_held_out_and_signed(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE)
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, calibrate=True, n_boot=N_BOOT)
    calibrated = f"{GEVAL_ROW} [calibrated, 5-fold CV by group]"
    assert set(board.rows["row"]) == {GEVAL_ROW, calibrated}
    signatures = board.rows.set_index("row").loc[calibrated, "signature"].split("\n")
    assert all(s.endswith("|calib:isotonic|combine:linear|folds:5|cv:group|seed:0") for s in signatures)
    values = board.values("pearson").loc[calibrated]
    assert all(np.isfinite(values[a]) for a in ASPECTS)
    assert np.isfinite(values["learned combination → Overall"]) and np.isnan(values["mean of aspects → Overall"])
    assert list(board.values().columns)[-1] == "learned combination → Overall"


def test_a_judge_combined_with_baselines_is_fitted_on_other_folds_only(tmp_path):
    """With calibrate and baselines, each judge row gets a held-out ridge combination with the baselines: its
    scores on one fold do not move when that fold's human labels change, and the row says it uses labels."""
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE)
    board = leaderboard(store, dataset.name, baselines=["length", "rouge-l"], ceiling=False, calibrate=True,
                        n_boot=N_BOOT)
    combined = f"{GEVAL_ROW} + baselines [held-out ridge combination, 5-fold CV by group]"
    assert combined in set(board.rows["row"])
    row = board.rows.set_index("row").loc[combined]
    assert row["note"].startswith("uses human labels: each aspect predicted from 4 judge scores and length, "
                                  f"ROUGE-L {VS} by a ridge regression")
    assert all(s.endswith(f"|combine:ridge|features:4 judge scores|with:length,ROUGE-L {VS}|folds:5|cv:group"
                          "|alpha:inner cv|seed:0") for s in row["signature"].split("\n"))
    values = board.values("pearson").loc[combined]
    assert all(np.isfinite(values[a]) for a in ASPECTS) and np.isfinite(values["mean of aspects → Overall"])

    items = dataset.items
    groups = pd.Series({i.id: i.group for i in items})
    fold = pd.Series(group_folds(groups.to_numpy(), 5, 0), index=groups.index)
    judge = pd.DataFrame({"naturalness": [hash(i.id) % 7 / 3.0 for i in items]}, index=[i.id for i in items])
    length = Row("length", "baseline", [], [], pd.Series([len(i.response.split()) for i in items], index=judge.index))
    before = with_baselines(Row("j", "judge", ["s"], [{}], judge, {"naturalness": "Natural"}), [length], items, 5, 0,
                             [])
    changed = [replace(i, human={**i.human, "Natural": (9.0,)}) if fold[i.id] == 0 else i for i in items]
    after = with_baselines(Row("j", "judge", ["s"], [{}], judge, {"naturalness": "Natural"}), [length], changed, 5, 0,
                            [])
    on_fold = fold[fold == 0].index
    assert np.allclose(before.scores.loc[on_fold, "naturalness"], after.scores.loc[on_fold, "naturalness"])
    assert not np.allclose(before.scores.loc[fold != 0, "naturalness"], after.scores.loc[fold != 0, "naturalness"])


def test_an_ensemble_is_the_mean_of_the_judge_rows_on_a_common_scale(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE + ("topicalchat-multi",))
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, ensemble=True, n_boot=N_BOOT)
    multi = f"G-EVAL {resolve_template('topicalchat-multi').label} · scripted: hashed"
    assert "ensemble: mean of 2 judge rows" in set(board.rows["row"])
    note = board.rows.set_index("row").loc["ensemble: mean of 2 judge rows", "note"]
    assert note.startswith(f"no human labels: each aspect the mean of {GEVAL_ROW}; {multi}")
    value = board.values("pearson").loc["ensemble: mean of 2 judge rows", "Natural"]
    assert value == pytest.approx(_mean_01_pearson(store, dataset, ("topicalchat-naturalness", "topicalchat-multi")),
                                  abs=1e-9)


def _mean_01_pearson(store, dataset, templates) -> float:
    """Pearson with Natural of the mean of the templates' naturalness scores, each mapped onto 0-1."""
    parts = []
    for name in templates:
        frame = geval.disagreements(store, dataset.name, (resolve_template(name).version, None))
        parts.append(frame[frame["aspect"] == "naturalness"].set_index("item_id")["judge_01"])
    mean = sum(parts) / len(parts)
    human = pd.Series({i.id: i.human_mean("Natural") for i in dataset.items})
    return mean.corr(human.reindex(mean.index))


def test_three_judge_rows_give_the_mean_of_all_and_of_each_pair(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE + ("topicalchat-multi", "topicalchat-shared"))
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, ensemble=True, n_boot=N_BOOT)
    multi, shared = (resolve_template(name).label for name in ("topicalchat-multi", "topicalchat-shared"))
    one = "one prompt per aspect (topicalchat-*)"
    pairs = {row: set(row.removeprefix("ensemble: ").split(" + ")) for row in board.rows["row"]
             if row.startswith("ensemble: ") and " + " in row}
    assert sorted(map(sorted, pairs.values())) == sorted([sorted(p) for p in ([one, multi], [one, shared],
                                                                               [multi, shared])])
    assert "ensemble: mean of 3 judge rows" in set(board.rows["row"])
    values = board.values("pearson")
    assert values.loc[next(r for r, p in pairs.items() if p == {multi, shared}), "Natural"] == pytest.approx(
        _mean_01_pearson(store, dataset, ("topicalchat-multi", "topicalchat-shared")), abs=1e-9)
    assert values.loc["ensemble: mean of 3 judge rows", "Natural"] == pytest.approx(_mean_01_pearson(
        store, dataset, ("topicalchat-naturalness", "topicalchat-multi", "topicalchat-shared")), abs=1e-9)


def test_every_judge_row_with_the_baselines_in_one_held_out_ridge_combination(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE + ("topicalchat-multi",))
    geval.score(store, dataset.items[:40], resolve_template("topicalchat-shared"), scripted(), dataset.name)
    board = leaderboard(store, dataset.name, baselines=["length"], ceiling=False, calibrate=True, n_boot=N_BOOT)
    label = "every judge row with all items (2) + baselines [held-out ridge combination, 5-fold CV by group]"
    row = board.rows.set_index("row").loc[label]
    assert row["note"].startswith("uses human labels: each aspect predicted from 8 judge scores (")
    signatures = row["signature"].split("\n")
    assert len(signatures) == 5 and all(s.endswith("|combine:ridge|features:8 judge scores|with:length|folds:5"
                                                   "|cv:group|alpha:inner cv|seed:0") for s in signatures)
    values = board.values("pearson").loc[label]
    assert all(np.isfinite(values[a]) for a in ASPECTS) and np.isfinite(values["mean of aspects → Overall"])
    counts = board.cells[board.cells["row"] == label]["n"]
    assert set(counts) == {len(dataset.items)}  # the shared template's 40 items do not narrow it


def test_a_judge_row_with_less_than_half_the_items_judged_is_left_out_with_one_line(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE)
    geval.score(store, dataset.items[:5], resolve_template("topicalchat-multi"), scripted(), dataset.name)
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT)
    multi = f"G-EVAL {resolve_template('topicalchat-multi').label} · scripted: hashed"
    assert set(board.rows["row"]) == {GEVAL_ROW}
    assert f"1 judge row with fewer than half of the {len(dataset.items)} items the most complete row judged are " \
           f"left out: {multi} (5)" in board.skipped


def test_a_judge_imported_on_an_aspect_nobody_scored_leaves_out_no_row_that_judged_fewer_items(tmp_path):
    """A judge imported on all 60 items as naturalness where people scored Natural made the rows of the judge scored
    on 12 "fewer than half of the 60 items the most complete row judged": the report's bottom line then read "No
    correlation with people to report yet" above a per-aspect line giving one."""
    from geval.scoring.imports import import_judge

    dataset = geval.load_dataset(SAMPLE)
    store = geval.Store(tmp_path / "s.sqlite")
    store.save_dataset(dataset)
    geval.score(store, dataset.items[:12], resolve_template("topicalchat-naturalness"), scripted(), dataset.name)
    table = tmp_path / "elsewhere.csv"
    table.write_text("item_id,score\n" + "".join(f"{item.id},{1 + n % 3}\n" for n, item in enumerate(dataset.items)))
    import_judge(store, dataset.name, table, aspect="naturalness", scale=(1, 3))
    board = leaderboard(store, dataset.name, baselines=["length"], n_boot=N_BOOT)
    scored = f"G-EVAL {resolve_template('topicalchat-naturalness').label} · scripted: hashed"
    assert set(board.rows.loc[board.rows["kind"] == "judge", "row"]) == {scored}
    assert board.skipped == ["1 judge row compared with no aspect people scored here (Understandable, Natural, "
                             "Maintains Context, Engaging, Uses Knowledge, Overall) left out: elsewhere (imported from "
                             "elsewhere.csv) (naturalness); import it again naming one of theirs, or label its aspect"]
    assert set(board.cells["n"]) == {12}  # the baselines' and people's rows on the judge's 12 items, not on 60
    assert np.isfinite(board.values("pearson").loc[scored, "Natural"])


def test_every_judge_row_is_compared_pairwise_with_one_prompt_per_aspect(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE + ("topicalchat-multi",))
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, ensemble=True, n_boot=N_BOOT)
    multi = f"G-EVAL {resolve_template('topicalchat-multi').label} · scripted: hashed"
    paired = board.paired.set_index(["row", "column"])
    assert set(board.paired["against"]) == {GEVAL_ROW}
    assert set(board.paired["row"]) == {multi, "ensemble: mean of 2 judge rows"}  # judge rows only, not itself
    assert list(board.versus().columns) == ["row", "against", "caveat", *ASPECTS, f"{MEAN_OF_ASPECTS} → Overall",
                                            "average"]
    natural = {}
    for name in ("topicalchat-naturalness", "topicalchat-multi"):
        frame = geval.disagreements(store, dataset.name, (resolve_template(name).version, None))
        natural[name] = frame[frame["human"] == "Natural"].set_index("item_id")
    a, b = natural["topicalchat-naturalness"], natural["topicalchat-multi"]
    one = paired_difference(a["score"], b["score"].reindex(a.index), a["human_score"], a["group"], "pearson")
    row = paired.loc[(multi, "Natural")]
    assert (row["difference"], row["low"], row["high"], row["p"]) == pytest.approx(
        (one.difference, one.low, one.high, one.p), abs=1e-12)
    assert paired.loc[(multi, "average"), "difference"] == pytest.approx(
        np.mean([paired.loc[(multi, aspect), "difference"] for aspect in ASPECTS]), abs=1e-12)
    assert board.versus().set_index("row").loc[multi, "Natural"].startswith(f"{one.difference:+.3f} [")

    text = geval.reporting.report(store, dataset.name, baselines=[], ensemble=True, n_boot=N_BOOT, figures=False).markdown()
    assert f"### Against {GEVAL_ROW}" in text and f"{one.difference:+.3f} [" in text
    assert leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT, against=None).paired.empty
    with pytest.raises(GevalError, match="no judge row of 'topicalchat_usr_sample' is named 'nope'; the judge rows"):
        leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT, against="nope")


def test_the_default_row_of_reference_is_one_whose_scores_vary(tmp_path):
    constant = ScriptedJudge(lambda prompt, aspect: {2: 1.0}, name="constant")  # no correlation with anything
    for one_prompt_per_aspect, against in (((constant,), set()), ((constant, scripted()), {GEVAL_ROW})):
        store, dataset = scored_store(tmp_path / f"{len(one_prompt_per_aspect)}.sqlite", ("topicalchat-multi",))
        for judge in one_prompt_per_aspect:
            for name in SINGLE:
                geval.score(store, dataset.items, resolve_template(name), judge, dataset.name)
        board = leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT)
        # not "... · scripted: constant", whose every cell would be n/a; with no other, nothing to compare with
        assert set(board.paired["against"]) == against
        store.close()


def test_rows_of_one_judge_at_two_settings_are_told_apart_not_merged(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", ())
    for max_tokens in (16, 32):
        judge = scripted()
        judge.settings = {**judge.settings, "max_tokens": max_tokens}  # as two answer lengths of one model
        for name in SINGLE:
            geval.score(store, dataset.items, resolve_template(name), judge, dataset.name)
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT)
    assert set(board.rows["row"]) == {f"{GEVAL_ROW} · max_tokens {n}" for n in (16, 32)}
    store.close()


def test_the_row_of_reference_is_the_most_complete_and_notes_count_each_aspect(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", ("topicalchat-multi",))
    for judge, items in ((scripted(), dataset.items[:8]), (ScriptedJudge(name="other"), dataset.items)):
        for name in SINGLE:  # the first judge scores 8 items of each aspect, the other every item
            geval.score(store, items, resolve_template(name), judge, dataset.name)
    geval.score(store, dataset.items, resolve_template("topicalchat-naturalness"), scripted(), dataset.name)
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT)
    complete = "G-EVAL, one prompt per aspect (topicalchat-*) · scripted: other"
    assert set(board.paired["against"]) == {complete}  # not the newer row scored on 8 items for 3 aspects
    n = len(dataset.items)
    assert board.rows.set_index("row").loc[GEVAL_ROW, "note"] == (
        f"{n} of {n} items judged (naturalness {n}, groundedness 8, engagingness 8, coherence 8)")
    assert board.rows.set_index("row").loc[complete, "note"] == f"{n} of {n} items judged"
    store.close()


def test_primary_only_computes_what_wide_shows(board):
    full, store, dataset = board
    quick = leaderboard(store, dataset.name, embedder=BagOfWords(), language_model=WordModel(), n_boot=N_BOOT,
                        primary_only=True)
    assert set(quick.cells["metric"]) == {"pearson"}
    pd.testing.assert_frame_equal(quick.wide(), full.wide())


def test_errors_name_the_dataset(store):
    with pytest.raises(StoreError, match="dataset 'nope' is not in :memory:; load or score it first"):
        leaderboard(store, "nope")


def test_baselines_alone_when_nothing_is_scored(store):
    dataset = geval.load_dataset(SAMPLE)
    store.save_dataset(dataset)
    board = leaderboard(store, dataset.name, baselines=["length"], n_boot=N_BOOT)
    assert list(board.rows["row"]) == ["length", CEILING]


def test_markdown_table_escapes_pipes_and_newlines():
    text = markdown_table(pd.DataFrame({"a": ["x|y"], "b": ["one\ntwo"]}))
    assert text == "| a | b |\n|---|---|\n| x\\|y | one<br>two |"


def test_cli_leaderboard_and_report(tmp_path):
    scored_store(tmp_path / "store.sqlite")[0].close()
    store = str(tmp_path / "store.sqlite")
    done = run_cli("leaderboard", "topicalchat_usr_sample", "--store", store, "--baselines", "rouge-l,bleu,length",
                   "--bootstrap", "50", "--csv", str(tmp_path / "lb.csv"), "--calibrate")
    assert done.returncode == 0, done.stderr
    assert f"against {GEVAL_ROW}, the rows that use the human labels, apart: intervals without refitting " \
           "(difference in the protocol's metric" in done.stdout
    assert "judge rows only" not in done.stdout  # one judge row: no other judge row to set against it
    for label in (GEVAL_ROW, f"ROUGE-L {VS}", f"BLEU {VS}", "length", CEILING):
        assert label in done.stdout
    assert "signatures:" in done.stdout and "BLEU|nrefs:1" in done.stdout
    assert set(pd.read_csv(tmp_path / "lb.csv")["metric"]) == {"pearson", "spearman", "kendall"}

    out = tmp_path / "reports"
    done = run_cli("report", "topicalchat_usr_sample", "--store", store, "--out", str(out), "--baselines",
                   "length", "--bootstrap", "50", "--goals")
    assert done.returncode == 0, done.stderr
    text = (out / "topicalchat_usr_sample.md").read_text()
    assert f"Made by `python -m geval report topicalchat_usr_sample --out {out} --store {store} --baselines length " \
           f"--bootstrap 50 --goals`" in text
    assert "## Leaderboard" in text and "## Against the goals (Topical-Chat USR, Pearson)" in text  # asked for
    assert "backend:scripted|model:hashed|template:topicalchat-naturalness@" in text
    assert "](topicalchat_usr_sample.html)" in text  # the plots, drawn in the HTML page
    page = (out / "topicalchat_usr_sample.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'src="plotly.min.js"' not in page
    assert page.count("* plotly.js (cartesian - minified) v") == 1 and sorted(p.name for p in out.iterdir()) == [  # once
        "topicalchat_usr_sample.html", "topicalchat_usr_sample.md"]

    done = run_cli("leaderboard", "nope", "--store", store, "--baselines", "none")
    assert done.returncode == 2 and done.stderr.startswith("error: dataset 'nope' is not in")


def test_the_agreement_page_shows_the_leaderboard(monkeypatch, tmp_path):
    from tests.test_page_inspect import scored_app

    at, _ = scored_app(monkeypatch, tmp_path, templates=(resolve_template("topicalchat-coherence"),))
    at.switch_page("views/5_agreement.py").run()
    assert not at.exception
    at.number_input(key="agree_boot").set_value(100).run()
    assert "pmi" in at.multiselect(key="agree_lb_baselines").options  # offered, not chosen by default (slow)
    assert "pmi" not in at.multiselect(key="agree_lb_baselines").value
    waiting = "The leaderboard is made when Compute is on: the judges beside the baselines, ranked."
    assert waiting in [c.value for c in at.caption]  # its controls alone read as a leaderboard that failed to draw
    at.toggle(key="agree_lb").set_value(True).run()
    assert not at.exception and not at.error and waiting not in [c.value for c in at.caption]
    table = next(d.value for d in at.dataframe if "row" in d.value.columns)
    assert f"ROUGE-L {VS}" in set(table["row"]) and "length" in set(table["row"])
    assert GEVAL_ROW in set(table["row"])  # naturalness and coherence, read together
    assert "Natural" in table.columns
    assert not any("held-out" in r for r in table["row"])
    versus = [d.value for d in at.dataframe if "row" in d.value.columns and "kind" not in d.value.columns]
    assert versus == []  # one judge row: nothing to compare it with
    at.toggle(key="agree_lb_combined").set_value(True).run()
    assert not at.exception and not at.error
    alone, fitted = [d.value for d in at.dataframe if "row" in d.value.columns and "kind" in d.value.columns]
    combined = f"{GEVAL_ROW} + baselines [held-out ridge combination, 5-fold CV by group]"
    assert combined in set(fitted["row"]) and combined not in set(alone["row"])
    assert set(fitted["kind"]) == {"supervised"}
    assert any("is the best of" in c.value for c in at.caption)
    versus = next(d.value for d in at.dataframe if "row" in d.value.columns and "kind" not in d.value.columns)
    assert "chosen" in versus.columns  # the fitted rows' own comparison: the judge rows' has one row, none to compare
    assert combined in set(versus["row"]) and versus.set_index("row").loc[combined, "Natural"].startswith(("+", "-"))
    assert any("best of" in c.value and "minus" in c.value for c in at.caption)


@pytest.mark.model
def test_the_embedding_baseline_with_the_bundled_gguf_model(tmp_path):
    """The real embedding metric (llama-cpp-python embedding mode, mean pooling) on 12 items."""
    store, dataset = scored_store(tmp_path / "store.sqlite", SINGLE, items=12)
    items = [i for i in dataset.items if i.id in set(store.judgments(dataset.name)["item_id"])]
    result = compute_baselines(items, ["embedding"], dataset=dataset.name, layout="usr", store=store)[0]
    assert result.signature.startswith("embedding-cosine|model:qwen2.5-coder-1.5b-instruct-q4_k_m|"
                                       "weights:cc324af070c2|pool:mean|trunc:2048|llama-cpp-python:")
    assert result.signature.endswith("|ref:fact")  # the first 12 items all have a fact
    assert result.scores.between(-1, 1).all() and result.scores.nunique() > 1
    board = leaderboard(store, dataset.name, baselines=["rouge-l", "bleu", "length", "embedding"], n_boot=N_BOOT)
    cells = board.cells[(board.cells["row"] == "embedding-cosine (vs fact)") & (board.cells["metric"] == "pearson")]
    assert len(cells[cells["column"].isin(ASPECTS)]) == 4
    assert cells["value"].notna().all() and cells["low"].isna().all()  # 12 items in 2 dialogues: no interval
    assert cells["note"].str.contains("no interval: 2 groups").all()


@pytest.mark.parametrize("sample, protocols, column", [
    ("personachat_usr_sample", ["personachat-turn"], "Uses Knowledge"),
    ("fed_sample", ["fed-turn", "fed-dialogue"], "Coherent (fed-dialogue)"),
    ("summeval_sample", ["summeval-summary", "summeval-system"], "relevance (summeval-summary)"),
    ("dstc9_sample", ["dstc9-dialogue", "dstc9-system"], "overall (dstc9-system)"),
])
def test_every_bundled_sample_gets_its_protocols(store, sample, protocols, column):
    dataset = geval.load_dataset(resolve_dataset(sample))
    store.save_dataset(dataset)
    board = leaderboard(store, dataset.name, baselines=["length"], n_boot=30)
    assert list(dict.fromkeys(board.cells["protocol"])) == protocols
    assert column in board.values().columns
    assert math.isfinite(board.values().loc["length", column])


def test_the_report_compares_templates_scored_on_the_same_human_aspect(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE + ("topicalchat-shared",))
    path = geval.reporting.report(store, dataset.name, command="test", baselines=("length",), n_boot=N_BOOT, figures=False,
                        ceiling=False).write(tmp_path / "out")
    section = path.read_text().split("## Template versions and judges compared")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[0] for row in rows] == ["| Natural", "| Maintains Context", "| Engaging",
                                                     "| Uses Knowledge"]
    combos = store.combos(dataset.name)
    combos = combos.set_index(combos["template"].str.split("@").str[0])
    one, shared = combos.loc["topicalchat-naturalness"], combos.loc["topicalchat-shared"]
    expected = geval.compare(store, dataset.name, (one["template_version"], one["signature"]),
                              (shared["template_version"], shared["signature"]), "Natural")
    assert f"| {expected.difference:+.3f} [{expected.low:+.3f}, {expected.high:+.3f}] |" in rows[0]
    assert "| topicalchat-naturalness · scripted: hashed | topicalchat-shared · scripted: hashed |" in rows[0]
    store.close()


@pytest.mark.parametrize("name, aspect, family", [
    ("topicalchat-naturalness", "Naturalness", "topicalchat-*"),
    ("topicalchat-naturalness-cot", "Naturalness", "topicalchat-*-cot"),
    ("fed-turn-engaging", "Engagingness", "fed-turn-*"),
    ("mine", "Overall", "mine"),
])
def test_one_aspect_templates_named_alike_share_a_family(name, aspect, family):
    from geval.analysis.leaderboard import name_family

    assert name_family(parse_template(template_text(name=name, aspects=((aspect, 1, 3),)))) == family


def test_the_mean_of_aspects_is_one_number_in_the_table_the_cli_and_the_leaderboard(tmp_path):
    # topicalchat-shared asks on 1-3 and 0-1 scales: a raw mean and a mean of 0-1 scores differ
    store, dataset = scored_store(tmp_path / "store.sqlite", ("topicalchat-shared",))
    template = resolve_template("topicalchat-shared")
    table = geval.agree(store, dataset.name, (template.version, None), levels=("item",), n_boot=N_BOOT)
    in_table = table[(table["aspect"] == MEAN_OF_ASPECTS) & (table["metric"] == "pearson")]["value"].iloc[0]
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT)
    cells = board.cells[(board.cells["column"] == "mean of aspects → Overall") & (board.cells["metric"] == "pearson")]
    wide = store.judgments(dataset.name).pivot_table(index="item_id", columns="aspect", values="score")
    scaled = sum((wide[a.key] - a.min) / (a.max - a.min) for a in template.aspects) / 4
    overall = [next(i for i in dataset.items if i.id == item_id).human_mean("Overall") for item_id in wide.index]
    by_hand = np.corrcoef(scaled, overall)[0, 1]
    assert in_table == pytest.approx(by_hand, abs=1e-12)
    assert cells["value"].iloc[0] == pytest.approx(by_hand, abs=1e-12)
    assert by_hand != pytest.approx(np.corrcoef(wide.mean(axis=1), overall)[0, 1], abs=1e-6)  # not the raw mean
    printed = run_cli("agree", dataset.name, "--levels", "item", "--bootstrap", "50", "--store", str(store.path))
    line = next(line for line in printed.stdout.splitlines() if "mean of aspects" in line and "pearson" in line)
    assert f"{by_hand:+.3f}" in line


def test_counts_are_of_the_datasets_current_items_and_name_their_row(tmp_path):
    store, dataset = scored_store(tmp_path / "store.sqlite", SINGLE[:1], items=12)
    smaller = geval.Dataset(dataset.name, dataset.path, dataset.layout, dataset.items[6:])  # a reloaded, shorter file
    store.save_dataset(smaller)
    board = leaderboard(store, dataset.name, baselines=[], ceiling=False, n_boot=N_BOOT)
    row = board.rows[board.rows["kind"] == "judge"].iloc[0]
    assert row["note"] == "6 of 54 items judged"  # not 12: six judged items are gone from the file
    path = geval.reporting.report(store, dataset.name, baselines=[], ceiling=False, figures=False,
                        n_boot=N_BOOT).write(tmp_path / "out")
    readable = Names(store.combos(dataset.name), store.template_comments())  # as the report names its rows
    assert f"- {readable(row['row'])}: 6 of 54 items judged" in path.read_text()


def test_cli_report_on_an_uploaded_style_csv_needs_no_protocol(tmp_path):
    """A user's own table (CSV, mapped with --map) matches no published protocol: the leaderboard and the
    report use the generic one, item, group and system level, and say where the data allows no number."""
    rows = ["reply,history,bot,dialog,overall"] + [f"answer {i} {'word ' * (i % 7)},A: hi {i // 4},s{i % 3},d{i // 4},"
                                                   f"{1 + (i * 7) % 5}" for i in range(24)]  # 6 dialogues of 4
    (tmp_path / "mine.csv").write_text("\n".join(rows) + "\n")
    template = tmp_path / "overall.txt"
    template.write_text(template_text(name="mine-overall", aspects=(("Overall", 1, 5),),
                                      body="Context:\n{{context}}\n\nResponse:\n{{response}}\n\nForm:\n- Overall:"))
    store = str(tmp_path / "store.sqlite")
    done = run_cli("score", str(tmp_path / "mine.csv"), "--map", "response=reply", "--map", "context=history",
                   "--map", "system=bot", "--map", "group=dialog", "--map", "score:Overall=overall", "-t",
                   str(template), "--judge", "scripted", "--store", store)
    assert done.returncode == 0, done.stderr
    done = run_cli("leaderboard", "mine", "--store", store, "--baselines", "length", "--bootstrap", "50")
    assert done.returncode == 0, done.stderr
    assert "Overall (group level)" in done.stdout  # 6 dialogues of 4 items:
    assert "n/a (6 groups, 10 needed)" in done.stdout

    done = run_cli("report", "mine", "--store", store, "--out", str(tmp_path / "out"), "--baselines", "length",
                   "--bootstrap", "50")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / "mine.md").read_text()
    assert "Protocol every item, at the item, group and system levels (generic)" in text
    assert "24 of 24 items judged" in text
    board = text.split("## Leaderboard")[1].split("\n## ")[0]
    judge = next(line for line in board.splitlines() if line.startswith("| G-EVAL mine-overall · scripted: hashed |"))
    assert " (no interval: 6 groups) |" in judge and "| n/a (" in judge
    assert (tmp_path / "out" / "mine.html").read_text().startswith("<!DOCTYPE html>")

    done = run_cli("report", "mine", "--store", store, "--out", str(tmp_path / "out"), "--protocol", "summeval-summary",
                   "--baselines", "none", "--bootstrap", "50")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == ("error: none of the protocols summeval-summary applies to dataset 'mine' "
                                            "(its items are at turn level); use --protocol generic"), done.stderr


def test_a_checklists_answers_to_each_question_feed_its_held_out_combination(tmp_path):
    store, dataset = scored_store(tmp_path / "s.sqlite", ("topicalchat-checklist",))
    checklist = resolve_template("topicalchat-checklist")
    questions = sum(len(a.questions) for a in checklist.aspects)
    scored = geval.leaderboard(store, dataset.name, baselines=["length"], ceiling=False, calibrate=True,
                               n_boot=N_BOOT)
    label = f"G-EVAL {checklist.label} · scripted: hashed + baselines [held-out ridge combination, 5-fold CV by group]"
    row = scored.rows.set_index("row").loc[label]
    assert row["note"].startswith(f"uses human labels: each aspect predicted from 4 judge scores and {questions} "
                                  "answers to parts of them (checklist questions, batch orders) and length")
    assert all(f"|features:4 judge scores+{questions} parts|" in s for s in row["signature"].split("\n"))


def test_rows_that_use_the_human_labels_have_a_section_of_their_own_and_no_judge_goal(tmp_path):
    """Calibrated rows and learned combinations '+ baselines' are fitted on the people's scores: beside the
    judge's rows but apart, the best said to be the best of k, never read against a judge's goal, their
    intervals said to leave out refitting."""
    store, dataset = scored_store(tmp_path / "s.sqlite")
    board = leaderboard(store, dataset.name, baselines=["length"], ceiling=False, calibrate=True, n_boot=N_BOOT)
    fitted = board.rows[board.rows["kind"] == "supervised"]
    assert len(fitted) >= 2 and fitted["row"].str.contains(r"calibrated|\+ baselines").all()
    assert fitted["note"].str.contains("does not include refitting").all()
    assert board.best_of() == (fitted["row"].iloc[0], len(fitted))
    assert set(board.wide(supervised=True)["row"]) == set(fitted["row"])
    assert not set(board.wide(supervised=False)["row"]) & set(fitted["row"])
    text = geval.reporting.report(store, dataset.name, baselines=["length"], calibrate=True, figures=False, ceiling=False,
                        n_boot=N_BOOT, goals=True).markdown()
    main = text[text.index("## Leaderboard"):text.index("### Rows that use the human labels")]
    section = text[text.index("### Rows that use the human labels"):]
    assert "held-out ridge" not in main.split("Notes:")[0] and "calibrated," not in main.split("Notes:")[0]
    assert f"is the best of {len(fitted)} such rows" in section and f"| best of {len(fitted)} |" in section
    goals = text[text.index("### Against the goals"):]
    goals = goals[:goals.index("\n## ")]
    readable = Names(store.combos(dataset.name), store.template_comments())  # as the report names its rows
    assert GEVAL_ROW in goals and not any(readable(label) in goals for label in fitted["row"])
    assert not [line for line in text.splitlines() if "the goal .50" in line and ("calibrated" in line
                                                                                   or "+ baselines" in line)]


def test_judge_rows_are_compared_with_judge_rows_and_label_using_rows_apart(tmp_path):
    """The 'against a reference' table takes judge rows only; the fitted rows are compared in a section of their
    own, the best 'best of k', their intervals said to leave out refitting. Wherever rows are read against the
    goals, a few-shot template says it uses other groups' labels and the best pair ensemble that it is the best
    of k pairs."""
    few_shot_caveat = "few-shot: every prompt shows other groups' items with their human scores (it uses labels)"
    store, dataset = scored_store(tmp_path / "s.sqlite", SINGLE + ("topicalchat-multi", "topicalchat-fewshot"))
    board = leaderboard(store, dataset.name, baselines=["length"], ceiling=False, calibrate=True, ensemble=True,
                        n_boot=N_BOOT)
    fitted = set(board.rows.loc[board.rows["kind"] == "supervised", "row"])
    judges = set(board.rows.loc[board.rows["kind"] == "judge", "row"]) - {GEVAL_ROW}
    assert fitted and set(board.versus()["row"]) == judges  # no fitted row among the judge rows' differences
    apart = board.versus(supervised=True)
    assert set(apart["row"]) == fitted
    assert list(apart.loc[apart["chosen"] != "", "row"]) == [board.best_of()[0]]
    assert set(apart["chosen"]) == {"", f"best of {len(fitted)}"}

    caveats = board.rows.set_index("row")["caveat"]
    few_shot = f"G-EVAL {resolve_template('topicalchat-fewshot').label} · scripted: hashed"
    assert caveats[few_shot] == few_shot_caveat and caveats[GEVAL_ROW] == ""
    pairs = [row for row in board.rows["row"] if row.startswith("ensemble: ") and " + " in row]
    assert len(pairs) == 3
    assert caveats[pairs[0]].startswith("pair ensemble: the best of 3 pairs of judge rows (chosen by these people's "
                                        "agreement)") and caveats[pairs[0]].count("of judge rows") == 1
    assert all(caveats[row].startswith("pair ensemble: one of 3 pairs") for row in pairs[1:])
    assert all(few_shot_caveat in caveats[row] for row in pairs if "fewshot" in row)
    assert caveats["ensemble: mean of 3 judge rows"] == f"ensemble: the mean of 3 judge rows; {few_shot_caveat}"

    text = geval.reporting.report(store, dataset.name, baselines=["length"], calibrate=True, ensemble=True, figures=False,
                        ceiling=False, n_boot=N_BOOT, goals=True).markdown()
    readable = Names(store.combos(dataset.name), store.template_comments())  # as the report names its rows
    fitted, few_shot, pairs = {readable(row) for row in fitted}, readable(few_shot), [readable(p) for p in pairs]
    against = text[text.index(f"### Against {GEVAL_ROW}"):]
    against = against[:against.index("\n### ")]
    assert not any(row in against for row in fitted) and few_shot in against
    section = text[text.index("### Rows that use the human labels"):text.index(f"### Against {GEVAL_ROW}")]
    assert f"Each of these rows minus {GEVAL_ROW}" in section and f"| best of {len(fitted)} |" in section
    assert "treat the held-out predictions as fixed" in section.split("Each of these rows minus")[1]
    goals = text[text.index("### Against the goals"):]
    assert f"| {few_shot} | {few_shot_caveat} |" in goals
    assert f"| {pairs[0]} | pair ensemble: the best of 3 pairs" in goals


def test_a_dataset_labeled_with_categories_alone_has_nothing_to_correlate_and_a_mixed_one_keeps_its_scores(tmp_path):
    """`labels_only` names the aspects when every one people gave is labeled with categories (the leaderboard then
    refuses, and the Agreement page says why instead of offering it); beside an aspect scored with numbers it is
    empty, and the leaderboard correlates that one, saying the other is left out."""
    from helpers import make_template, scored_verdicts

    scored_verdicts(tmp_path, 24)
    store = geval.Store(tmp_path / "store.sqlite")
    assert geval.reporting.labels_only(store, "verdicts") == ["verdict"]
    with pytest.raises(GevalError, match=r"every aspect of 'verdicts' is categorical \(verdict\)"):
        leaderboard(store, "verdicts", baselines=(), n_boot=N_BOOT)
    table = tmp_path / "mixed.csv"
    table.write_text("context,reply,verdict,natural,dialogue\n" + "".join(
        f"hello {k},reply {k},{'pass' if k % 2 else 'fail'},{1 + k % 3},d{k // 2}\n" for k in range(24)))
    mixed = geval.load_dataset(table, mapping=["response=reply", "context=context", "group=dialogue",
                                               "score:verdict=verdict", "score:Natural=natural"], store=store)
    template = make_template(aspects=(("Natural", 1, 3, "natural"),), body="Response:\n{{response}}\n\nForm:\n- Natural:")
    geval.score(store, mixed.items, template, scripted(), mixed.name)
    assert geval.reporting.labels_only(store, mixed.name) == []
    board = leaderboard(store, mixed.name, baselines=("length",), n_boot=N_BOOT)
    assert any("verdict is categorical, left out" in line for line in board.skipped), board.skipped
    assert set(board.cells["aspect"]) - {"average"} == {"natural"}, set(board.cells["aspect"])  # the judge's key
