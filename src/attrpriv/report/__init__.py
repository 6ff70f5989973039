"""Reports: JSON result objects live with their job; this package renders them as HTML."""

from attrpriv.report.risk import render_html, write_html
from attrpriv.report.sanitize import render_sweep_html, write_sweep_html

__all__ = ["render_html", "render_sweep_html", "write_html", "write_sweep_html"]
