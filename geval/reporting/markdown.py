"""A report as a Markdown page that prints well (to PDF with pandoc, or from a Markdown viewer):
plain headings, lists, tables and code blocks, no HTML of its own; each figure is named and
linked to the HTML page, where it is drawn. What the HTML page folds (`Details`: per-item
listings, template texts, signatures) is moved to appendices at the end, named where it was; its
folded parts (`Section`) are the page's sections, in order."""

from __future__ import annotations

import re
from collections.abc import Sequence

from geval.reporting.document import Block, Bullets, Code, Details, Document, Figure, Heading, Section, Table, Text
from geval.reporting.tables import markdown_table, markdown_text


def render_markdown(document: Document, plots: str = "") -> str:
    """The page; `plots` is the file name of the HTML page that draws the figures ("" when
    there is none beside it: the figures are then only named)."""
    appendices: list[Details] = []
    lines = _lines(document.blocks, plots, appendices)
    for number, folded in enumerate(appendices, 1):  # grows while it is read: an appendix may fold more
        lines += [f"## A{number}. {markdown_text(folded.title)}", ""]
        lines += _lines(folded.blocks, plots, appendices)
    return "\n".join(lines)


def _lines(blocks: Sequence[Block], plots: str, appendices: list[Details]) -> list[str]:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            lines += ["#" * min(max(block.level, 1), 4) + " " + markdown_text(block.text), ""]
        elif isinstance(block, Text):
            lines += [("*" + markdown_text(block.text) + "*") if block.meta else markdown_text(block.text), ""]
        elif isinstance(block, Bullets):
            lines += [*(f"- {markdown_text(line)}" for line in block.lines), ""]
        elif isinstance(block, Table):
            lines += [markdown_table(block.frame), ""]
        elif isinstance(block, Code):
            fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", block.text)), default=0))
            lines += [fence + block.language, block.text.rstrip("\n"), fence, ""]
        elif isinstance(block, Figure):
            name = markdown_text(block.caption)
            lines += [f"Plot: [{name}]({plots})" if plots else f"Plot: {name} (in the HTML report)", ""]
        elif isinstance(block, Section):  # folded in the HTML page; a section of its own here
            lines += [f"## {markdown_text(block.title)}", "", *_lines(block.blocks, plots, appendices)]
        elif isinstance(block, Details):
            appendices.append(block)
            lines += [f"*{markdown_text(block.title)}: appendix A{len(appendices)}, at the end.*", ""]
    return lines
