"""A report as one self-contained HTML page: plotly.js inline once (works offline), the figures in
the app's colours, every text HTML-escaped. The plotly.js inlined is its cartesian bundle (scatter,
bar, heatmap, pie and the other 2D traces: 1.5 MB instead of 4.8, a page easy to mail) when every
figure draws only those, as the report's do up to `WEBGL_ABOVE` points; else the whole library
plotly.py ships."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from plotly.offline import get_plotlyjs, get_plotlyjs_version

from geval.reporting.document import Block, Bullets, Code, Details, Document, Figure, Heading, Table, Text
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
details { margin: 0.6rem 0; border: 1px solid #ddd; border-radius: 4px; padding: 0.3rem 0.7rem; }
summary { cursor: pointer; color: #0068c9; }
@media print { .plotly-graph-div { break-inside: avoid; } }
"""

#: A plot drawn while folded has no width to take: it is sized again when its part is opened.
_RESIZE_OPENED = ("<script>document.querySelectorAll('details').forEach(d => d.addEventListener('toggle', () => "
                  "d.querySelectorAll('.plotly-graph-div').forEach(p => window.Plotly && Plotly.Plots.resize(p))));"
                  "</script>")


#: plotly.js's cartesian bundle (npm plotly.js-cartesian-dist-min, MIT: its LICENSE beside it), of the version
#: plotly.py draws for, and the trace types it draws (no WebGL).
BUNDLE = Path(__file__).parent / "assets" / "plotly-cartesian.min.js"
BUNDLE_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                           "image", "pie", "scatter", "scatterternary", "violin"})


def _figures(blocks: Sequence[Block]) -> Iterator[Figure]:
    for block in blocks:
        if isinstance(block, Figure):
            yield block
        elif isinstance(block, Details):
            yield from _figures(block.blocks)


def plotly_script(document: Document) -> str:
    """The plotly.js the page inlines ("" when it has no figure): the cartesian bundle when every trace of its
    figures is of `BUNDLE_TRACES` and the bundle is of the version plotly.py draws for, else the whole library."""
    traces = {trace.type for figure in _figures(document.blocks) for trace in figure.figure.data}
    if not traces:
        return ""
    bundle = BUNDLE.read_text(encoding="utf-8") if BUNDLE.is_file() else ""
    version = re.search(r"plotly\.js \(cartesian - minified\) v(\S+)", bundle[:300])
    fits = traces <= BUNDLE_TRACES and version is not None and version.group(1) == get_plotlyjs_version()
    return ("<script type='text/javascript'>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>\n"
            f"<script type='text/javascript'>{bundle if fits else get_plotlyjs()}</script>")


def render_html(document: Document) -> str:
    """The page, one self-contained file: plotly.js inline once (`plotly_script`), nothing loaded from
    beside it or from the network; each `Details` folded (a plot in it is sized when it is opened)."""
    parts = _Blocks(plotly_script(document)).render(document.blocks)
    return ("<!DOCTYPE html>\n<html lang='en'>\n<head><meta charset='utf-8'>"
            f"<title>{html.escape(document.title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(parts) + f"\n{_RESIZE_OPENED}\n</body>\n</html>\n")


class _Blocks:
    """Blocks as HTML, the figures numbered across the page (plotly.js, `script`, goes in with the first)."""

    def __init__(self, script: str):
        self.figures, self.script = 0, script

    def render(self, blocks: Sequence[Block]) -> list[str]:
        return [self.one(block) for block in blocks]

    def one(self, block: Block) -> str:
        if isinstance(block, Heading):
            level = min(max(block.level, 1), 4)
            return f"<h{level}>{html.escape(block.text)}</h{level}>"
        if isinstance(block, Text):
            return f"<p{' class=meta' if block.meta else ''}>{html.escape(block.text)}</p>"
        if isinstance(block, Bullets):
            return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in block.lines) + "</ul>"
        if isinstance(block, Table):
            return html_table(block.frame)
        if isinstance(block, Code):
            return f"<pre><code>{html.escape(block.text)}</code></pre>"
        if isinstance(block, Details):
            return (f"<details><summary>{html.escape(block.title)}</summary>\n" + "\n".join(self.render(block.blocks))
                    + "\n</details>")
        if not isinstance(block, Figure):
            raise TypeError(f"a report has no block of type {type(block).__name__}")
        self.figures += 1
        return (self.script if self.figures == 1 else "") + standalone(block.figure).to_html(
            full_html=False, include_plotlyjs=False, div_id=f"figure-{self.figures}",  # the same page each time
            config={"displaylogo": False})
