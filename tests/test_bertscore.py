"""geval.analysis.bertscore: the score against bert_score, empty texts, the signature, the
cache, and what is imported (the encoder itself: tests/test_encoder.py).

Reference values were taken once with bert-score 0.3.13 (`bert_score.score(...,
model_type=<the model's folder>, num_layers=6)`) on the same model files."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import REPO

import geval
from geval.analysis import bertscore
from geval.analysis.baselines import METRICS, compute_baselines
from geval.data.dataset import resolve_dataset
from geval.data.items import Turn, make_item
from geval.judging.encoder import Encoder

CAT = "The cat sat on the mat."


@pytest.fixture(scope="module")
def scorer() -> bertscore.BertScorer:
    return bertscore.scorer()


@pytest.mark.parametrize("response, reference, precision, recall, f1", [
    (CAT, "A cat was sitting on the mat.", 0.9186350107192993, 0.8959047198295593, 0.9071274995803833),
    ("the weather is nice today", "A cat was sitting on the mat.", 0.10800635069608688, 0.07974550873041153,
     0.09174898266792297),
])
def test_known_answers_of_bert_score(scorer, response, reference, precision, recall, f1):
    values = scorer.score([response], [reference])
    assert [v[0] for v in values] == pytest.approx([precision, recall, f1], abs=1e-5)


def test_identical_texts_score_one(scorer):
    texts = [CAT, "Hello!", "a", "Did you know that the Great Wall is not visible from space? " * 60]  # the last: > 256
    assert bertscore.bertscore_f1(texts, texts) == pytest.approx(np.ones(len(texts)), abs=1e-6)


def test_a_paraphrase_scores_higher_than_an_unrelated_text():
    reference = ["I love watching football on Sunday afternoons.", "The movie was directed by Steven Spielberg."]
    paraphrase = ["On Sunday afternoons I really enjoy watching football.", "Steven Spielberg directed that film."]
    unrelated = ["My grandmother grows tomatoes in her garden.", "Quantum computers use qubits."]
    assert (bertscore.bertscore_f1(paraphrase, reference) > bertscore.bertscore_f1(unrelated, reference)).all()


def test_an_empty_response_or_reference_is_nan_not_a_score(scorer):
    precision, recall, f1 = scorer.score(["", "   ", CAT, CAT], [CAT, CAT, "", CAT])
    assert np.isnan(f1[:3]).all() and np.isnan(precision[:3]).all() and np.isnan(recall[:3]).all()
    assert f1[3] == pytest.approx(1.0)


def test_the_signature_names_model_layer_idf_truncation_and_versions():
    from importlib import metadata

    text, fields = METRICS["bertscore"].signature("fact")
    assert text == ("BERTScore-F1|model:all-MiniLM-L6-v2|weights:53aa51172d14|layer:6|idf:no|rescale:no|max:256|"
                    f"tokenizers:{metadata.version('tokenizers')}|safetensors:{metadata.version('safetensors')}|"
                    f"version:{geval.__version__}|ref:fact")
    assert fields["metric"] == "BERTScore-F1" and fields["layer"] == 6 and fields["ref"] == "fact"


def test_a_second_compute_reads_the_store_and_never_calls_the_encoder(store, monkeypatch):
    dataset = geval.load_dataset(resolve_dataset("topicalchat_usr_sample"))
    blank = make_item("tc", "turn", [Turn("A", "hi")], "   ", grounding="a fact", group="g")  # NaN, cached too
    items = [*dataset.items[:12], blank]
    first = compute_baselines(items, ["bertscore"], dataset=dataset.name, layout="usr", store=store)[0]
    assert first.title == "BERTScore-F1" and first.reference == "fact"
    assert first.scores.iloc[:12].between(0, 1).all() and np.isnan(first.scores[blank.id])

    def no_encoder(*args):
        raise AssertionError("the encoder was called")

    monkeypatch.setattr(Encoder, "hidden", no_encoder)
    again = compute_baselines(items, ["bertscore"], dataset=dataset.name, layout="usr", store=store)[0]
    assert again.scores.equals(first.scores) and again.signature == first.signature


def test_the_model_loads_only_when_asked_and_never_the_hub_client():
    code = ("import sys, geval\n"
            "from geval.analysis.baselines import METRICS\n"
            "METRICS['bertscore'].signature('fact')\n"
            "assert not {'tokenizers', 'safetensors'} & set(sys.modules), 'loaded on import'\n"
            "from geval.analysis.bertscore import bertscore_f1\n"
            "assert bertscore_f1(['a cat'], ['a cat'])[0] > 0.99\n"
            "assert 'huggingface_hub' not in sys.modules, 'the hub client was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=False, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
