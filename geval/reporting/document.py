"""A report as a list of blocks (headings, text, lists, tables, code, figures, and folded parts),
written once by `geval.reporting.dataset_report` and rendered by `html` (one self-contained page)
and `markdown` (a PDF-friendly page): the same content in both."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class Heading:
    """A section title; `level` 1 is the page's title."""

    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text; `meta` paragraphs are printed small (dates, versions)."""

    text: str
    meta: bool = False


@dataclass(frozen=True)
class Bullets:
    """A list of plain-text lines."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table; every cell is shown as text. The `verbatim` columns say exactly what a row is (a
    template version, a judge's full name) and keep their text when the document's names are made
    readable (`Document.renamed`)."""

    frame: pd.DataFrame
    verbatim: tuple[str, ...] = ()


@dataclass(frozen=True)
class Code:
    """Text shown as it is, in a fixed-width block: a signature, a template, a diff."""

    text: str
    language: str = ""


@dataclass(frozen=True)
class Figure:
    """A plotly figure and what it shows (the Markdown page names it, and links to the HTML page)."""

    figure: object
    caption: str


@dataclass(frozen=True)
class Details:
    """Blocks a reader opens when wanted (per-item listings, template texts, signatures): folded
    under `title` in the HTML page, moved to the end of the Markdown page."""

    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Section:
    """A part of the report under its title, an appendix a reader opens on demand: folded in the HTML
    page (its figures drawn when it is opened), a section under its heading in the Markdown page."""

    title: str
    blocks: tuple[Block, ...]


Block = Heading | Text | Bullets | Table | Code | Figure | Details | Section


def sections(blocks: list[Block]) -> list[Block]:
    """`blocks` with each top-level part (a level-2 heading and what follows it, up to the next) made a
    `Section` under the heading's text; what comes before the first such heading is left as it is."""
    out: list[Block] = []
    title, inside = None, []
    for block in [*blocks, Heading("", 2)]:
        if isinstance(block, Heading) and block.level == 2:
            if title is not None:
                out.append(Section(title, tuple(inside)))
            title, inside = block.text, []
        elif title is None:
            out.append(block)
        else:
            inside.append(block)
    return out


@dataclass
class Document:
    """A report's blocks, in reading order."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> None:
        """Append blocks."""
        self.blocks.extend(blocks)

    def renamed(self, rename: Callable[[str], str]) -> Document:
        """The same document with `rename` applied to all that is read as words: headings, text,
        lists, table cells and headers (not a table's `verbatim` columns), figure captions and
        series names; never to code (signatures, templates, diffs keep their exact text)."""
        return Document(rename(self.title), [_renamed(block, rename) for block in self.blocks])


def _renamed(block: Block, rename: Callable[[str], str]) -> Block:
    if isinstance(block, (Heading, Text)):
        return dataclasses.replace(block, text=rename(block.text))
    if isinstance(block, Bullets):
        return Bullets(tuple(map(rename, block.lines)))
    if isinstance(block, Table):
        frame = block.frame.copy()
        for column in frame.columns:
            if column not in block.verbatim:
                frame[column] = [rename(value) if isinstance(value, str) else value for value in frame[column]]
        return dataclasses.replace(block, frame=frame.rename(columns=lambda name: rename(str(name))))
    if isinstance(block, Figure):
        block.figure.for_each_trace(lambda trace: trace.update(name=rename(trace.name)) if trace.name else None)
        return dataclasses.replace(block, caption=rename(block.caption))
    if isinstance(block, (Details, Section)):
        return type(block)(rename(block.title), tuple(_renamed(inner, rename) for inner in block.blocks))
    return block
