"""Text from the data (template labels, answers, verdicts) as Streamlit's Markdown shows it:
every Markdown mark escaped, so that `a~b and c~d` is not struck through and `*` stays a star."""

import re

MARKS = re.compile(r"([\\`*_{}\[\]()#+.!|<>~$-])")


def plain(text: str) -> str:
    """`text` with each Markdown mark escaped: shown exactly as written."""
    return MARKS.sub(r"\\\1", text)
