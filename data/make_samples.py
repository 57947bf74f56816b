"""Rebuild the small bundled dataset samples in this folder from the full public files.

The app ships these samples so that it works without ../shared/data. Each sample keeps
the ORIGINAL layout of its source file (same fields, same nesting, records in file order),
so the loaders in geval.loaders auto-detect a sample exactly as they detect the full file.

    sample                        source (in ../shared/data)   what is kept
    topicalchat_usr_sample.json   tc_usr_data.json             the first 10 contexts, all 6 responses each
    personachat_usr_sample.json   pc_usr_data.json             the first 10 contexts, all 5 responses each
    fed_sample.json               fed_data.json                the first 20 dialogue-level records, plus every
                                                               turn-level record whose context is a prefix of
                                                               one of those dialogues' context (file order)
    summeval_sample.json          summeval.json                the first 8 systems (file order) for the first
                                                               10 doc_ids: 10 documents, so that the
                                                               per-document protocol has enough groups
    dstc9_sample.json             dstc9_data.json              the first 20 dialogues of each of the 11 systems
                                                               (dict of parallel lists, file order)
    summeval_sample_experts.json  alttest/summeval/            the three experts' own scores of the summaries
                                  human_annotations.json       of summeval_sample.json (the loader joins them)
    judges/summeval_sample_llms   alttest/summeval/            six LLMs' scores of those summaries, a file for
    .json                         llm_annotations.json         `geval judge import` (not a dataset: in judges/)

Usage, from the repository root:

    python3 data/make_samples.py                          # reads ../shared/data, writes data/
    python3 data/make_samples.py --source DIR --out DIR

The output is deterministic: no randomness, records in source order, keys in source order,
JSON written ASCII-escaped like the source files. Every sample must stay under 400 KB.
Only the standard library is needed; if the geval package is importable, each written
sample is also loaded with geval.loaders.load_dataset and its summary line printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parent.parent / "shared" / "data"  # /work/main/data -> /work/shared/data
MAX_BYTES = 400 * 1024

N_USR_CONTEXTS = 10
N_FED_DIALOGUES = 20
N_SUMMEVAL_DOCS = 10
N_SUMMEVAL_SYSTEMS = 8
N_DSTC9_PER_SYSTEM = 20


def usr_sample(records: list[dict], n_contexts: int = N_USR_CONTEXTS) -> list[dict]:
    """The first `n_contexts` USR records (each keeps all of its scored responses)."""
    return records[:n_contexts]


def fed_sample(records: list[dict], n_dialogues: int = N_FED_DIALOGUES) -> list[dict]:
    """The first `n_dialogues` dialogue-level records (those without a 'response') and every
    turn-level record whose context begins one of their contexts, in file order."""
    dialogues = [r for r in records if "response" not in r][:n_dialogues]
    contexts = [d["context"] for d in dialogues]
    chosen = {id(d) for d in dialogues}
    return [
        r
        for r in records
        if id(r) in chosen or ("response" in r and any(c.startswith(r["context"]) for c in contexts))
    ]


def summeval_sample(rows: list[dict], n_docs: int = N_SUMMEVAL_DOCS, n_systems: int = N_SUMMEVAL_SYSTEMS) -> list[dict]:
    """The rows of the first `n_systems` system_ids for the first `n_docs` doc_ids (both in
    order of first appearance), in file order."""
    docs = set(list(dict.fromkeys(row["doc_id"] for row in rows))[:n_docs])
    systems = set(list(dict.fromkeys(row["system_id"] for row in rows))[:n_systems])
    return [row for row in rows if row["doc_id"] in docs and row["system_id"] in systems]


def summeval_release_sample(data: dict, source: Path) -> dict:
    """The scores of the alternative annotator test's SummEval release, experts' or LLMs' ({who:
    {"<doc>__<system>__<aspect>": score}}), of the summaries that `summeval_sample` keeps, in file order."""
    rows = summeval_sample(json.loads((source / "summeval.json").read_text("utf-8")))
    kept = {f"{row['doc_id']}__{row['system_id']}" for row in rows}
    return {expert: {instance: score for instance, score in scores.items() if instance.rsplit("__", 1)[0] in kept}
            for expert, scores in data.items()}


def dstc9_sample(data: dict, per_system: int = N_DSTC9_PER_SYSTEM) -> dict:
    """The dict of parallel lists cut to the first `per_system` dialogues of each system
    (by the 'models' list), keeping file order and every list of the source."""
    seen: dict[str, int] = {}
    keep = []
    for index, model in enumerate(data["models"]):
        seen[model] = seen.get(model, 0) + 1
        if seen[model] <= per_system:
            keep.append(index)
    return {key: [values[i] for i in keep] for key, values in data.items()}


SAMPLES = [
    # (output file, source file, function, json indent as in the source)
    ("topicalchat_usr_sample.json", "tc_usr_data.json", usr_sample, 2),
    ("personachat_usr_sample.json", "pc_usr_data.json", usr_sample, 2),
    ("fed_sample.json", "fed_data.json", fed_sample, 2),
    ("summeval_sample.json", "summeval.json", summeval_sample, 1),
    ("dstc9_sample.json", "dstc9_data.json", dstc9_sample, None),
    ("summeval_sample_experts.json", "alttest/summeval/human_annotations.json", summeval_release_sample, None),
    ("judges/summeval_sample_llms.json", "alttest/summeval/llm_annotations.json", summeval_release_sample, None),
]


def build(source: Path, out: Path) -> list[Path]:
    """Write every sample from `source` into `out`; returns the written paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for target_name, source_name, cut, indent in SAMPLES:
        data = json.loads((source / source_name).read_text("utf-8"))
        kept = cut(data, source) if cut is summeval_release_sample else cut(data)
        text = json.dumps(kept, indent=indent, ensure_ascii=True) + "\n"
        size = len(text.encode("utf-8"))
        if size > MAX_BYTES:
            raise SystemExit(f"{target_name}: {size} bytes, over the {MAX_BYTES}-byte limit")
        target = out / target_name
        target.parent.mkdir(exist_ok=True)
        target.write_text(text, "utf-8")
        written.append(target)
        print(f"wrote {target} ({size / 1024:.0f} KB) from {source / source_name}")
    return written


def check(paths: list[Path]) -> None:
    """Load each sample with the app's loaders, when the geval package can be imported."""
    sys.path.insert(0, str(HERE.parent))
    try:
        from geval import load_dataset
    except ImportError:
        print("geval not importable: samples written but not loaded")
        return
    for path in paths:
        if path.parent.name != "judges" and not path.stem.endswith("_experts"):  # experts: read by its loader
            print(load_dataset(path).summary())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="folder with the full files")
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write the samples into")
    args = parser.parse_args(argv)
    check(build(args.source, args.out))


if __name__ == "__main__":
    main()
