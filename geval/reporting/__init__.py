"""What people read: the agreement figures (`figures`), tables as text (`tables`), and a
dataset's report (`report`: one `document`, rendered by `html` to one self-contained page and by
`markdown` to a PDF-friendly page; `dataset_report` writes it). The names below are what the app
and the CLI use (`counted`: a count in words, "1 judge call")."""

from geval.reporting.dataset_report import Report, report
from geval.reporting.figures import (
    COLOURS,
    WEBGL_ABOVE,
    abs_diff_histogram,
    correlation_bars,
    distribution_figure,
    judge_distribution_figure,
    learning_curve_figure,
    scatter_figure,
)
from geval.reporting.tables import agreement_csv, curve_table, display_table, format_p, number, stack_tables, verdict
from geval.wording import counted

__all__ = ["COLOURS", "WEBGL_ABOVE", "Report", "abs_diff_histogram", "agreement_csv", "correlation_bars", "counted",
           "curve_table", "display_table", "distribution_figure", "format_p", "judge_distribution_figure",
           "learning_curve_figure", "number", "report", "scatter_figure", "stack_tables", "verdict"]
