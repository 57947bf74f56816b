"""How the judge errs (geval.analysis.judge_errors, geval.reporting.how_it_errs, `geval agree`):
kappa, weighted kappa, the confusion matrix and each label's precision, recall and F1 equal
scikit-learn's on the same labels (the shared categorical datasets with the LLMs' annotations, read
straight from their files; a binary pass/fail folder end to end through the CLI); a constant answer's
kappa is 0 and is said so; the offset, scale use, Bland-Altman limits and length read by hand, on
judges made to be lenient, to crowd the middle, to prefer long responses or to use another scale;
and too little data says so instead of an interval."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import geval
from geval.analysis.judge_errors import judge_errors
from geval.analysis import kappa
from geval.analysis.kappa import disagreement_weights, fleiss_of, fleiss_parts, kappa_of
from geval.data.items import make_item
from geval.reporting import how_it_errs
from tests.helpers import REPO, run_cli, scripted

sklearn = pytest.importorskip("sklearn.metrics")

READING = r"(?:n/a \([^)]*\)|-?\d\.\d{3}(?: \[-?\d\.\d{3}, -?\d\.\d{3}\]| \([^)]*\))?)"


def _from_files(folder: Path, llm: str) -> dict:
    """The people's majority and the LLM's label of each instance, and each annotator's, read straight
    from the release's JSON files (not through geval): what scikit-learn is given."""
    people = json.loads((folder / "human_annotations.json").read_text())
    judge = json.loads((folder / "llm_annotations.json").read_text())[llm]
    labels: dict[str, list] = {}
    for scores in people.values():
        for instance, label in scores.items():
            if label is not None:
                labels.setdefault(instance, []).append(str(label))
    truth, answer = [], []
    for instance, given in labels.items():
        top = Counter(given).most_common(2)
        if judge.get(instance) is None or (len(top) > 1 and top[0][1] == top[1][1]):
            continue
        truth.append(top[0][0])
        answer.append(str(judge[instance]))
    every = {str(v) for scores in (*people.values(), *json.loads((folder / "llm_annotations.json").read_text())
                                   .values()) for v in scores.values() if v is not None}
    return {"truth": truth, "judge": answer, "labels": sorted(every), "people": people, "llm": judge}


def _section(stdout: str) -> str:
    assert "How the judge errs: " in stdout, stdout[-3000:]
    return stdout.split("How the judge errs: ", 1)[1]


def _table(section: str, name: str) -> list[str]:
    """The printed rows of one table of the section (its header first)."""
    rows, inside = [], False
    for line in section.splitlines():
        if line == f"  {name}:":
            inside = True
        elif inside and line.startswith("    "):
            rows.append(line.strip())
        elif inside:
            break
    assert rows, f"no table {name!r} in:\n{section[:3000]}"
    return rows


def _kappa(section: str, who: str) -> float:
    match = re.search(rf"the judge against {re.escape(who)}\s+(-?\d\.\d{{3}})", section)
    assert match, (who, section[:2000])
    return float(match.group(1))


def _agree_on_folder(folder: Path, store: Path, llm: str, cli_import: bool = False) -> str:
    """One LLM of the folder's file imported (the folder loaded first; `cli_import`: by `geval judge
    import`), then `geval agree` on the folder."""
    if cli_import:
        imported = run_cli("judge", "import", str(folder / "llm_annotations.json"), "--dataset", str(folder),
                           "--name", llm, "--store", str(store))
        assert imported.returncode == 0, imported.stderr
    else:
        kept = geval.Store(store)
        geval.alttest.import_judge(kept, geval.load_dataset(folder, store=kept).name, folder / "llm_annotations.json",
                                   llm)
        kept.close()
    result = run_cli("agree", str(folder), "--store", str(store), "--tables")
    assert result.returncode == 0, result.stderr
    return result.stdout


