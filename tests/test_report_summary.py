"""The report's shape: the summary on top (the main correlation, the verdict, the human ceiling),
readable row names with the exact ones kept where they identify a row, long listings folded."""

import dataclasses
import json
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from helpers import make_items, make_template, scripted

import geval
from geval.data.items import Item
from geval.judging.templates import Aspect
from geval.judging.weights import DEFAULT_MODEL
from geval.reporting.document import Bullets, Code, Details, Document, Figure, Heading, Table, Text
from geval.reporting.html import render_html
from geval.reporting.markdown import render_markdown
from geval.reporting.names import Names, judge_title
from geval.reporting.summary import CAVEAT

EMBEDDED = {"backend": "embedded", "model": DEFAULT_MODEL.name, "weights": DEFAULT_MODEL.short_hash, "mode": "logits"}
OTHER_GGUF = {"backend": "embedded", "model": "mistral-7b-q4", "weights": "0123456789ab", "mode": "logits"}


def _combos(rows: list[tuple[str, str, dict, str]]) -> pd.DataFrame:
    """A `Store.combos` frame of (template name, version, signature fields, label as the store reads it)."""
    return pd.DataFrame({"template": [f"{name}@{version}" for name, version, _, _ in rows],
                         "template_version": [version for _, version, _, _ in rows],
                         "signature": [f"sig-{name}-{version}-{fields['model']}" for name, version, fields, _ in rows],
                         "signature_json": [json.dumps(fields) for _, _, fields, _ in rows],
                         "model": [geval.reporting.names.judge_name(fields) for _, _, fields, _ in rows],
                         "label": [label for *_, label in rows]})


def test_a_judge_is_named_by_its_model_and_the_bundled_model_by_its_title():
    assert judge_title(EMBEDDED) == "embedded Qwen2.5-Coder 1.5B"
    assert judge_title(OTHER_GGUF) == "embedded mistral-7b-q4"
    openai = {"backend": "openai", "model": "gpt-4o-mini", "mode": "logprobs", "base_url": "https://api.openai.com/v1"}
    assert judge_title(openai) == "openai: gpt-4o-mini, logprobs"


def test_rows_read_by_template_comment_and_judge_the_version_only_where_two_read_alike():
    names = Names(_combos([
        ("topicalchat-naturalness", "e91757c96132", EMBEDDED,
         "topicalchat-naturalness@e91757c96132 (shorter steps) · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m"),
        ("topicalchat-naturalness", "879953aaaaaa", EMBEDDED,
         "topicalchat-naturalness@879953aaaaaa · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m"),
        ("summeval-fluency", "111111111111", EMBEDDED,
         "summeval-fluency@111111111111 · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m"),
        ("summeval-fluency", "222222222222", EMBEDDED,
         "summeval-fluency@222222222222 · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m"),
    ]), {"e91757c96132": "shorter steps"})
    judge = "embedded Qwen2.5-Coder 1.5B"
    assert names("topicalchat-naturalness@e91757c96132 (shorter steps) · embedded: "
                 "qwen2.5-coder-1.5b-instruct-q4_k_m") == f"topicalchat-naturalness (shorter steps) · {judge}"
    assert names("topicalchat-naturalness@879953aaaaaa · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m") == \
        f"topicalchat-naturalness · {judge}"  # the other version has a comment: they read apart already
    assert names("summeval-fluency@111111111111 · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m") == \
        f"summeval-fluency, version 111111111111 · {judge}"  # no comment on either: the version tells them apart
    # the leaderboard's rows and notes name the template and judge apart: each part is made readable
    assert names("G-EVAL topicalchat-naturalness@e91757c96132 · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m: "
                 "60 of 60 items judged") == f"G-EVAL topicalchat-naturalness (shorter steps) · {judge}: 60 of 60 " \
                                             "items judged"
    assert names("ROUGE-L (vs fact, else context)") == "ROUGE-L (vs fact, else context)"


def test_renaming_keeps_code_and_the_columns_that_say_exactly_what_a_row_is():
    exact = "t@abcdefabcdef · embedded: qwen2.5-coder-1.5b-instruct-q4_k_m"
    names = Names(_combos([("t", "abcdefabcdef", EMBEDDED, exact)]), {})
    figure = go.Figure(go.Bar(x=[1], y=[1], name=exact))
    document = Document("report", [
        Heading(exact), Text(f"{exact} agrees"), Code(f"template:{exact}"),
        Table(pd.DataFrame({"row": [exact], "template version": ["t@abcdefabcdef"]}), verbatim=("template version",)),
        Details(f"{exact}: folded", (Text(exact),)), Figure(figure, f"{exact}: scatter")])
    renamed = document.renamed(names)
    readable = "t · embedded Qwen2.5-Coder 1.5B"
    heading, text, code, table, details, figure_block = renamed.blocks
    assert heading.text == readable and text.text == f"{readable} agrees"
    assert code.text == f"template:{exact}"  # a signature keeps every character
    assert table.frame.to_dict("list") == {"row": [readable], "template version": ["t@abcdefabcdef"]}
    assert details.title == f"{readable}: folded" and details.blocks[0].text == readable
    assert figure_block.caption == f"{readable}: scatter" and figure_block.figure.data[0].name == readable


