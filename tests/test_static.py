"""No undefined name in the project's code: pyflakes reads every module of the engine, the app's glue,
its pages and the benches (a merge once dropped an import that only the queues' agreement reached, and
every test but theirs passed)."""

from __future__ import annotations

from pathlib import Path

from pyflakes import api, messages, reporter

ROOT = Path(__file__).resolve().parent.parent


class Undefined(reporter.Reporter):
    """Keeps pyflakes' undefined names, nothing else."""

    def __init__(self):
        self.found: list[str] = []

    def flake(self, message) -> None:
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)):
            self.found.append(str(message))

    def unexpectedError(self, filename, msg) -> None:
        self.found.append(f"{filename}: {msg}")

    def syntaxError(self, filename, msg, lineno, offset, text) -> None:
        self.found.append(f"{filename}:{lineno}: {msg}")


def test_no_module_uses_a_name_it_does_not_define_or_import():
    found = Undefined()
    paths = [ROOT / "app.py", *(path for folder in ("geval", "studio", "views", "bench")
                                 for path in sorted((ROOT / folder).rglob("*.py")))]
    for path in paths:
        api.checkPath(str(path), found)
    assert len(paths) > 100 and not found.found, found.found
