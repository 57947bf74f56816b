"""Reading a user's text file, with errors that name the file (and the line of a bad byte)."""

from __future__ import annotations

from pathlib import Path

from geval.errors import GevalError


def read_utf8(path: Path, error: type[GevalError], missing: str, encoding: str = "utf-8") -> str:
    """The text of `path`. A missing file, a folder, an unreadable file or bytes that are not
    UTF-8 raise `error` with one line naming the file (and the line of the first bad byte)."""
    try:
        if path.is_dir():
            raise error(f"{path}: is a folder; name a file")
        if not path.is_file():
            raise error(f"{path}: {missing}")
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 text (byte {exc.start}); re-save the file as UTF-8") from None
