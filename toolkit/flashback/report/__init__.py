"""The self-contained HTML report (``flashback report``, ``make demo``)."""

from flashback.report.html import Section, write_report

__all__ = ["Section", "write_report"]
