"""geval.cli: the OpenAI judge's --timeout and --max-retries (checked, passed to the judge,
recorded with the run, and honoured against the stub), and `runs`, which lists the runs of a
store with how each ended (a killed one as crashed). Mostly through `main()` in-process."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys

import pytest
from helpers import REPO, make_template

import geval
from geval.cli import build_parser, judge_from, main

TEMPLATE = make_template(name="cli-naturalness")


def judge_for(*options: str):
    """The judge `python -m geval score ... OPTIONS` would use."""
    return judge_from(build_parser().parse_args(["score", "data.json", "-t", "x", *options]))


@pytest.mark.parametrize("options, message", [
    (["--timeout", "-1"], "error: --timeout -1: give the seconds to wait for an answer, more than 0 (default 60)"),
    (["--timeout", "0"], "error: --timeout 0: give the seconds to wait for an answer, more than 0 (default 60)"),
    (["--timeout", "nan"], "error: --timeout nan: give the seconds to wait for an answer, more than 0 (default 60)"),
    (["--max-retries", "-3"], "error: --max-retries -3: give 0 (no retries) or more (default 5)"),
], ids=["negative timeout", "zero timeout", "nan timeout", "negative retries"])
def test_a_bad_timeout_or_retry_count_is_a_one_line_error(capsys, tmp_path, options, message):
    store = tmp_path / "store.sqlite"
    code = main(["score", "no-such-data.json", "-t", "x", "--judge", "openai", "--store", str(store), *options])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", message + "\n")  # checked before the dataset is even looked for
    assert not store.exists()


def test_timeout_and_retries_reach_the_openai_judge_and_default_to_60_and_5(stub):
    given = judge_for("--judge", "openai", "--model", "m", "--base-url", stub.url, "--timeout", "2.5",
                      "--max-retries", "0")
    assert (given._client.timeout, given._client.max_retries) == (2.5, 0)
    default = judge_for("--judge", "openai", "--model", "m", "--base-url", stub.url)
    assert (default._client.timeout, default._client.max_retries) == (60.0, 5)
    assert given.settings == default.settings  # neither changes a score: not in the signature or cache key


def test_the_score_command_honours_timeout_and_retries_and_records_them(stub, tmp_path, capsys):
    dataset, template, store = tmp_path / "two.json", tmp_path / "cli-naturalness.txt", tmp_path / "store.sqlite"
    dataset.write_text(json.dumps([{"context": "hi", "fact": "f", "responses": [
        {"response": f"reply {i}", "model": "s", "Natural": [2]} for i in range(2)]}]))
    template.write_text(TEMPLATE.text)
    stub.configure("logprobs", delay=1.0)  # slower than the timeout: every attempt times out
    code = main(["score", str(dataset), "-t", str(template), "--judge", "openai", "--base-url", stub.url,
                 "--model", "m", "--mode", "logprobs", "--store", str(store), "--timeout", "0.2", "--max-retries", "1"])
    err = capsys.readouterr().err
    failures = [line for line in err.splitlines() if line.startswith("  failed: ")]  # one per item
    assert code == 1 and len(failures) == 2 and all("timed out after 1 retries" in line for line in failures)
    assert "failed, not one item was scored: timed out after 1 retries" in err
    assert stub.count == 4  # 2 items x (1 try + 1 retry)
    stored = geval.Store(store)
    given = json.loads(stored.runs().iloc[0]["settings_given"])
    assert (given["timeout"], given["max_retries"]) == (0.2, 1)  # as given, with the run
    stored.close()


def test_runs_lists_each_run_with_its_status_and_process(tmp_path, capsys):
    path = tmp_path / "store.sqlite"
    store = geval.Store(path)
    killed = store.start_run(dataset="d", template="t@1", n_items=3)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    store.db["runs"].update(killed, {"pid": ended.pid})  # as if that process had been killed mid-run
    store.finish_run(store.start_run(dataset="d", template="t@2", n_items=4,
                                     signature_json=json.dumps({"backend": "scripted", "model": "hashed"})),
                     "finished", {})
    store.start_run(dataset="other", template="t@1", n_items=1)
    store.finish_run(store.start_run(dataset="d", template="t@3", n_items=3), "failed",
                     {"reasons": {"placeholder {{fact}} in t has no value for this item": 2, "timed out": 1}})
    store.close()

    assert main(["runs", "d", "--store", str(path)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == ["run", "status", "started", "dataset", "template", "judge", "items", "process"]
    assert lines[1].split()[:2] == ["4", "failed"]
    assert lines[2].split()[:2] == ["2", "finished"] and lines[2].split()[-1].endswith(f"@{socket.gethostname()}")
    assert "scripted: hashed" in lines[2]
    assert lines[3].split()[:2] == ["1", "crashed"] and lines[3].split()[-1] == f"{ended.pid}@{socket.gethostname()}"
    # only dataset d; why the failed run failed (the commonest reason)
    assert lines[4:] == ["run 4: 3 items, 2 of them: placeholder {{fact}} in t has no value for this item"]
    assert err.startswith("crashed: the process ended without finishing the run")

    assert main(["runs", "nothing", "--store", str(path)]) == 0
    assert capsys.readouterr().out == f"no runs on nothing in {path}\n"


def test_the_score_help_names_the_options_and_their_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--timeout SECONDS openai: seconds to wait for each answer before retrying (default 60)" in out
    assert ("--max-retries N openai: retries of a 429, 5xx, timeout or dropped connection, with backoff "
            "(default 5)") in out


@pytest.mark.parametrize("mode", ["auto", "logprobs", "samples"])
def test_dry_run_estimates_at_least_what_the_stub_then_bills(stub, tmp_path, mode):
    import re

    from helpers import REPO, run_cli

    store = tmp_path / "store.sqlite"
    args = ["score", str(REPO / "data" / "topicalchat_usr_sample.json"), "-t", "topicalchat-shared", "--limit", "12",
            "--judge", "openai", "--model", "gpt-4o-mini", "--base-url", stub.url, "--mode", mode, "--n", "5",
            "--max-retries", "0", "--store", str(store)]
    dry = run_cli(*args, "--dry-run")
    assert dry.returncode == 0 and stub.count == 0, dry.stderr
    line = re.search(r"(\d+) judge calls to make \((?:at most )?~([\d,]+) prompt \+ ~([\d,]+) answer tokens, "
                     r"(?:at most )?~\$([\d.]+)(; ~\$[\d.]+ if the server gives logprobs)?\)", dry.stderr)
    assert bool(line[5]) == (mode == "auto")  # a bound says so, with the cost if logprobs come
    calls, prompt, answer, cost = int(line[1]), int(line[2].replace(",", "")), int(line[3].replace(",", "")), \
        float(line[4])
    run = run_cli(*args)
    assert run.returncode == 0, run.stderr
    billed = geval.Store(store).db.execute(
        "SELECT COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost) FROM calls").fetchone()
    assert calls == billed[0] == stub.count and prompt >= billed[1] and answer >= billed[2]
    assert cost >= billed[3] - 5e-5 and billed[3] > 0  # printed to 4 decimals; at least what is billed
    if mode == "logprobs":  # one request, the form's short answer: what is billed
        assert (prompt, answer) == billed[1:3] and cost == pytest.approx(billed[3], abs=5e-5)
    if mode == "samples":  # n = 5 answers of up to --max-tokens (default 16) per call, the prompt once
        assert prompt == billed[1] and answer == calls * 5 * 16


@pytest.mark.parametrize("group, commands", [("templates", "{list,show,draft,diff}"),
                                             ("datasets", "{list,show,load,pairs,convert}"),
                                             ("batch", "{status,import}")])
def test_a_command_group_without_its_command_shows_that_groups_commands(capsys, group, commands):
    assert main([group]) == 2
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: python -m geval {group} ") and commands in shown


def _usr_file(path, dialogues: int = 8):
    """A USR-layout file: `dialogues` dialogues of 3 responses each, with people's Natural scores."""
    path.write_text(json.dumps([{"context": f"hello {d}", "fact": f"fact {d}", "responses": [
        {"response": f"reply {d}-{r}", "model": f"s{r}", "Natural": [1 + (d + r) % 3, 1 + (d * r) % 3]}
        for r in range(3)]} for d in range(dialogues)]))
    return path


