"""BERTScore (Zhang et al., ICLR 2020): each token of the response matched to its most similar
token of the reference (and back) by the cosine of their contextual embeddings.

Encoder: all-MiniLM-L6-v2 from its PyPI package, in numpy (`geval.judging.encoder`).

Score, as bert_score.utils.greedy_cos_idf: token vectors of the last layer (6) L2-normalized; the
cosine matrix over all tokens of both texts, [CLS] and [SEP] included as match targets but
weighted 0 in the averages; precision = mean over response tokens of their best cosine, recall
the same over reference tokens, F1 their harmonic mean. No idf weighting. Texts are cut to 256
tokens ([CLS] and [SEP] included), as sentence-transformers cuts them for this model (the
signature's `max`). An empty response or reference gets NaN, not a
score (bert_score writes 0). Not rescaled with a baseline: rescaling is a linear map of the
scores, which changes no correlation (and bert_score has no baseline file for this model).
Neither the paper's model (roberta-large, layer 17) nor its numbers: compare rows, not papers.
"""

from __future__ import annotations

import numpy as np

from geval.judging.encoder import LAYER, MAX_TOKENS, MODEL_NAME, WEIGHTS_SHA256, MiniLM, RemoteMiniLM, minilm

#: What the scores depend on, for the metric's signature (the package versions are added there).
SETTINGS = {"model": MODEL_NAME, "weights": WEIGHTS_SHA256[:12], "layer": LAYER, "idf": "no", "rescale": "no",
            "max": MAX_TOKENS}


class BertScorer:
    """BERTScore with the installed all-MiniLM-L6-v2 (its weights checked)."""

    def __init__(self, model: MiniLM | RemoteMiniLM):
        self.model = model

    def score(self, responses: list[str], references: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(precision, recall, F1) of each response against its reference; NaN where either is
        empty. Each distinct text is encoded once."""
        texts = list(dict.fromkeys([*responses, *references]))
        sequences = self.model.ids(texts)
        vectors = dict(zip(texts, self.model.token_vectors(sequences)))
        weights = {text: np.array([0.0 if i in self.model.special else 1.0 for i in ids])  # [CLS], [SEP]: 0
                   for text, ids in zip(texts, sequences)}
        precision, recall, f1 = (np.full(len(responses), np.nan) for _ in range(3))
        for n, (response, reference) in enumerate(zip(responses, references)):
            on_response, on_reference = weights[response], weights[reference]
            if not on_response.any() or not on_reference.any():
                continue  # nothing but [CLS] [SEP]: an empty text
            cosines = vectors[response] @ vectors[reference].T
            p = float(cosines.max(axis=1) @ on_response) / on_response.sum()
            r = float(cosines.max(axis=0) @ on_reference) / on_reference.sum()
            precision[n], recall[n] = p, r
            f1[n] = 2 * p * r / (p + r) if p + r != 0 else 0.0
        return precision, recall, f1


def scorer() -> BertScorer:
    """The installed model's scorer (the model loaded once per process, about a second)."""
    return BertScorer(minilm())


def bertscore_f1(responses: list[str], references: list[str]) -> np.ndarray:
    """BERTScore F1 of each response against its reference (NaN where either is empty)."""
    return scorer().score(responses, references)[2]
