"""Prefix (KV) reuse against fresh evaluation: how far apart the judge's scores are, why, and what it
does to agreement with people.

1. Why (llama.cpp alone, this process): one prompt's score distribution after its tokens were
   evaluated in different forward passes: all at once, and split as prefix reuse splits them (a
   prefix, then the rest), at several points. llama.cpp's quantized kernels round differently with
   a pass's size (a pass of one token, the leftover rows of a block, rows in blocks of four), so the
   logits differ a little with the split, whichever is "fresh".
2. What it does (the judge as a run uses it, in its worker): the first D dialogues x 6 responses of
   USR Topical-Chat scored with topicalchat-naturalness twice: in dialogue order, reusing the
   prefix as a run does, and with the KV cache emptied before every call (fresh). Pearson between
   the two, the largest and mean difference, and each one's Pearson with people.

    nice -n 10 python bench/reuse_noise.py [--groups 20]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _common import embedded_judge, fresh_context, header, topicalchat
from scipy.stats import pearsonr

import geval


def split_spread(path: str, prompt: str) -> list[tuple[str, dict[int, float]]]:
    """The 1-3 distribution after "Naturalness: " with the prompt's tokens evaluated in different passes."""
    from llama_cpp import Llama

    llm = Llama(model_path=path, n_ctx=4096, n_threads=len(os.sched_getaffinity(0)), n_batch=512, verbose=False)
    tokens = llm.tokenize((prompt + "\nNaturalness: ").encode(), add_bos=False)
    ids = [llm.tokenize(str(s).encode(), add_bos=False)[0] for s in (1, 2, 3)]
    found = []
    for name, splits in (("one pass (fresh)", []), ("prefix of 40 reused", [len(tokens) - 40]),
                         ("prefix of 17 reused", [len(tokens) - 17]), ("last token alone", [len(tokens) - 1]),
                         ("passes of 8", list(range(8, len(tokens), 8))), ("passes of 32", list(range(32, len(tokens), 32)))):
        llm.reset()
        previous = 0
        for cut in [*splits, len(tokens)]:
            llm.eval(tokens[previous:cut])
            previous = cut
        # the last token's logits, read as the judge reads them
        logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).astype(np.float64)
        weights = np.exp(logits[ids] - logits[ids].max())
        found.append((name, dict(zip((1, 2, 3), (weights / weights.sum()).round(4).tolist()))))
    llm.close()
    return found


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=20)
    args = parser.parse_args()
    header(f"prefix reuse against fresh evaluation: {args.groups} dialogues x 6 responses, topicalchat-naturalness")
    judge = embedded_judge()
    template = geval.Template.load("topicalchat-naturalness")
    aspects = list(template.aspects)
    items = topicalchat(args.groups, 6)
    for name, distribution in split_spread(str(judge.path), template.render(items[1])):
        print(f"  {name:22} {distribution}")
    fresh_context(judge)
    reused = [judge.judge(template.render(item), aspects).scores["naturalness"].score for item in items]
    fresh = []
    for item in items:
        fresh_context(judge)
        fresh.append(judge.judge(template.render(item), aspects).scores["naturalness"].score)
    people = [item.human_mean("Natural") for item in items]
    reused, fresh = np.array(reused), np.array(fresh)
    print(f"{len(items)} responses: Pearson(reused, fresh) {pearsonr(reused, fresh)[0]:.4f}; |difference| largest "
          f"{np.abs(reused - fresh).max():.3f}, mean {np.abs(reused - fresh).mean():.4f} (scores 1-3)")
    print(f"FIGURE agreement: Pearson with people, reused {pearsonr(reused, people)[0]:.3f}, fresh "
          f"{pearsonr(fresh, people)[0]:.3f} ({len(items)} responses)")
