"""What people read: the agreement figures (`figures`), tables as text (`tables`), and the
reports (`html`: one self-contained page; `markdown`: reports/<dataset>.md). `report` writes a
dataset's report; the names below are what the app draws."""

from geval.reporting.figures import (
    WEBGL_ABOVE,
    abs_diff_histogram,
    correlation_bars,
    distribution_figure,
    judge_distribution_figure,
    scatter_figure,
)
from geval.reporting.html import html_report
from geval.reporting.markdown import markdown_report as report
from geval.reporting.tables import display_table, format_p, number, stack_tables, verdict

__all__ = ["WEBGL_ABOVE", "abs_diff_histogram", "correlation_bars", "display_table", "distribution_figure", "format_p",
           "html_report", "judge_distribution_figure", "number", "report", "scatter_figure", "stack_tables",
           "verdict"]
