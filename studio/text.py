"""Text from the data (template labels, answers, verdicts) as Streamlit's Markdown shows it:
every Markdown mark escaped, so that `a~b and c~d` is not struck through and `*` stays a star.
A web address is left as written: Markdown takes it as a link whole, backslashes and all, so an
escaped one would read `127\\.0\\.0\\.1`. The engine's advice marks a command as code (`python -m geval ...`):
`with_code` keeps those spans."""

import re

#: A span the engine marks as code: `...`.
CODE = re.compile(r"`[^`\n]+`")
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


def with_code(text: str) -> str:
    """`plain`, but a span in backticks (a command the engine's advice names) stays code."""
    shown, start = [], 0
    for code in CODE.finditer(text):
        shown += [plain(text[start:code.start()]), code.group()]
        start = code.end()
    return "".join([*shown, plain(text[start:])])
