"""The Agreement page under AppTest, on a temporary store with 12 items of the Topical-Chat
sample scored by the scripted judge (see tests/test_page_inspect.py for the setup)."""

from __future__ import annotations

import json
import re

import numpy as np

import geval
from geval.judging.templates import parse_template, resolve_template
from tests.apptest_helpers import open_app
from tests.helpers import make_template, plotly_array
from tests.test_page_inspect import REPO, SAMPLE, scored_app
from studio.text import plain

PAGE = "views/5_agreement.py"
#: How the group level reads where fewer than 10 groups have 3 or more items.
NEEDED = r"n/a \(\d (of \d+ )?groups?, 10 needed\)"


def _second_version() -> geval.Template:
    """The naturalness template with one word changed: another version, other scripted scores."""
    text = resolve_template("topicalchat-naturalness").text
    return parse_template(text.replace("Evaluation Form (scores ONLY):", "Evaluation Form (numbers ONLY):"),
                                source="v2")


def test_the_table_has_pearson_rows_at_every_level(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert not at.error
    table = at.dataframe[0].value
    pearson = table[table["metric"] == "pearson"]
    assert list(pearson["level"]) == ["item", "group", "system"]
    assert set(pearson["aspect"]) == {"naturalness"} and set(pearson["human"]) == {"Natural"}
    assert pearson.iloc[0]["n"] == 12
    assert pearson.iloc[0]["value [95% CI]"].count("[") == 1
    # bars, the systems' forest, scatter, |difference|, distributions; how the judge errs: confusion, Bland-Altman,
    # use of the scale
    assert len(at.get("plotly_chart")) == 8
    assert len(at.get("download_button")) == 1 and at.button(key="agree_report_build")  # CSV; the report on demand
    assert any("Score the dataset with a second template version" in i.value for i in at.info)


def _traces(chart) -> list[dict]:
    """The plotly traces a chart element sends to the browser."""
    return json.loads(chart.proto.spec)["data"]


def test_large_scatters_use_webgl_and_histograms_send_counts(monkeypatch, tmp_path):
    """What keeps the page buildable at 100,000 judgments (bench/agreement_page.py): above WEBGL_ABOVE
    points the scatter is a WebGL trace, and the histograms send 20 binned counts, not one value per item."""
    monkeypatch.setattr("geval.reporting.figures.WEBGL_ABOVE", 5)
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    assert not at.exception
    _, _, scatter, absdiff, distributions, *_ = at.get("plotly_chart")  # bars, the systems' forest, ...; how it errs
    assert {t["type"] for t in _traces(scatter)} == {"scattergl"}
    assert sum(len(t["customdata"]) for t in _traces(scatter)) == 12
    for chart, traces in ((absdiff, 1), (distributions, 2)):
        bars = _traces(chart)
        assert [t["type"] for t in bars] == ["bar"] * traces
        assert [len(plotly_array(t["y"])) for t in bars] == [20] * traces
        assert [int(plotly_array(t["y"]).sum()) for t in bars] == [12] * traces


def test_above_the_items_drawn_one_by_one_the_plots_are_bubbles_until_a_point_per_item_is_asked(monkeypatch, tmp_path):
    """Above DRAWN_ONE_BY_ONE_MOST items the scatter and the Bland-Altman plot draw a bubble per place,
    sized by its items (every item counted once); the toggle draws a point per item, each with its id."""
    monkeypatch.setattr(geval.reporting, "DRAWN_ONE_BY_ONE_MOST", 11)
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    _, _, scatter, *_, bland_altman, _ = at.get("plotly_chart")
    assert [t["type"] for t in _traces(scatter)] == ["scatter"]  # one trace of bubbles, not one per system
    assert plotly_array(_traces(scatter)[0]["customdata"]).sum() == 12  # each bubble's items
    assert plotly_array(_traces(bland_altman)[0]["customdata"]).sum() == 12
    assert any("12 items: a bubble per pair of scores" in c.value for c in at.caption)
    at.toggle(key="agree_each_item").set_value(True).run()
    assert not at.exception and not at.error
    _, _, scatter, *_, bland_altman, _ = at.get("plotly_chart")
    ids = [item for trace in _traces(scatter) for item in trace["customdata"]]
    assert len(ids) == 12 and all(isinstance(item, str) for item in ids)  # a click opens its item
    assert len(_traces(bland_altman)[0]["customdata"]) == 12
    assert any("Click a point to open the item" in c.value for c in at.caption)


def test_levels_and_combos_can_be_narrowed(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    at.multiselect(key="agree_levels").set_value(["item"]).run()
    assert not at.exception
    assert set(at.dataframe[0].value["level"]) == {"item"}
    at.multiselect(key="agree_combos").set_value([]).run()
    assert not at.exception
    assert any("Choose at least one" in i.value for i in at.info)


def test_two_versions_on_too_few_groups_say_not_decided_once_in_orange(monkeypatch, tmp_path):
    """It was said three times: an orange 'Only 6 groups', the blue verdict, and a line 'B − A = ..., no interval'."""
    at, _ = scored_app(monkeypatch, tmp_path, n=6, templates=(_second_version(),))
    at.switch_page(PAGE).run()
    said = [x.value for x in [*at.warning, *at.info, *at.text] if "B − A" in x.value or "scored by both" in x.value]
    assert len(said) == 1 and "Not decided on Natural" in said[0], said
    assert said[0] in [w.value for w in at.warning]


def test_two_versions_are_compared_on_the_same_items(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path, templates=(_second_version(),))
    at.switch_page(PAGE).run()
    assert not at.exception
    assert not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert {"A: pearson", "B: pearson", "B − A", "p"} <= set(metrics)
    assert not any("Williams" in label for label in metrics)  # it takes items as independent: in no headline
    difference = float(metrics["B: pearson"]) - float(metrics["A: pearson"])
    assert abs(float(metrics["B − A"]) - difference) < 0.0015
    assert 0 <= float(metrics["p"]) <= 1
    assert any("12 items" in alert.value for alert in [*at.info, *at.warning] if "B − A = " in alert.value)

    both = at.multiselect(key="agree_combos").options
    at.multiselect(key="agree_combos").set_value(both).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert {combo.replace(" ", f"@{version} ", 1) for combo, version in zip(table["combo"], table["version"])} \
        == set(both)  # the template's name, its version's hash beside it

    at.selectbox(key="agree_b").select(at.selectbox(key="agree_a").value).run()
    assert any("Pick two different" in i.value for i in at.info)

    at.selectbox(key="agree_b").select(both[0]).run()
    at.selectbox(key="agree_cmp_metric").select("kendall").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["p"] not in ("", None)


def test_a_point_opens_in_inspect(monkeypatch, tmp_path):
    """What a click on the scatter does (AppTest cannot click a plotly point): Inspect shows the item."""
    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    item = dataset.items[len(dataset.items) // 12 * 7]
    at.session_state["inspect_item"] = item.id
    at.switch_page("views/4_inspect.py").run()
    assert not at.exception
    assert at.session_state["inspect_jump"] == item.id
    assert item.response in [t.value for t in at.text]


def test_an_empty_store_says_to_score_first(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path, score=False)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any("Nothing is scored" in i.value and "Score page" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_agreement_opens_on_the_newest_scored_combination_and_says_when_one_has_nothing(monkeypatch, tmp_path):
    from tests.test_page_inspect import add_failed_combo

    at, dataset = scored_app(monkeypatch, tmp_path)
    failed, ok = add_failed_combo(tmp_path, dataset)
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert at.multiselect(key="agree_combos").value == [ok]
    assert len(at.get("plotly_chart")) == 8  # with the systems' forest, and how the judge errs' three
    at.multiselect(key="agree_combos").set_value([failed]).run()
    assert not at.exception and not at.error and not at.get("plotly_chart")  # no empty charts with "?" axes
    assert any(w.value.startswith(f"Nothing is scored with {failed}: 3 judgments failed") for w in at.warning)


def test_agreement_and_inspect_open_on_the_users_own_run_not_a_prompt_searchs_newer_variant(monkeypatch, tmp_path):
    from geval.tuning.variants import with_examples
    from tests.test_page_inspect import TEMPLATE, load_template

    at, dataset = scored_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    own = store.combos(dataset.name)["label"].iloc[0]
    variant = with_examples(load_template(TEMPLATE), 2)  # as a search makes them: newer, on a few groups
    geval.score(store, dataset.items[:6], variant, geval.make_judge("scripted"), dataset.name,
                examples_from=dataset.items[6:])
    assert store.combos(dataset.name)["searched"].tolist() == [True, False]  # the variant is the newest
    store.close()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.multiselect(key="agree_combos").value == [own]
    at.switch_page("views/4_inspect.py").run()
    assert at.selectbox(key="inspect_combo").value == own


def test_the_comparison_gives_a_verdict_in_words(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path, templates=(_second_version(),))
    at.switch_page(PAGE).run()
    assert not at.exception
    verdict = [re.sub(r"\\(.)", r"\1", i.value) for i in at.info  # shown as text
               if "on Natural" in i.value and not i.value.startswith("Bottom line")]
    assert len(verdict) == 1
    assert re.match(r"(B \(.+\) agrees better with people on Natural than A|A \(.+\) agrees better with people on "
                    r"Natural than B|No clear difference on Natural between A \(.+\) and B|Not decided on Natural)",
                    verdict[0]), verdict[0]


def test_a_24_item_random_sample_never_shows_a_group_level_correlation(monkeypatch, tmp_path):
    """24 of the sample's 60 items drawn at random (seeded) leave fewer than 10 dialogues with 3 or more of them:
    the group level reads "n/a (k groups, 10 needed)" in the app's table, gets no bar, and reads the
    same in the report."""
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(SAMPLE, store=store)
    items = dataset.select(sample=24, seed=0)
    geval.score(store, items, resolve_template("topicalchat-naturalness"), geval.make_judge("scripted"), dataset.name)
    at = open_app(monkeypatch, tmp_path, page=PAGE)
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    group = table[table["level"] == "group"]["value [95% CI]"]
    assert len(group) == 3 and all(re.fullmatch(NEEDED, cell) for cell in group), list(group)
    bars = _traces(at.get("plotly_chart")[0])
    assert [t["y"] for t in bars if t["xaxis"] == "x2"] == [[None]]  # the group panel: no bar
    assert not any(t["error_y"].get("visible", True) for t in bars if t["xaxis"] == "x2")
    title = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["subtitle"]["text"]
    assert re.match(f"group: {NEEDED}, no bar: Natural<br>", title), title
    notes = next(e for e in at.expander if e.label.startswith("The table's notes in full")).markdown[0].value
    noted = [note for note in table["note"] if note]
    assert len(noted) >= 3 and all(plain(note) in notes for note in noted)  # the cells show their first words only
    assert notes.count("group (pearson, spearman, kendall): ") == 1  # the level's metrics share one note, said once

    page = geval.reporting.report(store, dataset.name, n_boot=100, baselines=[]).html()
    rows = re.findall(r"<td>group</td><td>(pearson|spearman|kendall)</td><td>([^<]*)</td>", page)
    assert {metric for metric, _ in rows} == {"pearson", "spearman", "kendall"}  # pearson first, then all (folded)
    assert all(re.fullmatch(NEEDED, cell) for _, cell in rows), rows
    store.close()


def test_compare_pairs_the_newest_with_one_that_scores_the_same_aspect_and_says_when_none_is(monkeypatch, tmp_path):
    engaging = resolve_template("topicalchat-engagingness")
    second = _second_version()
    at, _ = scored_app(monkeypatch, tmp_path, templates=(engaging, second))  # naturalness, engaging, naturalness v2
    at.switch_page(PAGE).run()
    assert not at.exception
    a, b = at.selectbox(key="agree_a").value, at.selectbox(key="agree_b").value
    assert b.startswith(second.label) and a.startswith("topicalchat-naturalness@") and a != b  # not engagingness
    # not "A (the original, the baseline)" and "B (the edit, ...)": A and B may be two LLMs
    assert [at.selectbox(key=k).label for k in ("agree_a", "agree_b")] == ["A (the baseline)", "B (compared with A)"]
    at.selectbox(key="agree_a").select(next(o for o in at.selectbox(key="agree_a").options
                                            if o.startswith(engaging.label))).run()
    said = " ".join(i.value for i in at.info).replace("\\", "")  # as shown: Markdown marks are escaped
    assert "A is compared with Engaging and B with Natural: they share none" in said
    assert "B can be compared with topicalchat-naturalness@" in said and "set human" not in said


def test_compare_says_when_no_two_scored_share_an_aspect_instead_of_asking_to_pick_two(monkeypatch, tmp_path):
    """Seen as a new user: two judges, each on an aspect of its own, were opened in Compare with "Pick two versions
    or judges of templates that score the same aspect", when none was there to pick."""
    at, _ = scored_app(monkeypatch, tmp_path, templates=(resolve_template("topicalchat-engagingness"),))
    at.switch_page(PAGE).run()
    assert not at.exception
    said = " ".join(i.value for i in at.info).replace("\\", "")
    assert "they share none" in said and "Pick two" not in said
    assert "No two of the versions and judges scored here compare the same human aspect" in said


def test_agreement_opens_on_a_judge_of_each_aspect_people_scored(monkeypatch, tmp_path):
    """Seen as a new user: a template per aspect (quality, ok), scored; Agreement opened on the newest alone, the
    other's row only after adding it by hand, while the pass-rate section below read it already."""
    engaging = resolve_template("topicalchat-engagingness")
    at, dataset = scored_app(monkeypatch, tmp_path, templates=(engaging,))
    at.switch_page(PAGE).run()
    assert not at.exception
    opened = [label.split("@")[0] for label in at.multiselect(key="agree_combos").value]
    assert opened == ["topicalchat-engagingness", "topicalchat-naturalness"]  # the newest first


def test_labels_in_messages_are_shown_as_written_not_as_markdown():
    from studio.text import plain

    labels = "topicalchat-naturalness~k4-random@1 and topicalchat-naturalness~argmax@2 *"
    assert plain(labels) == r"topicalchat\-naturalness\~k4\-random@1 and topicalchat\-naturalness\~argmax@2 \*"


def test_a_new_run_whose_label_reads_alike_is_opened_and_told_apart(monkeypatch, tmp_path):
    from openai_stub import OpenAIStub

    from geval.judging.backends.openai import OpenAIJudge
    from tests.test_page_inspect import TEMPLATE, load_template

    with OpenAIStub() as stub:
        def judge(max_tokens: int):
            return OpenAIJudge("stub-model", base_url=stub.url, api_key="sk-test", mode="logprobs", max_retries=0,
                               max_tokens=max_tokens)

        at, dataset = scored_app(monkeypatch, tmp_path, n=6, judge=judge(16))
        at.switch_page(PAGE).run()
        [chosen] = at.multiselect(key="agree_combos").value
        store = geval.Store(tmp_path / "store.sqlite")
        geval.score(store, dataset.items[:6], load_template(TEMPLATE), judge(32), dataset.name)  # reads alike
        store.close()
        at.run()
    assert not at.exception
    now = at.multiselect(key="agree_combos").value  # the newest run, opened, beside the one chosen before (the
    assert now == [f"{chosen} · max_tokens 32", f"{chosen} · max_tokens 16"]  # same aspect): both compared


def test_compare_follows_the_versions_chosen_above_with_the_original_as_a_even_when_scored_after_its_edit(
        monkeypatch, tmp_path):
    """As in one run of the editor's version and the file's: the edit is scored first, yet A is the original
    (the prompts/ file's version) and B the edit, so the verdict and the report's diff read the right way."""
    at, dataset = scored_app(monkeypatch, tmp_path, score=False)
    store = geval.Store(tmp_path / "store.sqlite")
    original, edited = resolve_template("topicalchat-naturalness"), _second_version()
    engaging = resolve_template("topicalchat-engagingness")
    items = dataset.items[::5][:12]
    for template in (edited, original, engaging):  # the edit first, as the Score page's run does
        geval.score(store, items, template, geval.make_judge("scripted"), dataset.name)
    combos = store.combos(dataset.name).set_index("template_version")
    assert combos.loc[original.version, "origin"] < combos.loc[edited.version, "origin"]
    labels = {t.version: combos.loc[t.version, "label"] for t in (original, edited, engaging)}
    readable = {t.version: f"{t.name}, version {t.version} · scripted: hashed" for t in (original, edited)}
    report = geval.reporting.report(store, dataset.name, n_boot=100, baselines=[], figures=False).markdown()
    store.close()
    assert f"| Natural | {readable[original.version]} | {readable[edited.version]} |" in report  # A, then B
    assert "+Evaluation Form (numbers ONLY):" in report and "-Evaluation Form (scores ONLY):" in report

    at.switch_page(PAGE).run()
    at.multiselect(key="agree_combos").set_value([labels[engaging.version]]).run()
    at.multiselect(key="agree_combos").set_value([labels[edited.version], labels[original.version]]).run()
    assert not at.exception
    assert (at.selectbox(key="agree_a").value, at.selectbox(key="agree_b").value) == (
        labels[original.version], labels[edited.version])
    verdict = " ".join(i.value for i in at.info if "on Natural" in i.value).replace("\\", "")
    assert f"A ({labels[original.version]})" in verdict and f"B ({labels[edited.version]})" in verdict

    at.selectbox(key="agree_a").select(labels[engaging.version]).run()  # a pair picked by hand stays ...
    at.run()
    assert at.selectbox(key="agree_a").value == labels[engaging.version]
    at.multiselect(key="agree_combos").set_value([labels[original.version], labels[edited.version]]).run()
    assert at.selectbox(key="agree_a").value == labels[engaging.version]  # ... the same two chosen, reordered
    at.multiselect(key="agree_combos").set_value([labels[original.version]]).run()  # ... until the choice changes
    assert (at.selectbox(key="agree_a").value, at.selectbox(key="agree_b").value) == (
        labels[original.version], labels[edited.version])
    at.multiselect(key="agree_combos").set_value([labels[engaging.version], labels[original.version]]).run()
    assert (at.selectbox(key="agree_a").value, at.selectbox(key="agree_b").value) == (  # the two chosen share no
        labels[original.version], labels[edited.version])                              # aspect: one with a partner
    assert not any("they share none" in i.value for i in at.info)


def test_compare_opens_on_two_versions_that_share_an_aspect_even_when_those_chosen_above_share_none(monkeypatch,
                                                                                                      tmp_path):
    """Chosen above: engagingness and coherence; scored besides: naturalness and its edit. Compare opened on
    engagingness against coherence ("they share none, so there is nothing to compare")."""
    at, dataset = scored_app(monkeypatch, tmp_path, score=False)
    store = geval.Store(tmp_path / "store.sqlite")
    templates = [resolve_template("topicalchat-naturalness"), _second_version(),
                 resolve_template("topicalchat-engagingness"), resolve_template("topicalchat-coherence")]
    for template in templates:
        geval.score(store, dataset.items[::5][:12], template, geval.make_judge("scripted"), dataset.name)
    labels = store.combos(dataset.name).set_index("template_version")["label"]
    store.close()
    at.switch_page(PAGE).run()
    at.multiselect(key="agree_combos").set_value([labels[t.version] for t in templates[2:]]).run()
    assert not at.exception
    assert (at.selectbox(key="agree_a").value, at.selectbox(key="agree_b").value) == (
        labels[templates[0].version], labels[templates[1].version])
    assert not any("they share none" in i.value for i in at.info)


def test_inspect_and_agreement_open_on_the_newest_run_not_the_sessions_previous_choice(monkeypatch, tmp_path):
    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page("views/4_inspect.py").run()
    first = at.selectbox(key="inspect_combo").value
    at.switch_page(PAGE).run()
    assert at.multiselect(key="agree_combos").value == [first]
    store = geval.Store(tmp_path / "store.sqlite")  # a run with another judge ends (as the embedded one after the stub)
    geval.score(store, dataset.items[:12], resolve_template("topicalchat-naturalness"),
                geval.make_judge("scripted", name="other"), dataset.name)
    newest = store.combos(dataset.name)["label"].iloc[0]
    store.close()
    assert newest != first
    at.run()
    assert not at.exception
    assert at.multiselect(key="agree_combos").value == [newest, first]  # the newest first; both judge Natural
    at.switch_page("views/4_inspect.py").run()
    assert at.selectbox(key="inspect_combo").value == newest
    at.selectbox(key="inspect_combo").select(first).run()  # a choice made since stays
    at.switch_page(PAGE).run()
    at.switch_page("views/4_inspect.py").run()
    assert at.selectbox(key="inspect_combo").value == first


def test_a_prompt_searchs_variants_stay_out_of_the_menus_until_listed(monkeypatch, tmp_path):
    from geval.tuning.variants import with_examples
    from tests.test_page_inspect import TEMPLATE, load_template

    at, dataset = scored_app(monkeypatch, tmp_path)
    store = geval.Store(tmp_path / "store.sqlite")
    for k in (1, 2, 3):
        geval.score(store, dataset.items[:6], with_examples(load_template(TEMPLATE), k), geval.make_judge("scripted"),
                    dataset.name, examples_from=dataset.items[6:])
    combos = store.combos(dataset.name)
    store.close()
    variants = list(combos.loc[combos["searched"], "label"])
    assert len(variants) == 3
    for page, kind, key in ((PAGE, "multiselect", "agree_combos"), ("views/4_inspect.py", "selectbox", "inspect_combo")):
        at.switch_page(page).run()
        assert not at.exception
        assert not set(variants) & set(getattr(at, kind)(key=key).options), page
        assert at.toggle(key="combos_variants").label == "List the 3 variants of prompt searches too"
        at.toggle(key="combos_variants").set_value(True).run()
        assert set(variants) <= set(getattr(at, kind)(key=key).options), page
        at.toggle(key="combos_variants").set_value(False).run()
    inspected = at.selectbox(key="inspect_combo").value  # the pages' default: no variant
    at.switch_page("views/7_label.py").run()  # the judge the labels are shown beside: the same
    assert not at.exception
    assert at.selectbox(key="label_judge").value == inspected and inspected not in variants
    assert not set(variants) & set(at.selectbox(key="label_judge").options)


def test_the_apps_report_and_geval_report_html_are_the_same_single_self_contained_file(monkeypatch, tmp_path):
    from helpers import run_cli

    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    at.button(key="agree_report_build").click().run()
    assert not at.exception and not at.error
    assert [s.label for s in at.status] == [next(s.label for s in at.status if s.label.startswith("Report built"))]
    assert at.get("download_button")[1].proto.label == "Download the HTML report"
    downloaded = at.session_state["agree_report"][1].decode("utf-8")  # the bytes the download button serves

    out = tmp_path / "cli"
    done = run_cli("report", dataset.name, "--store", str(tmp_path / "store.sqlite"), "--html", str(out / "r.html"),
                   env={"GEVAL_STORE": str(tmp_path / "store.sqlite")})  # its default baselines: the page's
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["r.html"]  # one file, nothing beside it
    written = (out / "r.html").read_text("utf-8")
    made = re.search(r"<p class=meta>Made by `([^`]*)`", written).group(1)  # the command as typed: it
    assert made.startswith(f"python -m geval report {dataset.name} --store ") and "--out" not in made  # said --out
    assert "--baselines" not in made  # the default

    def made_line_out(page: str) -> str:  # "Made by `...` on <date>" / "Made in G-Eval Studio on <date>"
        return re.sub(r"<p class=meta>Made [^<]*</p>", "", page, count=1)

    import difflib
    assert made_line_out(downloaded) == made_line_out(written), "\n".join(list(difflib.unified_diff(
        made_line_out(downloaded).split("<"), made_line_out(written).split("<"), lineterm="", n=0))[:20])
    for page in (downloaded, written):  # nothing loaded from beside the page or from the network
        assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=|<link[^>]*\shref=", page)
        assert page.count("* plotly.js (cartesian - minified) v") == 1
        assert page.count("class='figure plotly-graph-div'") >= 4
        assert "goal for the embedded" not in page and "seed 000" not in page  # the project's own: when asked


def test_the_report_asked_for_in_a_new_session_on_an_unchanged_store_is_the_one_kept(monkeypatch, tmp_path):
    """A browser reload, a new server: the same choices on the same store read the page kept, say so, and it is
    the page made then but for the line saying when."""
    from streamlit.testing.v1 import AppTest

    pages = []
    for _ in range(2):
        at, _ = scored_app(monkeypatch, tmp_path) if not pages else (AppTest.from_file(REPO / "app.py",
                                                                                       default_timeout=60), None)
        at.switch_page(PAGE).run()
        at.button(key="agree_report_build").click().run()
        assert not at.exception and not at.error
        pages.append(at.session_state["agree_report"][1].decode("utf-8"))
    said = [m.value for m in at.markdown]
    assert any("read as it was kept" in text for text in said), said
    assert not any("leaderboard" in text for text in said)  # nothing made again
    made_at = re.compile(r"(<p class=meta>Made in G-Eval Studio on )\S+")
    assert made_at.sub(r"\1", pages[0], count=1) == made_at.sub(r"\1", pages[1], count=1)


def test_a_report_built_before_the_store_changed_is_not_offered_after_and_built_again_says_the_change(monkeypatch,
                                                                                                       tmp_path):
    """A label given after the report was built (on the Label page, in another tab or from the command line): the
    report built before says what the store held then, so it is not offered; built again, it says the label."""
    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    at.button(key="agree_report_build").click().run()
    offered = ["Numbers as CSV", "Download the HTML report"]
    assert not at.exception and [b.proto.label for b in at.get("download_button")] == offered
    at.run()  # the page drawn again, nothing changed: still offered (building it changed nothing in the store)
    assert [b.proto.label for b in at.get("download_button")] == offered
    before = at.session_state["agree_report"][1].decode("utf-8")

    store = geval.Store(tmp_path / "store.sqlite")
    store.save_label(dataset.items[0].id, "Natural", 3)  # as another tab or `geval labels import` would
    store.close()
    at.run()
    assert not at.exception and [b.proto.label for b in at.get("download_button")] == ["Numbers as CSV"]
    at.button(key="agree_report_build").click().run()
    assert [b.proto.label for b in at.get("download_button")] == offered
    after = at.session_state["agree_report"][1].decode("utf-8")
    assert "Natural 1 of" in after and "Natural 1 of" not in before


def test_the_report_builder_adds_the_projects_goals_when_asked(monkeypatch, tmp_path):
    at, _ = scored_app(monkeypatch, tmp_path)
    at.switch_page(PAGE).run()
    at.checkbox(key="agree_report_goals").check().run()
    at.button(key="agree_report_build").click().run()
    assert not at.exception and not at.error
    page = at.session_state["agree_report"][1].decode("utf-8")
    assert "goal for the embedded" in page and "seed 000" in page
    at.checkbox(key="agree_report_goals").uncheck().run()  # a report built for other choices is not offered
    assert [b.proto.label for b in at.get("download_button")] == ["Numbers as CSV"]


def test_with_two_versions_the_tables_first_column_is_pinned_and_the_values_whole(monkeypatch, tmp_path):
    """Six imported judges' names ("mistral-v03 (imported from summeval_sample_llms.json)") in a first column drawn
    whole pushed the values out of view at 1400 px: "0.615 (no interval: 8 sys", "n/a (9 groups, 10 neede"."""
    at, _ = scored_app(monkeypatch, tmp_path, templates=(_second_version(),))
    at.switch_page(PAGE).run()
    at.multiselect(key="agree_combos").set_value(at.multiselect(key="agree_combos").options).run()
    assert not at.exception
    config = json.loads(at.dataframe[0].proto.columns)
    assert config["combo"]["width"] == 260 and config["combo"]["pinned"] is True
    assert config["value [95% CI]"]["width"] >= 7 * len("0.615 (no interval: 8 systems)")
    assert config["note"]["width"] == "large"


def test_the_table_names_versions_by_template_and_comment_with_the_hash_beside(monkeypatch, tmp_path):
    """Agreement's version column once read "topicalchat-naturalness@879953…", cut before the comment."""
    at, _ = scored_app(monkeypatch, tmp_path, templates=(_second_version(),))
    store = geval.Store(tmp_path / "store.sqlite")
    second = _second_version()
    store.save_template(second, comment="numbers only in the form")
    store.close()
    at.switch_page(PAGE).run()
    both = at.multiselect(key="agree_combos").options
    at.multiselect(key="agree_combos").set_value(both).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.columns[:2]) == ["combo", "version"]
    named = dict(zip(table["version"], table["combo"]))
    assert named[second.version] == "topicalchat-naturalness (numbers only in the form) · scripted: hashed"
    original = resolve_template("topicalchat-naturalness").version
    assert named[original] == "topicalchat-naturalness · scripted: hashed"


def test_one_annotator_is_named_as_such_with_no_reliability_estimate(monkeypatch, tmp_path):
    """Your labels alone (one annotator) are "your labels", and the page says there is no estimate of
    their reliability; the people of the Topical-Chat sample (three annotators) are "people"."""
    from tests.test_page_label import label_app

    at, store = label_app(monkeypatch, tmp_path)
    for index, item in enumerate(store.items("mine")):
        store.save_label(item.id, "Natural", 1 + index % 3)
    at.switch_page(PAGE).run()
    assert not at.exception
    assert [h.value for h in at.subheader][0] == "Correlation with your labels"
    assert any(c.value.startswith("One annotator per item: there is no estimate of how reliable") for c in at.caption)

    people, _ = scored_app(monkeypatch, tmp_path / "people")
    people.switch_page(PAGE).run()
    assert [h.value for h in people.subheader][0] == "Correlation with people"
    assert not any(c.value.startswith("One annotator per item") for c in people.caption)


def test_after_an_import_agreement_and_its_report_compare_every_judge_of_the_aspect(monkeypatch, tmp_path):
    """A judge imported beside one scored on the same items: Agreement opened with the imported judge
    alone, and its report said "No two template versions or judges of this report are compared"."""
    at, dataset = scored_app(monkeypatch, tmp_path, n=36)
    store = geval.Store(tmp_path / "store.sqlite")
    scored_ids = set(store.judgments(dataset.name)["item_id"])
    store.close()
    ids = [item.id for item in dataset.items if item.id in scored_ids] + [
        item.id for item in dataset.items if item.id not in scored_ids][:4]
    imported, embedded = _gpt_x(tmp_path, dataset, "natural", {i: 1 + n % 3 for n, i in enumerate(ids)})
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.multiselect(key="agree_combos").value == [imported, embedded]  # the newest first, both compared
    at.button(key="agree_report_build").click().run()
    page = at.session_state["agree_report"][1].decode()
    assert "No two template versions or judges of this report are compared" not in page
    assert re.search(r"Template versions and judges compared.*gpt-x", page, re.DOTALL)
    at.multiselect(key="agree_combos").unselect(embedded).run()  # one left out: said
    assert any(c.value.startswith("Not shown, though compared with the same human aspects: ") and
               "scripted" in c.value for c in at.caption)


def test_a_random_sample_that_leaves_groups_too_thin_suggests_scoring_whole_groups(monkeypatch, tmp_path):
    """After a random sample of 36 items the group level read "n/a (1 group)" and nothing said why."""
    at, _ = scored_app(monkeypatch, tmp_path, n=12)  # 12 items spread over the sample's 10 dialogues
    at.switch_page(PAGE).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert table.loc[table["level"] == "group", "value [95% CI]"].str.startswith("n/a").all()
    assert any("score whole groups (the Score page's Items, By group) instead, 10 or more with at least 3 items each"
               in c.value for c in at.caption)
    at.switch_page("views/3_score.py").run()
    at.radio(key="score_how").set_value("Seeded random sample").run()
    assert any(c.value.startswith("A random sample spreads its items over the groups") and "score whole groups, 10 or "
               "more with at least 3 items each: Items, By group." in c.value for c in at.caption)


def test_the_systems_section_draws_half_the_items_names_its_judge_and_shows_what_each_judge_is_worth(monkeypatch,
                                                                                                      tmp_path):
    """PersonaChat's sample (10 items per system): "Labels per system 20" labeled every item (intervals of no
    width) under a caption about "a document at a time"; the judges' table named judges "<label>: natural", so
    the advantage probability was always "–" and out of view; "saved" below 0 went unexplained; and the
    section read the most recently scored judge whatever was chosen above (now: the one worth most labels of
    those chosen above)."""
    at, dataset = scored_app(monkeypatch, tmp_path, n=50, source=REPO / "data" / "personachat_usr_sample.json")
    imported, embedded = _gpt_x(tmp_path, dataset, "Natural", _near_people(dataset, 0.7))
    at.switch_page(PAGE).run()
    assert not at.exception
    said = [c.value.replace("\\", "") for c in at.caption]
    assert at.number_input(key="systems_labels").value == 5  # half of each system's 10 items
    assert any(c.startswith("5 dialogues drawn at random, every system's item of each (5 labels per system)")
               for c in said)
    store = geval.Store(tmp_path / "store.sqlite")
    worth = geval.labeling.system_means(store, dataset.name, "Natural", per_system=5, design="documents").worth
    saved = dict(zip(worth["judge"], worth["saved"]))
    best = max([f"{imported}: natural", f"{embedded}: naturalness"], key=saved.get)  # both chosen above
    assert at.selectbox(key="systems_judge").value == best  # the one worth most labels, not the newest
    assert any(c.startswith(f"The combined estimate reads {best}, the judge worth most labels on Natural of those "
                            "chosen above") for c in said), said
    differ = re.compile(r"Natural: (no two of the \d+ systems can be told apart for all \d+ pairs together|\d+ of "
                        r"\d+ pairs of systems differ for all pairs together) with .+ Ranks each system may hold")
    assert any(differ.match(c) for c in said), said  # the report's bottom line says which systems differ: here too
    worth = next(d.value for d in at.dataframe if "effective labels" in d.value.columns)
    assert list(worth.columns) == ["judge", "labels", "effective labels", "saved", "Pearson within systems",
                                   "advantage probability", "judge in full"]
    row = worth.set_index("judge").loc[imported]
    assert re.fullmatch(r"0\.\d\d", row["advantage probability"]) and row["judge in full"] == f"{imported}: natural"
    negative = worth["saved"].str.startswith("-").any()
    assert any(c.startswith("Below 0 saved: the labels alone do better than with the judge.") for c in said) == negative
    for index, item in enumerate(dataset.items[:12]):  # the learning curve reads the same judge (it read the first
        store.save_label(item.id, "Natural", 1 + index % 3)  # chosen above: another than the rest of the page)
    at.multiselect(key="agree_combos").set_value([other for other in (embedded, imported) if other != best] + [best])
    at.run()
    curve = next(c.value.replace("\\", "") for c in at.caption if "of the judge alone" in c.value)
    assert f"of the judge alone ({best})" in curve, curve
    at.multiselect(key="agree_combos").unselect(imported).run()  # the section follows the choice above
    assert at.selectbox(key="systems_judge").value.startswith(embedded)
    at.number_input(key="systems_labels").set_value(10).run()
    assert not at.exception
    assert any(c.value.startswith("every item of every system is labeled: these are the people's own means")
               for c in at.caption)


def test_item_by_item_opens_on_the_judge_the_sections_above_open_on_not_the_newest(monkeypatch, tmp_path):
    """Six LLMs imported on the SummEval sample: the systems' section opened on gpt-4o (worth most labels), Item by
    item and How the judge errs on mistral-v03, the last imported, and Compare on gpt-4o-mini and mistral-v03. Here:
    a judge near people imported, then two scripted ones scored after it (the newest); every section opens on the
    one worth most labels, Compare's pair with it."""
    at, dataset = scored_app(monkeypatch, tmp_path, n=50, source=REPO / "data" / "personachat_usr_sample.json")
    imported, _ = _gpt_x(tmp_path, dataset, "Natural", _near_people(dataset, 0.5))
    store = geval.Store(tmp_path / "store.sqlite")
    for name in ("late-naturalness", "later-naturalness"):  # two newer, Compare's pair without the imported one
        geval.score(store, dataset.items, make_template(name=name), geval.make_judge("scripted"), dataset.name)
    newest = store.combos(dataset.name)["label"].iloc[0]
    store.close()
    at.switch_page(PAGE).run()
    assert not at.exception and newest != imported
    assert at.multiselect(key="agree_combos").value[0] == newest  # chosen above, the newest first
    assert at.selectbox(key="systems_judge").value == f"{imported}: natural"  # worth most labels
    assert at.selectbox(key="agree_plot_combo").value == imported
    assert imported in (at.selectbox(key="agree_a").value, at.selectbox(key="agree_b").value)  # Compare's pair too
    at.selectbox(key="agree_plot_combo").set_value(newest).run()  # one picked stays
    at.number_input(key="systems_labels").set_value(4).run()
    assert at.selectbox(key="agree_plot_combo").value == newest


def _near_people(dataset: geval.Dataset, noise: float) -> dict[str, int]:
    """Each item's people's mean of Natural with normal noise of sd `noise` added (seed 0), rounded to its 1-3 scale."""
    rng = np.random.default_rng(0)
    return {i.id: int(np.clip(round(i.human_mean("Natural") + rng.normal(0, noise)), 1, 3)) for i in dataset.items}


def _gpt_x(tmp_path, dataset: geval.Dataset, aspect: str, scores: dict[str, int]) -> tuple[str, str]:
    """A judge "gpt-x" imported from a table of `scores` by item id on `aspect`, beside the one scored: their
    labels (the imported one, the other)."""
    from geval.scoring.imports import import_judge

    table = tmp_path / "gpt-x.csv"
    table.write_text(f"item_id,{aspect}\n" + "".join(f"{i},{v}\n" for i, v in scores.items()))
    store = geval.Store(tmp_path / "store.sqlite")
    import_judge(store, dataset.name, table)
    combos = store.combos(dataset.name)
    store.close()
    imported = next(label for label in combos["label"] if label.startswith("gpt-x"))
    return imported, next(label for label in combos["label"] if label != imported)


def test_a_yes_no_aspect_gets_its_rate_in_the_systems_section_and_no_mean(monkeypatch, tmp_path):
    """WAX's 17 relation types, numbered 0-16, were averaged as if they were scores: "7.84 [5.72, 9.92]"; a
    categorical aspect stays out of the means, and one of two words (here yes/no) gets its rate instead, from
    the judge on every item and the people's labels (issue 42.7); more categories stay out with their line
    (tests/test_pass_rates.py)."""
    from streamlit.testing.v1 import AppTest

    from tests.apptest_helpers import APP

    rng = np.random.default_rng(2)
    truth = rng.choice(["no", "yes"], 40)
    folder = tmp_path / "yesno"
    folder.mkdir()
    (folder / "human_annotations.json").write_text(json.dumps(
        {f"a{k}": {f"i{n}": str(t) for n, t in enumerate(truth)} for k in range(3)}))
    (folder / "llm_annotations.json").write_text(json.dumps({"judge-a": {f"i{n}": str(t) for n, t in enumerate(truth)}}))
    monkeypatch.setenv("GEVAL_STORE", str(tmp_path / "store.sqlite"))
    store = geval.Store(tmp_path / "store.sqlite")
    geval.load_dataset(folder, store=store)
    geval.alttest.import_judge(store, "yesno", folder / "llm_annotations.json")
    store.close()
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset_source"] = {"stored": "yesno"}
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    said = [c.value.replace("\\", "") for c in at.caption]
    assert [h.value for h in at.subheader][0] == "Agreement with people"  # labels, read by accuracy: no correlation
    assert not any(line.startswith("Left out: label is categorical") for line in said)
    assert "**label (no/yes): each system's yes rate as people would give it**" in [m.value.replace("\\", "")
                                                                                     for m in at.markdown]
    source = next(line for line in said if line.startswith("From ") and "combined with" in line)
    assert "Student's t" in source and "betting" not in source, source  # it said betting of Student's t intervals
    rates = next(d.value for d in at.dataframe if "yes rate, combined" in d.value.columns)
    assert rates["people's yes rate, every item"].tolist() == [f"{np.mean(truth == 'yes'):.0%}"]
    assert any(line.startswith("The judge against the people's majority on the 40 items labeled, not only the 20 "
                               "drawn for the rates above: of the items labeled 'yes', it labels 'yes' 100%")
               for line in said), said
    assert not any(d.value.columns.tolist()[:2] == ["system", "labels"] for d in at.dataframe)
    assert rates["labeled"].tolist() == [20]  # half the items, drawn from the people's labels
    at.number_input(key="systems_labels").set_value(8).run()  # the rates had no control of their own: the report
    rates = next(d.value for d in at.dataframe if "yes rate, combined" in d.value.columns)  # followed this one
    assert not at.exception and rates["labeled"].tolist() == [8]
    assert any(c.value.endswith("the people's rate over all 40 items beside it") for c in at.caption)  # not "mean"


def test_the_report_built_on_the_page_takes_its_epsilon_alignment_and_judges(monkeypatch, tmp_path):
    """SummEval's experts (ε .2) on the page, "epsilon = 0.15 (skilled)" 51 times in the report built from it,
    and other verdicts: the report read its own defaults, not the page's choices."""
    at, _ = scored_app(monkeypatch, tmp_path, templates=(_second_version(),))
    at.switch_page(PAGE).run()
    first = at.multiselect(key="agree_combos").options[0]
    at.multiselect(key="agree_combos").set_value([first]).run()
    at.number_input(key="alttest_epsilon").set_value(0.1).run()
    at.selectbox(key="alttest_alignment").set_value("rank").run()
    assert not at.exception
    at.button(key="agree_report_build").click().run()
    assert not at.exception and not at.error
    page = at.session_state["agree_report"][1].decode("utf-8")
    assert "epsilon = 0.1 (crowd)" in page and "epsilon = 0.15" not in page
    assert "(the alternative annotator test, epsilon 0.1)" in page  # the bottom line's too
    assert "(rank: minus the root mean squared difference of ranks" in page
    judged = re.search(r"<h2>What was judged</h2>.*?</table>", page, re.DOTALL).group(0)
    assert judged.count("<tr>") == 2  # the header and the one judge chosen
    at.number_input(key="alttest_epsilon").set_value(0.2).run()  # a report built for other choices is not offered
    assert [b.proto.label for b in at.get("download_button")] == ["Numbers as CSV"]


def test_a_dataset_labeled_pass_fail_alone_is_read_by_accuracy_and_says_why_it_has_no_leaderboard(monkeypatch,
                                                                                                 tmp_path):
    """On a dataset whose every aspect is pass/fail, the leaderboard was offered ("Compute") and then refused in red,
    sending a web user to `geval agree`; the plots' metric opened on Pearson (no bars), and the table showed the item
    level alone with the group and system levels chosen, without a word. Now: accuracy bars, the levels said, the
    leaderboard's absence said."""
    from tests.helpers import scored_verdicts

    scored_verdicts(tmp_path, 24)
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": {"stored": "verdicts"}})
    assert not at.exception
    chosen = at.selectbox(key="agree_metric_labels")
    assert chosen.value == "accuracy" and chosen.disabled
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [spec["layout"]["title"]["text"] for spec in specs]
    assert "Accuracy against the people's majority" in titles, titles
    # labels counted in words, not "absolute difference ... median 1.00" of codes on a 0-1 scale
    assert not any("absolute difference" in t or "score distributions" in t for t in titles), titles
    labels = next(s for s in specs if "labels and the people" in s["layout"]["title"]["text"])  # escaped: &#x27;
    assert [bar["x"] for bar in labels["data"]] == [["fail", "pass"]] * 2
    people = next(bar for bar in labels["data"] if bar["name"] == "the people's majority")
    assert sum(people["y"]) == 24 and people["y"] == [12, 12]  # scored_verdicts: pass and fail in turn
    scatter = next(s for s in specs if "judge vs human" in s["layout"]["title"]["text"])  # labels on its axis, not 0-1
    assert (scatter["layout"]["xaxis"]["ticktext"], scatter["layout"]["xaxis"]["title"]["text"]) == (
        ["fail", "pass"], "human: verdict (the people's majority), jittered")
    # and the judge's axis: its scale's two points named (its score between them a weighted mean), not 0 and 1
    assert (scatter["layout"]["yaxis"]["tickvals"], scatter["layout"]["yaxis"]["ticktext"]) == ([0, 1], ["fail", "pass"])
    said = [c.value.replace("\\", "") for c in at.caption]
    assert any(line.startswith("verdict: labeled with categories, read item by item") for line in said), said
    assert not [t for t in at.toggle if t.key == "agree_lb"] and not at.error
    assert any(i.value.replace("\\", "").startswith("Every human aspect here is labeled with categories "
                                                    "(verdict): a leaderboard correlates scores, so there is none")
               for i in at.info)
    assert any(i.value.startswith("Each item here has one annotator's score: the test compares the judge")
               for i in at.info)  # not a table of 0 items and "no verdict" for each judge
    assert not [s for s in at.selectbox if s.key == "alttest_who"]
    at.multiselect(key="agree_levels").set_value(["item"]).run()  # the item level alone: nothing to explain
    assert not any("read item by item" in c.value for c in at.caption)


def test_with_your_labels_chosen_a_pass_fail_aspect_is_read_against_your_labels_on_the_items_you_labeled(
        monkeypatch, tmp_path):
    """With "your labels" as the human side, the page still said "accuracy against the people's majority" (the
    caption, the bars, how the judge errs, its confusion matrix), and the labels figure counted the judge on all 40
    items beside the majority of 24 labels under a title of 40 items. Now your labels are named, and both sides of
    the figure count the same items."""
    from tests.helpers import scored_verdicts

    dataset = scored_verdicts(tmp_path, 40)
    store = geval.Store(tmp_path / "store.sqlite")
    for k, item in enumerate(dataset.items[:24]):
        store.save_label(item.id, "verdict", int(k * 7 % 3 == 0))
    store.set_human_side(dataset.name, "you")
    at = open_app(monkeypatch, tmp_path, PAGE, state={"dataset_source": {"stored": "verdicts"}})
    assert not at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [spec["layout"]["title"]["text"] for spec in specs]
    assert "Accuracy against your labels" in titles, titles
    labels = next(s for s in specs if "the judge&#x27;s labels and your labels" in s["layout"]["title"]["text"])
    assert labels["layout"]["title"]["text"].endswith("on the 24 items with a majority label")
    assert [bar["name"] for bar in labels["data"]] == ["judge: its nearest label", "your labels"]
    assert [sum(bar["y"]) for bar in labels["data"]] == [24, 24]  # the judge was counted on all 40
    said = " ".join([c.value for c in at.caption] + [m.value for m in at.markdown]).replace("\\", "")
    assert "read item by item (accuracy against your labels" in said
    assert "Cohen's kappa of the judge's labels against your labels:" in said
    assert "The judge against your labels on the 24 items labeled: of the items labeled 'pass'" in said
    assert "the people's majority" not in said
    # the pass rate as you would give it; with you the one annotator, no n/a lines of "people" among each other
    assert "**verdict (fail/pass): each system's pass rate as you would give it**" in said
    rates = next(d.value for d in at.dataframe if "pass rate, combined" in d.value.columns)  # your 24 labels, every one
    assert rates["labeled"].tolist() == [24] and "drawn at random" not in said  # (it drew 20 of the file's own labels)
    assert ("One annotator (you): how much people agree with each other, and so whether the judge agrees with a "
            "person as well, needs two annotators or more on the same items.") in said
    assert "Among the people" not in said and "Against one annotator" not in said
    kappa = next(d.value for d in at.table if "kappa [95% CI]" in d.value.columns)  # a table: its cells wrap
    assert kappa[""].tolist() == ["the judge against your labels"]  # not again "against you", the same kappa
    scatter = next(s for s in specs if "judge vs human" in s["layout"]["title"]["text"])
    assert scatter["layout"]["xaxis"]["title"]["text"] == "human: verdict (your labels), jittered"
    confusion = next(s for s in specs if "the judge against your labels" in s["layout"]["title"]["text"])
    assert confusion["layout"]["yaxis"]["title"]["text"] == "your labels"
    assert "Systems as you would score them" in [h.value for h in at.subheader]  # your labels' mean, estimated
    assert any(c.value.startswith("The mean you would give each system, from your labels of a few items")
               for c in at.caption)
    assert "The other tables: confusion matrix, constant answers" in [e.label for e in at.expander]  # no "length"
    advice = next(i.value.replace("\\", "") for i in at.info if i.value.startswith("Each item here has one"))
    assert advice.endswith("You have labeled items here: choose \"you as one more annotator (on the items you "
                           "labeled)\" under Compared with, above, to test the judge against the people and you.")


def test_agreement_opens_on_a_judge_people_can_be_compared_with_not_a_newer_import_of_an_aspect_nobody_scored(
        monkeypatch, tmp_path):
    """A judge imported as naturalness where people scored Natural, newer than the one scored: Agreement opened on
    it alone, in red ("no judge aspect of imported-gpt-x@... matches a human aspect"), the scored judge left out."""
    from geval.scoring.imports import import_judge

    at, dataset = scored_app(monkeypatch, tmp_path, n=36)
    store = geval.Store(tmp_path / "store.sqlite")
    ids = list(store.judgments(dataset.name)["item_id"])
    table = tmp_path / "gpt-x.csv"
    table.write_text("item_id,score\n" + "".join(f"{i},{1 + n % 3}\n" for n, i in enumerate(ids)))
    import_judge(store, dataset.name, table, aspect="naturalness", scale=(1, 3))
    store.close()
    at.switch_page(PAGE).run()
    assert not at.exception and not at.error
    assert [label.split("@")[0] for label in at.multiselect(key="agree_combos").value] == ["topicalchat-naturalness"]
    assert any(plain("Not shown, compared with no aspect people scored here: gpt-x (imported from gpt-x.csv)")
               in c.value for c in at.caption)
    at.multiselect(key="agree_combos").select("gpt-x (imported from gpt-x.csv)").run()  # chosen: why, in orange
    said = next(w.value for w in at.warning if "matches a human aspect" in w.value)
    assert "this judge's scores were imported as naturalness" in said and "naming one of those" in said
    assert "`python -m geval judge import FILE --dataset " in said  # shown as code, not as backticks
    assert not at.error
    at.switch_page("views/4_inspect.py").run()  # Inspect opened on the import too, its items in dataset order
    assert at.selectbox(key="inspect_combo").value.startswith("topicalchat-naturalness@")


def test_the_only_judge_is_said_to_be_the_only_one_not_the_closest_to_people(monkeypatch, tmp_path):
    """A new user scored the sample's first 12 items ("At most 12"): no judge's worth can be read, and the systems'
    section said it opened on "the judge closest to people on Natural (the highest Pearson within systems ...)", of
    the only judge, whose Pearson was -0.43."""
    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(SAMPLE, store=store)
    geval.score(store, dataset.items[:12], resolve_template("topicalchat-naturalness"), geval.make_judge("scripted"),
                dataset.name)
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert not at.exception
    said = [c.value.replace("\\", "") for c in at.caption]
    assert any(c.startswith("The combined estimate reads") and c.endswith("the only judge compared with Natural.")
               for c in said), said
    assert not any("closest to people" in c for c in said), said


def test_a_file_without_systems_of_two_responses_per_dialogue_reads_labels_not_dialogues(monkeypatch, tmp_path):
    """Two responses to each dialogue and no systems: "Labels per system" 5 drew 5 dialogues, 10 labels, under a
    name about systems the file has none of; the group level read "n/a (0 groups)" as if it had no dialogues."""
    import dataclasses

    from tests.helpers import make_items, scripted

    items = [dataclasses.replace(item, system="") for item in make_items(40, dataset="pairs", per_group=2)]
    store = geval.Store(tmp_path / "store.sqlite")
    store.save_dataset(geval.Dataset("pairs", "pairs.csv", "table", items))
    geval.score(store, items, make_template(), scripted(), "pairs")
    store.close()
    at = open_app(monkeypatch, tmp_path, PAGE)
    assert not at.exception
    labels = at.number_input(key="systems_labels")
    assert labels.label == "Labels (drawn from the dataset's scores)" and labels.value == 20
    at.number_input(key="systems_labels").set_value(5).run()
    said = [c.value.replace("\\", "") for c in at.caption]
    assert any(c.startswith("3 dialogues drawn at random, every item of each (6 labels)") for c in said), said
    # one judge: not "the judge worth most labels on Natural of those chosen above"
    assert any(c.startswith("The combined estimate reads") and c.endswith("the only judge compared with Natural.")
               for c in said), said
    table = next(d.value for d in at.dataframe if "value [95% CI]" in d.value.columns)
    assert set(table.loc[table["level"] == "group", "value [95% CI]"]) == {"n/a (no group of 3+ items)"}
    # not "score whole groups instead": whole, they hold 2 items
    assert any(c.startswith("The group level correlates the scores within each dialogue or document, and this "
                            "dataset's hold 2 items at most: it needs 3 or more in a group") for c in said), said


def test_after_an_import_every_section_follows_the_judge_now_worth_most_until_one_is_picked(monkeypatch, tmp_path):
    """Six LLMs imported beside a judge scored in the same session: the bottom line and the systems read gpt-4o,
    while "Can the judge replace an annotator?" and Item by item stayed on the judge they had opened on before."""
    at, dataset = scored_app(monkeypatch, tmp_path, n=50, source=REPO / "data" / "personachat_usr_sample.json")
    at.switch_page(PAGE).run()
    assert not at.exception
    before = at.session_state["agree_plot_combo"]
    imported, _ = _gpt_x(tmp_path, dataset, "Natural", _near_people(dataset, 0.3))
    at.run()
    assert not at.exception and imported != before
    assert at.selectbox(key="systems_judge").value == f"{imported}: natural"  # worth most labels now
    assert at.selectbox(key="agree_plot_combo").value == imported  # followed, not left on the one before
    assert at.selectbox(key="alttest_pick").value.startswith(imported)
    at.selectbox(key="agree_plot_combo").set_value(before).run()  # one picked by hand stays
    at.number_input(key="systems_labels").set_value(4).run()
    assert at.selectbox(key="agree_plot_combo").value == before


def test_a_link_opens_the_annotator_test_and_the_systems_on_the_judges_picked(monkeypatch, tmp_path):
    """A student sent the Agreement page's link to a supervisor: the test's "Judge and aspect", its epsilon and
    the systems' judge and labels per system were not in it, so a fresh browser opened on the judge worth most
    labels, at the annotators' default epsilon, and read another verdict than the one sent."""
    at, dataset = scored_app(monkeypatch, tmp_path, n=50, source=REPO / "data" / "personachat_usr_sample.json")
    imported, _ = _gpt_x(tmp_path, dataset, "Natural", _near_people(dataset, 0.3))
    at.switch_page(PAGE).run()
    assert not at.exception
    picked = {}
    for key in ("alttest_pick", "systems_judge"):  # not the judge worth most labels, opened on
        menu = at.selectbox(key=key)
        menu.select_index(1 - menu.index).run()
        picked[key] = at.selectbox(key=key).value
    at.number_input(key="alttest_epsilon").set_value(0.27).run()
    at.number_input(key="systems_labels").set_value(7).run()
    link = {name: value for name, value in at.query_params.items()}
    assert {name: link.get(name) for name in ("alttest", "epsilon", "systems_judge", "per_system")} == {
        "alttest": picked["alttest_pick"], "epsilon": "0.27", "systems_judge": picked["systems_judge"],
        "per_system": "7"}
    again = open_app(monkeypatch, tmp_path, params=link)  # a fresh browser on the link
    again.switch_page(PAGE).run()
    assert not again.exception
    assert {key: again.selectbox(key=key).value for key in picked} == picked
    assert (again.number_input(key="alttest_epsilon").value, again.number_input(key="systems_labels").value) == \
        (0.27, 7)
    judge = picked["alttest_pick"].split(" · ")[0]
    verdicts = [[a.value for kind in ("success", "info", "warning", "error") for a in getattr(app, kind)
                 if plain(judge) in a.value and "an annotator here" in a.value] for app in (at, again)]
    assert len(verdicts[0]) == 1 and verdicts[0] == verdicts[1], verdicts  # the verdict sent, at its epsilon
