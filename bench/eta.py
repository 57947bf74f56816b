"""The estimates a user is told against the time a run takes, with the embedded judge.

For each template, a 24-item run (4 Topical-Chat dialogues x 6 responses) into a fresh store, as
the Score page and the CLI make it: the plan first (`geval.plan`: the calls' tokens to evaluate at
the judge's newest speed: measured as its worker loaded the model, or over the judgments of the run
before), then the run with that plan. The run's first ETA (once the judge's calls begin, before any
item is done), its ETA a quarter and half of the way, and the plan's time are set against the time
the calls took. The judge's model is loaded (and its speed measured) before the first plan, as
after the sidebar's "Check the judge" or an earlier run.

With --cold, the first template's run loads the model itself (the worker ended first, as after a
long idle): its ETA as the load begins ("Loading the model (about N s)": the load time measured at
the last load, then the plan at the speed remembered) is set against the time from the load's start
to the run's end.

    nice -n 10 python bench/eta.py [--templates topicalchat-naturalness,topicalchat-shared] [--cold]
"""

from __future__ import annotations

import argparse
import time

from _common import embedded_judge, fail, fresh_context, header, topicalchat

import geval


def measure(judge, template_name: str, items: list, cold: bool = False) -> dict:
    """One run's ETAs against its time; `cold`: the model is loaded by the run (timed from the load)."""
    template = geval.Template.load(template_name)
    store = geval.Store(":memory:")
    if cold:
        judge.unload()  # the next call loads the model again, as after a long idle
    else:
        fresh_context(judge)
    plan = geval.plan(store, items, template, judge)
    seen: list[tuple[float, int, float | None]] = []
    progress = geval.score(store, items, template, judge, "bench", plan=plan,
                           on_progress=lambda p: seen.append((time.time(), p.done, p.eta)))
    store.close()
    if progress.failed or progress.done != len(items):
        fail(f"{template_name}: {progress.failed} failed, {progress.done} done")
    if cold and progress.load_started is None:
        fail(f"{template_name}: the run did not load the model")
    began = progress.load_started if cold else progress.calls_started
    ended = progress.ended
    took = ended - began

    def eta_at(share: float) -> float:
        moment, _, eta = next(entry for entry in seen if entry[1] >= share * len(items) and entry[2] is not None)
        return (moment - began) + eta  # the end it foresaw, from the calls' start

    first = next(eta for moment, done, eta in seen if eta is not None and moment >= began)
    return {"template": template_name, "calls": progress.calls, "took": took, "plan": plan.seconds,
            "first": first, "quarter": eta_at(0.25), "half": eta_at(0.5), "basis": plan.time_line(),
            "load": progress.load_took, "load_expected": progress.load_expected}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--templates", default="topicalchat-naturalness,topicalchat-shared")
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--per-group", type=int, default=6)
    parser.add_argument("--cold", action="store_true", help="the first run loads the model itself")
    args = parser.parse_args()
    header(f"ETA against the real time: {args.groups} dialogues x {args.per_group} responses, embedded judge")
    judge = embedded_judge()
    print(f"speed measured when the worker loaded the model: {judge.speed.describe()}")
    items = topicalchat(args.groups, args.per_group)
    worst = 0.0
    for index, name in enumerate(args.templates.split(",")):
        r = measure(judge, name, items, cold=args.cold and index == 0)
        errors = {key: r[key] / r["took"] - 1 for key in ("plan", "first", "quarter", "half")}
        worst = max(worst, abs(errors["first"]))
        loaded = (f" (the model loaded in {r['load']:.0f} s, expected {r['load_expected']:.0f} s; the first ETA "
                  "shown as the load began)" if r["load"] else "")
        print(f"{r['template']}: {r['calls']} calls took {r['took']:.0f} s{loaded}; plan {r['plan']:.0f} s "
              f"({errors['plan']:+.0%}); first ETA {r['first']:.0f} s ({errors['first']:+.0%}); at 1/4 "
              f"{r['quarter']:.0f} s ({errors['quarter']:+.0%}); at 1/2 {r['half']:.0f} s ({errors['half']:+.0%})")
        print(f"  plan: {r['basis']}")
    print(f"FIGURE first ETA within {worst:.0%} of the real time (target: within 30%)")
