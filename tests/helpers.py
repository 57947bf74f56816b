"""Helpers shared by the test files: small templates, synthetic items, scripted judges, the CLI, and
waits that follow the work's progress."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import geval
from geval.data.items import Item, Turn, make_item
from geval.errors import JudgmentFailed
from geval.judging.backends.scripted import ScriptedJudge, hashed_distribution
from geval.judging.templates import Aspect, parse_template

REPO = Path(__file__).resolve().parent.parent
PROMPTS = REPO / "prompts"

#: How long a wait lets the work it follows show no progress before it fails (GEVAL_TEST_STALL seconds, else
#: 300): a busy machine (load 5-7 on 2 cores) is slow, never still for minutes; the embedded model's load,
#: the longest step that shows nothing, takes under 2 minutes there.
STALL = float(os.environ.get("GEVAL_TEST_STALL") or 300)

#: The Topical-Chat sample cut short for the tests that ask the real embedded judge (`short_topical_chat`).
SHORT_TC = "topicalchat_usr_short"


def short_topical_chat(folder: Path, responses: int | None = None) -> Path:
    """The bundled Topical-Chat sample, each conversation cut to its last 2 turns and its fact to its first
    200 characters (with its first `responses` of each, all by default), written as folder/SHORT_TC.json: the
    same kind of items and prompts, each under half as long, for a slow CPU's prefill is most of a judgment
    (24 s for the first of the sample's prompts on an Intel Xeon VM, 14 s for the short one, model load included)."""
    dialogues = json.loads((REPO / "data" / "topicalchat_usr_sample.json").read_text())
    path = folder / f"{SHORT_TC}.json"
    last_two = ["\n".join(dialogue["context"].strip().split("\n")[-2:]) + "\n\n" for dialogue in dialogues]
    path.write_text(json.dumps([{**dialogue, "context": context, "fact": dialogue["fact"][:200],
                                 "responses": dialogue["responses"][:responses]}
                                for dialogue, context in zip(dialogues, last_two)]))
    return path


#: One item with every placeholder filled.
FULL_ITEM = make_item("synthetic", "turn", [Turn("A", "hi"), Turn("B", "hello")], "a reply", grounding="a fact")


def template_text(
    name: str = "test-naturalness",
    aspects: tuple[tuple, ...] = (("Naturalness", 1, 3, "Natural"),),
    body: str | None = None,
    steps: str | None = None,
    extra_header: str = "",
) -> str:
    """A template file's text: a TOML header with `aspects` (name, min, max[, human]), then `body`."""
    header = [f'name = "{name}"', 'task = "Rate the response."']
    if steps is not None:
        header.append(f'steps = """{steps}"""')
    if extra_header:
        header.append(extra_header)
    for spec in aspects:
        header += ["[[aspects]]", f'name = "{spec[0]}"', f"min = {spec[1]}", f"max = {spec[2]}"]
        if len(spec) > 3:
            header.append(f'human = "{spec[3]}"')
    if body is None:
        form = "\n".join(f"- {spec[0]}:" for spec in aspects)
        body = f"Context:\n{{{{context}}}}\n\nFact:\n{{{{fact}}}}\n\nResponse:\n{{{{response}}}}\n\nForm:\n{form}"
    return "+++\n" + "\n".join(header) + "\n+++\n" + body + "\n"


def make_template(**options) -> geval.Template:
    """`template_text(**options)`, parsed."""
    return parse_template(template_text(**options), source=f"{options.get('name', 'test-naturalness')}.txt")


def make_items(n: int = 10, dataset: str = "synthetic", per_group: int = 2, systems: int = 3,
               human: str = "Natural") -> list[Item]:
    """`n` distinct turn-level items, `per_group` to a group, systems assigned round robin."""
    items = []
    for i in range(n):
        items.append(make_item(
            dataset=dataset, level="turn",
            context=[Turn("A", f"hello number {i // per_group}"), Turn("B", "hi there")],
            response=f"response {i}", grounding=f"fact {i // per_group}",
            system=f"sys{i % systems}", group=f"g{i // per_group}",
            human={human: (float(1 + i % 3), float(1 + (i * 7) % 3))},
        ))
    return items


def item_number(prompt: str) -> int:
    """The i of make_items' 'response i' in a rendered prompt."""
    return int(prompt.split("Response:\n")[1].split()[1])


def failing_for(bad: set[int], message: str = "rate limited (stub)", error: type[JudgmentFailed] = JudgmentFailed):
    """A ScriptedJudge script raising `error` for the items numbered in `bad`."""
    def script(prompt: str, aspect: Aspect):
        if item_number(prompt) in bad:
            raise error(message)
        return hashed_distribution(prompt, aspect)
    return script


def scripted(script=hashed_distribution, name: str = "hashed") -> ScriptedJudge:
    """A fresh ScriptedJudge (its `calls` list counts the judge calls)."""
    return ScriptedJudge(script, name)


def scored_verdicts(folder: Path, n: int) -> geval.Dataset:
    """A table of `n` replies labeled pass and fail in turn, stored as dataset "verdicts" in `folder`/store.sqlite
    and scored there by the scripted judge on a 0-1 "Verdict" compared with it."""
    table = folder / "verdicts.csv"
    table.write_text("context,reply,verdict\n" + "".join(f"hello {k},reply {k},{'pass' if k % 2 else 'fail'}\n"
                                                           for k in range(n)))
    store = geval.Store(folder / "store.sqlite")
    dataset = geval.load_dataset(table, mapping=["response=reply", "context=context", "score:verdict=verdict"],
                                 store=store)
    template = make_template(aspects=(("Verdict", 0, 1, "verdict"),),
                             body="Response:\n{{response}}\n\nForm:\n- Verdict:")  # scored: no {{fact}} to fill
    geval.score(store, dataset.items, template, scripted(), dataset.name)
    store.close()
    return dataset


def run_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m geval ARGS` in the repository, capturing text output."""
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "geval", *args], cwd=REPO, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def store_bytes(path: Path) -> bytes:
    """Every byte of an SQLite store on disk, its WAL and shared-memory files included."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


#: The column mapping of `write_own_table`'s file.
OWN_MAPPING = ["response=response", "context=context", "grounding=fact", "system=system", "group=dialogue",
               "score:Natural=natural"]


def write_own_table(path: Path, n: int = 12) -> Path:
    """A user's own CSV (columns context, fact, response, system, dialogue, natural) made from the
    items of the bundled Topical-Chat sample (every fifth): a dataset that only a column mapping reads."""
    import csv

    items = geval.load_dataset(REPO / "data" / "topicalchat_usr_sample.json").items[::5][:n]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["context", "fact", "response", "system", "dialogue", "natural"])
        for item in items:
            writer.writerow(["\n".join(turn.render() for turn in item.context), item.grounding, item.response,
                             item.system, item.group, item.human_mean("Natural")])
    return path


def scored_own_table(store, folder: Path):
    """An uploaded-style table ("mine", written into `folder`, read by OWN_MAPPING) in `store`,
    scored by the scripted judge with the naturalness template's file version and an edited
    version saved with a comment. Returns (dataset, file version, edited version)."""
    dataset = geval.load_dataset(write_own_table(folder / "mine.csv"), mapping=OWN_MAPPING, store=store)
    file_version = geval.Template.load("topicalchat-naturalness")
    edited = geval.Template.parse(file_version.text.replace("naturally written", "natural and fluent"),
                                  source="editor")
    store.save_template(edited, comment="fluent wording")
    for template in (file_version, edited):
        geval.score(store, dataset.items, template, scripted(), dataset.name)
    return dataset, file_version, edited


def wait_while_progressing(done: Callable[[], bool], progress: Callable[[], object], what: str,
                           stall: float | None = None, poll: float = 0.2) -> None:
    """Wait until `done()`, for as long as the work moves: fail only when `progress()` (a count of
    what is done, a line the work writes) has not changed for `stall` seconds (default STALL),
    however long the work takes in all on a slow or busy machine."""
    stall = STALL if stall is None else stall
    last, moved = progress(), time.monotonic()
    while not done():
        time.sleep(poll)
        now = progress()
        if now != last:
            last, moved = now, time.monotonic()
        elif time.monotonic() - moved > stall:
            raise AssertionError(f"{what}: no progress for {stall:g} s (still at {repr(last)[-2000:]})")


def write_pairs(path: Path, rows: list[dict]) -> Path:
    """`rows` as a file of pairs: JSONL for a .jsonl path, else CSV."""
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        import csv
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return path


def pair_rows(n_questions: int = 12, per: int = 2) -> list[dict]:
    """A file of pairs' rows (geval.data.layouts.pairs): a good and a poor answer to each of `n_questions`
    questions, `per` times, the good one A in half of them; two annotators who agree except on every fifth
    pair, where the second says tie."""
    rows = []
    for q in range(n_questions):
        for k in range(per):
            good_first = (q + k) % 2 == 0
            good, bad = f"a good answer {q}.{k}", f"a poor answer {q}.{k}"
            right = "A" if good_first else "B"
            rows.append({"question_id": f"q{q}", "context": f"User: question {q}",
                         "response_a": good if good_first else bad, "response_b": bad if good_first else good,
                         "model_a": "strong" if good_first else "weak", "model_b": "weak" if good_first else "strong",
                         "preference:ann1": right, "preference:ann2": "tie" if (q * per + k) % 5 == 0 else right})
    return rows


def plotly_array(value) -> np.ndarray:
    """A plotly JSON array: a list, or typed-array bytes {"dtype": ..., "bdata": base64}."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)