def _check_against_sklearn(section: str, expected: dict) -> None:
    """The printed kappa, confusion matrix, precision, recall and F1 against scikit-learn's on the same labels."""
    truth, answer, labels = expected["truth"], expected["judge"], expected["labels"]
    assert _kappa(section, "the people's majority") == pytest.approx(
        sklearn.cohen_kappa_score(truth, answer, labels=labels), abs=5e-4)
    matrix = sklearn.confusion_matrix(truth, answer, labels=labels)
    printed = _table(section, "confusion matrix")
    shown = printed[0].split("→", 1)[1].split()  # after "people's majority ↓ / judge →"
    for row in printed[1:]:
        label, *counts = row.split()
        i = labels.index(label)
        assert [int(c) for c in counts] == [int(matrix[i, labels.index(j)]) for j in shown], label
    assert set(shown) == {labels[i] for i in range(len(labels)) if matrix[i].sum() or matrix[:, i].sum()}
    precision, recall, f1, support = sklearn.precision_recall_fscore_support(truth, answer, labels=labels,
                                                                            zero_division=np.nan)
    rows = _table(section, "per label")[1:]
    assert len(rows) == len(shown)
    for row in rows:
        label, count, given, rest = re.match(r"(\S+)\s+(\d+)\s+(\d+)\s+(.*)", row).groups()
        i = labels.index(label)
        assert int(count) == support[i] and int(given) == matrix[:, i].sum()
        if not support[i]:  # a label the people never give: scikit-learn's F1 is 0, here there is nothing to find
            assert rest.endswith("n/a (undefined: no such label among the people's)"), (label, rest)
            f1[i] = np.nan
        for found, theirs in zip(re.findall(READING, rest), (precision[i], recall[i], f1[i])):
            if math.isnan(theirs):
                assert found.startswith("n/a"), (label, found)
            else:
                assert float(found[:5]) == pytest.approx(theirs, abs=5e-4), (label, found, theirs)


@pytest.mark.parametrize("name", ["mtbench", "wax"])
def test_agree_prints_kappa_confusion_and_precision_recall_equal_to_scikit_learn(shared_data, tmp_path, name):
    folder = shared_data / "alttest" / name
    stdout = _agree_on_folder(folder, tmp_path / "s.sqlite", "gpt-4o")
    section = _section(stdout)
    expected = _from_files(folder, "gpt-4o")
    _check_against_sklearn(section, expected)
    for annotator, labels in expected["people"].items():  # the judge against each annotator
        shared = [i for i, v in labels.items() if v is not None and expected["llm"].get(i) is not None]
        theirs = sklearn.cohen_kappa_score([str(labels[i]) for i in shared], [str(expected["llm"][i]) for i in shared],
                                           labels=expected["labels"])
        assert _kappa(section, annotator) == pytest.approx(theirs, abs=5e-4), annotator
    assert re.search(r"Cohen's kappa of the judge's labels against the people's majority: \d\.\d{3} \[\d\.\d{3}, "
                     r"\d\.\d{3}\]", section)
    assert "Fleiss' kappa among the people" in section and "with a kappa of 0.000" in section
    assert "(no interval)" not in section  # each says why: "no interval: a share of 0%", ...
    if name == "wax":  # gpt-4o answers Antonym twice, a label the people's majority never gives
        antonym = next(row for row in _table(section, "per label") if row.startswith("Antonym "))
        assert re.split(r"\s{2,}", antonym)[1:] == ["0", "2", "0.000 (no interval: a share of 0%)",
                                                  "n/a (undefined: no such label among the people's)",
                                                  "n/a (undefined: no such label among the people's)"], antonym


@pytest.mark.parametrize("name", ["lgbteen", "framing", "cebab_aspects", "mtbench", "wax"])
def test_the_llms_of_the_shared_categorical_datasets_read_as_scikit_learn_reads_them(shared_data, store, name):
    folder = shared_data / "alttest" / name
    dataset = geval.load_dataset(folder, store=store)
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json")
    combos = store.combos(dataset.name)
    assert len(combos) == 6
    for combo in combos.itertuples():
        llm = json.loads(combo.signature_json)["model"]
        if llm not in ("gpt-4o", "gemini_flash", "mistral-v03"):  # the best, a middle and the weakest of the paper's
            continue
        expected = _from_files(folder, llm)
        found = judge_errors(store, dataset.name, (combo.template_version, combo.signature))[0].labels
        assert found.kappa.value == pytest.approx(sklearn.cohen_kappa_score(expected["truth"], expected["judge"],
                                                                            labels=expected["labels"]), abs=1e-12)
        index = [expected["labels"].index(label) for label in expected["truth"]]
        assert found.confusion.sum() == len(index) and found.items == len(index)
        matrix = sklearn.confusion_matrix(expected["truth"], expected["judge"], labels=expected["labels"])
        assert (found.confusion == matrix).all(), llm
        assert found.kappa.low < found.kappa.value < found.kappa.high  # hundreds of items, each its own group


