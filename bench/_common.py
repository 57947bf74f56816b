"""Shared by the bench scripts: the repository on sys.path, the machine, failing loudly, and
synthetic data (a dataset written as JSONL and loaded through the engine, a template, the
scripted judge)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "stubs"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

SHARED_DATA = REPO.parent / "shared" / "data"


def machine() -> str:
    """'N cores, CPU model, Python x.y.z, load a b c' for the figures' header."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return f"nproc {os.cpu_count()}, {model}, Python {platform.python_version()}, load average {load}"


def fail(message: str) -> None:
    """Say why the figure cannot be measured and exit 1."""
    print(f"cannot measure: {message}", file=sys.stderr)
    raise SystemExit(1)


def child(python: str, script: str, *args: str) -> dict:
    """`script --child ARGS` run by interpreter `python` (another venv's build, side by side with this
    one's): the JSON its last line prints, or exit 1 saying why it failed."""
    done = subprocess.run([python, script, "--child", *args], cwd=REPO, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        fail(f"{python}: {done.stderr[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def header(title: str) -> None:
    print(f"# {title}")
    print(f"machine: {machine()}")


def embedded_judge():
    """The embedded judge with its model loaded, or exit 1 saying why it cannot be."""
    import geval

    try:
        judge = geval.make_judge("embedded")
        judge.load()  # its worker started and the model loaded now, outside any timing
    except geval.GevalError as exc:
        fail(f"the embedded judge cannot load its model: {exc}")
    return judge


def topicalchat(groups: int, per_group: int):
    """The first `per_group` responses of the first `groups` dialogues of USR Topical-Chat."""
    import geval

    path = SHARED_DATA / "tc_usr_data.json"
    if not path.is_file():
        fail(f"{path} is not there")
    dataset = geval.load_dataset(path)
    chosen = []
    for group in dataset.groups[:groups]:
        chosen += [item for item in dataset.items if item.group == group][:per_group]
    return chosen


def fresh_context(judge) -> None:
    """Forget what the model's context holds, so the next prompt is evaluated from its first token."""
    judge.forget()


#: What the synthetic datasets' columns hold (a table loaded through a column mapping).
SYNTHETIC_MAPPING = ["response=response", "context=context", "grounding=fact", "system=system", "group=group",
                     "score:Natural=natural"]
SYNTHETIC_TEMPLATE = """+++
name = "bench-naturalness"
task = "Rate the response."
[[aspects]]
name = "Naturalness"
min = 1
max = 3
human = "Natural"
+++
Context:
{{context}}

Fact:
{{fact}}

Response:
{{response}}

Form:
- Naturalness:
"""


def synthetic_dataset(size: int, path: Path, per_group: int = 6, name: str = "synthetic", aspects: int = 1):
    """`size` distinct items, `per_group` to a dialogue, 3 systems round robin and two annotators
    each, written to `path` as JSONL and loaded back through the engine (as the app loads a file);
    `aspects` 2: people scored Engaging too."""
    import geval

    with path.open("w", encoding="utf-8") as out:
        for i in range(size):
            out.write(json.dumps({
                "response": f"response {i}", "fact": f"fact {i // per_group}", "system": f"sys{i % 3}",
                "group": f"g{i // per_group}", "natural": [1 + i % 3, 1 + (i * 7) % 3],
                **({"engaging": [1 + (i * 5) % 3, 1 + (i // 2) % 3]} if aspects == 2 else {}),
                "context": [{"speaker": "A", "text": f"hello number {i // per_group}"},
                            {"speaker": "B", "text": "hi there"}],
            }) + "\n")
    mapping = [*SYNTHETIC_MAPPING, "score:Engaging=engaging"] if aspects == 2 else SYNTHETIC_MAPPING
    return geval.load_dataset(path, mapping=mapping, name=name)


def synthetic_template():
    """The one-aspect template the synthetic datasets are scored with."""
    import geval

    return geval.Template.parse(SYNTHETIC_TEMPLATE, source="bench-naturalness.txt")
