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
better way of asking) -> `reporting`.
"""

from geval import reporting  # noqa: E402  (the figures and tables the app draws: geval.reporting.scatter_figure ...)
from geval.analysis.agreement import agree
from geval.analysis.comparison import compare
from geval.analysis import labeling  # noqa: E402  (your own labels: geval.labeling.learning_curve ...)
from geval.analysis.disagreement import disagreements
from geval.analysis.leaderboard import leaderboard
from geval.data.dataset import Dataset, load_dataset
from geval.errors import GevalError
from geval.judging.backends import make_judge
from geval.judging.templates import Template
from geval.options import OPTIONS
from geval.reporting import report
from geval.scoring import batch  # noqa: E402  (OpenAI Batch API runs: geval.batch.write_batch ...)
from geval.scoring.plan import plan
from geval.scoring.runner import score
from geval.scoring.steps import generate_steps
from geval.store import Store
from geval.tuning.search import tune
from geval.version import __version__

__all__ = [
    "__version__", "GevalError", "OPTIONS",
    "Dataset", "load_dataset",
    "Template", "make_judge",
    "Store",
    "score", "plan", "generate_steps", "batch",
    "agree", "compare", "disagreements", "leaderboard", "tune", "labeling",
    "report", "reporting",
]
