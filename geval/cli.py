"""`python -m geval`: a thin adapter over the engine. Errors print one line and exit 2."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from pathlib import Path

import geval


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):  # no command, or a command group without its command: that level's help
        getattr(args, "group", parser).print_help()
        return 2
    try:
        _check_timeout_and_retries(getattr(args, "timeout", None), getattr(args, "max_retries", None))
        code = args.run(args) or 0
        sys.stdout.flush()  # a reader that stopped (`| head`) is met here, not as a traceback at exit
        return code
    except BrokenPipeError:  # the rest goes nowhere, quietly, as Python's documentation advises
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except geval.GevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nstopped: every finished judgment is saved; run the same command again to resume", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="python -m geval", description=__doc__.split(":")[0] + ": G-EVAL scoring and agreement with human judgments.")
    parser.add_argument("--version", action="version", version=f"geval {geval.__version__}")
    commands = parser.add_subparsers(title="commands")

    datasets = commands.add_parser("datasets", help="list, inspect and convert datasets")
    datasets.set_defaults(group=datasets)
    ds_commands = datasets.add_subparsers(title="datasets commands")
    ds_list = ds_commands.add_parser("list", help="bundled samples, ../shared/data datasets and those in the store")
    _store_argument(ds_list)
    ds_list.set_defaults(run=cmd_datasets_list)
    ds_show = ds_commands.add_parser("show", help="load a dataset (a file, a known name or one in the store) and "
                                                  "print its counts and a few items")
    _dataset_arguments(ds_show)
    ds_show.add_argument("--head", type=int, default=2, help="items to print (default 2)")
    _store_argument(ds_show)
    ds_show.set_defaults(run=cmd_datasets_show)
    ds_load = ds_commands.add_parser("load", help="load a dataset into the store (e.g. your own file, by a mapping), to "
                                                  "label it or import judge scores of it")
    _dataset_arguments(ds_load)
    _replace_argument(ds_load)
    _store_argument(ds_load)
    ds_load.set_defaults(run=cmd_datasets_load)
    ds_pairs = ds_commands.add_parser("pairs", help="pairs of a dataset's responses to one context, to judge which "
                                                    "is better (each annotator prefers the one they scored higher)")
    _dataset_arguments(ds_pairs)
    ds_pairs.add_argument("--aspect", help="the human aspect whose scores make the preferences (default: Overall, "
                                           "else the first)")
    ds_pairs.add_argument("--per-context", type=int, metavar="N", help="N pairs drawn per context (default: every pair)")
    ds_pairs.add_argument("--seed", type=int, default=0, help="seed for --per-context (default 0)")
    ds_pairs.add_argument("--pairs-name", help="the pairs' dataset name (default: the dataset's name and -pairs)")
    _replace_argument(ds_pairs)
    _store_argument(ds_pairs)
    ds_pairs.set_defaults(run=cmd_datasets_pairs)
    ds_convert = ds_commands.add_parser(
        "convert", help="DSTC9 -> seed 001's transformed_data_dial.json and transformed_data_response.json"
    )
    _dataset_arguments(ds_convert)
    ds_convert.add_argument("--out", required=True, help="folder to write the two files into")
    ds_convert.set_defaults(run=cmd_datasets_convert)

    tpl = commands.add_parser("templates", help="list, show and diff prompt templates")
    tpl.set_defaults(group=tpl)
    tpl_commands = tpl.add_subparsers(title="templates commands")
    tpl_list = tpl_commands.add_parser("list", help="templates in prompts/, and the versions saved in the store")
    _store_argument(tpl_list)
    tpl_list.set_defaults(run=cmd_templates_list)
    tpl_show = tpl_commands.add_parser("show", help="print a template and its version")
    tpl_show.add_argument("template", help="template file or name, or a saved version (name@version)")
    _store_argument(tpl_show)
    tpl_show.set_defaults(run=cmd_templates_show)
    tpl_draft = tpl_commands.add_parser("draft", help="print a first template for an aspect people scored (pass/fail "
                                        "asked as 0/1), to write their question into and save: > prompts/NAME.txt")
    _dataset_arguments(tpl_draft)
    tpl_draft.add_argument("aspect", help="the human aspect to judge, as the dataset names it (or, on a stored "
                                          "dataset, as your labels do)")
    _store_argument(tpl_draft)
    tpl_draft.set_defaults(run=cmd_templates_draft)
    tpl_diff = tpl_commands.add_parser("diff", help="unified diff of two templates")
    tpl_diff.add_argument("old")
    tpl_diff.add_argument("new")
    _store_argument(tpl_diff)
    tpl_diff.set_defaults(run=cmd_templates_diff)

    cot = commands.add_parser("cot", help="generate (or show) a template's evaluation steps with a judge")
    cot.add_argument("--template", "-t", required=True, help="template file or name, or a saved version (name@version)")
    cot.add_argument("--regenerate", action="store_true", help="generate anew even if steps are stored")
    _judge_arguments(cot)
    _store_argument(cot)
    cot.set_defaults(run=cmd_cot)

    score = commands.add_parser("score", help="score items with a template and a judge (cached, resumable)")
    _dataset_arguments(score)
    score.add_argument("--template", "-t", required=True, action="append",
                       help="template file or name, or a saved version (name@version); repeatable")
    score.add_argument("--level", help="only items of this level (turn, dialogue, summary); default: the template's")
    score.add_argument("--system", action="append", help="only items of this system (repeatable)")
    score.add_argument("--group", action="append", help="only items of this group (repeatable)")
    score.add_argument("--sample", type=_at_least(1), help="a seeded random sample of N items")
    score.add_argument("--sample-groups", type=_at_least(1), metavar="N",
                       help="a seeded random sample of N groups (dialogues, documents), each with all its items")
    score.add_argument("--seed", type=int, default=0, help="seed for --sample and --sample-groups (default 0)")
    score.add_argument("--limit", type=_at_least(1), help="only the first N items (after --sample)")
    score.add_argument("--dry-run", action="store_true", help="only say how many calls, tokens and cost it would take")
    _replace_argument(score)
    _judge_arguments(score)
    speed = score.add_argument_group("speed (never part of the signature or the cache)")
    speed.add_argument("--concurrency", type=int, default=1,
                       help="openai: judge calls at the same time (default 1; the embedded judge is always 1)")
    speed.add_argument("--rpm", type=float, help="at most this many requests per minute")
    speed.add_argument("--tpm", type=float, help="at most about this many tokens per minute")
    speed.add_argument("--batch", action="store_true",
                       help="openai: write the calls to the Batch API (half price, within 24 h) and print the batch id; "
                       "import the answers with `batch import BATCH_ID`")
    speed.add_argument("--no-submit", action="store_true",
                       help="with --batch: only write the JSONL (e.g. for vLLM's run_batch) and print its local id")
    speed.add_argument("--batch-dir", help="with --batch: folder for the JSONL files (default: batches/ beside the store)")
    _store_argument(score)
    score.set_defaults(run=cmd_score)

    batch = commands.add_parser("batch", help="OpenAI Batch API: status and import of a batch made by `score --batch`")
    batch.set_defaults(group=batch)
    batch_commands = batch.add_subparsers(title="batch commands")
    b_status = batch_commands.add_parser("status", help="where a batch stands on the server")
    b_status.add_argument("batch_id")
    _store_argument(b_status)
    b_status.set_defaults(run=cmd_batch_status)
    b_import = batch_commands.add_parser("import", help="import a batch's answers into the store (resumable)")
    b_import.add_argument("batch_id")
    b_import.add_argument("--wait", action="store_true", help="poll until the batch has ended, then import")
    b_import.add_argument("--poll", type=float, default=30.0, help="seconds between polls with --wait (default 30)")
    b_import.add_argument("--output", help="import this results file instead of downloading (e.g. vLLM run_batch output)")
    _store_argument(b_import)
    b_import.set_defaults(run=cmd_batch_import)

    runs = commands.add_parser("runs", help="scoring runs in the store, newest first, with how each ended")
    runs.add_argument("dataset", nargs="?", help="only the runs on this dataset (its stored name)")
    runs.add_argument("--limit", type=int, default=20, help="at most this many runs (default 20)")
    _store_argument(runs)
    runs.set_defaults(run=cmd_runs)

    _labels_commands(commands)
    _judgments_commands(commands)
    _team_commands(commands)
    _judge_commands(commands)
    _systems_command(commands)

    agree = commands.add_parser("agree", help="correlations between judge and human scores, with 95%% CIs, and how "
                                              "the judge errs (kappa, confusion, offset, scale use, length)")
    agree.add_argument("dataset", help="dataset name as stored (the file name without extension) or a file path")
    agree.add_argument("--template", "-t", help="template file or name, or a saved version (name@version); default: "
                                                "the most recently scored")
    agree.add_argument("--signature", help="judge signature (default: the most recent with this template)")
    agree.add_argument("--levels", default="item,group,system", help="comma-separated: item, group, system")
    agree.add_argument("--bootstrap", type=_at_least(MIN_BOOTSTRAP), default=1000,
                       help="bootstrap resamples (default 1000)")
    agree.add_argument("--csv", help="also write the table to this CSV file")
    agree.add_argument("--no-errs", action="store_true",
                       help="leave out how the judge errs (kappa, confusion matrix, precision and recall; offset, "
                            "scale use, Bland-Altman limits, length)")
    agree.add_argument("--tables", action="store_true",
                       help="how the judge errs with its tables too (kappa, confusion matrix, per label, constant "
                            "answers, scale use, length); without it, its sentences")
    _store_argument(agree)
    agree.set_defaults(run=cmd_agree)
    _leaderboard_commands(commands)

    doctor = commands.add_parser("doctor", help="check that the judge works on this machine: versions, CPU and "
                                 "llama.cpp build, the model file, a test judgment and its speed")
    doctor.add_argument("--build", action="store_true",
                        help="build the embedded judge's llama.cpp in the background if it is not installed, and "
                             "return at once (the README's first command; its progress: the Score page and "
                             "`geval doctor`)")
    _judge_arguments(doctor)
    _store_argument(doctor)
    doctor.set_defaults(run=cmd_doctor)

    tune = commands.add_parser("tune", help="search for the way of asking that agrees best with people on one "
                               "aspect (tune/test split by group, successive halving within a budget)")
    _dataset_arguments(tune)
    tune.add_argument("--aspect", required=True, help="the human aspect, as the dataset names it (e.g. Natural)")
    tune.add_argument("--budget", type=_at_least(1), required=True,
                      help="at most this many judge calls in all, the test part included (counted as if none "
                      "were stored)")
    tune.add_argument("--template", "-t", help="the template to beat (default: the one-aspect template in prompts/ "
                      "compared with --aspect, for this dataset)")
    others = tune.add_mutually_exclusive_group()
    others.add_argument("--try", dest="others", action="append", metavar="TEMPLATE",
                        help="more templates to try (repeatable; default: every template in prompts/ named like "
                        "--template's dataset with an aspect compared with --aspect)")
    others.add_argument("--no-other-templates", action="store_true", help="try no other template than --template")
    tune.add_argument("--no-few-shot", action="store_true",
                      help="leave out the few-shot variants of --template (k = 2 and 4 examples from the tune groups)")
    tune.add_argument("--no-ensemble", action="store_true",
                      help="leave out the ensemble of the best two candidates after the first round")
    tune.add_argument("--tune-share", type=_between(0, 1, "a share"), default=0.5,
                      help="share of the groups to tune on (default 0.5)")
    tune.add_argument("--sample-groups", type=_at_least(1), metavar="N",
                      help="search within a seeded random sample of N groups (dialogues, documents), the ones "
                      "`score --sample-groups N` takes with the same --seed")
    tune.add_argument("--seed", type=int, default=0, help="seed of the sample, the split and the search (default 0)")
    tune.add_argument("--save", action="store_true", help="save the winner as a template version in the store")
    _replace_argument(tune)
    _judge_arguments(tune)
    _store_argument(tune)
    tune.set_defaults(run=cmd_tune)
    return parser


def _dataset_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", help="a .json/.jsonl/.csv path, or the name of a bundled or shared dataset")
    parser.add_argument("--layout", choices=sorted(geval.OPTIONS.layouts), help="skip auto-detection")
    parser.add_argument(
        "--map", action="append", metavar="ROLE=COLUMN",
        help="column mapping for your own table: response=, context=, grounding=, system=, group=, "
        "score:ASPECT= (repeatable; an aspect given several columns has an annotator per column); "
        "level=turn, dialogue or summary for every row, or level=COLUMN for each "
        "row's own (default: inferred from the columns, and said)",
    )
    parser.add_argument("--name", help="dataset name (default: the file name without extension)")
    _scale_argument(parser)


def _scale_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scale", action="append", metavar="ASPECT=LOW-HIGH",
                        help="the scale people were asked on, per aspect (repeatable; a bare LOW-HIGH: every aspect), "
                             "e.g. --scale coherence=1-5: judges on another scale are mapped onto it (default: the "
                             "scale the dataset's paper declares, else none: then the verdicts say which reading "
                             "they take)")


def _replace_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--replace", action="store_true",
                        help="replace a stored dataset of the same name whose items this file does not all have "
                             "(their judgments and labels are then left out)")


def _judge_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("judge")
    group.add_argument("--judge", default="embedded", choices=sorted(geval.OPTIONS.backends),
                       help="backend (default embedded; scripted: no model, each score drawn from a hash of the "
                            "prompt, unrelated to quality: to try the commands, never to measure agreement)")
    group.add_argument("--model",
                       help="model name (openai) or GGUF path (embedded, default: the bundled Qwen2.5-Coder 1.5B)")
    group.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 for vLLM")
    group.add_argument("--mode", choices=["auto", "logprobs", "samples"], help="openai: how to get the distribution")
    group.add_argument("--n", type=int, help="openai samples per item (default 20)")
    group.add_argument("--temperature", type=float, help="openai sampling temperature (default 1.0)")
    group.add_argument("--max-tokens", type=int, help="openai answer length (default 16)")
    group.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="openai: seconds to wait for each answer before retrying (default 60)")
    group.add_argument("--max-retries", type=int, metavar="N",
                       help="openai: retries of a 429, 5xx, timeout or dropped connection, with backoff (default 5)")


def _store_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", help=f"SQLite file (default $GEVAL_STORE or {geval.Store.default_path()})")


def _existing_store(args) -> geval.Store | None:
    """The store --store (or the default) names, when its file exists: a command that only reads makes none."""
    path = Path(args.store or geval.Store.default_path())
    return geval.Store(path) if path.exists() else None


def _template(args, name: str) -> geval.Template:
    """A template named on the command line: a file, a name in prompts/, or a version saved in the store as
    `templates list` and `agree` name it (name@version, or the version's 12 hex digits)."""
    wanted, _, version = name.rpartition("@")
    store = _existing_store(args) if re.fullmatch(r"[0-9a-f]{12}", version) and not Path(name).exists() else None
    saved = next((t for t in store.template_versions() if t.version == version), None) if store is not None else None
    if saved is not None and wanted in ("", saved.name):
        return saved
    try:
        return geval.Template.load(name)
    except geval.GevalError as exc:
        if Path(name).is_file():  # a file that does not parse: its own line says where
            raise
        raise geval.GevalError(f"{exc}; or a version saved in the store, as `python -m geval templates list` names "
                               "it (name@version)") from None


def _load(args, store: geval.Store | None = None) -> geval.Dataset:
    """The dataset named on the command line (saved into `store`, unless it would replace another's
    items without --replace); how a table was read (its level, and why) goes to stderr."""
    dataset = geval.load_dataset(args.dataset, layout=args.layout, mapping=args.map, name=args.name, store=store,
                                 replace=getattr(args, "replace", False), scales=args.scale)
    for note in dataset.notes:
        print(f"{dataset.name}: {note}", file=sys.stderr)
    return dataset


def judge_from(args):
    if args.judge == "embedded":
        return geval.make_judge("embedded", model_path=args.model)
    if args.judge == "scripted":
        return geval.make_judge("scripted")
    return geval.make_judge(
        "openai", model=args.model, base_url=args.base_url, mode=args.mode, n=args.n,
        temperature=args.temperature, max_tokens=args.max_tokens, timeout=args.timeout, max_retries=args.max_retries,
    )


def _check_timeout_and_retries(timeout: float | None, max_retries: int | None) -> None:
    """--timeout must be a positive number of seconds, --max-retries a whole number >= 0."""
    if timeout is not None and not 0 < timeout < float("inf"):
        raise geval.GevalError(f"--timeout {timeout:g}: give the seconds to wait for an answer, more than 0 "
                               "(default 60)")
    if max_retries is not None and max_retries < 0:
        raise geval.GevalError(f"--max-retries {max_retries}: give 0 (no retries) or more (default 5)")


def _judge_given(args) -> dict:
    keys = ("judge", "model", "base_url", "mode", "n", "temperature", "max_tokens", "timeout", "max_retries",
            "concurrency", "rpm", "tpm")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def cmd_datasets_list(args) -> None:
    store = _existing_store(args)
    stored = store.dataset_names() if store is not None else []
    known = geval.Dataset.known()
    for name, path in known.items():  # a sample the app opened is stored too: named once, where it is read from
        print(f"{name:32} {path}" + (" (also in the store)" if name in stored else ""))
    for name in (name for name in stored if name not in known):
        print(f"{name:32} in the store {store.path}")


def cmd_datasets_show(args) -> None:
    store = _existing_store(args)  # read from it, never written: a file shown is not stored
    stored = store is not None and args.dataset in store.dataset_names() and not Path(args.dataset).exists() \
        and args.dataset not in geval.Dataset.known()
    if store is not None and not stored:
        _refuse_unknown(store, args.dataset)
    dataset = store.dataset(args.dataset) if stored else _load(args)
    print(dataset.summary())
    print(f"human aspects: {', '.join(dataset.aspects)}")
    for item in dataset.items[: args.head]:
        print(f"\n[{item.id}] level={item.level} group={item.group} system={item.system}")
        for turn in item.context[-3:]:
            print(f"  {turn.render()[:100]}")
        print(f"  -> {item.response[:100]}")
        print("  human: " + ", ".join(f"{a}={item.human_mean(a):.2f}" for a in item.human))


def cmd_datasets_load(args) -> None:
    store = geval.Store(args.store)
    dataset = _load(args, store)
    print(f"stored in {store.path}: {dataset.summary()}")
    if dataset.scales:
        print("the people's scales: " + ", ".join(f"{aspect} {low:g}-{high:g}"
                                                  for aspect, (low, high) in dataset.scales.items()))


def cmd_datasets_pairs(args) -> None:
    store = geval.Store(args.store)
    pairs = _load(args).pairs(args.aspect, args.per_context, args.seed, args.pairs_name)
    if not args.replace:
        said = pairs.replacing(store)
        if said:
            raise geval.GevalError(f"{said}; name the pairs otherwise (--pairs-name NAME) or replace them (--replace)")
    store.save_dataset(pairs)
    for note in pairs.notes:
        print(f"{pairs.name}: {note}", file=sys.stderr)
    print(f"stored in {store.path}: {pairs.summary()}")
    print(f"judge them with a pairwise template, e.g. python -m geval score {pairs.name} -t dialogue-pairwise "
          f"--store {store.path}")


def cmd_datasets_convert(args) -> None:
    dataset = _load(args)
    for path in dataset.to_seed001(Path(args.out)):
        print(f"wrote {path} ({len(dataset.items)} dialogues)")


def cmd_templates_list(args) -> None:
    store = _existing_store(args)  # read, never made
    shipped = geval.Template.known()
    versions = {t.version for t in shipped}
    saved = [t for t in store.template_versions() if t.version not in versions] if store is not None else []
    comments = store.template_comments() if saved else {}
    for template in [*shipped, *saved]:
        aspects = ", ".join(f"{a.name} {a.min}-{a.max}" for a in template.aspects)
        note = f"  (saved in the store{': ' + comments[template.version] if comments.get(template.version) else ''})" \
            if template.version not in versions else ""
        print(f"{template.label:44} {aspects}{note}")


def cmd_templates_show(args) -> None:
    template = _template(args, args.template)
    print(f"# {template.label}  placeholders: {', '.join(template.placeholders)}")
    print(template.text)


def cmd_templates_draft(args) -> None:
    store = _existing_store(args)  # read, never made nor written: a stored dataset (an upload), else the file
    stored = store is not None and args.dataset in store.dataset_names()
    if store is not None and not stored:
        _refuse_unknown(store, args.dataset)
    # people's scores first, then (an aspect only labeled) the labels'
    datasets = [store.dataset(args.dataset), store.dataset(args.dataset, side="you")] if stored else [_load(args)]
    dataset, aspect = next(((d, a) for d in datasets for a in d.aspects if a.lower() == args.aspect.lower()),
                           (datasets[0], None))
    if aspect is None:
        known = dict.fromkeys(a for d in datasets for a in d.aspects)
        raise geval.GevalError(f"{dataset.name} has no human aspect '{args.aspect}' in people's scores or labels; it "
                               f"has {', '.join(known) or 'none (label it first)'}")
    print(geval.Template.draft(dataset, aspect).text, end="")


def cmd_templates_diff(args) -> None:
    print(_template(args, args.old).diff(_template(args, args.new)) or "(identical)")


def cmd_cot(args) -> None:
    template = _template(args, args.template)
    if not template.needs_generated_steps:
        raise geval.GevalError(f"{template.source}: has no steps = \"auto\" in its header; nothing to generate")
    store = geval.Store(args.store)
    steps = geval.generate_steps(store, template, judge_from(args), regenerate=args.regenerate)
    print(steps)


def cmd_score(args) -> int:
    store = geval.Store(args.store)
    # a dry run changes nothing: a file is read, not stored (a stored dataset named is read from the store)
    dataset = _load(args, None if args.dry_run and args.dataset not in store.dataset_names() else store)
    judge = judge_from(args)
    exit_code = 0
    for name in args.template:
        template = _template(args, name)
        items = dataset.select(level=args.level or _template_level(template, dataset), systems=args.system,
                               groups=args.group, sample=args.sample, seed=args.seed, limit=args.limit,
                               sample_groups=args.sample_groups)
        plan = geval.plan(store, items, template, judge)
        print(f"{template.label} on {dataset.name}: {plan.line()}", file=sys.stderr)
        stored = dataset.name in store.dataset_names()
        for line in geval.labeling.beyond_scale(dataset.items, store.scales(dataset.name) if stored else dataset.scales,
                                                template, dataset.name, list(dataset.categories)):
            print(f"  note: {line}", file=sys.stderr)
        if not _renderable(plan, template, items):
            exit_code = 2
            continue
        if args.dry_run:
            continue
        if args.batch:
            _score_batch(args, store, items, template, judge, dataset.name)
            continue
        progress = geval.score(
            store, items, template, judge, dataset.name, settings_given=_judge_given(args),
            on_progress=_progress_printer(), concurrency=args.concurrency, rpm=args.rpm, tpm=args.tpm, plan=plan,
        )
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print(f"{template.label}: {geval.reporting.counted(progress.done, 'item')}, {progress.cached} cached, "
              f"{geval.reporting.counted(progress.calls, 'judge call')}, "
              f"{progress.failed} failed, {progress.unscored} unscored aspect scores; run {progress.run_id}")
        print(f"signature: {progress.signature}")
        if progress.status == "failed":
            print(f"  run {progress.run_id} failed, not one item was scored: {progress.cause}", file=sys.stderr)
            exit_code = 1
        elif progress.unscored:
            print(f"  {progress.unread_line()}", file=sys.stderr)
        for reason in progress.errors[:5]:
            print(f"  failed: {reason}", file=sys.stderr)
        if progress.failed:
            print("  (failed items are retried the next time you run the same command)", file=sys.stderr)
            exit_code = 1
    return exit_code


def _renderable(plan, template: geval.Template, items: list) -> bool:
    """Print why items cannot be rendered (each reason once, with how many it hits); when none can,
    an error line and the templates in prompts/ that fit these items. Whether any can."""
    problems = plan.problems()
    if plan.renderable:
        for line in problems:
            print(f"  cannot be rendered, left to fail: {line}", file=sys.stderr)
        return True
    fitting = [t.name for t in geval.Template.fitting(items)]
    print(f"error: {template.name} cannot be rendered on any of these {plan.total - plan.cached} items:",
          file=sys.stderr)
    for line in problems:
        print(f"  {line}", file=sys.stderr)
    print(f"  templates in prompts/ that fit these items: {', '.join(fitting) or 'none'}", file=sys.stderr)
    return False


def cmd_doctor(args) -> int:
    judge = judge_from(args)
    if args.build:
        if not hasattr(judge, "build"):
            raise geval.GevalError("--build builds the embedded judge's llama.cpp; leave out --judge")
        print(judge.build(start=True).line())
        return 0
    print(_store_line(args))
    checkup = judge.check()
    print(checkup.text())
    return 0 if checkup.works else 1


def _store_line(args) -> str:
    """Where the store (the cache of every judgment) is, and what it holds: its datasets, each with how
    many template versions and judges have scored it. A store not made yet stays unmade."""
    store = _existing_store(args)
    if store is None:
        return (f"[--] store {args.store or geval.Store.default_path()}: not made yet (the first `score`, "
                "`datasets load` or page that saves makes it)")
    held = [f"{name} ({geval.reporting.counted(len(store.combos(name)), 'judge')})" for name in store.dataset_names()]
    size = store.path.stat().st_size / 1e6
    return f"[ok] store {store.path} ({size:.1f} MB): {', '.join(held) or 'no dataset yet'}"


def cmd_tune(args) -> int:
    store = geval.Store(args.store)
    dataset = _load(args, store)
    start = _template(args, args.template) if args.template else None
    others = [] if args.no_other_templates else [_template(args, name) for name in args.others] if args.others \
        else None
    groups = None if args.sample_groups is None else \
        {item.group or item.id for item in dataset.select(sample_groups=args.sample_groups, seed=args.seed)}
    result = geval.tune(store, dataset.name, judge_from(args), args.aspect, args.budget, start, others,
                        tune_share=args.tune_share, seed=args.seed, groups=groups, few_shot=() if args.no_few_shot else None,
                        ensemble=not args.no_ensemble,
                        on_progress=_progress_printer_for(_tune_line))
    if sys.stderr.isatty():
        print(file=sys.stderr)
    print(result.table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(result.summary())
    if args.save and result.winner_template is not None:
        store.save_template(result.winner_template)
        print(f"saved {result.winner_template.label} in {store.path}")
    return 1 if result.stopped or not result.winner else 0


def _tune_line(progress) -> str:
    """The search's line; before it starts, the split with the test groups named."""
    if progress.round:
        return progress.line()
    shown = ", ".join(progress.test_groups[:8]) + (" ..." if len(progress.test_groups) > 8 else "")
    return f"{progress.message}\ntest groups (never scored during the search): {shown}"


def _batch_dir(args, store: geval.Store) -> Path:
    if getattr(args, "batch_dir", None):
        return Path(args.batch_dir)
    return (Path.cwd() if store.path == ":memory:" else Path(store.path).parent) / "batches"


def _score_batch(args, store, items, template, judge, dataset: str) -> None:
    batch = geval.batch

    plan = batch.write_batch(store, items, template, judge, dataset, _batch_dir(args, store),
                             settings_given=_judge_given(args))
    print(f"{template.label}: {plan.line()}", file=sys.stderr)
    ids = [f.batch_id for f in plan.files] if args.no_submit else batch.submit_batch(store, judge, plan)
    for entry, batch_id in zip(plan.files, ids):
        print(batch_id)
        print(f"  {entry.requests} requests from {entry.path}", file=sys.stderr)
    if ids:
        later = ("run it (e.g. vLLM run_batch), then `python -m geval batch import ID --output RESULTS`"
                 if args.no_submit else "then `python -m geval batch import ID` (add --wait to poll until it ends)")
        print(f"  {later}", file=sys.stderr)


def cmd_batch_status(args) -> None:
    batch = geval.batch

    store = geval.Store(args.store)
    info = batch.batch_status(batch.batch_judge(store, args.batch_id), args.batch_id)
    counts = info.request_counts
    done = f", {counts.completed} completed, {counts.failed} failed of {counts.total}" if counts else ""
    print(f"{args.batch_id}: {info.status}{done}")


def cmd_batch_import(args) -> int:
    batch = geval.batch

    store = geval.Store(args.store)
    judge = batch.batch_judge(store, args.batch_id)
    if args.wait and not args.output:
        batch.wait_batch(judge, args.batch_id, interval=args.poll,
                         on_status=lambda b: print(f"{args.batch_id}: {b.status}", file=sys.stderr, flush=True))
    progress = batch.import_batch(store, judge, args.batch_id, output=args.output)
    calls = progress.done - progress.cached - progress.failed
    print(f"{args.batch_id}: {progress.done}/{progress.total} items, {calls} imported, {progress.cached} already stored, "
          f"{progress.failed} failed, {progress.unscored} unscored aspect scores; run {progress.run_id}")
    for reason in progress.errors[:5]:
        print(f"  {reason}", file=sys.stderr)
    return 1 if progress.failed or progress.done < progress.total else 0


def _progress_printer():
    """On a terminal, one line redrawn in place; otherwise a line every 10% of the items."""
    if sys.stderr.isatty():
        return lambda p: print(f"\r{p.line()}", end="", file=sys.stderr, flush=True)

    def every_tenth(p) -> None:
        if p.done == p.total or p.done % max(1, p.total // 10) == 0:
            print(p.line(), file=sys.stderr, flush=True)

    return every_tenth


def _progress_printer_for(line):
    """On a terminal, `line(progress)` redrawn in place; otherwise printed when it changes, at most every 30 s."""
    if sys.stderr.isatty():
        return lambda p: print(f"\r{line(p)}", end="", file=sys.stderr, flush=True)
    last = [0.0, ""]

    def now_and_then(p) -> None:
        text = line(p)
        if text.split(":")[0] != last[1].split(":")[0] or time.time() - last[0] > 30:
            print(text, file=sys.stderr, flush=True)
            last[:] = [time.time(), text]

    return now_and_then


def _template_level(template: geval.Template, dataset: geval.Dataset) -> str | None:
    """The template's `level` header if the dataset has several levels, else any."""
    return template.level if template.level and len(dataset.levels) > 1 else None


def cmd_runs(args) -> None:
    import pandas as pd

    store = geval.Store(args.store)
    runs = store.runs(args.dataset).head(args.limit)
    if runs.empty:
        print(f"no runs{f' on {args.dataset}' if args.dataset else ''} in {store.path}")
        return
    shown = pd.DataFrame({
        "run": runs["id"], "status": list(map(geval.reporting.run_status, runs["status"], runs["went_on"])),
        "started": [time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) for t in runs["started"]],
        "dataset": runs["dataset"], "template": runs["template"], "judge": runs["judge"], "items": runs["n_items"],
        "process": [f"{pid:.0f}@{host}" if pd.notna(pid) else "" for pid, host in zip(runs["pid"], runs["host"])],
    })
    print(shown.to_string(index=False))
    for run, cause in zip(runs["id"], runs["cause"]):  # the commonest reason its items failed
        if cause:
            print(f"run {run}: {cause}")
    if (runs["status"] == "crashed").any():
        print("crashed: the process ended without finishing the run (killed, or an error); run the same "
              "command again to resume it: finished judgments are kept", file=sys.stderr)


def _labels_commands(commands) -> None:
    """`labels`: the user's own labels (the Label page's), to and from files keyed by item id, and
    the human side a dataset is compared with."""
    labels = commands.add_parser("labels", help="your own labels: export, import, the human side of a dataset")
    labels.set_defaults(group=labels)
    sub = labels.add_subparsers(title="labels commands")
    export = sub.add_parser("export", help="write a dataset's labels to a .csv or .jsonl file (keyed by item id)")
    export.add_argument("dataset", help="dataset name as stored")
    export.add_argument("--out", required=True, help="the .csv or .jsonl file to write")
    export.add_argument("--annotator", help="only this annotator's labels (default: everyone's)")
    _store_argument(export)
    export.set_defaults(run=cmd_labels_export)
    imported = sub.add_parser("import", help="read labels from a .csv, .jsonl or .json file (item_id, aspect, score; "
                                             "annotator, seconds, created optional) into the store")
    imported.add_argument("file")
    imported.add_argument("--dataset", help="the dataset whose items the file's item_id names by the ids your own "
                                            "file gave them (default: any stored dataset with such an id)")
    _scale_argument(imported)
    _store_argument(imported)
    imported.set_defaults(run=cmd_labels_import)
    show = sub.add_parser("show", help="a dataset's human side and how many items are labeled per aspect")
    show.add_argument("dataset", help="dataset name as stored")
    show.add_argument("--items", action="store_true",
                      help="also list the labeled items: id, the file's own id (if any) and the labels")
    _store_argument(show)
    show.set_defaults(run=cmd_labels_show)
    side = sub.add_parser("side", help="what agree, report, the leaderboard and the app compare the judge with")
    side.add_argument("dataset", help="dataset name as stored")
    side.add_argument("side", choices=[*geval.labeling.HUMAN_SIDES, "auto"],
                      help="; ".join(f"{k}: {v}" for k, v in geval.labeling.HUMAN_SIDES.items())
                           + "; auto: the dataset's own scores when it has any, else your labels")
    _store_argument(side)
    side.set_defaults(run=cmd_labels_side)


def _judgments_commands(commands) -> None:
    """`judgments export` and `judgments import`: a dataset's judgments kept in one file and read back
    (the shipped reports are made again from such files: reports/make.sh)."""
    judgments = commands.add_parser("judgments", help="keep a dataset's judgments in one file, and read them back")
    judgments.set_defaults(group=judgments)
    sub = judgments.add_subparsers(title="judgments commands")
    export = sub.add_parser("export", help="write a dataset's judgments, with their templates and cached calls, to "
                                           "one .jsonl.xz file")
    export.add_argument("dataset", help="dataset name as stored")
    export.add_argument("--out", required=True, help="the .jsonl.xz file to write")
    _store_argument(export)
    export.set_defaults(run=cmd_judgments_export)
    imported = sub.add_parser("import", help="read a file `judgments export` wrote into the store (its dataset is "
                                             "loaded first by name when the store does not hold it)")
    imported.add_argument("file")
    _store_argument(imported)
    imported.set_defaults(run=cmd_judgments_import)


def cmd_judgments_export(args) -> None:
    store = geval.Store(args.store)
    written = store.export_judgments(_stored_dataset(store, args.dataset), args.out)
    print(f"wrote {_rows_counted(written)} of {args.dataset} to {args.out}")


def cmd_judgments_import(args) -> None:
    store = geval.Store(args.store)
    dataset = geval.Store.kept_dataset(args.file)
    if dataset not in store.dataset_names():
        _dataset_in(store, dataset)
    read = store.import_judgments(args.file)
    print(f"read {_rows_counted(read)} of {dataset} from {args.file} into {store.path}")


def _rows_counted(rows) -> str:
    return ", ".join(geval.reporting.counted(rows[table], *what) for table, what in
                     (("judgments", ("judgment",)), ("calls", ("cached call",)), ("runs", ("run",)),
                      ("templates", ("template version",)),
                      ("steps", ("set of evaluation steps", "sets of evaluation steps"))) if rows[table])


def _team_commands(commands) -> None:
    """`users` and `queue`: a team's accounts (once one exists, the app asks everyone to sign in) and
    its annotation queues."""
    users = commands.add_parser("users", help="accounts: with none the app needs no sign-in; with one, everyone signs "
                                              "in (a lead sees every page, an annotator their own queue only)")
    users.set_defaults(group=users)
    sub = users.add_subparsers(title="users commands")
    add = sub.add_parser("add", help="make an account; the password is asked for (never on the command line)")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=["lead", "annotator"])
    add.add_argument("--password-stdin", action="store_true", help="read the password from the first line of stdin "
                                                                   "(for scripts) instead of asking for it")
    add.add_argument("--replace", action="store_true", help="replace an existing account's role and password")
    remove = sub.add_parser("remove", help="remove an account (its labels stay)")
    remove.add_argument("name")
    listed = sub.add_parser("list", help="the accounts and their roles")
    for parser, run in ((add, cmd_users_add), (remove, cmd_users_remove), (listed, cmd_users_list)):
        _store_argument(parser)
        parser.set_defaults(run=run)

    queue = commands.add_parser("queue", help="annotation queues: items handed to a team, each to several annotators")
    queue.set_defaults(group=queue)
    sub = queue.add_subparsers(title="queue commands")
    create = sub.add_parser("create", help="make a queue: a dataset's items, aspects with scales, who, and overlap")
    create.add_argument("name")
    create.add_argument("--dataset", required=True, help="dataset name as stored")
    create.add_argument("--aspects", required=True, help='aspects with their scales, e.g. "Natural 1-3, Engaging 1-3"')
    create.add_argument("--annotators", required=True, help="comma-separated names (accounts, or any names)")
    create.add_argument("--items", default="all", choices=list(geval.labeling.queues.SELECTIONS),
                        help="; ".join(f"{k}: {v}" for k, v in geval.labeling.queues.SELECTIONS.items()))
    create.add_argument("--n", type=int, default=0, help="the number of items (of each system, for per_system)")
    create.add_argument("--overlap", type=int, default=2, help="annotators who label each item (2 or more gives "
                                                               "agreement; default 2)")
    create.add_argument("--reasons", default="none", choices=list(geval.labeling.queues.REASON_RULES),
                        help="; ".join(f"{k}: {v}" for k, v in geval.labeling.queues.REASON_RULES.items()))
    create.add_argument("--seed", type=int, default=0)
    create.add_argument("--by", default="", help="who makes it (a lead's name)")
    show = sub.add_parser("show", help="a queue's progress per annotator and its agreement (alpha, pairwise kappa)")
    show.add_argument("name")
    join = sub.add_parser("join", help="add an annotator late: they take over items nobody has labeled first")
    join.add_argument("name")
    join.add_argument("annotator")
    export = sub.add_parser("export", help="the queue's labels with annotator, time and reason, to a .csv file")
    export.add_argument("name")
    export.add_argument("--out", required=True)
    listed = sub.add_parser("list", help="the queues in the store")
    reasons = sub.add_parser("reasons", help="candidate templates from the queue's reasons (corrected examples; a "
                                             "rubric an OpenAI-compatible judge drafts), measured held out by the "
                                             "prompt search, adopted only if they beat the start there")
    reasons.add_argument("name")
    reasons.add_argument("--aspect", required=True, help="the queue's aspect, compared with the judge's")
    reasons.add_argument("--budget", type=_at_least(1), required=True, help="at most this many judge calls in all")
    reasons.add_argument("--k", type=int, default=2, help="corrected examples shown (default 2, of 2 groups)")
    reasons.add_argument("--template", "-t", help="the template to beat (default: the dataset's for --aspect)")
    reasons.add_argument("--seed", type=int, default=0)
    _judge_arguments(reasons)
    for parser, run in ((create, cmd_queue_create), (show, cmd_queue_show), (join, cmd_queue_join),
                        (export, cmd_queue_export), (listed, cmd_queue_list), (reasons, cmd_queue_reasons)):
        _store_argument(parser)
        parser.set_defaults(run=run)


def _password(from_stdin: bool) -> str:
    """The new account's password: the first line of stdin, or asked twice without echo."""
    import getpass

    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise geval.GevalError("the two passwords differ; run the command again")
    return first


def cmd_users_add(args) -> None:
    store = geval.Store(args.store)
    store.add_user(args.name, args.role, _password(args.password_stdin), replace=args.replace)
    name = args.name.strip().lower()
    kept = f" (names are kept in lower case: sign in as {name})" if name != args.name.strip() else ""
    print(f"{name} is now a{'n' if args.role == 'annotator' else ''} {args.role} of {store.path}{kept}: the app asks "
          "everyone to sign in")


def cmd_users_remove(args) -> None:
    store = geval.Store(args.store)
    if not store.remove_user(args.name):
        raise geval.GevalError(f"no user named {args.name!r} in {store.path}; `geval users list` lists them")
    left = store.users()
    print(f"removed {args.name}" + ("" if left else ": no account is left, the app needs no sign-in again"))


def cmd_users_list(args) -> None:
    users = geval.Store(args.store).users()
    if not users:
        print("no accounts: the app needs no sign-in (geval users add NAME --role lead makes one)")
    for name, role in users.items():
        print(f"{name}\t{role}")


def cmd_queue_create(args) -> None:
    store = geval.Store(args.store)
    dataset = _stored_dataset(store, args.dataset)
    queue = geval.labeling.queues.create(
        store, args.name, dataset, geval.labeling.parse_aspects(args.aspects, store.categories(dataset)),
        [a.strip() for a in args.annotators.split(",") if a.strip()], args.items, args.n, args.overlap,
        args.reasons, args.seed, args.by)
    rows = store.assignments(queue.name)
    print(f"queue {queue.name}: {geval.reporting.counted(rows['item_id'].nunique(), 'item')} of {queue.dataset}, "
          f"each to {queue.overlap} of {len(queue.annotators(store))} annotators "
          f"({', '.join(f'{a} {n}' for a, n in rows['annotator'].value_counts().sort_index().items())})")


def cmd_queue_show(args) -> None:
    store = geval.Store(args.store)
    queue = geval.labeling.queues.Queue.read(store, args.name)
    print(f"queue {queue.name} on {queue.dataset}: {', '.join(map(str, queue.aspects))}; overlap {queue.overlap}; "
          f"{geval.labeling.queues.REASON_RULES[queue.reasons]}")
    progress = geval.labeling.queues.progress(store, queue)
    print(progress.to_string(index=False, na_rep="–", formatters={
        "share done": "{:.0%}".format, "labels per hour": lambda v: "–" if math.isnan(v) else f"{v:.0f}",
        "last label": lambda t: "–" if t != t else f"{t:%Y-%m-%d %H:%M} UTC"}))  # NaT: none yet
    if progress["labels per hour"].isna().any():
        print(geval.labeling.queues.RATE_NOTE)
    items = geval.labeling.queues.people_items(store, queue)
    for aspect in queue.aspects:
        found = geval.labeling.queues.agreement(store, queue, aspect, items)
        print(f"{aspect.name}, on {geval.reporting.counted(found.items, 'item')} labeled twice or more: "
              f"Krippendorff's alpha (ordinal) {found.alpha.reads()}; mean pairwise weighted kappa {found.kappa.reads()}")


def cmd_queue_join(args) -> None:
    store = geval.Store(args.store)
    queue = geval.labeling.queues.Queue.read(store, args.name)
    taken = geval.labeling.queues.add_annotator(store, queue, args.annotator.strip())
    print(f"{args.annotator} joins queue {queue.name} with {geval.reporting.counted(taken, 'item')}, those nobody "
          "has labeled first")


def cmd_queue_export(args) -> None:
    store = geval.Store(args.store)
    frame = geval.labeling.queues.export(store, geval.labeling.queues.Queue.read(store, args.name))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False)
    print(f"wrote {geval.reporting.counted(len(frame), 'label')} of queue {args.name} to {args.out}")


