"""A report as one self-contained HTML page: plotly.js inline once (works offline), the figures in
the app's colours, every text HTML-escaped. The plotly.js inlined is its cartesian bundle (scatter,
bar, heatmap, pie and the other 2D traces: 1.5 MB instead of 4.8, a page easy to mail) when every
figure draws only those, as the report's do up to `WEBGL_ABOVE` points; else the whole library
plotly.py ships.

A page opens fast whatever it holds: each figure goes in as its data (JSON, without a template:
the page's one template, plotly's white one in the app's colours, is set on each as it is drawn)
and is drawn only when the reader sees it, when the parts folded around it (`Section`, `Details`)
are opened; a figure outside any is drawn as the page loads.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import plotly.io as pio
from plotly.io.json import to_json_plotly
from plotly.offline import get_plotlyjs, get_plotlyjs_version

from geval.reporting.document import Block, Bullets, Code, Details, Document, Figure, Heading, Section, Table, Text
from geval.reporting.figures import COLOURS
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
details.section { border: none; border-top: 1px solid #ddd; border-radius: 0; padding: 0; margin: 0; }
details.section > summary { padding: 0.4rem 0; }
details.section > summary > h2 { display: inline; border: none; font-size: 1.25rem; margin: 0; }
details.section[open] > summary { margin-bottom: 0.5rem; }
.figure { width: 100%; min-height: 2rem; }
@media print { .plotly-graph-div { break-inside: avoid; } }
"""

#: Draws each figure once it can be seen (no part folded around it), and sizes again those drawn when their
#: part is opened again; reads each one's data from the JSON beside it, with the page's one template.
_DRAW = """<script>
(function () {
  const template = JSON.parse(document.getElementById('plotly-template').textContent);
  function draw(root) {
    root.querySelectorAll('.figure').forEach(function (div) {
      if (div.closest('details:not([open])')) return;
      if (div.dataset.drawn) { Plotly.Plots.resize(div); return; }
      const spec = JSON.parse(document.getElementById(div.id + '-data').textContent);
      spec.layout.template = template;
      Plotly.newPlot(div, spec.data, spec.layout, {displaylogo: false, responsive: true});
      div.dataset.drawn = '1';
    });
  }
  document.querySelectorAll('details').forEach(function (d) {
    d.addEventListener('toggle', function () { if (d.open) draw(d); });
  });
  draw(document);
})();
</script>"""


#: plotly.js's cartesian bundle (npm plotly.js-cartesian-dist-min, MIT: its LICENSE beside it), of the version
#: plotly.py draws for, and the trace types it draws (no WebGL).
BUNDLE = Path(__file__).parent / "assets" / "plotly-cartesian.min.js"
BUNDLE_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                           "image", "pie", "scatter", "scatterternary", "violin"})


def _figures(blocks: Sequence[Block]) -> Iterator[Figure]:
    for block in blocks:
        if isinstance(block, Figure):
            yield block
        elif isinstance(block, (Details, Section)):
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
    beside it or from the network; each `Section` and `Details` folded, a figure drawn when it is seen."""
    parts = _Blocks().render(document.blocks)
    script = plotly_script(document)
    drawing = (f"{script}\n<script type='application/json' id='plotly-template'>{_json(_template())}</script>\n{_DRAW}"
               if script else "")
    return ("<!DOCTYPE html>\n<html lang='en'>\n<head><meta charset='utf-8'>"
            f"<title>{html.escape(document.title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(parts) + f"\n{drawing}\n</body>\n</html>\n")


def _template() -> dict:
    """The one template of the page's figures: plotly's white one, in the app's colours (what
    `geval.reporting.figures.standalone` gives a figure)."""
    template = pio.templates["plotly_white"].to_plotly_json()
    template["layout"]["colorway"] = list(COLOURS)
    return template


def _json(value) -> str:
    """`value` as JSON that can sit in a <script> element: plotly's encoder writes <, > and / as \\u escapes,
    so no text of a dataset ends it early; numbers as typed arrays."""
    return to_json_plotly(value)


def figure_data(figure) -> dict:
    """A figure as the page holds it: its data and layout (numbers as typed arrays), without a template
    (the page's own is set on it when it is drawn)."""
    data = figure.to_dict()
    data["layout"].pop("template", None)
    return {"data": data["data"], "layout": data["layout"]}


class _Blocks:
    """Blocks as HTML, the figures numbered across the page: each a place and its data beside it."""

    def __init__(self):
        self.figures = 0

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
        if isinstance(block, Section):
            return (f"<details class=section><summary><h2>{html.escape(block.title)}</h2></summary>\n"
                    + "\n".join(self.render(block.blocks)) + "\n</details>")
        if isinstance(block, Details):
            return (f"<details><summary>{html.escape(block.title)}</summary>\n" + "\n".join(self.render(block.blocks))
                    + "\n</details>")
        if not isinstance(block, Figure):
            raise TypeError(f"a report has no block of type {type(block).__name__}")
        self.figures += 1
        spec = figure_data(block.figure)
        height = spec["layout"].get("height") or 450
        name = f"figure-{self.figures}"  # the same page each time
        return (f"<div class='figure plotly-graph-div' id='{name}' style='height:{int(height)}px' "
                f"aria-label='{html.escape(block.caption, quote=True)}'></div>"
                f"<script type='application/json' id='{name}-data'>{_json(spec)}</script>")
