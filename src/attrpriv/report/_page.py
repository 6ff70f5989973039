"""What the HTML reports share: figures inlined as PNG, number formats, one way to render.

Every page is a jinja2 template in ``report/templates`` that extends ``page.html.j2`` (the head,
the style sheet and the title), autoescaped, with undefined names an error.
"""

from __future__ import annotations

import base64
import io
from importlib import resources
from typing import Any

import jinja2
from matplotlib.figure import Figure


def png(figure: Figure, **savefig: Any) -> str:
    """A figure as a base64 PNG (for an ``<img src="data:image/png;base64,...">``)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", **savefig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def render(template: str, **context: Any) -> str:
    """Render the template ``template`` of ``report/templates`` with ``context``."""
    return _environment().get_template(template).render(**context)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_template_source),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["ci"] = lambda ci: f"[{_num(ci[0])}, {_num(ci[1])}]"
    return env


def _template_source(name: str) -> str:
    return resources.files("attrpriv.report").joinpath("templates", name).read_text("utf-8")


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    number = float(value)
    return f"{number:+.{digits}f}" if number < 0 else f"{number:.{digits}f}"