def cmd_queue_reasons(args) -> None:
    store = geval.Store(args.store)
    queue = geval.labeling.queues.Queue.read(store, args.name)
    start = _template(args, args.template) if args.template else None
    result = geval.labeling.reasons.from_reasons(store, queue.dataset, judge_from(args), args.aspect, args.budget,
                                                 start, queue=queue.name, k=args.k, seed=args.seed)
    print(f"candidates from the reasons: {', '.join(t.label for t in result.candidates.values())}")
    for sentence in result.drafted:
        print(f"  rubric: {sentence}")
    if result.rubric_note:
        print(f"  {result.rubric_note}")
    print(f"made from {geval.reporting.counted(len(result.source_groups), 'group')}, left out of the search; "
          f"{len(result.search.tune_groups)} to tune on, {len(result.search.test_groups)} to test on")
    note = result.reading.get("note") or ""
    print(f"gain on the test groups: {result.gain:+.3f} [{result.low:+.3f}, {result.high:+.3f}]"
          + (f" ({note})" if note else ""))
    print(result.verdict)


def cmd_queue_list(args) -> None:
    store = geval.Store(args.store)
    for name in store.queues() or ["no queues yet (geval queue create)"]:
        print(name)


def _stored_dataset(store: geval.Store, name: str) -> str:
    """`name` when the store holds a dataset of that name; else a GevalError naming those it holds."""
    if name not in store.dataset_names():
        raise geval.GevalError(f"no dataset named {name!r} in {store.path}; stored: "
                               f"{', '.join(store.dataset_names()) or 'none'}")
    return name


