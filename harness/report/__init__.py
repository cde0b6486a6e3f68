"""Static reports a person reads without the harness: per-cell HTML, run summary, JUnit XML."""

from harness.report.cell_report import write_cell_report
from harness.report.run_summary import overall_verdict, render_table, table_rows, write_run_summary

__all__ = [
    "overall_verdict",
    "render_table",
    "table_rows",
    "write_cell_report",
    "write_run_summary",
]
