"""G-Eval Studio's engine: datasets, prompt templates, judges, the SQLite store, the scoring
runner and agreement statistics. Usable without Streamlit; the app and CLI import only this."""

from geval.agreement import MEAN_OF_ASPECTS, agreement_table, distributions, normalized, scored_items
from geval.annotators import annotator_agreement, krippendorff_alpha, leave_one_out
from geval.baselines import METRICS as BASELINES
from geval.baselines import BaselineError, BaselineScores, compute_baselines
from geval.catalog import (
    DATA_DIR,
    PROMPTS_DIR,
    known_datasets,
    resolve_dataset,
    resolve_template,
    templates,
)
from geval.compare import (
    AGREEMENT_LEVELS,
    Comparison,
    compare_combos,
    disagreements,
    format_p,
    mapped_humans,
    paired_difference,
    scored_combos,
    williams_test,
)
from geval.cot import cot_prompt, ensure_steps
from geval.errors import (
    DatasetError,
    GevalError,
    JudgeError,
    JudgmentFailed,
    StoreError,
    TemplateError,
    WeightsError,
)
from geval.items import LEVELS, PLACEHOLDERS, Item, Turn
from geval.judges import BACKENDS, AspectScore, Judge, Judgment, make_judge, signature
from geval.leaderboard import Leaderboard, leaderboard
from geval.loaders import LAYOUTS, ColumnMapping, Dataset, load_dataset, table_columns
from geval.markdown_report import markdown_report
from geval.protocols import (
    PROTOCOLS,
    Protocol,
    ProtocolError,
    average_over_aspects,
    dstc9_dialogue,
    dstc9_system,
    fed_dialogue,
    fed_turn,
    mean_vs_overall,
    personachat_turn,
    protocols_for,
    run_protocol,
    summeval_summary,
    summeval_system,
    topicalchat_turn,
)
from geval.report import (
    abs_diff_histogram,
    correlation_bars,
    display_table,
    distribution_figure,
    html_report,
    judge_distribution_figure,
    scatter_figure,
    stack_tables,
)
from geval.runner import Plan, Progress, plan_run, score_items
from geval.selection import select_items
from geval.stats import METRICS, Correlation, agreement, correlate
from geval.store import Store, default_store_path
from geval.templates import Aspect, Template, diff_templates, load_template, parse_template
from geval.variants import VARIANTS, VariantError, variant_agreement_table, variant_scores, with_samples
from geval.version import __version__

__all__ = [
    "AGREEMENT_LEVELS", "Aspect", "AspectScore", "BACKENDS", "ColumnMapping", "Comparison", "Correlation", "DATA_DIR",
    "Dataset", "DatasetError", "GevalError", "Item", "Judge", "JudgeError", "Judgment", "JudgmentFailed", "LAYOUTS",
    "LEVELS", "MEAN_OF_ASPECTS", "METRICS", "PLACEHOLDERS", "PROMPTS_DIR", "Plan", "Progress", "Store", "StoreError",
    "Template", "TemplateError", "Turn", "WeightsError", "__version__", "abs_diff_histogram", "agreement",
    "agreement_table", "compare_combos", "correlate", "correlation_bars", "cot_prompt", "default_store_path",
    "diff_templates", "disagreements", "display_table", "format_p", "distribution_figure", "distributions", "ensure_steps",
    "html_report", "judge_distribution_figure", "known_datasets", "load_dataset", "load_template", "make_judge",
    "mapped_humans", "normalized", "paired_difference", "parse_template", "plan_run", "resolve_dataset",
    "resolve_template", "scatter_figure", "score_items", "scored_combos", "scored_items", "select_items", "signature",
    "stack_tables", "table_columns", "templates", "williams_test",
    # issue 5: protocols, annotator agreement, score variants, baselines, leaderboard, report
    "BASELINES", "BaselineError", "BaselineScores", "Leaderboard", "PROTOCOLS", "Protocol", "ProtocolError",
    "VARIANTS", "VariantError", "annotator_agreement", "average_over_aspects", "compute_baselines", "dstc9_dialogue",
    "dstc9_system", "fed_dialogue", "fed_turn", "krippendorff_alpha", "leaderboard", "leave_one_out",
    "markdown_report", "mean_vs_overall", "personachat_turn", "protocols_for", "run_protocol", "summeval_summary",
    "summeval_system", "topicalchat_turn", "variant_agreement_table", "variant_scores", "with_samples",
]
