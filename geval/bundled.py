"""Where the bundled folders are (`data/` samples, `prompts/` templates): beside the package in
a checkout, else where `pip install` put them (the wheel ships them as data files under
share/geval-studio/, read back from the installed distribution's own file list, whatever the
install scheme: a virtual environment, --user, a system prefix)."""

from __future__ import annotations

from functools import cache
from importlib import metadata
from pathlib import Path

#: The repository's root when running from a checkout (the folder that holds geval/).
CHECKOUT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "geval-studio"
SHARE = "share/geval-studio"


def bundled_dir(name: str) -> Path:
    """The folder `name` ("data" or "prompts"): the checkout's when there is one, else the
    installed package's. A folder found nowhere is still returned at the checkout's place, so
    that an error names where it was looked for."""
    own = CHECKOUT / name
    if own.is_dir():
        return own
    return _installed().get(name, own)


@cache
def _installed() -> dict[str, Path]:
    """The folders under share/geval-studio/ that the installed distribution lists, by name."""
    try:
        files = metadata.distribution(DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, Path] = {}
    for file in files:
        text = file.as_posix()
        if f"{SHARE}/" in text:
            folder = text.split(f"{SHARE}/", 1)[1].split("/", 1)[0]
            found.setdefault(folder, Path(file.locate()).resolve().parent)
    return found
