"""A report as a list of blocks (headings, text, lists, tables, code, figures), written once by
`geval.reporting.dataset_report` and rendered by `html` (one self-contained page) and
`markdown` (a PDF-friendly page): the same content in both."""

from __future__ import annotations

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
    """A table; every cell is shown as text."""

    frame: pd.DataFrame


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


Block = Heading | Text | Bullets | Table | Code | Figure


@dataclass
class Document:
    """A report's blocks, in reading order."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> None:
        """Append blocks."""
        self.blocks.extend(blocks)
