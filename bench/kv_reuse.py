"""Figure (b): prompt tokens the embedded judge evaluates / prompt tokens it renders.

The judge keeps the KV cache of the previous prompt in its worker process and evaluates only
what follows the shared prefix (`judge.counters()`: tokens evaluated and rendered, counted per
forward pass).
Items are scored in dialogue order through the real runner (in-memory store), from an empty
context, on the first D dialogues x R responses of USR Topical-Chat:

1. one aspect (prompts/topicalchat-naturalness.txt);
2. with --all-aspects, the four single-aspect prompts one after the other (naturalness,
   coherence, engagingness, groundedness), as a full study would run them (4x the time);
3. the multi-aspect form (prompts/topicalchat-multi.txt): four scores read from one prompt,
   feeding "<Aspect>: " after each score. `rendered` counts the prompt once per aspect read
   (each read is a forward pass over the whole prompt), so the figure is also given against
   the tokens of the prompt rendered once per item;
4. the shared layout (prompts/topicalchat-shared.txt): one prompt per aspect, the four
   criteria first, then the dialogue, the fact and the response, the aspect asked last; an
   item's four prompts differ only after the response, a dialogue's only from the response on.

The first dialogue pays for the instructions; the second dialogue alone shows the steady
state that a whole-dataset run (60 dialogues) approaches, and is printed too.

    nice -n 10 python bench/kv_reuse.py [--groups 2] [--per-group 6] [--all-aspects]
"""

from __future__ import annotations

import argparse
import time

from _common import embedded_judge, fail, fresh_context, header, topicalchat

import geval


def run(judge, template_names: list[str], items) -> dict:
    """Score `items` with each template in turn; token counts overall and for the last dialogue."""
    fresh_context(judge)
    store = geval.Store(":memory:")
    start = judge.counters()
    last_group = items[-1].group
    once = last_eval = last_rendered = last_once = 0
    started = time.perf_counter()
    for name in template_names:
        template = geval.Template.load(name)
        first = [item for item in items if item.group != last_group]
        last = [item for item in items if item.group == last_group]
        progress = geval.score(store, first, template, judge, "bench")
        before = judge.counters()
        progress2 = geval.score(store, last, template, judge, "bench")
        after = judge.counters()
        last_eval += after["evaluated"] - before["evaluated"]
        last_rendered += after["rendered"] - before["rendered"]
        for p in (progress, progress2):
            if p.failed or p.cached:
                fail(f"{name}: {p.failed} failed, {p.cached} cached (expected fresh judgments)")
        once += prompt_tokens(judge, template, items)
        last_once += prompt_tokens(judge, template, last)
    seconds = time.perf_counter() - started
    store.close()
    end = judge.counters()
    evaluated = end["evaluated"] - start["evaluated"]
    rendered = end["rendered"] - start["rendered"]
    return {"evaluated": evaluated, "rendered": rendered, "once": once, "seconds": seconds,
            "last_evaluated": last_eval, "last_rendered": last_rendered, "last_once": last_once,
            "judgments": len(items) * sum(len(geval.Template.load(n).aspects) for n in template_names)}


def prompt_tokens(judge, template, items) -> int:
    """Chat tokens of every prompt the items need, each counted once."""
    return sum(judge.prompt_tokens(call.prompt) for item in items for call in template.calls(item))


def show(label: str, r: dict) -> None:
    print(f"{label}: evaluated {r['evaluated']:,} / rendered {r['rendered']:,} = {r['evaluated'] / r['rendered']:.3f}; "
          f"/ prompt tokens once per item {r['once']:,} = {r['evaluated'] / r['once']:.3f}; "
          f"last dialogue alone {r['last_evaluated'] / r['last_rendered']:.3f} "
          f"(/ once {r['last_evaluated'] / r['last_once']:.3f}); "
          f"{r['judgments']} aspect judgments in {r['seconds']:.1f}s = {r['seconds'] / r['judgments']:.2f} s each",
          flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--per-group", type=int, default=6)
    parser.add_argument("--all-aspects", action="store_true", help="also the four single-aspect prompts in turn")
    args = parser.parse_args()
    header(f"KV-cache reuse, {args.groups} dialogues x {args.per_group} responses of USR Topical-Chat")
    judge = embedded_judge()
    items = topicalchat(args.groups, args.per_group)
    if len({item.group for item in items}) < 2:
        fail("needs at least 2 dialogues")
    one = run(judge, ["topicalchat-naturalness"], items)
    show("1 aspect (naturalness)            ", one)
    multi = run(judge, ["topicalchat-multi"], items)
    show("multi-aspect form (4 aspects)     ", multi)
    shared = run(judge, ["topicalchat-shared"], items)
    show("shared layout (4 aspects)         ", shared)
    four_text = ""
    if args.all_aspects:
        four = run(judge, ["topicalchat-naturalness", "topicalchat-coherence", "topicalchat-engagingness",
                           "topicalchat-groundedness"], items)
        show("4 single-aspect prompts in turn   ", four)
        four_text = f"{four['evaluated'] / four['rendered']:.3f} (4 single-aspect prompts), "
    print(f"FIGURE b: evaluated / rendered = {one['evaluated'] / one['rendered']:.3f} (1 aspect), {four_text}"
          f"{multi['evaluated'] / multi['rendered']:.3f} (multi-aspect form; "
          f"{multi['evaluated'] / multi['once']:.3f} against each prompt counted once), "
          f"{shared['evaluated'] / shared['rendered']:.3f} (shared layout, 4 aspects) — target <= 0.10")
