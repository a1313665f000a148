"""clineval.report: rendering only (console, JSON, Markdown, self-contained HTML); never computes a metric.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.report.context import ReportContext
    from clineval.report.files import write_reports
    from clineval.report.formats.console import print_run_summary
    from clineval.report.formats.html import render_html
    from clineval.report.formats.json_report import build_report, report_json_text
    from clineval.report.formats.markdown import render_markdown
    from clineval.report.formats.results_jsonl import case_record, write_results_jsonl
    from clineval.report.runs_table import print_runs_table

__all__ = [
    "ReportContext",
    "build_report",
    "case_record",
    "print_run_summary",
    "print_runs_table",
    "render_html",
    "render_markdown",
    "report_json_text",
    "write_reports",
    "write_results_jsonl",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.report.formats.console": ("print_run_summary",),
        "clineval.report.context": ("ReportContext",),
        "clineval.report.files": ("write_reports",),
        "clineval.report.formats.html": ("render_html",),
        "clineval.report.formats.json_report": ("build_report", "report_json_text"),
        "clineval.report.formats.markdown": ("render_markdown",),
        "clineval.report.formats.results_jsonl": ("case_record", "write_results_jsonl"),
        "clineval.report.runs_table": ("print_runs_table",),
    },
)
