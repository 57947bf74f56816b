"""Where bundled samples, shared datasets and templates are found."""

from __future__ import annotations

import os
from pathlib import Path

from geval.errors import DatasetError, TemplateError
from geval.templates import Template, list_templates, load_template

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "data"
PROMPTS_DIR = Path(os.environ.get("GEVAL_PROMPTS_DIR") or ROOT / "prompts")
SHARED_DATA_DIR = Path(os.environ.get("GEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data")
DATA_SUFFIXES = {".json", ".jsonl", ".csv"}


def known_datasets() -> dict[str, Path]:
    """Bundled samples (data/), then the full public datasets if ../shared/data exists."""
    found: dict[str, Path] = {}
    for folder in (DATA_DIR, SHARED_DATA_DIR):
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if path.suffix in DATA_SUFFIXES and not path.name.startswith("."):
                    found.setdefault(path.stem, path)
    return found


def resolve_dataset(name_or_path: str) -> Path:
    """A dataset file from a path, or from the name of a bundled or shared one."""
    path = Path(name_or_path)
    if path.exists():
        return path
    known = known_datasets()
    if name_or_path in known:
        return known[name_or_path]
    raise DatasetError(f"{name_or_path}: no such file or known dataset; known: {', '.join(known) or 'none'}")


def templates() -> list[Template]:
    """Every template in the prompts folder."""
    return list_templates(PROMPTS_DIR)


def resolve_template(name_or_path: str) -> Template:
    """A template from a file path, or by its name (or file stem) in the prompts folder."""
    path = Path(name_or_path)
    if path.is_file():
        return load_template(path)
    candidate = PROMPTS_DIR / f"{name_or_path}.txt"
    if candidate.is_file():
        return load_template(candidate)
    for template in templates():
        if template.name == name_or_path:
            return template
    names = ", ".join(t.name for t in templates())
    raise TemplateError(f"{name_or_path}: no such template file or name; known: {names}")