def test_folded_parts_are_details_in_html_and_appendices_at_the_end_of_the_markdown():
    document = Document("r", [Heading("Main"), Text("first"),
                              Details("The 10 items of largest disagreement", (Table(pd.DataFrame({"item": ["i1"]})),)),
                              Heading("Later"), Text("second")])
    page = render_html(document)
    assert re.search(r"<details><summary>The 10 items of largest disagreement</summary>\s*<table>.*i1.*</table>\s*"
                     r"</details>", page, re.DOTALL)
    assert page.index("<details>") < page.index("<h2>Later</h2>")  # folded where it belongs
    markdown = render_markdown(document)
    assert "*The 10 items of largest disagreement: appendix A1, at the end.*" in markdown
    assert markdown.index("second") < markdown.index("## A1. The 10 items of largest disagreement") < \
        markdown.index("| i1 |")


def test_a_section_is_folded_with_its_figures_drawn_only_when_it_is_opened_and_a_section_of_the_markdown():
    """The six-judge SummEval report was 15.9 MB and drew its 149 figures as it opened (35 s in Chromium): each
    part is now a section folded under its heading, each figure the JSON of its data beside its place, drawn
    by the page's one script when the reader opens the parts around it; a figure outside them as the page loads."""
    from geval.reporting.document import Section, sections

    figure = go.Figure(go.Bar(x=[1], y=[2], name="</script><b>x"))
    blocks = sections([Heading("Title", 1), Text("the bottom line"), Figure(go.Figure(go.Bar(x=[1], y=[1])), "open"),
                       Heading("Later"), Text("second"), Figure(figure, "folded"), Heading("Last"), Text("third")])
    assert [type(b).__name__ for b in blocks] == ["Heading", "Text", "Figure", "Section", "Section"]
    assert blocks[3].title == "Later" and blocks[3].blocks[0] == Text("second")
    page = render_html(Document("r", blocks))
    assert re.search(r"<details class=section><summary><h2>Later</h2></summary>\s*<p>second</p>\s*<div class='figure "
                     r"plotly-graph-div' id='figure-2'", page)
    specs = dict(re.findall(r"<script type='application/json' id='(figure-\d)-data'>(.*?)</script>", page, re.DOTALL))
    assert json.loads(specs["figure-2"])["data"][0]["name"] == "</script><b>x"  # whole, and no early end of script
    assert "template" not in json.loads(specs["figure-2"])["layout"]  # the page's one, set as it is drawn
    assert page.count("Plotly.newPlot(") == 1 and "div.closest('details:not([open])')" in page  # drawn when seen
    markdown = render_markdown(Document("r", blocks))
    assert markdown.index("## Later") < markdown.index("second") < markdown.index("## Last") < markdown.index("third")


def test_a_report_figure_counts_its_points_whatever_the_items():
    """The scatter of 1600 items, one point each with its text, weighed 430 KB, 24 of them in one report."""
    from geval.reporting.figures import GRID, counted_points

    rng = np.random.default_rng(0)
    people = rng.integers(3, 16, 5000) / 3  # a mean of three annotators on 1-5
    judge = rng.uniform(1, 5, 5000)  # a G-EVAL judge's continuous mean
    points = counted_points(people, judge, (4.0, 4.0))
    assert points["items"].sum() == 5000 and len(points) <= 13 * (GRID + 1)
    whole = counted_points(people, np.round(judge), (4.0, 4.0))  # whole scores: counted as they are
    assert set(whole["y"]) <= {1.0, 2.0, 3.0, 4.0, 5.0} and len(whole) <= 13 * 5


# --- the summary's verdicts on small synthetic datasets ---------------------------------------------------------------

def _two_annotators(items: list[Item], seed: int = 0) -> list[Item]:
    """`items` with two annotators who agree in part: the second is the first, moved by one on a third of the items."""
    rng = np.random.default_rng(seed)
    first = rng.integers(1, 4, len(items))
    second = np.clip(first + rng.choice([-1, 0, 0, 1], len(items)), 1, 3)
    return [dataclasses.replace(item, human={"Natural": (float(a), float(b))})
            for item, a, b in zip(items, first, second)]


ITEMS = _two_annotators(make_items(40, per_group=2))  # 20 dialogues
BY_RESPONSE = {item.response: item for item in ITEMS}


