"""Candidate ways of asking the judge about one aspect, made from templates by editing their text.

| variant | how it is made |
|---|---|
| the starting template, and every other template given | one aspect kept (`only_aspect`): the others' `[[aspects]]` tables and form lines are removed; named `<name>~<aspect>` |
| few-shot | an `[examples]` table (k, select, seed) in the header and an {{examples}} block before the first text the body shows (`with_examples`); named `<name>~k<k>-<select>` |
| argmax read | the same judgments read as their most probable score instead of the weighted mean (no new calls) |
| ensemble | the mean of two candidates' 0-1 scores (no new calls) |

Each edited text is parsed again, so a variant is a template like any other: it has a version,
its judgments are stored under it, and it can be saved and opened on the Prompts page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from geval.data.items import PLACEHOLDERS
from geval.errors import TemplateError
from geval.judging.aspects import PLACEHOLDER, VARIANT
from geval.judging.templates import Template, form_label, parse_template

#: What the examples block says before and after them.
EXAMPLES_BLOCK = "Here are examples rated by people, with the mean of their scores:\n\n{{examples}}\n\nNow the one to rate.\n\n"


@dataclass(frozen=True)
class Candidate:
    """One way of asking: a template (one aspect) read as `read` ("wmean" or "argmax"), or an
    ensemble of other candidates (`members`, by name; no template of its own)."""

    name: str
    template: Template | None = None
    read: str = "wmean"
    members: tuple[str, ...] = field(default=())

    @property
    def costs_calls(self) -> bool:
        """True when scoring it asks the judge (a template read as the weighted mean)."""
        return self.template is not None and self.read == "wmean"


def only_aspect(template: Template, aspect_key: str) -> Template:
    """`template` asking for one aspect only (a new text, hence a new version); itself when it has one."""
    aspect = template.aspect(aspect_key)
    if len(template.aspects) == 1:
        return template
    header, body = _split(template)
    blocks, kept, skipping = [], [], False
    for line in header:
        if line.strip() == "[[aspects]]":
            blocks.append([line])
            skipping = False
            continue
        if line.strip().startswith("[") and not line.strip().startswith("[[aspects]]"):
            skipping = True  # another table ([examples]): back to plain lines
        (blocks[-1] if blocks and not skipping else kept).append(line)
    mine = next(block for block in blocks if _block_name(block) == aspect.name)
    first_table = next((i for i, line in enumerate(kept) if line.strip().startswith("[")), len(kept))
    lines = [*kept[:first_table], *mine, *kept[first_table:]]
    others = {a.key for a in template.aspects} - {aspect.key}  # their form lines go with them
    body = "\n".join(line for line in body.split("\n") if (form_label(line) or "").lower() not in others)
    return _reparse(template, lines, body, f"{aspect.name} only", aspect.key)


def with_examples(template: Template, k: int, select: str = "stratified", seed: int = 0) -> Template:
    """`template` with k scored examples of other groups shown before the text it judges."""
    if template.examples is not None:
        raise TemplateError(f"{template.source} shows examples already")
    table = ["[examples]", f"k = {k}", f'select = "{select}"', f"seed = {seed}"]
    return with_block(template, EXAMPLES_BLOCK, f"{k} examples, {select}", f"k{k}-{select}", table)


def with_block(template: Template, block: str, what: str, suffix: str, table: list[str] = ()) -> Template:
    """`template` with the text `block` shown before the text of the item it judges (above that text's
    title, "Conversation History:"), and `table` added to its header; named `<name>~<suffix>`, described
    as `what`. TemplateError when the body shows no text of the item."""
    header, body = _split(template)
    first = next((m for m in PLACEHOLDER.finditer(body) if m.group(1).lower() in PLACEHOLDERS), None)
    if first is None:
        raise TemplateError(f"{template.source}: no text of the item in the body to put {what} before")
    start = body.rfind("\n", 0, first.start()) + 1  # the placeholder's line
    before = body.rfind("\n", 0, max(start - 1, 0)) + 1  # the line above it: its title ("Conversation History:")
    at = before if body[before:start].strip().endswith(":") else start
    return _reparse(template, [*header, *table], body[:at] + block + body[at:], what, suffix)


def _split(template: Template) -> tuple[list[str], str]:
    lines = template.text.split("\n")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    return lines[1:end], "\n".join(lines[end + 1:])


def _block_name(block: list[str]) -> str:
    found = next((re.match(r'\s*name\s*=\s*"(.*)"\s*$', line) for line in block if re.match(r"\s*name\s*=", line)), None)
    return found.group(1) if found else ""


def _reparse(template: Template, header: list[str], body: str, what: str, suffix: str) -> Template:
    """The edited text, parsed, named `<name>~<suffix>` so that it never reads as the original
    (a leaderboard puts one-aspect templates named alike in one row)."""
    name = f"{template.name}{VARIANT}{suffix}"
    header = [f'name = "{name}"' if re.match(r"\s*name\s*=", line) and not _in_aspect(header, i) else line
              for i, line in enumerate(header)]
    text = "\n".join(["+++", f"# {template.label}, {what} (a variant made by geval tune)", *header, "+++", body])
    return parse_template(text, source=f"{name}.txt")


def _in_aspect(header: list[str], index: int) -> bool:
    """Whether header line `index` is inside a table (an aspect's own name, not the template's)."""
    return any(line.strip().startswith("[") for line in header[:index])
