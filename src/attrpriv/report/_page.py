"""What the HTML reports share: figures inlined as PNG, number formats, one jinja2 renderer."""

from __future__ import annotations

import base64
import io
from datetime import datetime
from importlib import resources
from typing import Any

import jinja2
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from attrpriv.report.glossary import Glossary


def png(figure: Figure, **savefig: Any) -> str:
    """A figure as a base64 PNG (for an ``<img src="data:image/png;base64,...">``)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", **savefig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plain_axis(axis: Axis) -> None:
    """Tick labels as the numbers themselves: no offset (``+5.2e1``), no scientific notation."""
    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    axis.set_major_formatter(formatter)


def render(template: str, *, meaning: str, **context: Any) -> str:
    """Render ``template`` with ``context``; ``meaning`` is the page's summary."""
    page = _environment().get_template(template)
    return page.render(meaning=meaning, glossary=Glossary(), **context)


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
    env.filters["link_terms"] = _link_terms
    env.filters["when"] = lambda text: datetime.fromisoformat(text).strftime("%Y-%m-%d %H:%M:%S")
    return env


@jinja2.pass_context
def _link_terms(context: jinja2.runtime.Context, html: str) -> str:
    glossary: Glossary = context["glossary"]
    return glossary.link(html)


def _template_source(name: str) -> str:
    return resources.files("attrpriv.report").joinpath("templates", name).read_text("utf-8")


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    number = float(value)
    return f"{number:+.{digits}f}" if number < 0 else f"{number:.{digits}f}"
