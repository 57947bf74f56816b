"""Figure (a): the embedded judge's time per judgment vs the naive G-EVAL loop of seed 001.

Same model file (the bundled Qwen2.5-Coder-1.5B Q4_K_M), same items, same prompt
(prompts/topicalchat-naturalness.txt), side by side in one process, each method with its own
llama.cpp context (same n_ctx and threads) and the items interleaved (naive item 1, embedded
item 1, naive item 2, ...) so that both see the same machine load:

- naive: 20 completions per item through llama-cpp-python's create_chat_completion at
  temperature 1 (top_p 1, max_tokens 5, as G-EVAL), each parsed, then the weighted mean of
  the parsed scores; llama-cpp-python reuses the prompt prefix it holds between its calls;
- embedded: geval's judge, one forward pass to "Naturalness: " and the distribution read
  from the next-token logits, with its KV-cache reuse across the items of a dialogue.

Both contexts are first warmed with one prompt of the previous dialogue (not timed), as in a
whole-dataset run where the instructions are already cached when a dialogue starts. Timed:
R responses of the next dialogue. A SMALL subset by default (3 responses, 1 aspect) so it
runs in a few minutes on 2 cores; --per-group 6 takes a whole dialogue, as in the dataset.
Also printed, per aspect judgment: the multi-aspect form (4 scores read from one prompt) and
the shared layout (prompts/topicalchat-shared.txt: one prompt per aspect, instructions, dialogue
and fact shared, the response and the aspect last), each warmed the same way.

    nice -n 10 python bench/embedded_naive.py [--per-group 3] [--samples 20]
"""

from __future__ import annotations

import argparse
import os
import time

from _common import embedded_judge, fail, fresh_context, header, topicalchat

import geval


def naive_judgment(llm, prompt: str, aspects, samples: int) -> tuple[float | None, int]:
    """Seed 001: `samples` sampled answers, each read by the judges' own answer parser (a scripted
    judge answering with that text), the mean of those that parse; also the tokens generated."""
    texts, generated = [], 0
    for _ in range(samples):
        answer = llm.create_chat_completion(messages=[{"role": "user", "content": prompt}],
                                            temperature=1.0, top_p=1.0, max_tokens=5)
        texts.append(answer["choices"][0]["message"]["content"] or "")
        generated += answer["usage"]["completion_tokens"]
    read = [geval.make_judge("scripted", script=lambda p, a, text=text: text).judge(prompt, aspects)
            .scores[aspects[0].key].score for text in texts]
    parsed = [score for score in read if score is not None]
    return (sum(parsed) / len(parsed) if parsed else None), generated


def naive_model(judge):
    """A llama.cpp context of its own on the judge's model file (same n_ctx and threads as the judge's worker) for the naive loop."""
    from llama_cpp import Llama

    return Llama(model_path=str(judge.path), n_ctx=judge.n_ctx, n_threads=len(os.sched_getaffinity(0)), n_batch=512, verbose=False)


def per_aspect_seconds(judge, template, warm, timed) -> float:
    """Seconds per aspect judgment of `template` on `timed`, after warming the context with `warm`."""
    fresh_context(judge)
    for call in template.calls(warm):
        judge.judge(call.prompt, list(call.aspects))
    started = time.perf_counter()
    for item in timed:
        for call in template.calls(item):
            judge.judge(call.prompt, list(call.aspects))
    return (time.perf_counter() - started) / len(timed) / len(template.aspects)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-group", type=int, default=3)
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    header(f"embedded judge vs naive {args.samples}-sample loop: {args.per_group} responses of one Topical-Chat "
           f"dialogue, 1 aspect, warm context")
    judge = embedded_judge()
    naive_llm = naive_model(judge)
    template = geval.Template.load("topicalchat-naturalness")
    aspects = list(template.aspects)
    items = topicalchat(2, args.per_group)
    warm, timed = items[0], [item for item in items if item.group == items[-1].group]

    fresh_context(judge)
    judge.judge(template.render(warm), aspects)
    naive_llm.create_chat_completion(messages=[{"role": "user", "content": template.render(warm)}], max_tokens=1)
    naive_seconds = embedded_seconds = 0.0
    naive_scores, embedded_scores, generated = [], [], 0
    evaluated_before = judge.counters()["evaluated"]
    for item in timed:
        prompt = template.render(item)
        started = time.perf_counter()
        score, tokens = naive_judgment(naive_llm, prompt, aspects, args.samples)
        naive_seconds += time.perf_counter() - started
        naive_scores.append(score)
        generated += tokens
        started = time.perf_counter()
        embedded_scores.append(judge.judge(prompt, aspects).scores[aspects[0].key].score)
        embedded_seconds += time.perf_counter() - started
    evaluated = judge.counters()["evaluated"] - evaluated_before

    per_aspect = {name: per_aspect_seconds(judge, geval.Template.load(name), warm, timed)
                  for name in ("topicalchat-multi", "topicalchat-shared")}
    naive_llm.close()

    if any(s is None for s in embedded_scores):
        fail(f"the embedded judge left items unscored: {embedded_scores}")
    n = len(timed)
    naive, embedded = naive_seconds / n, embedded_seconds / n
    print(f"naive:    {naive:.2f} s per judgment ({generated / n:.0f} tokens generated per judgment), "
          f"scores {[None if s is None else round(s, 2) for s in naive_scores]}")
    print(f"embedded: {embedded:.3f} s per judgment ({evaluated / n:.0f} prompt tokens evaluated per judgment), "
          f"scores {[round(s, 2) for s in embedded_scores]}")
    for name, seconds in per_aspect.items():
        print(f"embedded, {name}: {seconds:.3f} s per aspect judgment (4 aspects per item)")
    print(f"FIGURE a: naive / embedded time per judgment = {naive / embedded:.1f}x (target >= 10x); per aspect "
          f"judgment: naive / multi-aspect form = {naive / per_aspect['topicalchat-multi']:.1f}x, naive / shared "
          f"layout = {naive / per_aspect['topicalchat-shared']:.1f}x; on {n} items")