def cmd_labels_export(args) -> None:
    store = geval.Store(args.store)
    labels = store.labels(_stored_dataset(store, args.dataset), args.annotator)
    path = geval.labeling.write_labels(labels.to_dict("records"), args.out)
    print(f"wrote {geval.reporting.counted(len(labels), 'label')} of {args.dataset} to {path}")


def cmd_labels_import(args) -> None:
    store = geval.Store(args.store)
    written = store.save_labels(geval.labeling.read_labels(args.file), args.dataset, on_scale=True)
    print(f"imported {geval.reporting.counted(sum(written.values()), 'label')} from {args.file} ("
          + ", ".join(f"{dataset}: {n}" for dataset, n in written.items()) + ")")
    for dataset in written if args.scale else ():  # the scale people were asked on
        kept = store.declare_scales(dataset, args.scale)
        print(f"{dataset}: the people's scales: "
              + ", ".join(f"{aspect} {low:g}-{high:g}" for aspect, (low, high) in kept.items()))


def cmd_labels_show(args) -> None:
    store = geval.Store(args.store)
    name = _stored_dataset(store, args.dataset)
    print(_human_side_line(store, name))
    total = len(store.items(name))
    for row in geval.labeling.counts(store, name).itertuples():
        print(f"  {row.aspect}: {row.items} of {total} items labeled ({row.annotators})")
    if args.items:
        listed = geval.labeling.labeled_items(store, name)
        print(listed.to_string(index=False) if len(listed) else "no item is labeled yet")


