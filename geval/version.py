"""The package version, written last in every judge signature, and the versions installed beside it."""

from collections.abc import Iterable
from importlib import metadata

__version__ = "0.2.0"


def installed_versions(packages: Iterable[str]) -> list[str]:
    """"name version" of each of `packages` that is installed, in their order (the others left out)."""
    found = []
    for package in packages:
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            pass
    return found
