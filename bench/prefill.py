"""Figure (c): the embedded judge's speed on the tokens it evaluates vs llama.cpp's own prefill.

In one process with one model: llama.cpp's prefill speed is timed on one long prompt (about
the length of two Topical-Chat prompts, evaluated from an empty context with `Llama.eval`),
before and after the judge; the judge's speed is (prompt tokens it evaluated) / (wall time of
its judgments, everything included: tokenizing, the forward passes, reading the logits) on
D dialogues x R responses in dialogue order from an empty context, with the shared layout
(prompts/topicalchat-shared.txt, 4 aspects) or --template topicalchat-naturalness (1 aspect).

    nice -n 10 python bench/prefill.py [--groups 2] [--per-group 6] [--template NAME]
"""

from __future__ import annotations

import argparse
import time

from _common import embedded_judge, fail, fresh_context, header, topicalchat

import geval


def raw_prefill(judge, tokens: list[int]) -> float:
    """llama.cpp's tokens/s evaluating `tokens` from an empty context."""
    fresh_context(judge)
    started = time.perf_counter()
    judge.model.llm.eval(tokens)
    return len(tokens) / (time.perf_counter() - started)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--per-group", type=int, default=6)
    parser.add_argument("--template", default="topicalchat-shared")
    args = parser.parse_args()
    header(f"prefill speed: judge on evaluated tokens vs llama.cpp on one long prompt "
           f"({args.groups} dialogues x {args.per_group} responses, {args.template})")
    judge = embedded_judge()
    template = geval.Template.load(args.template)
    items = topicalchat(args.groups, args.per_group)
    calls = [call for item in items for call in template.calls(item)]
    long_tokens = judge.model.chat_tokens(calls[0].prompt + "\n\n" + calls[-1].prompt)
    if len(long_tokens) >= judge.model.llm.n_ctx():
        fail(f"the long prompt has {len(long_tokens)} tokens, more than the context")

    before = raw_prefill(judge, long_tokens)
    fresh_context(judge)
    start_eval = judge.model.evaluated_tokens
    started = time.perf_counter()
    for call in calls:
        judge.judge(call.prompt, list(call.aspects))
    seconds = time.perf_counter() - started
    evaluated = judge.model.evaluated_tokens - start_eval
    after = raw_prefill(judge, long_tokens)
    if evaluated <= 0:
        fail("the judge evaluated no tokens")
    raw = (before + after) / 2
    speed = evaluated / seconds
    print(f"llama.cpp prefill, {len(long_tokens)} tokens: {before:.1f} tok/s before, {after:.1f} tok/s after")
    print(f"judge: {evaluated:,} tokens evaluated in {seconds:.1f}s for {len(calls)} judge calls = {speed:.1f} tok/s")
    print(f"FIGURE c: judge tok/s on evaluated tokens / llama.cpp prefill tok/s = {speed / raw:.2f} (target >= 0.8)")
