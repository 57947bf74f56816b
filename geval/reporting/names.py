"""Readable names for a report's rows: a template by its name and its version's comment, a judge
by its model, "topicalchat-naturalness (shorter steps) · embedded Qwen2.5-Coder 1.5B" where the
app's menus read "topicalchat-naturalness@e91757c96132 (shorter steps) · embedded:
qwen2.5-coder-1.5b-instruct-q4_k_m". The report keeps the exact template version and judge in its
table of rows, and every signature at its end."""

from __future__ import annotations

import hashlib
import json
import re

import pandas as pd

from geval.judging.judgment import judge_name, told_apart
from geval.judging.weights import DEFAULT_MODEL


def judge_title(fields: dict) -> str:
    """A judge as a report names it, from its signature's fields: an embedded model by its title
    ("embedded Qwen2.5-Coder 1.5B") or file name, any other judge as menus name it (`judge_name`)."""
    if fields.get("backend") != "embedded":
        return judge_name(fields)
    known = fields.get("weights") == DEFAULT_MODEL.short_hash and DEFAULT_MODEL.title
    return f"embedded {known or fields.get('model') or 'model'}"


class Names:
    """The readable name of every template version and judge scored on a dataset (`combos`: the
    frame of `Store.combos`; `comments`: `Store.template_comments`). Called on a text, it returns
    the text with each of their exact names made readable; two that would read alike keep what
    tells them apart (the template version, or the judge settings that differ)."""

    def __init__(self, combos: pd.DataFrame, comments: dict[str, str]):
        templates = dict(zip(combos["template"], combos["template_version"]))  # "name@version" -> version
        titles = {label: label.rsplit("@", 1)[0] + (f" ({comments[v]})" if comments.get(v) else "")
                  for label, v in templates.items()}
        alike = [title for title in titles.values() if list(titles.values()).count(title) > 1]
        titles = {label: f"{title}, version {templates[label]}" if title in alike else title
                  for label, title in titles.items()}
        fields = [json.loads(blob or "{}") for blob in combos["signature_json"]]
        judges = [judge_title(f) if "backend" in f else model for f, model in zip(fields, combos["model"])]
        short = [hashlib.sha256(s.encode()).hexdigest()[:8] for s in combos["signature"]]
        readable = told_apart([f"{titles[t]} · {j}" for t, j in zip(combos["template"], judges)], fields, short)
        imported = [f.get("backend") == "imported" for f in fields]  # named by its label: "gpt-4o (imported from …)"
        readable = [label if made_elsewhere else name for label, name, made_elsewhere in
                    zip(combos["label"], readable, imported)]
        for template, version, label, made_elsewhere in zip(combos["template"], combos["template_version"],
                                                            combos["label"], imported):
            if made_elsewhere:
                titles.update({template: label, f"{template}@{version}": label})
        swap = {**titles, **dict(zip(combos["model"], judges)), **dict(zip(combos["label"], readable))}
        self.swap = {exact: name for exact, name in swap.items() if exact != name}
        self._pattern = re.compile("|".join(map(re.escape, sorted(self.swap, key=len, reverse=True)))) \
            if self.swap else None

    def __call__(self, text: str) -> str:
        """`text` with every exact name of a template version, judge or combination made readable."""
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda found: self.swap[found.group(0)], text)