def cmd_labels_side(args) -> None:
    store = geval.Store(args.store)
    store.set_human_side(_stored_dataset(store, args.dataset), "" if args.side == "auto" else args.side)
    print(f"{args.dataset}: the human side is now {geval.labeling.HUMAN_SIDES[store.human_side(args.dataset)]}")


def _human_side_line(store: geval.Store, name: str) -> str:
    """"human side: your labels (12 labels)": what the judge is compared with."""
    side = store.human_side(name)
    labels = len(store.labels(name))
    return f"human side: {geval.labeling.HUMAN_SIDES[side]}" + (
        f" ({geval.reporting.counted(labels, 'label')})" if side != "people" else "")


def cmd_agree(args) -> None:
    import pandas as pd

    store = geval.Store(args.store)
    path = Path(args.dataset)
    name = path.stem if path.suffix else (path.name if path.is_dir() else args.dataset)  # a folder: its dataset's name
    version = _template(args, args.template).version if args.template else None
    levels = tuple(level.strip() for level in args.levels.split(",") if level.strip())
    unknown = set(levels) - set(geval.OPTIONS.levels)
    if unknown:
        raise geval.GevalError(f"--levels: unknown level(s) {', '.join(sorted(unknown))}; use item, group, system")
    table = geval.agree(store, name, (version, args.signature), levels=levels, n_boot=args.bootstrap)
    frame = geval.disagreements(store, name, (version, args.signature))
    print(f"dataset {name}; {geval.reporting.counted(frame['item_id'].nunique(), 'item')}; "
          f"signature: {frame['signature'].iloc[0]}")
    others = store.combos(name)
    others = others[(others["template_version"] != frame["template_version"].iloc[0])
                    | (others["signature"] != frame["signature"].iloc[0])]
    if not args.template and not args.signature and len(others):  # the most recent was read: say which others
        print(f"the most recently scored of {len(others) + 1} template versions and judges; the others (-t "
              f"NAME@VERSION for one, read with its newest judge; --signature for another): "
              f"{', '.join(others['label'])}")
    if store.human_side(name) != "people":
        print(_human_side_line(store, name))
    shown = table.copy()
    shown["95% CI"] = [f"[{lo:+.3f}, {hi:+.3f}]" if pd.notna(lo) else "" for lo, hi in zip(table["low"], table["high"])]
    shown["value"] = shown["value"].map(lambda v: f"{v:+.3f}" if pd.notna(v) else "undefined")
    columns = ["aspect", "human", "level", "metric", "value", "95% CI", "n", "unscored", "note"]
    print(shown[columns].to_string(index=False))
    if args.csv:
        table.to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")
    if not args.no_errs:
        try:
            found = geval.reporting.how_it_errs.read(store, name, (version, args.signature))
        except geval.GevalError as exc:  # too few items to read: said, the table above stands
            print(f"How the judge errs: {exc}")
        else:
            print("\n".join(geval.reporting.how_it_errs.text(one, args.tables) for one in found))
            if not args.tables:
                print("(each aspect's tables: --tables; or the Agreement page, or `report`)")
    if store.template(frame["template_version"].iloc[0]).kind == "pairwise":  # position bias, people, win rates
        found = geval.reporting.pairwise.read(store, name, (frame["template_version"].iloc[0], frame["signature"].iloc[0]))
        print(f"\n{geval.reporting.pairwise.INTRO}\n{geval.reporting.pairwise.text(found)}")