@pytest.mark.parametrize("flags, left_out", [
    ([], ()),
    (["--no-few-shot", "--no-ensemble"], ("examples", "ensemble of")),
], ids=["every variant", "no few-shot, no ensemble"])
def test_tune_searches_and_leaves_out_the_variants_it_is_told_to(tmp_path, capsys, flags, left_out):
    data, template = _usr_file(tmp_path / "eight.json"), tmp_path / "cli-naturalness.txt"
    template.write_text(TEMPLATE.text)
    code = main(["tune", str(data), "--aspect", "Natural", "--budget", "300", "-t", str(template),
                 "--no-other-templates", "--judge", "scripted", "--store", str(tmp_path / "store.sqlite"), *flags])
    out = capsys.readouterr().out
    assert code == 0 and "start: cli-naturalness" in out and "on the test groups" in out
    assert ("examples" in out and "ensemble of" in out) if not left_out else not any(word in out for word in left_out)


def test_tune_takes_other_templates_or_none_not_both(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["tune", "data.json", "--aspect", "Natural", "--budget", "9", "--try", "x", "--no-other-templates"])
    assert "not allowed with argument --try" in capsys.readouterr().err


def test_score_says_why_answers_had_no_score(stub, tmp_path, capsys):
    dataset, template = _usr_file(tmp_path / "two.json", dialogues=2), tmp_path / "cli-naturalness.txt"
    template.write_text(TEMPLATE.text)
    stub.configure("no-logprobs", cycle=[2, 9], ignore_n=True)  # every other answer off the 1-3 scale
    code = main(["score", str(dataset), "-t", str(template), "--judge", "openai", "--base-url", stub.url,
                 "--model", "m", "--mode", "samples", "--n", "1", "--store", str(tmp_path / "store.sqlite")])
    err = capsys.readouterr().err
    assert code == 0 and "  3 answers had no score, 3 of them: " in err and "change the template's form" in err


