"""Figure (c): the embedded judge's speed on the tokens it evaluates vs llama.cpp's own prefill.

llama.cpp's prefill speed is timed on one long prompt (about the length of two Topical-Chat
prompts, evaluated from an empty context with `Llama.eval`, no judge around it) with a llama.cpp
context of this process on the judge's model file (same context size and threads), before and
after the judge. The judge runs as a run runs it, in its worker process: its speed is (prompt
tokens it evaluated) / (wall time of its judgments, everything included: sending the prompt to
the worker, tokenizing, the forward passes, reading the logits, the answer back) on D dialogues x R
responses in dialogue order from an empty context, with the shared layout
(prompts/topicalchat-shared.txt, 4 aspects) or --template topicalchat-naturalness (1 aspect).
The speed the judge measured when its worker loaded the model (prefill, decode) is printed beside.

    nice -n 10 python bench/prefill.py [--groups 2] [--per-group 6] [--template NAME]
"""

from __future__ import annotations

import argparse
import os
import time

from _common import embedded_judge, fail, fresh_context, header, topicalchat

import geval


def raw_prefill(llm, tokens: list[int]) -> float:
    """llama.cpp's tokens/s evaluating `tokens` from an empty context."""
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    return len(tokens) / (time.perf_counter() - started)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--per-group", type=int, default=6)
    parser.add_argument("--template", default="topicalchat-shared")
    args = parser.parse_args()
    header(f"prefill speed: judge on evaluated tokens vs llama.cpp on one long prompt "
           f"({args.groups} dialogues x {args.per_group} responses, {args.template})")
    from llama_cpp import Llama

    judge = embedded_judge()
    llm = Llama(model_path=str(judge.path), n_ctx=judge.n_ctx, n_threads=len(os.sched_getaffinity(0)), n_batch=512, verbose=False)
    template = geval.Template.load(args.template)
    items = topicalchat(args.groups, args.per_group)
    calls = [call for item in items for call in template.calls(item)]
    long_tokens = llm.tokenize((calls[0].prompt + "\n\n" + calls[-1].prompt).encode(), add_bos=False)
    if len(long_tokens) >= llm.n_ctx():
        fail(f"the long prompt has {len(long_tokens)} tokens, more than the context")

    before = raw_prefill(llm, long_tokens)
    fresh_context(judge)
    start_eval = judge.counters()["evaluated"]
    started = time.perf_counter()
    for call in calls:
        judge.judge(call.prompt, list(call.aspects))
    seconds = time.perf_counter() - started
    evaluated = judge.counters()["evaluated"] - start_eval
    after = raw_prefill(llm, long_tokens)
    llm.close()
    if evaluated <= 0:
        fail("the judge evaluated no tokens")
    raw = (before + after) / 2
    speed = evaluated / seconds
    print(f"llama.cpp prefill, {len(long_tokens)} tokens: {before:.1f} tok/s before, {after:.1f} tok/s after")
    print(f"judge (worker process): {evaluated:,} tokens evaluated in {seconds:.1f}s for {len(calls)} judge calls = "
          f"{speed:.1f} tok/s; measured by its worker when it loaded: {judge.speed.describe()}")
    print(f"FIGURE c: judge tok/s on evaluated tokens / llama.cpp prefill tok/s = {speed / raw:.2f} (target >= 0.8)")