def test_the_binary_pass_fail_folder_works_end_to_end_through_the_cli(tmp_path):
    """Two categories: a folder of three annotators' pass/fail labels and a judge's, loaded and imported by
    `geval judge import`, read by `geval agree`: kappa, the 2x2 confusion matrix, precision and recall of
    both labels as scikit-learn has them, and what always answering the commoner label reaches."""
    folder = tmp_path / "passfail"
    folder.mkdir()
    rng = np.random.default_rng(5)
    truth = rng.random(60) < 0.7
    def noisy(agree: float) -> dict:
        return {f"case-{k}": ("pass" if (t if rng.random() < agree else not t) else "fail") for k, t in enumerate(truth)}
    (folder / "human_annotations.json").write_text(json.dumps({name: noisy(0.85) for name in ("ann", "bob", "cy")}))
    (folder / "llm_annotations.json").write_text(json.dumps({"judge-x": noisy(0.8)}))
    section = _section(_agree_on_folder(folder, tmp_path / "s.sqlite", "judge-x", cli_import=True))
    expected = _from_files(folder, "judge-x")
    assert expected["labels"] == ["fail", "pass"]
    _check_against_sklearn(section, expected)
    assert len(_table(section, "confusion matrix")) == 3  # 2 x 2, with its header
    commoner = Counter(expected["truth"]).most_common(1)[0][0]
    share = Counter(expected["truth"])[commoner] / len(expected["truth"])
    assert f"A judge answering '{commoner}' on every item would be right on {share:.0%} [" in section
    assert "with a kappa of 0.000: kappa counts only agreement beyond chance, so a constant answer gets 0" in section


def test_a_constant_judge_has_kappa_0_and_it_is_said(shared_data, store, tmp_path):
    folder = shared_data / "alttest" / "mtbench"
    dataset = geval.load_dataset(folder, store=store)
    constant = tmp_path / "always-tie.csv"
    constant.write_text("item_id,label\n" + "".join(f"{item.source_id},tie\n" for item in dataset.items))
    geval.alttest.import_judge(store, dataset.name, constant)
    found = judge_errors(store, dataset.name)[0]
    expected = _from_files(folder, "gpt-4o")  # its majorities; the constant answers "tie" on each
    assert sklearn.cohen_kappa_score(expected["truth"], ["tie"] * len(expected["truth"])) == 0.0
    assert found.labels.kappa.value == pytest.approx(0.0, abs=1e-12)
    assert list(found.labels.constants["kappa"]) == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    said = " ".join(how_it_errs.lines(found))
    # the same 0 with any group left out: no interval of no width, which read as certainty of a perfect judge's 1
    assert "Cohen's kappa of the judge's labels against the people's majority: 0.000 (no interval: the same with " \
           "any group left out)" in said
    assert "with a kappa of 0.000: kappa counts only agreement beyond chance, so a constant answer gets 0 however " \
           "skewed the labels" in said
    assert found.labels.tied > 0  # said: the judge's answers are counted on the items with a majority only
    assert (f"On the {found.labels.items} items with a majority ({found.labels.tied} tied, left out), the judge never "
            "answers 'model_a', 'model_b', though the people's majority does.") in said