# --- judges made elsewhere, and whether a judge can replace an annotator ------------------------


def _judge_commands(commands) -> None:
    """`judge import` (scores made elsewhere, stored as judge rows) and `alttest` (the alternative
    annotator test: can the judge replace an annotator?)."""
    judge = commands.add_parser("judge", help="judges run elsewhere: import their scores beside the app's own")
    judge.set_defaults(group=judge)
    sub = judge.add_subparsers(title="judge commands")
    imported = sub.add_parser("import", help="import a judge's scores from a .csv, .json or .jsonl file keyed by item id "
                                             "(or every judge of a {judge: {item: score}} file)")
    imported.add_argument("file")
    imported.add_argument("--dataset", required=True, help="the dataset the scores are of (stored name, or a file or "
                                                           "known dataset, loaded first)")
    imported.add_argument("--map", action="append", metavar="ROLE=COLUMN",
                          help="with --dataset a table of your own: its column mapping, as `datasets load` takes it "
                               "(repeatable)")
    imported.add_argument("--name", help="the judge's name (default: the file's name; in a {judge: ...} file, import "
                                         "only this one)")
    imported.add_argument("--aspect", help="the aspect of a file's single score column (default: the dataset's only one)")
    imported.add_argument("--scale", type=_scale, metavar="LOW-HIGH",
                          help="the scores' scale (default: the aspect's scale as the dataset's layout declares "
                               "it, e.g. USR's, SummEval's, FED's; else the range of the people's scores of it); with --aspect, "
                               "an aspect nobody has labeled yet is imported on it")
    imported.add_argument("--only-known", action="store_true",
                          help="leave out (and count) the scores of items the dataset does not have: a file made for "
                               "more items, e.g. the full SummEval's for its sample")
    _replace_argument(imported)
    _store_argument(imported)
    imported.set_defaults(run=cmd_judge_import)

    alt = commands.add_parser("alttest", help="can the judge replace an annotator? the alternative annotator test "
                                              "(Calderon et al., ACL 2025)")
    alt.add_argument("dataset", help="dataset name as stored, a dataset file, or a folder of the test's release "
                                     "(human_annotations.json; its llm_annotations.json imported as judges)")
    alt.add_argument("--judge", action="append", help="only judges whose name contains this (repeatable)")
    alt.add_argument("--aspect", action="append", help="only this human aspect (repeatable)")
    alt.add_argument("--epsilon", type=_between(0, 1, "the margin", low_too=True),
                     help="the judge's cost-benefit margin (default: --annotators')")
    alt.add_argument("--annotators", choices=list(geval.alttest.EPSILONS),
                     help="who the annotators are, for the default epsilon: "
                          + ", ".join(f"{k} {v:g}" for k, v in geval.alttest.EPSILONS.items())
                          + " (default: as the dataset says, SummEval's experts; else skilled)")
    alt.add_argument("--alignment", choices=list(geval.alttest.ALIGNMENTS),
                     help="default: accuracy for categories, neg-rmse for scores")
    alt.add_argument("--reading", choices=list(geval.alttest.READINGS), default="mode",
                     help="how a G-EVAL judge's score is read: " + "; ".join(
                         f"{k}: {v}" for k, v in geval.alttest.READINGS.items()))
    alt.add_argument("--by", choices=list(geval.alttest.BY),
                     help="what each annotator's t-test takes as independent: " + "; ".join(
                         f"{k}: {v}" for k, v in geval.alttest.BY.items()) + " (default: groups when some group "
                         "holds more than one of the items compared, else items)")
    alt.add_argument("--fdr", choices=list(geval.alttest.FDR), default="by",
                     help="the step-up procedure across annotators: by, Benjamini-Yekutieli, the paper's (default); "
                          "bh, Benjamini-Hochberg, a departure from the paper: more passes for good judges, said in "
                          "every verdict (docs/statistics.md)")
    alt.add_argument("--brief", action="store_true", help="one line per judge and aspect (then the judges' table and "
                     "the bottom line), without each annotator's lines")
    _replace_argument(alt)
    _store_argument(alt)
    alt.set_defaults(run=cmd_alttest)


