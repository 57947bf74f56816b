"""What people read: the agreement figures (`figures`), tables as text (`tables`), and a
dataset's report (`report`: one `document`, rendered by `html` to one self-contained page and by
`markdown` to a PDF-friendly page; `dataset_report` writes it; `report_page`: its HTML page, kept in the store
until the store changes). The names below are what the app,
the CLI and the benchmarks use (a benchmark writes its page as a `Document` of these blocks too;
`counted`: a count in words, "1 judge call"; `how_it_errs`: how the judge errs, in words, tables and
figures; `pairwise`: a pairwise judge's position bias, agreement with people and win rates)."""

from geval.analysis.correlation import MIN_GROUP_ITEMS, MIN_GROUPS  # what the group level needs
from geval.analysis.leaderboard import labels_only  # a dataset labeled with categories only: nothing to correlate
from geval.data.declared import aspect_words, category_word, labels_in_words, positive  # people's labels in words
from geval.reporting import how_it_errs  # how the judge errs: kappa, confusion, offset, scale use, length
from geval.reporting import pairwise  # a pairwise judge: position consistency, agreement with people, win rates
from geval.reporting.bottom_line import systems_line  # which systems differ, for all pairs together
from geval.reporting.dataset_report import Report, report, searches_table
from geval.reporting.kept_page import report_page
from geval.reporting.document import Bullets, Document, Figure, Heading, Table, Text
from geval.reporting.figures import (
    COLOURS,
    DRAWN_ONE_BY_ONE_MOST,
    WEBGL_ABOVE,
    abs_diff_histogram,
    correlation_bars,
    counted_scatter_figure,
    distribution_figure,
    human_scores_figure,
    items_drawn,
    judge_distribution_figure,
    labels_figure,
    learning_curve_figure,
    majority_figure,
    scatter_figure,
)
from geval.reporting.systems import (judge_names, ranking_table, saved_line, systems_forest, systems_table, worth_table,
                                     worth_words)
from geval.reporting.tables import (
    agreement_csv,
    curve_caption,
    curve_table,
    display_table,
    format_p,
    items_csv,
    number,
    stack_tables,
    verdict,
)
from geval.wording import counted, natural_key, run_status

__all__ = ["abs_diff_histogram", "agreement_csv", "aspect_words", "Bullets", "category_word", "COLOURS",
           "correlation_bars", "counted", "counted_scatter_figure", "curve_caption", "curve_table", "display_table",
           "distribution_figure", "Document", "DRAWN_ONE_BY_ONE_MOST", "Figure", "format_p", "Heading", "how_it_errs",
           "human_scores_figure", "items_csv", "items_drawn", "judge_distribution_figure", "judge_names",
           "labels_figure", "labels_in_words", "labels_only", "learning_curve_figure", "majority_figure",
           "MIN_GROUP_ITEMS", "MIN_GROUPS", "natural_key", "number", "pairwise", "positive", "ranking_table", "Report",
           "report", "report_page", "run_status", "saved_line", "scatter_figure", "searches_table", "stack_tables",
           "systems_forest", "systems_line", "systems_table", "Table", "Text", "verdict", "WEBGL_ABOVE", "worth_table",
           "worth_words"]