# --- a summarization CSV of your own ----------------------------------------------------------------------------

SUMMARIES = ("article,summary\n"
             '"The council voted on Tuesday to close the old bridge for repairs. Work starts in May.",'
             '"The council will close the old bridge for repairs from May."\n'
             '"A storm cut power to 3,000 homes in the north of the county overnight.","A storm cut power to homes."\n'
             '"The museum reopens on Friday after a two-year renovation.","The museum closes on Friday."\n')


def _summaries(tmp_path) -> str:
    path = tmp_path / "my.csv"
    path.write_text(SUMMARIES)
    return str(path)


def test_a_summary_csv_mapped_by_its_columns_only_scores_with_summeval_consistency(tmp_path, capsys):
    store = tmp_path / "store.sqlite"
    code = main(["score", _summaries(tmp_path), "--map", "response=summary", "--map", "grounding=article",
                 "-t", "summeval-consistency", "--judge", "scripted", "--store", str(store)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert ("my: level summary, inferred: a source document column ('article') and no context: each row is a "
            "summary (to read it otherwise: the Data page's Level; CLI: --map level=turn, dialogue, summary or "
            "COLUMN)") in err
    assert "3 items, 0 cached, 3 judge calls, 0 failed" in out
    scored = geval.Store(store).judgments("my")
    assert len(scored) == 3 and set(scored["status"]) == {"ok"} and scored["prompt"].str.contains("The museum").any()


def test_a_dry_run_that_cannot_render_says_why_and_which_templates_fit_and_exits_2(tmp_path, capsys):
    code = main(["score", _summaries(tmp_path), "--map", "response=summary", "--map", "grounding=article",
                 "--map", "level=turn", "-t", "summeval-consistency", "--judge", "scripted", "--dry-run",
                 "--store", str(tmp_path / "store.sqlite")])
    err = capsys.readouterr().err
    assert code == 2
    assert "my: level turn, the value given, for every row" in err
    assert "error: summeval-consistency cannot be rendered on any of these 3 items:" in err
    assert ("has no value for 3 of 3 items: read at the turn level, where a grounding is a fact; only a summary's "
            "grounding is a document: set the level to summary when loading the file (the Data page's Level; "
            "CLI: --map level=summary)") in err
    assert "write {{" not in err
    fitting = next(line for line in err.splitlines() if "templates in prompts/ that fit these items:" in line)
    assert "response-naturalness" in fitting and "summeval" not in fitting


def test_level_summary_is_taken_as_the_value_and_a_load_over_other_items_needs_replace(tmp_path, capsys):
    store, csv = str(tmp_path / "store.sqlite"), _summaries(tmp_path)
    as_turns = ["score", csv, "--map", "response=summary", "--map", "grounding=article", "--map", "level=turn",
                "-t", "response-naturalness", "--judge", "scripted", "--store", store]
    assert main([*as_turns, "--dry-run"]) == 0 and geval.Store(store).dataset_names() == []  # a dry run stores nothing
    assert main(as_turns) == 0
    capsys.readouterr()
    as_summaries = [*as_turns[:7], "level=summary", "-t", "summeval-consistency", *as_turns[10:]]
    assert main(as_summaries) == 2
    err = capsys.readouterr().err
    assert f"error: {csv}: the store already holds a dataset named my with 3 items this file does not have" in err
    assert "(CLI: --name NAME or --replace)" in err
    assert main([*as_summaries, "--replace"]) == 0
    err = capsys.readouterr().err
    assert ("my: level summary, the value given, for every row; the column 'summary' is not read as the level"
            in err)
    assert geval.Store(store).dataset("my").levels == ["summary"]


# --- a user's own texts, labels and judge file (issue 36, "Also") ----------------------------------


def _texts_and_judge(tmp_path, n: int = 12):
    """A CSV of texts with the file's own `id` column (r000 ...), and a judge file keyed by those ids."""
    texts = tmp_path / "texts.csv"
    texts.write_text("id,dialogue_context,reply,overall\n" + "".join(
        f"r{k:03d},A: hello {k // 3},reply {k},{1 + k % 3}\n" for k in range(n)), encoding="utf-8")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({f"r{k:03d}": {"overall": 1 + (k * 2) % 3} for k in range(n)}), encoding="utf-8")
    return str(texts), str(judge)


def test_a_files_own_id_column_is_read_by_default_and_a_judge_file_by_those_ids_imports(tmp_path, capsys):
    """`datasets load FILE --map response=...` read no `id` unless mapped: the judge file then failed, listing
    every id. The file's own id column is read by default, and the load says so."""
    texts, judge = _texts_and_judge(tmp_path)
    store = str(tmp_path / "s.sqlite")
    assert main(["datasets", "load", texts, "--map", "response=reply", "--map", "score:Overall=overall",
                 "--name", "mine", "--store", store]) == 0
    err = capsys.readouterr().err
    assert ("mine: item ids: the file's own, from its column 'id' (labels and judge scores may name items by them; "
            "to read another column: id=COLUMN)") in err
    assert main(["judge", "import", judge, "--dataset", "mine", "--name", "gptx", "--store", store]) == 0
    assert "gptx: 12 items, Overall (" in capsys.readouterr().out


def test_datasets_list_and_show_see_the_datasets_in_the_store(tmp_path, capsys):
    """`datasets show mine` said "dataset in the store (none)" right after `datasets load` stored it; `list`
    named bundled and shared files only. Neither makes a store where there is none."""
    texts, _ = _texts_and_judge(tmp_path)
    store = str(tmp_path / "s.sqlite")
    assert main(["datasets", "load", texts, "--map", "response=reply", "--map", "score:Overall=overall",
                 "--name", "mine", "--store", store]) == 0
    capsys.readouterr()
    assert main(["datasets", "list", "--store", store]) == 0
    assert f"mine                             in the store {store}" in capsys.readouterr().out
    assert main(["datasets", "show", "mine", "--store", store]) == 0
    assert capsys.readouterr().out.startswith("mine (table): 12 items")
    assert main(["datasets", "list", "--store", str(tmp_path / "none.sqlite")]) == 0
    assert not (tmp_path / "none.sqlite").exists()
    kept = geval.Store(store)  # a bundled sample opened in the app is stored as it is read: named once
    kept.save_dataset(geval.load_dataset("fed_sample"))
    kept.close()
    capsys.readouterr()
    assert main(["datasets", "list", "--store", store]) == 0
    listed = capsys.readouterr().out
    assert listed.count("fed_sample ") == 1 and "fed_sample.json (also in the store)" in listed, listed
    for command in (["datasets", "show"], ["alttest"]):  # a name mistyped: those in the store named
        assert main([*command, "mien", "--store", store]) == 2, command
        said = capsys.readouterr().err.strip().splitlines()[-1]
        assert said.startswith("error: mien: no such file, known dataset (") and \
            said.endswith(f"or dataset in {store} (fed_sample, mine)"), (command, said)
    assert main(["agree", "mien", "--store", store]) == 2  # it said "nothing scored on dataset 'mien' yet"
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: dataset 'mien' is not in {store}; load or score it first (stored: fed_sample, mine)")


def test_a_judge_file_whose_ids_the_dataset_lacks_is_a_one_line_error_with_a_few_of_them(tmp_path, capsys):
    texts, judge = _texts_and_judge(tmp_path, n=360)
    store = str(tmp_path / "s.sqlite")
    assert main(["datasets", "load", texts, "--map", "response=reply", "--map", "id=reply", "--map",
                 "score:Overall=overall", "--name", "mine", "--store", store]) == 0
    capsys.readouterr()
    assert main(["judge", "import", judge, "--dataset", "mine", "--name", "gptx", "--store", store]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "r003" not in err
    assert (f"error: {judge}: no judge named 'gptx'; it has r000, r001, r002 and 357 more (if those are item ids, "
            "none is an item's id in the dataset: load the dataset with the column that holds them mapped to id, "
            "e.g. --map id=COLUMN)") in err


def test_judge_import_takes_the_mapping_its_error_asks_for_and_score_suggests_the_data_pages(tmp_path, capsys):
    """`judge import --dataset FILE.csv` said "pass a column mapping, e.g. --map ..." though it took no --map;
    `score FILE.csv` on an unmapped table gave a made-up mapping instead of the one the Data page suggests."""
    texts, judge = _texts_and_judge(tmp_path)
    store = str(tmp_path / "s.sqlite")
    suggested = ("read it as your own table with a column mapping, e.g. --map response=reply --map "
                 "score:overall=overall --map context=dialogue_context --map id=id")
    assert main(["score", texts, "-t", "topicalchat-naturalness", "--judge", "scripted", "--store", store]) == 2
    assert suggested in capsys.readouterr().err
    assert main(["judge", "import", judge, "--dataset", texts, "--name", "gptx", "--store", store]) == 2
    assert suggested in capsys.readouterr().err
    assert main(["judge", "import", judge, "--dataset", texts, "--map", "response=reply", "--map",
                 "score:overall=overall", "--name", "gptx", "--store", store]) == 0
    out, err = capsys.readouterr()
    assert "gptx: 12 items, overall" in out and "texts: item ids: the file's own" in err


# --- a file named like a stored dataset (the trial: SummEval's folder, then summeval.json) -------------------


def _release_and_same_name(tmp_path, n: int = 40):
    """A folder `rel` of the alternative annotator test's release (three annotators, one LLM), a CSV `rel.csv`
    of other texts (the same name: the same dataset), and a judge file of that CSV's ids."""
    folder = tmp_path / "rel"
    folder.mkdir()
    people = {who: {f"t{k}": 1 + (k + shift) % 5 for k in range(n)} for shift, who in enumerate(("ann1", "ann2", "ann3"))}
    (folder / "human_annotations.json").write_text(json.dumps(people))
    (folder / "llm_annotations.json").write_text(json.dumps({"llm": {f"t{k}": 1 + k % 5 for k in range(n)}}))
    (tmp_path / "other").mkdir()
    texts = tmp_path / "other" / "rel.csv"
    texts.write_text("id,reply,label\n" + "".join(f'r{k},reply {k},"[{1 + k % 5}, {1 + (k + 1) % 5}, {1 + k % 4}]"\n'
                                                  for k in range(n)))
    judge = tmp_path / "mine.csv"
    judge.write_text("id,label\n" + "".join(f"r{k},{1 + k % 5}\n" for k in range(n)))
    return str(folder), str(texts), str(judge)


def test_a_file_named_like_a_stored_dataset_is_refused_and_alttest_leaves_out_judges_of_items_replaced(
        tmp_path, capsys):
    """The trial: `alttest FOLDER` stored 6,400 items as "summeval"; `judge import ... --dataset summeval.json` swapped
    them for its 1,600 without a word, and `alttest summeval` then stopped: "no judgments for dataset 'summeval'
    with these settings". Now the import is refused as `datasets load` refuses it (until --replace), and alttest
    leaves out, and names, the judges of the items replaced."""
    folder, texts, judge = _release_and_same_name(tmp_path)
    store = str(tmp_path / "s.sqlite")
    assert main(["alttest", folder, "--brief", "--store", store]) == 0
    capsys.readouterr()
    mapped = ["--map", "response=reply", "--map", "score:label=label"]
    assert main(["judge", "import", judge, "--dataset", texts, *mapped, "--store", store]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", (
        f"error: {texts}: the store already holds a dataset named rel with 40 items this file does not have (40 "
        "judgments and 0 labels on them, which would be left out); load the file under another name first (python -m "
        f"geval datasets load {texts} --name NAME) and give that name, or replace the stored one (--replace)\n"))
    assert {item.source_id for item in geval.Store(store).items("rel")} == {f"t{k}" for k in range(40)}  # untouched
    assert main(["datasets", "load", texts, *mapped, "--store", store]) == 2
    assert "(CLI: --name NAME or --replace)" in capsys.readouterr().err  # datasets load now has --replace
    assert main(["datasets", "load", texts, *mapped, "--replace", "--store", store]) == 0
    capsys.readouterr()
    assert main(["alttest", "rel", "--brief", "--store", store]) == 2  # its only judge judged the items replaced
    assert capsys.readouterr().err.startswith(
        "error: 1 of the 1 judges on 'rel' have no judgment on its current items (they judged items a file of the "
        "same name has since replaced; score or import them again): llm (imported from llm_annotations.json)")
    assert main(["judge", "import", judge, "--dataset", "rel", "--store", store]) == 0
    capsys.readouterr()
    assert main(["alttest", "rel", "--brief", "--store", store]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("1 of the 2 judges on 'rel' have no judgment on its current items (they judged items a file "
                          "of the same name has since replaced; score or import them again), left out: llm (imported "
                          "from llm_annotations.json)"), err
    assert "\nmine (imported from mine.csv) · label: winning rate " in out and "\nllm " not in out


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    """`geval agree ... | head` ended in a BrokenPipeError's traceback: the output's reader gone, it stops quietly."""
    done = subprocess.Popen([sys.executable, "-m", "geval", "datasets", "list", "--store", str(tmp_path / "s.sqlite")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    done.stdout.close()  # the reader stops before the first line
    stderr = done.stderr.read().decode()
    assert done.wait(timeout=60) == 1 and stderr == "", stderr  # no traceback, nor "Exception ignored" at exit


def test_alttest_and_agree_on_a_few_items_say_what_they_read(tmp_path, capsys):
    """4 items of one dialogue scored: the figures the test cannot compute read "–" (they read "nan"), beside the
    verdict that says why; "1 dialogue", not "1 dialogues". With a second judge, the test says its judges share
    their items, and agree names the judges it did not read."""
    store = str(tmp_path / "s.sqlite")
    assert main(["score", "topicalchat_usr_sample", "-t", "topicalchat-naturalness", "--judge", "scripted",
                 "--limit", "4", "--store", store]) == 0
    capsys.readouterr()
    main(["alttest", "topicalchat_usr_sample", "--store", store])
    out = capsys.readouterr().out
    assert "nan" not in out.lower(), out
    assert ": winning rate –, advantage probability – (read as mode; rounded –, continuous –), no verdict; " \
           "neg-rmse, 4 items (groups: 1 dialogue)" in out, out
    assert "read on the items all of them scored" not in out  # one judge: nothing to say of the items judges share
    main(["agree", "topicalchat_usr_sample", "--store", store, "--no-errs"])
    assert "template versions and judges" not in capsys.readouterr().out  # one: nothing else to name
    assert main(["score", "topicalchat_usr_sample", "-t", "response-naturalness", "--judge", "scripted",
                 "--limit", "2", "--store", store]) == 0
    capsys.readouterr()
    main(["alttest", "topicalchat_usr_sample", "--store", store, "--brief"])
    out = capsys.readouterr().out  # a judge of 4 items read on the 2 the other scored too: said why
    assert "the judges of an aspect are read on the items all of them scored, so that they are compared on the " \
           "same items (where one scored 30 or more, one of fewer is read on its own)" in out, out
    assert "topicalchat-naturalness@e91757c96132 · scripted: hashed · Natural: winning rate –" in out and \
           "2 items (groups: 1 dialogue)" in out
    main(["agree", "topicalchat_usr_sample", "--store", store, "--no-errs"])  # the newest read; the other named
    assert capsys.readouterr().out.splitlines()[1] == (
        "the most recently scored of 2 template versions and judges; the others (-t NAME@VERSION for one, read with "
        "its newest judge; --signature for another): "
        "topicalchat-naturalness@e91757c96132 · scripted: hashed")


def test_templates_list_names_the_versions_saved_in_a_store_and_makes_none(tmp_path, capsys):
    """`templates list --store` was a usage error: the versions saved on the Prompts page had no listing here."""
    store = geval.Store(tmp_path / "s.sqlite")
    shipped = geval.Template.load("topicalchat-naturalness")
    politer = geval.Template.parse(shipped.text.replace("Rate", "Please rate"), source="topicalchat-naturalness.txt")
    store.save_template(politer, comment="politer")
    store.close()
    assert main(["templates", "list", "--store", str(tmp_path / "s.sqlite")]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert f"{politer.label:44} Naturalness 1-3  (saved in the store: politer)" in listed
    assert sum(line.startswith(shipped.label) for line in listed) == 1  # the file's own, once
    assert main(["templates", "list", "--store", str(tmp_path / "none.sqlite")]) == 0
    assert not (tmp_path / "none.sqlite").exists()


def test_the_bundled_judges_file_imports_six_llms_of_the_summeval_sample(tmp_path, capsys):
    """docs/command-line.md's `judge import data/judges/summeval_sample_llms.json --dataset summeval_sample`,
    from data/ alone: six LLMs, each of the 80 summaries on its 4 aspects; then `alttest` reads them."""
    store = str(tmp_path / "s.sqlite")
    assert main(["judge", "import", str(REPO / "data" / "judges" / "summeval_sample_llms.json"),
                 "--dataset", "summeval_sample", "--store", store]) == 0
    out = capsys.readouterr().out.splitlines()
    imported = [line for line in out if not line.startswith(" ")]
    assert [line.split(":")[0] for line in imported] == ["gemini_flash", "gemini_pro", "gpt-4o", "llama-31",
                                                        "gpt-4o-mini", "mistral-v03"]
    assert all(": 80 items, coherence, consistency, relevance, fluency (" in line for line in imported), imported
    assert main(["alttest", "summeval_sample", "--brief", "--store", store]) == 0
    assert sum(line.startswith("gpt-4o (imported from summeval_sample_llms.json)")
               for line in capsys.readouterr().out.splitlines()) == 4  # one line per aspect


def test_the_doctor_says_where_the_store_is_and_what_it_holds_without_making_one(tmp_path, capsys):
    """`doctor --store` (as every command takes it): the store's path first, unmade or with its datasets."""
    store, judge = tmp_path / "s.sqlite", ["--judge", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    assert main(["doctor", *judge, "--store", str(store)]) == 1  # nothing listens: the judge's problem, said after
    assert capsys.readouterr().out.startswith(f"[--] store {store}: not made yet (the first `score`, `datasets load` "
                                              "or page that saves makes it)\n")
    assert not store.exists()
    assert main(["judge", "import", str(REPO / "data" / "judges" / "summeval_sample_llms.json"), "--dataset",
                 "summeval_sample", "--name", "gpt-4o", "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["doctor", *judge, "--store", str(store)]) == 1
    assert re.match(rf"\[ok\] store {re.escape(str(store))} \(\d+\.\d MB\): summeval_sample \(1 judge\)\n",
                    capsys.readouterr().out)


@pytest.mark.parametrize("args, said", [
    (["score", "d", "-t", "t", "--sample", "-3"], "argument --sample: '-3': give a whole number of at least 1"),
    (["score", "d", "-t", "t", "--sample-groups", "-2"], "argument --sample-groups: '-2': give a whole number of at least 1"),
    (["score", "d", "-t", "t", "--limit", "-1"], "argument --limit: '-1': give a whole number of at least 1"),
    (["score", "d", "-t", "t", "--limit", "0"], "argument --limit: '0': give a whole number of at least 1"),
    (["agree", "d", "--bootstrap", "0"], "argument --bootstrap: '0': give a whole number of at least 20"),
    (["tune", "d", "--budget", "-5"], "argument --budget: '-5': give a whole number of at least 1"),
    (["tune", "d", "--budget", "100", "--tune-share", "1.5"],
     "argument --tune-share: '1.5': a share is a number between 0 and 1"),
    (["alttest", "d", "--epsilon", "5"], "argument --epsilon: '5': the margin is a number from 0 to below 1"),
    (["alttest", "d", "--epsilon", "-1"], "argument --epsilon: '-1': the margin is a number from 0 to below 1"),
    (["systems", "d", "--labels", "0"], "argument --labels: '0': give a whole number of at least 1"),
])
def test_numbers_out_of_their_range_are_refused_in_one_line(args, said, capsys):
    """A negative --sample crashed with a traceback, --limit -1 scored all but the last item (a slice), a tune share
    of 1.5 or an epsilon of 5 ran and said nothing: each is refused before any work, in one line, exit 2."""
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(args)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(said)


def test_an_epsilon_of_0_is_a_margin():
    assert build_parser().parse_args(["alttest", "d", "--epsilon", "0"]).epsilon == 0.0


def test_people_s_scores_beyond_the_judge_s_scale_with_none_declared_are_noted_before_scoring(tmp_path, capsys):
    """Overall 5, 9 and -1 in a file scored with a 1-5 template: scored without a word, and `agree` then read the
    judge on a -1-9 scale, its kappa and bands as if real. Declared or within the judge's scale: no note."""
    path = tmp_path / "outscale.csv"
    path.write_text("history,reply,overall\nhi,yo,5\nhey,sup,9\nhello,hi,-1\nbye,ok,3\n", "utf-8")
    given = ["score", str(path), "--map", "response=reply", "--map", "context=history", "--map",
             "score:Overall=overall", "-t", "response-overall", "--judge", "scripted", "--store",
             str(tmp_path / "store.sqlite"), "--dry-run"]
    assert main(given) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("  note: ")]
    assert notes == ["  note: the people's Overall scores run from -1 to 9, beyond the judge's 1-5, and no scale is "
                     "declared for them: the judge's scores will be read on a scale from -1 to 9; if people were "
                     "asked on 1-5, correct their scores outside it; if on another scale, declare it: python -m geval "
                     "datasets load outscale --scale 'Overall=LOW-HIGH', or on the Data page"]
    dataset = geval.load_dataset(path, mapping=["response=reply", "context=history", "score:Overall=overall"])
    template = geval.Template.load("response-overall")
    assert geval.labeling.beyond_scale(dataset.items, {"overall": (-1, 9)}, template, "outscale") == []
    assert geval.labeling.beyond_scale(dataset.items[:1] + dataset.items[3:], {}, template, "outscale") == []
    assert geval.labeling.beyond_scale(dataset.items, {}, template, "outscale", ["Overall"]) == []


def test_a_version_saved_in_the_store_is_named_as_templates_list_and_agree_name_it(tmp_path, capsys):
    """`agree -t topicalchat-naturalness@1febbe85d9fd`, as its own line naming the other versions put it, failed
    "no such template file or name": only files and the names in prompts/ were read, not the versions a store keeps."""
    store = str(tmp_path / "s.sqlite")
    shipped = geval.Template.load("topicalchat-naturalness")
    politer = geval.Template.parse(shipped.text.replace("Rate", "Please rate"), source="topicalchat-naturalness.txt")
    geval.Store(store).save_template(politer, comment="politer")
    for template in ("topicalchat-naturalness", politer.label):  # the saved version scored by its name@version
        assert main(["score", "topicalchat_usr_sample", "-t", template, "--judge", "scripted", "--limit", "4",
                     "--store", store]) == 0
    capsys.readouterr()

    def agree(*template: str) -> list[str]:
        assert main(["agree", "topicalchat_usr_sample", *template, "--store", store, "--no-errs"]) == 0
        return capsys.readouterr().out.splitlines()

    def table(lines: list[str]) -> list[str]:
        return [line for line in lines if " item " in line or " system " in line]

    newest = agree()
    assert newest[1].startswith("the most recently scored of 2 template versions and judges; the others (-t "), newest
    other = newest[1].split(": ", 1)[1].split(" ")[0]
    assert other == shipped.label
    assert table(agree("-t", other)) == table(agree("-t", "topicalchat-naturalness")) != table(newest)
    assert table(agree("-t", politer.label)) == table(agree("-t", politer.version)) == table(newest)
    assert main(["templates", "show", politer.label, "--store", store]) == 0
    assert capsys.readouterr().out.startswith(f"# {politer.label}")
    unknown = "topicalchat-naturalness@000000000000"
    assert main(["agree", "topicalchat_usr_sample", "-t", unknown, "--store", store]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "no such template file or name" in error and "templates list" in error, error