def _follows_people(prompt: str, aspect: Aspect) -> dict[int, float]:
    """Scores as the two annotators' mean: their scores, half each."""
    item = BY_RESPONSE[re.findall(r"Response:\n(response \d+)", prompt)[-1]]
    first, second = item.human["Natural"]
    return {int(first): 1.0} if first == second else {int(first): 0.5, int(second): 0.5}


def _summary(store, items: list[Item], script) -> str:
    store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", items))
    geval.score(store, items, make_template(), scripted(script), "synthetic")
    markdown = geval.reporting.report(store, "synthetic", baselines=(), figures=False, n_boot=100).markdown()
    return markdown[markdown.index("## Summary"):markdown.index("## What was judged")]


def test_a_judge_above_the_human_ceiling_is_commented_with_the_caveat(store):
    summary = _summary(store, ITEMS, _follows_people)
    assert "Main result: G-EVAL test-naturalness · scripted: hashed agrees with people at pearson 1.000" in summary
    assert "Its 95% interval lies above 0: the agreement is not chance." in summary
    assert "The best judge is above one annotator on 1 aspect." in summary and CAVEAT in summary
    assert "(above one annotator) |" in summary


def test_a_judge_below_the_human_ceiling_is_commented_too(store):
    noise = lambda prompt, aspect: {int(np.random.default_rng(len(prompt)).integers(1, 4)): 1.0}  # noqa: E731
    summary = _summary(store, ITEMS, noise)
    assert "The best judge is below one annotator on 1 aspect." in summary and CAVEAT in summary


def test_without_a_second_annotator_the_summary_says_there_is_no_ceiling(store):
    one = [dataclasses.replace(item, human={"Natural": item.human["Natural"][:1]}) for item in ITEMS]
    summary = _summary(store, one, _follows_people)
    assert "compared with one score per item (no second annotator: how much people agree is not known)" in summary
    assert "No human ceiling: undefined: one score per item" in summary


def test_how_far_from_people_reads_the_judge_at_the_main_results_level(store):
    """With no ceiling, its table named the judge's best cell at any level: a group or system level's figure beside
    a main result read over items."""
    one = [dataclasses.replace(item, human={"Natural": item.human["Natural"][:1]}) for item in ITEMS]
    noise = lambda prompt, aspect: {int(np.random.default_rng(len(prompt)).integers(1, 4)): 1.0}  # noqa: E731
    summary = _summary(store, one, noise)
    main = re.search(r"test-naturalness · scripted: hashed does not agree with people: pearson (-\S+ \[[^]]+\])",
                     summary).group(1)  # it read "agrees with people at pearson -0.299"
    table = summary[summary.index("### How far from people"):]
    assert f"| G-EVAL test-naturalness · scripted: hashed | {main} |" in table, (main, table)


def test_from_too_few_groups_the_summary_rules_out_nothing(store):
    summary = _summary(store, ITEMS[:12], _follows_people)  # 6 dialogues
    assert "agrees with people at pearson 1.000 (no interval: 6 groups)" in summary
    assert "There is no interval to judge it by (too few groups or systems): chance is not ruled out" in summary


def test_without_a_leaderboard_the_summary_reads_the_agreement_tables_and_the_annotators(store):
    from geval.analysis.annotators import annotator_agreement
    from geval.reporting.summary import Judged, summary_section

    store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", ITEMS))
    geval.score(store, ITEMS, make_template(), scripted(_follows_people), "synthetic")
    combo = store.combos("synthetic").iloc[0]
    table = geval.agree(store, "synthetic", (combo["template_version"], combo["signature"]), n_boot=100)
    blocks = summary_section(Judged("synthetic", 40, 40, ["scripted: hashed"], ["test-naturalness@x"]), None,
                             {"mine": table}, annotator_agreement(ITEMS, n_boot=100), "pearson", [])
    text = "\n".join(block.text for block in blocks if isinstance(block, Text))
    assert "Main result: mine agrees with people at pearson 1.000 [1.000, 1.000] on Natural. From the agreement " \
           "tables; read at the item level, on 40 items in 20 groups." in text
    assert "The best judge is above one annotator on 1 aspect." in text