def test_fleiss_kappa_is_the_textbook_example():
    # Fleiss (1971) as Wikipedia has it: 10 subjects, 14 raters, 5 categories, kappa 0.210
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                      [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert fleiss_of(fleiss_parts(table, np.arange(10), 10).sum(axis=0)) == pytest.approx(0.20993, abs=5e-5)


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
def test_kappa_of_equals_scikit_learn_on_any_labels(weighting):
    rng = np.random.default_rng(2)
    for _ in range(20):
        k = int(rng.integers(2, 6))
        truth = rng.integers(0, k, 50)
        judged = np.where(rng.random(50) < 0.5, truth, rng.integers(0, k, 50))
        matrix = sklearn.confusion_matrix(truth, judged, labels=list(range(k))).astype(float)
        theirs = sklearn.cohen_kappa_score(truth, judged, labels=list(range(k)),
                                           weights=None if weighting == "none" else "quadratic")
        assert kappa_of(matrix, disagreement_weights(k, weighting)) == pytest.approx(theirs, abs=1e-12)



def test_statistics_with_each_group_left_out_are_the_same_made_a_block_of_groups_at_a_time(monkeypatch):
    """Above kappa.BLOCK groups (half a million groups made 36 MB arrays at every step) each statistic is made a block
    at a time: the same numbers, in the same places, for one dataset or several at once."""
    rng = np.random.default_rng(3)
    weights = disagreement_weights(3, "quadratic")
    statistics = {"kappa": lambda table: kappa_of(table, weights), "accuracy": kappa.accuracy_of,
                  "shares": kappa.constant_shares, "per label": kappa.per_label}
    for shape in [(50, 3, 3), (2, 50, 3, 3)]:
        confusion = rng.integers(0, 4, shape).astype(float)
        whole = {name: kappa.with_each_left_out(confusion, statistic) for name, statistic in statistics.items()}
        monkeypatch.setattr(kappa, "BLOCK", 7)
        for name, statistic in statistics.items():
            value, loo, present = kappa.with_each_left_out(confusion, statistic)
            pairs = [(loo[key], whole[name][1][key]) for key in loo] if isinstance(loo, dict) else [(loo, whole[name][1])]
            assert all(a.shape == b.shape and np.array_equal(a, b, equal_nan=True) for a, b in pairs), (name, shape)
        monkeypatch.undo()

# --- scores ---------------------------------------------------------------------------------------


def _synthetic(store: geval.Store, folder: Path, judge, scale: tuple[float, float] | None = None, n_groups: int = 30,
               per_group: int = 4, seed: int = 0, layout: str = "table") -> tuple[list, np.ndarray, np.ndarray]:
    """A dataset of `n_groups` dialogues of `per_group` responses of varied length, three annotators'
    1-3 scores (a `layout` of "usr" declares that scale, a table nothing), and a judge imported with
    the scores `judge(people's means, words)` gives (on `scale`). Returns the items, the people's
    means and the responses' words."""
    rng = np.random.default_rng(seed)
    latent = np.repeat(rng.normal(size=n_groups), per_group) + rng.normal(size=n_groups * per_group)
    ratings = np.clip(np.round(2 + 0.7 * latent[:, None] + rng.normal(0, 0.5, (len(latent), 3))), 1, 3)
    words = rng.integers(3, 60, len(latent))
    items = [make_item("synth", "turn", (), " ".join(["word"] * int(w)) + f" {k}", group=f"d{k // per_group:02d}",
                       human={"Natural": tuple(r)}) for k, (r, w) in enumerate(zip(ratings, words))]
    store.save_dataset(geval.Dataset("synth", "synth.csv", layout, items))
    means, path = ratings.mean(axis=1), folder / "judge.csv"
    path.write_text("item_id,natural\n" + "".join(f"{item.id},{s:.6f}\n" for item, s in zip(items, judge(means, words))))
    geval.alttest.import_judge(store, "synth", path, scale=scale)
    return items, means, words + 1  # each response ends with its number: one word more


def test_offset_spread_scale_use_and_limits_read_by_hand(store, tmp_path):
    items, means, words = _synthetic(store, tmp_path, lambda m, w: np.clip(2.0 + 0.3 * (m - 2), 1, 3))
    found = judge_errors(store, "synth")[0]
    scores, judge = found.scores, np.clip(2.0 + 0.3 * (means - 2), 1, 3)
    difference = judge - means
    assert scores.offset.value == pytest.approx(difference.mean())
    low, high = difference.mean() - 1.96 * difference.std(ddof=1), difference.mean() + 1.96 * difference.std(ddof=1)
    assert (scores.lower.value, scores.upper.value) == pytest.approx((low, high))
    ratings = np.array([item.human["Natural"] for item in items]).ravel()
    assert scores.spread.value == pytest.approx(judge.std(ddof=1) / ratings.std(ddof=1))
    rounded = np.floor(judge + 0.5)
    assert [e.value for e in scores.shares["judge"]] == pytest.approx([np.mean(rounded == p) for p in (1, 2, 3)])
    assert [e.value for e in scores.shares["people"]] == pytest.approx([np.mean(ratings == p) for p in (1, 2, 3)])
    assert scores.length.value == pytest.approx(stats.spearmanr(difference, words).statistic)
    said = how_it_errs.lines(found)
    assert any(line.startswith("It crowds the middle: ") for line in said), said
    assert any(line.startswith("It spreads its scores less widely than people: ") for line in said)
    assert any(line.startswith("It never uses the top of the scale (3), where people give ") for line in said), said
    assert any("Bland-Altman limits of agreement" in line for line in said)
    assert found.labels.weighting == "quadratic"  # a whole-number scale read as labels too (checked below)


def _weighted_kappa_is_scikit_learns(labels, items, rounded: np.ndarray) -> None:
    """A whole-number 1-3 scale is read as labels too: quadratic-weighted kappa against the majority."""
    truth, answer = [], []
    for item, value in zip(items, rounded):
        top = Counter(item.human["Natural"]).most_common(2)
        if len(top) == 1 or top[0][1] > top[1][1]:
            truth.append(top[0][0])
            answer.append(value)
    assert len(set(answer)) > 1  # not a constant: its kappa is 0 whatever the weights
    assert labels.weighting == "quadratic" and labels.kappa.value == pytest.approx(
        sklearn.cohen_kappa_score(truth, answer, labels=[1.0, 2.0, 3.0], weights="quadratic"), abs=1e-12)


def test_a_lenient_judge_that_ranks_as_people_do_is_named_so(store, tmp_path):
    items, means, _ = _synthetic(store, tmp_path, lambda m, w: np.minimum(m + 0.6, 3.0))
    found = judge_errors(store, "synth")[0]
    _weighted_kappa_is_scikit_learns(found.labels, items, np.floor(np.minimum(means + 0.6, 3.0) + 0.5))
    assert found.scores.offset.above() and found.scores.ranks_but_offset
    said = " ".join(how_it_errs.lines(found))
    assert re.search(r"Lenient: it scores 0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] points above the people's mean, on their "
                     r"1-3 scale\.", said), said
    assert re.search(r"It ranks responses as people do \(Pearson 0\.\d{3} \[0\.\d{3}, 0\.\d{3}\], at least 0\.5\) but "
                     r"is offset by 0\.\d\d points, \d\.\d of the people's standard deviation", said), said


def test_a_judge_on_another_scale_is_mapped_onto_the_peoples_and_says_so(store, tmp_path):
    _synthetic(store, tmp_path, lambda m, w: 2 * m - 1, scale=(1, 5), layout="usr")  # USR's Natural: 1-3
    found = judge_errors(store, "synth")[0]
    assert found.scale == "Its scores, on 1-5, are mapped linearly onto the people's 1-3, the scale declared for Natural"
    assert found.scores.offset.value == pytest.approx(0.0, abs=1e-6)  # the file keeps 6 decimals
    assert how_it_errs.lines(found)[0] == f"{found.scale}."


def test_a_judge_that_prefers_long_responses_more_than_a_person_is_told(store, tmp_path):
    _synthetic(store, tmp_path, lambda m, w: np.clip(m + 0.03 * (w - w.mean()), 1, 3))
    scores = judge_errors(store, "synth")[0].scores
    assert scores.length.above() and scores.length_difference.above() and len(scores.annotators) == 3
    said = " ".join(how_it_errs.lines(judge_errors(store, "synth")[0]))
    assert "longer responses get more from the judge than from people" in said
    assert "the judge prefers long responses more than the people do." in said


def test_below_10_groups_there_is_a_number_but_no_interval_and_it_says_why(store):
    dataset = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json")
    items = [item for item in dataset.items if item.group in sorted({i.group for i in dataset.items})[:6]]
    store.save_dataset(dataset)
    geval.score(store, items, geval.Template.load("topicalchat-naturalness"), scripted(), dataset.name)
    found = judge_errors(store, dataset.name)[0]
    for one in (found.scores.offset, found.scores.spread, found.scores.lower, found.labels.kappa,
                found.labels.people, found.scores.length):
        assert math.isfinite(one.value) and math.isnan(one.low) and one.groups == 6
        assert one.note == "no interval: 6 groups (dialogues, documents); an interval over groups needs at least 10"
    said = how_it_errs.lines(found)
    # said once, first, not after every figure (12 items in 2 groups: about 30 times, on the page and in its tables)
    assert said[1] == ("No figure here has a 95% interval: the items fall in 6 groups (dialogues, documents), and an "
                       "interval over groups needs 10.")
    assert not any("no interval: 6 groups" in line for line in said), said
    tables = how_it_errs.tables(found)
    assert tables["kappa"].columns.tolist() == ["", "weighted kappa", "items"]
    assert not any("no interval" in str(cell) for table in tables.values() for cell in table.to_numpy().ravel())
    assert re.fullmatch(r"-?\d\.\d{3}", tables["kappa"].iloc[0, 1])
    # against the best constant, a size and its side ("-44 points ... from what always answering '5' gets" read oddly)
    assert re.search(r"The judge's raw agreement is \d+ points (above|below) what always answering '\d' gets\.",
                     " ".join(said)), said
    # no error bars on the use of the scale: caps of no width read as intervals of no width
    figure = how_it_errs.scale_use_figure(found.scores, "use of the scale")
    assert [trace.error_y.visible for trace in figure.data] == [False, False]
    assert all(value is None for trace in figure.data for value in trace.error_y.array)


def test_agree_prints_the_bias_scale_use_and_length_lines_on_topical_chat(tc_dataset, tmp_path):
    """Topical-Chat USR, 360 responses in 60 dialogues, a judge run elsewhere imported (the embedded
    judge's own scores are in the report of this issue): each line with its 95% interval."""
    store = geval.Store(tmp_path / "s.sqlite")
    store.save_dataset(tc_dataset)
    rng = np.random.default_rng(3)
    path = tmp_path / "elsewhere.csv"
    path.write_text("item_id,natural\n" + "".join(
        f"{item.id},{np.clip(item.human_mean('Natural') - 0.4 + rng.normal(0, 0.4), 1, 3):.4f}\n"
        for item in tc_dataset.items))
    geval.alttest.import_judge(store, tc_dataset.name, path)
    store.close()
    result = run_cli("agree", tc_dataset.name, "--store", str(tmp_path / "s.sqlite"), "--levels", "item", "--tables")
    assert result.returncode == 0, result.stderr
    section = _section(result.stdout)
    interval = r"\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]"
    assert re.search(rf"Harsh: it scores {interval} points below the people's mean, on their 1-3 scale\.", section)
    assert re.search(rf"It spreads its scores (less|more|about as) widely (than|as) people: {interval} times", section)
    assert re.search(r"It uses the top of the scale \(3\) less than people: \d+% \[\d+%, \d+%\] of its scores against "
                     r"\d+% \[\d+%, \d+%\] of theirs\.", section), section[:4000]
    assert re.search(r"Its error \(judge − people\) against the response's length in words: Spearman -?\d\.\d{3} "
                     r"\[-?\d\.\d{3}, -?\d\.\d{3}\]", section)
    assert re.search(r"The judge minus a person, each against the same other annotators, averaged over the annotators: "
                     r"[+-]\d\.\d{3} "
                     r"\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", section)
    assert "scale use:" in section and "length:" in section and "Bland-Altman limits of agreement" in section
    brief = run_cli("agree", tc_dataset.name, "--store", str(tmp_path / "s.sqlite"), "--levels", "item").stdout
    assert "\n  kappa:" in section  # without --tables: the same sentences, then where the tables are
    assert _section(brief) == section.split("\n  kappa:")[0] + \
        "\n(each aspect's tables: --tables; or the Agreement page, or `report`)\n"


def test_summeval_coherence_reads_as_its_shares_and_numbers_say(shared_data, store):
    """SummEval's coherence, Mistral's scores (the trial of a new user): its raw agreement is below the best
    constant's, said once with a plus sign ("+5 points [+2, +9] below"); it gives 4 to 54% of the items,
    5 to 44% and almost never 2 or 3, and was said to avoid the middle (2, 3 and 4 together: 56% against
    67%); two shares of 0 had "(no interval)" with no reason; a person's length reading was the mean over
    the annotators, 0.012, near 0 by construction while they read .143, -.084 and -.022."""
    folder = shared_data / "alttest" / "summeval"
    dataset = geval.load_dataset(shared_data / "summeval.json", store=store)
    geval.alttest.import_judge(store, dataset.name, folder / "llm_annotations.json", "mistral-v03")
    found = judge_errors(store, dataset.name, aspects=["coherence"])[0]
    said, text = how_it_errs.lines(found), how_it_errs.text(found)
    assert "The judge's raw agreement is 5 points [2, 9] below what always answering '5' gets." in " ".join(said)
    assert not any("avoids the middle" in line or "crowds the middle" in line for line in said), said
    assert "It piles on 4 and 5: 54% of its scores at 4 against 21% of the people's (+33 points [+27, +39]), 44% at " \
           "5 against 26% (+18 points [+13, +24])." in said, said
    assert "It gives 2 and 3 less often than people: 0% of its scores at 2 against 17% of the people's (-17 points " \
           "[-18, -15]), 2% at 3 against 30% (-28 points [-30, -26])." in said, said
    assert "(no interval)" not in text and "0% (no interval: a share of 0%)" in text
    assert any(line.startswith("Each annotator's error against the mean of the other annotators, the same way (on the "
                               "1600 items all of them scored): e0 0.143 [0.082, 0.203], e1 -0.084 [-0.138, -0.030], e2 "
                               "-0.022 [-0.078, 0.035]: how far one person's error follows length (not their mean")
               for line in said), said
    assert "0.012" not in text and "a person, mean over annotators" not in text
    length = how_it_errs.tables(found)["length"]
    assert length["whose error"].tolist() == [
        "the judge (against the people's mean)", "annotator e0 (against the others)", "annotator e1 (against the others)",
        "annotator e2 (against the others)", "the judge − a person (the same others), mean over annotators"]


def test_the_middle_is_crowded_or_avoided_only_when_no_inner_point_goes_the_other_way():
    """The sentence of the inner points together, against each inner point's (scores.shares), on a 1-5 scale."""
    from types import SimpleNamespace

    from geval.analysis.grouped import Estimate

    def scores(judge: list[float], people: list[float], clear: bool = True) -> list[str]:
        def share(value: float) -> Estimate:
            return Estimate(value, value - 0.01, value + 0.01, 30)

        def gap(value: float) -> Estimate:
            return Estimate(value, value - 0.02, value + 0.02, 30) if clear else Estimate(value, value - 1, value + 1, 30)

        shares = pd.DataFrame({"point": [1.0, 2.0, 3.0, 4.0, 5.0], "judge": [share(v) for v in judge],
                               "people": [share(v) for v in people],
                               "difference": [gap(j - p) for j, p in zip(judge, people)]})
        middle = sum(judge[1:4]) - sum(people[1:4])
        return how_it_errs._scale_lines(SimpleNamespace(shares=shares, middle=gap(middle)))

    people = [0.07, 0.17, 0.30, 0.21, 0.25]
    piled = scores([0.01, 0.01, 0.02, 0.54, 0.42], people)  # SummEval's coherence, near enough
    assert not any("middle" in line for line in piled) and any(line.startswith("It piles on 4 and 5: ") for line in piled)
    assert any(line.startswith("It gives 2 and 3 less often than people: ") for line in piled), piled
    crowded = scores([0.02, 0.30, 0.40, 0.25, 0.03], people)
    assert crowded[0].startswith("It uses the top of the scale (5) less than people")
    assert crowded[2].startswith("It crowds the middle: 95% of its scores at 2, 3, 4 where people put 68%")
    assert not any("piles on" in line for line in crowded)  # the middle says it
    avoided = scores([0.40, 0.05, 0.05, 0.05, 0.45], people)
    assert "It avoids the middle: 15% of its scores at 2, 3, 4 where people put 68% (-53 points [-55, -51])." in avoided
    assert "It piles on 1 and 5: 40% of its scores at 1 against 7% of the people's (+33 points [+31, +35]), 45% at 5 " \
           "against 25% (+20 points [+18, +22])." in avoided
    assert scores([0.01, 0.01, 0.02, 0.54, 0.42], people, clear=False) == []  # nothing clear, nothing said


def test_the_majority_of_every_item_at_once_is_categoricals_majority():
    from geval.analysis.categorical import majority
    from geval.analysis.label_errors import majority_of

    rng = np.random.default_rng(4)
    people = rng.integers(0, 3, (4, 500)).astype(float)
    people[rng.random((4, 500)) < 0.3] = np.nan  # annotators who did not label an item
    expected = [majority(tuple(column[np.isfinite(column)])) for column in people.T]
    assert np.array_equal(majority_of(people, 3), np.array(expected), equal_nan=True)
    assert np.isnan(expected).sum() > 50  # ties and items nobody labeled are in the test


@pytest.mark.parametrize("metric, items", [("pearson", 300), ("spearman", 300), ("spearman", 2400)])
def test_a_correlation_without_each_group_is_the_apps_jackknife(metric, items):
    """From per-group sums in time linear in the groups (a 100,000-item dataset has 16,667 dialogues), the same
    leave-one-group-out values as `geval.analysis.correlation` (exact, or above 2000 items from the ranks)."""
    from geval.analysis.correlation import Resamples, item_bootstrap
    from geval.analysis.grouped import correlation_with_each_left_out

    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=items), 1)
    y = x + np.exp(rng.normal(size=items))
    groups = np.array([f"g{k % 40:02d}" for k in range(items)])
    value, loo, present, note = correlation_with_each_left_out(metric, x, y, groups)
    expected = item_bootstrap(x, y, Resamples.leave_one_out(groups), (metric,))[metric]
    assert loo == pytest.approx(expected, abs=1e-9) and present.all() and len(loo) == 40
    assert value == pytest.approx(stats.pearsonr(x, y).statistic if metric == "pearson" else
                                  stats.spearmanr(x, y).statistic, abs=1e-12)
    assert note == ("interval linearized (2400 items > 2000): from the whole sample's ranks" if items > 2000 else "")


