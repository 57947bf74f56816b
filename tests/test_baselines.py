"""geval.baselines: known answers, the reference each metric used, signatures, the cache.
The real GGUF embedding is tested in test_embedded_baseline (marked `model`), BERTScore in test_bertscore."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from test_pmi import WordModel

import geval
from geval.analysis.baselines import (
    METRICS,
    BaselineError,
    Embedder,
    bleu,
    chrf,
    compute_baselines,
    embedding_cosine,
    length,
    reference_kind,
    reference_note,
    rouge_l,
)
from geval.data.dataset import resolve_dataset
from geval.data.items import Turn, make_item
from geval.data.layouts.usr import NO_FACT_TEXT


class BagOfWords(Embedder):
    """A stand-in for the GGUF model: hashed bag of words, 64 dimensions. Counts its texts."""

    settings = {"model": "bag-of-words", "dim": 64}

    def __init__(self):
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        vectors = np.zeros((len(texts), 64))
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, hashlib.sha256(word.encode()).digest()[0] % 64] += 1
        return vectors


@pytest.mark.parametrize("function, response, reference, expected", [
    (rouge_l, "the cats sat on the mat", "a cat sat on a mat", 4 / 6),  # LCS cat sat on mat: P = R = 4/6
    (rouge_l, "completely different words", "a cat sat", 0.0),
    (bleu, "the cat sat on the mat", "the cat sat on the mat", 100.0),
    (bleu, "the cat sat on the mat", "a cat sat on a mat", 32.46679154750991),  # sacrebleu's own figure
    (chrf, "the cat sat on the mat", "the cat sat on the mat", 100.0),
    (length, "one two  three\nfour", "", 4.0),
])
def test_known_answers(function, response, reference, expected):
    assert function([response], [reference])[0] == pytest.approx(expected, abs=1e-9)


def test_embedding_cosine_embeds_each_distinct_text_once():
    embedder = BagOfWords()
    values = embedding_cosine(["a b", "c d", "a b"], ["a b", "a b", "x y"], embedder)
    assert values[0] == pytest.approx(1.0)
    assert embedder.seen == ["a b", "c d", "x y"]


def test_reference_kinds():
    turn = make_item("tc", "turn", [Turn("A", "hi")], "hello", grounding="a fact")
    bare = make_item("fed", "turn", [Turn("User", "hi")], "hello")
    summary = make_item("se", "summary", [], "short", grounding="a long document")
    assert reference_kind([turn]) == "fact"
    assert reference_kind([turn], "personachat_usr_sample") == "persona"
    assert reference_kind([summary]) == "document"
    assert reference_kind([bare]) == "context"
    assert reference_kind([turn, bare]) == "fact, else context"
    nofact = make_item("tc", "turn", [Turn("A", "do you like cats")], "i like cats", grounding="_nofact\n")
    assert reference_kind([turn, nofact]) == "fact, else context"
    from geval.analysis.baselines import reference_text

    assert reference_text(nofact) == "A: do you like cats" and reference_text(turn) == "a fact"
    assert "'Original Ground Truth'" in reference_note("usr", "tc_usr_data")
    assert reference_note("dstc9").startswith("no human reference: the file's references are 'NO REF'")


def test_signatures_are_exact_and_carry_the_reference():
    bleu_metric, rouge_metric = METRICS["bleu"], METRICS["rouge-l"]
    from importlib import metadata

    import rouge_score  # noqa: F401
    from sacrebleu import __version__ as sacrebleu_version

    text, fields = bleu_metric.signature("fact")
    assert text == f"BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:{sacrebleu_version}|ref:fact"
    assert fields["ref"] == "fact" and fields["metric"] == "BLEU"
    text, _ = rouge_metric.signature("context")
    assert text == f"ROUGE-L|measure:F1|stem:yes|rouge-score:{metadata.version('rouge-score')}|ref:context"
    assert METRICS["length"].signature("fact")[0] == "length|unit:words|tok:whitespace"
    text, fields = METRICS["embedding"].signature("fact", BagOfWords())
    assert text == "embedding-cosine|model:bag-of-words|dim:64|ref:fact"


def test_compute_baselines_on_the_topicalchat_sample_uses_the_fact_and_caches(store):
    dataset = geval.load_dataset(resolve_dataset("topicalchat_usr_sample"))
    embedder = BagOfWords()
    results = compute_baselines(dataset.items, dataset=dataset.name, layout="usr", store=store, embedder=embedder,
                                language_model=WordModel())
    assert [r.name for r in results] == list(METRICS)
    for result in results:
        assert list(result.scores.index) == [item.id for item in dataset.items]
        assert result.scores.notna().all()
    by_name = {r.name: r for r in results}
    assert by_name["rouge-l"].reference == "fact, else context" and by_name["length"].reference == "-"
    assert by_name["pmi"].reference == "context"
    assert "no human reference response" in by_name["bleu"].note and "'_nofact'" in by_name["bleu"].note
    first = dataset.items[0]
    assert by_name["rouge-l"].scores[first.id] == pytest.approx(rouge_l([first.response], [first.grounding])[0])
    nofact = next(i for i in dataset.items if i.grounding == NO_FACT_TEXT)  # 2 of the sample's 10 contexts
    assert by_name["rouge-l"].scores[nofact.id] == pytest.approx(
        rouge_l([nofact.response], [nofact.fields()["context"]])[0])
    references = {i.grounding if i.grounding != NO_FACT_TEXT else i.fields()["context"] for i in dataset.items}
    assert len(embedder.seen) == len({i.response for i in dataset.items} | references)
    again = BagOfWords()
    cached = compute_baselines(dataset.items, dataset=dataset.name, layout="usr", store=store, embedder=again,
                               language_model=WordModel())
    assert again.seen == []  # all from the cache
    for old, new in zip(results, cached):
        assert old.scores.equals(new.scores) and old.signature == new.signature


def test_context_is_the_reference_when_there_is_no_grounding():
    items = [make_item("fed", "turn", [Turn("User", "do you like cats")], "i like cats", group="d"),
             make_item("fed", "turn", [Turn("User", "do you like cats")], "the weather is bad", group="d")]
    rouge = compute_baselines(items, ["rouge-l"], layout="fed")[0]
    assert rouge.reference == "context" and rouge.note.startswith("no human reference response; turns compared "
                                                                  "with the context, whole dialogues with nothing")
    assert rouge.scores.iloc[0] > rouge.scores.iloc[1]


def test_a_whole_dialogue_has_a_length_but_nothing_to_be_compared_with():
    dialogue = make_item("fed", "dialogue", [Turn("User", "do you like cats"), Turn("System", "yes a lot")], "",
                         group="d")
    rouge, words = compute_baselines([dialogue], ["rouge-l", "length"], layout="fed")
    assert np.isnan(rouge.scores.iloc[0])
    assert words.scores.iloc[0] == 9.0  # "User: do you like cats" and "System: yes a lot"


def test_an_unknown_metric_is_named():
    with pytest.raises(BaselineError, match="baseline 'meteor' is unknown; use one of rouge-l, bleu, chrf, "
                                            "length, embedding, bertscore, pmi"):
        compute_baselines([], ["meteor"])


def test_a_baselines_scores_on_a_set_of_items_are_kept_whole_and_computed_again_only_for_what_changed(store,
                                                                                                   monkeypatch):
    from dataclasses import replace

    dataset = geval.load_dataset(resolve_dataset("topicalchat_usr_sample"))
    first = compute_baselines(dataset.items, ["rouge-l", "pmi"], store=store, language_model=WordModel())
    looked_up = []
    monkeypatch.setattr(store, "baseline_scores", lambda keys: looked_up.append(len(keys)) or {})
    again = compute_baselines(dataset.items, ["rouge-l", "pmi"], store=store, language_model=WordModel())
    assert looked_up == []  # read back whole: no item looked up, nothing computed
    for old, new in zip(first, again):
        assert old.scores.equals(new.scores) and old.signature == new.signature
    monkeypatch.undo()

    computed = []
    real = METRICS["rouge-l"].compute
    monkeypatch.setattr(METRICS["rouge-l"].__class__, "compute",
                        lambda self, texts, others, model, say=None: computed.append(len(texts)) or real(texts, others,
                                                                                                        model, say))
    edited = [replace(dataset.items[0], response="a new response"), *dataset.items[1:]]
    [changed] = compute_baselines(edited, ["rouge-l"], store=store)
    assert computed == [1]  # the items changed: only the edited one is computed again
    assert changed.scores.iloc[1:].equals(first[0].scores.iloc[1:])


def test_the_gguf_embedder_asks_its_worker_in_chunks_each_with_time_for_its_tokens(monkeypatch, tmp_path):
    """416 texts in one call with a second each stopped the embedding baseline of a 360-item report on a
    busy machine as hung (536 s); each call now takes at most EMBED_CHUNK texts and allows its tokens'
    time at the slowest speed the limit allows for."""
    from geval.analysis import baselines

    calls = []

    class Worker:
        def call(self, method, texts, seconds):
            calls.append((len(texts), seconds))
            return np.ones((len(texts), 3))

    monkeypatch.setattr(baselines, "gguf_model", lambda path, error: (tmp_path / "m.gguf", "m", "w"))
    monkeypatch.setattr(baselines, "worker", lambda *args: Worker())
    texts = [f"{i} " + "word " * 200 for i in range(70)]  # ~250 tokens each
    vectors = baselines.GGUFEmbedder().embed(texts)
    assert vectors.shape == (70, 3)
    assert [n for n, _ in calls] == [baselines.EMBED_CHUNK, baselines.EMBED_CHUNK, 70 - 2 * baselines.EMBED_CHUNK]
    assert calls[0][1] >= baselines.EMBED_SECONDS + baselines.EMBED_CHUNK * 250 / baselines.SLOWEST_TOKENS_PER_SECOND


def test_a_baselines_key_on_a_set_of_items_is_the_one_stores_already_hold(store):
    """The key a metric's scores of a set of items are kept under hashes each item's id and texts, each preceded by
    its length in characters: stores hold their scores under it, so it stays this hex (also for text of more than
    one byte per character and an item with nothing to compare with)."""
    items = [make_item("keys", "turn", [Turn("A", "hi")], "A réponse 😀: 12", grounding="fact: 中文"),
             make_item("keys", "turn", [Turn("A", "hi"), Turn("B", "so")], "", grounding=""),
             make_item("keys", "turn", [], "3:abc", grounding="1:x")]
    [length] = compute_baselines(items, ["length"], store=store)
    assert length.signature == "length|unit:words|tok:whitespace"
    kept = store.baseline_values("2550e5c8e5cf1ebd271e185c487ae8a1bbb2306cca3a93b3827ebf0f232f3a4a")
    assert kept is not None and list(kept) == list(length.scores)


def test_a_stored_datasets_baselines_are_found_again_without_reading_its_texts_until_its_rows_change(tmp_path,
                                                                                                    monkeypatch):
    """A report of a stored dataset asks for its baselines with the digest of its rows (`Items.digest`): found again
    without reading a million items' texts (2.4 s), the same scores and signatures; its rows changed (a response
    edited in the file, loaded again), the texts are read and the changed item's score is the new one's."""
    from dataclasses import replace

    from geval.analysis import baselines

    store = geval.Store(tmp_path / "store.sqlite")
    dataset = geval.load_dataset(resolve_dataset("topicalchat_usr_sample"))
    store.save_dataset(dataset)
    items = store.items(dataset.name)
    assert items.digest and store.items(dataset.name).digest == items.digest  # its copies too
    first = compute_baselines(items, ["rouge-l", "length"], dataset=dataset.name, store=store, digest=items.digest)
    read = []
    real = baselines._read
    monkeypatch.setattr(baselines, "_read", lambda *args: read.append(args[1].name) or real(*args))
    again = compute_baselines(store.items(dataset.name), ["rouge-l", "length"], dataset=dataset.name, store=store,
                              digest=items.digest)
    assert read == []
    for old, new in zip(first, again):
        assert old.scores.equals(new.scores) and (old.signature, old.reference) == (new.signature, new.reference)
    some = store.items(dataset.name)[:5]  # other items: other ids, another alias
    assert compute_baselines(some, ["length"], dataset=dataset.name, store=store, digest=items.digest)[0].scores.equals(
        first[1].scores.iloc[:5]) and read == ["length"]

    edited = geval.Dataset(dataset.name, dataset.path, dataset.layout,
                           [replace(dataset.items[0], response="a new response"), *dataset.items[1:]])
    store.save_dataset(edited)
    items = store.items(dataset.name)
    [length] = compute_baselines(items, ["length"], dataset=dataset.name, store=store, digest=items.digest)
    assert read == ["length", "length"] and length.scores.iloc[0] == 3
    assert length.scores.iloc[1:].equals(first[1].scores.iloc[1:])
    store.close()