def test_the_bottom_lines_headline_lists_a_few_comparisons_and_counts_many(store):
    """The bottom line, the one part open, lists the comparisons' verdicts: six imported judges made it 20 bullets."""
    from geval.reporting.summary import Judged, headline

    store.save_dataset(geval.Dataset("synthetic", "synthetic.csv", "table", ITEMS))
    geval.score(store, ITEMS, make_template(), scripted(_follows_people), "synthetic")
    combo = store.combos("synthetic").iloc[0]
    table = geval.agree(store, "synthetic", (combo["template_version"], combo["signature"]), n_boot=100)
    judged = Judged("synthetic", 40, 40, ["scripted: hashed"], ["test-naturalness@x"])
    people = pd.DataFrame(columns=["statistic", "human", "value", "low", "high", "items", "note", "annotators"])

    def said(verdicts: list[str]) -> list:
        return headline(judged, None, {"mine": table}, people, "pearson", verdicts)

    assert said([])[0].text.startswith("Main result: mine agrees with people at pearson 1.000")
    assert said(["one", "two", "three"])[-1] == Bullets(("one", "two", "three"))
    assert said([f"verdict {n}" for n in range(4)])[-1].text == (
        "4 comparisons of template versions and judges on the same items: the summary below lists them.")


def test_the_ceiling_is_found_where_the_protocol_names_its_columns_with_a_level(store):
    """FED's columns read "Engaging (fed-turn)": the people row of that column is the judge's ceiling."""
    from helpers import REPO

    from geval.data.dataset import resolve_dataset
    from geval.judging.templates import load_template

    dataset = geval.load_dataset(resolve_dataset("fed_sample"))
    store.save_dataset(dataset)
    geval.score(store, [item for item in dataset.items if item.level == "turn"],
                load_template(REPO / "prompts" / "fed-turn-engaging.txt"), scripted(), dataset.name)
    markdown = geval.reporting.report(store, dataset.name, baselines=(), figures=False, n_boot=100).markdown()
    summary = markdown[markdown.index("## Summary"):markdown.index("## What was judged")]
    assert "No human ceiling" not in summary and "| Engaging | G-EVAL fed-turn-engaging · scripted: hashed" in summary
    assert re.search(r"\| Engaging \|[^\n]*\| -?\d\.\d{3} \[[^\n]*\| [+-]\d\.\d{3} \((below|within|above) ", summary)


def test_two_judges_each_get_their_replacement_verdict_and_the_leaderboard_names_only_its_columns(tmp_path):
    """The report's summary gave only the best judge's replacement verdict; its leaderboard note named "a
    thesis that ran G-EVAL on FED and Topical-Chat" and a column (mean of aspects → Overall) the table lacked."""
    from geval.reporting.dataset_report import cells_note
    from geval.scoring.imports import import_judge

    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset("topicalchat_usr_sample", store=store)
    items = dataset.items[:36]
    geval.score(store, items, geval.Template.load("topicalchat-naturalness"), scripted(), dataset.name)
    judged = tmp_path / "gpt-x.csv"
    judged.write_text("item_id,natural\n" + "".join(f"{it.id},{1 + n % 3}\n" for n, it in enumerate(items)))
    import_judge(store, dataset.name, judged)
    text = geval.reporting.report(store, dataset.name, baselines=["length"], figures=False, n_boot=50).markdown()
    summary = text[text.index("## Summary"):text.index("## What was judged")]
    verdicts = [line for line in summary.splitlines() if line.startswith("- Natural: ")]  # each judge's
    assert len(verdicts) == 2 and "gpt-x (imported from gpt-x.csv)" in verdicts[0] + verdicts[1]
    assert "topicalchat-naturalness · scripted: hashed" in verdicts[0] + verdicts[1]
    board = text[text.index("## Leaderboard"):text.index("## Can the judge replace an annotator?")]
    assert "thesis" not in board and "mean of aspects" not in board  # no such column here
    assert "`average` is the mean of the aspect correlations" in board
    with_mean = pd.DataFrame(columns=["row", "kind", "Natural", "Overall", "mean of aspects → Overall"])
    assert "`mean of aspects → Overall` maps each aspect score of a judge onto 0-1" in cells_note(with_mean)
    assert "`average`" not in cells_note(with_mean)


def test_the_reports_p_values_read_as_the_pages_do():
    """The per-annotator table printed p = 0.000 where the page says < 0.001."""
    from geval.reporting.replacement import rounded

    shown = rounded(pd.DataFrame({"annotator": ["#1", "#2"], "p": [0.00002, 0.5], "judge wins": [0.61111, None]}))
    assert list(shown["p"]) == ["< 0.001", "0.500"] and list(shown["judge wins"]) == ["0.611", "–"]


def test_what_was_judged_counts_each_template_version_once_when_two_judges_ran_it():
    """Two judges of one version and one of another read "with 3 template versions (a@1, b@2)"."""
    from geval.reporting.summary import Judged, what_was_judged

    judged = Judged("mine", 40, 40, ["judge one", "judge two", "judge one"], ["a@1", "a@1", "b@2"])
    said = what_was_judged(judged, pd.DataFrame({"annotators": [3]}))
    assert "Judged by judge one, judge two, with 2 template versions (a@1, b@2);" in said, said
