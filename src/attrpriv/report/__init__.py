"""Reports: JSON result objects live with their job; this package renders them as HTML."""

from attrpriv.report.html import render_html, write_html

__all__ = ["render_html", "write_html"]
