"""Every public entry point has a numpydoc docstring: Parameters, Returns and known sections.

The public entry points are the names in ``__all__`` of the public packages (classes, with
their public methods and class methods, and functions). Checked with ``numpydoc.validate``
(the codes below); style-only codes (capitalisation, a final period) are left to review.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator

import pytest

validate = pytest.importorskip("numpydoc.validate").validate

PACKAGES = (
    "attrpriv.stats",
    "attrpriv.errors",
    "attrpriv.dp",
    "attrpriv.data",
    "attrpriv.release",
    "attrpriv.assess",
    "attrpriv.sanitize",
    "attrpriv.report",
)
CODES = {
    "GL06": "an unknown section",
    "GL07": "sections in the wrong order",
    "GL08": "no docstring",
    "PR01": "a parameter not documented",
    "PR02": "a documented parameter that does not exist",
    "PR07": "a parameter without a description",
    "RT01": "no Returns section, but it returns something",
    "RT03": "a return value without a description",
}


def _entry_points() -> Iterator[str]:
    seen: set[int] = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if id(obj) in seen or not callable(obj):
                continue
            seen.add(id(obj))
            yield f"{package}.{name}"
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod)):
                        yield f"{package}.{name}.{attr}"


ENTRY_POINTS = sorted(_entry_points())


def test_the_entry_points_are_found() -> None:
    assert len(ENTRY_POINTS) > 100
    assert "attrpriv.release.ModelDDP.record" in ENTRY_POINTS


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_numpydoc_sections(name: str) -> None:
    errors = [(code, message) for code, message in validate(name)["errors"] if code in CODES]
    assert not errors, f"{name}: " + "; ".join(f"{code} {message}" for code, message in errors)


def test_the_check_catches_an_undocumented_parameter() -> None:
    def scale(x: float, factor: float) -> float:
        """Scale a number.

        Parameters
        ----------
        x : float
            The number.

        Returns
        -------
        float
            ``x * factor``.
        """
        return x * factor

    module = importlib.import_module(__name__)
    module.scale = scale  # type: ignore[attr-defined]
    try:
        codes = {code for code, _ in validate(f"{__name__}.scale")["errors"]}
    finally:
        del module.scale  # type: ignore[attr-defined]
    assert "PR01" in codes


@pytest.mark.parametrize("package", ["stats", "dp", "data", "release", "assess", "sanitize"])
def test_the_api_page_lists_every_public_name(package: str) -> None:
    """docs/api/<package>.md renders the names of ``__all__`` one by one: none may be missing."""
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs" / "api" / f"{package}.md").read_text()
    module = importlib.import_module(f"attrpriv.{package}")
    missing = [
        name
        for name in module.__all__
        if f"- {name}\n" not in page and f".{name}\n" not in page and f".{name} " not in page
    ]
    assert not missing, f"docs/api/{package}.md does not list {missing}"
