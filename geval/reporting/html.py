"""A report as one self-contained HTML page: plotly.js inline once (works offline), the figures in
the app's colours, every text HTML-escaped."""

from __future__ import annotations

import html

from geval.reporting.document import Bullets, Code, Document, Figure, Heading, Table, Text
from geval.reporting.figures import standalone
from geval.reporting.tables import html_table

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; padding: 0 1rem; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } code, pre { font-family: ui-monospace, monospace; font-size: 0.85rem; }
pre { white-space: pre-wrap; word-break: break-word; background: #f7f7f7; padding: 0.5rem; }
.meta { color: #666; }
@media print { .plotly-graph-div { break-inside: avoid; } }
"""


def render_html(document: Document) -> str:
    """The page, one self-contained file: plotly.js inline once, nothing loaded from beside it or
    from the network."""
    parts: list[str] = []
    figures = 0
    for block in document.blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 1), 4)
            parts.append(f"<h{level}>{html.escape(block.text)}</h{level}>")
        elif isinstance(block, Text):
            parts.append(f"<p{' class=meta' if block.meta else ''}>{html.escape(block.text)}</p>")
        elif isinstance(block, Bullets):
            parts.append("<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in block.lines) + "</ul>")
        elif isinstance(block, Table):
            parts.append(html_table(block.frame))
        elif isinstance(block, Code):
            parts.append(f"<pre><code>{html.escape(block.text)}</code></pre>")
        elif isinstance(block, Figure):
            parts.append(standalone(block.figure).to_html(full_html=False, include_plotlyjs=not figures,
                                                          div_id=f"figure-{figures + 1}",  # the same page each time
                                                          config={"displaylogo": False}))
            figures += 1
    return ("<!DOCTYPE html>\n<html lang='en'>\n<head><meta charset='utf-8'>"
            f"<title>{html.escape(document.title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body>\n</html>\n")
