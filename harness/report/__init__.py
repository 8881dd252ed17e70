"""Results for people: plain-text tables (text) and the static HTML report (build)."""
from harness.report.text import format_pass1, format_pct, format_summary_line, format_table, summary_rows

__all__ = ["format_pass1", "format_pct", "format_summary_line", "format_table", "summary_rows"]