def test_a_pass_fail_aspect_scored_by_a_judge_reads_as_two_labels(store):
    """Pass/fail as 0/1 scores: three annotators' and a scripted judge's on a 0-1 scale, read as two labels
    (unweighted kappa, a 2x2 confusion matrix, Fleiss' kappa among the people) and as scores."""
    rng = np.random.default_rng(6)
    truth = rng.random(40) < 0.6
    items = [make_item("pf", "turn", (), f"answer {k}", group=f"q{k // 2}",
                       human={"Pass": tuple(float(t if rng.random() < 0.85 else not t) for _ in range(3))})
             for k, t in enumerate(truth)]
    store.save_dataset(geval.Dataset("pf", "pf.csv", "table", items))
    template = geval.Template.parse("+++\nname = \"pass-fail\"\ntask = \"Does it pass?\"\n[[aspects]]\nname = "
                                    "\"Pass\"\nmin = 0\nmax = 1\n+++\nAnswer:\n{{response}}\n\nForm:\n- Pass:\n",
                                    source="pass-fail.txt")
    geval.score(store, items, template, scripted(), "pf")
    found = judge_errors(store, "pf")[0]
    labels = found.labels
    assert labels.labels == ("0", "1") and labels.weighting == "none" and labels.confusion.shape == (2, 2)
    assert labels.among_name == "Fleiss' kappa" and found.scores is not None
    scores = store.judgments("pf", columns=("item_id", "score")).set_index("item_id")["score"]
    answer = [float(np.floor(scores[item.id] + 0.5)) for item in items]  # its 0-1 mean, rounded as the section reads it
    truth = [Counter(item.human["Pass"]).most_common(1)[0][0] for item in items]  # 3 raters, 2 labels: never tied
    assert labels.kappa.value == pytest.approx(sklearn.cohen_kappa_score(truth, answer), abs=1e-12)
    assert (labels.confusion == sklearn.confusion_matrix(truth, answer, labels=[0.0, 1.0])).all()


