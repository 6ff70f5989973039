"""Reports: HTML pages of a risk assessment, a sanitizer's sweep, a release and a budget ledger."""

from attrpriv.report.ledger import render_ledger_html, write_ledger_html
from attrpriv.report.release import render_release_html, write_release_html
from attrpriv.report.risk import render_html, write_html
from attrpriv.report.sanitize import render_sweep_html, write_sweep_html

__all__ = [
    "render_html",
    "render_ledger_html",
    "render_release_html",
    "render_sweep_html",
    "write_html",
    "write_ledger_html",
    "write_release_html",
    "write_sweep_html",
]