#: Bootstrap resamples below which the CLI refuses `--bootstrap` (0 or -5 ran and gave intervals of nothing).
MIN_BOOTSTRAP = 20


def _at_least(least: int):
    """An argparse type: a whole number of at least `least` (a negative --limit read as a slice, or a negative
    --sample crashed)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least {least}")
        return value
    return parse


def _between(low: float, high: float, what: str, low_too: bool = False):
    """An argparse type: a number between `low` (itself too when `low_too`) and `high`, not `high` itself (`what` it
    is, for the message): a tune share of 1.5 or an epsilon of 5 ran and said nothing."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (low <= value if low_too else low < value) or not value < high:
            raise argparse.ArgumentTypeError(f"{text!r}: {what} is a number from {low:g} to below {high:g}" if low_too
                                             else f"{text!r}: {what} is a number between {low:g} and {high:g}")
        return value
    return parse


def _scale(text: str) -> tuple[float, float]:
    low, sep, high = text.partition("-")
    try:
        scale = (float(low), float(high))
    except ValueError:
        scale = None
    if not sep or scale is None or not scale[0] < scale[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: give the lowest and highest score, e.g. 1-5")
    return scale


def _dataset_in(store: geval.Store, name: str, mapping: list[str] | None = None, replace: bool | None = None) -> str:
    """The stored dataset `name`, or the dataset of a file, folder or known name, loaded into `store`
    (by `mapping`, "role=column" texts, when given; how a table was read goes to stderr). A file that
    would leave out items of a stored dataset of its name is refused, as `datasets load` refuses it,
    unless `replace` (None: the command has no --replace)."""
    if name in store.dataset_names() and not mapping:
        return name
    _refuse_unknown(store, name)
    dataset = geval.load_dataset(name, mapping=mapping)
    said = "" if replace else dataset.replacing(store)
    if said:
        other = f"load the file under another name first (python -m geval datasets load {name} --name NAME) and give " \
                "that name"
        raise geval.GevalError(f"{said}; {other}, or replace the stored one (--replace)" if replace is False else
                               f"{said}; {other}, or replace the stored one (datasets load {name} --replace)")
    store.save_dataset(dataset)
    for note in dataset.notes:
        print(f"{dataset.name}: {note}", file=sys.stderr)
    return dataset.name


def _refuse_unknown(store: geval.Store, name: str) -> None:
    """A name that is no file, folder, known dataset nor dataset in `store`: an error naming those in the store (the
    dataset is loaded without the store, which a file is saved into afterwards)."""
    if not Path(name).exists() and name not in geval.Dataset.known() and name not in store.dataset_names():
        raise geval.GevalError(f"{name}: no such file, known dataset ({', '.join(geval.Dataset.known()) or 'none'}) "
                               f"or dataset in {store.path} ({', '.join(store.dataset_names()) or 'none'})")


def _dataset_with_its_judges(store: geval.Store, name: str, replace: bool | None = None) -> str:
    """`_dataset_in`; for a folder of the alternative annotator test's release, its LLMs' annotations
    (llm_annotations.json) imported as judges too (a re-import changes nothing)."""
    dataset = _dataset_in(store, name, replace=replace)
    if Path(name).is_dir() and (Path(name) / "llm_annotations.json").is_file():
        geval.alttest.import_judge(store, dataset, Path(name) / "llm_annotations.json")
    return dataset


def cmd_judge_import(args) -> None:
    store = geval.Store(args.store)
    dataset = _dataset_in(store, args.dataset, args.map, args.replace)
    for done in geval.alttest.import_judge(store, dataset, args.file, args.name, args.aspect, args.scale,
                                           args.only_known):
        what = "already imported: nothing changed" if done.already else \
            f"{done.items} items, {', '.join(done.aspects)}" + (f", {done.unscored} without a score" if done.unscored else "") \
            + (f", {done.left_out} scores of items not in {dataset} left out" if done.left_out else "")
        print(f"{done.name}: {what} (template {done.template_version}; {done.signature})")
        for note in done.notes:
            print(f"  {note}")


def cmd_alttest(args) -> None:
    store = geval.Store(args.store)
    dataset = _dataset_with_its_judges(store, args.dataset, args.replace)
    epsilon = args.epsilon if args.epsilon is not None else geval.alttest.EPSILONS[_annotators(args, store, dataset)]
    combos = store.combos(dataset)
    if args.judge:
        combos = combos[[any(j.lower() in label.lower() for j in args.judge) for label in combos["label"]]]
        if combos.empty:
            raise geval.GevalError(f"no judge on {dataset} is named like {', '.join(args.judge)}")
    pairs = list(zip(combos["template_version"], combos["signature"])) if args.judge else None
    results = geval.alttest.run(store, dataset, pairs, args.aspect, epsilon, args.alignment, args.reading,
                                baseline=True, by=args.by, on_skipped=lambda line: print(line, file=sys.stderr),
                                fdr=args.fdr)
    others = {reading: {(r.judge, r.aspect): r for r in geval.alttest.run(store, dataset, pairs, args.aspect, epsilon,
                                                                        args.alignment, reading, by=args.by,
                                                                        fdr=args.fdr)}
              for reading in geval.alttest.READINGS if reading != args.reading}
    print(f"{dataset}: epsilon {epsilon:g}, q = {geval.alttest.Q:g} ({geval.alttest.FDR[args.fdr]}), at least "
          f"{geval.alttest.MIN_ITEMS} items per annotator ({geval.alttest.MIN_GROUPS} groups when its t-test is over "
          f"groups) and {geval.alttest.MIN_PER_ITEM} annotators per item")
    if len({r.judge for r in results if not r.baseline}) > 1:  # why a judge's items may be fewer than it scored
        print("the judges of an aspect are read on the items all of them scored, so that they are compared on the "
              f"same items (where one scored {geval.alttest.MIN_ITEMS} or more, one of fewer is read on its own)")
    for result in results:
        passed = {True: "passed", False: "not passed", None: "no verdict"}[result.passed]
        shown = geval.reporting.number
        beside = "" if result.reading in (*geval.alttest.STORED, "a constant") else \
            f" (read as {result.reading}; " + ", ".join(
                f"{reading} {shown(others[reading][(result.judge, result.aspect)].advantage_probability, 2)}"
                for reading in others) + ")"
        print(f"{result.judge} · {result.aspect}: winning rate {shown(result.winning_rate, 2)}, "
              f"advantage probability {shown(result.advantage_probability, 2)}{beside}, {passed}; "
              f"{result.alignment}, {result.items} items ({result.how})")  # "–" where too few items: the verdict says
        if not args.brief:
            print("  " + geval.alttest.full_verdict(result, results))
            print(_indented(result.table().to_string(index=False, na_rep="–", float_format=lambda v: f"{v:.3f}")))
    if not args.brief:
        _plans(store, dataset, results, epsilon, args.alignment, args.reading, args.fdr)
    ranked = geval.alttest.ranking(store, dataset, results)
    if len(ranked) > 1:
        found, why = geval.labeling.labels_saved(store, dataset, args.aspect)
        saved, line = _labels_saved(dataset, ranked, results, found, why)
        if saved is not None:
            ranked.insert(ranked.columns.get_loc("advantage probability") + 1, "labels saved", saved)
        print("Judges by advantage probability, beside their agreement with the people (item-level Pearson; accuracy "
              "on a categorical aspect)" + (" and the labels they save:" if saved is not None else ":"))
        print(_indented(ranked.to_string(index=False, na_rep="–", float_format=lambda v: f"{v:.3f}")))
        print(f"  {line}")
        _bottom_lines(store, dataset, results, found)


def _bottom_lines(store: geval.Store, dataset: str, results: list, saved) -> None:
    """The bottom line of each aspect with a score (`geval.reporting.bottom_line.sentence`): the judge worth
    most labels (`saved`: `geval.labeling.labels_saved`), what it saves, whether it may replace an annotator,
    and where Pearson and the advantage probability put another judge first."""
    bottom, items = geval.reporting.bottom_line, store.items(dataset)
    aspects = [a for a in dict.fromkeys(r.aspect for r in results if not r.baseline)
               if a.lower() not in {c.lower() for c in store.categories(dataset)}]
    if not aspects:
        return
    found = geval.labeling.features(store, dataset, aspects[0], baselines=(), items=items)
    tests = {(r.judge, r.aspect): r for r in results if not r.baseline}
    print("Bottom line:")
    for aspect in aspects:
        mine = saved[saved["aspect"].str.lower() == aspect.lower()]
        frame = bottom.figures(aspect, bottom.judges_on(found, items, aspect),
                               dict(zip(mine["combo"], zip(mine["saved"], mine["saved_low"]))), tests)
        constant = next((r for r in results if r.baseline and r.aspect == aspect), None)
        per = mine["per system"].median() if len(mine) else None
        said = bottom.sentence(aspect, frame, bottom.default_of(frame), per, bottom.short_names(frame["combo"]),
                               constant, systems=any(item.system for item in items),
                               who=geval.labeling.COMPARED_WITH[store.human_side(dataset)])
        print(f"  {said}")


def _labels_saved(dataset: str, ranked, results: list, found, why: list[str]) -> tuple[list[str] | None, str]:
    """The ranking's column of the labels each judge saves for a system's mean (`found`:
    `geval.labeling.labels_saved`, averaged over its aspects; a constant saves none), and the line saying how it
    was read or why it is not there (None: no aspect it can be read on; `why`: the aspects it is not read on)."""
    where = f"python -m geval systems {dataset}"
    if found.empty:
        return None, f"Labels saved: not read here: {'; '.join(why) or 'no aspect to read them on'}."
    constants = {r.judge for r in results if r.baseline}
    mean = found.groupby("combo")["saved"].mean()
    column = ["+0%" if judge in constants else f"{mean[judge]:+.0%}" if judge in mean.index else "–"
              for judge in ranked["judge"]]
    per = int(found["per system"].median())
    return column, (f"Labels saved: of the labels each system's mean needs, what the judge saves (from the variance of "
                    f"people's scores it removes within systems, at {per} labels per system, averaged over its aspects; "
                    "below 0 the labels alone do better, a constant saves exactly none): "
                    f"{where} for each aspect with its interval" + (f"; not read: {'; '.join(why)}" if why else "")
                    + ".")


def _plans(store: geval.Store, dataset: str, results: list, epsilon: float, alignment: str | None, reading: str,
           fdr: str) -> None:
    """Per aspect, how many items give its best judge an 80% chance to pass, the judge read as its verdict
    reads it (docs/statistics.md, "How many items"); never a refusal beneath a pass (`geval.alttest.plan_line`)."""
    by_label = store.combos(dataset).set_index("label")
    judges = [r for r in results if not r.baseline]
    for aspect in dict.fromkeys(r.aspect for r in judges):
        best = max((r for r in judges if r.aspect == aspect),
                   key=lambda r: -1.0 if math.isnan(r.advantage_probability) else r.advantage_probability)
        combo = tuple(by_label.loc[best.judge, ["template_version", "signature"]])
        planned = geval.alttest.plan(store, dataset, aspect, combo, epsilon, None if alignment == "rank" else alignment,
                                     by=best.by, reading=reading, fdr=fdr)
        print(f"How many items, {aspect} ({best.judge}): "
              + (geval.alttest.plan_line(best, results, planned) if planned else
                 "not known until two annotators have scored the same items"))


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


# --- systems as people would score them (issue 39) ---------------------------------------------


def _systems_command(commands) -> None:
    """`systems`: each system's mean as people would give it, from a few labels and the judge."""
    sub = commands.add_parser("systems", help="each system's mean as people would score it, from a few labels and the "
                                              "judge on every item: intervals, comparisons, labels each judge saves")
    sub.add_argument("dataset", help="dataset name as stored, a dataset file, or a folder of the alternative annotator "
                                     "test's release (its llm_annotations.json imported as judges)")
    sub.add_argument("--aspect", action="append", help="human aspect (repeatable; default: every one a judge is "
                                                       "compared with)")
    sub.add_argument("--judge", help="the judge the combined estimate reads (its name contains this; default: the "
                                     "most recently scored)")
    sub.add_argument("--together", action="store_true", help="combine every judge of the aspect (fitted together)")
    sub.add_argument("--labels", type=_at_least(1), metavar="K",
                     help="what K labels per system would give, drawn from the dataset's own scores (default, when "
                          "people scored every item: 20)")
    sub.add_argument("--design", choices=list(geval.labeling.DESIGNS), default="documents",
                     help="how --labels are drawn: " + "; ".join(f"{k}: {v}" for k, v in geval.labeling.DESIGNS.items()))
    sub.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    sub.add_argument("--all-pairs", action="store_true", help="a sentence for every pair, not only neighbours (the "
                     "default up to 4 systems)")
    _store_argument(sub)
    sub.set_defaults(run=cmd_systems)


def cmd_systems(args) -> None:
    store = geval.Store(args.store)
    dataset = _dataset_with_its_judges(store, args.dataset)
    combos = store.combos(dataset)
    combo = None
    if args.judge:
        named = combos[[args.judge.lower() in label.lower() for label in combos["label"]]]
        if named.empty:
            raise geval.GevalError(f"no judge on {dataset} is named like {args.judge}")
        label = min(named["label"], key=len)  # "gpt-4o" before "gpt-4o-mini"
        row = named[named["label"] == label].iloc[0]
        combo = (row["template_version"], row["signature"])
    items = store.items(dataset)
    aspects, left_out = geval.labeling.estimable_aspects(store, dataset, items)
    if args.aspect:
        aspects, left_out = args.aspect, []
    rated = _pass_aspects(store, dataset, items, args.aspect)  # pass/fail: each system's rate
    aspects = [a for a in aspects if a.lower() not in {r.lower() for r in rated}]
    left_out = [line for line in left_out if not any(line.startswith(f"{r} is categorical") for r in rated)]
    if not aspects and not rated:
        raise geval.GevalError(f"{dataset}: {'; '.join(left_out)}" if left_out else
                               f"no judge on {dataset} is compared with a human aspect: score one, or import one")
    for line in left_out:
        print(f"{dataset}: {line}; left out\n")
    tests = _tests(store, dataset)
    advantage = {(r.judge, r.aspect): r.advantage_probability for r in tests if not r.baseline}
    found = geval.labeling.features(store, dataset, aspects[0], baselines=(), items=items) if aspects else None
    bottom = geval.reporting.bottom_line
    failed = []
    for aspect in aspects:
        per_system = args.labels if args.labels is not None else geval.labeling.labels_to_draw(items, aspect)
        judges = bottom.judges_on(found, items, aspect)
        try:
            if combo is None and not args.together:  # the judge worth most labels here
                result = bottom.default_means(store, dataset, aspect, judges, per_system, args.design, args.seed,
                                              items)
            else:
                result = geval.labeling.system_means(store, dataset, aspect, combo, args.together, per_system,
                                                     args.design, args.seed, items=items)
        except geval.GevalError as exc:
            if len(aspects) == 1:
                raise
            failed.append(exc)
            print(f"{dataset} · {aspect}: {exc}\n")
            continue
        frame = bottom.figures(aspect, judges, bottom.saved_by(result), {(r.judge, r.aspect): r for r in tests})
        default = bottom.default_of(frame)
        constant = next((r for r in tests if r.baseline and r.aspect.lower() == aspect.lower()), None)
        said = bottom.sentence(result.aspect, frame, default, per_system, bottom.short_names(frame["combo"]),
                               constant, systems=bottom.has_systems(result),
                               who=geval.labeling.COMPARED_WITH[store.human_side(dataset)])
        print(f"Bottom line: {said}")
        _print_systems(dataset, result, args.all_pairs, advantage,
                       why="" if combo is not None or args.together else
                       f"the only judge compared with {aspect}" if len(judges) == 1 else
                       "the judge worth most labels here: --judge picks another" if default is not None else
                       "the judge closest to people (the highest Pearson within systems; no judge's worth can be "
                       "read here): --judge picks another")
    for aspect in rated:
        try:
            _print_pass_rates(dataset, _pass_rates(store, dataset, aspect, combo, args, items))
        except geval.GevalError as exc:
            failed.append(exc)
            print(f"{dataset} · {aspect}: {exc}\n")
    if failed and len(failed) == len(aspects) + len(rated):
        raise failed[0]


def _pass_aspects(store: geval.Store, dataset: str, items: list, only: list[str] | None) -> list[str]:
    """The aspects labeled pass/fail (yes/no, true/false) among `only` (default: all): their pass rates."""
    return [a for a in geval.labeling.pass_aspects(store, dataset, items)
            if not only or a.lower() in {o.lower() for o in only}]


def _pass_rates(store: geval.Store, dataset: str, aspect: str, combo, args, items: list):
    """`geval.labeling.pass_rates` of `aspect`, its labels drawn as the systems' means draw them."""
    per_system = args.labels if args.labels is not None else geval.labeling.labels_to_draw(items, aspect)
    return geval.labeling.pass_rates(store, dataset, aspect, combo, per_system, args.design, args.seed, items)


def _print_pass_rates(dataset: str, found) -> None:
    means = found.means
    print(f"{dataset} · {found.title()}. {found.source_line()}")
    for note in means.notes:
        print(f"  {note}")
    print(_indented(found.table().to_string(index=False)))
    print(f"  {found.judge_line()}")
    print()


def _tests(store: geval.Store, dataset: str) -> list:
    """The alternative annotator test of every judge, with the constant beside it, at the dataset's default
    epsilon ([] where the test cannot run: no annotators)."""
    epsilon = geval.alttest.EPSILONS[geval.alttest.annotators_of(store, dataset) or "skilled"]
    try:
        return geval.alttest.run(store, dataset, epsilon=epsilon, baseline=True)
    except geval.GevalError:
        return []


def _print_systems(dataset: str, result, all_pairs: bool, advantage: dict, why: str = "") -> None:
    low, high = result.scale
    whole = len(result.table) == 1 and result.table["system"].iloc[0] == ""
    which = "the mean people would give the whole dataset (no systems)" if whole else \
        "the mean people would give each system"
    print(f"{dataset} · {result.aspect} ({low:g}-{high:g}): {which}, {result.interval_words()}, from "
          f"{result.source}; combined with {result.judge}" + (f" ({why})" if why else ""))
    for note in result.notes:
        print(f"  {note}")
    print(_indented(geval.reporting.systems_table(result).to_string(index=False)))
    print(f"Labels each judge is worth ({geval.reporting.worth_words(result)}; 95% interval over groups), "
          "beside its advantage probability in the alternative annotator test:")
    print(_indented(geval.reporting.worth_table(result, advantage).to_string(index=False)))
    if line := geval.reporting.saved_line(result):
        print(f"  {line}")
    if len(result.table) > 1:
        print("Ranking (ranks that hold for all pairs together):")
        print(_indented(geval.reporting.ranking_table(result).to_string(index=False)))
        print(f"  {result.pairs_line()}")
        for line in result.sentences(adjacent=False if all_pairs else None):
            print(f"  {line}")
    print()


# --- leaderboard and report (issue 5) ----------------------------------------------------------


def _leaderboard_commands(commands) -> None:
    """`leaderboard` and `report`: judges beside baseline metrics, by agreement with people."""
    baselines, protocols, variants = geval.OPTIONS.baselines, geval.OPTIONS.protocols, geval.OPTIONS.variants
    fast = geval.OPTIONS.fast_baselines

    for name, help_text in (("leaderboard", "judges and baseline metrics by correlation with people, with 95%% CIs"),
                            ("report", "write reports/<dataset>.md and .html: what was judged, agreement, "
                                       "comparisons, leaderboard, flagged items, templates, signatures, plots")):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("dataset", nargs="+" if name == "leaderboard" else None,
                         help="dataset name as stored (the file name without extension)")
        sub.add_argument("--baselines", default=",".join(fast),
                         help=f"comma-separated, of {','.join(baselines)}, or 'none' (default: {','.join(fast)}, "
                              "as the Agreement page: the others run a model over every response, minutes on a CPU "
                              "the first time)")
        sub.add_argument("--variant", action="append", choices=sorted(variants),
                         help="judge score variant, repeatable (default wmean)")
        sub.add_argument("--bootstrap", type=_at_least(MIN_BOOTSTRAP), default=1000,
                         help="bootstrap resamples (default 1000)")
        sub.add_argument("--no-ceiling", action="store_true", help="leave out the people's leave-one-out row")
        sub.add_argument("--calibrate", action="store_true",
                         help="add each judge calibrated to the human scale, each judge and every judge together "
                              "combined with the baselines (ridge), held out by group (these rows use human labels)")
        sub.add_argument("--ensemble", action="store_true",
                         help="add the mean of the judge rows and of each pair of them (each aspect on 0-1; no "
                              "human labels)")
        sub.add_argument("--folds", type=int, default=5, help="folds (of groups) for --calibrate (default 5)")
        sub.add_argument("--against", default=geval.OPTIONS.reference_row,
                         help="the judge row every other judge row is compared with, pairwise over the same groups "
                              "(its label, or how the label starts; 'none' for no comparison; default: "
                              f"'{geval.OPTIONS.reference_row}', when there is such a row)")
        sub.add_argument("--protocol", action="append", choices=sorted(protocols),
                         help="protocol, repeatable (default: those of the dataset's layout, else generic: item, "
                              "group and system level as the data allows)")
        sub.add_argument("--annotators", choices=[*geval.alttest.EPSILONS, "none"],
                         help="who the annotators are, for the alternative annotator test's epsilon ("
                              + ", ".join(f"{k} {v:g}" for k, v in geval.alttest.EPSILONS.items())
                              + "; default: as the dataset says, SummEval's experts, else skilled; none: leave the "
                                "test out)")
        if name == "leaderboard":
            sub.add_argument("--metric", choices=list(geval.OPTIONS.metrics),
                             help="correlation shown (default: each protocol's own)")
            sub.add_argument("--csv", help="also write every cell (all metrics) to this CSV file")
            sub.set_defaults(run=cmd_leaderboard)
        else:
            sub.add_argument("--out", default="reports",
                             help="folder for <dataset>.md and <dataset>.html, one self-contained page (default reports)")
            sub.add_argument("--html", nargs="?", const="", metavar="FILE",
                             help="write only the HTML page (one self-contained file, as the app's download): to FILE, "
                                  "else <out>/<dataset>.html")
            sub.add_argument("--no-plots", action="store_true", help="no plots (faster)")
            sub.add_argument("--goals", action="store_true",
                             help="add this project's goals and reference figures for Topical-Chat (the G-EVAL "
                                  "paper, seed 000's comparison, the embedded judge's goal); off by default")
            sub.set_defaults(run=cmd_report)
        _store_argument(sub)


def _baseline_names(text: str) -> list[str]:
    return [] if text.strip().lower() == "none" else [n.strip() for n in text.split(",") if n.strip()]


def cmd_leaderboard(args) -> None:
    import pandas as pd

    store = geval.Store(args.store)
    board = geval.leaderboard(store, args.dataset, protocols=args.protocol, baselines=_baseline_names(args.baselines),
                        variants=args.variant or ["wmean"], ceiling=not args.no_ceiling, calibrate=args.calibrate,
                        ensemble=args.ensemble, folds=args.folds, n_boot=args.bootstrap, against=_against(args),
                        on_progress=lambda message: print(message, file=sys.stderr, flush=True))
    with pd.option_context("display.width", 250, "display.max_columns", 50, "display.max_colwidth", 60):
        print(board.wide(args.metric, supervised=False).drop(columns=["signature", "kind"]).to_string(index=False))
        best = board.best_of()
        if best is not None:
            print(f"\nrows that use the human labels (fitted on other folds' groups; not the judge, no judge goal "
                  f"applies; intervals without refitting): {best[0]} is the best of {best[1]}")
            print(board.wide(args.metric, supervised=True).drop(columns=["signature", "kind"]).to_string(index=False))
        for supervised, whose in ((False, "judge rows only"), (True, "the rows that use the human labels, apart: "
                                                                     "intervals without refitting")):
            versus = board.versus(supervised=supervised)
            if not versus.empty:
                print(f"\nagainst {versus['against'].iloc[0]}, {whose} (difference in the protocol's metric, "
                      "[95% paired interval over groups, jackknife], p):")
                print(versus.drop(columns="against").to_string(index=False))
    print("\nsignatures:")
    for row, signature in zip(board.rows["row"], board.rows["signature"]):
        if signature:
            print(f"  {row}:\n    " + signature.replace("\n", "\n    "))
    for line in board.skipped:
        print(f"left out: {line}", file=sys.stderr)
    if args.annotators != "none":
        for dataset in board.datasets:
            who = _annotators(args, store, dataset)
            epsilon = geval.alttest.EPSILONS[who]
            try:
                ranked = geval.alttest.ranking(store, dataset, geval.alttest.run(store, dataset, epsilon=epsilon))
            except geval.GevalError as exc:
                print(f"\n{dataset}: no alternative annotator test: {exc}")
                continue
            with pd.option_context("display.width", 250, "display.max_columns", 50, "display.max_colwidth", 60):
                print(f"\n{dataset}: can the judge replace an annotator? judges by advantage probability (epsilon "
                      f"{epsilon:g}, {who}), beside their item-level agreement:")
                print(ranked.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.csv:
        board.cells.merge(board.rows[["row", "signature"]], on="row").to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")


def _annotators(args, store: geval.Store, dataset: str) -> str:
    """`--annotators` as given, else who the dataset says its annotators are, else skilled."""
    return args.annotators or geval.alttest.annotators_of(store, dataset) or "skilled"


def _against(args) -> str | None:
    return None if args.against.strip().lower() == "none" else args.against


def cmd_report(args) -> None:
    import shlex

    store = geval.Store(args.store)
    words = [args.dataset, *(["--out", args.out] if not args.html else []),  # (a file named: the folder unused)
             *(["--store", args.store] if args.store else [])]
    words += [] if args.html is None else ["--html", args.html] if args.html else ["--html"]
    if _baseline_names(args.baselines) != list(geval.OPTIONS.fast_baselines):
        words += ["--baselines", args.baselines]
    words += [w for v in args.variant or [] for w in ("--variant", v)]
    words += [w for p in args.protocol or [] for w in ("--protocol", p)]
    words += (["--bootstrap", str(args.bootstrap)] if args.bootstrap != 1000 else []) + \
        (["--no-plots"] if args.no_plots else []) + (["--no-ceiling"] if args.no_ceiling else []) + \
        (["--calibrate"] if args.calibrate else []) + (["--ensemble"] if args.ensemble else []) + \
        (["--folds", str(args.folds)] if args.folds != 5 else []) + \
        (["--against", args.against] if args.against != geval.OPTIONS.reference_row else []) + \
        (["--annotators", args.annotators] if args.annotators else []) + \
        (["--goals"] if args.goals else [])
    command = "python -m geval report " + shlex.join(words)
    choices = dict(command=command, protocols=args.protocol, baselines=_baseline_names(args.baselines),
                   variants=args.variant or ["wmean"], n_boot=args.bootstrap, figures=not args.no_plots,
                   ceiling=not args.no_ceiling, calibrate=args.calibrate, ensemble=args.ensemble, folds=args.folds,
                   against=_against(args),
                   alttest_epsilon=geval.alttest.EPSILONS.get(_annotators(args, store, args.dataset)),
                   goals=args.goals, on_progress=lambda message: print(message, file=sys.stderr, flush=True))
    if args.html is not None:  # the page alone: kept in the store until it changes
        page = Path(args.html or Path(args.out) / f"{args.dataset}.html")
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(geval.reporting.report_page(store, args.dataset, **choices), "utf-8")
        print(f"wrote {page}")
        return
    path = geval.reporting.report(store, args.dataset, **choices).write(args.out)
    print(f"wrote {path} and {path.with_suffix('.html')}")
