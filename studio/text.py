"""Text from the data (template labels, answers, verdicts) as Streamlit's Markdown shows it:
every Markdown mark escaped, so that `a~b and c~d` is not struck through and `*` stays a star.
A web address is left as written: Markdown takes it as a link whole, backslashes and all, so an
escaped one would read `127\\.0\\.0\\.1`."""

import re

MARKS = re.compile(r"([\\`*_{}\[\]()#+.!|<>~$-])")
#: A web address as Markdown reads it for a link: up to a space or '<' (any escape in it would show).
URL = re.compile(r"https?://[^\s<]+")


def plain(text: str) -> str:
    """`text` with each Markdown mark escaped, web addresses left as they are: shown exactly as written."""
    shown, start = [], 0
    for url in URL.finditer(text):
        shown += [MARKS.sub(r"\\\1", text[start:url.start()]), url.group()]
        start = url.end()
    return "".join([*shown, MARKS.sub(r"\\\1", text[start:])])
