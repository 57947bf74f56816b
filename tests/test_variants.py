"""geval.variants: weighted mean, argmax and the n-sample mean, read from the store."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import item_number, make_items, make_template, scripted

import geval
from geval.store import records
from geval.analysis.disagreement import distributions
from geval.analysis.variants import VariantError, variant_scores, with_samples
from geval.judging.answers import scores_from_samples
from geval.judging.backends.scripted import hashed_distribution
from geval.judging.judgment import Judgment
from geval.judging.templates import Aspect

TEMPLATE = make_template()


def tied_or_hashed(prompt: str, aspect: Aspect) -> dict[int, float]:
    """Item 0: a tie between 1 and 2 (argmax takes the lower); the rest hashed."""
    if item_number(prompt) == 0:
        return {1: 0.4, 2: 0.4, 3: 0.2}
    return hashed_distribution(prompt, aspect)


class Sampler:
    """A judge that 'samples' five answers per prompt, parsed by the real sample parser."""

    settings = {"backend": "scripted", "model": "sampler", "mode": "samples", "n": 5}

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        i = item_number(prompt) if "Response:\nresponse " in prompt else len(prompt)  # any prompt: the sample's too
        texts = [f"{aspects[0].name}: {1 + (i + j * j) % 3}" for j in range(5)]
        return Judgment(scores_from_samples(texts, aspects), texts)

    def generate(self, prompt: str, max_tokens: int = 0) -> str:
        return ""


@pytest.fixture
def scored(store):
    items = make_items(12)
    store.save_dataset(geval.Dataset("synthetic", "", "test", items))
    progress = geval.score(store, items, TEMPLATE, scripted(tied_or_hashed), "synthetic")
    return store, items, progress.signature


@pytest.mark.parametrize("at_a_time", [None, 5], ids=["in one part", "five distributions at a time"])
@pytest.mark.parametrize("kept", [True, False], ids=["kept beside the distribution", "parsed from it"])
def test_wmean_is_the_stored_score_and_argmax_the_most_probable(scored, monkeypatch, at_a_time, kept):
    store, items, signature = scored
    if at_a_time:
        monkeypatch.setattr(records, "PARSED_AT_A_TIME", at_a_time)
    frame = store.judgments("synthetic", TEMPLATE.version, signature)
    if not kept:  # a table read without the column (e.g. of a store written before schema 19)
        frame = frame.drop(columns="most_probable")
    assert variant_scores(frame, "wmean").tolist() == frame["score"].tolist()
    argmax = variant_scores(frame, "argmax")
    for (_, row), value in zip(frame.iterrows(), argmax):
        distribution = distributions(row.to_frame().T).iloc[0]
        assert value == min(s for s, p in distribution.items() if p == max(distribution.values()))
    first = frame["item_id"] == items[0].id
    assert argmax[first].tolist() == [1.0]  # the tie 1 vs 2 goes to the lower score
    assert set(argmax) <= {1.0, 2.0, 3.0}


def test_unscored_judgments_stay_nan(store):
    items = make_items(4)
    judge = scripted(lambda prompt, aspect: "no idea" if item_number(prompt) == 1 else {1: 0.2, 2: 0.3, 3: 0.5})
    progress = geval.score(store, items, TEMPLATE, judge, "synthetic")
    frame = store.judgments("synthetic", TEMPLATE.version, progress.signature)
    for variant in ("wmean", "argmax"):
        values = variant_scores(frame, variant)
        assert values.isna().sum() == 1 and values[frame["status"] == "unscored"].isna().all()
    assert variant_scores(frame, "argmax").dropna().tolist() == [3.0, 3.0, 3.0]


def test_the_n_sample_mean_from_the_stored_samples(store):
    items = make_items(6)
    progress = geval.score(store, items, TEMPLATE, Sampler(), "synthetic")
    frame = with_samples(store, store.judgments("synthetic", TEMPLATE.version, progress.signature))
    by_id = {item.id: int(item.response.split()[1]) for item in items}
    numbers = [by_id[i] for i in frame["item_id"]]
    expected = [np.mean([1 + (i + j * j) % 3 for j in range(5)]) for i in numbers]
    assert variant_scores(frame, "samples").tolist() == pytest.approx(expected)
    assert variant_scores(frame, "samples").tolist() == pytest.approx(frame["score"].tolist())  # = wmean
    first_two = [np.mean([1 + (i + j * j) % 3 for j in range(2)]) for i in numbers]
    assert variant_scores(frame, "samples", k=2).tolist() == pytest.approx(first_two)


def test_samples_of_a_logits_judge_is_a_clear_error(scored):
    store, _, signature = scored
    frame = store.judgments("synthetic", TEMPLATE.version, signature)
    with pytest.raises(VariantError, match="needs each judgment's samples: pass the frame through geval.analysis.variants.with_samples"):
        variant_scores(frame, "samples")
    with pytest.raises(VariantError, match="hold no samples .* the n-sample mean needs a sampled judge"):
        variant_scores(with_samples(store, frame), "samples")
    with pytest.raises(VariantError, match="score variant 'median' is unknown; use one of wmean, argmax, samples"):
        variant_scores(frame, "median")


def test_the_wmean_table_equals_agreement_table_and_argmax_differs(scored):
    store, _, signature = scored
    plain = geval.agree(store, "synthetic", (TEMPLATE.version, signature), n_boot=50)
    wmean = geval.agree(store, "synthetic", (TEMPLATE.version, signature), "wmean", n_boot=50)
    columns = ["aspect", "human", "metric", "level", "value", "low", "high", "n", "unscored"]
    pd.testing.assert_frame_equal(plain[columns], wmean[columns])
    argmax = geval.agree(store, "synthetic", (TEMPLATE.version, signature), "argmax", n_boot=50)
    assert set(argmax["variant"]) == {"argmax"}
    item = lambda t: t[(t["level"] == "item") & (t["metric"] == "pearson")]["value"].iloc[0]
    assert not math.isclose(item(argmax), item(wmean))


def test_the_agreement_page_offers_the_variants_its_judges_can_be_read_in(monkeypatch, tmp_path):
    from tests.test_page_inspect import TEMPLATE as NATURALNESS
    from tests.test_page_inspect import load_template, scored_app

    at, dataset = scored_app(monkeypatch, tmp_path)
    at.switch_page("views/5_agreement.py").run()
    wmean_only = ["probability-weighted mean (G-EVAL; the stored score)",
                  "most probable score of the stored distribution"]
    assert at.radio(key="agree_variant").options == wmean_only  # a judge read from logits: no samples to average
    wmean = at.dataframe[0].value
    at.radio(key="agree_variant").set_value("argmax").run()
    assert not at.exception and not at.error
    argmax = at.dataframe[0].value
    assert list(argmax.columns) == list(wmean.columns) and len(argmax) == len(wmean)
    assert list(argmax["value [95% CI]"]) != list(wmean["value [95% CI]"])

    store = geval.Store(tmp_path / "store.sqlite")  # a sampled judge beside it: its variant offered, read alone
    geval.score(store, dataset.items[::max(1, len(dataset.items) // 12)][:12], load_template(NATURALNESS), Sampler(),
                dataset.name)
    labels = list(store.combos(dataset.name)["label"])
    store.close()
    at.multiselect(key="agree_combos").set_value(labels).run()
    assert at.radio(key="agree_variant").options == [*wmean_only, "mean of the sampled answers (sampled judges only)"]
    at.radio(key="agree_variant").set_value("samples").run()
    assert not at.exception and not at.error  # no red line per judge that never sampled
    logits = next(label for label in labels if "sampler" not in label)
    assert any(c.value.startswith("Not read as the mean of sampled answers:") and "sampler" not in c.value
               for c in at.caption), [c.value for c in at.caption]
    assert len(at.dataframe[0].value) == len(wmean), logits  # one judge's table: the sampler's, not two


def test_argmax_reads_a_distribution_with_nan_as_the_standard_library_does():
    """The distributions are read with orjson, which refuses NaN (json.dumps writes it): such a text is read by
    the standard library, its NaN no score's probability."""
    frame = pd.DataFrame({"status": ["ok", "ok", "ok"], "score": [2.0, 1.5, math.nan],
                          "distribution": ['{"1": 0.2, "2": 0.7, "3": 0.1}', '{"1": NaN, "2": 0.5, "3": 0.25}', "{}"]})
    assert variant_scores(frame, "argmax").tolist()[:2] == [2.0, 2.0]
    assert math.isnan(variant_scores(frame, "argmax").iloc[2])