def test_a_majority_of_one_label_gives_no_kappa_nor_a_kappa_of_nan(store):
    """Two annotators who agree only on their 3s: the majority's every label is '3', so any judge's kappa against
    it is 0 (it read "0.000, poor", beside a Pearson of .96), and always answering '3' read "a kappa of nan"."""
    import dataclasses

    from tests.helpers import make_items, make_template

    items = [dataclasses.replace(item, human={"Natural": (3.0, 3.0) if k % 4 == 0 else (1.0, 2.0)})
             for k, item in enumerate(make_items(40))]
    store.save_dataset(geval.Dataset("synthetic", "s.csv", "table", items))
    geval.score(store, items, make_template(), scripted(), "synthetic")
    [found] = judge_errors(store, "synthetic")
    assert math.isnan(found.labels.kappa.value) and found.labels.items == 10
    assert found.labels.kappa.note == ("undefined: the people's majority gives '3' on every item it reads, so any "
                                       "judge's kappa against it is 0")
    said = " ".join(how_it_errs.lines(found))
    assert "nan" not in said and "with no kappa: the people's majority gives that label on every item" in said
    assert how_it_errs.tables(found)["constant answers"]["kappa"].tolist() == ["n/a (the majority's only label)"]


def test_a_judge_that_agrees_on_every_label_has_no_interval_of_no_width_and_no_weakest_label(store):
    """A pass/fail judge right on all 16 items read "kappa 1.000 [1.000, 1.000]" (certain, from 16 items, while
    the accuracy's interval reaches 81%) and "Its weakest label is 'no': F1 1.000"."""
    items = [make_item("pf", "turn", (), f"answer {k}", group=f"q{k}", human={"Pass": (float(k % 2),)})
             for k in range(16)]
    store.save_dataset(geval.Dataset("pf", "pf.csv", "table", items))
    template = geval.Template.parse("+++\nname = \"pass-fail\"\ntask = \"Does it pass?\"\n[[aspects]]\nname = "
                                    "\"Pass\"\nmin = 0\nmax = 1\n+++\nAnswer:\n{{response}}\n\nForm:\n- Pass:\n",
                                    source="pass-fail.txt")
    right = scripted(lambda prompt, aspect: {1: 0.9, 0: 0.1} if int(prompt.split()[-4]) % 2 else {0: 0.9, 1: 0.1})
    geval.score(store, items, template, right, "pf")
    [found] = judge_errors(store, "pf")
    assert found.labels.kappa.value == 1.0 and not found.labels.kappa.has_interval()
    said = " ".join(how_it_errs.lines(found))
    assert "against the people's majority: 1.000 (no interval: the same with any group left out)" in said
    assert "weakest" not in said


