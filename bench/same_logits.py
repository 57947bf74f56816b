"""Whether another llama.cpp build judges as the installed one does: the top-5 log-probabilities of the
next token after each of 20 judge prompts, read from the installed build (this interpreter) and from
`--other-python` (a virtual environment whose only difference is its llama-cpp-python: a prebuilt
wheel, or the source build with other settings), with the judge's model and settings. The builds
agree when every prompt's top-5 tokens are the same and their log-probabilities within 1e-3.

    python -m venv /tmp/other && /tmp/other/bin/pip install numpy diskcache jinja2 typing-extensions
    /tmp/other/bin/pip install --no-deps llama-cpp-python==0.3.36 <its build settings or a wheel>
    nice python bench/same_logits.py --other-python /tmp/other/bin/python
"""

from __future__ import annotations

import argparse
import json
import sys

from _common import child, fail, header

import geval

TOLERANCE = 1e-3
ASPECTS = ("naturalness", "coherence", "engagingness", "groundedness", "fluency")
RESPONSES = ("Oh nice, which trail did you take?", "I do not know, maybe.", "The moon is made of cheese, you know.",
             "Yes! I loved that movie, the ending surprised me.")


def prompts() -> list[str]:
    """20 short judge prompts: five aspects times four responses, each asking for a 1-5 score."""
    return [f"Rate the {aspect} of the response from 1 (poor) to 5 (excellent).\n\nConversation:\nA: I just got back "
            f"from a hike in the Alps.\n\nResponse:\nB: {response}\n\nAnswer with the score only.\n- {aspect}:"
            for aspect in ASPECTS for response in RESPONSES]


def measure(model: str) -> dict:
    """This interpreter's llama.cpp: each prompt's top-5 next tokens and their log-probabilities."""
    import numpy as np
    from llama_cpp import Llama, llama_print_system_info

    llm = Llama(model_path=model, n_ctx=2048, n_threads=2, n_batch=512, logits_all=False, verbose=False)
    tops = []
    for prompt in prompts():
        llm.reset()
        tokens = llm.tokenize(prompt.encode())
        llm.eval(tokens)
        logits = np.asarray(llm.scores[len(tokens) - 1], dtype=np.float64)
        logprobs = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
        best = np.argsort(-logprobs)[:5]
        tops.append([[int(t), float(logprobs[t])] for t in best])
    getattr(llm, "close", lambda: None)()  # older bindings have no close()
    return {"system": llama_print_system_info().decode(), "tops": tops}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--other-python", help="the interpreter of a venv with the other llama-cpp-python build")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        raise SystemExit(0)
    if not args.other_python:
        fail("--other-python is needed (see this script's docstring for how to make it)")
    header("the same logits: top-5 log-probabilities of 20 judge prompts, the installed build vs another")
    model = str(geval.make_judge("embedded").path)
    installed, other = child(sys.executable, __file__, model), child(args.other_python, __file__, model)
    print(f"installed: {installed['system'].strip()}")
    print(f"other:     {other['system'].strip()}")
    worst, same_tokens = 0.0, 0
    for mine, theirs in zip(installed["tops"], other["tops"]):
        same_tokens += [t for t, _ in mine] == [t for t, _ in theirs]
        worst = max(worst, *(abs(a[1] - b[1]) for a, b in zip(mine, theirs)))
    agree = same_tokens == len(installed["tops"]) and worst <= TOLERANCE
    print(f"FIGURE same logits: {same_tokens}/{len(installed['tops'])} prompts with the same top-5 tokens, largest "
          f"log-probability difference {worst:.2e} (tolerance {TOLERANCE:g}): {'agree' if agree else 'DIFFER'}")
    raise SystemExit(0 if agree else 1)
