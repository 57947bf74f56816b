"""G-Eval Studio's engine: does an LLM judge agree with people? Usable without Streamlit; the
app, the CLI and the benchmarks use only the names below.

    import geval
    dataset = geval.load_dataset("tc_usr_data")                 # a path, or a bundled/shared name
    template = geval.Template.load("topicalchat-naturalness")   # a path, or a name in prompts/
    judge = geval.make_judge("embedded")                        # or "openai", model=..., base_url=...
    store = geval.Store()                                       # $GEVAL_STORE, else the user data folder
    geval.score(store, dataset.items[:30], template, judge, dataset.name)
    geval.agree(store, dataset.name)                            # correlations with 95% intervals
    store.save_label(dataset.items[0].id, "Natural", 3)         # your own label (geval.labeling: which next,
                                                                # how many labels buy how much)

The packages follow the flow of data: `data` (datasets) -> `judging` (templates, judges) ->
`store` (SQLite) -> `scoring` (runs) -> `analysis` (agreement) -> `tuning` (searching for a
better way of asking) -> `decisions` (what may be concluded with the judge) -> `reporting`.
"""

import importlib

from geval.errors import GevalError
from geval.version import __version__

#: Each public name and where it lives. They are imported on first use (PEP 562), so that a
#: process that needs one part (a native model's worker, `python -m geval --help`) does not load
#: every package (pandas, plotly, scipy) first.
_PUBLIC = {
    "OPTIONS": "geval.options",
    "Dataset": "geval.data.dataset", "load_dataset": "geval.data.dataset",
    "Template": "geval.judging.templates", "make_judge": "geval.judging.backends",
    "Store": "geval.store",
    "score": "geval.scoring.runner", "plan": "geval.scoring.plan", "generate_steps": "geval.scoring.steps",
    "batch": "geval.scoring",  # the OpenAI Batch API runs: geval.batch.write_batch ...
    "agree": "geval.analysis.agreement", "compare": "geval.analysis.comparison",
    "disagreements": "geval.analysis.disagreement", "leaderboard": "geval.analysis.leaderboard",
    "tune": "geval.tuning.search",  # geval.tune.budget: what a search needs of its budget, before any call
    "labeling": "geval.decisions",  # your own labels: geval.labeling.learning_curve ...
    "alttest": "geval.decisions",  # can the judge replace an annotator? geval.alttest.run ..., judges made elsewhere
    "reporting": "geval",  # a dataset's report (geval.reporting.report) and the figures and tables the app draws
}

__all__ = [
    "__version__", "GevalError", "OPTIONS",
    "Dataset", "load_dataset",
    "Template", "make_judge",
    "Store",
    "score", "plan", "generate_steps", "batch",
    "agree", "compare", "disagreements", "leaderboard", "tune", "labeling", "alttest",
    "reporting",
]


def __getattr__(name: str):
    """A public name, imported the first time it is used."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'geval' has no attribute '{name}'")
    module = _PUBLIC[name]
    namespace = module in ("geval", "geval.scoring", "geval.decisions")  # a module of its own: geval.batch ...
    value = importlib.import_module(f"{module}.{name}" if namespace else module)
    value = value if namespace else getattr(value, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