def test_one_score_per_item_says_whose_it_is_a_file_s_or_one_annotator_s(store, tmp_path):
    """One score per item: from a file, the people's mean or one person's (said so, and read as maybe a mean); from
    the labels of one annotator, that person's, with no one else to compare with (it read "the dataset keeps only
    the people's mean" of a user's own labels)."""
    items = [make_item("one", "turn", (), f"reply {k}", group=f"d{k:02d}", human={"Natural": (float(1 + k % 3),)})
             for k in range(30)]
    store.save_dataset(geval.Dataset("one", "one.csv", "table", items))
    path = tmp_path / "judge.csv"
    path.write_text("item_id,natural\n" + "".join(f"{item.id},{1.5 + k % 3 * 0.5}\n" for k, item in enumerate(items)))
    geval.alttest.import_judge(store, "one", path)
    from_file = judge_errors(store, "one")[0].scores
    assert from_file.length_difference.note == ("undefined: one score per item (the file gives one: the people's "
                                                "mean, or one person's)")
    assert from_file.notes[0].startswith("one score per item (the file gives one") and "mean" in from_file.spread_of
    for k, item in enumerate(items):
        store.save_label(item.id, "Natural", 1 + k % 3)
    store.set_human_side("one", "you")
    mine = judge_errors(store, "one")[0].scores
    assert mine.length_difference.note == "undefined: one annotator (you), no one else to compare with"
    assert mine.notes == [] and mine.spread_of == "a person's scores"
